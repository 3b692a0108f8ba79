package exporter

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// Shard selects the objects of one replica when the exporter is sharded.
type Shard struct {
	// Index is this replica's shard, 0 ≤ Index < Total.
	Index int
	// Total is the number of shards; 0 or 1: not sharded.
	Total int
}

// owns reports whether the object with uid belongs to this shard: the FNV-1a
// hash of its UID modulo Total equals Index.
func (s Shard) owns(uid string) bool {
	if s.Total <= 1 {
		return true
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(uid))
	return int(h.Sum32()%uint32(s.Total)) == s.Index //nolint:gosec // G115: Total > 1 here; no deployment has 2^32 shards
}

// resourceState is a configured resource's families and event counters.
type resourceState struct {
	name     string // as the config names it
	families []*familyState
	// converter prepares an object for the families' programs; nil when
	// they have none.
	converter *indexers.Program
	// events counts handler events by type: add, update, delete.
	events [3]atomic.Uint64
	// lastEvent is the Unix time in seconds of the newest event.
	lastEvent atomic.Int64
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

	// queues feed the workers that compute series from events; an object
	// always goes to the same worker, so its events stay in order.
	queues []chan event
	// pending counts events queued and not yet computed.
	pending  atomic.Int64
	computed func(time.Duration)
	// closeMu guards closed and the queues' closing against enqueue.
	closeMu sync.RWMutex
	closed  bool
}

// event is an informer event for the workers.
type event struct {
	resource int
	obj      any
	delete   bool
	// at is when the handler received it.
	at time.Time
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

func (e *Engine) work(q chan event) {
	for ev := range q {
		if ev.delete {
			e.Delete(ev.resource, ev.obj)
		} else {
			e.Update(ev.resource, ev.obj)
		}
		e.pending.Add(-1)
		if e.computed != nil {
			e.computed(time.Since(ev.at))
		}
	}
}

// enqueue hands an event to the worker of its object.
func (e *Engine) enqueue(ev event) {
	obj := ev.obj
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(objectUID(obj)))
	e.closeMu.RLock()
	defer e.closeMu.RUnlock()
	if e.closed {
		return // a handler still running as the engine was closed
	}
	e.pending.Add(1)
	ev.at = time.Now()
	e.queues[h.Sum32()%uint32(len(e.queues))] <- ev //nolint:gosec // G115: one queue per worker: positive and small
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
	e := &Engine{compiled: c, shard: opts.Shard, deps: newDependencies(), now: opts.Now, computed: opts.Computed}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	for range workers {
		q := make(chan event, 256)
		e.queues = append(e.queues, q)
		go e.work(q)
	}
	for _, r := range c.Resources {
		rs := &resourceState{name: r.Config.Resource, converter: converter(r)}
		for _, f := range r.Families {
			rs.families = append(rs.families, newFamilyState(f, opts.MaxSeriesPerMetric))
		}
		e.resources = append(e.resources, rs)
	}
	return e
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

func (e *Engine) stripe(uid string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(uid))
	return &e.stripes[h.Sum32()%uint32(len(e.stripes))]
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

// Update recomputes the series of obj, an object of the i-th configured
// resource, after it was added or changed.
func (e *Engine) Update(i int, obj any) {
	uid := objectUID(obj)
	if uid == "" || !e.shard.owns(uid) {
		return
	}
	mu := e.stripe(uid)
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
	shared := sharedLabels{values: make([]string, cr.LabelSlots), done: make([]bool, cr.LabelSlots)}
	target := obj
	if rs.converter != nil {
		target = rs.converter.Prepare(obj)
	}
	for fi, fs := range rs.families {
		samples, errs, last := evaluate(cr.Families[fi], target, lookup, &shared)
		fs.set(uid, samples, errs, last)
	}
	e.deps.commit(rec)
}

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
	uid := objectUID(obj)
	if uid == "" || !e.shard.owns(uid) {
		return
	}
	mu := e.stripe(uid)
	mu.Lock()
	defer mu.Unlock()
	for _, fs := range e.resources[i].families {
		fs.set(uid, nil, 0, "")
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
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			count(eventAdd)
			if obj = factory.Take(obj); obj != nil {
				e.enqueue(event{resource: i, obj: obj})
			}
		},
		UpdateFunc: func(_, obj any) {
			count(eventUpdate)
			if obj = factory.Take(obj); obj != nil {
				e.enqueue(event{resource: i, obj: obj})
			}
		},
		DeleteFunc: func(obj any) {
			count(eventDelete)
			e.enqueue(event{resource: i, obj: obj, delete: true})
		},
	}
}

