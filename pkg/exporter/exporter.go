package exporter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"k8s.io/apimachinery/pkg/util/sets"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// Options configure an Exporter.
type Options struct {
	// Sources are the configs served: the config file, read again on
	// Reload (ConfigPath; empty when a profile is served alone), and a
	// built-in profile beside it.
	Sources
	// Pprof serves Go's runtime profiles (net/http/pprof) under
	// /debug/pprof/ beside /metrics: for finding where memory and CPU go.
	// They reveal nothing of the objects, but cost CPU while taken.
	Pprof bool
	// MaxSeriesPerMetric caps each family's series; 0 (the default): no
	// cap. A cap that bites is logged once per family and reported by
	// /readyz and kubectl_informer_metric_series_capped.
	MaxSeriesPerMetric int
	// Shard selects this replica's objects; zero: not sharded.
	Shard Shard
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// StartupGCPercent, when positive, is the garbage collector's target
	// percentage (see debug.SetGCPercent) while the caches fill for the
	// first time; the previous one is restored once they have synced.
	// Decoding the initial lists produces garbage at a high rate: a larger
	// target spends less CPU collecting it, for a higher peak of memory
	// during the sync. Zero leaves the collector alone.
	StartupGCPercent int
	// SteadyGCPercent, when positive, is the garbage collector's target
	// percentage once the caches have synced (instead of the one before
	// StartupGCPercent). The exporter's heap is its caches and series,
	// long-lived; what an update allocates is small next to them. A low
	// target keeps the process near that heap, for a few more collections,
	// each of which costs little for so little garbage. Zero leaves it as
	// it was before the sync.
	SteadyGCPercent int
	// ErrorLogInterval is how often each metric's new evaluation errors
	// are logged, at most: their count and the last message. A metric
	// whose series are capped or have duplicates is logged once, at the
	// first look after it happened. Default 30s.
	ErrorLogInterval time.Duration
	// Namespace, when set, is the namespace of every entry that lists no
	// namespaces of its own (see DefaultNamespace), as kubectl's -n.
	// Empty: such entries watch every namespace.
	Namespace string
	// Namespaces, when set, are the namespaces of every entry that lists
	// none of its own, as Namespace (which it replaces) is for one.
	Namespaces []string
	// NamespacesDenylist leaves out the objects of these namespaces from
	// every entry of a namespaced resource that watches every namespace
	// (by a field selector sent to the server).
	NamespacesDenylist []string
	// EnvOptions are the options of the CEL environment the config's
	// expressions are compiled in, such as its cost limit
	// (indexers.WithCostLimit); none: the defaults.
	EnvOptions []indexers.Option
}

// LoadError is a config file that could not be loaded: unreadable,
// invalid, or with an invalid expression (as opposed to a cluster that
// cannot be reached).
type LoadError struct{ Err error }

