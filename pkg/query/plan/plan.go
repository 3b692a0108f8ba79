package plan

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// Plan is a compiled Request: every expression compiled and every flag
// checked, before any contact with the cluster.
type Plan struct {
	req     Request
	env     *indexers.Env
	printer *query.Printer
	// indexes are the --index programs by name.
	indexes map[string]*indexers.Program
	// resourceIndexes are the programs of the config's indexes and of
	// --index RESOURCE:NAME=CEL: resource as written → index name →
	// program.
	resourceIndexes map[string]map[string]*indexers.Program
	// flagResources are the resources (as written) given indexes with
	// --index RESOURCE:NAME=CEL.
	flagResources sets.Set[string]
	where         *indexers.Program
	sortBy        *indexers.Program
	// sortPath is a --sort-by written as kubectl's JSONPath, in place of
	// sortBy.
	sortPath *sortPath
	groupBy  *indexers.Program
	columns  []*indexers.Program
	// keys and aggregates are those of --aggregate (keys from
	// --group-by); orderBy is the name --sort-by gives them.
	keys       []key
	aggregates []aggregate
	orderBy    string
	// descending: the answer is sorted in descending order.
	descending bool
	// stopAtCostLimit: the first evaluation the cost limit stops ends the
	// query with a *CostLimitError (a one-shot answer), rather than being
	// counted in a warning as the failures of single objects are.
	stopAtCostLimit bool
	// watching: the answer is printed again as it changes, and says when
	// it is empty in every output format (query.PrintOptions.SayEmpty).
	watching bool
	// types are the resource arguments without object names; objects[i]
	// are the names given for types[i], nil when none are.
	types   []string
	objects [][]string
	// caches are the caches the plan answers from: those Fill filled,
	// shared by the plans With makes; nil before.
	caches *Caches
}

// Compile checks req and compiles its expressions with env. Errors are
// *query.UsageError; an invalid expression wraps an *indexers.ExprError that
// shows where it is wrong.
func Compile(env *indexers.Env, req Request) (*Plan, error) {
	if req.SyncTimeout <= 0 {
		req.SyncTimeout = 2 * time.Minute
	}
	aggregated := len(req.Aggregates) > 0 || len(req.GroupByKeys) > 0
	if aggregated && len(req.Aggregates) == 0 {
		// Several keys count: --count says nothing more.
		req.Count = false
	}
	if req.GroupBy != "" && !aggregated {
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
	p.flagResources = sets.New[string]()
	for _, res := range slices.Sorted(maps.Keys(req.ResourceFlagIndexes)) {
		if p.resourceIndexes[res] == nil {
			p.resourceIndexes[res] = map[string]*indexers.Program{}
		}
		p.flagResources.Insert(res)
		seen := sets.New[string]()
		for _, ix := range req.ResourceFlagIndexes[res] {
			where := fmt.Sprintf(" of %s", res)
			if !checkName(ix.Name, where) {
				continue
			}
			switch _, every := p.indexes[ix.Name]; {
			case seen.Has(ix.Name):
				errs = append(errs, fmt.Errorf("index %q of %s is defined twice", ix.Name, res))
				continue
			case every:
				flag := req.Names.Of(query.PartIndex)
				errs = append(errs, fmt.Errorf("index %q is defined both for every resource (%s %s=…) and for %s (%s %s:%s=…): keep one", ix.Name, flag, ix.Name, res, flag, res, ix.Name))
				continue
			}
			seen.Insert(ix.Name)
			p.resourceIndexes[res][ix.Name] = compile(ix.Expr, indexers.KindIndex, fmt.Sprintf("index %q%s", ix.Name, where))
		}
	}
	name := req.Names.Of
	p.where = compile(req.Where, indexers.KindPredicate, name(query.PartWhere))
	switch {
	case aggregated:
		errs = append(errs, p.compileAggregates(req, compile)...)
		if req.Count && len(req.Aggregates) > 0 {
			errs = append(errs, fmt.Errorf("%s cannot be combined with %s: count() counts the objects of each group", name(query.PartCount), name(query.PartAggregate)))
		}
	case isJSONPath(req.SortBy):
		// kubectl get's --sort-by, ordering as kubectl does.
		p.descending = req.Reverse
		sp, err := compileSortPath(req.SortBy)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", name(query.PartSortBy), req.SortBy, err))
		}
		p.sortPath = sp
	default:
		sortBy, negated := env.Descending(req.SortBy)
		p.descending = negated != req.Reverse
		p.sortBy = compile(sortBy, indexers.KindValue, name(query.PartSortBy))
		var ee *indexers.ExprError
		if negated && len(errs) > 0 && errors.As(errs[len(errs)-1], &ee) && ee.Expr == sortBy {
			ee.Expr = req.SortBy // shown as typed, at the same columns
		}
	}
	if !aggregated {
		p.groupBy = compile(req.GroupBy, indexers.KindValue, name(query.PartGroupBy))
	}
	seen := sets.New[string]()
	for _, c := range req.Columns {
		if c.Name == "" || seen.Has(c.Name) {
			errs = append(errs, fmt.Errorf("invalid or repeated column name %q in %s NAME=CEL", c.Name, name(query.PartColumns)))
			continue
		}
		seen.Insert(c.Name)
		p.columns = append(p.columns, compile(c.Expr, indexers.KindValue, name(query.PartColumns)+" "+c.Name))
	}
	for _, s := range req.By {
		if !req.Remote && !slices.Contains(p.allIndexNames(), s.Index) {
			errs = append(errs, query.UnknownIndex(s.Index, p.allIndexNames(), req.Names))
		}
	}
	for _, ix := range req.Print.IndexNames {
		if !req.Remote && !slices.Contains(p.allIndexNames(), ix) {
			errs = append(errs, query.UnknownIndex(ix, p.allIndexNames(), req.Names))
		}
	}
	if req.Count && req.SortBy != "" {
		errs = append(errs, fmt.Errorf("%s cannot be combined with %s: groups are ordered by count", name(query.PartSortBy), name(query.PartCount)))
	}
	if req.Count && len(req.Columns) > 0 {
		errs = append(errs, fmt.Errorf("%s cannot be combined with %s", name(query.PartColumns), name(query.PartCount)))
	}
	if req.Limit < 0 {
		errs = append(errs, fmt.Errorf("%s must not be negative, got %d", name(query.PartLimit), req.Limit))
	}
	printer, err := query.NewPrinter(req.Output, req.Print)
	if err != nil {
		errs = append(errs, err)
	} else if req.Count && !printer.HumanReadable() {
		errs = append(errs, fmt.Errorf("%s prints numbers: %s %s cannot be used with it", name(query.PartCount), name(query.PartOutput), req.Output))
	}
	p.printer = printer
	if len(errs) > 0 {
		return nil, &query.UsageError{Err: errors.Join(errs...)}
	}
	return p, nil
}

