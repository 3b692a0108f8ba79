package factory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// Scope limits what every informer of a Factory lists and watches; the
// selectors are sent to the server.
type Scope struct {
	// Namespace restricts namespaced resources to one namespace; "" means
	// all namespaces. Cluster-scoped resources ignore it.
	Namespace string
	// LabelSelector is a label selector such as "app=web,tier!=db".
	LabelSelector string
	// FieldSelector is a field selector such as "spec.nodeName=node-1".
	FieldSelector string
}

// Config configures a Factory.
type Config struct {
	// ResyncPeriod is the informers' resync period; 0 (the default) never resyncs.
	ResyncPeriod time.Duration
	// KeepManagedFields keeps metadata.managedFields and the
	// kubectl.kubernetes.io/last-applied-configuration annotation in cached
	// objects. Default false: both are dropped as objects arrive, which saves
	// about a third of the memory.
	KeepManagedFields bool
	// KeepLastApplied keeps the last-applied annotation of kubectl apply,
	// which is otherwise dropped with managedFields: a consumer reads
	// annotations wholesale.
	KeepLastApplied bool
	// KubectlFlags are the flags that the kubectl commands suggested in
	// messages carry, so that they ask about the same cluster and user:
	// --kubeconfig, --context, --as... Default: none.
	KubectlFlags []string
	// UseAPIServerCache lists with resourceVersion=0, which the API
	// server answers from its watch cache instead of a quorum read from
	// etcd, as kube-state-metrics' --use-apiserver-cache: every list
	// request but the pages after the first (a continued list takes no
	// resource version). It changes nothing of lists streamed as a watch's
	// initial events (WatchList), which come from the watch cache anyway.
	UseAPIServerCache bool
	// ObjectLimit, when positive, is the number of objects each informer
	// lists, as kube-state-metrics' --object-limit: lists ask for that
	// many (limit=ObjectLimit), keep the first ObjectLimit objects of the
	// answer and ask for no further page, and the informers list instead
	// of streaming their initial list as a watch (WatchList, which takes
	// no limit). Objects created later arrive by the watch as usual.
	// Default 0: no limit.
	ObjectLimit int64
}

// LastAppliedAnnotation is dropped from cached objects unless
// Config.KeepManagedFields is set.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// Factory owns one informer per resource and scope, shared by every consumer
// in the process. Informers are requested (Request) before Start; a resource
// requested after Start gets an informer started at once.
type Factory struct {
	cfg     Config
	clients *clients

	// lock guards informers, started, shutdown, ctx and clients.typed.
	lock      sync.Mutex
	informers map[informerKey]*Informer
	started   bool
	// shutdown is set by Shutdown: no informer starts after it.
	shutdown bool
	// ctx is Start's: informers requested after Start run until it ends.
	ctx context.Context
	// stopAll stops every informer started, replaced or detached ones too.
	stopAll context.CancelFunc
	// running counts the goroutines of the informers started.
	running sync.WaitGroup
	// denied is closed at the first watch RBAC denies while its list is
	// allowed; deniedErr, set before, is that watch's *ForbiddenError.
	denied     chan struct{}
	deniedOnce sync.Once
	deniedErr  error
}

// WatchDenied returns a channel closed when RBAC first denies an informer
// its watch while allowing its list: the reflector then lists again and
// again and the cache follows the cluster only by those lists. kubectl get
// -w fails at once on it; commands that watch read WatchDeniedError.
func (f *Factory) WatchDenied() <-chan struct{} { return f.denied }

// WatchDeniedError is the *ForbiddenError of the first watch denied (see
// WatchDenied); nil when none was.
func (f *Factory) WatchDeniedError() error {
	select {
	case <-f.denied:
		return f.deniedErr
	default:
		return nil
	}
}

// watchDenied records err, a watch of inf RBAC denied.
func (f *Factory) watchDenied(inf *Informer, err error) {
	f.deniedOnce.Do(func() {
		f.deniedErr = &ForbiddenError{Resource: inf.Resource, Namespace: inf.Scope.Namespace, Verb: "watch", Err: err, KubectlFlags: f.cfg.KubectlFlags}
		close(f.denied)
	})
}

