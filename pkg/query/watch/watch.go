package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// Request is a whole watch as the command line states it.
type Request struct {
	// Resources are the resource arguments as typed ("pods", "po,nodes").
	Resources []string
	// Namespace scopes namespaced resources; "" means all namespaces.
	Namespace string
	// LabelSelector and FieldSelector are sent to the server.
	LabelSelector string
	FieldSelector string
	// Where is a CEL predicate; "" shows every object. An object that stops
	// matching on an update is shown as LEFT, one that starts matching as
	// ENTERED. So is one that an update takes out of the label or field
	// selector, and one that comes back into it.
	Where string
	// Columns are values printed after each event line (NAME=value) or, with
	// Output "json", in its "columns" object.
	Columns []plan.NamedExpr
	// Diff shows, for every update, the fields that changed (see [Diff])
	// instead of the old object.
	Diff bool
	// Output is "" for one line per event or "json" for one JSON object per
	// line. Default "".
	Output string
	// SkipInitial hides the ADDED events of the initial list. Default false.
	SkipInitial bool
	// ResyncPeriod makes the informers replay their caches as RESYNC events
	// this often; 0 (the default) never.
	ResyncPeriod time.Duration
	// SyncTimeout bounds the wait for the initial lists. Default 2m.
	SyncTimeout time.Duration
	// Progress, when not nil, receives a progress line while caches fill.
	Progress io.Writer
}

// EventType is what happened to an object, as a watch prints it.
type EventType string

const (
	// EventAdded means the object was created, or was there when the watch started.
	EventAdded EventType = "ADDED"
	// EventUpdated means the object changed and matches --where before and after.
	EventUpdated EventType = "UPDATED"
	// EventDeleted means the object was deleted.
	EventDeleted EventType = "DELETED"
	// EventResync means a resync replayed the object unchanged.
	EventResync EventType = "RESYNC"
	// EventEntered means an update made the object match --where, or
	// brought back into the label or field selector an object that had
	// left it during the watch.
	EventEntered EventType = "ENTERED"
	// EventLeft means an update made the object stop matching --where, or
	// the label or field selector: the object still exists.
	EventLeft EventType = "LEFT"
	// EventRelist means the informer listed the resource again (its watch
	// expired or could not be resumed); the events of what the list
	// changed follow, and objects it found unchanged are not shown.
	EventRelist EventType = "RELIST"
)

// RelistCounts are what a relist found, compared with what the watch had
// seen: objects listed, and among them added and changed ones, and objects
// no longer listed (removed). They count every object of the resource,
// whether or not it matches --where.
type RelistCounts struct {
	Listed  int `json:"listed"`
	Added   int `json:"added"`
	Changed int `json:"changed"`
	Removed int `json:"removed"`
}

// missedSuffix marks a deletion the watch did not see: the informer learnt
// of it from a relist (cache.DeletedFinalStateUnknown) and the object shown
// is the last state it knew.
const missedSuffix = " (missed)"

// relatedSuffix marks an event of an object that did not change, whose
// --where or --columns answer changed with another object they read.
const relatedSuffix = " (related)"

// Change is one field that an update changed. Path is in CEL/JSONPath-like
// form: metadata.labels["app.kubernetes.io/name"], spec.containers[0].image.
// Old or New is nil when the field is absent on that side.
type Change struct {
	Path string `json:"path"`
	Old  any    `json:"old"`
	New  any    `json:"new"`
}

// Event is one event as printed.
type Event struct {
	Time time.Time
	// Cluster is the context the event comes from, in a watch over
	// several clusters; empty otherwise.
	Cluster string
	Type    EventType
	// Missed marks a DELETED that the informer saw only through a relist.
	Missed bool
	// Related marks an UPDATED, ENTERED or LEFT of an object that did not
	// change itself: an object that --where or --columns read through
	// get(), byIndex() or a relationship function (owner(), children(),
	// events() and the like) did, and so did the answer for it.
	Related bool
	// Kind is resource.group as kubectl prints it ("pod", "deployment.apps").
	Kind            string
	Namespace, Name string
	ResourceVersion string
	// Object is the object after the event (for DELETED, its last state);
	// OldObject the object before an update. Both are read-only.
	Object, OldObject any
	// ColumnNames and Values are the --columns, in order.
	ColumnNames []string
	Values      []any
	// Diff holds the changes of an update when diffs were requested; nil
	// otherwise.
	Diff []Change
	// Relist holds the counts of a RELIST event, which names no object.
	Relist *RelistCounts
}

