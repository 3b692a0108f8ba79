package plan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// Execute resolves the resources, fills the caches, answers the query and
// prints the answer on out; warnings go to errOut. An evaluation that the
// cost limit stops ends it with a *CostLimitError, printing nothing.
func (p *Plan) Execute(ctx context.Context, conn Conn, out, errOut io.Writer) error {
	p.stopAtCostLimit = true
	c, err := p.Fill(ctx, conn, errOut, FillOptions{})
	if err != nil {
		return err
	}
	return p.answer(ctx, out, errOut, c.queried)
}

// answer runs the query on the synced caches and prints it. When ctx ends
// first, the evaluation under way stops (within 100 iterations of a
// comprehension, or within the per-evaluation cost limit; see
// indexers.NewContextBudget) and answer returns an error, printing nothing.
func (p *Plan) answer(ctx context.Context, out, errOut io.Writer, queried []*factory.Informer) error {
	results, err := p.results(ctx, queried)
	if err != nil {
		return err
	}
	for _, w := range WarningLines(queried, results) {
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
		return p.Print(out, errOut, p.caches, queried, results)
	}
	// As kubectl get prints named objects some of which do not exist: the
	// others, or, when none does, no table and no "No resources found"; a
	// single name implies a single object, printed alone or not at all.
	if (!p.printer.HumanReadable() || found > 0) && !p.singleObject() {
		if err := p.Print(out, errOut, p.caches, queried, results); err != nil {
			return err
		}
	}
	return &notFound
}