// informerKey identifies an informer: cluster-scoped resources ignore the
// namespace of the scope.
type informerKey struct {
	gvr   schema.GroupVersionResource
	scope Scope
}

func keyOf(res Resource, scope Scope) informerKey {
	if !res.Namespaced {
		scope.Namespace = ""
	}
	return informerKey{gvr: res.GVR, scope: scope}
}

// Informer is a resource's shared informer with what the factory knows of it.
type Informer struct {
	Resource Resource
	// Scope is what the informer lists and watches.
	// Informer is nil until the Factory starts it; read it after Start.
	Scope Scope
	// Mode is fixed when the informer starts.
	Mode     Mode
	Informer cache.SharedIndexInformer

	count *counter
	// Requests counts list and watch requests and their failures.
	Requests RequestCounts
	lists    lists
	// cancel stops the informer; set when it starts.
	cancel context.CancelFunc
	// indexers are registered when the informer is created; nil after.
	// Guarded by the Factory's lock.
	indexers cache.Indexers
	// fields are the JSON paths objects are pruned to; nil: whole objects.
	// Fixed when the informer starts; guarded by the Factory's lock before.
	fields *jsonval.Paths
	// readers is how many event handlers take each object when the cache
	// keeps only Stubs (see Needs.Readers); 0: the cache keeps objects.
	// Fixed when the informer starts; guarded by the Factory's lock before.
	readers int
	// early are the Early functions of the requests that counted readers
	// (see Needs.Early); guarded by the Factory's lock.
	early []func(runtime.Object)
	// errLock guards lastErr, health, listAllowed, watchRefused and
	// watchDenied.
	errLock sync.Mutex
	lastErr error
	health  health
	// listAllowed: the last list request succeeded.
	listAllowed bool
	// watchRefused is the error of the last watch when RBAC denied it,
	// until a list says whether the list is allowed: a streamed list
	// is a watch, refused when the list is too.
	watchRefused error
	// watchDenied is the error of the last watch when RBAC denied it
	// while allowing the list; nil once a watch is allowed, or a list
	// fails. A list allowed meanwhile leaves the informer unhealthy: its
	// cache follows the cluster only by relists.
	watchDenied error
	// onWatchDenied is called with the error of each watch RBAC denies;
	// set when the informer starts.
	onWatchDenied func(error)
	started       time.Time
}

// health is how the API server has been answering an informer's requests.
type health struct {
	// err is the error of the last failed request; nil once a request
	// succeeds.
	err error
	// request is the kind of the last failed request: "list" or "watch".
	request string
	// since is when the first of the requests failing since the last
	// success failed.
	since time.Time
}

// OnRelist registers fn to be called with each list the informer makes
// after its first (see Relist). fn runs on the reflector's goroutine once
// the list is received, before the informer replaces its cache with it and
// hands its objects to the event handlers: the events of the relist (adds,
// updates, and deletions of the objects no longer listed, as
// cache.DeletedFinalStateUnknown) follow the call.
func (i *Informer) OnRelist(fn func(Relist)) {
	i.lists.lock.Lock()
	defer i.lists.lock.Unlock()
	i.lists.hooks = append(i.lists.hooks, fn)
}

// Objects returns how many objects the informer has received so far,
// counting those of an initial list still in progress.
func (i *Informer) Objects() int64 {
	if i.Informer.HasSynced() {
		return int64(len(i.Informer.GetIndexer().ListKeys()))
	}
	return i.count.n.Load()
}

// Transient reports whether the informer's cache keeps only a Stub of each
// object (see Needs.Readers).
func (i *Informer) Transient() bool { return i.readers > 0 }

// WatchDenied returns the error of the informer's last watch when RBAC
// denied it while allowing the list; nil otherwise (see
// Factory.WatchDenied).
func (i *Informer) WatchDenied() error {
	i.errLock.Lock()
	defer i.errLock.Unlock()
	return i.watchDenied
}

// LastError returns the last list or watch error the reflector reported.
// The reflector does not report successes: use HasSynced to know whether
// the cache is usable, and Healthy whether it keeps following the cluster.
func (i *Informer) LastError() error {
	i.errLock.Lock()
	defer i.errLock.Unlock()
	return i.lastErr
}