func (e *LoadError) Error() string { return e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// Exporter keeps the informers of a config running and its engine fed, and
// swaps in a new config on Reload without losing the caches it keeps.
type Exporter struct {
	opts     Options
	env      *indexers.Env
	factory  *factory.Factory
	resolver *factory.Resolver
	log      *slog.Logger
	tel      *telemetry

	// reloadMu serialises reloads and guards indexExprs.
	reloadMu sync.Mutex
	// indexExprs are the expressions of the indexes registered on each
	// informer, by name.
	indexExprs map[*factory.Informer]map[string]string
	// mu guards active.
	mu     sync.RWMutex
	active *activeConfig
	// started is set once a config has been loaded, closed once the
	// exporter has stopped; both guarded by reloadMu.
	started, closed bool
}

// activeConfig is a running config: its engine, the informers it reads and
// its handler registrations.
type activeConfig struct {
	engine *Engine
	// informers of each configured resource, in the config's order; a
	// resource with several namespaces has one per namespace.
	informers [][]*factory.Informer
	// names are the resolved names of the configured resources, in the
	// config's order ("pods", "deployments.apps"), as telemetry, logs and
	// /readyz name them.
	names []string
	// lookups are the informers of resources read by get() and byIndex(),
	// by the name expressions give them: one of every namespace, or one
	// per namespace the resource is read in.
	lookups map[string][]*factory.Informer
	// counts keep the object and index value counts telemetry reports, by
	// informer, for every informer watched; fixed once the config is active.
	counts map[*factory.Informer]*cacheCount
	regs   []registration
	// replaced are the informers of the previous config that this one
	// replaces with informers of its own (which list again); they run,
	// and the previous config with them, until this one is active.
	replaced []*factory.Informer
	// started are the informers this config started.
	started []*factory.Informer
}

// uses reports whether inf is one of the informers of a.
func (a *activeConfig) uses(inf *factory.Informer) bool {
	for _, infs := range a.informers {
		if slices.Contains(infs, inf) {
			return true
		}
	}
	for _, infs := range a.lookups {
		if slices.Contains(infs, inf) {
			return true
		}
	}
	return false
}

type registration struct {
	inf *factory.Informer
	reg cache.ResourceEventHandlerRegistration
}

// New returns an Exporter that reaches the cluster through restConfig and
// resolves resource names with resolver. Nothing runs until Start.
func New(restConfig *rest.Config, resolver *factory.Resolver, opts Options) (*Exporter, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	env, err := indexers.NewEnv(opts.EnvOptions...)
	if err != nil {
		return nil, err
	}
	f, err := factory.New(restConfig, factory.Config{})
	if err != nil {
		return nil, err
	}
	x := &Exporter{opts: opts, env: env, factory: f, resolver: resolver, log: opts.Logger, indexExprs: map[*factory.Informer]map[string]string{}}
	x.tel = newTelemetry(x)
	return x, nil
}

// Start loads the config and starts its informers; it returns once they
// are started, not synced (see Ready). A config that cannot be loaded is an
// error. The informers run until ctx ends.
func (x *Exporter) Start(ctx context.Context) error {
	if err := x.factory.Start(ctx); err != nil {
		return err
	}
	gcPercent := -2 // nothing to restore
	if x.opts.StartupGCPercent > 0 {
		gcPercent = debug.SetGCPercent(x.opts.StartupGCPercent)
	}
	if x.opts.SteadyGCPercent > 0 {
		gcPercent = x.opts.SteadyGCPercent
	}
	if err := x.Reload(ctx); err != nil {
		if gcPercent != -2 {
			debug.SetGCPercent(gcPercent)
		}
		return err
	}
	interval := x.opts.ErrorLogInterval
	if interval <= 0 {
		interval = 30 * time.Second
	}
	go x.logErrors(ctx, interval)
	go func() {
		<-ctx.Done()
		x.close()
	}()
	go x.logHealth(ctx, time.Second)
	go x.settle(ctx, gcPercent)
	return nil
}

// close stops the engine of the running config, once ctx has ended, and
// waits for the informers to stop; the series already computed can still
// be served.
func (x *Exporter) close() {
	x.reloadMu.Lock()
	x.closed = true
	a := x.current()
	if a != nil {
		a.engine.Close()
	}
	x.reloadMu.Unlock()
	x.factory.Shutdown()
}

// settle waits for the first sync, restores the garbage collector's target
// percentage to gcPercent (-2: leave it), then returns the memory the
// initial lists needed (decoded whole objects, since pruned or dropped) to
// the operating system, so that the resident size reflects the caches. The
// exporter is ready (see Ready) as soon as the caches have synced; the
// memory is returned just after.
func (x *Exporter) settle(ctx context.Context, gcPercent int) {
	start := time.Now()
	restoreGC := func() {
		if gcPercent != -2 {
			debug.SetGCPercent(gcPercent)
		}
	}
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for x.synced() != nil {
		select {
		case <-ctx.Done():
			restoreGC()
			return
		case <-t.C:
		}
	}
	x.log.Info("ready: caches synced and series computed", "took", time.Since(start).Round(time.Millisecond))
	restoreGC()
	debug.FreeOSMemory()
}

// Reload reads the config file again and switches to it. On any error the
// running config stays in place and the error is returned (and counted).
// Resources the new config keeps keep their caches; a resource whose
// objects must now keep fields they were pruned of, or whose cache keeps
// no objects (see factory.Needs.Readers), is listed again. The running
// config serves until the new one's caches have synced and its series are
// computed: a resource the new config cannot list (forbidden, say) fails
// the reload, and so does ctx ending first (without a log line when it ends:
// the exporter is stopping).
func (x *Exporter) Reload(ctx context.Context) error {
	x.reloadMu.Lock()
	defer x.reloadMu.Unlock()
	if x.closed {
		return errors.New("the exporter has stopped")
	}
	start := time.Now()
	compiled, err := x.opts.Load(x.env)
	if err != nil {
		err = &LoadError{Err: err}
	} else {
		DefaultNamespace(compiled, x.opts.namespaces()...)
		ExcludeNamespaces(compiled, x.opts.NamespacesDenylist...)
		err = x.switchTo(ctx, compiled)
	}
	x.tel.reloaded(compiled, err)
	switch {
	case err != nil && ctx.Err() != nil:
		return err // stopping: nothing to report
	case err != nil && !x.started:
		x.log.Error("config not loaded", "path", x.opts.sourceNames(), "err", err)
		return err
	case err != nil:
		x.log.Error("config not loaded; the previous config keeps running", "path", x.opts.sourceNames(), "err", err)
		return err
	}
	x.started = true
	attrs := []any{"path", compiled.Path, "sha256", compiled.Hash, "resources", len(compiled.Resources)}
	if ns := x.opts.namespaces(); len(ns) > 0 {
		attrs = append(attrs, "namespaces", strings.Join(ns, ","))
	}
	if len(x.opts.NamespacesDenylist) > 0 {
		attrs = append(attrs, "namespacesDenylist", strings.Join(x.opts.NamespacesDenylist, ","))
	}
	x.log.Info("config loaded", append(attrs, "took", time.Since(start).Round(time.Millisecond))...)
	for _, msg := range compiled.UnusedAllowlistEntries(x.opts.LabelsAllowlist, x.opts.AnnotationsAllowlist) {
		x.log.Warn(msg + ": check the resource's name, as the config's resources entries write it")
	}
	return nil
}

// sourceNames names the configs in logs.
func (o Options) sourceNames() string {
	switch {
	case o.Profile == "":
		return o.ConfigPath
	case o.ConfigPath == "":
		return "profile " + o.Profile
	}
	return "profile " + o.Profile + ", " + o.ConfigPath
}

// namespaces are those of Namespaces, or else of Namespace.
func (o Options) namespaces() []string {
	if len(o.Namespaces) > 0 || o.Namespace == "" {
		return o.Namespaces
	}
	return []string{o.Namespace}
}

// DefaultNamespace scopes every entry of c that lists no namespaces to
// namespaces, as kubectl's -n scopes a command: such an entry of a
// namespaced resource then watches those namespaces only, and the lookups
// its expressions make read them (see RBACObjects). Entries with
// namespaces of their own keep them; cluster-scoped resources are watched
// whole whatever their entry says. No namespace (or "") changes nothing.
func DefaultNamespace(c *Compiled, namespaces ...string) {
	namespaces = slices.DeleteFunc(slices.Clone(namespaces), func(ns string) bool { return ns == "" })
	if len(namespaces) == 0 {
		return
	}
	for _, r := range c.Resources {
		if len(r.Config.Namespaces) == 0 {
			r.Config.Namespaces = slices.Clone(namespaces)
		}
	}
}

// ExcludeNamespaces leaves the objects of namespaces out of every entry of
// c that watches every namespace, as kube-state-metrics'
// --namespaces-denylist: the entry's field selector gets
// metadata.namespace!=NAMESPACE for each, for namespaced resources (see
// scopes).
func ExcludeNamespaces(c *Compiled, namespaces ...string) {
	for _, r := range c.Resources {
		if len(r.Config.Namespaces) == 0 {
			r.ExcludeNamespaces = slices.Clone(namespaces)
		}
	}
}

func (x *Exporter) switchTo(ctx context.Context, c *Compiled) (err error) {
	next := &activeConfig{engine: NewEngine(c, EngineOptions{
		MaxSeriesPerMetric: x.opts.MaxSeriesPerMetric, Shard: x.opts.Shard,
		Now:      func() int64 { return time.Now().Unix() },
		Computed: func(d time.Duration) { x.tel.computed.Observe(d.Seconds()) },
	}), lookups: map[string][]*factory.Informer{}, counts: map[*factory.Informer]*cacheCount{}}
	// A config that fails to load leaves nothing behind: not its engine's
	// workers, nor handlers on the informers it shares, nor the informers
	// it started; the informers it was to replace are the factory's again.
	defer func() {
		if err != nil {
			for _, r := range next.regs {
				_ = r.inf.Informer.RemoveEventHandler(r.reg)
			}
			next.engine.Close()
			for _, inf := range next.started {
				x.factory.Stop(inf)
				x.forgetIndexes(inf)
			}
			for _, inf := range next.replaced {
				x.factory.Reattach(inf)
			}
		}
	}()
	start := time.Now()
	resolved := make([]factory.Resource, len(c.Resources))
	for i, r := range c.Resources {
		res, err := x.resolver.ResolveOne(r.Config.Resource)
		if err != nil {
			return fmt.Errorf("%s: resource %q: %w", c.Path, r.Config.Resource, err)
		}
		resolved[i] = res
	}
	if err := x.checkResources(c, resolved); err != nil {
		return err
	}
	x.log.Debug("resources resolved", "took", time.Since(start).Round(time.Millisecond))
	lookups, err := x.lookupNeeds(c, resolved)
	if err != nil {
		return err
	}
	lookup := configLookup{factory.NewLookup()}
	for _, r := range c.Resources {
		bindLookup(r, lookup)
	}

	// Merge what every entry needs of each informer before asking for any:
	// a resource configured twice, or configured and looked up, shares one
	// informer that keeps what all of them read.
	plan := newInformerPlan()
	entryKeys := make([][]informerKey, len(c.Resources))
	for i, r := range c.Resources {
		readers := 1
		if readsCache(r) {
			readers = 0
		}
		for _, scope := range scopes(r, resolved[i]) {
			k := plan.add(resolved[i], scope, fieldsOf(r), r.Indexes, readers)
			entryKeys[i] = append(entryKeys[i], k)
		}
	}
	lookupKeys := map[string][]informerKey{}
	for _, l := range lookups {
		if l.namespaces == nil {
			lookupKeys[l.name] = []informerKey{plan.add(l.res, factory.Scope{}, nil, l.indexes, 0)}
			continue
		}
		for _, ns := range l.namespaces {
			lookupKeys[l.name] = append(lookupKeys[l.name], plan.add(l.res, factory.Scope{Namespace: ns}, nil, l.indexes, 0))
		}
	}
	stats := &indexers.Stats{}
	got := map[informerKey]*factory.Informer{}
	for _, k := range plan.order {
		inf, err := x.ensure(next, plan.wants[k], stats)
		if err != nil {
			return err
		}
		got[k] = inf
	}

	getters := make([]Getter, len(c.Resources))
	for i := range c.Resources {
		var infs []*factory.Informer
		for _, k := range entryKeys[i] {
			infs = append(infs, got[k])
		}
		next.informers = append(next.informers, infs)
		next.names = append(next.names, resolved[i].String())
		getters[i] = getterOf(infs)
	}
	for name, keys := range lookupKeys {
		for _, k := range keys {
			next.lookups[name] = append(next.lookups[name], got[k])
		}
		lookup.Add(name, next.lookups[name]...)
	}
	var l indexers.Lookup
	if len(next.lookups) > 0 {
		l = lookup
	}
	next.engine.Bind(getters, l)

	// Feed the new engine: a handler added to a running informer first
	// receives every cached object, so series come from the caches.
	for name, infs := range next.lookups {
		for _, inf := range infs {
			reg, err := inf.Informer.AddEventHandler(next.engine.LookupHandler(name, inf.Informer.GetIndexer().GetIndexers()))
			if err != nil {
				return err
			}
			next.regs = append(next.regs, registration{inf, reg})
		}
	}
	for i, infs := range next.informers {
		for _, inf := range infs {
			reg, err := inf.Informer.AddEventHandler(next.engine.Handler(i))
			if err != nil {
				return err
			}
			next.regs = append(next.regs, registration{inf, reg})
		}
	}
	if err := next.countCaches(c); err != nil {
		return err
	}
	// The running config serves until the new one has every series: its
	// informers synced (those it replaces list again) and its engine idle.
	if x.current() != nil {
		if err := x.awaitSynced(ctx, next); err != nil {
			return fmt.Errorf("the new config's caches did not sync: %w", err)
		}
	}

	x.mu.Lock()
	prev := x.active
	x.active = next
	x.mu.Unlock()
	if prev != nil {
		for _, r := range prev.regs {
			_ = r.inf.Informer.RemoveEventHandler(r.reg)
		}
		prev.engine.Close()
		x.stopUnused(prev, next)
	}
	return nil
}

// countCaches registers on each informer a watches (lookup-only ones
// included) a handler that counts its objects and the values of the
// indexes c reports, for telemetry to read.
func (a *activeConfig) countCaches(c *Compiled) error {
	reported := reportedIndexes(c, a.informers)
	for _, w := range a.watched() {
		for _, inf := range w.infs {
			if reported[inf] == nil {
				reported[inf] = sets.New[string]()
			}
		}
	}
	for inf, names := range reported {
		all := inf.Informer.GetIndexer().GetIndexers()
		ix := cache.Indexers{}
		for name := range names {
			if fn, ok := all[name]; ok {
				ix[name] = fn
			}
		}
		count := newCacheCount(ix)
		reg, err := inf.Informer.AddEventHandler(count)
		if err != nil {
			return err
		}
		a.counts[inf] = count
		a.regs = append(a.regs, registration{inf, reg})
	}
	return nil
}

// reportedIndexes returns the names of the indexes telemetry reports of
// each informer of informers (the informers of c's resources, in order).
func reportedIndexes(c *Compiled, informers [][]*factory.Informer) map[*factory.Informer]sets.Set[string] {
	out := map[*factory.Informer]sets.Set[string]{}
	for i, infs := range informers {
		for _, inf := range infs {
			if out[inf] == nil {
				out[inf] = sets.New[string]()
			}
			for name := range c.Resources[i].Indexes {
				out[inf].Insert(name)
			}
		}
	}
	return out
}

// informerKey identifies an informer as the factory does: cluster-scoped
// resources have no namespace.
type informerKey struct {
	gvr   string
	scope factory.Scope
}

// informerWant is what a config needs of one informer.
type informerWant struct {
	res   factory.Resource
	scope factory.Scope
	// fields is the union of what the entries read; nil: whole objects.
	fields *jsonval.Paths
	// indexes are the index programs by name.
	indexes map[string]*indexers.Program
	// readers is how many handlers take each object from its event; 0:
	// the cache keeps the objects (see factory.Needs.Readers).
	readers int
}

// informerPlan merges the needs of a config's entries per informer.
type informerPlan struct {
	wants map[informerKey]*informerWant
	order []informerKey
}

func newInformerPlan() *informerPlan {
	return &informerPlan{wants: map[informerKey]*informerWant{}}
}

// add merges one entry's needs; nil fields means whole objects. readers
// is how many of the engine's handlers read the objects only as events
// deliver them (see factory.Needs.Readers); 0 when the entry reads the
// cache afterwards (see readsCache), which keeps the objects for every
// entry. Index functions keep them too: the factory sees to that.
func (p *informerPlan) add(res factory.Resource, scope factory.Scope, fields *jsonval.Paths, ix map[string]*indexers.Program, readers int) informerKey {
	if !res.Namespaced {
		scope.Namespace = ""
	}
	k := informerKey{gvr: res.GVR.String(), scope: scope}
	w, ok := p.wants[k]
	if !ok {
		w = &informerWant{res: res, scope: scope, fields: fields, indexes: map[string]*indexers.Program{}, readers: readers}
		p.wants[k] = w
		p.order = append(p.order, k)
	} else {
		if w.fields != nil && (fields == nil || !w.fields.Union(fields)) {
			w.fields = nil
		}
		if readers == 0 || w.readers == 0 {
			w.readers = 0
		} else {
			w.readers += readers
		}
	}
	for name, prog := range ix {
		if _, dup := w.indexes[name]; !dup {
			w.indexes[name] = prog
		}
	}
	return k
}

// ensure returns a running informer that keeps what w needs, with w's
// indexes. An informer kept from the previous config is reused when it
// keeps enough of the objects and its same-named indexes have the same
// expressions; otherwise it is replaced, which lists again.
func (x *Exporter) ensure(next *activeConfig, w *informerWant, stats *indexers.Stats) (*factory.Informer, error) {
	needs := factory.Needs{Mode: factory.ModeFull, Fields: w.fields, Readers: w.readers}
	inf, err := x.factory.Request(w.res, w.scope, needs)
	if err == nil && x.indexesConflict(inf, w.indexes) {
		err = errors.New("an index changed its expression")
	}
	if err != nil {
		x.log.Info("listing again: the new config needs what the cache cannot give", "resource", w.res.String()+namespaceSuffix(w.scope), "reason", err)
		if old := x.factory.Detach(w.res, w.scope); old != nil {
			next.replaced = append(next.replaced, old)
		}
		if inf, err = x.factory.Request(w.res, w.scope, needs); err != nil {
			return nil, err
		}
	}
	if prev := x.current(); prev == nil || !prev.uses(inf) {
		next.started = append(next.started, inf)
	}
	add := map[string]*indexers.Program{}
	for name, prog := range w.indexes {
		if _, ok := x.indexExprs[inf][name]; !ok {
			add[name] = prog
		}
	}
	if len(add) > 0 {
		if _, err := x.factory.Request(w.res, w.scope, factory.Needs{Mode: factory.ModeFull, Fields: w.fields, Indexers: indexers.IndexFuncs(add, stats)}); err != nil {
			return nil, err
		}
		if x.indexExprs[inf] == nil {
			x.indexExprs[inf] = map[string]string{}
		}
		for name, prog := range add {
			x.indexExprs[inf][name] = prog.Expr()
		}
	}
	return inf, nil
}

// indexesConflict reports whether inf has an index of one of the names with
// another expression: client-go cannot replace an index function.
func (x *Exporter) indexesConflict(inf *factory.Informer, ix map[string]*indexers.Program) bool {
	for name, prog := range ix {
		if expr, ok := x.indexExprs[inf][name]; ok && expr != prog.Expr() {
			return true
		}
	}
	return false
}

func (x *Exporter) forgetIndexes(inf *factory.Informer) {
	if inf != nil {
		delete(x.indexExprs, inf)
	}
}

// lookupNeed is a resource read by get() or byIndex(), with the indexes
// byIndex() names and the namespaces it is read in (nil: every one).
type lookupNeed struct {
	name       string
	res        factory.Resource
	indexes    map[string]*indexers.Program
	namespaces []string
}

// lookupNeeds lists the resources that get() and byIndex() read; indexes
// named by byIndex() must be defined on a configured entry of the same
// resource.
func (x *Exporter) lookupNeeds(c *Compiled, resolved []factory.Resource) ([]lookupNeed, error) {
	wanted := map[string]sets.Set[string]{}
	for _, r := range c.Resources {
		for _, p := range programsOf(r) {
			for _, ref := range p.References() {
				if wanted[ref.Resource] == nil {
					wanted[ref.Resource] = sets.New[string]()
				}
				for _, ix := range ref.Indexes {
					wanted[ref.Resource].Insert(ix)
				}
			}
		}
	}
	var out []lookupNeed
	looked := map[string]factory.Resource{}
	for _, name := range slices.Sorted(maps.Keys(wanted)) {
		res, err := x.resolver.ResolveOne(name)
		if err != nil {
			return nil, fmt.Errorf("%s: get()/byIndex() resource %q: %w", c.Path, name, err)
		}
		looked[name] = res
		ix := map[string]*indexers.Program{}
		for idx := range wanted[name] {
			if idx == indexers.NamespaceIndex {
				continue
			}
			found := false
			for i, r := range c.Resources {
				if resolved[i].GVR == res.GVR {
					if p, ok := r.Indexes[idx]; ok {
						ix[idx], found = p, true
					}
				}
			}
			if !found {
				return nil, fmt.Errorf("%s: byIndex(%q, %q, …): define index %q under a resources entry for %s", c.Path, name, idx, idx, res)
			}
		}
		out = append(out, lookupNeed{name: name, res: res, indexes: ix})
	}
	scopes := lookupNamespaces(c, resolved, looked)
	for i := range out {
		out[i].namespaces = scopes[out[i].name]
	}
	return out, nil
}

// lookupNamespaces returns where an exporter of c reads each resource its
// expressions read with get() and byIndex(), by the name they give it
// (looked): nil for every namespace, else the namespaces, sorted. A
// namespaced resource is read in the namespaces of the entries whose
// expressions read it (under any name) and of the entries of the resource
// itself; in every namespace as soon as one of those entries watches every
// namespace or is of a cluster-scoped resource. entries are the resolved
// resources of c's entries, in order.
func lookupNamespaces(c *Compiled, entries []factory.Resource, looked map[string]factory.Resource) map[string][]string {
	reads := make([]sets.Set[schema.GroupVersionResource], len(c.Resources))
	for i, r := range c.Resources {
		reads[i] = sets.New[schema.GroupVersionResource]()
		for _, p := range programsOf(r) {
			for _, ref := range p.References() {
				if res, ok := looked[ref.Resource]; ok {
					reads[i].Insert(res.GVR)
				}
			}
		}
	}
	out := map[string][]string{}
	for name, res := range looked {
		if !res.Namespaced {
			out[name] = nil
			continue
		}
		all, set := false, sets.New[string]()
		for i, r := range c.Resources {
			if entries[i].GVR != res.GVR && !reads[i].Has(res.GVR) {
				continue
			}
			if !entries[i].Namespaced || len(r.Config.Namespaces) == 0 {
				all = true
				break
			}
			for _, ns := range r.Config.Namespaces {
				set.Insert(ns)
			}
		}
		if all {
			out[name] = nil
		} else {
			out[name] = slices.Sorted(maps.Keys(set))
		}
	}
	return out
}

// configLookup is the Lookup of a config's expressions: a get() or
// byIndex() of a namespace where the resource is not read fails with an
// error that says how to read it there.
type configLookup struct{ *factory.Lookup }

var _ indexers.Lookup = configLookup{}

// Get implements indexers.Lookup.
func (l configLookup) Get(resource, namespace, name string) (any, bool, error) {
	obj, found, err := l.Lookup.Get(resource, namespace, name)
	return obj, found, notWatchedHint(err)
}

// ByIndex implements indexers.Lookup.
func (l configLookup) ByIndex(resource, index, value string) ([]any, error) {
	objs, err := l.Lookup.ByIndex(resource, index, value)
	return objs, notWatchedHint(err)
}

func notWatchedHint(err error) error {
	var nw *factory.NamespaceNotWatchedError
	if errors.As(err, &nw) {
		return fmt.Errorf("%w: get() and byIndex() read a resource only in the namespaces of the entries that read it and of its own entry; add %q to the namespaces of one of them", err, nw.Namespace)
	}
	return err
}

// stopUnused stops the informers prev used and next does not.
func (x *Exporter) stopUnused(prev, next *activeConfig) {
	stop := func(infs []*factory.Informer) {
		for _, inf := range infs {
			if !next.uses(inf) {
				x.factory.Stop(inf)
				x.forgetIndexes(inf)
			}
		}
	}
	for _, infs := range prev.informers {
		stop(infs)
	}
	for _, infs := range prev.lookups {
		stop(infs)
	}
}

// Ready returns nil when /readyz answers 200, or the error /readyz
// answers 503 with:
//
//   - until every informer has synced once and the engine has computed the
//     series of every cached object, an error naming what has not;
//   - while the list and watch requests of every informer fail (the API
//     server unreachable, say), an error naming each with the reason.
//
// Once synced, an informer whose requests fail while others succeed leaves
// the exporter ready: the others' series are current and keep being
// scraped, and the failing resource is reported (see Failing).
func (x *Exporter) Ready() error {
	_, err := x.readiness()
	return err
}

// Failing returns one line per informer whose list and watch requests fail,
// sorted: "pods in shop: watch failing for 3s: …connection refused". The
// series of its resource stay as the informer last saw them until a
// request succeeds.
func (x *Exporter) Failing() []string {
	failing, _ := x.readiness()
	return failing
}

// readiness returns what Failing and Ready do, from one look at the
// informers.
func (x *Exporter) readiness() (failing []string, err error) {
	st, err := x.state()
	if err != nil {
		return nil, err
	}
	switch {
	case len(st.pending) > 0:
		err = fmt.Errorf("not synced: %s", strings.Join(st.pending, ", "))
	case len(st.failing) > 0 && len(st.failing) == st.informers:
		err = fmt.Errorf("the list and watch requests of every resource fail; the series are as last seen\n%s", strings.Join(st.failing, "\n"))
	case !st.idle:
		err = errors.New("synced; computing the series of the objects received")
	}
	return st.failing, err
}

// synced returns nil once every informer has synced and the engine has
// computed the series of every cached object, or an error naming what has
// not.
func (x *Exporter) synced() error {
	st, err := x.state()
	switch {
	case err != nil:
		return err
	case len(st.pending) > 0:
		return fmt.Errorf("not synced: %s", strings.Join(st.pending, ", "))
	case !st.idle:
		return errors.New("synced; computing the series of the objects received")
	}
	return nil
}

// informerState is one look at the informers of the active config.
type informerState struct {
	// informers is how many distinct informers the config reads.
	informers int
	// pending names the informers (or their handlers) not synced yet,
	// with why their requests fail if they do; sorted.
	pending []string
	// failing names the informers whose requests fail, with why; sorted.
	failing []string
	// idle is whether the engine has computed every event received,
	// looked at after the informers.
	idle bool
}

func (x *Exporter) state() (informerState, error) {
	a := x.current()
	if a == nil {
		return informerState{}, errors.New("no config loaded")
	}
	return a.state(), nil
}

// state looks at the informers of a and at its engine.
func (a *activeConfig) state() informerState {
	var st informerState
	health := map[*factory.Informer]error{}
	for _, r := range a.regs {
		name := informerName(r.inf)
		err, seen := health[r.inf]
		if !seen {
			err = r.inf.Healthy()
			health[r.inf] = err
			if err != nil {
				st.failing = append(st.failing, name+": "+err.Error())
			}
		}
		if !r.inf.Informer.HasSynced() || !r.reg.HasSynced() {
			if err != nil {
				name += " (" + err.Error() + ")"
			}
			st.pending = append(st.pending, name)
		}
	}
	// After HasSynced: the initial events count as pending once delivered.
	st.idle = a.engine.Idle()
	st.informers = len(health)
	slices.Sort(st.failing)
	slices.Sort(st.pending)
	st.pending = slices.Compact(st.pending)
	return st
}

// awaitSynced returns once the informers of a have synced and its engine
// has computed the series of every object they hold. It gives up when ctx
// ends, or when the requests of one of the informers fail in a
// way that retrying does not mend (forbidden, not found...), with that
// error.
func (x *Exporter) awaitSynced(ctx context.Context, a *activeConfig) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		if st := a.state(); len(st.pending) == 0 && st.idle {
			return nil
		}
		for _, r := range a.regs {
			if err := r.inf.Healthy(); err != nil && !r.inf.Informer.HasSynced() && factory.IsPermanent(err) {
				return fmt.Errorf("%s: %w", informerName(r.inf), err)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// informerNames returns the distinct informers of a, with their names.
func (a *activeConfig) informerNames() map[*factory.Informer]string {
	out := map[*factory.Informer]string{}
	for _, r := range a.regs {
		out[r.inf] = informerName(r.inf)
	}
	return out
}

// watchedResource is a resource in one namespace ("" for all, and for a
// cluster-scoped resource) with the distinct informers that watch it
// there: usually one, more when entries and lookups watch it with
// different selectors.
type watchedResource struct {
	// name is the resolved name of the resource, as informerName has it.
	name      string
	namespace string
	infs      []*factory.Informer
}

// watched returns every resource a watches, configured or read only by
// get() and byIndex(), by resolved name and namespace, sorted.
func (a *activeConfig) watched() []watchedResource {
	type key struct{ name, namespace string }
	byKey := map[key]*watchedResource{}
	seen := sets.New[*factory.Informer]()
	add := func(inf *factory.Informer) {
		if seen.Has(inf) {
			return
		}
		seen.Insert(inf)
		k := key{inf.Resource.String(), inf.Scope.Namespace}
		if byKey[k] == nil {
			byKey[k] = &watchedResource{name: k.name, namespace: k.namespace}
		}
		byKey[k].infs = append(byKey[k].infs, inf)
	}
	for _, infs := range a.informers {
		for _, inf := range infs {
			add(inf)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(a.lookups)) {
		for _, inf := range a.lookups[name] {
			add(inf)
		}
	}
	out := make([]watchedResource, 0, len(byKey))
	for _, w := range byKey {
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b watchedResource) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.namespace, b.namespace))
	})
	return out
}

