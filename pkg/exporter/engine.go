package exporter

import (
	"bufio"
	"hash/fnv"
	"hash/maphash"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// Shard selects the objects of one replica when the exporter is sharded.
type Shard struct {
	// Index is this replica's shard, 0 ≤ Index < Total.
	Index int
	// Total is the number of shards; 0 or 1: not sharded.
	Total int
}

// owns reports whether the object with uid belongs to this shard: the
// jump consistent hash (Lamping and Veach) of the FNV-1a 64-bit hash of
// its UID, over Total buckets, is Index. kube-state-metrics assigns
// objects to shards the same way, so a replica of either serves the same
// objects for the same shard.
func (s Shard) owns(uid string) bool {
	if s.Total <= 1 {
		return true
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	return jumpHash(h.Sum64(), s.Total) == s.Index
}

// jumpHash returns the bucket, 0 ≤ bucket < buckets, of key by the jump
// consistent hash: when buckets grows by one, only the keys that move to
// the new bucket change buckets.
func jumpHash(key uint64, buckets int) int {
	b, j := int64(-1), int64(0)
	for j < int64(buckets) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(b)
}

// resourceState is a configured resource's families and event counters.
type resourceState struct {
	name     string // as the config names it
	families []*familyState
	// slots number the objects that have been computed and not deleted;
	// the families keep their lines by slot.
	slots *objectSlots
	// converter prepares an object for the families' programs; nil when
	// they have none.
	converter *indexers.Program
	// inputs tell the families to compute again when an object changes;
	// nil: all of them.
	inputs *inputs
	// events counts handler events by type: add, update, delete.
	events [3]atomic.Uint64
	// lastEvent is the Unix time in seconds of the newest event.
	lastEvent atomic.Int64
	// initial counts the events of the handlers' initial lists (every
	// object cached when the handler was added) not computed yet.
	initial atomic.Int64
	// served is set once the resource's families are written on scrapes
	// (see Engine.serves); it stays set.
	served atomic.Bool
	// fill follows the objects of the first lists computed as they
	// arrived (see Engine.Early); nil without.
	fill *fillState
}

// fillState follows the objects of a resource's first lists computed as
// they arrived (see Engine.Early) until the handlers have synced: an
// object that no event then named was received by a list cut off before
// its end, and deleted before it was listed again; its series are removed
// (see Engine.serves).
type fillState struct {
	mu sync.Mutex
	// named holds the UIDs that the handlers' events named; nil once
	// the objects no event named have been removed.
	named map[string]struct{}
}

// name records that an event of the handlers named obj, while fs follows
// them.
func (fs *fillState) name(obj any) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.named != nil {
		fs.named[objectUID(obj)] = struct{}{}
	}
}

// Event types counted per resource.
const (
	eventAdd = iota
	eventUpdate
	eventDelete
)

var eventNames = [3]string{"add", "update", "delete"}

// Engine computes the series of a compiled config's families from object
// events and writes them out on scrapes. It is safe for concurrent use.
type Engine struct {
	compiled  *Compiled
	shard     Shard
	resources []*resourceState
	deps      *dependencies
	now       func() int64

	// getters read the current object of a configured resource by cache
	// key; set by Bind before any event, read-only after.
	getters []Getter
	// stripes serialise the computation of one object's series, so that a
	// recomputation triggered by a looked-up object cannot overwrite newer
	// series computed from the object's own update.
	stripes [64]sync.Mutex
	// seed keys spread.
	seed maphash.Seed

	// queues feed the workers that compute series from events; an object
	// always goes to the same worker, so its events stay in order.
	queues []chan event
	// busy counts, by queue, the events queued or being computed; an
	// event of a queue with none is computed by the handler that received
	// it (see enqueue).
	busy []atomic.Int64
	// pending counts events queued and not yet computed.
	pending  atomic.Int64
	computed func(time.Duration)
	// synced gates the families of a resource until its informers have
	// synced (see SetGate); nil: no gate.
	synced func(i int) bool
	// closeMu guards closed and the queues' closing against enqueue.
	closeMu sync.RWMutex
	closed  bool
}

// event is an informer event for the workers.
type event struct {
	resource int
	obj      any
	delete   bool
	// initial marks an add of the handler's initial list.
	initial bool
	// at is when the handler received it.
	at time.Time
	// done, when not nil, is closed once the event is computed; after,
	// when not nil, is the done of an event of another object that must
	// be computed first (see Handler: an object replaced by another of
	// the same name). An event only waits for one handed over before it,
	// so the workers never wait for each other in a cycle.
	done  chan struct{}
	after <-chan struct{}
}

// EngineOptions configure an Engine.
type EngineOptions struct {
	// MaxSeriesPerMetric caps each family's series; 0: no cap.
	MaxSeriesPerMetric int
	// Shard selects the objects of this replica.
	Shard Shard
	// Now returns the current Unix time in seconds; default none.
	Now func() int64
	// Workers compute series from events in parallel; default GOMAXPROCS.
	Workers int
	// Computed, when not nil, is called after the series of each event
	// are computed, with the time since its handler received it.
	Computed func(time.Duration)
}

func (e *Engine) work(q int, events <-chan event) {
	for ev := range events {
		e.compute(ev)
		e.busy[q].Add(-1)
	}
}

// compute computes an event handed to enqueue.
func (e *Engine) compute(ev event) {
	if ev.after != nil {
		<-ev.after
	}
	if ev.delete {
		e.Delete(ev.resource, ev.obj)
	} else {
		e.Update(ev.resource, ev.obj)
	}
	if ev.initial {
		e.resources[ev.resource].initial.Add(-1)
	}
	if ev.done != nil {
		close(ev.done)
	}
	e.pending.Add(-1)
	if e.computed != nil {
		e.computed(time.Since(ev.at))
	}
}

// enqueue hands an event to the worker of its object, and reports
// whether it did: not once the engine is closed. An event after the
// initial lists, that waits for no other, when its worker has nothing
// queued or being computed, is computed at once by the caller: an update
// at a time, as a watch brings them, then costs no handover to a worker
// (waking it, and its goroutine's switches). The events of an object
// still come in order: its worker computes none of them meanwhile, and
// each handler hands over its events one at a time.
func (e *Engine) enqueue(ev event) bool {
	obj := ev.obj
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	q := e.queueOf(objectUID(obj))
	e.closeMu.RLock()
	defer e.closeMu.RUnlock()
	if e.closed {
		return false // a handler still running as the engine was closed
	}
	e.pending.Add(1)
	if ev.initial {
		e.resources[ev.resource].initial.Add(1)
	}
	ev.at = time.Now()
	if !ev.initial && ev.after == nil && e.busy[q].CompareAndSwap(0, 1) {
		e.compute(ev)
		e.busy[q].Add(-1)
		return true
	}
	e.busy[q].Add(1)
	e.queues[q] <- ev
	return true
}

// Idle reports whether every event handed to the engine's handlers has
// been computed.
func (e *Engine) Idle() bool { return e.pending.Load() == 0 }

// Pending returns the number of events handed to the engine's handlers and
// not computed yet.
func (e *Engine) Pending() int64 { return e.pending.Load() }

// Close stops the workers once the events queued are computed; events
// handed to the engine's handlers afterwards are ignored. Calling it again
// does nothing.
func (e *Engine) Close() {
	e.closeMu.Lock()
	defer e.closeMu.Unlock()
	if e.closed {
		return
	}
	e.closed = true
	for _, q := range e.queues {
		close(q)
	}
}

// NewEngine returns an Engine for c, with no series yet.
func NewEngine(c *Compiled, opts EngineOptions) *Engine {
	e := &Engine{compiled: c, shard: opts.Shard, deps: newDependencies(), now: opts.Now, computed: opts.Computed, seed: maphash.MakeSeed()}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	e.busy = make([]atomic.Int64, workers)
	for q := range workers {
		e.queues = append(e.queues, make(chan event, 256))
		go e.work(q, e.queues[q])
	}
	for _, r := range c.Resources {
		rs := &resourceState{name: r.Config.Resource, converter: converter(r), slots: newObjectSlots()}
		for _, f := range r.Families {
			rs.families = append(rs.families, newFamilyState(f, opts.MaxSeriesPerMetric))
		}
		rs.shareHeads()
		rs.inputs = newInputs(r, rs.families)
		e.resources = append(e.resources, rs)
	}
	return e
}

// shareHeads makes the plain families of rs whose identity labels are
// those of most of them keep each object's identity labels once, in
// rs.slots (see familyState.heads). Families whose labels may not tell the
// objects apart check each line against the others' and keep them whole.
func (rs *resourceState) shareHeads() {
	count := map[string]int{}
	best := ""
	for _, fs := range rs.families {
		if fs.f.Aggregate != AggregateNone || fs.claims != nil || fs.identity == 0 {
			continue
		}
		k := fs.identityKey()
		if count[k]++; count[k] > count[best] {
			best = k
		}
	}
	for _, fs := range rs.families {
		if best != "" && fs.f.Aggregate == AggregateNone && fs.claims == nil && fs.identity > 0 && fs.identityKey() == best {
			fs.heads = rs.slots
		}
	}
}

// Early returns the function that computes the series of the objects of
// resource i's first lists as its informers receive them (see
// factory.Needs.Early), so that no informer holds a whole list before its
// handler receives it; nil when resource i's families do not allow it.
// They do not when a family's labels may not tell objects apart (see
// identifiesObject): the series of an object replaced by another of the
// same name must then be removed before the other's claim the same
// labels, and an object computed as it arrives may come before the
// removal of the one it replaces. Call Early before the informers start;
// the handler of the resource counts the objects computed early among
// those it waits for (see SetGate).
func (e *Engine) Early(i int) func(k8sruntime.Object) {
	rs := e.resources[i]
	for _, fs := range rs.families {
		if fs.claims != nil {
			return nil
		}
	}
	if rs.fill == nil {
		rs.fill = &fillState{named: map[string]struct{}{}}
	}
	return func(obj k8sruntime.Object) {
		e.enqueue(event{resource: i, obj: obj, initial: true})
	}
}

// Getter reads an object from a resource's caches by namespace/name key.
type Getter func(key string) (obj any, exists bool, err error)

// Bind gives the engine a Getter per configured resource (in the config's
// order) and the Lookup that get() and byIndex() read (nil when nothing is
// looked up). Call it before any event is delivered.
func (e *Engine) Bind(getters []Getter, lookup indexers.Lookup) {
	e.getters = getters
	e.deps.inner = lookup
}

// spread hashes uid for choosing its worker and stripe: a hash of every
// bit of the UID, so that objects are spread evenly whatever their UIDs
// look like (the low bits of FNV-1a depend only on the low bits of each
// byte: UIDs made of pairs of equal digits all land in one of two queues).
func (e *Engine) spread(uid string) uint64 { return maphash.String(e.seed, uid) }

// queueOf returns the index of the worker queue of the object with uid.
func (e *Engine) queueOf(uid string) int {
	return int(e.spread(uid) % uint64(len(e.queues))) //nolint:gosec // G115: fewer queues than an int holds
}

func (e *Engine) stripe(uid string) *sync.Mutex {
	return &e.stripes[e.spread(uid)%uint64(len(e.stripes))]
}

// Compiled returns the config the engine computes.
func (e *Engine) Compiled() *Compiled { return e.compiled }

// objectUID returns the UID of a cached object, or its namespace/name when
// it has none.
func objectUID(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	if uid := string(m.GetUID()); uid != "" {
		return uid
	}
	return m.GetNamespace() + "/" + m.GetName()
}

// owned returns the UID of obj and the lock of its stripe when this shard
// owns it; no lock otherwise.
func (e *Engine) owned(obj any) (string, *sync.Mutex) {
	uid := objectUID(obj)
	if uid == "" || !e.shard.owns(uid) {
		return "", nil
	}
	return uid, e.stripe(uid)
}

// Update recomputes the series of obj, an object of the i-th configured
// resource, after it was added or changed.
func (e *Engine) Update(i int, obj any) {
	uid, mu := e.owned(obj)
	if mu == nil {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	e.updateLocked(i, uid, obj)
}

// updateLocked computes obj's series; the caller holds its stripe.
func (e *Engine) updateLocked(i int, uid string, obj any) {
	rs := e.resources[i]
	rec := e.deps.recorder(i, uid, obj)
	var lookup indexers.Lookup
	if rec != nil {
		lookup = rec
	}
	cr := e.compiled.Resources[i]
	ev := evaluators.Get().(*evaluator)
	defer evaluators.Put(ev)
	ev.shared.reset(cr.LabelSlots, cr.EachSlots)
	slot := rs.slots.assign(uid)
	key := rowKey{uid: uid, slot: slot, head: rs.slots.head(slot)}
	target := obj
	if rs.converter != nil {
		target = rs.converter.Prepare(obj)
	}
	changed, failed := always, false
	if rs.inputs != nil {
		changed, ev.sums = rs.inputs.changes(slot, obj, ev.sums, &ev.sumScratch)
	}
	for fi, fs := range rs.families {
		if rs.inputs != nil && !rs.inputs.computes(fi, changed) && fs.settled(uid) {
			continue // what it reads is unchanged: so are its series
		}
		samples, errs, last := ev.evaluate(cr.Families[fi], target, lookup, &ev.shared)
		duplicates := fs.set(&key, samples, errs, last)
		failed = failed || errs > 0 || duplicates
	}
	if rs.inputs != nil {
		if failed {
			ev.sums = ev.sums[:0]
		}
		rs.inputs.keep(slot, ev.sums)
	}
	e.deps.commit(rec)
}

// evaluators are reused by the computations of objects: their buffers
// then grow to what an object needs once, not at every object.
var evaluators = sync.Pool{New: func() any { return new(evaluator) }}

// recompute recomputes the series of dependent objects from their current
// cached state, after an object they read changed.
func (e *Engine) recompute(refs map[objectRef]string) {
	for ref, key := range refs {
		if ref.resource >= len(e.getters) || e.getters[ref.resource] == nil {
			continue
		}
		mu := e.stripe(ref.uid)
		mu.Lock()
		obj, exists, err := e.getters[ref.resource](key)
		if err == nil && exists && objectUID(obj) == ref.uid {
			e.updateLocked(ref.resource, ref.uid, obj)
		}
		mu.Unlock()
	}
}

// LookupHandler returns the event handler of the informer of a resource
// that expressions read with get() or byIndex(), named as they name it.
// indexers are that informer's index functions. When one of its objects
// changes, the series that read it are recomputed.
func (e *Engine) LookupHandler(resource string, indexers cache.Indexers) cache.ResourceEventHandler {
	keys := func(objs ...any) []depKey {
		var out []depKey
		for _, obj := range objs {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if obj == nil {
				continue
			}
			if k, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				out = append(out, depKey{resource: resource, value: k})
			}
			for name, fn := range indexers {
				values, err := fn(obj)
				if err != nil {
					continue
				}
				for _, v := range values {
					out = append(out, depKey{resource: resource, index: name, value: v})
				}
			}
		}
		return out
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { e.recompute(e.deps.dependents(keys(obj))) },
		UpdateFunc: func(old, obj any) { e.recompute(e.deps.dependents(keys(old, obj))) },
		DeleteFunc: func(obj any) { e.recompute(e.deps.dependents(keys(obj))) },
	}
}

// Delete removes the series of obj.
func (e *Engine) Delete(i int, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	uid, mu := e.owned(obj)
	if mu == nil {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	rs := e.resources[i]
	if slot, ok := rs.slots.lookup(uid); ok {
		key := rowKey{uid: uid, slot: slot}
		for _, fs := range rs.families {
			fs.set(&key, nil, 0, "")
		}
		if rs.inputs != nil {
			rs.inputs.forget(slot)
		}
		rs.slots.release(uid)
	}
	e.deps.forget(i, uid)
}

// Handler returns the event handler of the i-th configured resource's
// informer. Events are computed by the engine's workers; see Idle.
func (e *Engine) Handler(i int) cache.ResourceEventHandler {
	rs := e.resources[i]
	count := func(t int) {
		rs.events[t].Add(1)
		if e.now != nil {
			rs.lastEvent.Store(e.now())
		}
	}
	// An informer whose cache keeps no objects (factory.Stub) counts this
	// handler among its readers: it takes each object from its event, and
	// the worker lets go of it once the series are computed.
	//
	// An update whose object has another UID than the old one is another
	// object under the same namespace and name: the old one was deleted
	// and a new one created while the watch was down, and the informer's
	// relist replaced it in the cache by key. It is computed as the old
	// object's deletion followed by the new one's addition, so that no
	// series, aggregate member or lookup dependency of the old UID stays
	// behind. The addition waits for the deletion: the label sets the
	// old object's series claimed are released before the new one's
	// claim them.
	//
	// The objects of the informer's first list computed as they arrived
	// (see Early) come as Stubs that give Take nothing: their events only
	// say that the cache holds them.
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			count(eventAdd)
			if rs.fill != nil {
				rs.fill.name(obj)
			}
			if obj = factory.Take(obj); obj != nil {
				e.enqueue(event{resource: i, obj: obj, initial: initial})
			}
		},
		UpdateFunc: func(old, obj any) {
			count(eventUpdate)
			if rs.fill != nil {
				rs.fill.name(obj)
			}
			var after <-chan struct{}
			if replaced(old, obj) {
				done := make(chan struct{})
				if !e.enqueue(event{resource: i, obj: old, delete: true, done: done}) {
					return
				}
				after = done
			}
			if obj = factory.Take(obj); obj != nil {
				e.enqueue(event{resource: i, obj: obj, after: after})
			}
		},
		DeleteFunc: func(obj any) {
			count(eventDelete)
			e.enqueue(event{resource: i, obj: obj, delete: true})
		},
	}
}

