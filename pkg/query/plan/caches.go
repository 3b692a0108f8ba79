package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// reach returns the lookup that progs, compiled after the caches filled,
// read get() and byIndex() from: c.lookup, and besides, under the name an
// expression writes ("nodes", "no", "node"), each other resource the caches
// hold, whether the first query read it with get() or queried it. The
// lookup of a queried resource has its scope: a namespaced one is read in
// the query's namespace only. A resource that is not cached, one cached
// only in part (queried with a label or field selector), and a byIndex()
// of an index its cache does not have are errors, and so is a get() that
// passes a namespace for a cluster-scoped resource.
func (c *Caches) reach(progs []*indexers.Program, names query.Names) (*factory.Lookup, []error) {
	l := c.lookup
	if l == nil {
		l = factory.NewLookup()
	}
	var errs []error
	failed := sets.New[string]()
	for _, prog := range progs {
		// The resources relationship functions read that are not cached,
		// by the calls that read them: owner() reads several kinds, named
		// in one message.
		var uncached map[string][]string
		var held []string
		for _, ref := range prog.References() {
			if failed.Has(ref.Resource) {
				continue
			}
			infs := l.Informers(ref.Resource)
			if infs == nil {
				var err error
				if infs, held, err = c.cached(ref); err != nil || infs == nil {
					failed.Insert(ref.Resource)
					switch {
					case err != nil:
						errs = append(errs, fmt.Errorf("%s: %w", prog.Context(), err))
					case ref.ByRelations():
						if uncached == nil {
							uncached = map[string][]string{}
						}
						uncached[ref.ReadBy()] = append(uncached[ref.ReadBy()], ref.Resource)
					default:
						errs = append(errs, fmt.Errorf("%s: %q is not cached here (the caches hold %s): start a new query that names it, or whose flags read it with get()", prog.Context(), ref.Resource, strings.Join(held, ", ")))
					}
					continue
				}
				l = l.With(ref.Resource, infs...)
			}
			if !infs[0].Resource.Namespaced {
				if err := prog.CheckClusterScoped(ref.Resource); err != nil {
					errs = append(errs, err)
				}
			}
			for _, ix := range ref.Indexes {
				have := infs[0].Informer.GetIndexer().GetIndexers()
				if _, ok := have[ix]; ok || ix == cache.NamespaceIndex {
					continue
				}
				if indexers.IsBuiltinIndex(ix) {
					// An index the user never wrote: name the calls that read it.
					calls := strings.Join(ref.CallsOf(ix), " and ")
					errs = append(errs, fmt.Errorf("%s: %s reads %s through an index its cache here does not have (%s was cached for get() alone): start a new query that names %q, or whose flags call %s",
						prog.Context(), calls, infs[0].Resource, ref.Resource, ref.Resource, calls))
					continue
				}
				errs = append(errs, fmt.Errorf("%s: byIndex(%q, %q, …): for %s: %w", prog.Context(), ref.Resource, ix, infs[0].Resource, query.UnknownIndex(ix, slices.Sorted(maps.Keys(have)), names)))
			}
		}
		for _, calls := range slices.Sorted(maps.Keys(uncached)) {
			res := uncached[calls]
			quoted := make([]string, len(res))
			for i, r := range res {
				quoted[i] = strconv.Quote(r)
			}
			verb, or := "is", ", or that names "+quoted[0]
			if len(res) > 1 {
				verb, or = "are", ""
			}
			errs = append(errs, fmt.Errorf("%s: %s reads %s, which %s not cached here (the caches hold %s): start a new query whose flags call %s%s",
				prog.Context(), calls, strings.Join(quoted, ", "), verb, strings.Join(held, ", "), calls, or))
		}
	}
	return l, errs
}

