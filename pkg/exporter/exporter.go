package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
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
	// StartupPacing, when its Factor is set, paces the garbage collector
	// while the caches fill for the first time (see factory.Pace); the
	// previous pacing is restored once they have synced. Decoding the
	// initial lists produces garbage at a high rate from a small heap:
	// collecting it less often spends less CPU, for a higher peak of
	// memory during the sync. The zero value leaves the collector alone.
	StartupPacing factory.FillPacing
	// SteadyGCPercent, when positive, is the garbage collector's target
	// percentage once the caches have synced (instead of the one before
	// StartupPacing). The exporter's heap is its caches and series,
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
	// ContactBackoff is the wait after the first failed attempt to reach
	// the API server when the config is first loaded (see Start); it
	// doubles after each failure up to MaxContactBackoff. Defaults 1s and
	// 30s.
	ContactBackoff, MaxContactBackoff time.Duration

	// KubeStateMetrics makes the exporter speak as kube-state-metrics
	// (its drop-in mode): the telemetry registry gains kube-state-metrics'
	// own metrics with their names, types, labels and meanings
	// (kube_state_metrics_list_total, _watch_total, _shard_ordinal,
	// _total_shards, _build_info...), and /metrics takes its ?resources=
	// and ?exclude_resources= parameters. The plugin's own telemetry
	// (kubectl_informer_*) stays beside them. See
	// docs/kube-state-metrics-telemetry.md. Readiness then follows
	// kube-state-metrics': a resource whose requests are refused
	// (forbidden...) keeps neither /readyz at 503 nor a reload from
	// succeeding; it is logged, named by /readyz and counted, and served
	// once its requests succeed (see Options.waitsForRefused).
	KubeStateMetrics bool
	// KubeStateMetricsConfigFiles, with KubeStateMetrics, are the files
	// kube_state_metrics_config_hash and _last_config_reload_* report,
	// read again at each load of the config.
	KubeStateMetricsConfigFiles []KubeStateMetricsConfigFile
	// Node, when set, watches only the pods of that node (the field
	// selector spec.nodeName=Node), as kube-state-metrics' --node does for
	// a DaemonSet. UnscheduledPods, with Node empty, watches only the pods
	// of no node (spec.nodeName=), as its --track-unscheduled-pods; set
	// with Node, it wins, as there. Both select the entries of core/v1
	// pods only, beside their own field selectors; other resources are
	// watched as their entries say.
	Node            string
	UnscheduledPods bool
	// UseAPIServerCache lists with resourceVersion=0, served from the API
	// server's watch cache, instead of a quorum read from etcd, as
	// kube-state-metrics' --use-apiserver-cache.
	UseAPIServerCache bool
	// ObjectLimit, when positive, is the number of objects listed of each
	// resource, as kube-state-metrics' --object-limit (see
	// factory.Config.ObjectLimit): a list cut at it is logged once per
	// resource and named by /readyz.
	ObjectLimit int64
	// AutoShard, when its Pod is set, takes the shard from the StatefulSet
	// that controls that pod, as kube-state-metrics' --pod and
	// --pod-namespace do: the ordinal of the pod's name is the shard, the
	// StatefulSet's replicas the total, and a change of its replicas
	// shards again. It has precedence over Shard. Start fails when the
	// pod cannot be read or no StatefulSet controls it; a later change
	// that gives no shard (an ordinal not below the replicas) is logged
	// and the shard in force kept.
	AutoShard AutoShard
}

// AutoShard names the pod whose StatefulSet decides the shard.
type AutoShard struct{ Pod, Namespace string }

// LoadError is a config file that could not be loaded: unreadable,
// invalid, or with an invalid expression (as opposed to a cluster that
// cannot be reached).
type LoadError struct{ Err error }

func (e *LoadError) Error() string { return e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }

