package query

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// NamedExpr is a NAME=CEL pair of --index or --columns.
type NamedExpr struct {
	Name string `json:"name" yaml:"name"`
	Expr string `json:"expr" yaml:"expr"`
}

var columnStart = regexp.MustCompile(`^\s*[A-Za-z_][A-Za-z0-9_.-]*\s*=[^=]`)

// SplitColumns splits "NAME=CEL,NAME=CEL" at the commas that are outside
// parentheses, brackets, braces and string literals and are followed by
// another NAME=, so that expressions may contain commas.
func SplitColumns(s string) []string {
	var parts []string
	depth, start := 0, 0
	indexers.OutsideStrings(s, func(i int) bool {
		switch c := s[i]; {
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0 && columnStart.MatchString(s[i+1:]):
			parts = append(parts, s[start:i])
			start = i + 1
		}
		return true
	})
	return append(parts, s[start:])
}

// Request is a whole query as the command line states it.
type Request struct {
	// Resources are the resource arguments as typed ("pods", "po,nodes"),
	// read as kubectl get reads them: TYPE[,TYPE...] NAME... and
	// TYPE/NAME... name objects. A named object that does not exist is
	// reported by a *NotFoundError, after the others are printed.
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
	// ResourceIndexes are indexes per resource (named as kubectl names it),
	// from the config file: registered when that resource is queried or
	// read by byIndex(). An index of Indexes with the same name wins.
	ResourceIndexes map[string][]NamedExpr
	// ConfigPath names the file ResourceIndexes came from, for messages.
	ConfigPath string
	// ConfigLine, when set, returns the line of ConfigPath where the
	// index name of resource is defined, for messages; 0 when unknown.
	ConfigLine func(resource, name string) int
	// ResourceFlagIndexes are indexes per resource (as written) given on
	// the command line, --index RESOURCE:NAME=CEL: registered as
	// ResourceIndexes are, over which they win. A resource among them
	// that is neither queried nor read by byIndex() is an error.
	ResourceFlagIndexes map[string][]NamedExpr
	// By answers from indexes (intersection).
	By []Selector
	// Where, SortBy and GroupBy are CEL expressions; "" means none. A
	// SortBy that is a negation as a whole, -X, sorts by X in descending
	// order, whatever its type. GroupBy implies Count.
	Where, SortBy, GroupBy string
	// Reverse reverses the order: descending with SortBy (ascending with
	// a SortBy of -X), else namespace/name descending.
	Reverse bool
	// Columns are extra table columns.
	Columns []NamedExpr
	// Count prints the number of matches (per GroupBy value).
	Count bool
	// Limit keeps at most Limit results; 0: all. Over several resources
	// it is a limit in all, applied to the answer they make together.
	Limit int
	// Output is the -o value.
	Output string
	// Print holds the remaining printing flags.
	Print PrintOptions
	// SyncTimeout bounds the wait for the caches. Default 2m.
	SyncTimeout time.Duration
	// Progress, when not nil, receives a progress line while caches fill.
	Progress io.Writer
	// WholeObjects caches whole objects even when the expressions and the
	// output need only metadata or a few fields: expressions written after
	// the caches filled (the interactive prompt) may read any field.
	// Default false: caches hold only what the plan reads.
	WholeObjects bool
	// Names are the words messages use for the parts of the query; the
	// zero value names them by their flags.
	Names Names
	// Remote: the request is answered by a query server, whose indexes By
	// may name without the request defining them.
	Remote bool
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
	// indexes are the --index programs by name.
	indexes map[string]*indexers.Program
	// resourceIndexes are the programs of the config's indexes and of
	// --index RESOURCE:NAME=CEL: resource as written → index name →
	// program.
	resourceIndexes map[string]map[string]*indexers.Program
	// flagResources are the resources (as written) given indexes with
	// --index RESOURCE:NAME=CEL.
	flagResources map[string]bool
	where         *indexers.Program
	sortBy        *indexers.Program
	groupBy       *indexers.Program
	columns       []*indexers.Program
	// descending: the answer is sorted in descending order.
	descending bool
	// types are the resource arguments without object names; objects[i]
	// are the names given for types[i], nil when none are.
	types   []string
	objects [][]string
	// synced are the caches that sync filled; nil before. A plan made by
	// With shares them.
	synced *synced
	// crdColumns are the printer columns of the custom resources sync
	// found; tables of the others have their kind's columns.
	crdColumns map[schema.GroupVersionResource][]PrinterColumn
}

// synced are the filled caches of a plan.
type synced struct {
	conn    Conn
	queried []*factory.Informer
	// named are the object names given for each queried resource that
	// names any; positions the place of each among the objects named
	// (see namedOrder).
	named     map[schema.GroupVersionResource][]string
	positions map[schema.GroupVersionResource]map[string]int
	// lookup reads, under the names the first query's expressions write,
	// the resources they read with get() and byIndex().
	lookup *factory.Lookup
}