// timeFormat is RFC 3339 with milliseconds.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// FormatLine renders ev as one line, followed by its diff lines:
//
//	2025-03-01T10:00:00.123Z UPDATED pod shop/web-0 4711 phase=Running
//	  status.phase: Pending → Running
//
// A RELIST event names the resource's kind and what the list found:
//
//	2025-03-01T10:05:00.000Z RELIST  pod listed=300 added=1 changed=2 removed=1
//
// An object that did not change, whose answer changed with an object that
// --where or --columns read of another (see Event.Related), has its type
// marked, and keeps its resourceVersion:
//
//	2025-03-01T10:00:02.000Z UPDATED (related) pod shop/web-0 4711 ready=1
//
// In a watch over several clusters, the cluster follows the time:
//
//	2025-03-01T10:00:00.123Z east UPDATED pod shop/web-0 4711
func FormatLine(ev *Event) string {
	var b strings.Builder
	b.WriteString(ev.Time.UTC().Format(timeFormat))
	b.WriteByte(' ')
	if ev.Cluster != "" {
		b.WriteString(ev.Cluster)
		b.WriteByte(' ')
	}
	if r := ev.Relist; r != nil {
		fmt.Fprintf(&b, "%-7s %s listed=%d added=%d changed=%d removed=%d\n", ev.Type, ev.Kind, r.Listed, r.Added, r.Changed, r.Removed)
		return b.String()
	}
	typ := string(ev.Type)
	if ev.Missed {
		typ += missedSuffix
	}
	if ev.Related {
		typ += relatedSuffix
	}
	fmt.Fprintf(&b, "%-7s %s %s %s", typ, ev.Kind, objectName(ev.Namespace, ev.Name), ev.ResourceVersion)
	for i, name := range ev.ColumnNames {
		fmt.Fprintf(&b, " %s=%s", name, query.FormatValue(ev.Values[i]))
	}
	b.WriteByte('\n')
	for _, c := range ev.Diff {
		fmt.Fprintf(&b, "  %s: %s → %s\n", c.Path, formatDiffValue(c.Old), formatDiffValue(c.New))
	}
	return b.String()
}