// informerName is the name /readyz and the logs give an informer: its
// resource, and its namespace if it has one ("pods in shop").
func informerName(inf *factory.Informer) string {
	return inf.Resource.String() + namespaceSuffix(inf.Scope)
}

// logHealth logs, looking every interval, when the list and watch requests
// of an informer start failing, fail for another reason, and succeed again.
func (x *Exporter) logHealth(ctx context.Context, interval time.Duration) {
	type failure struct {
		reason string
		since  time.Time
	}
	logged := map[*factory.Informer]failure{} // what was logged of the informers failing
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		a := x.current()
		if a == nil {
			continue
		}
		now := map[*factory.Informer]failure{}
		for inf, name := range a.informerNames() {
			var re *factory.RequestError
			if !errors.As(inf.Healthy(), &re) {
				if f, was := logged[inf]; was {
					x.log.Info("list and watch requests succeed again; the series of the resource are current",
						"resource", name, "failed_for", time.Since(f.since).Round(time.Millisecond))
				}
				continue
			}
			f := failure{reason: re.Request + ": " + re.Reason(), since: re.Since}
			if logged[inf] != f {
				x.log.Warn("list and watch requests fail; the series of the resource are as last seen until they succeed",
					"resource", name, "request", re.Request, "failing_for", time.Since(re.Since).Round(time.Millisecond), "err", re.Reason())
			}
			now[inf] = f
		}
		logged = now
	}
}