// setErr records an error the reflector reported: ListAndWatch failed.
// The request that failed was recorded already; an informer that still
// counts as healthy failed after its request succeeded (a list it could not
// decode, say), and fails until the next request succeeds.
func (i *Informer) setErr(ctx context.Context, err error) {
	i.errLock.Lock()
	defer i.errLock.Unlock()
	i.lastErr = err
	if i.health.err == nil && ctx.Err() == nil && !asksForList(err) {
		i.health = health{err: err, request: "list", since: time.Now()}
	}
}

// Healthy returns nil while the informer's requests to the API server
// succeed, and a *RequestError from the first request that fails until one
// succeeds again: the API server unreachable, the resource forbidden, or no
// longer served (its CRD deleted). Meanwhile the cache keeps what it held:
// the reflector retries by itself, with a backoff of up to 30 seconds, and
// the first list or watch request answered brings the cache up to date.
// An informer that has not synced yet is healthy while its first list is in
// progress.
func (i *Informer) Healthy() error {
	i.errLock.Lock()
	defer i.errLock.Unlock()
	if i.health.err == nil {
		return nil
	}
	return &RequestError{Request: i.health.request, Since: i.health.since, Err: i.health.err}
}

// recordRequest records the outcome of a list or watch request (request
// names which). A request that ended because the informer stops is not
// recorded, nor is an answer that only asks for a list again (410 Gone,
// a resourceVersion the server has not reached): neither says anything of
// the server's health.
func (i *Informer) recordRequest(ctx context.Context, request string, err error) {
	if ctx.Err() != nil || asksForList(err) {
		return
	}
	refused := request == "watch" && apierrors.IsForbidden(err) && !IsImpersonationDenied(err)
	if denied := i.record(request, err, refused); denied != nil && i.onWatchDenied != nil {
		i.onWatchDenied(denied)
	}
}

// record records a request's outcome under errLock, and returns the error
// of a watch RBAC denies while allowing the list when this request (a
// refused watch, or a list) says so.
func (i *Informer) record(request string, err error, refused bool) (denied error) {
	i.errLock.Lock()
	defer i.errLock.Unlock()
	// A watch RBAC refuses is denied while the list is allowed once a
	// list succeeds with it, before or after.
	switch {
	case refused && i.listAllowed:
		i.watchRefused, i.watchDenied = err, err
	case refused:
		i.watchRefused = err
	case request == "watch", err != nil:
		i.watchRefused, i.watchDenied = nil, nil
	case i.watchRefused != nil:
		i.watchDenied = i.watchRefused
	}
	if request == "list" {
		i.listAllowed = err == nil
	}
	switch {
	case err == nil && request == "list" && i.watchRefused != nil:
		// The list is allowed, the watch that follows is not: the
		// informer stays unhealthy, as the watch failed.
	case err == nil:
		i.health = health{}
	case i.health.err == nil:
		i.health = health{err: err, request: request, since: time.Now()}
	default:
		i.health.err, i.health.request = err, request
	}
	if refused || request == "list" {
		return i.watchDenied
	}
	return nil
}

// asksForList reports whether err is an answer that makes the reflector
// list again: the resourceVersion it asked for is gone (410) or not reached
// yet.
func asksForList(err error) bool {
	return err != nil && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err) ||
		apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge))
}

// RequestError is an informer whose list and watch requests fail.
type RequestError struct {
	// Request is the kind of the last request that failed: "list" or "watch".
	Request string
	// Since is when the first request failed since the last success.
	Since time.Time
	// Err is the error of the last request that failed.
	Err error
}

// Error says what fails, for how long and why, on one line:
// "watch failing for 3s: dial tcp 127.0.0.1:6443: connect: connection refused".
func (e *RequestError) Error() string {
	return fmt.Sprintf("%s failing for %s: %s", e.Request, time.Since(e.Since).Truncate(time.Second), e.Reason())
}

func (e *RequestError) Unwrap() error { return e.Err }

// Reason is why the last request failed, on one line: the API server's
// message, or the network error without the request's URL.
func (e *RequestError) Reason() string {
	err := e.Err
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := strings.ReplaceAll(apiMessage(err), "\n", " ")
	if apierrors.IsNotFound(e.Err) {
		msg += " (the resource type is no longer served: its CRD deleted?)"
	}
	return msg
}