// Compile checks req and compiles its expressions with env. Errors are
// *UsageError; an invalid expression wraps an *indexers.ExprError that
// shows where it is wrong.
func Compile(env *indexers.Env, req Request) (*Plan, error) {
	if req.SyncTimeout <= 0 {
		req.SyncTimeout = 2 * time.Minute
	}
	if req.GroupBy != "" {
		// Groups are counts: --group-by says --count.
		req.Count = true
	}
	p := &Plan{req: req, env: env, indexes: map[string]*indexers.Program{}, resourceIndexes: map[string]map[string]*indexers.Program{}}
	var errs []error
	var err error
	if p.types, p.objects, err = splitArgs(req.Resources); err != nil {
		errs = append(errs, err)
	}
	if p.objects != nil && (strings.TrimSpace(req.LabelSelector) != "" || strings.TrimSpace(req.FieldSelector) != "") {
		// kubectl get's words for each form of names.
		msg := "name cannot be provided when a selector is specified"
		if slices.ContainsFunc(req.Resources, func(a string) bool { return strings.Contains(a, "/") }) {
			msg = "selectors and the all flag cannot be used when passing resource/name arguments"
		}
		errs = append(errs, errors.New(msg))
	}
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
	checkName := func(name, where string) bool {
		switch {
		case name == "" || strings.ContainsAny(name, " =,"):
			errs = append(errs, fmt.Errorf("invalid index name %q%s: use a name of letters, digits, '-' or '_'", name, where))
		case name == cache.NamespaceIndex:
			errs = append(errs, fmt.Errorf("index %q%s is built in and cannot be redefined", name, where))
		default:
			return true
		}
		return false
	}
	for _, ix := range req.Indexes {
		if !checkName(ix.Name, "") {
			continue
		}
		if _, dup := p.indexes[ix.Name]; dup {
			errs = append(errs, fmt.Errorf("index %q is defined twice", ix.Name))
			continue
		}
		p.indexes[ix.Name] = compile(ix.Expr, indexers.KindIndex, fmt.Sprintf("index %q", ix.Name))
	}
	for _, res := range slices.Sorted(maps.Keys(req.ResourceIndexes)) {
		p.resourceIndexes[res] = map[string]*indexers.Program{}
		for _, ix := range req.ResourceIndexes[res] {
			where := fmt.Sprintf(" of %s in %s", res, req.ConfigPath)
			if req.ConfigLine != nil {
				if line := req.ConfigLine(res, ix.Name); line > 0 {
					where = fmt.Sprintf(" of %s in %s:%d", res, req.ConfigPath, line)
				}
			}
			if !checkName(ix.Name, where) {
				continue
			}
			p.resourceIndexes[res][ix.Name] = compile(ix.Expr, indexers.KindIndex, fmt.Sprintf("index %q%s", ix.Name, where))
		}
	}
	p.flagResources = map[string]bool{}
	for _, res := range slices.Sorted(maps.Keys(req.ResourceFlagIndexes)) {
		if p.resourceIndexes[res] == nil {
			p.resourceIndexes[res] = map[string]*indexers.Program{}
		}
		p.flagResources[res] = true
		seen := map[string]bool{}
		for _, ix := range req.ResourceFlagIndexes[res] {
			where := fmt.Sprintf(" of %s", res)
			if !checkName(ix.Name, where) {
				continue
			}
			switch _, every := p.indexes[ix.Name]; {
			case seen[ix.Name]:
				errs = append(errs, fmt.Errorf("index %q of %s is defined twice", ix.Name, res))
				continue
			case every:
				errs = append(errs, fmt.Errorf("index %q is defined both for every resource (--index %s=…) and for %s (--index %s:%s=…): keep one", ix.Name, ix.Name, res, res, ix.Name))
				continue
			}
			seen[ix.Name] = true
			p.resourceIndexes[res][ix.Name] = compile(ix.Expr, indexers.KindIndex, fmt.Sprintf("index %q%s", ix.Name, where))
		}
	}
	name := req.Names.Of
	p.where = compile(req.Where, indexers.KindPredicate, name(PartWhere))
	sortBy, negated := env.Descending(req.SortBy)
	p.descending = negated != req.Reverse
	p.sortBy = compile(sortBy, indexers.KindValue, name(PartSortBy))
	var ee *indexers.ExprError
	if negated && len(errs) > 0 && errors.As(errs[len(errs)-1], &ee) && ee.Expr == sortBy {
		ee.Expr = req.SortBy // shown as typed, at the same columns
	}
	p.groupBy = compile(req.GroupBy, indexers.KindValue, name(PartGroupBy))
	seen := map[string]bool{}
	for _, c := range req.Columns {
		if c.Name == "" || seen[c.Name] {
			errs = append(errs, fmt.Errorf("invalid or repeated column name %q in %s NAME=CEL", c.Name, name(PartColumns)))
			continue
		}
		seen[c.Name] = true
		p.columns = append(p.columns, compile(c.Expr, indexers.KindValue, name(PartColumns)+" "+c.Name))
	}
	for _, s := range req.By {
		if !req.Remote && !slices.Contains(p.allIndexNames(), s.Index) {
			errs = append(errs, unknownIndex(s.Index, p.allIndexNames(), req.Names))
		}
	}
	if req.Count && req.SortBy != "" {
		errs = append(errs, fmt.Errorf("%s cannot be combined with %s: groups are ordered by count", name(PartSortBy), name(PartCount)))
	}
	if req.Count && len(req.Columns) > 0 {
		errs = append(errs, fmt.Errorf("%s cannot be combined with %s", name(PartColumns), name(PartCount)))
	}
	if req.Limit < 0 {
		errs = append(errs, fmt.Errorf("%s must not be negative, got %d", name(PartLimit), req.Limit))
	}
	printer, err := NewPrinter(req.Output, req.Print)
	if err != nil {
		errs = append(errs, err)
	} else if req.Count && !printer.HumanReadable() {
		errs = append(errs, fmt.Errorf("%s prints numbers: %s %s cannot be used with it", name(PartCount), name(PartOutput), req.Output))
	}
	p.printer = printer
	if len(errs) > 0 {
		return nil, &UsageError{Err: errors.Join(errs...)}
	}
	return p, nil
}

// unknownIndex says that no index is called name, lists the known ones and
// names how to define one, as names call it (--index, :index).
func unknownIndex(name string, known []string, names Names) error {
	return fmt.Errorf("unknown index %q: known indexes are %s (define one with %s %s=CEL)", name, strings.Join(known, ", "), names.Of(PartIndex), name)
}