func namespaceSuffix(s factory.Scope) string {
	if s.Namespace == "" {
		return ""
	}
	return " in " + s.Namespace
}

// current returns the running config, nil before the first is loaded.
func (x *Exporter) current() *activeConfig {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.active
}

// engine returns the active engine.
func (x *Exporter) engine() *Engine {
	if a := x.current(); a != nil {
		return a.engine
	}
	return nil
}

// logErrors logs, at most once per interval and family, the evaluation
// errors counted since the previous report, and once per family that its
// series are capped or have duplicates (see logFamilies).
func (x *Exporter) logErrors(ctx context.Context, interval time.Duration) {
	l := &familyLog{}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		x.logFamilies(l)
	}
}

// familyLog is what logFamilies has logged of engine's families, by
// metric name.
type familyLog struct {
	engine     *Engine
	errors     map[string]uint64
	capped     sets.Set[string]
	duplicates sets.Set[string]
}

// logFamilies logs the evaluation errors of each family counted since l
// saw them, and once per family (and config) that its series are capped
// by --max-series-per-metric or that some have the labels of others.
func (x *Exporter) logFamilies(l *familyLog) {
	e := x.engine()
	if e == nil {
		return
	}
	if l.engine != e { // a new config: its families start afresh
		*l = familyLog{engine: e, errors: map[string]uint64{}, capped: sets.New[string](), duplicates: sets.New[string]()}
	}
	for _, rs := range e.resources {
		for _, fs := range rs.families {
			name := fs.f.Name
			fs.mu.Lock()
			n, last := fs.errors, fs.lastError
			fs.mu.Unlock()
			if n > l.errors[name] {
				x.log.Warn("metric evaluation errors", "metric", name, "errors", n-l.errors[name], "last", last)
				l.errors[name] = n
			}
			h := fs.health()
			if h.dropped > 0 && !l.capped.Has(name) {
				l.capped.Insert(name)
				x.log.Warn("metric capped: series beyond --max-series-per-metric are not served; raise it, or set it to 0 for no cap",
					"metric", name, "cap", fs.maxSeries, "series_wanted", h.series+h.unserved, "series_served", h.series)
			}
			if h.duplicates > 0 && !l.duplicates.Has(name) {
				l.duplicates.Insert(name)
				x.log.Warn("metric has series with the same labels: one is served, the others are dropped; add labels that tell the objects apart, or use aggregate: count to count them",
					"metric", name, "duplicates", h.duplicates, "series", h.lastDuplicate)
			}
		}
	}
}