// healthTracking is an informer's ListerWatcher that records the outcome of
// each request (see Informer.Healthy).
type healthTracking struct {
	lw  cache.ListerWatcherWithContext
	inf *Informer
	// watchListUnsupported is what the wrapped ListerWatcher says of
	// WatchList semantics (see watchlist.DoesClientNotSupportWatchListSemantics).
	watchListUnsupported bool
}

func newHealthTracking(lw cache.ListerWatcher, inf *Informer) *healthTracking {
	h := &healthTracking{lw: cache.ToListerWatcherWithContext(lw), inf: inf}
	if u, ok := lw.(interface{ IsWatchListSemanticsUnSupported() bool }); ok {
		h.watchListUnsupported = u.IsWatchListSemanticsUnSupported()
	}
	return h
}

func (h *healthTracking) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	obj, err := h.lw.ListWithContext(ctx, o)
	h.inf.recordRequest(ctx, "list", err)
	return obj, err
}

func (h *healthTracking) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	w, err := h.lw.WatchWithContext(ctx, o)
	h.inf.recordRequest(ctx, "watch", err)
	return w, err
}

// List and Watch make healthTracking a cache.ListerWatcher; the reflector
// calls the WithContext methods.
func (h *healthTracking) List(o metav1.ListOptions) (runtime.Object, error) {
	return h.ListWithContext(context.Background(), o)
}

func (h *healthTracking) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return h.WatchWithContext(context.Background(), o)
}

// IsWatchListSemanticsUnSupported passes on what the wrapped ListerWatcher says.
func (h *healthTracking) IsWatchListSemanticsUnSupported() bool { return h.watchListUnsupported }

// New returns a Factory that lists and watches through restConfig.
func New(restConfig *rest.Config, cfg Config) (*Factory, error) {
	cl, err := newClients(restConfig)
	if err != nil {
		return nil, err
	}
	return &Factory{cfg: cfg, clients: cl, informers: map[informerKey]*Informer{}, denied: make(chan struct{})}, nil
}

// Needs says what a consumer needs of a resource's objects.
type Needs struct {
	// Mode is the least the consumer can work with.
	Mode Mode
	// Indexers are index functions to register; the built-in "namespace"
	// index is always present.
	Indexers cache.Indexers
	// Fields are the JSON paths of the objects the consumer reads; objects
	// are pruned to the union of every consumer's fields (metadata,
	// apiVersion and kind are always kept) as they arrive. Nil: whole
	// objects.
	Fields *jsonval.Paths
	// Readers, when not 0, says the consumer reads objects only as its
	// event handlers receive them, with Take, in that many handlers: the
	// informer is then transient, its cache keeping a Stub of each object
	// instead of the object, unless another request for it (before it
	// starts) needs objects kept (Readers 0 or index functions). The
	// readers of every request are added up. A transient informer cannot
	// be requested again once started: a handler added then would receive
	// Stubs whose objects are gone.
	Readers int
	// Early, with Readers, receives the objects of the informer's first
	// list as they arrive, before the cache holds them: each as it is
	// received when the list is streamed as a watch's initial events,
	// instead of once the whole list is (client-go holds the list until
	// its end), else as the list replaces the empty cache. Each is handed
	// to Early once, on the informer's goroutine that receives it, in the
	// order received; Early may block, which holds the list back. The
	// Stub cached of an object handed to Early keeps none of it: its
	// events give Take nothing (see TakenEarly). A list streamed and cut
	// off before its end is streamed again, and objects handed to Early
	// then may never reach the cache (deleted meanwhile): by the time its
	// handler has synced, the reader forgets what it made of an object
	// Early received and no event of the handler named. The events after
	// the first list carry objects for Take as without Early. Early is
	// used only when every request that counts readers gives one.
	Early func(obj runtime.Object)
}

