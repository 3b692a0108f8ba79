package query

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// NamedExpr is a NAME=CEL pair of --index or --columns.
type NamedExpr struct {
	Name string `json:"name" yaml:"name"`
	Expr string `json:"expr" yaml:"expr"`
}

// Request is a whole query as the command line states it.
type Request struct {
	// Resources are the resource arguments as typed ("pods", "po,nodes").
	Resources []string
	// Namespace scopes namespaced resources; "" means all namespaces.
	Namespace string
	// LabelSelector and FieldSelector are sent to the server for the
	// queried resources (not for resources read by get() and byIndex()).
	LabelSelector, FieldSelector string
	// Indexes are registered on every queried resource, and on every
	// resource whose byIndex() calls name them. An index that byIndex()
	// names and --by does not is registered only where byIndex() reads.
	Indexes []NamedExpr
	// By answers from indexes (intersection).
	By []Selector
	// Where, SortBy and GroupBy are CEL expressions; "" means none.
	Where, SortBy, GroupBy string
	// Columns are extra table columns.
	Columns []NamedExpr
	// Count prints the number of matches (per GroupBy value).
	Count bool
	// Limit keeps at most Limit results; 0: all.
	Limit int
	// Output is the -o value.
	Output string
	// Print holds the remaining printing flags.
	Print PrintOptions
	// SyncTimeout bounds the wait for the caches. Default 2m.
	SyncTimeout time.Duration
	// Progress, when not nil, receives a progress line while caches fill.
	Progress io.Writer
}

// UsageError is a mistake in the request itself: an invalid expression, an
// unknown index or output format, inconsistent flags, or a resource type the
// server does not have.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Plan is a compiled Request: every expression compiled and every flag
// checked, before any contact with the cluster.
type Plan struct {
	req     Request
	env     *indexers.Env
	printer *Printer
	indexes map[string]*indexers.Program // by index name
	where   *indexers.Program
	sortBy  *indexers.Program
	groupBy *indexers.Program
	columns []*indexers.Program
	// metadataOnly: every expression reads only apiVersion, kind and
	// metadata, and the output needs nothing more.
	metadataOnly bool
}

// Compile checks req and compiles its expressions with env. Errors are
// *UsageError; an invalid expression wraps an *indexers.ExprError that
// shows where it is wrong.
func Compile(env *indexers.Env, req Request) (*Plan, error) {
	if req.SyncTimeout <= 0 {
		req.SyncTimeout = 2 * time.Minute
	}
	p := &Plan{req: req, env: env, indexes: map[string]*indexers.Program{}}
	var errs []error
	compile := func(expr string, kind indexers.Kind, context string) *indexers.Program {
		if expr == "" {
			return nil
		}
		prog, err := env.Compile(expr, kind, context)
		if err != nil {
			errs = append(errs, err)
		}
		return prog
	}
	for _, ix := range req.Indexes {
		if ix.Name == "" || strings.ContainsAny(ix.Name, " =,") {
			errs = append(errs, fmt.Errorf("invalid index name %q: use --index NAME=CEL with a name of letters, digits, '-' or '_'", ix.Name))
			continue
		}
		if ix.Name == cache.NamespaceIndex {
			errs = append(errs, fmt.Errorf("index %q is built in and cannot be redefined", ix.Name))
			continue
		}
		if _, dup := p.indexes[ix.Name]; dup {
			errs = append(errs, fmt.Errorf("index %q is defined twice", ix.Name))
			continue
		}
		p.indexes[ix.Name] = compile(ix.Expr, indexers.KindIndex, fmt.Sprintf("index %q", ix.Name))
	}
	p.where = compile(req.Where, indexers.KindPredicate, "--where")
	p.sortBy = compile(req.SortBy, indexers.KindValue, "--sort-by")
	p.groupBy = compile(req.GroupBy, indexers.KindValue, "--group-by")
	seen := map[string]bool{}
	for _, c := range req.Columns {
		if c.Name == "" || seen[c.Name] {
			errs = append(errs, fmt.Errorf("invalid or repeated column name %q in --columns NAME=CEL", c.Name))
			continue
		}
		seen[c.Name] = true
		p.columns = append(p.columns, compile(c.Expr, indexers.KindValue, "--columns "+c.Name))
	}
	for _, s := range req.By {
		if _, ok := p.indexes[s.Index]; !ok && s.Index != cache.NamespaceIndex {
			errs = append(errs, unknownIndex(s.Index, p.indexNames()))
		}
	}
	if req.GroupBy != "" && !req.Count {
		errs = append(errs, errors.New("--group-by needs --count: it counts the objects per value"))
	}
	if req.Count && req.SortBy != "" {
		errs = append(errs, errors.New("--sort-by cannot be combined with --count: groups are ordered by count"))
	}
	if req.Count && len(req.Columns) > 0 {
		errs = append(errs, errors.New("--columns cannot be combined with --count"))
	}
	if req.Limit < 0 {
		errs = append(errs, fmt.Errorf("--limit must not be negative, got %d", req.Limit))
	}
	printer, err := NewPrinter(req.Output, req.Print)
	if err != nil {
		errs = append(errs, err)
	} else if req.Count && !printer.HumanReadable() {
		errs = append(errs, fmt.Errorf("--count prints numbers: -o %s cannot be used with it", req.Output))
	}
	p.printer = printer
	if len(errs) > 0 {
		return nil, &UsageError{Err: errors.Join(errs...)}
	}
	p.metadataOnly = p.decideMetadataOnly()
	return p, nil
}