// converter returns a program of cr whose Prepare converts an object once
// for all the programs of cr (they share an Env), or nil when cr has none.
func converter(cr *CompiledResource) *indexers.Program {
	for _, f := range cr.Families {
		for _, p := range append([]*indexers.Program{f.Each, f.Value}, f.Labels...) {
			if p != nil {
				return p
			}
		}
	}
	return nil
}

// sharedLabels are the values of the label expressions that do not read
// each, computed once per object for all its families (by slot, see
// Family.LabelSlots).
type sharedLabels struct {
	values []string
	done   []bool
}

// evaluate computes the samples of one family for obj. Failed evaluations
// are counted and skip the series they concern. Label values found in
// shared are reused; those computed are added to it.
func evaluate(f *Family, obj any, lookup indexers.Lookup, shared *sharedLabels) (samples []sample, errs int, lastErr string) {
	fail := func(err error) {
		errs++
		lastErr = err.Error()
	}
	bind := func(p *indexers.Program) *indexers.Program {
		if p != nil && lookup != nil && len(p.References()) > 0 {
			return p.WithLookup(lookup)
		}
		return p
	}
	if f.NoLabelsSeries {
		return nil, 0, ""
	}
	// mapExtra evaluates the labelsFrom map into labels.
	mapExtra := func(each any, withEach bool) ([]extraLabel, error) {
		v, err := eval(bind(f.LabelsFrom), obj, each, withEach)
		if err == nil {
			return mapLabels(v, f.LabelsPrefix, f.LabelKeys)
		}
		return nil, err
	}
	// Labels from a map that does not read each: once per object.
	var extra []extraLabel
	extraPerElement := f.LabelsFrom != nil && f.Each != nil && f.LabelsFrom.UsesEach()
	if f.LabelsFrom != nil && !extraPerElement {
		var err error
		if extra, err = mapExtra(nil, f.Each != nil); err != nil {
			fail(fmt.Errorf("metric %q: %w", f.Name, err))
			return nil, errs, lastErr
		}
	}
	// Labels that do not read each have one value per object: computed
	// once, not once per element.
	labels := make([]string, len(f.Labels))
	perElement := make([]bool, len(f.Labels))
	for i, p := range f.Labels {
		if f.Each != nil && p.UsesEach() {
			perElement[i] = true
			continue
		}
		slot := -1
		if shared != nil && i < len(f.LabelSlots) {
			slot = f.LabelSlots[i]
		}
		if slot >= 0 && shared.done[slot] {
			labels[i] = shared.values[slot]
			continue
		}
		v, err := eval(bind(p), obj, nil, f.Each != nil)
		if err != nil {
			fail(err)
			return nil, errs, lastErr
		}
		labels[i] = labelValue(v)
		if slot >= 0 {
			shared.values[slot], shared.done[slot] = labels[i], true
		}
	}
	one := func(each any, withEach bool) {
		values := labels
		if withEach {
			values = slices.Clone(labels)
			for i, p := range f.Labels {
				if !perElement[i] {
					continue
				}
				v, err := eval(bind(p), obj, each, true)
				if err != nil {
					fail(err)
					return
				}
				values[i] = labelValue(v)
			}
		}
		extra := extra
		if extraPerElement {
			var err error
			if extra, err = mapExtra(each, true); err != nil {
				fail(fmt.Errorf("metric %q: %w", f.Name, err))
				return
			}
		}
		value := 1.0
		if f.Value != nil {
			v, err := eval(bind(f.Value), obj, each, withEach)
			if err != nil {
				fail(err)
				return
			}
			v, present := presentValue(v)
			if !present {
				return // null or an empty optional: no sample
			}
			n, ok := numberValue(v)
			if !ok {
				fail(fmt.Errorf("metric %q: value must be a number or a bool, got %s", f.Name, v.Type().TypeName()))
				return
			}
			if math.IsNaN(n) || math.IsInf(n, 0) {
				fail(fmt.Errorf("metric %q: value is %s; it must be a finite number (check for a division by zero)", f.Name, formatValue(n)))
				return
			}
			if f.Aggregate == AggregateSum && math.Abs(n) > maxSummand {
				fail(fmt.Errorf("metric %q: value %s is too large to add up; the values of aggregate: sum must be within ±1e300", f.Name, formatValue(n)))
				return
			}
			value = n
		}
		samples = append(samples, sample{labels: values, extra: extra, value: value})
	}
	if f.Each == nil {
		one(nil, false)
		return samples, errs, lastErr
	}
	list, err := eval(bind(f.Each), obj, nil, false)
	if err != nil {
		fail(err)
		return nil, errs, lastErr
	}
	lister, ok := list.(traits.Lister)
	if !ok {
		fail(fmt.Errorf("metric %q: each must be a list, got %s", f.Name, list.Type().TypeName()))
		return nil, errs, lastErr
	}
	for it := lister.Iterator(); it.HasNext() == types.True; {
		one(it.Next(), true)
	}
	return samples, errs, lastErr
}