// allIndexNames returns the built-in, --index and config index names, sorted.
func (p *Plan) allIndexNames() []string {
	set := map[string]bool{cache.NamespaceIndex: true}
	for n := range p.indexes {
		set[n] = true
	}
	for _, ixs := range p.resourceIndexes {
		for n := range ixs {
			set[n] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// queryPrograms are the programs evaluated on the queried objects, besides
// their indexes.
func (p *Plan) queryPrograms() []*indexers.Program {
	progs := []*indexers.Program{p.where, p.sortBy, p.groupBy}
	progs = append(progs, p.columns...)
	return slices.DeleteFunc(progs, func(prog *indexers.Program) bool { return prog == nil })
}

// programs are every program of the plan.
func (p *Plan) programs() []*indexers.Program {
	progs := p.queryPrograms()
	for _, name := range slices.Sorted(maps.Keys(p.indexes)) {
		progs = append(progs, p.indexes[name])
	}
	for _, res := range slices.Sorted(maps.Keys(p.resourceIndexes)) {
		for _, name := range slices.Sorted(maps.Keys(p.resourceIndexes[res])) {
			progs = append(progs, p.resourceIndexes[res][name])
		}
	}
	return progs
}

// metadataOnly reports whether metadata-only informers can answer with
// these index programs: the output is a table, a name list or a count, and
// every expression evaluated on the queried objects reads only
// object.metadata, object.apiVersion and object.kind.
func (p *Plan) metadataOnly(indexes map[string]*indexers.Program) bool {
	if p.req.WholeObjects {
		return false
	}
	switch p.req.Output {
	case "", "name", "wide":
	default:
		return false
	}
	for _, prog := range p.queryPrograms() {
		if !prog.ReadsOnlyMetadata() {
			return false
		}
	}
	for _, prog := range indexes {
		if !prog.ReadsOnlyMetadata() {
			return false
		}
	}
	return true
}

// fields returns the JSON paths of the queried objects that the plan reads
// with these index programs, or nil when it needs whole objects: an output
// format that prints objects (json, yaml, templates, custom columns) or an
// expression that reads object as a whole. Tables, -o name and counts need
// only metadata besides what the expressions read.
func (p *Plan) fields(indexes map[string]*indexers.Program) *jsonval.Paths {
	if p.req.WholeObjects {
		return nil
	}
	switch p.req.Output {
	case "", "name", "wide":
	default:
		return nil
	}
	out := &jsonval.Paths{}
	for _, prog := range append(p.queryPrograms(), mapValues(indexes)...) {
		if !out.Union(prog.ObjectPaths()) {
			return nil
		}
	}
	return out
}

// MetadataOnly reports whether the plan's expressions and output format
// let it cache only object metadata for a queried resource that has no
// config indexes. A table whose kind has columns of its own (pods, a CRD
// with printer columns) needs the fields they read too.
func (p *Plan) MetadataOnly() bool { return p.metadataOnly(p.queriedIndexes(nil)) }

// lookupOnly reports whether --index name is read only by byIndex() calls,
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

// queriedIndexes returns the index programs of a queried resource: its
// config indexes and the --index ones that are not lookup-only (which win).
func (p *Plan) queriedIndexes(config map[string]*indexers.Program) map[string]*indexers.Program {
	out := map[string]*indexers.Program{}
	for n, prog := range config {
		out[n] = prog
	}
	for n, prog := range p.indexes {
		if !p.lookupOnly(n) {
			out[n] = prog
		}
	}
	return out
}

// Conn is how a Plan reaches the cluster.
type Conn struct {
	// Config is the REST config of the user's kubeconfig and flags.
	Config *rest.Config
	// Resolver maps resource arguments to resources.
	Resolver *factory.Resolver
	// Bound, when not nil, is told how long the requests of Resolver
	// (discovery and OpenAPI schemas) may take while a plan fills its
	// caches: it is called with a context that ends limit (the
	// Request.SyncTimeout) after the plan began, and the function it
	// returns is called once the caches have synced or the attempt has
	// failed. Resolver's requests take no context of their own, so without
	// it a server that never answers holds resolution up for as long as
	// its client's timeouts allow, whatever the sync timeout.
	Bound func(ctx context.Context, limit time.Duration) (release func())
	// KubectlFlags are carried by the kubectl commands that messages
	// suggest (--kubeconfig, --context, --as...): see
	// factory.Config.KubectlFlags.
	KubectlFlags []string
}

// bound starts the contact phase of a plan filling its caches: the
// returned context ends limit from now (or with ctx), and Resolver's
// requests are held to it until release is called (once or more).
func (c Conn) bound(ctx context.Context, limit time.Duration) (context.Context, func()) {
	bctx, cancel := context.WithTimeout(ctx, limit)
	if c.Bound == nil {
		return bctx, cancel
	}
	release := sync.OnceFunc(c.Bound(bctx, limit))
	return bctx, func() {
		release()
		cancel()
	}
}

// Execute resolves the resources, fills the caches, answers the query and
// prints the answer on out; warnings go to errOut.
func (p *Plan) Execute(ctx context.Context, conn Conn, out, errOut io.Writer) error {
	queried, _, err := p.sync(ctx, conn, errOut)
	if err != nil {
		return err
	}
	return p.answer(ctx, out, errOut, queried)
}

// answer runs the query on the synced caches and prints it. When ctx ends
// first, the evaluation under way stops (within 100 iterations of a
// comprehension) and answer returns an error, printing nothing.
func (p *Plan) answer(ctx context.Context, out, errOut io.Writer, queried []*factory.Informer) error {
	results, err := p.results(ctx, queried)
	if err != nil {
		return err
	}
	for _, w := range warningLines(queried, results) {
		_, _ = fmt.Fprintln(errOut, w)
	}
	var notFound NotFoundError
	found := 0
	for i, r := range results {
		found += len(r.Items)
		for _, name := range r.Missing {
			notFound.Missing = append(notFound.Missing, Missing{Resource: queried[i].Resource.GVR.GroupResource(), Name: name})
		}
	}
	if len(notFound.Missing) == 0 {
		return p.print(out, errOut, queried, results)
	}
	// As kubectl get prints named objects some of which do not exist: the
	// others, or, when none does, no table and no "No resources found"; a
	// single name implies a single object, printed alone or not at all.
	if (!p.printer.HumanReadable() || found > 0) && !p.singleObject() {
		if err := p.print(out, errOut, queried, results); err != nil {
			return err
		}
	}
	return &notFound
}

// namesOf returns the names given for the objects of res, if any were.
func (s *synced) namesOf(res factory.Resource) ([]string, bool) {
	if s == nil {
		return nil, false
	}
	names, ok := s.named[res.GVR]
	return names, ok
}

// singleObject reports whether the query names one object of one
// resource type: kubectl get then prints the object itself with -o json,
// yaml and templates, not a List holding it.
func (p *Plan) singleObject() bool {
	return len(p.objects) == 1 && len(p.objects[0]) == 1 && !strings.Contains(p.types[0], ",")
}

// results runs the query on the synced caches of queried. When ctx ends
// first, the evaluation under way stops and results returns the context's
// cause.
func (p *Plan) results(ctx context.Context, queried []*factory.Informer) ([]*Result, error) {
	spec := p.spec()
	if ctx.Done() != nil {
		// The programs of this answer stop with ctx; p's are not changed.
		bound := *p
		bound.columns = slices.Clone(p.columns)
		bound.withBudget(indexers.NewBudget(ctx, 0))
		spec = bound.spec()
		spec.Stop = indexers.IsBudgetStop
	}
	idxs := make([]cache.Indexer, len(queried))
	specs := make([]Spec, len(queried))
	for i, inf := range queried {
		idxs[i], specs[i] = inf.Informer.GetIndexer(), spec
		if names, ok := p.synced.namesOf(inf.Resource); ok {
			specs[i].Objects = names
			if inf.Resource.Namespaced {
				specs[i].Namespace = p.req.Namespace
			}
		}
	}
	results, err := runAll(idxs, specs)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		// Stopped as the evaluations ended: no answer rather than one
		// that may not be whole.
		return nil, context.Cause(ctx)
	}
	return results, nil
}

// warningLines are the lines that report the warnings of results, the
// answers for queried: each names its resource when there are several.
func warningLines(queried []*factory.Informer, results []*Result) []string {
	var lines []string
	for i, res := range results {
		for _, w := range res.Warnings {
			if len(queried) > 1 {
				lines = append(lines, fmt.Sprintf("warning: %s: %s", queried[i].Resource, w))
			} else {
				lines = append(lines, fmt.Sprintf("warning: %s", w))
			}
		}
	}
	return lines
}

// Answer prints the answer of p from the caches that Execute (or the
// session that made p with With) filled, without listing again; warnings
// go to errOut. The caches keep following the cluster, so two answers may
// differ.
func (p *Plan) Answer(out, errOut io.Writer) error {
	return p.AnswerContext(context.Background(), out, errOut)
}

// AnswerContext answers as Answer does until ctx ends: then the evaluation
// under way stops, nothing more is printed, and it returns an error (the
// context's cause once the evaluations have stopped).
func (p *Plan) AnswerContext(ctx context.Context, out, errOut io.Writer) error {
	if p.synced == nil {
		return errors.New("the caches of this plan have not been filled: answer with Execute first")
	}
	return p.answer(ctx, out, errOut, p.synced.queried)
}

// With returns the plan of the request that edit makes of a copy of p's
// request, compiled with p's environment; p is not changed. When p's
// caches have synced, the new plan answers from them (see Answer): its
// expressions are checked against the queried resources' schemas and read
// get() and byIndex() from the resources p caches, queried or read by
// get() and byIndex() (see synced.reach). The resources, scope and
// selectors cannot change then, nor can expressions read resources that
// are not cached, and p must cache whole objects (Request.WholeObjects).
func (p *Plan) With(edit func(*Request)) (*Plan, error) {
	req := p.req
	req.Resources = slices.Clone(p.req.Resources)
	req.Indexes = slices.Clone(p.req.Indexes)
	req.By = slices.Clone(p.req.By)
	req.Columns = slices.Clone(p.req.Columns)
	edit(&req)
	np, err := Compile(p.env, req)
	if err != nil || p.synced == nil {
		return np, err
	}
	s := p.synced
	switch {
	case !p.req.WholeObjects:
		return nil, errors.New("the caches hold only what the first query read: make the first plan with WholeObjects")
	case !slices.Equal(req.Resources, p.req.Resources) || req.Namespace != p.req.Namespace ||
		req.LabelSelector != p.req.LabelSelector || req.FieldSelector != p.req.FieldSelector || !req.WholeObjects:
		return nil, &UsageError{Err: errors.New("the resources, namespace and selectors of filled caches cannot change: start a new query")}
	}
	lookup, errs := s.reach(np.programs(), req.Names)
	for _, inf := range s.queried {
		have := inf.Informer.GetIndexer().GetIndexers()
		for _, sel := range req.By {
			if _, ok := have[sel.Index]; !ok {
				errs = append(errs, fmt.Errorf("for %s: %w", inf.Resource, unknownIndex(sel.Index, slices.Sorted(maps.Keys(have)), req.Names)))
			}
		}
	}
	if len(errs) > 0 {
		return nil, &UsageError{Err: errors.Join(errs...)}
	}
	if np.readsOtherResources() {
		np.bind(lookup)
	}
	set := schemaSetOf(s.conn.Resolver, s.queried)
	for _, inf := range s.queried {
		if err := np.checkSchema(set, inf.Resource, np.queryPrograms()); err != nil {
			return nil, err
		}
	}
	np.synced, np.crdColumns = s, p.crdColumns
	return np, nil
}

// ExecuteWatch answers like Execute, then keeps the caches following the
// cluster and prints the answer again whenever an event changed it: after
// a burst of events has been quiet for debounce, once; only when the
// printed text differs from the last one (so --count and --group-by print
// only new numbers). A new answer of several lines is set apart from the
// previous one by an empty line, and so is an answer that became empty,
// which prints nothing more on out (-o name) but writes "No resources
// found" on errOut, as Execute does, when it is a table or groups. It
// returns nil when ctx ends.
func (p *Plan) ExecuteWatch(ctx context.Context, conn Conn, out, errOut io.Writer, debounce time.Duration) error {
	queried, f, err := p.sync(ctx, conn, errOut)
	if err != nil {
		return err
	}
	// render prints the answer and returns its text and what printing it
	// said on errOut ("No resources found"); the warnings of evaluations
	// go to warnings.
	render := func(warnings io.Writer) (text, said string, err error) {
		results, err := p.results(ctx, queried)
		if err != nil {
			return "", "", err
		}
		for _, w := range warningLines(queried, results) {
			_, _ = fmt.Fprintln(warnings, w)
		}
		var b, e bytes.Buffer
		err = p.print(&b, &e, queried, results)
		return b.String(), e.String(), err
	}
	// shown tells answers apart: an empty one by what it said.
	shown := func(text, said string) string {
		if text == "" {
			return "\x00" + said
		}
		return text
	}
	// The handlers are registered before the first answer, so that no
	// change after it goes unseen; the adds they are first handed make
	// one more answer, printed only if it differs.
	changed := make(chan struct{}, 1)
	signal := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { signal() },
		UpdateFunc: func(any, any) { signal() },
		DeleteFunc: func(any) { signal() },
	}
	for _, inf := range f.Informers() {
		reg, err := inf.Informer.AddEventHandler(handler)
		if err != nil {
			return err
		}
		defer func() { _ = inf.Informer.RemoveEventHandler(reg) }()
	}
	text, said, err := render(errOut)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(errOut, said); err != nil {
		return err
	}
	if _, err := io.WriteString(out, text); err != nil {
		return err
	}
	last := shown(text, said)
	releaseMemory()
	var quiet <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			quiet = time.After(debounce)
		case <-quiet:
			quiet = nil
			// Warnings were said once already.
			text, said, err := render(io.Discard)
			if err != nil {
				if ctx.Err() != nil {
					return nil // stopped once answered
				}
				return err
			}
			if shown(text, said) == last {
				continue
			}
			// A new answer of several lines (a table, groups) or none is
			// set apart from the previous one; a bare count follows on the
			// next line.
			if text == "" || strings.Count(text, "\n") > 1 {
				if _, err := fmt.Fprintln(out); err != nil {
					return err
				}
			}
			if _, err := io.WriteString(out, text); err != nil {
				return err
			}
			if text == "" {
				// "No resources found", when the printer says it.
				if _, err := io.WriteString(errOut, said); err != nil {
					return err
				}
			}
			last = shown(text, said)
		}
	}
}

