package factory

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Mode is how a resource's objects are fetched and cached.
type Mode int

const (
	// ModeMetadata caches *metav1.PartialObjectMetadata: only apiVersion,
	// kind and metadata. The cheapest; enough when nothing reads spec or status.
	ModeMetadata Mode = iota
	// ModeFull caches whole objects: typed Go structs decoded from protobuf
	// for the types client-go knows, *unstructured.Unstructured otherwise (CRDs).
	ModeFull
)

func (m Mode) String() string {
	if m == ModeMetadata {
		return "metadata"
	}
	return "full"
}

// clients are the API clients informers list and watch with. They share
// one HTTP client, and with it one pool of connections.
type clients struct {
	base     *rest.Config
	http     *http.Client
	dynamic  dynamic.Interface
	metadata metadata.Interface

	// typed holds one protobuf REST client per group version, created on
	// first use; guarded by the Factory's lock.
	typed map[schema.GroupVersion]rest.Interface
}

func newClients(cfg *rest.Config) (*clients, error) {
	cfg = rest.CopyConfig(cfg)
	// Informers make one list and one watch per resource; client-side rate
	// limiting only delays them.
	cfg.QPS, cfg.Burst = -1, 0
	streamOverHTTP1(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return oneRequestPerConn{bufferedBodies{rt}} })
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	md, err := metadata.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	return &clients{base: cfg, http: hc, dynamic: dyn, metadata: md, typed: map[schema.GroupVersion]rest.Interface{}}, nil
}

// Stream keepalive: a connection whose peer is gone without a word (a
// network partition, a node lost) is closed after streamKeepAliveIdle of
// silence plus streamKeepAliveCount unanswered probes streamKeepAliveInterval
// apart: 30 s, as HTTP/2's health check (a ping after 30 s of silence)
// would roughly have it.
const (
	streamKeepAliveIdle     = 15 * time.Second
	streamKeepAliveInterval = 5 * time.Second
	streamKeepAliveCount    = 3
)

// streamOverHTTP1 makes cfg's clients speak HTTP/1.1, a TCP connection per
// request (see oneRequestPerConn), and dial with a short TCP keepalive.
//
// Lists and watches move the bulk of the data between the API server and
// this process, a long stream per resource. Over HTTP/1.1 a stream costs
// both sides markedly less CPU than over HTTP/2, whose frames, flow-control
// window updates and per-frame hand-offs between goroutines are paid for
// each 16 KiB: filling a cache of 10,000 pods took the API server about
// 0.34 s of CPU instead of 0.47 s, and this process 0.58 s instead of 0.65 s
// (medians of 12 alternated starts of the exporter; see bench/RESULTS.md).
// On a small machine the two share, that is the time to a filled cache.
//
// HTTP/2 also pings a silent connection to find a dead peer; here TCP
// keepalive does it (see streamKeepAliveIdle), unless cfg dials with a
// function of its own.
func streamOverHTTP1(cfg *rest.Config) {
	cfg.NextProtos = []string{"http/1.1"}
	if cfg.Dial == nil {
		d := &net.Dialer{
			Timeout: 30 * time.Second,
			KeepAliveConfig: net.KeepAliveConfig{
				Enable:   true,
				Idle:     streamKeepAliveIdle,
				Interval: streamKeepAliveInterval,
				Count:    streamKeepAliveCount,
			},
		}
		cfg.Dial = d.DialContext
	}
}

// oneRequestPerConn closes each connection once its request is done.
// Informers make few requests, each long (a list, then a watch that lasts
// minutes), so a connection kept idle for the next would seldom be used
// while its goroutines outlived the informers by the transport's idle
// timeout of 90 seconds, longer than a query.
type oneRequestPerConn struct{ rt http.RoundTripper }

func (o oneRequestPerConn) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Close = true
	return o.rt.RoundTrip(req)
}

// bufferedBodies reads response bodies through a 64 KiB buffer. A watch
// decodes its events frame by frame, in reads of a few KiB, each a read of
// the connection's buffer of 4 KiB or a system call (and, over HTTP/2, a
// flow-control window update written and flushed at once): thousands while
// a large list streams in. Reading ahead in large chunks makes them as
// many times fewer; a read still returns as soon as any data has arrived,
// so events are not delayed.
type bufferedBodies struct{ rt http.RoundTripper }

func (b bufferedBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.rt.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = &bufferedBody{Reader: bufio.NewReaderSize(resp.Body, 64<<10), body: resp.Body}
	return resp, nil
}

type bufferedBody struct {
	*bufio.Reader
	body io.ReadCloser
}

func (b *bufferedBody) Close() error { return b.body.Close() }

// isTyped reports whether objects of gvk can be decoded into client-go's Go types.
func isTyped(gvk schema.GroupVersionKind) bool {
	return scheme.Scheme.Recognizes(gvk) && scheme.Scheme.Recognizes(gvk.GroupVersion().WithKind(gvk.Kind+"List"))
}