// Request returns the informer of res in scope, creating it for needs, or
// merges needs into an informer not yet started: index functions are
// added, the mode is raised (metadata → full), the fields kept are
// unioned. A started informer accepts new index functions (client-go
// reindexes what it holds) but neither a fuller mode nor fields it prunes.
// An index name defined twice for one resource is an error.
func (f *Factory) Request(res Resource, scope Scope, needs Needs) (*Informer, error) {
	f.lock.Lock()
	defer f.lock.Unlock()
	key := keyOf(res, scope)
	inf, ok := f.informers[key]
	if !ok {
		inf = &Informer{Resource: res, Scope: key.scope, Mode: needs.Mode, count: &counter{},
			indexers: cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, readers: needs.Readers}
		if needs.Fields != nil {
			inf.fields = alwaysKept()
			inf.fields.Union(needs.Fields)
		}
		if len(needs.Indexers) > 0 {
			inf.readers = 0
		}
		if inf.readers > 0 && needs.Early != nil {
			inf.early = append(inf.early, needs.Early)
		}
		f.informers[key] = inf
	} else if inf.Informer == nil {
		if needs.Fields == nil || inf.fields == nil {
			inf.fields = nil
		} else {
			inf.fields.Union(needs.Fields)
		}
		if needs.Readers == 0 || len(needs.Indexers) > 0 || inf.readers == 0 {
			inf.readers = 0
		} else {
			inf.readers += needs.Readers
			if needs.Early != nil {
				inf.early = append(inf.early, needs.Early)
			}
		}
	}
	if inf.Informer != nil {
		if inf.readers > 0 {
			return nil, fmt.Errorf("the %s informer keeps no objects, only what identifies them, and has started: a new reader would not receive them", res)
		}
		if needs.Mode > inf.Mode {
			return nil, fmt.Errorf("the %s informer already runs with %s objects; %s objects were requested after it started", res, inf.Mode, needs.Mode)
		}
		if inf.fields != nil && !inf.fields.Covers(needs.Fields) {
			return nil, fmt.Errorf("the %s informer already runs with objects pruned to %s; %s was requested after it started", res, inf.fields, needs.Fields)
		}
		if len(needs.Indexers) > 0 {
			if err := inf.Informer.AddIndexers(needs.Indexers); err != nil {
				return nil, fmt.Errorf("adding indexes to %s: %w", res, err)
			}
		}
		return inf, nil
	}
	if needs.Mode > inf.Mode {
		inf.Mode = needs.Mode
	}
	for name, fn := range needs.Indexers {
		if _, dup := inf.indexers[name]; dup {
			return nil, fmt.Errorf("index %q is defined twice for %s", name, res)
		}
		inf.indexers[name] = fn
	}
	if f.started {
		if err := f.startLocked(inf); err != nil {
			return nil, err
		}
	}
	return inf, nil
}

// alwaysKept are the fields every pruned object keeps: what identifies and
// describes it.
func alwaysKept() *jsonval.Paths {
	return jsonval.NewPaths([]string{"apiVersion"}, []string{"kind"}, []string{"metadata"})
}

// Informers returns every informer, ordered by resource name.
func (f *Factory) Informers() []*Informer {
	f.lock.Lock()
	defer f.lock.Unlock()
	out := make([]*Informer, 0, len(f.informers))
	for _, inf := range f.informers {
		out = append(out, inf)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource.String() < out[j].Resource.String() })
	return out
}

// Start creates and runs every requested informer until ctx ends. Calling
// it again is a no-op.
func (f *Factory) Start(ctx context.Context) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	if f.started {
		return nil
	}
	f.started = true
	f.ctx, f.stopAll = context.WithCancel(ctx)
	for _, inf := range f.informers {
		if err := f.startLocked(inf); err != nil {
			return err
		}
	}
	return nil
}