// IndexInfo describes one index of a synced resource.
type IndexInfo struct {
	Resource string
	Index    string
	// Expr is the CEL expression; "" for the built-in namespace index.
	Expr string
	// Values is the number of distinct values the index holds.
	Values int
}

// DescribeIndexes fills the caches as Execute does and returns, for every
// queried resource, each index with its number of distinct values.
func (p *Plan) DescribeIndexes(ctx context.Context, conn Conn, errOut io.Writer) ([]IndexInfo, error) {
	queried, _, err := p.sync(ctx, conn, errOut)
	if err != nil {
		return nil, err
	}
	var out []IndexInfo
	for _, inf := range queried {
		idx := inf.Informer.GetIndexer()
		exprs := p.queriedIndexes(p.configIndexesFor(conn.Resolver, inf.Resource))
		for _, name := range slices.Sorted(maps.Keys(idx.GetIndexers())) {
			info := IndexInfo{Resource: inf.Resource.String(), Index: name, Values: len(idx.ListIndexFuncValues(name))}
			if prog, ok := exprs[name]; ok {
				info.Expr = prog.Expr()
			}
			out = append(out, info)
		}
	}
	return out, nil
}

// configIndexesFor returns the config indexes that apply to res.
func (p *Plan) configIndexesFor(r *factory.Resolver, res factory.Resource) map[string]*indexers.Program {
	return p.resolveConfig(r, io.Discard)[res.GVR]
}