// typedClientLocked returns a REST client for gv that speaks protobuf,
// shared by the informers of gv, or, with wire, one of the caller's own
// whose decoder prunes with it (the HTTP connections are shared anyway).
// The caller holds the Factory's lock.
func (c *clients) typedClientLocked(gv schema.GroupVersion, wire *wirePruner) (rest.Interface, error) {
	if rc, ok := c.typed[gv]; ok && wire == nil {
		return rc, nil
	}
	cfg := rest.CopyConfig(c.base)
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	if wire != nil {
		cfg.NegotiatedSerializer = newPruningSerializer(cfg.NegotiatedSerializer, wire)
	}
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	rc, err := rest.RESTClientForConfigAndClient(cfg, c.http)
	if err != nil {
		return nil, err
	}
	if wire == nil {
		c.typed[gv] = rc
	}
	return rc, nil
}

// counter counts objects received while a cache fills, for progress reports.
type counter struct{ n atomic.Int64 }

// Listed is one object of a list: its cache key (namespace/name) and
// resourceVersion.
type Listed struct {
	Key, ResourceVersion string
}

// Relist is a list an informer made after its first one: when its watch
// expired (410 Gone) or could not be resumed after a reconnect, the
// reflector lists everything again and replaces its cache with the result.
type Relist struct {
	// Objects are the objects listed, in the order received.
	Objects []Listed
}

// lists tracks an informer's lists: how many completed, and who wants to
// hear of relists.
type lists struct {
	completed atomic.Int64
	// filled is set once the first list has been handed to the cache:
	// at the bookmark that ends a streamed list, or as the watch that
	// follows a list starts.
	filled atomic.Bool
	// lock guards hooks.
	lock  sync.Mutex
	hooks []func(Relist)
}

// relisting reports whether the list about to be received is a relist
// that someone wants the objects of.
func (l *lists) relisting() (relist, wantObjects bool) {
	if l.completed.Load() == 0 {
		return false, false
	}
	l.lock.Lock()
	defer l.lock.Unlock()
	return true, len(l.hooks) > 0
}

// done records a completed list; a relist is counted in reqs and handed
// to the hooks.
func (l *lists) done(relist bool, objects []Listed, reqs *RequestCounts) {
	l.completed.Add(1)
	if !relist {
		return
	}
	reqs.Relists.Add(1)
	l.lock.Lock()
	hooks := slices.Clone(l.hooks)
	l.lock.Unlock()
	for _, h := range hooks {
		h(Relist{Objects: objects})
	}
}

func listed(obj runtime.Object) (Listed, bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return Listed{}, false
	}
	key := m.GetName()
	if ns := m.GetNamespace(); ns != "" {
		key = ns + "/" + key
	}
	return Listed{Key: key, ResourceVersion: m.GetResourceVersion()}, true
}

// listWatch returns the ListerWatcher and the example object of an informer
// for res in mode, scoped by scope. Objects received are counted in cnt and
// passed to prepare (when not nil) before the reflector sees them, typed
// objects decoded from encodings pruned by wire (when not nil); requests
// are counted in reqs and completed lists reported to ls.
// The caller holds the Factory's lock.
func (c *clients) listWatchLocked(res Resource, mode Mode, scope Scope, shape listing, cnt *counter, prepare func(runtime.Object), wire *wirePruner, reqs *RequestCounts, ls *lists) (cache.ListerWatcher, runtime.Object, error) {
	ns := ""
	if res.Namespaced {
		ns = scope.Namespace
	}
	tweak := func(o *metav1.ListOptions) {
		o.LabelSelector = scope.LabelSelector
		o.FieldSelector = scope.FieldSelector
	}
	var list func(context.Context, metav1.ListOptions) (runtime.Object, error)
	var watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)
	var example runtime.Object

	switch {
	case mode == ModeMetadata:
		ri := c.metadata.Resource(res.GVR)
		var nri metadata.ResourceInterface = ri
		if res.Namespaced {
			nri = ri.Namespace(ns)
		}
		list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return nri.List(ctx, o) }
		watchFn = nri.Watch
		example = &metav1.PartialObjectMetadata{}
	case isTyped(res.GVK):
		rc, err := c.typedClientLocked(res.GVK.GroupVersion(), wire)
		if err != nil {
			return nil, nil, err
		}
		list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return rc.Get().NamespaceIfScoped(ns, res.Namespaced).Resource(res.GVR.Resource).
				VersionedParams(&o, scheme.ParameterCodec).Do(ctx).Get()
		}
		watchFn = func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.Watch = true
			return rc.Get().NamespaceIfScoped(ns, res.Namespaced).Resource(res.GVR.Resource).
				VersionedParams(&o, scheme.ParameterCodec).Watch(ctx)
		}
		obj, err := scheme.Scheme.New(res.GVK)
		if err != nil {
			return nil, nil, fmt.Errorf("creating a %s: %w", res.GVK, err)
		}
		example = obj
	default:
		ri := c.dynamic.Resource(res.GVR)
		var nri dynamic.ResourceInterface = ri
		if res.Namespaced {
			nri = ri.Namespace(ns)
		}
		list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return nri.List(ctx, o) }
		watchFn = nri.Watch
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(res.GVK)
		example = u
	}

	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			tweak(&o)
			shape.options(&o)
			reqs.Lists.Add(1)
			obj, err := list(ctx, o)
			if err != nil {
				reqs.ListErrors.Add(1)
				return nil, err
			}
			cut, err := shape.truncate(obj)
			if err != nil {
				reqs.ListErrors.Add(1)
				return nil, err
			}
			if cut {
				reqs.Limited.Add(1)
			}
			cnt.n.Add(int64(meta.LenList(obj)))
			relist, wantObjects := ls.relisting()
			var objects []Listed
			if prepare != nil || wantObjects {
				_ = meta.EachListItem(obj, func(item runtime.Object) error {
					if prepare != nil {
						prepare(item)
					}
					if l, ok := listed(item); ok && wantObjects {
						objects = append(objects, l)
					}
					return nil
				})
			}
			ls.done(relist, objects, reqs)
			return obj, nil
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			tweak(&o)
			reqs.Watches.Add(1)
			w, err := watchFn(ctx, o)
			if err != nil {
				reqs.WatchErrors.Add(1)
				return nil, err
			}
			initial := o.SendInitialEvents != nil && *o.SendInitialEvents
			if !initial {
				ls.filled.Store(true)
			}
			if !initial && prepare == nil {
				return w, nil
			}
			var st *streamedList
			if initial {
				st = &streamedList{cnt: cnt, lists: ls, reqs: reqs}
				st.relist, st.wantObjects = ls.relisting()
			}
			return preparingWatch(w, st, prepare), nil
		},
	}
	return lw, example, nil
}