// namesOf returns the names given for the objects of res, if any were.
func (c *Caches) namesOf(res factory.Resource) ([]string, bool) {
	if c == nil {
		return nil, false
	}
	names, ok := c.named[res.GVR]
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
func (p *Plan) results(ctx context.Context, queried []*factory.Informer) ([]*query.Result, error) {
	spec := p.Spec()
	if ctx.Done() != nil {
		// The programs of this answer stop with ctx; p's are not changed.
		bound := *p
		bound.columns = slices.Clone(p.columns)
		bound.keys, bound.aggregates = slices.Clone(p.keys), slices.Clone(p.aggregates)
		b := indexers.NewContextBudget(ctx)
		bound.ChargeTo(b)
		spec = bound.Spec()
		spec.Stop, spec.Check = indexers.IsBudgetStop, b.Err
	}
	if p.stopAtCostLimit {
		stop := spec.Stop
		spec.Stop = func(err error) bool {
			return errors.As(err, new(*CostLimitError)) || stop != nil && stop(err)
		}
	}
	idxs := make([]cache.Indexer, len(queried))
	specs := make([]query.Spec, len(queried))
	for i, inf := range queried {
		idxs[i], specs[i] = inf.Informer.GetIndexer(), spec
		if names, ok := p.caches.namesOf(inf.Resource); ok {
			specs[i].Objects = names
			if inf.Resource.Namespaced {
				specs[i].Namespace = p.req.Namespace
			}
		}
	}
	results, err := query.RunAll(idxs, specs)
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

// warnMixed warns on errOut of the aggregates of res, the rows printed,
// that mix quantities and plain numbers (see query.Result.MixedWarnings).
func warnMixed(errOut io.Writer, res *query.Result) {
	if errOut == nil {
		return
	}
	for _, w := range res.MixedWarnings() {
		_, _ = fmt.Fprintf(errOut, "warning: %s\n", w)
	}
}

// WarningLines are the lines that report the warnings of results, the
// answers for queried: each names its resource when there are several.
func WarningLines(queried []*factory.Informer, results []*query.Result) []string {
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
	if p.caches == nil {
		return errors.New("the caches of this plan have not been filled: answer with Execute first")
	}
	return p.answer(ctx, out, errOut, p.caches.queried)
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
	if err != nil || p.caches == nil {
		return np, err
	}
	switch {
	case !p.req.WholeObjects:
		return nil, errors.New("the caches hold only what the first query read: make the first plan with WholeObjects")
	case !slices.Equal(req.Resources, p.req.Resources) || req.Namespace != p.req.Namespace ||
		req.LabelSelector != p.req.LabelSelector || req.FieldSelector != p.req.FieldSelector || !req.WholeObjects:
		return nil, &query.UsageError{Err: errors.New("the resources, namespace and selectors of filled caches cannot change: start a new query")}
	}
	return np.From(p.caches)
}

// From returns a copy of p that answers from s (see Answer), caches of the
// resources p queries filled with whole objects: its expressions are
// checked against the queried resources' schemas and read get() and
// byIndex() from the resources s holds (see Caches.reach). p is not
// changed.
func (p *Plan) From(s *Caches) (*Plan, error) {
	np := *p
	np.columns = slices.Clone(p.columns)
	np.keys, np.aggregates = slices.Clone(p.keys), slices.Clone(p.aggregates)
	np.indexes = maps.Clone(p.indexes)
	np.resourceIndexes = map[string]map[string]*indexers.Program{}
	for res, ixs := range p.resourceIndexes {
		np.resourceIndexes[res] = maps.Clone(ixs)
	}
	req := np.req
	lookup, errs := s.reach(np.programs(), req.Names)
	for _, inf := range s.queried {
		have := inf.Informer.GetIndexer().GetIndexers()
		for _, sel := range req.By {
			if _, ok := have[sel.Index]; !ok {
				errs = append(errs, fmt.Errorf("for %s: %w", inf.Resource, query.UnknownIndex(sel.Index, slices.Sorted(maps.Keys(have)), req.Names)))
			}
		}
	}
	if len(errs) > 0 {
		return nil, &query.UsageError{Err: errors.Join(errs...)}
	}
	if np.ReadsOtherResources() {
		np.Bind(lookup)
	}
	np.BindCluster(s.conn.Cluster)
	set := schemaSetOf(s.conn.Resolver, s.queried)
	for _, inf := range s.queried {
		if err := np.checkSchema(set, inf.Resource, np.QueryPrograms()); err != nil {
			return nil, err
		}
	}
	np.caches = s
	return &np, nil
}

// WithIndex returns the plan With makes with one more index for every
// queried resource, name=expr, and the index's program, checked against the
// queried resources' schemas. Registering it on the caches is the caller's
// work.
func (p *Plan) WithIndex(name, expr string) (*Plan, *indexers.Program, error) {
	np, err := p.With(func(r *Request) { r.Indexes = append(r.Indexes, NamedExpr{Name: name, Expr: expr}) })
	if err != nil {
		return nil, nil, err
	}
	prog := np.indexes[name]
	if c := np.caches; c != nil {
		set := schemaSetOf(c.conn.Resolver, c.queried)
		for _, inf := range c.queried {
			if err := np.checkSchema(set, inf.Resource, []*indexers.Program{prog}); err != nil {
				return nil, nil, err
			}
		}
	}
	return np, prog, nil
}

// Request returns the request p was compiled from.
func (p *Plan) Request() Request { return p.req }

// Caches returns the caches p answers from; nil before they are filled.
func (p *Plan) Caches() *Caches { return p.caches }

// ExecuteWatch answers like Execute, then keeps the caches following the
// cluster and prints the answer again whenever an event changed it: after
// a burst of events has been quiet for debounce (or has lasted BurstLimit
// debounces), once; only when the
// printed text differs from the last one (so --count and --group-by print
// only new numbers). A new answer of several lines is set apart from the
// previous one by an empty line, and so is an answer that became empty,
// which writes "No resources found" on errOut in every output format (a
// table says it as Execute does; -o name, jsonpath and custom-columns
// would otherwise print nothing, or only a header, and -o json and yaml
// an empty List). It returns nil when ctx ends.
func (p *Plan) ExecuteWatch(ctx context.Context, conn Conn, out, errOut io.Writer, debounce time.Duration) error {
	p.watching = true
	c, err := p.Fill(ctx, conn, errOut, FillOptions{Lasting: true})
	if err != nil {
		return err
	}
	queried := c.queried
	render := func(warnings io.Writer) (text, said string, err error) {
		results, err := p.results(ctx, queried)
		if err != nil {
			return "", "", err
		}
		for _, w := range WarningLines(queried, results) {
			_, _ = fmt.Fprintln(warnings, w)
		}
		var b, e bytes.Buffer
		err = p.Print(&b, &e, p.caches, queried, results)
		return b.String(), e.String(), err
	}
	return watchAnswers(ctx, c.factory.Informers(), c.factory, render, out, errOut, debounce)
}

// Burst tells when a burst of events is over: once no event has come for
// its debounce, or at the latest BurstLimit debounces after the burst's
// first event, so that events that never pause for a debounce (events()
// in a busy cluster) still get an answer. The zero Burst is not over.
type Burst struct {
	debounce time.Duration
	first    time.Time
	over     <-chan time.Time
}

// BurstLimit is how many debounces a burst lasts at most.
const BurstLimit = 10

// NewBurst returns a Burst that is over once events paused for debounce.
func NewBurst(debounce time.Duration) *Burst { return &Burst{debounce: debounce} }

// Event counts an event in the burst, starting one if none is.
func (b *Burst) Event() {
	now := time.Now()
	if b.over == nil {
		b.first = now
	}
	wait := b.debounce
	if rest := b.first.Add(BurstLimit * b.debounce).Sub(now); rest < wait {
		wait = max(rest, 0)
	}
	b.over = time.After(wait)
}

// Over receives when the burst is over; nil (never ready) when there is
// none.
func (b *Burst) Over() <-chan time.Time { return b.over }

// Done ends the burst, once it is over and answered.
func (b *Burst) Done() { b.over = nil }

// Changes registers on informers a handler that signals each event they
// receive without blocking: the channel holds one signal at most, so that
// a burst of events reads as one. remove takes the handlers away. A
// handler added to a running informer is first handed what it holds, as
// adds.
func Changes(informers []*factory.Informer) (changed <-chan struct{}, remove func(), err error) {
	ch := make(chan struct{}, 1)
	signal := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { signal() },
		UpdateFunc: func(any, any) { signal() },
		DeleteFunc: func(any) { signal() },
	}
	var removes []func()
	remove = func() {
		for _, r := range removes {
			r()
		}
	}
	for _, inf := range informers {
		reg, err := inf.Informer.AddEventHandler(handler)
		if err != nil {
			remove()
			return nil, nil, err
		}
		removes = append(removes, func() { _ = inf.Informer.RemoveEventHandler(reg) })
	}
	return ch, remove, nil
}

// watchAnswers prints the answer render gives (its text, and what printing
// it said on errOut, such as "No resources found"; render writes the
// warnings of evaluations to the writer it is given) and prints it again
// each time an event of informers changes it, a burst of events once,
// until ctx ends: ExecuteWatch's loop. A watch that RBAC denies while
// allowing the list (see factory.Factory.WatchDenied) ends it with that
// error, as kubectl get -w ends; f is the factory whose watches are
// checked, nil for none.
func watchAnswers(ctx context.Context, informers []*factory.Informer, f *factory.Factory, render func(warnings io.Writer) (text, said string, err error), out, errOut io.Writer, debounce time.Duration) error {
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
	changed, remove, err := Changes(informers)
	if err != nil {
		return err
	}
	defer remove()
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
	burst := NewBurst(debounce)
	var deniedCh <-chan struct{}
	if f != nil {
		deniedCh = f.WatchDenied()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-deniedCh:
			return f.WatchDeniedError()
		case <-changed:
			burst.Event()
		case <-burst.Over():
			burst.Done()
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
			// A new answer of several lines (a table, groups), or none
			// (which the printer said), is set apart from the previous one;
			// a bare count follows on the next line.
			if text == "" || said != "" || strings.Count(text, "\n") > 1 {
				if _, err := fmt.Fprintln(out); err != nil {
					return err
				}
			}
			if _, err := io.WriteString(out, text); err != nil {
				return err
			}
			// "No resources found", after what printed the empty answer
			// (an empty List, the header of custom columns).
			if _, err := io.WriteString(errOut, said); err != nil {
				return err
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
	c, err := p.Fill(ctx, conn, errOut, FillOptions{})
	if err != nil {
		return nil, err
	}
	var out []IndexInfo
	for _, inf := range c.queried {
		idx := inf.Informer.GetIndexer()
		exprs := c.IndexExprs(inf.Resource)
		for _, name := range slices.Sorted(maps.Keys(idx.GetIndexers())) {
			out = append(out, IndexInfo{Resource: inf.Resource.String(), Index: name, Expr: exprs[name], Values: len(idx.ListIndexFuncValues(name))})
		}
	}
	return out, nil
}

// Print writes results, the answers of query.RunAll over infs (of the caches
// c, which may be nil): one table per resource
// (as kubectl get does for several resource types, each in its own order),
// or one merged answer for counts and the other formats (one list, ordered
// across the resources by --sort-by, as kubectl get orders it).
func (p *Plan) Print(out, errOut io.Writer, c *Caches, infs []*factory.Informer, results []*query.Result) error {
	opts := p.req.Print
	opts.ErrOut = errOut
	opts.SayEmpty = p.watching
	opts.Namespace = p.req.Namespace
	opts.SingleItem = p.singleObject()
	if len(results) == 1 {
		opts.GroupVersionKind = infs[0].Resource.GVK
		opts.ClusterScoped = !infs[0].Resource.Namespaced
		opts.Columns = c.printerColumns(infs[0].Resource.GVR)
		opts.Server = c.serverTable(p, infs[0].Resource, results[0], errOut)
		pr, err := query.NewPrinter(p.req.Output, opts)
		if err != nil {
			return err
		}
		if p.aggregated() {
			warnMixed(errOut, results[0])
		}
		return pr.Print(out, p.serverOrder(c, infs[0].Resource, results[0], opts.Server))
	}
	// whole prints what is not a table of one resource; it words "No
	// resources found" as kubectl does: "in NAMESPACE namespace" when every
	// resource is namespaced.
	opts.ClusterScoped = slices.ContainsFunc(infs, func(inf *factory.Informer) bool { return !inf.Resource.Namespaced })
	whole, err := query.NewPrinter(p.req.Output, opts)
	if err != nil {
		return err
	}
	switch {
	case p.aggregated():
		merged, err := query.MergeRows(results, p.orderBy, p.descending, p.req.Limit)
		if err != nil {
			return err
		}
		warnMixed(errOut, merged)
		return whole.Print(out, merged)
	case p.req.Count && p.req.GroupBy == "":
		total := &query.Result{Mode: query.ModeCount}
		for _, r := range results {
			total.Matched += r.Matched
		}
		return whole.Print(out, total)
	case p.req.Count:
		return whole.Print(out, query.MergeGroups(results, p.req.Limit))
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
			o.Columns = c.printerColumns(infs[i].Resource.GVR)
			o.Server = c.serverTable(p, infs[i].Resource, r, errOut)
			r = p.serverOrder(c, infs[i].Resource, r, o.Server)
			o.ShowKind = opts.ShowKind || kinds > 1
			o.ErrOut = io.Discard
			pr, err := query.NewPrinter(p.req.Output, o)
			if err != nil {
				return err
			}
			if err := pr.Print(out, r); err != nil {
				return err
			}
			printed++
		}
		if printed == 0 {
			return whole.Print(out, &query.Result{Mode: query.ModeObjects})
		}
		return nil
	default:
		merged := &query.Result{Mode: query.ModeObjects}
		for _, r := range results {
			merged.Matched += r.Matched
			merged.ColumnNames = r.ColumnNames
		}
		refs := query.MergedOrder(results, p.req.SortBy != "", p.descending)
		if p.req.SortBy == "" && c != nil && c.positions != nil {
			refs = namedOrder(refs, results, infs, c.positions, p.descending)
		}
		for _, ref := range refs {
			merged.Items = append(merged.Items, results[ref.Result].Items[ref.Item])
		}
		return whole.Print(out, merged)
	}
}