func eval(p *indexers.Program, obj, each any, withEach bool) (ref.Val, error) {
	if withEach {
		return p.EvalEach(context.Background(), obj, each)
	}
	return p.Eval(context.Background(), obj)
}

// labelValue formats a CEL value as a label value: strings as they are,
// null as "", numbers and bools as in JSON, lists and maps as compact JSON.
func labelValue(v ref.Val) string {
	switch v := v.(type) {
	case types.String:
		return string(v)
	case types.Null:
		return ""
	case types.Bool:
		return strconv.FormatBool(bool(v))
	case types.Int:
		return strconv.FormatInt(int64(v), 10)
	case types.Uint:
		return strconv.FormatUint(uint64(v), 10)
	case types.Double:
		return strconv.FormatFloat(float64(v), 'g', -1, 64)
	}
	native, err := jsonval.ToNative(v)
	if err != nil {
		return ""
	}
	if s, ok := native.(string); ok {
		return s
	}
	b, err := json.Marshal(native)
	if err != nil {
		return ""
	}
	return string(b)
}

// presentValue unwraps an optional value. It reports false for null and
// for an empty optional, which leave a series out.
func presentValue(v ref.Val) (ref.Val, bool) {
	switch o := v.(type) {
	case types.Null:
		return v, false
	case *types.Optional:
		if !o.HasValue() {
			return v, false
		}
		return presentValue(o.GetValue())
	}
	return v, true
}