func (f *Factory) startLocked(inf *Informer) error {
	if f.shutdown {
		return errors.New("the factory has been shut down")
	}
	trim := !f.cfg.KeepManagedFields
	prepare := prepareFunc(inf.fields, trim, !f.cfg.KeepLastApplied)
	var wire *wirePruner
	if inf.Mode != ModeMetadata {
		wire = newWirePruner(inf.Resource.GVK, inf.fields, trim)
	}
	if wire != nil && wire.exact {
		// Decoded pruned already; an object received in JSON instead is
		// then kept whole, which costs memory but changes no answer.
		prepare = prepareFunc(nil, trim, !f.cfg.KeepLastApplied)
	}
	lw, example, err := f.clients.listWatchLocked(inf.Resource, inf.Mode, inf.Scope, f.listing(), inf.count, prepare, wire, &inf.Requests, &inf.lists)
	if err != nil {
		return err
	}
	tracked := newHealthTracking(lw, inf)
	if f.cfg.ObjectLimit > 0 {
		// A streamed initial list takes no limit.
		tracked.watchListUnsupported = true
	}
	si := cache.NewSharedIndexInformerWithOptions(tracked, example, cache.SharedIndexInformerOptions{
		ResyncPeriod:      f.cfg.ResyncPeriod,
		Indexers:          inf.indexers,
		ObjectDescription: inf.Resource.String(),
	})
	tf := transform(inf.Resource.GVK)
	if inf.readers > 0 {
		var early []func(runtime.Object)
		if len(inf.early) == inf.readers {
			early = inf.early
		}
		tf = stubTransform(tf, inf.readers, early, &inf.lists.filled)
	}
	inf.early = nil
	if err := si.SetTransform(tf); err != nil {
		return err
	}
	inf.onWatchDenied = func(err error) { f.watchDenied(inf, err) }
	if err := si.SetWatchErrorHandlerWithContext(func(ctx context.Context, _ *cache.Reflector, err error) {
		inf.setErr(ctx, err)
	}); err != nil {
		return err
	}
	inf.Informer = si
	inf.indexers = nil
	inf.started = time.Now()
	ctx, cancel := context.WithCancel(f.ctx)
	inf.cancel = cancel
	f.running.Go(func() { si.RunWithContext(ctx) })
	return nil
}

// listing is how the informers' list requests are shaped (see
// Config.UseAPIServerCache and Config.ObjectLimit).
func (f *Factory) listing() listing {
	return listing{apiServerCache: f.cfg.UseAPIServerCache, limit: f.cfg.ObjectLimit}
}

// Shutdown stops every informer the factory started, those Detach or Stop
// left running too, and waits until their goroutines have returned, as
// client-go's SharedInformerFactory.Shutdown does. No informer starts after
// it; it may be called more than once, and before Start.
func (f *Factory) Shutdown() {
	f.lock.Lock()
	f.shutdown = true
	if f.stopAll != nil {
		f.stopAll()
	}
	f.lock.Unlock()
	f.running.Wait()
}

// Detach forgets the informer of res in scope without stopping it and
// returns it (nil when there is none): a later Request creates a new one,
// which lists again, while the detached one runs on, its handlers served,
// until Stop. Reattach undoes it.
func (f *Factory) Detach(res Resource, scope Scope) *Informer {
	f.lock.Lock()
	defer f.lock.Unlock()
	key := keyOf(res, scope)
	inf := f.informers[key]
	delete(f.informers, key)
	return inf
}

// Reattach makes inf, detached, the informer of its resource and scope
// again; the informer that replaced it, if any, is stopped.
func (f *Factory) Reattach(inf *Informer) {
	f.lock.Lock()
	defer f.lock.Unlock()
	key := keyOf(inf.Resource, inf.Scope)
	if cur, ok := f.informers[key]; ok && cur != inf && cur.cancel != nil {
		cur.cancel()
	}
	f.informers[key] = inf
}

// Stop stops inf and, when it is still the factory's informer for its
// resource and scope, forgets it. An informer already replaced (after
// Detach and a new Request) is only stopped, so the replacement runs on.
func (f *Factory) Stop(inf *Informer) {
	f.lock.Lock()
	defer f.lock.Unlock()
	if inf.cancel != nil {
		inf.cancel()
	}
	key := keyOf(inf.Resource, inf.Scope)
	if f.informers[key] == inf {
		delete(f.informers, key)
	}
}

// RequestCounts counts an informer's requests to the API server.
type RequestCounts struct {
	Lists, ListErrors, Watches, WatchErrors atomic.Uint64
	// Relists counts the lists completed after the first one, whether
	// made by a list request or streamed by a watch (see Relist).
	Relists atomic.Uint64
	// Limited counts the lists cut at Config.ObjectLimit: the server had
	// more objects than the limit, which are not in the cache.
	Limited atomic.Uint64
}