// replaced reports whether an update from old to obj is a replacement:
// both have UIDs, and they differ.
func replaced(old, obj any) bool {
	o, err := meta.Accessor(old)
	if err != nil {
		return false
	}
	n, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	return o.GetUID() != "" && n.GetUID() != "" && o.GetUID() != n.GetUID()
}

// WriteFamilies writes every family to w in the text format (or
// OpenMetrics), through a buffer unless w is a *bufio.Writer, and returns
// the first write error. No lock is held while w is written to.
//
// The exposition is written by hand, not by client_golang's registry and
// expfmt, which would build and encode every series at each scrape: here
// the series are rendered into lines when objects change, and a scrape
// copies bytes. make bench measures a whole uncompressed /metrics of
// 470,879 series at 10,000 pods in about 40 ms (bench/RESULTS-profile.md).
// Tests parse what it writes with expfmt, and compare its HELP lines with
// those expfmt writes.
func (e *Engine) WriteFamilies(w io.Writer, openMetrics bool) error {
	bw, ok := w.(*bufio.Writer)
	if !ok {
		bw = bufio.NewWriterSize(w, 64<<10)
	}
	e.writeFamiliesOf(bw, writeStyle{openMetrics: openMetrics}, nil)
	if !ok {
		return bw.Flush()
	}
	return nil
}