// numberValue converts a CEL number or bool to a sample value.
func numberValue(v ref.Val) (float64, bool) {
	switch v := v.(type) {
	case types.Int:
		return float64(v), true
	case types.Uint:
		return float64(v), true
	case types.Double:
		return float64(v), true
	case types.Bool:
		if v {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// WriteFamilies writes every family to w in the text format (or
// OpenMetrics), through a buffer unless w is a *bufio.Writer, and returns
// the first write error. No lock is held while w is written to.
func (e *Engine) WriteFamilies(w io.Writer, openMetrics bool) error {
	bw, ok := w.(*bufio.Writer)
	if !ok {
		bw = bufio.NewWriterSize(w, 64<<10)
	}
	var refs [][]byte
	for _, rs := range e.resources {
		for _, fs := range rs.families {
			refs = fs.write(bw, openMetrics, refs)
		}
	}
	if !ok {
		return bw.Flush()
	}
	return nil
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

// dependencies remembers which objects' series read which other objects
// through get() and byIndex(), so that they are recomputed when those
// change.
type dependencies struct {
	// inner is the Lookup that get() and byIndex() read; nil when nothing
	// is looked up. Set before any event, read-only after.
	inner indexers.Lookup

	// mu guards byKey and byObject.
	mu sync.Mutex
	// byKey maps a looked-up key to the dependent objects and their cache
	// keys.
	byKey map[depKey]map[objectRef]string
	// byObject maps a dependent object to the keys it read.
	byObject map[objectRef][]depKey
}

// depKey is an object read with get() (resource, namespace/name) or an
// index value read with byIndex() (resource, index, value).
type depKey struct {
	resource, index, value string
}

// objectRef is a dependent object: its resource's position and its UID.
type objectRef struct {
	resource int
	uid      string
}

func newDependencies() *dependencies {
	return &dependencies{byKey: map[depKey]map[objectRef]string{}, byObject: map[objectRef][]depKey{}}
}

// recorder returns a Lookup that records what one object's evaluation
// reads, or nil when there is no Lookup (see Engine.Bind).
func (d *dependencies) recorder(resource int, uid string, obj any) *recordingLookup {
	if d.inner == nil {
		return nil
	}
	key, _ := cache.MetaNamespaceKeyFunc(obj)
	return &recordingLookup{ref: objectRef{resource, uid}, key: key, deps: d}
}

// add registers one key that an evaluation of ref is about to read. It is
// called before the read, so that a change of what the key names is either
// seen by the read or, since the informer stores an object before it
// notifies its handlers, finds ref among the dependents and recomputes it.
// Registering only at commit would miss a change that lands between the
// read and the commit: a pod evaluated while its node is not yet cached
// would keep its error for good.
func (d *dependencies) add(ref objectRef, key string, k depKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byKey[k] == nil {
		d.byKey[k] = map[objectRef]string{}
	}
	d.byKey[k][ref] = key
}

// commit replaces what the object depends on by what rec recorded (and
// registered as it read, see add).
func (d *dependencies) commit(rec *recordingLookup) {
	if rec == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.forgetLocked(rec.ref)
	if len(rec.read) == 0 {
		return
	}
	d.byObject[rec.ref] = rec.read
	for _, k := range rec.read {
		if d.byKey[k] == nil {
			d.byKey[k] = map[objectRef]string{}
		}
		d.byKey[k][rec.ref] = rec.key
	}
}

func (d *dependencies) forget(resource int, uid string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.forgetLocked(objectRef{resource, uid})
}

func (d *dependencies) forgetLocked(ref objectRef) {
	for _, k := range d.byObject[ref] {
		delete(d.byKey[k], ref)
		if len(d.byKey[k]) == 0 {
			delete(d.byKey, k)
		}
	}
	delete(d.byObject, ref)
}

// dependents returns the objects that read any of keys, with their cache
// keys.
func (d *dependencies) dependents(keys []depKey) map[objectRef]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[objectRef]string{}
	for _, k := range keys {
		for ref, key := range d.byKey[k] {
			out[ref] = key
		}
	}
	return out
}

// recordingLookup forwards to the engine's Lookup and records the keys read,
// registering each with deps before reading it.
type recordingLookup struct {
	ref  objectRef
	key  string // the dependent object's cache key
	deps *dependencies
	read []depKey
}

func (r *recordingLookup) record(k depKey) {
	r.read = append(r.read, k)
	r.deps.add(r.ref, r.key, k)
}

func (r *recordingLookup) Get(resource, namespace, name string) (any, bool, error) {
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	r.record(depKey{resource: resource, value: key})
	return r.deps.inner.Get(resource, namespace, name)
}

func (r *recordingLookup) ByIndex(resource, index, value string) ([]any, error) {
	r.record(depKey{resource: resource, index: index, value: value})
	return r.deps.inner.ByIndex(resource, index, value)
}