// allIndexNames returns the built-in, --index and config index names, sorted.
func (p *Plan) allIndexNames() []string {
	set := sets.New(cache.NamespaceIndex)
	for n := range p.indexes {
		set.Insert(n)
	}
	for _, ixs := range p.resourceIndexes {
		for n := range ixs {
			set.Insert(n)
		}
	}
	return sets.List(set)
}

// QueryPrograms are the programs evaluated on the queried objects, besides
// their indexes.
func (p *Plan) QueryPrograms() []*indexers.Program {
	progs := []*indexers.Program{p.where, p.sortBy, p.groupBy}
	progs = append(progs, p.columns...)
	for _, k := range p.keys {
		progs = append(progs, k.prog)
	}
	for _, a := range p.aggregates {
		progs = append(progs, a.prog)
	}
	return slices.DeleteFunc(progs, func(prog *indexers.Program) bool { return prog == nil })
}

// programs are every program of the plan.
func (p *Plan) programs() []*indexers.Program {
	progs := p.QueryPrograms()
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
// object.metadata, object.apiVersion and object.kind (and --sort-by is
// not a kubectl JSONPath).
func (p *Plan) metadataOnly(indexes map[string]*indexers.Program) bool {
	if p.req.WholeObjects || p.sortPath != nil {
		return false
	}
	switch p.req.Output {
	case "", "name", "wide":
	default:
		if !p.aggregated() { // rows, not objects, are printed
			return false
		}
	}
	for _, prog := range p.QueryPrograms() {
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
	if p.req.WholeObjects || p.sortPath != nil {
		// A kubectl JSONPath --sort-by reads the object's JSON form.
		return nil
	}
	switch p.req.Output {
	case "", "name", "wide":
	default:
		if !p.aggregated() { // rows, not objects, are printed
			return nil
		}
	}
	out := &jsonval.Paths{}
	for _, prog := range append(p.QueryPrograms(), mapValues(indexes)...) {
		// Into the elements of the lists it iterates over: an aggregate
		// of each container's restarts keeps one number per container.
		r, _ := prog.Reads()
		if !out.Union(r.Object) {
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

// ReadsOtherResources reports whether any program calls get() or byIndex().
func (p *Plan) ReadsOtherResources() bool {
	for _, prog := range p.programs() {
		if prog.ReadsOthers() {
			return true
		}
	}
	return false
}

// Bind makes every program of p read get() and byIndex() from l. It runs
// before index functions are made from the programs, and before Spec.
func (p *Plan) Bind(l indexers.Lookup) {
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

// ShowIndexes sets the indexes whose values the plan's tables show (see
// query.PrintOptions.IndexNames), unchecked: a query server, which
// computes those it lacks itself, compiles its plan without them.
func (p *Plan) ShowIndexes(names []string) {
	p.req.Print.IndexNames = slices.Clone(names)
}

// BindCluster makes name the value of the variable cluster in every
// program of p, index programs included; programs of an Env without the
// variable never read it. Fill and From bind their connection's cluster.
func (p *Plan) BindCluster(name string) {
	bind := func(prog *indexers.Program) *indexers.Program { return prog.WithCluster(name) }
	p.eachQueryProgram(bind)
	for n, prog := range p.indexes {
		p.indexes[n] = bind(prog)
	}
	for _, ixs := range p.resourceIndexes {
		for n, prog := range ixs {
			ixs[n] = bind(prog)
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
	for i := range p.keys {
		if p.keys[i].prog != nil {
			p.keys[i].prog = f(p.keys[i].prog)
		}
	}
	for i := range p.aggregates {
		if p.aggregates[i].prog != nil {
			p.aggregates[i].prog = f(p.aggregates[i].prog)
		}
	}
}

// Spec returns the engine's Spec of the compiled plan: its predicate, sort
// key, grouping and columns as the programs are bound now (see Bind and
// ChargeTo).
func (p *Plan) Spec() query.Spec {
	s := query.Spec{Selectors: p.req.By, Count: p.req.Count, Limit: p.req.Limit, Names: p.req.Names, Descending: p.descending}
	if p.where != nil {
		s.Where = p.where.Match
		if p.stopAtCostLimit {
			match := s.Where
			s.Where = func(obj any) (bool, error) {
				ok, err := match(obj)
				return ok, costLimitStop(p.where, obj, err)
			}
		}
	}
	if p.sortBy != nil {
		s.SortBy = p.valueFunc(p.sortBy)
	}
	if p.sortPath != nil {
		s.SortBy, s.KubectlOrder = p.sortPath.Value, true
	}
	if p.groupBy != nil {
		s.GroupBy = p.valueFunc(p.groupBy)
	}
	for i, c := range p.req.Columns {
		s.Columns = append(s.Columns, query.Column{Name: c.Name, Value: p.valueFunc(p.columns[i])})
	}
	if p.aggregated() {
		p.aggregateSpec(&s)
	}
	return s
}

// valueFunc is prog's Value, which with stopAtCostLimit stops the query at
// the first evaluation the cost limit stopped.
func (p *Plan) valueFunc(prog *indexers.Program) query.ValueFunc {
	if !p.stopAtCostLimit {
		return prog.Value
	}
	return func(obj any) (any, error) {
		v, err := prog.Value(obj)
		return v, costLimitStop(prog, obj, err)
	}
}

// CostLimitError ends a one-shot query at the first evaluation that the
// cost limit stopped: the expression would most likely be stopped on
// every object, each after as much work.
type CostLimitError struct {
	// Context names the expression (--where, --columns NAME) and Expr is
	// its text.
	Context, Expr string
	// Object is the namespace/name of the object it was evaluated on.
	Object string
	Err    error
}

func (e *CostLimitError) Error() string {
	msg := e.Err.Error()
	if !strings.HasPrefix(msg, e.Context+":") {
		msg = e.Context + ": " + msg
	}
	return fmt.Sprintf("%s\n | %s\nthe query stopped at %s, the first object it was stopped on, rather than evaluate it on every object", msg, e.Expr, e.Object)
}

func (e *CostLimitError) Unwrap() error { return e.Err }

// costLimitStop returns err, as a *CostLimitError when the cost limit
// stopped prog's evaluation on obj.
func costLimitStop(prog *indexers.Program, obj any, err error) error {
	if err != nil && errors.Is(err, indexers.ErrCostLimitExceeded) {
		return &CostLimitError{Context: prog.Context(), Expr: prog.Expr(), Object: indexers.ObjectName(obj), Err: err}
	}
	return err
}

// ChargeTo charges every evaluation of p's request programs to b.
func (p *Plan) ChargeTo(b *indexers.Budget) {
	p.eachQueryProgram(func(prog *indexers.Program) *indexers.Program { return prog.WithBudget(b) })
	if p.sortPath != nil {
		p.sortPath = &sortPath{field: p.sortPath.field, budget: b}
	}
}