// writeFamiliesOf writes as x says (see writeStyle) the families of the
// resources keep accepts, by their index in the config (nil: all).
func (e *Engine) writeFamiliesOf(bw *bufio.Writer, x writeStyle, keep func(i int) bool) {
	var sc writeScratch
	for i, rs := range e.resources {
		if keep != nil && !keep(i) || !e.serves(i) {
			continue
		}
		// kube-state-metrics writes a resource's headers when one of its
		// stores holds an object, whatever the families have of it.
		headers := !x.ksm || rs.slots.len() > 0
		for _, fs := range rs.families {
			fs.write(bw, x, headers, &sc)
		}
	}
}

// SetGate makes the families of resource i wait, before they are written
// on scrapes, until synced(i) holds and the series of every object of its
// handlers' initial lists are computed: a scrape made while the caches
// fill then never serves a resource's families half computed (half the
// pods counted, say), and the resources that are done are served while
// others are listed. synced(i) should hold once the informers resource i
// reads have synced, or fail. Without a gate, every family is written
// from the start. SetGate is called before the handlers are added.
func (e *Engine) SetGate(synced func(i int) bool) { e.synced = synced }

// serves reports whether the families of resource i are written on
// scrapes; once it has, it does from then on, whatever happens to the
// informers.
//
// The first time the handlers have synced and every object computed as it
// arrived (see Early) is, serves removes the series of those that no
// event of the handlers named, and waits for that too.
func (e *Engine) serves(i int) bool {
	rs := e.resources[i]
	if e.synced == nil || rs.served.Load() {
		return true
	}
	// synced first: the initial events are counted before the handler's
	// registration reports it has synced.
	if !e.synced(i) || rs.initial.Load() != 0 {
		return false
	}
	if rs.fill != nil {
		e.forgetUnnamed(i)
		// The removals count as initial events, counted before
		// forgetUnnamed returns to any caller.
		if rs.initial.Load() != 0 {
			return false
		}
	}
	rs.served.Store(true)
	return true
}