// sync resolves the resources, creates their informers with their indexes
// (and those of the resources get() and byIndex() read), and waits until
// every cache has synced. It returns the queried resources' informers and
// the factory that runs them all.
//
// Everything it asks the server, from resolving the resources to the last
// initial list, is bounded by one deadline: Request.SyncTimeout after it
// starts. The informers themselves run until ctx ends.
func (p *Plan) sync(ctx context.Context, conn Conn, errOut io.Writer) ([]*factory.Informer, *factory.Factory, error) {
	syncCtx, release := conn.bound(ctx, p.req.SyncTimeout)
	defer release()
	resources, named, err := p.resolveQueried(conn.Resolver)
	if err != nil {
		if factory.IsUnknownResource(err) {
			return nil, nil, &UsageError{Err: err}
		}
		return nil, nil, err
	}
	// Programs are bound to the lookup before any index function is made
	// from them; the lookup is filled before the informers start. Index
	// functions stop evaluating when ctx ends, as the informers do.
	lookup := factory.NewLookup()
	if p.readsOtherResources() {
		p.bind(lookup)
	}
	if err := p.checkFlagResources(conn.Resolver, resources); err != nil {
		return nil, nil, err
	}
	if ctx.Done() != nil {
		p.indexesStopWith(indexers.NewBudget(ctx, 0))
	}
	configIndexes := p.resolveConfig(conn.Resolver, errOut)
	f, err := factory.New(conn.Config, factory.Config{KeepManagedFields: p.req.Print.ShowManagedFields, KubectlFlags: conn.KubectlFlags})
	if err != nil {
		return nil, nil, err
	}
	stats := &indexers.Stats{}
	scope := factory.Scope{Namespace: p.req.Namespace, LabelSelector: p.req.LabelSelector, FieldSelector: p.req.FieldSelector}
	var queried []*factory.Informer
	set := newSchemaSet(conn.Resolver, resources)
	for _, res := range resources {
		ixs := p.queriedIndexes(configIndexes[res.GVR])
		for _, s := range p.req.By {
			if _, ok := ixs[s.Index]; !ok && s.Index != cache.NamespaceIndex {
				return nil, nil, &UsageError{Err: fmt.Errorf("for %s: %w", res, unknownIndex(s.Index, append(slices.Sorted(maps.Keys(ixs)), cache.NamespaceIndex), p.req.Names))}
			}
		}
		if err := p.checkSchema(set, res, append(p.queryPrograms(), mapValues(ixs)...)); err != nil {
			return nil, nil, p.everyIndexHint(conn.Resolver, res, resources, ixs, err)
		}
		columns := p.printerColumns(syncCtx, conn, res, errOut)
		if columns != nil {
			if p.crdColumns == nil {
				p.crdColumns = map[schema.GroupVersionResource][]PrinterColumn{}
			}
			p.crdColumns[res.GVR] = columns
		}
		inf, err := f.Request(res, namedScope(scope, named[res.GVR]), p.needs(res, ixs, columns, stats))
		if err != nil {
			return nil, nil, err
		}
		queried = append(queried, inf)
	}
	if err := p.lookups(f, conn.Resolver, lookup, stats, queried, configIndexes); err != nil {
		return nil, nil, err
	}
	if err := f.Start(ctx); err != nil {
		return nil, nil, err
	}
	if err := f.WaitForSync(syncCtx, p.req.SyncTimeout, true, p.req.Progress); err != nil {
		return nil, nil, err
	}
	for _, line := range stats.Summary() {
		_, _ = fmt.Fprintf(errOut, "warning: %s\n", line)
	}
	p.synced = &synced{conn: conn, queried: queried, named: named, positions: p.positions(conn.Resolver, named), lookup: lookup}
	return queried, f, nil
}