// cached returns the informers that hold the resource an expression names
// with get() or byIndex(): those the lookup reads it through under another
// name, or the queried resource's. When none holds it, it returns no
// informers and the resources the caches hold.
func (c *Caches) cached(ref indexers.Reference) ([]*factory.Informer, []string, error) {
	name := ref.Resource
	res, err := c.conn.Resolver.ResolveOne(name)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", ref.ReadBy(), err)
	}
	if c.lookup != nil {
		if infs := c.lookup.InformersOf(res.GVR); infs != nil {
			return infs, nil, nil
		}
	}
	var held []string
	for _, inf := range c.queried {
		held = append(held, inf.Resource.String())
		if inf.Resource.GVR != res.GVR {
			continue
		}
		if sel := selectors(inf.Scope); sel != "" {
			if ref.ByRelations() {
				return nil, nil, fmt.Errorf("%s reads %q, which is cached only in part here (%s): it would miss the rest; start a new query without the selector, or one whose flags call %s", ref.ReadBy(), name, sel, ref.ReadBy())
			}
			return nil, nil, fmt.Errorf("%q is cached only in part here (%s): get() and byIndex() would miss the rest; start a new query without the selector, or one whose flags read %q with get()", name, sel, name)
		}
		return []*factory.Informer{inf}, nil, nil
	}
	if c.lookup != nil {
		for _, r := range c.lookup.Resources() {
			if !slices.Contains(held, r.String()) {
				held = append(held, r.String())
			}
		}
	}
	return nil, held, nil
}

// selectors describes the label and field selectors of a scope, "" when
// it has none.
func selectors(sc factory.Scope) string {
	var out []string
	if sc.LabelSelector != "" {
		out = append(out, "label selector "+sc.LabelSelector)
	}
	if sc.FieldSelector != "" {
		out = append(out, "field selector "+sc.FieldSelector)
	}
	return strings.Join(out, ", ")
}

// Caches are the filled caches a plan answers from: the informers of the
// queried resources, with their indexes, and of the resources that get()
// and byIndex() read. They follow the cluster until the context they were
// filled with ends. [Plan.Fill] makes them; a plan made by [Plan.With]
// shares them.
type Caches struct {
	conn    Conn
	factory *factory.Factory
	queried []*factory.Informer
	// indexes are the index programs of each queried resource, by name.
	indexes map[schema.GroupVersionResource]map[string]*indexers.Program
	// named are the object names given for each queried resource that
	// names any; positions the place of each among the objects named
	// (see namedOrder).
	named     map[schema.GroupVersionResource][]string
	positions map[schema.GroupVersionResource]map[string]int
	// lookup reads, under the names the first query's expressions write,
	// the resources they read with get() and byIndex().
	lookup *factory.Lookup
	// crdColumns are the printer columns of the custom resources queried;
	// tables of the others have their kind's columns.
	// A resource whose CRD was read without columns has an empty list;
	// one whose CRD could not be read has none (its tables are the
	// server's, see serverTable).
	crdColumns map[schema.GroupVersionResource][]query.PrinterColumn
	// server are the API server's tables of the other resources.
	server serverTables
	// stats counts the failures of the index functions.
	stats *indexers.Stats
}

// NewCaches returns the caches of informers filled by other means than
// [Plan.Fill]: queried are the queried resources' informers, lookup (which
// may be nil) reads the resources get() and byIndex() read. [Plan.From]
// answers from them.
func NewCaches(conn Conn, queried []*factory.Informer, lookup *factory.Lookup) *Caches {
	if lookup == nil {
		lookup = factory.NewLookup()
	}
	return &Caches{conn: conn, queried: queried, lookup: lookup, stats: &indexers.Stats{}}
}

// Queried returns the informers of the queried resources, in the order of
// the request's resources.
func (c *Caches) Queried() []*factory.Informer { return c.queried }

// Related returns the informers that get(), byIndex() and the relationship
// functions read (owner(), children(), events() and the like): a change in
// them may change the answer for queried objects that did not change. A
// queried informer is among them when the expressions read its resource
// that way too.
func (c *Caches) Related() []*factory.Informer {
	if c.lookup == nil {
		return nil
	}
	return c.lookup.All()
}

// Factory returns the factory that runs the informers; nil for caches made
// by NewCaches.
func (c *Caches) Factory() *factory.Factory { return c.factory }

// IndexExprs returns the CEL expression of each index of the queried
// resource res that the request defined, by index name.
func (c *Caches) IndexExprs(res factory.Resource) map[string]string {
	out := map[string]string{}
	for name, prog := range c.indexes[res.GVR] {
		out[name] = prog.Expr()
	}
	return out
}

// IndexFailures summarises the failures of the index functions so far, one
// line per index that failed on some object.
func (c *Caches) IndexFailures() []string { return c.stats.Summary() }