// servesAll looks at whether each resource's families are served (see
// serves), and reports whether all are.
func (e *Engine) servesAll() bool {
	all := true
	for i := range e.resources {
		all = e.serves(i) && all
	}
	return all
}

// forgetUnnamed hands to the workers, once, the removal of the series of
// the objects of resource i computed as they arrived that no event of its
// handlers named (see fillState). Every caller returns once they are
// handed over.
func (e *Engine) forgetUnnamed(i int) {
	fill := e.resources[i].fill
	fill.mu.Lock()
	defer fill.mu.Unlock()
	if fill.named == nil {
		return
	}
	for _, uid := range e.resources[i].slots.uids() {
		if _, ok := fill.named[uid]; !ok {
			e.enqueue(event{resource: i, obj: &metav1.ObjectMeta{UID: types.UID(uid)}, delete: true, initial: true})
		}
	}
	fill.named = nil
}

// familyStats is one family's counters, for telemetry.
type familyStats struct {
	name                        string
	series, unserved            int
	dropped, duplicates, errors uint64
}

func (e *Engine) familyStats() []familyStats {
	var out []familyStats
	for _, rs := range e.resources {
		for _, fs := range rs.families {
			h := fs.health()
			_, _, er := fs.stats()
			out = append(out, familyStats{name: fs.f.Name, series: h.series, unserved: h.unserved, dropped: h.dropped, duplicates: h.duplicates, errors: er})
		}
	}
	return out
}

// EvaluationErrors returns, for each family whose evaluations have failed
// so far, the newest error message.
func (e *Engine) EvaluationErrors() map[string]string {
	out := map[string]string{}
	for _, rs := range e.resources {
		for _, fs := range rs.families {
			if msg := fs.lastErrorMessage(); msg != "" {
				out[fs.f.Name] = msg
			}
		}
	}
	return out
}