// scopes returns the scopes of a configured resource: one per namespace,
// or all namespaces.
func scopes(cr *CompiledResource, res factory.Resource) []factory.Scope {
	r := cr.Config
	base := factory.Scope{LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector}
	if res.Namespaced && len(r.Namespaces) == 0 && len(cr.ExcludeNamespaces) > 0 {
		sel := []string{}
		if r.FieldSelector != "" {
			sel = append(sel, r.FieldSelector)
		}
		for _, ns := range cr.ExcludeNamespaces {
			sel = append(sel, "metadata.namespace!="+ns)
		}
		base.FieldSelector = strings.Join(sel, ",")
	}
	if !res.Namespaced || len(r.Namespaces) == 0 {
		return []factory.Scope{base}
	}
	var out []factory.Scope
	for _, ns := range r.Namespaces {
		s := base
		s.Namespace = ns
		out = append(out, s)
	}
	return out
}

// programsOf returns every program evaluated on a resource's objects.
func programsOf(r *CompiledResource) []*indexers.Program {
	var out []*indexers.Program
	for _, name := range slices.Sorted(maps.Keys(r.Indexes)) {
		out = append(out, r.Indexes[name])
	}
	for _, f := range r.Families {
		out = append(out, f.Labels...)
		for _, p := range []*indexers.Program{f.Value, f.Each} {
			if p != nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// fieldsOf returns the JSON paths the resource's programs read, or nil for
// whole objects.
func fieldsOf(r *CompiledResource) *jsonval.Paths {
	out := &jsonval.Paths{}
	for _, p := range programsOf(r) {
		if !out.Union(p.ObjectPaths()) {
			return nil
		}
	}
	return out
}

// readsCache reports whether the series of r's objects are computed from
// the cache as well as from events: r has indexes, or its expressions call
// get() or byIndex(), whose objects changing recomputes r's objects from
// the cache.
func readsCache(r *CompiledResource) bool {
	if len(r.Indexes) > 0 {
		return true
	}
	for _, p := range programsOf(r) {
		if len(p.References()) > 0 {
			return true
		}
	}
	return false
}

// bindLookup binds every program of r that calls get() or byIndex() to l.
func bindLookup(r *CompiledResource, l indexers.Lookup) {
	for name, p := range r.Indexes {
		if len(p.References()) > 0 {
			r.Indexes[name] = p.WithLookup(l)
		}
	}
}

// getterOf reads an object by key from whichever of infs holds it.
func getterOf(infs []*factory.Informer) Getter {
	return func(key string) (any, bool, error) {
		for _, inf := range infs {
			obj, ok, err := inf.Informer.GetIndexer().GetByKey(key)
			if err != nil || ok {
				return obj, ok, err
			}
		}
		return nil, false, nil
	}
}