// FillOptions say how [Plan.Fill] fills the caches for what reads them.
type FillOptions struct {
	// ResyncPeriod is the informers' resync period; 0: none.
	ResyncPeriod time.Duration
	// Events: the caches feed a stream of events (watch) rather than
	// answers. The queried informers hold whole objects whatever the
	// expressions read, no printer columns are read, and the programs of
	// --where and --columns stop, as the index functions do, when the
	// context of Fill ends.
	Events bool
	// Lasting: the caches outlive one answer. Once they are filled, the
	// memory the initial lists were decoded in is given back to the
	// operating system at once (see releaseMemory).
	Lasting bool
	// Started, when not nil, is called once the informers have started and
	// before Fill waits for their caches: handlers added then receive every
	// object from the first.
	Started func(queried []*factory.Informer) error
	// Relations: the queried informers get the built-in indexes that
	// children(), selected() and events() read (indexers.ControllerIndex,
	// indexers.LabelIndex, and indexers.InvolvedObjectIndex for core/v1
	// events), so that the later queries of lasting caches may call them.
	Relations bool
}

// Fill resolves the resources, creates their informers with their indexes
// (and those of the resources get() and byIndex() read), starts them and
// waits until every cache has synced: resolve, check the expressions
// against the schemas, request the informers, add the lookups, start,
// wait. Every way of answering from caches (a query, a watch of events,
// the interactive session, a query server) fills them with Fill.
//
// Everything it asks the server, from resolving the resources to the last
// initial list, is bounded by one deadline: Request.SyncTimeout after it
// starts. The informers themselves run until ctx ends. A resource the
// server does not have, and any mistake the server's answers reveal (an
// unknown index of a resource, an expression that does not fit a schema),
// is a *query.UsageError.
func (p *Plan) Fill(ctx context.Context, conn Conn, errOut io.Writer, opts FillOptions) (*Caches, error) {
	syncCtx, release := conn.bound(ctx, p.req.SyncTimeout)
	defer release()
	resources, named, err := p.resolveQueried(conn.Resolver)
	if err != nil {
		if factory.IsUnknownResource(err) {
			return nil, &query.UsageError{Err: err}
		}
		return nil, err
	}
	// Programs are bound to the lookup before any index function is made
	// from them; the lookup is filled before the informers start. Index
	// functions stop evaluating when ctx ends, as the informers do.
	lookup := factory.NewLookup()
	if p.ReadsOtherResources() {
		p.Bind(lookup)
	}
	p.BindCluster(conn.Cluster)
	if err := p.checkFlagResources(conn.Resolver, resources); err != nil {
		return nil, err
	}
	if ctx.Done() != nil {
		b := indexers.NewContextBudget(ctx)
		p.indexesStopWith(b)
		if opts.Events {
			// An evaluation under way when ctx ends stops, so that a watch
			// ends at once; it counts as no failure.
			p.ChargeTo(b)
		}
	}
	configIndexes := p.resolveConfig(conn.Resolver, errOut)
	f, err := factory.New(conn.Config, factory.Config{KeepManagedFields: p.req.Print.ShowManagedFields, KubectlFlags: conn.KubectlFlags, ResyncPeriod: opts.ResyncPeriod})
	if err != nil {
		return nil, err
	}
	c := &Caches{conn: conn, factory: f, named: named, lookup: lookup, stats: &indexers.Stats{},
		indexes: map[schema.GroupVersionResource]map[string]*indexers.Program{}}
	scope := factory.Scope{Namespace: p.req.Namespace, LabelSelector: p.req.LabelSelector, FieldSelector: p.req.FieldSelector}
	set := newSchemaSet(conn.Resolver, resources)
	for _, res := range resources {
		ixs := p.queriedIndexes(configIndexes[res.GVR])
		if opts.Relations {
			p.addRelationIndexes(res, ixs)
		}
		for _, s := range p.req.By {
			if _, ok := ixs[s.Index]; !ok && s.Index != cache.NamespaceIndex {
				return nil, &query.UsageError{Err: fmt.Errorf("for %s: %w", res, query.UnknownIndex(s.Index, append(slices.Sorted(maps.Keys(ixs)), cache.NamespaceIndex), p.req.Names))}
			}
		}
		if err := p.checkSchema(set, res, append(p.QueryPrograms(), mapValues(ixs)...)); err != nil {
			return nil, p.everyIndexHint(conn.Resolver, res, resources, ixs, err)
		}
		var needs factory.Needs
		if opts.Events {
			needs = factory.Needs{Mode: factory.ModeFull, Indexers: indexers.IndexFuncs(ixs, c.stats)}
		} else {
			columns, ok := p.printerColumns(syncCtx, conn, res)
			if ok {
				if c.crdColumns == nil {
					c.crdColumns = map[schema.GroupVersionResource][]query.PrinterColumn{}
				}
				c.crdColumns[res.GVR] = columns
			}
			needs = p.needs(res, ixs, columns, c.stats)
		}
		inf, err := f.Request(res, namedScope(scope, named[res.GVR]), needs)
		if err != nil {
			return nil, err
		}
		c.queried = append(c.queried, inf)
		c.indexes[res.GVR] = ixs
	}
	if err := p.lookups(f, conn.Resolver, lookup, c.stats, c.queried, configIndexes); err != nil {
		return nil, err
	}
	if err := f.Start(ctx); err != nil {
		return nil, err
	}
	if opts.Started != nil {
		if err := opts.Started(c.queried); err != nil {
			return nil, err
		}
	}
	if err := f.WaitForSync(syncCtx, p.req.SyncTimeout, true, p.req.Progress); err != nil {
		p.explainReads(err, conn.Resolver, c.queried)
		return nil, err
	}
	if !opts.Events {
		for _, line := range c.stats.Summary() {
			_, _ = fmt.Fprintf(errOut, "warning: %s\n", line)
		}
	}
	c.positions = p.positions(conn.Resolver, named)
	p.caches = c
	if opts.Lasting {
		releaseMemory()
	}
	return c, nil
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
				return nil, nil, &query.UsageError{Err: errors.New("a resource cannot be retrieved by name across all namespaces")}
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

// resolveConfig maps the resource names of the config's indexes, and of
// --index RESOURCE:NAME=CEL, to resources; those of the command line are
// taken last, so that they win. A name of the config the server does not
// know (a CRD not installed here) is reported and skipped; those of the
// command line were checked by checkFlagResources.
func (p *Plan) resolveConfig(r *factory.Resolver, errOut io.Writer) map[schema.GroupVersionResource]map[string]*indexers.Program {
	out := map[schema.GroupVersionResource]map[string]*indexers.Program{}
	names := slices.Sorted(maps.Keys(p.resourceIndexes))
	slices.SortStableFunc(names, func(a, b string) int {
		switch fa, fb := p.flagResources.Has(a), p.flagResources.Has(b); {
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
			if !p.flagResources.Has(name) {
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
	read := sets.New[schema.GroupVersionResource]()
	for _, res := range resources {
		read.Insert(res.GVR)
	}
	for _, prog := range p.programs() {
		for _, ref := range prog.References() {
			if len(ref.Indexes) == 0 {
				continue
			}
			if res, err := r.ResolveOne(ref.Resource); err == nil {
				read.Insert(res.GVR)
			}
		}
	}
	var errs []error
	for _, name := range sets.List(p.flagResources) {
		flag := fmt.Sprintf("%s %s:%s=…", p.req.Names.Of(query.PartIndex), name, strings.Join(sets.List(p.flagIndexNames(name)), ","))
		res, err := r.ResolveOne(name)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", flag, err))
		case !read.Has(res.GVR):
			errs = append(errs, fmt.Errorf("%s: %s is neither queried nor read by byIndex(): query it, or leave the index out", flag, res))
		}
	}
	if len(errs) > 0 {
		return &query.UsageError{Err: errors.Join(errs...)}
	}
	return nil
}

// flagIndexNames returns the names of the --index RESOURCE:NAME=CEL
// indexes of resource (as written).
func (p *Plan) flagIndexNames(resource string) sets.Set[string] {
	out := sets.New[string]()
	for _, ix := range p.req.ResourceFlagIndexes[resource] {
		out.Insert(ix.Name)
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
		flag := p.req.Names.Of(query.PartIndex)
		hints = append(hints, fmt.Sprintf("%s %s=… is registered on every resource queried and does not fit %s: give it to one resource with %s RESOURCE:%s=…, such as %s %s:%s=%s",
			flag, name, res, flag, name, flag, other.GVR.Resource, name, prog.Expr()))
	}
	if len(hints) == 0 {
		return err
	}
	return &query.UsageError{Err: errors.Join(err, errors.New(strings.Join(hints, "\n")))}
}

// lookups adds an informer for every resource that get() and byIndex() read,
// with the indexes byIndex() names, and binds the plan's programs to them.
func (p *Plan) lookups(f *factory.Factory, r *factory.Resolver, lookup *factory.Lookup, stats *indexers.Stats, queried []*factory.Informer,
	configIndexes map[schema.GroupVersionResource]map[string]*indexers.Program) error {
	wanted := indexers.ReadIndexes(p.programs()) // resource as written → index names
	for _, name := range slices.Sorted(maps.Keys(wanted)) {
		res, err := r.ResolveOne(name)
		if err != nil {
			return &query.UsageError{Err: fmt.Errorf("%s: %w", indexers.ReadBy(p.programs(), name), err)}
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
		for _, idx := range sets.List(wanted[name]) {
			if idx == cache.NamespaceIndex {
				continue
			}
			prog, ok := available[idx]
			if !ok && indexers.IsBuiltinIndex(idx) {
				var err error
				if prog, _, err = p.env.BuiltinIndex(idx); err != nil {
					return err
				}
				ok = true
			}
			if !ok {
				return &query.UsageError{Err: fmt.Errorf("byIndex(%q, %q, …): %w", name, idx, query.UnknownIndex(idx, append(slices.Sorted(maps.Keys(available)), cache.NamespaceIndex), p.req.Names))}
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
			if _, err := f.Request(res, scope, factory.Needs{Mode: factory.ModeFull, Indexers: indexers.IndexFuncs(ixs, stats)}); err != nil {
				return err
			}
		}
		lookup.Add(name, inf)
	}
	return nil
}

// explainReads names, in the error of a list that RBAC denied, what reads
// the resource when it is none of the queried resources: the calls of
// get(), byIndex() or the relationship functions, and where they are.
func (p *Plan) explainReads(err error, r *factory.Resolver, queried []*factory.Informer) {
	fe, ok := errors.AsType[*factory.ForbiddenError](err)
	if !ok || slices.ContainsFunc(queried, func(inf *factory.Informer) bool { return inf.Resource.GVR == fe.Resource.GVR }) {
		return
	}
	var reads []string
	for _, prog := range p.programs() {
		for _, ref := range prog.References() {
			res, err := r.ResolveOne(ref.Resource)
			if err == nil && res.GVR == fe.Resource.GVR {
				reads = append(reads, ref.ReadBy()+" in "+prog.Context())
			}
		}
	}
	fe.ReadBy = strings.Join(reads, ", ")
}

// addRelationIndexes adds to ixs, the indexes of the queried resource res,
// the built-in ones that children(), selected() and events() read of it. Their
// expressions are constants that compile in every environment (see
// TestRelations), so the one error BuiltinIndex can return here is the
// refusal of an expression whose least cost is above the environment's
// cost limit: such an index is left out, and the functions that read it
// then fail with an unknown index, as under that limit they would anyway.
func (p *Plan) addRelationIndexes(res factory.Resource, ixs map[string]*indexers.Program) {
	names := []string{indexers.ControllerIndex, indexers.LabelIndex}
	if res.GVR.Group == "" && res.GVR.Resource == indexers.EventsResource {
		names = append(names, indexers.InvolvedObjectIndex)
	}
	for _, n := range names {
		if _, ok := ixs[n]; ok {
			continue
		}
		if prog, _, err := p.env.BuiltinIndex(n); err == nil {
			ixs[n] = prog
		}
	}
}

// clusterScopedErrors reports the get() calls of progs that pass a
// namespace for resource (as written), which is cluster-scoped, as a
// *query.UsageError; nil when there are none.
func clusterScopedErrors(progs []*indexers.Program, resource string) error {
	var errs []error
	for _, prog := range progs {
		if err := prog.CheckClusterScoped(resource); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return &query.UsageError{Err: errors.Join(errs...)}
	}
	return nil
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

// printerColumns returns the printer columns of the queried custom
// resource gvr; nil for c nil and for the kinds printed with their own.
func (c *Caches) printerColumns(gvr schema.GroupVersionResource) []query.PrinterColumn {
	if c == nil {
		return nil
	}
	return c.crdColumns[gvr]
}