// listing shapes an informer's list requests: resourceVersion=0 (the API
// server's watch cache) and a limit on the objects listed (see
// Config.UseAPIServerCache and Config.ObjectLimit).
type listing struct {
	apiServerCache bool
	limit          int64
}

// options sets the resource version and limit of a list request.
func (l listing) options(o *metav1.ListOptions) {
	if l.apiServerCache && o.Continue == "" {
		o.ResourceVersion = "0"
		o.ResourceVersionMatch = ""
	}
	if l.limit > 0 {
		o.Limit = l.limit
	}
}

// truncate keeps the first limit objects of a list and ends it there: a
// page's continue token would make the pager ask for more. It reports
// whether the server had more objects than the limit.
func (l listing) truncate(obj runtime.Object) (bool, error) {
	if l.limit <= 0 {
		return false, nil
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		return false, err
	}
	cut := int64(len(items)) > l.limit
	if cut {
		if err := meta.SetList(obj, items[:l.limit]); err != nil {
			return false, err
		}
	}
	if lm, err := meta.ListAccessor(obj); err == nil {
		if lm.GetContinue() != "" {
			cut = true
		}
		lm.SetContinue("")
		lm.SetRemainingItemCount(nil)
	}
	return cut, nil
}

// streamedList follows a list streamed as the initial events of a watch
// (WatchList): its ADDED events are counted, and it is complete at the
// bookmark that marks the end of the initial events.
type streamedList struct {
	cnt                 *counter
	lists               *lists
	reqs                *RequestCounts
	relist, wantObjects bool
	objects             []Listed
	complete            bool
}

// event follows ev before it is handed on, and reports whether it is the
// bookmark that ends the list. Only once the reflector has received that
// bookmark has it transformed every object of the list: the caller calls
// filled then, not before.
func (s *streamedList) event(ev watch.Event) (ends bool) {
	switch {
	case s.complete:
	case ev.Type == watch.Added:
		s.cnt.n.Add(1)
		if l, ok := listed(ev.Object); ok && s.wantObjects {
			s.objects = append(s.objects, l)
		}
	case ev.Type == watch.Bookmark:
		if m, err := meta.Accessor(ev.Object); err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
			s.complete = true
			s.lists.done(s.relist, s.objects, s.reqs)
			s.objects = nil
			return true
		}
	}
	return false
}

// filled marks the first list handed to the cache (see lists.filled).
func (s *streamedList) filled() { s.lists.filled.Store(true) }

// preparingWatch passes each event's object to prepare and, for a streamed
// initial list (st not nil), follows the list.
func preparingWatch(w watch.Interface, st *streamedList, prepare func(runtime.Object)) watch.Interface {
	out := make(chan watch.Event)
	cw := &proxyWatch{inner: w, out: out, done: make(chan struct{})}
	go func() {
		defer close(out)
		for ev := range w.ResultChan() {
			if prepare != nil && ev.Object != nil && (ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted) {
				prepare(ev.Object)
			}
			ends := st != nil && st.event(ev)
			select {
			case out <- ev:
			case <-cw.done:
				return
			}
			// The reflector transforms an event after receiving it and
			// receives the next only then: with the bookmark received, the
			// list's last object has been transformed as part of it.
			if ends {
				st.filled()
			}
		}
	}()
	return cw
}

type proxyWatch struct {
	inner watch.Interface
	out   chan watch.Event
	done  chan struct{}
	once  atomic.Bool
}

func (p *proxyWatch) Stop() {
	if p.once.CompareAndSwap(false, true) {
		close(p.done)
		p.inner.Stop()
	}
}

func (p *proxyWatch) ResultChan() <-chan watch.Event { return p.out }
