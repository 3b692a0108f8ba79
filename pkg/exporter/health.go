package exporter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// Ready returns nil when /readyz answers 200, or the error /readyz
// answers 503 with:
//
//   - until the first config is loaded, why: an API server that cannot
//     be reached, with the error of the last attempt and when the next is
//     (see Start);
//   - until every informer has synced once and the engine has computed the
//     series of every cached object, an error naming what has not; with
//     Options.KubeStateMetrics, every informer but those refused (see
//     waitsForRefused);
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
// request succeeds; one that never synced says so ("secrets: not synced,
// its families are not served: list failing for 3s: …forbidden…").
func (x *Exporter) Failing() []string {
	failing, _ := x.readiness()
	return failing
}

// waitsForRefused reports whether readiness waits for the informers
// whose requests are refused in a way retrying does not mend (forbidden,
// the resource not served: see factory.IsPermanent) to sync, as it waits
// for every other: export's policy, so that a resource it may not read
// keeps it unready and a rollout waiting on it fails. As
// kube-state-metrics (Options.KubeStateMetrics), which is ready whatever
// it may not read, the exporter is ready once the resources it may read
// have synced: those refused are logged (with the RBAC rule to add),
// named by /readyz, counted (kube_state_metrics_list_total and _watch_total
// with result="error", kubectl_informer_list_request_errors_total) and
// reported unsynced (kubectl_informer_resource_synced 0), and served once
// a request succeeds: the informers retry with backoff.
//
// This is the one place the policy is decided.
func (o Options) waitsForRefused() bool { return !o.KubeStateMetrics }

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

// synced returns nil once every informer has synced (but those refused,
// when readiness does not wait for them: see waitsForRefused) and the
// engine has computed the series of every cached object, or an error
// naming what has not.
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
	// with why their requests fail if they do; sorted. Those refused
	// are not among them when readiness does not wait for them.
	pending []string
	// refused names the informers not synced whose requests are refused
	// in a way retrying does not mend (see factory.IsPermanent); sorted.
	refused []string
	// failing names the informers whose requests fail, with why; sorted.
	failing []string
	// idle is whether the engine has computed every event received,
	// looked at after the informers.
	idle bool
}

func (x *Exporter) state() (informerState, error) {
	a := x.current()
	if a == nil {
		return informerState{}, x.notLoaded()
	}
	return a.state(x.opts.waitsForRefused()), nil
}

// state looks at the informers of a and at its engine; waitRefused
// counts the informers refused among those pending (see
// Options.waitsForRefused).
func (a *activeConfig) state(waitRefused bool) informerState {
	var st informerState
	health := map[*factory.Informer]error{}
	for _, r := range a.regs {
		name := informerName(r.inf)
		err, seen := health[r.inf]
		if !seen {
			err = r.inf.Healthy()
			health[r.inf] = err
			switch {
			case err == nil:
			case r.inf.Informer.HasSynced():
				st.failing = append(st.failing, name+": "+err.Error())
			default:
				st.failing = append(st.failing, name+": not synced, its families are not served: "+err.Error())
			}
		}
		if !r.inf.Informer.HasSynced() || !r.reg.HasSynced() {
			refused := err != nil && !r.inf.Informer.HasSynced() && factory.IsPermanent(err)
			if refused {
				st.refused = append(st.refused, name)
			}
			if refused && !waitRefused {
				continue
			}
			if err != nil {
				name += " (" + err.Error() + ")"
			}
			st.pending = append(st.pending, name)
		}
	}
	// After HasSynced: the initial events count as pending once delivered.
	// Looking at what each resource serves first removes the objects of
	// cut-off lists (see Engine.serves), which then count as pending.
	a.engine.servesAll()
	st.idle = a.engine.Idle()
	st.informers = len(health)
	slices.Sort(st.failing)
	for _, names := range []*[]string{&st.pending, &st.refused} {
		slices.Sort(*names)
		*names = slices.Compact(*names)
	}
	return st
}