// transform stamps each object with its apiVersion and kind: typed lists
// leave them empty, metadata-only lists say PartialObjectMetadata.
func transform(gvk schema.GroupVersionKind) cache.TransformFunc {
	return func(obj any) (any, error) {
		if ro, ok := obj.(runtime.Object); ok {
			ro.GetObjectKind().SetGroupVersionKind(gvk)
		}
		return obj, nil // cache.DeletedFinalStateUnknown and the like pass
	}
}

// prepareFunc returns what is done to each object as it arrives from the
// server, before the reflector stores it anywhere: with trim, managedFields
// are dropped, and with lastApplied too the last-applied annotation; with
// fields, everything else is pruned. Nil when there is nothing to do.
func prepareFunc(fields *jsonval.Paths, trim, lastApplied bool) func(runtime.Object) {
	if fields == nil && !trim {
		return nil
	}
	return func(obj runtime.Object) {
		if trim {
			trimObject(obj, lastApplied)
		}
		jsonval.Prune(obj, fields)
	}
}

// trimObject drops managedFields and, with lastApplied, the last-applied
// annotation.
func trimObject(obj runtime.Object, lastApplied bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	if m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	if ann := m.GetAnnotations(); lastApplied && ann != nil {
		if _, ok := ann[LastAppliedAnnotation]; ok {
			delete(ann, LastAppliedAnnotation)
			if len(ann) == 0 {
				ann = nil
			}
			m.SetAnnotations(ann)
		}
	}
}

// SyncError says which resources did not sync and why. What bounded the
// wait is the caller's to name.
type SyncError struct {
	// Resources that did not sync, with the last error of each (nil when
	// the sync was still in progress at the deadline).
	Pending map[string]error
	Timeout time.Duration
	// Cause is the first list error that ended the wait early, if any.
	Cause error
}

func (e *SyncError) Error() string {
	if e.Cause != nil {
		return e.Cause.Error()
	}
	names := make([]string, 0, len(e.Pending))
	for n := range e.Pending {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "timed out after %s waiting for the cache of %s to sync", e.Timeout, strings.Join(names, ", "))
	for _, n := range names {
		if err := e.Pending[n]; err != nil {
			fmt.Fprintf(&b, "\n  %s: %v", n, err)
		}
	}
	return b.String()
}

func (e *SyncError) Unwrap() error { return e.Cause }