// resolveQueried resolves the queried resource types and returns, for each
// resource whose objects are named, the names. A namespaced resource's
// objects cannot be named across all namespaces.
func (p *Plan) resolveQueried(r *factory.Resolver) ([]factory.Resource, map[schema.GroupVersionResource][]string, error) {
	if p.objects == nil {
		res, err := r.Resolve(p.types)
		return res, nil, err
	}
	var out []factory.Resource
	named := map[schema.GroupVersionResource][]string{}
	for i, typ := range p.types {
		resources, err := r.Resolve([]string{typ})
		if err != nil {
			return nil, nil, err
		}
		for _, res := range resources {
			if res.Namespaced && p.req.Namespace == "" {
				return nil, nil, &UsageError{Err: errors.New("a resource cannot be retrieved by name across all namespaces")}
			}
			if _, seen := named[res.GVR]; !seen {
				out = append(out, res)
			}
			for _, n := range p.objects[i] {
				named[res.GVR] = appendNew(named[res.GVR], n)
			}
		}
	}
	return out, named, nil
}

// namedScope narrows the scope of a resource whose only named object is
// name to that object, with a field selector the server applies.
func namedScope(scope factory.Scope, names []string) factory.Scope {
	if len(names) != 1 {
		return scope
	}
	sel := "metadata.name=" + names[0]
	if scope.FieldSelector != "" {
		sel = scope.FieldSelector + "," + sel
	}
	scope.FieldSelector = sel
	return scope
}