// awaitSynced returns once the informers of a have synced and its engine
// has computed the series of every object they hold. It gives up when ctx
// ends, or when the requests of one of the informers fail in a way that
// retrying does not mend (forbidden, not found...), with that error; but
// for the exporter ready without them (see Options.waitsForRefused), which
// waits for the others only.
func (x *Exporter) awaitSynced(ctx context.Context, a *activeConfig) error {
	waitRefused := x.opts.waitsForRefused()
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		if st := a.state(waitRefused); len(st.pending) == 0 && st.idle {
			return nil
		}
		for _, r := range a.regs {
			if err := r.inf.Healthy(); waitRefused && err != nil && !r.inf.Informer.HasSynced() && factory.IsPermanent(err) {
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
// RBAC refusing them is one reason, whichever request it refuses, logged
// with the rule that lets the exporter read the resource (see rbacFix).
func (x *Exporter) logHealth(ctx context.Context, interval time.Duration) {
	type failure struct {
		reason string
		since  time.Time
	}
	logged := map[*factory.Informer]failure{} // what was logged of the informers failing
	limited := map[*factory.Informer]bool{}   // the informers logged as cut at ObjectLimit
	wait.UntilWithContext(ctx, func(context.Context) {
		a := x.current()
		if a == nil {
			return
		}
		now := map[*factory.Informer]failure{}
		for inf, name := range a.informerNames() {
			if !limited[inf] && inf.Requests.Limited.Load() > 0 {
				limited[inf] = true
				x.log.Warn("the list of the resource was cut at the object limit: the objects beyond it are not served; raise the limit, or set it to 0 for none",
					"resource", name, "object_limit", x.opts.ObjectLimit)
			}
			var re *factory.RequestError
			if !errors.As(inf.Healthy(), &re) {
				if f, was := logged[inf]; was {
					x.log.Info("list and watch requests succeed again; the series of the resource are current",
						"resource", name, "failed_for", time.Since(f.since).Round(time.Millisecond))
				}
				continue
			}
			f := failure{reason: re.Request + ": " + re.Reason(), since: re.Since}
			forbidden := apierrors.IsForbidden(re) && !factory.IsImpersonationDenied(re)
			watchOnly := inf.WatchDenied() != nil
			if forbidden {
				// One failure while RBAC refuses: the watch that streams
				// the list and the list that follows it are refused in
				// turn, each with a message of its own.
				f.reason = "forbidden"
			}
			if logged[inf] != f {
				msg := "list and watch requests fail; the series of the resource are as last seen until they succeed"
				if !inf.Informer.HasSynced() {
					msg = "list and watch requests fail; the resource has not synced, and its families are not served until they succeed"
				}
				attrs := []any{"resource", name, "request", re.Request, "failing_for", time.Since(re.Since).Round(time.Millisecond), "err", re.Reason()}
				if forbidden {
					attrs = append(attrs, "fix", rbacFix(inf, watchOnly))
				}
				x.log.Warn(msg, attrs...)
			}
			now[inf] = f
		}
		logged = now
	}, interval)
}

// rbacFix says what RBAC rule lets the exporter read inf's resource, on one
// line: the verbs list and watch (watch alone when watchOnly: the list is
// allowed) on it, by a ClusterRole, or a Role for an informer of one
// namespace.
func rbacFix(inf *factory.Informer, watchOnly bool) string {
	verbs := `["list", "watch"]`
	if watchOnly {
		verbs = `["watch"]`
	}
	role := "a ClusterRole"
	if inf.Resource.Namespaced && inf.Scope.Namespace != "" {
		role = fmt.Sprintf("a Role in namespace %s (or a ClusterRole)", inf.Scope.Namespace)
	}
	return fmt.Sprintf("grant the exporter's identity, by %s, the rule {apiGroups: [%q], resources: [%q], verbs: %s}; or leave the resource out",
		role, inf.Resource.GVR.Group, inf.Resource.GVR.Resource, verbs)
}

// limited returns the names of the informers of the active config whose
// lists were cut at Options.ObjectLimit, sorted.
func (x *Exporter) limited() []string {
	a := x.current()
	if a == nil {
		return nil
	}
	var out []string
	for inf, name := range a.informerNames() {
		if inf.Requests.Limited.Load() > 0 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func namespaceSuffix(s factory.Scope) string {
	if s.Namespace == "" {
		return ""
	}
	return " in " + s.Namespace
}

// logErrors logs, at most once per interval and family, the evaluation
// errors counted since the previous report, and once per family that its
// series are capped or have duplicates (see logFamilies).
func (x *Exporter) logErrors(ctx context.Context, interval time.Duration) {
	l := &familyLog{}
	wait.UntilWithContext(ctx, func(context.Context) { x.logFamilies(l) }, interval)
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