func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// formatDiffValue shows strings as they are (the empty string as ""), an
// absent field as <none> and anything else as compact JSON.
func formatDiffValue(v any) string {
	switch x := v.(type) {
	case nil:
		return query.None
	case string:
		if x == "" {
			return `""`
		}
		return x
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// jsonEvent is the -o json form of a Event; fields in this order.
type jsonEvent struct {
	Time            string         `json:"time"`
	Cluster         string         `json:"cluster,omitempty"`
	Type            EventType      `json:"type"`
	Missed          bool           `json:"missed,omitempty"`
	Related         bool           `json:"related,omitempty"`
	Kind            string         `json:"kind"`
	Namespace       string         `json:"namespace"`
	Name            string         `json:"name"`
	ResourceVersion string         `json:"resourceVersion"`
	Columns         map[string]any `json:"columns,omitempty"`
	Object          any            `json:"object"`
	OldObject       any            `json:"oldObject,omitempty"`
	Diff            *[]Change      `json:"diff,omitempty"`
}

// jsonRelist is the -o json form of a RELIST event.
type jsonRelist struct {
	Time    string    `json:"time"`
	Cluster string    `json:"cluster,omitempty"`
	Type    EventType `json:"type"`
	Kind    string    `json:"kind"`
	RelistCounts
}

// FormatJSON renders ev as one line of JSON (NDJSON): time, cluster (in a
// watch over several clusters), type, kind, namespace, name,
// resourceVersion, columns (when any), object, and for
// updates either oldObject or, when diffs were requested, diff (neither
// for an ENTERED that brought an object back into the selectors, whose
// state before is not known, nor for an event of a related change). A
// missed deletion is type DELETED with "missed": true, an event of an
// object whose answer changed with another object it reads (see
// Event.Related) has "related": true. A RELIST event has time,
// type, kind, and the counts listed, added, changed and removed.
func FormatJSON(ev *Event, withDiff bool) ([]byte, error) {
	if ev.Relist != nil {
		data, err := json.Marshal(jsonRelist{Time: ev.Time.UTC().Format(timeFormat), Cluster: ev.Cluster, Type: ev.Type, Kind: ev.Kind, RelistCounts: *ev.Relist})
		if err != nil {
			return nil, err
		}
		return append(data, '\n'), nil
	}
	j := jsonEvent{
		Time: ev.Time.UTC().Format(timeFormat), Cluster: ev.Cluster, Type: ev.Type, Missed: ev.Missed, Related: ev.Related, Kind: ev.Kind,
		Namespace: ev.Namespace, Name: ev.Name, ResourceVersion: ev.ResourceVersion, Object: ev.Object,
	}
	if len(ev.ColumnNames) > 0 {
		j.Columns = make(map[string]any, len(ev.ColumnNames))
		for i, name := range ev.ColumnNames {
			v := ev.Values[i]
			if _, failed := v.(*query.EvalError); failed {
				v = nil
			}
			j.Columns[name] = v
		}
	}
	if isUpdate(ev.Type) && ev.OldObject != nil {
		if withDiff {
			d := ev.Diff
			if d == nil {
				d = []Change{}
			}
			j.Diff = &d
		} else {
			j.OldObject = ev.OldObject
		}
	}
	data, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// isUpdate reports whether t is an update with an old object worth showing:
// RESYNC replays an unchanged object.
func isUpdate(t EventType) bool {
	return t == EventUpdated || t == EventEntered || t == EventLeft
}

// UpdateEvent returns what an update shows given whether the object matched
// --where before (wasIn) and after (isIn), and whether its resourceVersion
// is unchanged (a resync); "" when the object was and stays outside the
// result. Without --where both are true.
func UpdateEvent(wasIn, isIn, sameVersion bool) EventType {
	switch {
	case wasIn && isIn && sameVersion:
		return EventResync
	case wasIn && isIn:
		return EventUpdated
	case isIn:
		return EventEntered
	case wasIn:
		return EventLeft
	}
	return ""
}

// diffIgnored are the paths Diff leaves out: bookkeeping that changes on
// every write or every heartbeat. "*" matches any list index.
var diffIgnored = [][]string{
	{"metadata", "resourceVersion"},
	{"metadata", "managedFields"},
	{"metadata", "generation"},
	{"status", "conditions", "*", "lastHeartbeatTime"},
	{"status", "conditions", "*", "lastProbeTime"},
}

// pathSeg is one step of a path: a map key, or a list index when index >= 0.
type pathSeg struct {
	key   string
	index int
}

// Diff returns the fields that differ between two objects' JSON forms, in
// path order (map keys sorted, list elements by index), leaving out
// metadata.resourceVersion, metadata.managedFields, metadata.generation and
// status.conditions[*].lastHeartbeatTime and lastProbeTime. Maps are
// compared key by key and lists element by element; a field present on one
// side only is one change whose other side is nil, however deep its value.
// The objects are only read.
func Diff(oldObj, newObj any) ([]Change, error) {
	a, err := query.JSONMap(oldObj)
	if err != nil {
		return nil, err
	}
	b, err := query.JSONMap(newObj)
	if err != nil {
		return nil, err
	}
	var out []Change
	diffValues(nil, a, b, true, true, &out)
	return out, nil
}

func diffValues(path []pathSeg, a, b any, hasA, hasB bool, out *[]Change) {
	if ignoredPath(path) {
		return
	}
	if hasA && hasB {
		ma, okA := a.(map[string]any)
		mb, okB := b.(map[string]any)
		if okA && okB {
			keys := make([]string, 0, len(ma)+len(mb))
			for k := range ma {
				keys = append(keys, k)
			}
			for k := range mb {
				if _, ok := ma[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				va, inA := ma[k]
				vb, inB := mb[k]
				diffValues(append(path, pathSeg{key: k, index: -1}), va, vb, inA, inB, out)
			}
			return
		}
		la, okA := a.([]any)
		lb, okB := b.([]any)
		if okA && okB {
			for i := range max(len(la), len(lb)) {
				var va, vb any
				if i < len(la) {
					va = la[i]
				}
				if i < len(lb) {
					vb = lb[i]
				}
				diffValues(append(path, pathSeg{index: i}), va, vb, i < len(la), i < len(lb), out)
			}
			return
		}
		if reflect.DeepEqual(a, b) {
			return
		}
	} else if !hasA && !hasB {
		return
	}
	c := Change{Path: formatPath(path)}
	if hasA {
		c.Old = a
	}
	if hasB {
		c.New = b
	}
	*out = append(*out, c)
}

func ignoredPath(path []pathSeg) bool {
	for _, pat := range diffIgnored {
		if len(pat) != len(path) {
			continue
		}
		match := true
		for i, p := range pat {
			seg := path[i]
			if (p == "*" && seg.index < 0) || (p != "*" && (seg.index >= 0 || seg.key != p)) {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// formatPath writes a path as metadata.labels["app.kubernetes.io/name"] or
// spec.containers[0].image.
func formatPath(path []pathSeg) string {
	var b strings.Builder
	for i, seg := range path {
		switch {
		case seg.index >= 0:
			fmt.Fprintf(&b, "[%d]", seg.index)
		case plainKey.MatchString(seg.key):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg.key)
		default:
			b.WriteString("[" + strconv.Quote(seg.key) + "]")
		}
	}
	if b.Len() == 0 {
		return "."
	}
	return b.String()
}

// KindName returns resource.group as kubectl prints it before a name:
// "pod", "deployment.apps".
func KindName(res factory.Resource) string {
	kind := strings.ToLower(res.GVK.Kind)
	if res.GVK.Group == "" {
		return kind
	}
	return kind + "." + res.GVK.Group
}

// Watcher is a compiled Request: every expression compiled and every
// flag checked, before any contact with the cluster.
type Watcher struct {
	req  Request
	plan *plan.Plan
	// cluster names the cluster in each event; see InCluster.
	cluster string
	// now returns the time stamped on events; time.Now outside tests.
	now func() time.Time
}

// Compile checks req and compiles its expressions with env. Errors
// are *query.UsageError.
func Compile(env *indexers.Env, req Request) (*Watcher, error) {
	if req.SyncTimeout <= 0 {
		req.SyncTimeout = 2 * time.Minute
	}
	var errs []error
	if req.Output != "" && req.Output != "json" {
		errs = append(errs, fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json (default: one line per event)", req.Output))
	}
	if req.ResyncPeriod < 0 {
		errs = append(errs, fmt.Errorf("the resync period must not be negative, got %s", req.ResyncPeriod))
	}
	p, err := plan.Compile(env, plan.Request{
		Resources: req.Resources, Namespace: req.Namespace,
		LabelSelector: req.LabelSelector, FieldSelector: req.FieldSelector,
		Where: req.Where, Columns: req.Columns, SyncTimeout: req.SyncTimeout, Progress: req.Progress,
	})
	if err != nil {
		var ue *query.UsageError
		if errors.As(err, &ue) {
			err = ue.Err
		}
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, &query.UsageError{Err: errors.Join(errs...)}
	}
	return &Watcher{req: req, plan: p, now: time.Now}, nil
}

// InCluster returns a copy of w whose events name cluster, for a watch
// over several clusters (see RunFleet). w must not have run.
func (w *Watcher) InCluster(cluster string) *Watcher {
	c := *w
	c.cluster = cluster
	return &c
}

// Run resolves the resources, starts informers holding whole objects
// (without managedFields) and prints one event per handler call on out
// until ctx ends; then it returns nil, after summarising on errOut the
// expressions that failed on some objects. Nothing is written to out once
// ctx has ended. A resource the server does not have is a *query.UsageError; a
// cache that does not sync (forbidden, unreachable, timeout) is an error,
// as for a query. Run may be called once.
//
// Everything it asks the server until the initial lists are complete is
// bounded by Request.SyncTimeout, as for a query. When ctx ends before
// then, Run returns nil too: Ctrl-C ends a watch at any time.
func (w *Watcher) Run(ctx context.Context, conn plan.Conn, out, errOut io.Writer) error {
	err := w.run(ctx, conn, out, errOut)
	if err != nil && ctx.Err() != nil {
		return nil
	}
	return err
}

func (w *Watcher) run(ctx context.Context, conn plan.Conn, out, errOut io.Writer) error {
	em := w.emitter(out)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer em.stop()
	if w.req.LabelSelector != "" || w.req.FieldSelector != "" {
		var err error
		if em.current, err = currentObject(runCtx, conn); err != nil {
			return err
		}
	}
	// Handlers added to a running informer first receive what it already
	// holds, as initial-list adds, so no event is lost between the start
	// and their registration.
	started := func(watched []*factory.Informer) error {
		// The plan's programs read get() and byIndex() from the caches, and
		// stop with ctx, from now on.
		em.query(w.plan.Spec())
		for _, inf := range watched {
			if _, err := inf.Informer.AddEventHandler(em.handler(inf.Resource)); err != nil {
				return err
			}
			inf.OnRelist(func(r factory.Relist) { em.relist(inf.Resource, r) })
		}
		return nil
	}
	opts := plan.FillOptions{ResyncPeriod: w.req.ResyncPeriod, Events: true, Lasting: true, Started: started}
	if em.related {
		// Expressions that read other objects are evaluated once every
		// cache is filled: before, get() or owner() would not find yet
		// what they read, and the first events would show answers
		// nothing changes until those objects do.
		opts.Started = nil
	}
	c, err := w.plan.Fill(runCtx, conn, errOut, opts)
	var denied error
	switch {
	case err != nil && ctx.Err() == nil:
		return err
	case err == nil:
		if em.related {
			if err := started(c.Queried()); err != nil {
				return err
			}
			done, err := em.followRelated(runCtx, c.Queried(), c.Related())
			if err != nil {
				return err
			}
			defer func() { cancel(); <-done }()
		}
		// A watch RBAC denies while allowing the list ends the command,
		// as kubectl get -w ends: the cache would follow the cluster only
		// by lists made again and again.
		select {
		case <-ctx.Done():
		case <-em.failed:
		case <-c.Factory().WatchDenied():
			denied = c.Factory().WatchDeniedError()
		}
	}
	// A watch ended (Ctrl-C) before its caches synced still summarises
	// the failures of what it printed.
	em.stop()
	for _, warn := range em.warnings() {
		_, _ = fmt.Fprintf(errOut, "warning: %s\n", warn)
	}
	if line := em.currentWarning(); line != "" {
		_, _ = fmt.Fprintf(errOut, "warning: %s\n", line)
	}
	if c != nil {
		for _, line := range c.IndexFailures() {
			_, _ = fmt.Fprintf(errOut, "warning: %s\n", line)
		}
	}
	if denied != nil {
		return denied
	}
	return em.writeErr()
}

func (w *Watcher) emitter(out io.Writer) *emitter {
	em := &emitter{
		out:         out,
		cluster:     w.cluster,
		json:        w.req.Output == "json",
		diff:        w.req.Diff,
		skipInitial: w.req.SkipInitial,
		now:         w.now,
		seen:        map[string]seenState{},
		unchanged:   sets.New[string](),
		left:        map[string]types.UID{},
		failed:      make(chan struct{}),
		whereFails:  query.NewFailures(query.FlagNames.Of(query.PartWhere)),
		related:     w.plan.ReadsOtherResources(),
	}
	em.query(w.plan.Spec())
	return em
}

// query sets the predicate and the columns of the events, those of spec.
// It is called before any event: again once the plan's programs are bound
// to the caches.
func (e *emitter) query(spec query.Spec) {
	e.where, e.columns = spec.Where, spec.Columns
	e.colFails = make([]query.Failures, len(spec.Columns))
	for i, c := range spec.Columns {
		e.colFails[i] = query.NewFailures(query.FlagNames.Of(query.PartColumns) + " " + c.Name)
	}
}

// emitter turns handler calls into printed events. Handlers of different
// informers run on different goroutines.
type emitter struct {
	out         io.Writer
	cluster     string
	json, diff  bool
	skipInitial bool
	now         func() time.Time
	where       query.PredicateFunc
	columns     []query.Column
	// current, when not nil, reads an object the informer reports
	// deleted: with a label or field selector, the informer also reports
	// an object that an update took out of the selector as deleted. It is
	// called without the lock held.
	current currentFunc
	// failed is closed on the first write error.
	failed chan struct{}

	// lock guards the fields below and serialises writes to out.
	lock    sync.Mutex
	stopped bool
	// seen records, per resource and key, the objects the watch knows.
	seen map[string]seenState
	// unchanged holds the keys of objects a relist found unchanged, until
	// their replayed update arrives, which is not shown.
	unchanged sets.Set[string]
	// left holds the UIDs of objects that left the selectors, by key,
	// until they come back: one that does is ENTERED rather than ADDED.
	// An object that left and is deleted later stays, the informer no
	// longer seeing it.
	left map[string]types.UID
	// currentFails counts the deletions that current could not check, and
	// currentErr is the first error.
	currentFails int
	currentErr   error
	// related: the expressions read other objects than the one they are
	// evaluated on, whose changes followRelated follows.
	related    bool
	whereFails query.Failures
	whereTotal int
	colFails   []query.Failures
	colTotal   int
	err        error
}

// seenState is what the watch knows of an object: whether it is in the
// result (matches --where) as last shown, and its resourceVersion.
type seenState struct {
	in bool
	rv string
	// cols are the --columns values of an object in the result, as
	// printed, when the expressions read other objects (see related);
	// "" otherwise.
	cols string
}

// prefix returns the prefix of the keys of res in seen and unchanged.
func prefix(res factory.Resource) string { return res.String() + "|" }

func (e *emitter) handler(res factory.Resource) cache.ResourceEventHandler {
	kind := KindName(res)
	prefix := prefix(res)
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			e.lock.Lock()
			defer e.lock.Unlock()
			key := prefix + indexers.ObjectName(obj)
			isIn := e.matchLocked(obj)
			delete(e.unchanged, key)
			typ := EventAdded
			if uid, ok := e.left[key]; ok {
				delete(e.left, key)
				if uid == objectUID(obj) {
					typ = EventEntered // back into the selectors
				}
			}
			var ev *Event
			if isIn && (!initial || !e.skipInitial) {
				ev = e.emitLocked(kind, typ, mark{}, nil, obj)
			}
			e.seen[key] = seenState{in: isIn, rv: resourceVersion(obj), cols: e.colsLocked(isIn, obj, ev)}
		},
		UpdateFunc: func(oldObj, newObj any) {
			e.lock.Lock()
			defer e.lock.Unlock()
			key := prefix + indexers.ObjectName(newObj)
			rv := resourceVersion(newObj)
			sameVersion := resourceVersion(oldObj) == rv
			if e.unchanged.Has(key) {
				delete(e.unchanged, key)
				if sameVersion {
					return // replayed by a relist, counted in its RELIST line
				}
			}
			st, known := e.seen[key]
			wasIn := st.in
			if !known {
				wasIn = e.matchLocked(oldObj)
			}
			isIn := e.matchLocked(newObj)
			typ := UpdateEvent(wasIn, isIn, sameVersion)
			var ev *Event
			if typ != "" {
				ev = e.emitLocked(kind, typ, mark{}, oldObj, newObj)
			}
			e.seen[key] = seenState{in: isIn, rv: rv, cols: e.colsLocked(isIn, newObj, ev)}
		},
		DeleteFunc: func(obj any) {
			missed := false
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				missed, obj = true, d.Obj
				if obj == nil {
					return
				}
			}
			var current any
			var err error
			if e.current != nil {
				current, err = e.current(res, obj)
			}
			e.lock.Lock()
			defer e.lock.Unlock()
			key := prefix + indexers.ObjectName(obj)
			st, known := e.seen[key]
			wasIn := st.in
			if !known {
				wasIn = e.matchLocked(obj)
			}
			delete(e.seen, key)
			delete(e.unchanged, key)
			if err != nil {
				e.currentFails++
				if e.currentErr == nil {
					e.currentErr = err
				}
			}
			if current != nil {
				// Out of the selectors, not deleted: shown as it is now.
				e.left[key] = objectUID(obj)
				if wasIn {
					e.emitLocked(kind, EventLeft, mark{missed: missed}, obj, current)
				}
				return
			}
			if wasIn {
				e.emitLocked(kind, EventDeleted, mark{missed: missed}, nil, obj)
			}
		},
	}
}

// relist prints the RELIST line of a list of res made after its first,
// counting what it found against what the watch has seen, and notes the
// objects it found unchanged: the informer replays them as updates with
// the same resourceVersion, which are not shown. It is called before the
// events of the relist are handled.
func (e *emitter) relist(res factory.Resource, r factory.Relist) {
	e.lock.Lock()
	defer e.lock.Unlock()
	prefix := prefix(res)
	counts := RelistCounts{Listed: len(r.Objects)}
	listed := make(sets.Set[string], len(r.Objects))
	for _, o := range r.Objects {
		key := prefix + o.Key
		listed.Insert(key)
		st, known := e.seen[key]
		switch {
		case !known:
			counts.Added++
		case st.rv != o.ResourceVersion:
			counts.Changed++
		default:
			e.unchanged.Insert(key)
		}
	}
	for key := range e.seen {
		if strings.HasPrefix(key, prefix) && !listed.Has(key) {
			counts.Removed++
		}
	}
	e.emitEventLocked(&Event{Time: e.now(), Type: EventRelist, Kind: KindName(res), Relist: &counts})
}

// matchLocked evaluates --where; a failure counts as not matching. An
// evaluation stopped because the watch is ending is not counted, and
// nothing is printed after it.
func (e *emitter) matchLocked(obj any) bool {
	if e.where == nil {
		return true
	}
	ok, err := e.where(obj)
	if err != nil && indexers.IsBudgetStop(err) {
		e.stopped = true
		return false
	}
	e.whereTotal++
	if err != nil {
		e.whereFails.Add(obj, err)
		return false
	}
	return ok
}

// mark is what an event's type is marked with: see Event.Missed and
// Event.Related.
type mark struct{ missed, related bool }

// emitLocked writes the event typ of obj, and returns it; nil when nothing
// is written any more.
func (e *emitter) emitLocked(kind string, typ EventType, m mark, oldObj, obj any) *Event {
	if e.stopped || e.err != nil {
		return nil
	}
	ev := &Event{Time: e.now(), Type: typ, Missed: m.missed, Related: m.related, Kind: kind, Object: obj}
	if m, err := meta.Accessor(obj); err == nil {
		ev.Namespace, ev.Name, ev.ResourceVersion = m.GetNamespace(), m.GetName(), m.GetResourceVersion()
	}
	if isUpdate(typ) && oldObj != nil {
		ev.OldObject = oldObj
		if e.diff {
			d, err := Diff(oldObj, obj)
			if err != nil {
				d = []Change{{Path: ".", New: "<diff failed: " + err.Error() + ">"}}
			}
			ev.Diff = d
		}
	}
	if len(e.columns) > 0 {
		ev.Values = make([]any, len(e.columns))
		fails := make([]error, len(e.columns))
		for i, c := range e.columns {
			ev.ColumnNames = append(ev.ColumnNames, c.Name)
			v, err := c.Value(obj)
			if err != nil {
				if indexers.IsBudgetStop(err) {
					e.stopped = true // the watch is ending
					return nil
				}
				fails[i] = err
				v = &query.EvalError{Err: err}
			}
			ev.Values[i] = v
		}
		e.colTotal++
		for i, err := range fails {
			if err != nil {
				e.colFails[i].Add(obj, err)
			}
		}
	}
	e.emitEventLocked(ev)
	return ev
}

// colsLocked returns what seenState.cols keeps of obj: when the
// expressions read other objects and obj is in the result, its --columns
// values, those of ev when it showed obj.
func (e *emitter) colsLocked(in bool, obj any, ev *Event) string {
	if !e.related || !in || len(e.columns) == 0 {
		return ""
	}
	values := make([]any, len(e.columns))
	if ev != nil && len(ev.Values) == len(e.columns) {
		copy(values, ev.Values)
	} else {
		for i, c := range e.columns {
			v, err := c.Value(obj)
			if err != nil {
				v = &query.EvalError{Err: err}
			}
			values[i] = v
		}
	}
	var b strings.Builder
	for _, v := range values {
		b.WriteString(query.FormatValue(v))
		b.WriteByte(0)
	}
	return b.String()
}

// followRelated registers on related, the informers of the objects that
// --where and --columns read besides the one they are evaluated on, a
// handler that makes reevaluate run once a burst of their events has been
// quiet for relatedDebounce (or has lasted plan.BurstLimit of them), until ctx ends; the channel it returns is
// closed then, once its handlers are removed. Their first events, the
// objects the caches hold, make one evaluation that shows what changed
// between the initial lists and the registration.
func (e *emitter) followRelated(ctx context.Context, queried, related []*factory.Informer) (<-chan struct{}, error) {
	changed, remove, err := plan.Changes(related)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer remove()
		burst := plan.NewBurst(relatedDebounce)
		for {
			select {
			case <-ctx.Done():
				return
			case <-changed:
				burst.Event()
			case <-burst.Over():
				burst.Done()
				e.reevaluate(queried)
			}
		}
	}()
	return done, nil
}

// relatedDebounce is how long the events of related objects must have been
// quiet before the queried objects are evaluated again, as query --watch
// waits before it answers again.
const relatedDebounce = 200 * time.Millisecond

// reevaluate evaluates --where and --columns again on the objects of
// queried whose last event the watch has shown, and shows those whose
// answer changed, each as an event marked related: ENTERED when it now
// matches --where, LEFT when it no longer does, UPDATED when it matches
// still and its --columns values changed. An object whose own event is yet
// to come (the cache holds a newer resourceVersion than the watch has
// shown) is left to that event.
func (e *emitter) reevaluate(queried []*factory.Informer) {
	e.lock.Lock()
	defer e.lock.Unlock()
	for _, inf := range queried {
		kind, prefix := KindName(inf.Resource), prefix(inf.Resource)
		for _, obj := range inf.Informer.GetStore().List() {
			if e.stopped || e.err != nil {
				return
			}
			key := prefix + indexers.ObjectName(obj)
			st, known := e.seen[key]
			if !known || st.rv != resourceVersion(obj) || e.unchanged.Has(key) {
				continue
			}
			isIn := e.matchLocked(obj)
			var typ EventType
			switch {
			case isIn && !st.in:
				typ = EventEntered
			case st.in && !isIn:
				typ = EventLeft
			case isIn && e.colsLocked(true, obj, nil) != st.cols:
				typ = EventUpdated
			default:
				continue
			}
			ev := e.emitLocked(kind, typ, mark{related: true}, nil, obj)
			e.seen[key] = seenState{in: isIn, rv: st.rv, cols: e.colsLocked(isIn, obj, ev)}
		}
	}
}

// emitEventLocked writes ev.
func (e *emitter) emitEventLocked(ev *Event) {
	if e.stopped || e.err != nil {
		return
	}
	ev.Cluster = e.cluster
	var data []byte
	if e.json {
		var err error
		if data, err = FormatJSON(ev, e.diff); err != nil {
			e.failLocked(fmt.Errorf("encoding %s %s: %w", ev.Kind, objectName(ev.Namespace, ev.Name), err))
			return
		}
	} else {
		data = []byte(FormatLine(ev))
	}
	if _, err := e.out.Write(data); err != nil {
		e.failLocked(err)
	}
}

func (e *emitter) failLocked(err error) {
	if e.err == nil {
		e.err = err
		close(e.failed)
	}
}

// stop makes every later handler call print nothing.
func (e *emitter) stop() {
	e.lock.Lock()
	defer e.lock.Unlock()
	e.stopped = true
}

// currentWarning says how many deletions could not be told from exits
// from the selectors; "" when none.
func (e *emitter) currentWarning() string {
	e.lock.Lock()
	defer e.lock.Unlock()
	if e.currentFails == 0 {
		return ""
	}
	return fmt.Sprintf("%d objects that left the watch could not be read to tell a deletion from an exit from the selectors, and show as DELETED (reading them needs the get permission): %v", e.currentFails, e.currentErr)
}

// currentFunc returns the object obj of res as the API server has it now,
// or nil when it has been deleted (or replaced by another of the same
// name).
type currentFunc func(res factory.Resource, obj any) (any, error)

// currentObject returns the currentFunc that reads objects from the API
// server conn.Config names, with a GET.
//
// With a label or field selector, the API server ends the watch of an
// object that an update takes out of the selector with a DELETED event,
// as it does for a deletion: the event carries the object as it was, so
// only reading it again tells them apart. One GET an exit or deletion,
// with the informer kept to the selector, costs less than watching every
// object of the resource to filter them here.
func currentObject(ctx context.Context, conn plan.Conn) (currentFunc, error) {
	client, err := dynamic.NewForConfig(conn.Config)
	if err != nil {
		return nil, err
	}
	return func(res factory.Resource, obj any) (any, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, nil
		}
		getCtx, cancel := context.WithTimeout(ctx, currentTimeout)
		defer cancel()
		var ri dynamic.ResourceInterface = client.Resource(res.GVR)
		if res.Namespaced {
			ri = client.Resource(res.GVR).Namespace(m.GetNamespace())
		}
		u, err := ri.Get(getCtx, m.GetName(), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, err
		case u.GetUID() != m.GetUID():
			return nil, nil // deleted, and another made with its name
		}
		u.SetManagedFields(nil)
		if ann := u.GetAnnotations(); ann != nil {
			if _, ok := ann[factory.LastAppliedAnnotation]; ok {
				delete(ann, factory.LastAppliedAnnotation)
				u.SetAnnotations(ann)
			}
		}
		return u, nil
	}, nil
}

// currentTimeout bounds the GET of an object that left the watch.
const currentTimeout = 30 * time.Second

func objectUID(obj any) types.UID {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetUID()
	}
	return ""
}

func (e *emitter) writeErr() error {
	e.lock.Lock()
	defer e.lock.Unlock()
	return e.err
}

// warnings summarises the evaluation failures of --where and --columns.
func (e *emitter) warnings() []query.Warning {
	e.lock.Lock()
	defer e.lock.Unlock()
	var out []query.Warning
	if w, ok := e.whereFails.Warning(e.whereTotal); ok {
		out = append(out, w)
	}
	for i := range e.colFails {
		if w, ok := e.colFails[i].Warning(e.colTotal); ok {
			out = append(out, w)
		}
	}
	return out
}

func resourceVersion(obj any) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return ""
}