// Exporter keeps the informers of a config running and its engine fed, and
// swaps in a new config on Reload without losing the caches it keeps.
type Exporter struct {
	opts Options
	// loaded, until the first config is loaded, is called once it is
	// compiled, before its informers start (see Start).
	loaded   func()
	env      *indexers.Env
	factory  *factory.Factory
	resolver *factory.Resolver
	log      *slog.Logger
	tel      *telemetry
	// ksm is kube-state-metrics' telemetry, with Options.KubeStateMetrics;
	// nil without.
	ksm *ksmTelemetry
	// restConfig reaches the API server, for /livez and the auth filter.
	restConfig *rest.Config

	// reloadMu serialises reloads and guards indexExprs.
	reloadMu sync.Mutex
	// indexExprs are the expressions of the indexes registered on each
	// informer, by name.
	indexExprs map[*factory.Informer]map[string]string
	// mu guards active, unavailable and contact.
	mu     sync.RWMutex
	active *activeConfig
	// unavailable are the profile's resources the server does not have
	// (see Sources.Available), as of the last load.
	unavailable []string
	// unavailableLogged are those logged so far; guarded by reloadMu.
	unavailableLogged map[string]bool
	// started is set once a config has been loaded, closed once the
	// exporter has stopped; both guarded by reloadMu.
	started, closed bool
	// contact is how the attempts to reach the API server to load the
	// first config fare (see Start); guarded by mu.
	contact contactState
	// kube is a clientset for what the exporter reads outside its
	// configs' informers: the pod and StatefulSet of AutoShard.
	kube kubernetes.Interface
	// shardMu guards shard.
	shardMu sync.RWMutex
	// shard is the shard in force: Options.Shard, or AutoShard's (see
	// currentShard); each config loaded takes the one in force then.
	shard Shard
	// shardSource is the name of the StatefulSet AutoShard takes the
	// shard from, once found; set before the first config loads, read
	// only after.
	shardSource string
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

// settled reports whether each of regs has received its informer's
// initial list, or its informer's requests fail.
func settled(regs []registration) bool {
	for _, r := range regs {
		synced := r.inf.Informer.HasSynced() && r.reg.HasSynced()
		if !synced && r.inf.Healthy() == nil {
			return false
		}
	}
	return true
}

// New returns an Exporter that reaches the cluster through restConfig and
// resolves resource names with resolver. Nothing runs until Start.
func New(restConfig *rest.Config, resolver *factory.Resolver, opts Options) (*Exporter, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// The configs of one load (a profile's files) share their programs.
	env, err := indexers.NewEnv(append(slices.Clone(opts.EnvOptions), indexers.WithSharedPrograms())...)
	if err != nil {
		return nil, err
	}
	f, err := factory.New(restConfig, factory.Config{KeepLastApplied: admitsLastApplied(opts.AnnotationsAllowlist),
		UseAPIServerCache: opts.UseAPIServerCache, ObjectLimit: opts.ObjectLimit})
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return nil, err
	}
	x := &Exporter{opts: opts, env: env, factory: f, resolver: resolver, log: opts.Logger, indexExprs: map[*factory.Informer]map[string]string{},
		unavailableLogged: map[string]bool{}, kube: kube, shard: opts.Shard, restConfig: restConfig}
	if x.opts.Profile != "" && x.opts.Available == nil {
		x.opts.Available = func(resource string) bool {
			_, err := resolver.ResolveOne(resource)
			return !factory.IsUnknownResource(err)
		}
	}
	x.tel = newTelemetry(x)
	if opts.KubeStateMetrics {
		x.ksm = newKSMTelemetry(x)
	}
	return x, nil
}