// WaitForSync waits until every informer has synced. With failFast, the
// first list error that cannot go away by retrying (forbidden,
// unauthorized, not found, unreachable server) ends the wait with that
// error, as kubectl get would; otherwise errors are retried until timeout.
// progress, when not nil, receives one line per resource every interval,
// rewritten in place (for a terminal).
func (f *Factory) WaitForSync(ctx context.Context, timeout time.Duration, failFast bool, progress io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	lastReport := time.Now()
	p := newProgress(progress)
	defer p.done()
	for {
		all := true
		pending := map[string]error{}
		for _, inf := range f.Informers() {
			if inf.Informer == nil {
				return fmt.Errorf("the %s informer was never started", inf.Resource)
			}
			if inf.Informer.HasSynced() {
				continue
			}
			all = false
			err := inf.LastError()
			pending[inf.Resource.String()] = err
			if failFast && err != nil && IsPermanent(err) {
				return &SyncError{Pending: pending, Timeout: timeout, Cause: explainListError(inf.Resource, inf.Scope, err, f.cfg.KubectlFlags)}
			}
		}
		if all {
			p.report(f.Informers(), true)
			return nil
		}
		if time.Since(lastReport) > 100*time.Millisecond {
			p.report(f.Informers(), false)
			lastReport = time.Now()
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return &SyncError{Pending: pending, Timeout: timeout}
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// IsPermanent reports whether err, from a list or watch request, is one
// that retrying does not mend: forbidden, unauthorized, not found, a bad
// request, or a resource the server does not serve.
func IsPermanent(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err) ||
		apierrors.IsBadRequest(err) || apierrors.IsMethodNotSupported(err) || discoveryError(err) != err
}

// ForbiddenError is a list or watch that RBAC denied.
type ForbiddenError struct {
	Resource  Resource
	Namespace string
	// Verb is the verb denied: "watch" when the list was allowed and the
	// watch was not; "" (list) otherwise.
	Verb string
	Err  error
	// ReadBy, when not empty, says what reads the resource besides the
	// resources queried, as the expressions write it (`children(…,
	// "replicasets") in --columns n`); the message names it.
	ReadBy string
	// KubectlFlags are carried by the kubectl auth can-i command the
	// message suggests (see Config.KubectlFlags).
	KubectlFlags []string
}

func (e *ForbiddenError) Error() string {
	msg := apiMessage(e.Err)
	if IsImpersonationDenied(e.Err) {
		return msg // not RBAC on the resource: what to do is the caller's to say
	}
	verb := "list"
	if e.Verb != "" {
		verb = e.Verb
	}
	canI := []string{"kubectl", "auth", "can-i", verb, e.Resource.String()}
	where, other := "cluster-wide", ""
	switch {
	case e.Resource.Namespaced && e.Namespace != "":
		where = fmt.Sprintf("in namespace %q", e.Namespace)
		canI = append(canI, "-n", e.Namespace)
		other = " or query a namespace you may read"
	case e.Resource.Namespaced:
		where = "in all namespaces"
		canI = append(canI, "-A")
		other = " or query a namespace you may read"
	}
	canI = append(canI, e.KubectlFlags...)
	if e.ReadBy != "" {
		where += " (read by " + e.ReadBy + ")"
	}
	if verb == "watch" {
		return fmt.Sprintf("%s\nRBAC denied watch of %s %s while allowing its list: the informer follows changes by watching; ask for the watch verb there (check with %s)%s",
			msg, e.Resource, where, ShellJoin(canI), other)
	}
	return fmt.Sprintf("%s\nRBAC denied list/watch of %s %s: the informer needs the list and watch verbs there; ask for them (check with %s)%s",
		msg, e.Resource, where, ShellJoin(canI), other)
}

// IsImpersonationDenied reports whether err is the API server refusing to
// impersonate a user, group, UID or service account (kubectl's --as and
// --as-group): a 403 whose details name what the impersonation filter
// checks, the impersonated users, groups, UIDs or extras, or a service
// account by name (a request for service accounts themselves names none
// when it lists them).
//
// Constrained impersonation (Kubernetes 1.34 and later) refuses with the
// details of the resource requested instead: only the Status's message
// names the verb refused, impersonate-on:MODE:VERB. For it alone the
// message is read, as the API server writes it ("cannot impersonate-on:").
func IsImpersonationDenied(err error) bool {
	var se apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errors.As(err, &se) {
		return false
	}
	st := se.Status()
	if d := st.Details; d != nil {
		switch {
		case d.Group == "" && (d.Kind == "users" || d.Kind == "groups" || (d.Kind == "serviceaccounts" && d.Name != "")):
			return true
		case d.Group == "authentication.k8s.io" && (d.Kind == "uids" || d.Kind == "userextras" || strings.HasPrefix(d.Kind, "userextras/")):
			return true
		}
	}
	return strings.Contains(st.Message, "cannot impersonate-on:")
}

// TokenPlaceholder stands for the value of --token in the kubectl commands
// that messages suggest: a shell variable the user sets to the token, never
// the secret itself. ShellJoin leaves it unquoted.
const TokenPlaceholder = `"$TOKEN"`

// ShellJoin joins a command's words for a shell: words holding anything
// but letters, digits and -_./:=@, are single-quoted, but for
// TokenPlaceholder.
func ShellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w
		if w == TokenPlaceholder {
			continue
		}
		if w == "" || strings.IndexFunc(w, func(r rune) bool {
			return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune("-_./:=@,", r)
		}) >= 0 {
			out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

func (e *ForbiddenError) Unwrap() error { return e.Err }

func apiMessage(err error) string {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return se.Status().Message
	}
	return err.Error()
}

func explainListError(res Resource, scope Scope, err error, kubectlFlags []string) error {
	switch {
	case apierrors.IsForbidden(err):
		return &ForbiddenError{Resource: res, Namespace: scope.Namespace, Err: err, KubectlFlags: kubectlFlags}
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("listing %s: %w\nthe server did not accept your credentials: log in again or check the kubeconfig, its context and user", res, err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("listing %s: %w\nthe resource type was removed (a CRD deleted?) or the namespace does not exist", res, err)
	}
	return fmt.Errorf("listing %s: %w", res, discoveryError(err))
}