func unknownIndex(name string, known []string) error {
	return fmt.Errorf("unknown index %q: known indexes are %s (define one with --index %s=CEL)", name, strings.Join(known, ", "), name)
}

func (p *Plan) indexNames() []string {
	names := []string{cache.NamespaceIndex}
	for n := range p.indexes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (p *Plan) programs() []*indexers.Program {
	progs := []*indexers.Program{p.where, p.sortBy, p.groupBy}
	progs = append(progs, p.columns...)
	for _, ix := range p.indexes {
		progs = append(progs, ix)
	}
	out := progs[:0]
	for _, prog := range progs {
		if prog != nil {
			out = append(out, prog)
		}
	}
	return out
}

// decideMetadataOnly reports whether metadata-only informers can answer:
// the output is a table, a name list or a count, and every expression reads
// only object.metadata, object.apiVersion and object.kind.
func (p *Plan) decideMetadataOnly() bool {
	switch p.req.Output {
	case "", "name", "wide":
	default:
		return false
	}
	for _, prog := range p.programs() {
		if !prog.ReadsOnlyMetadata() {
			return false
		}
	}
	return true
}

// MetadataOnly reports whether the plan caches only object metadata.
func (p *Plan) MetadataOnly() bool { return p.metadataOnly }

// Conn is how a Plan reaches the cluster.
type Conn struct {
	// Config is the REST config of the user's kubeconfig and flags.
	Config *rest.Config
	// Resolver maps resource arguments to resources.
	Resolver *factory.Resolver
}

// Execute resolves the resources, fills the caches, answers the query and
// prints the answer on out; warnings go to errOut.
func (p *Plan) Execute(ctx context.Context, conn Conn, out, errOut io.Writer) error {
	resources, err := conn.Resolver.Resolve(p.req.Resources)
	if err != nil {
		if factory.IsUnknownResource(err) {
			return &UsageError{Err: err}
		}
		return err
	}
	if err := p.checkSchemas(conn.Resolver, resources); err != nil {
		return err
	}
	f, err := factory.New(conn.Config, factory.Config{KeepManagedFields: p.req.Print.ShowManagedFields})
	if err != nil {
		return err
	}
	mode := factory.ModeFull
	if p.metadataOnly {
		mode = factory.ModeMetadata
	}
	stats := &indexers.Stats{}
	indexFuncs := func() cache.Indexers {
		ix := cache.Indexers{}
		for name, prog := range p.indexes {
			if !p.lookupOnly(name) {
				ix[name] = indexers.IndexFunc(name, prog, stats)
			}
		}
		return ix
	}
	scope := factory.Scope{Namespace: p.req.Namespace, LabelSelector: p.req.LabelSelector, FieldSelector: p.req.FieldSelector}
	var queried []*factory.Informer
	for _, res := range resources {
		inf, err := f.Request(res, scope, mode, indexFuncs())
		if err != nil {
			return err
		}
		queried = append(queried, inf)
	}

	lookup, err := p.lookups(f, conn.Resolver, stats, queried)
	if err != nil {
		return err
	}
	if err := f.Start(ctx); err != nil {
		return err
	}
	if err := f.WaitForSync(ctx, p.req.SyncTimeout, true, p.req.Progress); err != nil {
		return err
	}
	for _, line := range stats.Summary() {
		fmt.Fprintf(errOut, "warning: %s\n", line)
	}

	spec := p.spec(lookup)
	var results []*Result
	for _, inf := range queried {
		res, err := Run(inf.Informer.GetIndexer(), spec)
		if err != nil {
			return err
		}
		for _, w := range res.Warnings {
			if len(queried) > 1 {
				fmt.Fprintf(errOut, "warning: %s: %s\n", inf.Resource, w)
			} else {
				fmt.Fprintf(errOut, "warning: %s\n", w)
			}
		}
		results = append(results, res)
	}
	return p.print(out, errOut, queried, results)
}

// checkSchemas compiles every expression that reads the queried objects
// again against each resource's OpenAPI v3 schema, as Kubernetes checks
// ValidatingAdmissionPolicy expressions: a misspelled field or a --where
// that is not bool is refused instead of silently matching nothing.
// Resources that publish no schema are checked dynamically, as before.
func (p *Plan) checkSchemas(r *factory.Resolver, resources []factory.Resource) error {
	type check struct {
		expr    string
		kind    indexers.Kind
		context string
	}
	var checks []check
	add := func(prog *indexers.Program) {
		if prog != nil {
			checks = append(checks, check{prog.Expr(), prog.Kind(), prog.Context()})
		}
	}
	add(p.where)
	add(p.sortBy)
	add(p.groupBy)
	for _, c := range p.columns {
		add(c)
	}
	for _, name := range p.indexNames() {
		if !p.lookupOnly(name) {
			add(p.indexes[name])
		}
	}
	if len(checks) == 0 {
		return nil
	}
	var errs []error
	for _, res := range resources {
		schema, err := indexers.ResolveSchema(r.Discovery(), res.GVK)
		if err != nil || schema == nil {
			continue // no schema: the expressions were checked dynamically
		}
		for _, c := range checks {
			if _, err := p.env.CompileWithSchema(c.expr, c.kind, c.context, schema); err != nil {
				if len(resources) > 1 {
					err = fmt.Errorf("for %s: %w", res, err)
				}
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return &UsageError{Err: errors.Join(errs...)}
	}
	return nil
}

// lookupOnly reports whether index name is read only by byIndex() calls,
// not by --by: it is then registered only on the resources byIndex() reads.
func (p *Plan) lookupOnly(name string) bool {
	for _, s := range p.req.By {
		if s.Index == name {
			return false
		}
	}
	for _, prog := range p.programs() {
		for _, ref := range prog.References() {
			if slices.Contains(ref.Indexes, name) {
				return true
			}
		}
	}
	return false
}

// lookups adds an informer for every resource that get() and byIndex() read,
// with the indexes byIndex() names, and binds the plan's programs to them.
func (p *Plan) lookups(f *factory.Factory, r *factory.Resolver, stats *indexers.Stats, queried []*factory.Informer) (*factory.Lookup, error) {
	lookup := factory.NewLookup()
	wanted := map[string]map[string]bool{} // resource as written → index names
	for _, prog := range p.programs() {
		for _, ref := range prog.References() {
			if wanted[ref.Resource] == nil {
				wanted[ref.Resource] = map[string]bool{}
			}
			for _, ix := range ref.Indexes {
				wanted[ref.Resource][ix] = true
			}
		}
	}
	names := make([]string, 0, len(wanted))
	for n := range wanted {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		res, err := r.Resolve([]string{name})
		if err != nil {
			return nil, &UsageError{Err: fmt.Errorf("get()/byIndex() resource %q: %w", name, err)}
		}
		if len(res) != 1 {
			return nil, &UsageError{Err: fmt.Errorf("get()/byIndex() resource %q names %d resource types; name one", name, len(res))}
		}
		ix := cache.Indexers{}
		var schema *spec.Schema
		if len(wanted[name]) > 0 {
			schema, _ = indexers.ResolveSchema(r.Discovery(), res[0].GVK) // nil: checked dynamically
		}
		for idx := range wanted[name] {
			prog, ok := p.indexes[idx]
			if !ok && idx != cache.NamespaceIndex {
				return nil, &UsageError{Err: fmt.Errorf("byIndex(%q, %q, …): %w", name, idx, unknownIndex(idx, p.indexNames()))}
			}
			if !ok {
				continue
			}
			if _, err := p.env.CompileWithSchema(prog.Expr(), prog.Kind(), prog.Context(), schema); err != nil {
				return nil, &UsageError{Err: fmt.Errorf("for %s: %w", res[0], err)}
			}
			ix[idx] = indexers.IndexFunc(idx, prog, stats)
		}
		scope := factory.Scope{}
		if res[0].Namespaced && p.namespaced(queried) {
			scope.Namespace = p.req.Namespace
		}
		inf, err := f.Request(res[0], scope, factory.ModeFull, nil)
		if err != nil {
			return nil, err
		}
		// A queried informer already has the plan's indexes but the
		// lookup-only ones.
		if slices.Contains(queried, inf) {
			for n := range ix {
				if !p.lookupOnly(n) {
					delete(ix, n)
				}
			}
		}
		if len(ix) > 0 {
			if _, err := f.Request(res[0], scope, factory.ModeFull, ix); err != nil {
				return nil, err
			}
		}
		lookup.Add(name, inf)
	}
	if len(names) > 0 {
		p.bind(lookup)
	}
	return lookup, nil
}

// namespaced reports whether the query is scoped to a namespace: a
// namespace is set and some queried resource is namespaced. Lookups of
// namespaced resources then read that namespace only; a query of
// cluster-scoped resources (nodes) looks up across all namespaces.
func (p *Plan) namespaced(queried []*factory.Informer) bool {
	if p.req.Namespace == "" {
		return false
	}
	for _, inf := range queried {
		if inf.Resource.Namespaced {
			return true
		}
	}
	return false
}

// bind makes every program read get() and byIndex() from l.
func (p *Plan) bind(l indexers.Lookup) {
	bindOne := func(prog **indexers.Program) {
		if *prog != nil {
			*prog = (*prog).WithLookup(l)
		}
	}
	bindOne(&p.where)
	bindOne(&p.sortBy)
	bindOne(&p.groupBy)
	for i := range p.columns {
		bindOne(&p.columns[i])
	}
	for name, prog := range p.indexes {
		p.indexes[name] = prog.WithLookup(l)
	}
}

// spec turns the compiled plan into the engine's Spec.
func (p *Plan) spec(_ *factory.Lookup) Spec {
	s := Spec{Selectors: p.req.By, Count: p.req.Count, Limit: p.req.Limit}
	if p.where != nil {
		s.Where = p.where.Match
	}
	if p.sortBy != nil {
		s.SortBy = p.sortBy.Value
	}
	if p.groupBy != nil {
		s.GroupBy = p.groupBy.Value
	}
	for i, c := range p.req.Columns {
		s.Columns = append(s.Columns, Column{Name: c.Name, Value: p.columns[i].Value})
	}
	return s
}

// print writes the results: one table per resource (as kubectl get does for
// several resource types), or one merged answer for counts and the other
// formats.
func (p *Plan) print(out, errOut io.Writer, infs []*factory.Informer, results []*Result) error {
	opts := p.req.Print
	opts.ErrOut = errOut
	opts.Namespace = p.req.Namespace
	if len(results) == 1 {
		opts.GroupVersionKind = infs[0].Resource.GVK
		opts.ClusterScoped = !infs[0].Resource.Namespaced
		pr, err := NewPrinter(p.req.Output, opts)
		if err != nil {
			return err
		}
		return pr.Print(out, results[0])
	}
	switch {
	case p.req.Count && p.req.GroupBy == "":
		total := &Result{Mode: ModeCount}
		for _, r := range results {
			total.Matched += r.Matched
		}
		return p.printer.Print(out, total)
	case p.req.Count:
		return p.printer.Print(out, mergeGroups(results, p.req.Limit))
	case p.printer.HumanReadable():
		printed := 0
		for i, r := range results {
			if len(r.Items) == 0 {
				continue
			}
			if printed > 0 {
				fmt.Fprintln(out)
			}
			o := opts
			o.GroupVersionKind = infs[i].Resource.GVK
			o.ClusterScoped = !infs[i].Resource.Namespaced
			o.ShowKind = true
			o.ErrOut = io.Discard
			pr, err := NewPrinter(p.req.Output, o)
			if err != nil {
				return err
			}
			if err := pr.Print(out, r); err != nil {
				return err
			}
			printed++
		}
		if printed == 0 {
			return p.printer.Print(out, &Result{Mode: ModeObjects})
		}
		return nil
	default:
		merged := &Result{Mode: ModeObjects}
		for _, r := range results {
			merged.Items = append(merged.Items, r.Items...)
			merged.Matched += r.Matched
			merged.ColumnNames = r.ColumnNames
		}
		return p.printer.Print(out, merged)
	}
}

func mergeGroups(results []*Result, limit int) *Result {
	counts := map[string]int{}
	for _, r := range results {
		for _, g := range r.Groups {
			counts[g.Value] += g.Count
		}
	}
	merged := &Result{Mode: ModeGroups}
	for v, n := range counts {
		merged.Groups = append(merged.Groups, Group{Value: v, Count: n})
	}
	sort.Slice(merged.Groups, func(i, j int) bool {
		a, b := merged.Groups[i], merged.Groups[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Value < b.Value
	})
	if limit > 0 && len(merged.Groups) > limit {
		merged.Groups = merged.Groups[:limit]
	}
	return merged
}