// Start loads the config and starts its informers; it returns once they
// are started, not synced (see Ready). A config that cannot be loaded is an
// error, returned at once: invalid, or naming a resource the API server
// does not have. An API server that cannot be reached (refused, silent,
// unavailable) is not: Start tries again, with a backoff that doubles from
// Options.ContactBackoff up to Options.MaxContactBackoff, until the server
// answers or ctx ends, and /readyz answers 503 with the cause meanwhile
// (see Ready); so the handler can be served before Start returns. The
// informers run until ctx ends.
func (x *Exporter) Start(ctx context.Context) error {
	if err := x.factory.Start(ctx); err != nil {
		return err
	}
	unpace := func() {}
	if fill := x.opts.StartupPacing; fill.Factor > 0 {
		// Loading the config, before any list, makes garbage and keeps
		// little: the collector runs from a lower floor, and as the caches
		// fill from fill's.
		load := fill
		load.Floor = min(fill.Floor, loadPacingFloor)
		unpace = factory.Pace(load)
		x.loaded = func() {
			unpace()
			unpace = factory.Pace(fill)
		}
	}
	gcPercent := -2 // nothing to set once synced
	if x.opts.SteadyGCPercent > 0 {
		gcPercent = x.opts.SteadyGCPercent
	}
	if err := x.loadFirst(ctx); err != nil {
		unpace()
		if gcPercent != -2 {
			debug.SetGCPercent(gcPercent)
		}
		return err
	}
	if x.shardSource != "" {
		if err := x.watchShard(ctx, x.kube, x.shardSource); err != nil {
			return err
		}
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
	go x.settle(ctx, unpace, gcPercent)
	return nil
}

// loadPacingFloor is the floor of the collector's pacing while the first
// config loads (see Options.StartupPacing): compiling the
// kube-state-metrics profile allocates about 40 MB and keeps a tenth, which
// under the floor of the fill, 128 MiB, made most of the memory the
// exporter ever held on a small cluster.
const loadPacingFloor = 32 << 20

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

// settle waits for the first sync, ends the startup pacing of the garbage
// collector (unpace) and sets its target percentage to gcPercent (-2:
// leave it), then returns the memory the
// initial lists needed (decoded whole objects, since pruned or dropped) to
// the operating system, so that the resident size reflects the caches. The
// exporter is ready (see Ready) as soon as the caches have synced (but
// those refused, when readiness does not wait for them); the memory is
// returned just after.
func (x *Exporter) settle(ctx context.Context, unpace func(), gcPercent int) {
	start := time.Now()
	restoreGC := func() {
		unpace()
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
	if st, err := x.state(); err == nil && len(st.refused) > 0 {
		// Ready without them (see Options.waitsForRefused): logHealth
		// says why each is refused.
		x.log.Info("ready: caches synced and series computed, but for the resources refused, which are not served until their requests succeed",
			"took", time.Since(start).Round(time.Millisecond), "not_synced", strings.Join(st.refused, ", "))
	} else {
		x.log.Info("ready: caches synced and series computed", "took", time.Since(start).Round(time.Millisecond))
	}
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
// the reload, unless the exporter is ready without it (with
// KubeStateMetrics: see Options.waitsForRefused); so does ctx ending first
// (without a log line when it ends: the exporter is stopping).
func (x *Exporter) Reload(ctx context.Context) error {
	x.reloadMu.Lock()
	defer x.reloadMu.Unlock()
	if x.closed {
		return errors.New("the exporter has stopped")
	}
	start := time.Now()
	compiled, err := x.opts.Load(x.env)
	if err == nil && x.loaded != nil {
		x.loaded()
		x.loaded = nil
	}
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
	case err != nil && !x.started && unreachable(err):
		return err // Start retries, and logs what changes
	case err != nil && !x.started:
		x.log.Error("config not loaded", "path", x.opts.sourceNames(), "err", err)
		return err
	case err != nil:
		x.log.Error("config not loaded; the previous config keeps running", "path", x.opts.sourceNames(), "err", err)
		return err
	}
	x.started = true
	x.mu.Lock()
	x.unavailable = compiled.Unavailable
	x.mu.Unlock()
	for _, res := range compiled.Unavailable {
		if !x.unavailableLogged[res] {
			x.unavailableLogged[res] = true
			x.log.Warn("the API server does not have this resource of the profile: its families are not served; they are once the server has it and the config is reloaded (SIGHUP), and --resources without it leaves it out",
				"profile", x.opts.Profile, "resource", res)
		}
	}
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
		MaxSeriesPerMetric: x.opts.MaxSeriesPerMetric, Shard: x.currentShard(),
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
			return c.resourceError(i, r.Config.Resource, err)
		}
		resolved[i] = res
	}
	lookups, err := x.lookupNeeds(c, resolved)
	if err != nil {
		// The check's errors are reported first, whatever their order.
		return firstError(x.checkResources(c, resolved), err)
	}
	lookup := configLookup{factory.NewLookup()}
	for _, r := range c.Resources {
		bindLookup(r, lookup)
	}

	// Merge what every entry needs of each informer before asking for any:
	// a resource configured twice, or configured and looked up, shares one
	// informer that keeps what all of them read.
	//
	// The objects of the first lists of informers that keep none are
	// computed as they arrive (see Engine.Early), once the config is
	// checked and bound: until then, early holds the lists back.
	plan := newInformerPlan()
	entryKeys := make([][]informerKey, len(c.Resources))
	bound := make(chan struct{})
	var bindOnce sync.Once
	release := func() { bindOnce.Do(func() { close(bound) }) }
	// Before the deferred cleanup: it stops informers, which may be held
	// back in early.
	defer release()
	for i, r := range c.Resources {
		readers := 1
		var early func(k8sruntime.Object)
		if readsCache(r) {
			readers = 0
		} else {
			early = next.engine.Early(i)
		}
		if early != nil {
			compute := early
			early = func(obj k8sruntime.Object) {
				<-bound
				compute(obj)
			}
		}
		for _, scope := range scopes(r, resolved[i]) {
			scope.FieldSelector = x.podNodeSelector(resolved[i], scope.FieldSelector)
			k := plan.add(resolved[i], scope, fieldsOf(r), r.Indexes, readers, early)
			entryKeys[i] = append(entryKeys[i], k)
		}
	}
	lookupKeys := map[string][]informerKey{}
	for _, l := range lookups {
		if l.namespaces == nil {
			lookupKeys[l.name] = []informerKey{plan.add(l.res, factory.Scope{}, nil, l.indexes, 0, nil)}
			continue
		}
		for _, ns := range l.namespaces {
			lookupKeys[l.name] = append(lookupKeys[l.name], plan.add(l.res, factory.Scope{Namespace: ns}, nil, l.indexes, 0, nil))
		}
	}
	// The first config's informers list while its expressions are checked
	// against the resources' schemas, which takes as long as listing
	// thousands of objects; its handlers are added, and its objects
	// evaluated, once the check has passed (see checking). A config that
	// fails it stops the informers it started, as any failing config does.
	checked := x.checking(c, resolved, x.current() == nil && !plan.indexed())
	stats := &indexers.Stats{}
	got := map[informerKey]*factory.Informer{}
	for _, k := range plan.order {
		inf, err := x.ensure(next, plan.wants[k], stats)
		if err != nil {
			return firstError(checked(), err)
		}
		got[k] = inf
	}
	if err := checked(); err != nil {
		return err
	}
	c.releaseSource()
	x.log.Debug("resources resolved and checked", "took", time.Since(start).Round(time.Millisecond))

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
	release()

	// Feed the new engine: a handler added to a running informer first
	// receives every cached object, so series come from the caches.
	var lookupRegs []registration
	entryRegs := make([][]registration, len(next.informers))
	// A resource's families are served once its informers and those read
	// by get() and byIndex() have synced or fail (a resource that cannot
	// be listed does not hold back the others), and the series of their
	// objects are computed.
	next.engine.SetGate(func(i int) bool {
		return settled(entryRegs[i]) && settled(lookupRegs)
	})
	for name, infs := range next.lookups {
		for _, inf := range infs {
			reg, err := inf.Informer.AddEventHandler(next.engine.LookupHandler(name, inf.Informer.GetIndexer().GetIndexers()))
			if err != nil {
				return err
			}
			lookupRegs = append(lookupRegs, registration{inf, reg})
		}
	}
	for i, infs := range next.informers {
		for _, inf := range infs {
			reg, err := inf.Informer.AddEventHandler(next.engine.Handler(i))
			if err != nil {
				return err
			}
			entryRegs[i] = append(entryRegs[i], registration{inf, reg})
		}
	}
	next.regs = append(next.regs, lookupRegs...)
	for _, regs := range entryRegs {
		next.regs = append(next.regs, regs...)
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

// podNodeSelector returns the field selector sel of an entry of res with
// the node's selector of Options.Node (spec.nodeName=NODE) or
// Options.UnscheduledPods (spec.nodeName=) added when res is core/v1
// pods, as kube-state-metrics selects the pods of a node: every other
// resource keeps sel.
func (x *Exporter) podNodeSelector(res factory.Resource, sel string) string {
	if res.GVR.Group != "" || res.GVR.Resource != "pods" {
		return sel
	}
	var node string
	switch {
	case x.opts.UnscheduledPods:
		node = "spec.nodeName="
	case x.opts.Node != "":
		node = "spec.nodeName=" + x.opts.Node
	default:
		return sel
	}
	if sel == "" {
		return node
	}
	return sel + "," + node
}

// pathOf returns the path of the config file of c's i-th resource: that
// of the part it comes from when c was merged (see Merge), not the list of
// every part's, which a profile makes long.
func (c *Compiled) pathOf(i int) string {
	parts, offsets := c.partsOf()
	for j := len(parts) - 1; j >= 0; j-- {
		if i >= offsets[j] {
			return parts[j].Path
		}
	}
	return c.Path
}

// pathReading returns the path of the config file of the first resource
// of c whose expressions read resource name with get() or byIndex().
func (c *Compiled) pathReading(name string) string {
	for i, r := range c.Resources {
		for _, p := range programsOf(r) {
			for _, ref := range p.References() {
				if ref.Resource == name {
					return c.pathOf(i)
				}
			}
		}
	}
	return c.Path
}

// resourceError is the error of resolving name, the resource of c's i-th
// entry: prefixed with the entry's file, unless it is a failure of the
// cluster (the API server cannot be reached, or answered with an error,
// such as refusing the credentials), which is no file's mistake and is
// returned as it is, its cause first.
func (c *Compiled) resourceError(i int, name string, err error) error {
	if clusterFailure(err) {
		return err
	}
	return fmt.Errorf("%s: resource %q: %w", c.pathOf(i), name, err)
}

// clusterFailure reports whether err is a failure to reach the API server
// or an error status it answered with.
func clusterFailure(err error) bool {
	var status apierrors.APIStatus
	return unreachable(err) || errors.As(err, &status)
}

// checking checks c against the schemas of its resolved resources (see
// checkResources) and returns what waits for the check's outcome: the
// check runs while the caller goes on when concurrently, and has run
// before checking returns otherwise. The caller must wait before it
// evaluates an object with c's programs, which the check gives their size
// bounds (see indexers.Program.AdoptSizeBounds), and before c's index
// functions run: a config with indexes is checked first. So is a reload,
// whose informers may replace running ones: a config that fails its check
// then lists nothing again.
func (x *Exporter) checking(c *Compiled, resolved []factory.Resource, concurrently bool) (wait func() error) {
	if !concurrently {
		err := x.checkResources(c, resolved)
		return func() error { return err }
	}
	done := make(chan error, 1)
	go func() { done <- x.checkResources(c, resolved) }()
	return sync.OnceValue(func() error { return <-done })
}

// firstError returns first when it is not nil, else then.
func firstError(first, then error) error {
	if first != nil {
		return first
	}
	return then
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

// admitsLastApplied reports whether an annotations allowlist (resource →
// keys, as --metric-annotations-allowlist) admits kubectl apply's
// last-applied annotation for some resource: the caches must keep it then,
// as kube-state-metrics serves it.
func admitsLastApplied(allow map[string][]string) bool {
	for _, keys := range allow {
		if f, err := NewKeyFilter(keys); err == nil && f.Allows(factory.LastAppliedAnnotation) {
			return true
		}
	}
	return false
}