func mapValues[V any](m map[string]V) []V {
	out := make([]V, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

func indexFuncs(ixs map[string]*indexers.Program, stats *indexers.Stats) cache.Indexers {
	out := cache.Indexers{}
	for name, prog := range ixs {
		out[name] = indexers.IndexFunc(name, prog, stats)
	}
	return out
}

// resolveConfig maps the resource names of the config's indexes, and of
// --index RESOURCE:NAME=CEL, to resources; those of the command line are
// taken last, so that they win. A name of the config the server does not
// know (a CRD not installed here) is reported and skipped; those of the
// command line were checked by checkFlagResources.
func (p *Plan) resolveConfig(r *factory.Resolver, errOut io.Writer) map[schema.GroupVersionResource]map[string]*indexers.Program {
	out := map[schema.GroupVersionResource]map[string]*indexers.Program{}
	names := slices.Sorted(maps.Keys(p.resourceIndexes))
	slices.SortStableFunc(names, func(a, b string) int {
		switch fa, fb := p.flagResources[a], p.flagResources[b]; {
		case fa == fb:
			return 0
		case fb:
			return -1
		}
		return 1
	})
	for _, name := range names {
		res, err := r.ResolveOne(name)
		if err != nil {
			if !p.flagResources[name] {
				_, _ = fmt.Fprintf(errOut, "warning: %s: indexes of %q skipped: %v\n", p.req.ConfigPath, name, err)
			}
			continue
		}
		if out[res.GVR] == nil {
			out[res.GVR] = map[string]*indexers.Program{}
		}
		for n, prog := range p.resourceIndexes[name] {
			out[res.GVR][n] = prog
		}
	}
	return out
}

// checkFlagResources checks the resources of --index RESOURCE:NAME=CEL:
// each must name one resource type, queried (one of resources) or read
// by a byIndex() of the query; otherwise its index would be defined for
// nothing.
func (p *Plan) checkFlagResources(r *factory.Resolver, resources []factory.Resource) error {
	read := map[schema.GroupVersionResource]bool{}
	for _, res := range resources {
		read[res.GVR] = true
	}
	for _, prog := range p.programs() {
		for _, ref := range prog.References() {
			if len(ref.Indexes) == 0 {
				continue
			}
			if res, err := r.ResolveOne(ref.Resource); err == nil {
				read[res.GVR] = true
			}
		}
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(p.flagResources)) {
		flag := fmt.Sprintf("--index %s:%s=…", name, strings.Join(slices.Sorted(maps.Keys(p.flagIndexNames(name))), ","))
		res, err := r.ResolveOne(name)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", flag, err))
		case !read[res.GVR]:
			errs = append(errs, fmt.Errorf("%s: %s is neither queried nor read by byIndex(): query it, or leave the index out", flag, res))
		}
	}
	if len(errs) > 0 {
		return &UsageError{Err: errors.Join(errs...)}
	}
	return nil
}

// flagIndexNames returns the names of the --index RESOURCE:NAME=CEL
// indexes of resource (as written).
func (p *Plan) flagIndexNames(resource string) map[string]bool {
	out := map[string]bool{}
	for _, ix := range p.req.ResourceFlagIndexes[resource] {
		out[ix.Name] = true
	}
	return out
}

// everyIndexHint adds to err, the schema check of res failing, what to do
// about the --index NAME=CEL indexes that do not fit res when several
// resources are queried: an index for every resource must fit each of
// them, and --index RESOURCE:NAME=CEL gives one to a single resource.
func (p *Plan) everyIndexHint(r *factory.Resolver, res factory.Resource, resources []factory.Resource, ixs map[string]*indexers.Program, err error) error {
	if len(resources) < 2 {
		return err
	}
	var hints []string
	for _, name := range slices.Sorted(maps.Keys(p.indexes)) {
		prog := p.indexes[name]
		if ixs[name] != prog || p.checkSchema(newSchemaSet(r, []factory.Resource{res}), res, []*indexers.Program{prog}) == nil {
			continue
		}
		other := resources[0]
		if other.GVR == res.GVR {
			other = resources[1]
		}
		hints = append(hints, fmt.Sprintf("--index %s=… is registered on every resource queried and does not fit %s: give it to one resource with --index RESOURCE:%s=…, such as --index %s:%s=%s",
			name, res, name, other.GVR.Resource, name, prog.Expr()))
	}
	if len(hints) == 0 {
		return err
	}
	return &UsageError{Err: errors.Join(err, errors.New(strings.Join(hints, "\n")))}
}

// checkSchema compiles progs again against the OpenAPI v3 schema of res, as
// Kubernetes checks ValidatingAdmissionPolicy expressions: a misspelled
// field or a --where that is not bool is refused instead of silently
// matching nothing. The other resources of set are those the expressions
// are evaluated on too: what an expression reads only where it exists
// (guarded by object.kind, or in .?field and has()) is accepted (see
// indexers.Env.CompileWithSchema). A resource that publishes no schema is
// skipped: its expressions were checked dynamically.
func (p *Plan) checkSchema(set *schemaSet, res factory.Resource, progs []*indexers.Program) error {
	if len(progs) == 0 {
		return nil
	}
	schema := set.schema(res)
	if schema == nil {
		return nil
	}
	return checkAgainst(p.env, schema, res, len(set.all) > 1, progs, set.others(res))
}

// checkAgainst compiles progs again with env against schema, the schema of
// res, others being the schemas of the other resources they are evaluated
// on; the errors, prefixed with res when name is true, are a *UsageError.
func checkAgainst(env *indexers.Env, schema *spec.Schema, res factory.Resource, name bool, progs []*indexers.Program, others []*spec.Schema) error {
	var errs []error
	for _, prog := range progs {
		if _, err := env.CompileWithSchema(prog.Expr(), prog.Kind(), prog.Context(), schema, others...); err != nil {
			if name {
				err = fmt.Errorf("for %s: %w", res, err)
			}
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return &UsageError{Err: errors.Join(errs...)}
	}
	return nil
}

// schemaSet holds the OpenAPI schemas of the resources the same
// expressions are evaluated on, each resolved once, when first needed.
type schemaSet struct {
	r   *factory.Resolver
	all []factory.Resource
	// resolved holds the schemas resolved so far; nil for a resource that
	// publishes none.
	resolved map[schema.GroupVersionKind]*spec.Schema
}

func newSchemaSet(r *factory.Resolver, all []factory.Resource) *schemaSet {
	return &schemaSet{r: r, all: all, resolved: map[schema.GroupVersionKind]*spec.Schema{}}
}

// schemaSetOf is newSchemaSet for the resources of infs.
func schemaSetOf(r *factory.Resolver, infs []*factory.Informer) *schemaSet {
	all := make([]factory.Resource, len(infs))
	for i, inf := range infs {
		all[i] = inf.Resource
	}
	return newSchemaSet(r, all)
}

// schema returns the schema of res; nil when it has none or it cannot be
// read.
func (s *schemaSet) schema(res factory.Resource) *spec.Schema {
	if sch, ok := s.resolved[res.GVK]; ok {
		return sch
	}
	sch, err := indexers.ResolveSchema(s.r.Discovery(), res.GVK)
	if err != nil {
		sch = nil
	}
	s.resolved[res.GVK] = sch
	return sch
}

// others returns the schemas of the resources of s other than res.
func (s *schemaSet) others(res factory.Resource) []*spec.Schema {
	var out []*spec.Schema
	for _, o := range s.all {
		if o.GVK == res.GVK {
			continue
		}
		if sch := s.schema(o); sch != nil {
			out = append(out, sch)
		}
	}
	return out
}

// lookups adds an informer for every resource that get() and byIndex() read,
// with the indexes byIndex() names, and binds the plan's programs to them.
func (p *Plan) lookups(f *factory.Factory, r *factory.Resolver, lookup *factory.Lookup, stats *indexers.Stats, queried []*factory.Informer,
	configIndexes map[schema.GroupVersionResource]map[string]*indexers.Program) error {
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
	for _, name := range slices.Sorted(maps.Keys(wanted)) {
		res, err := r.ResolveOne(name)
		if err != nil {
			return &UsageError{Err: fmt.Errorf("get()/byIndex() resource %q: %w", name, err)}
		}
		if !res.Namespaced {
			if err := clusterScopedErrors(p.programs(), name); err != nil {
				return err
			}
		}
		available := map[string]*indexers.Program{}
		for n, prog := range configIndexes[res.GVR] {
			available[n] = prog
		}
		for n, prog := range p.indexes {
			available[n] = prog
		}
		ixs := map[string]*indexers.Program{}
		for _, idx := range slices.Sorted(maps.Keys(wanted[name])) {
			if idx == cache.NamespaceIndex {
				continue
			}
			prog, ok := available[idx]
			if !ok {
				return &UsageError{Err: fmt.Errorf("byIndex(%q, %q, …): %w", name, idx, unknownIndex(idx, append(slices.Sorted(maps.Keys(available)), cache.NamespaceIndex), p.req.Names))}
			}
			ixs[idx] = prog
		}
		if err := p.checkSchema(newSchemaSet(r, []factory.Resource{res}), res, mapValues(ixs)); err != nil {
			return err
		}
		scope := factory.Scope{}
		if res.Namespaced && p.namespaced(queried) {
			scope.Namespace = p.req.Namespace
		}
		inf, err := f.Request(res, scope, factory.Needs{Mode: factory.ModeFull})
		if err != nil {
			return err
		}
		// A queried informer already has its queried indexes.
		if slices.Contains(queried, inf) {
			have := p.queriedIndexes(configIndexes[res.GVR])
			for n := range ixs {
				if _, ok := have[n]; ok {
					delete(ixs, n)
				}
			}
		}
		if len(ixs) > 0 {
			if _, err := f.Request(res, scope, factory.Needs{Mode: factory.ModeFull, Indexers: indexFuncs(ixs, stats)}); err != nil {
				return err
			}
		}
		lookup.Add(name, inf)
	}
	return nil
}

// clusterScopedErrors reports the get() calls of progs that pass a
// namespace for resource (as written), which is cluster-scoped, as a
// *UsageError; nil when there are none.
func clusterScopedErrors(progs []*indexers.Program, resource string) error {
	var errs []error
	for _, prog := range progs {
		if err := prog.CheckClusterScoped(resource); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return &UsageError{Err: errors.Join(errs...)}
	}
	return nil
}

// readsOtherResources reports whether any program calls get() or byIndex().
func (p *Plan) readsOtherResources() bool {
	for _, prog := range p.programs() {
		if len(prog.References()) > 0 {
			return true
		}
	}
	return false
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

// bind makes every program read get() and byIndex() from l. It runs before
// index functions are made from the programs.
func (p *Plan) bind(l indexers.Lookup) {
	p.eachQueryProgram(func(prog *indexers.Program) *indexers.Program { return prog.WithLookup(l) })
	for name, prog := range p.indexes {
		p.indexes[name] = prog.WithLookup(l)
	}
	for _, ixs := range p.resourceIndexes {
		for name, prog := range ixs {
			ixs[name] = prog.WithLookup(l)
		}
	}
}

// indexesStopWith makes the evaluations of every index program of p stop
// when b's context ends. It runs before index functions are made from them.
func (p *Plan) indexesStopWith(b *indexers.Budget) {
	for name, prog := range p.indexes {
		p.indexes[name] = prog.WithBudget(b)
	}
	for _, ixs := range p.resourceIndexes {
		for name, prog := range ixs {
			ixs[name] = prog.WithBudget(b)
		}
	}
}

// eachQueryProgram replaces each program of --where, --sort-by, --group-by
// and --columns by what f makes of it.
func (p *Plan) eachQueryProgram(f func(*indexers.Program) *indexers.Program) {
	for _, prog := range []**indexers.Program{&p.where, &p.sortBy, &p.groupBy} {
		if *prog != nil {
			*prog = f(*prog)
		}
	}
	for i := range p.columns {
		if p.columns[i] != nil {
			p.columns[i] = f(p.columns[i])
		}
	}
}

// spec turns the compiled plan into the engine's Spec.
func (p *Plan) spec() Spec {
	s := Spec{Selectors: p.req.By, Count: p.req.Count, Limit: p.req.Limit, Names: p.req.Names, Descending: p.descending}
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

// print writes the results, the answers of runAll: one table per resource
// (as kubectl get does for several resource types, each in its own order),
// or one merged answer for counts and the other formats (one list, ordered
// across the resources by --sort-by, as kubectl get orders it).
func (p *Plan) print(out, errOut io.Writer, infs []*factory.Informer, results []*Result) error {
	opts := p.req.Print
	opts.ErrOut = errOut
	opts.Namespace = p.req.Namespace
	opts.SingleItem = p.singleObject()
	if len(results) == 1 {
		opts.GroupVersionKind = infs[0].Resource.GVK
		opts.ClusterScoped = !infs[0].Resource.Namespaced
		opts.Columns = p.crdColumns[infs[0].Resource.GVR]
		pr, err := NewPrinter(p.req.Output, opts)
		if err != nil {
			return err
		}
		return pr.Print(out, results[0])
	}
	// whole prints what is not a table of one resource; it words "No
	// resources found" as kubectl does: "in NAMESPACE namespace" when every
	// resource is namespaced.
	opts.ClusterScoped = slices.ContainsFunc(infs, func(inf *factory.Informer) bool { return !inf.Resource.Namespaced })
	whole, err := NewPrinter(p.req.Output, opts)
	if err != nil {
		return err
	}
	switch {
	case p.req.Count && p.req.GroupBy == "":
		total := &Result{Mode: ModeCount}
		for _, r := range results {
			total.Matched += r.Matched
		}
		return whole.Print(out, total)
	case p.req.Count:
		return whole.Print(out, mergeGroups(results, p.req.Limit))
	case whole.HumanReadable():
		printed := 0
		// As kubectl get, names carry their kind when the objects printed
		// are of several kinds.
		kinds := 0
		for _, r := range results {
			if len(r.Items) > 0 {
				kinds++
			}
		}
		for i, r := range results {
			if len(r.Items) == 0 {
				continue
			}
			if printed > 0 {
				_, _ = fmt.Fprintln(out)
			}
			o := opts
			o.GroupVersionKind = infs[i].Resource.GVK
			o.ClusterScoped = !infs[i].Resource.Namespaced
			o.Columns = p.crdColumns[infs[i].Resource.GVR]
			o.ShowKind = opts.ShowKind || kinds > 1
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
			return whole.Print(out, &Result{Mode: ModeObjects})
		}
		return nil
	default:
		merged := &Result{Mode: ModeObjects}
		for _, r := range results {
			merged.Matched += r.Matched
			merged.ColumnNames = r.ColumnNames
		}
		refs := mergedOrder(results, p.req.SortBy != "", p.descending)
		if p.req.SortBy == "" && p.synced != nil && p.synced.positions != nil {
			refs = namedOrder(refs, results, infs, p.synced.positions, p.descending)
		}
		for _, ref := range refs {
			merged.Items = append(merged.Items, results[ref.result].Items[ref.item])
		}
		return whole.Print(out, merged)
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
