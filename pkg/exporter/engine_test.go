package exporter

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// family compiles a Family by hand, as the config layer would.
func family(t *testing.T, env *indexers.Env, name, typ, help string, labels map[string]string, value, each, aggregate string, constLabels ...[2]string) *Family {
	t.Helper()
	f := &Family{Name: name, Type: typ, Help: help, Aggregate: aggregate, ConstLabels: constLabels}
	compile := func(expr string) *indexers.Program {
		var p *indexers.Program
		var err error
		if each != "" {
			p, err = env.CompileEach(expr, indexers.KindValue, name)
		} else {
			p, err = env.Compile(expr, indexers.KindValue, name)
		}
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, n := range slices.Sorted(maps.Keys(labels)) {
		f.LabelNames = append(f.LabelNames, n)
		f.Labels = append(f.Labels, compile(labels[n]))
	}
	if value != "" {
		f.Value = compile(value)
	}
	if each != "" {
		p, err := env.Compile(each, indexers.KindValue, name)
		if err != nil {
			t.Fatal(err)
		}
		f.Each = p
	}
	return f
}

func pod(ns, name, uid, node, phase string, restarts ...int64) *unstructured.Unstructured {
	var statuses []any
	for i, r := range restarts {
		statuses = append(statuses, map[string]any{"name": fmt.Sprintf("c%d", i), "restartCount": r})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"namespace": ns, "name": name, "uid": uid},
		"spec":     map[string]any{"nodeName": node},
		"status":   map[string]any{"phase": phase, "containerStatuses": statuses},
	}}
}

func testEngine(t *testing.T, opts EngineOptions) *Engine {
	t.Helper()
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	nsPod := map[string]string{"namespace": "object.metadata.namespace", "pod": "object.metadata.name"}
	c := &Compiled{Resources: []*CompiledResource{{
		Config: ResourceConfig{Resource: "pods"},
		Families: []*Family{
			family(t, env, "pod_info", TypeInfo, "Pod information.", map[string]string{"namespace": "object.metadata.namespace", "pod": "object.metadata.name", "node": "object.spec.nodeName"}, "", "", "", [2]string{"cluster", "c1"}),
			family(t, env, "pod_status_phase", TypeGauge, "The pod's phase.", map[string]string{"namespace": "object.metadata.namespace", "pod": "object.metadata.name", "phase": "each"}, "object.status.phase == each", `["Pending", "Running"]`, ""),
			family(t, env, "pod_restarts_total", TypeCounter, "Container restarts.", map[string]string{"namespace": "object.metadata.namespace", "pod": "object.metadata.name", "container": "each.name"}, "each.restartCount", "object.status.containerStatuses", ""),
			family(t, env, "pods_per_node", TypeGauge, "Pods per node and phase.", map[string]string{"node": "object.spec.nodeName", "phase": "object.status.phase"}, "", "", AggregateCount),
			family(t, env, "restarts_per_node_max", TypeGauge, "Most restarts of a pod per node.", map[string]string{"node": "object.spec.nodeName"}, "object.status.containerStatuses.map(c, c.restartCount).sum()", "", AggregateMax),
			family(t, env, "bad_value", TypeGauge, "A value that is a string.", nsPod, "object.metadata.name", "", ""),
		},
	}}}
	e := NewEngine(c, opts)
	t.Cleanup(e.Close)
	return e
}

func exposition(e *Engine, openMetrics bool) string {
	var b bytes.Buffer
	_ = e.WriteFamilies(&b, openMetrics) // a bytes.Buffer never fails a write
	return b.String()
}

func TestEngineGolden(t *testing.T) {
	e := testEngine(t, EngineOptions{})
	e.Update(0, pod("shop", "web-1", "u1", "n1", "Running", 2, 0))
	e.Update(0, pod("shop", "web-2", "u2", "n1", "Pending"))
	e.Update(0, pod("data", "db-0", "u3", "n2", "Running", 7))
	want := `# HELP pod_info Pod information.
# TYPE pod_info gauge
pod_info{namespace="shop",pod="web-1",cluster="c1",node="n1"} 1
pod_info{namespace="shop",pod="web-2",cluster="c1",node="n1"} 1
pod_info{namespace="data",pod="db-0",cluster="c1",node="n2"} 1
# HELP pod_status_phase The pod's phase.
# TYPE pod_status_phase gauge
pod_status_phase{namespace="shop",pod="web-1",phase="Pending"} 0
pod_status_phase{namespace="shop",pod="web-1",phase="Running"} 1
pod_status_phase{namespace="shop",pod="web-2",phase="Pending"} 1
pod_status_phase{namespace="shop",pod="web-2",phase="Running"} 0
pod_status_phase{namespace="data",pod="db-0",phase="Pending"} 0
pod_status_phase{namespace="data",pod="db-0",phase="Running"} 1
# HELP pod_restarts_total Container restarts.
# TYPE pod_restarts_total counter
pod_restarts_total{namespace="shop",pod="web-1",container="c0"} 2
pod_restarts_total{namespace="shop",pod="web-1",container="c1"} 0
pod_restarts_total{namespace="data",pod="db-0",container="c0"} 7
# HELP pods_per_node Pods per node and phase.
# TYPE pods_per_node gauge
pods_per_node{node="n1",phase="Pending"} 1
pods_per_node{node="n1",phase="Running"} 1
pods_per_node{node="n2",phase="Running"} 1
# HELP restarts_per_node_max Most restarts of a pod per node.
# TYPE restarts_per_node_max gauge
restarts_per_node_max{node="n1"} 2
restarts_per_node_max{node="n2"} 7
# HELP bad_value A value that is a string.
# TYPE bad_value gauge
`
	if got := exposition(e, false); got != want {
		t.Errorf("exposition:\n%s\nwant:\n%s", got, want)
	}
	if s, _, errs := e.resources[0].families[5].stats(); s != 0 || errs != 3 {
		t.Errorf("bad_value: %d series, %d errors; want 0 and 3 (one per pod)", s, errs)
	}
	lint(t, exposition(e, false))

	// An update moves the pod's contributions; a delete removes them.
	e.Update(0, pod("shop", "web-2", "u2", "n2", "Running", 9))
	e.Delete(0, pod("shop", "web-1", "u1", "n1", "Running"))
	got := exposition(e, false)
	for _, line := range []string{`pods_per_node{node="n2",phase="Running"} 2`, `restarts_per_node_max{node="n2"} 9`, `pod_restarts_total{namespace="shop",pod="web-2",container="c0"} 9`} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("after update and delete, missing %q in\n%s", line, got)
		}
	}
	for _, gone := range []string{`pod="web-1"`, `node="n1"`} {
		if strings.Contains(got, gone) {
			t.Errorf("after update and delete, %s still present:\n%s", gone, got)
		}
	}
}

func TestOpenMetrics(t *testing.T) {
	e := testEngine(t, EngineOptions{})
	e.Update(0, pod("shop", "web-1", "u1", "n1", "Running", 2))
	got := exposition(e, true)
	for _, want := range []string{
		"# TYPE pod info\n", `pod_info{namespace="shop",pod="web-1",cluster="c1",node="n1"} 1`,
		"# TYPE pod_restarts counter\n", `pod_restarts_total{namespace="shop",pod="web-1",container="c0"} 2`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("OpenMetrics output lacks %q:\n%s", want, got)
		}
	}
}

func TestMaxSeries(t *testing.T) {
	e := testEngine(t, EngineOptions{MaxSeriesPerMetric: 3})
	for i := range 5 {
		e.Update(0, pod("ns", fmt.Sprintf("p%d", i), fmt.Sprintf("u%d", i), fmt.Sprintf("n%d", i), "Running"))
	}
	series, dropped, _ := e.resources[0].families[0].stats()
	if series != 3 || dropped != 2 {
		t.Errorf("pod_info: %d series, %d dropped; want 3 and 2", series, dropped)
	}
	series, dropped, _ = e.resources[0].families[3].stats()
	if series != 3 || dropped != 2 {
		t.Errorf("pods_per_node (aggregate): %d series, %d dropped; want 3 and 2", series, dropped)
	}
}

func TestShardsPartition(t *testing.T) {
	var pods []*unstructured.Unstructured
	for i := range 60 {
		pods = append(pods, pod("ns", fmt.Sprintf("p%d", i), fmt.Sprintf("uid-%d", i), "n1", "Running"))
	}
	whole := testEngine(t, EngineOptions{})
	seen := map[string]int{}
	for _, p := range pods {
		whole.Update(0, p)
	}
	for s := range 3 {
		e := testEngine(t, EngineOptions{Shard: Shard{Index: s, Total: 3}})
		for _, p := range pods {
			e.Update(0, p)
		}
		for _, l := range strings.Split(exposition(e, false), "\n") {
			if strings.HasPrefix(l, "pod_info{") {
				seen[l]++
			}
		}
	}
	n := 0
	for _, l := range strings.Split(exposition(whole, false), "\n") {
		if strings.HasPrefix(l, "pod_info{") {
			n++
			if seen[l] != 1 {
				t.Errorf("%s appears in %d shards, want exactly 1", l, seen[l])
			}
		}
	}
	if n != 60 || len(seen) != 60 {
		t.Errorf("unsharded %d series, shards together %d; want 60 each", n, len(seen))
	}
}

// TestWorkersShareObjects checks that objects are spread evenly over the
// workers whatever their UIDs look like: those of the benchmark workload,
// made of the object's number written twice, all went to one of two
// workers when the worker was chosen by the low bits of FNV-1a.
func TestWorkersShareObjects(t *testing.T) {
	pods := workload.Spec{Pods: 10000, Namespaces: 20, Nodes: 100, PodsPerDeployment: 50}.PodObjects()
	for _, workers := range []int{2, 3, 4} {
		e := testEngine(t, EngineOptions{Workers: workers})
		counts := make([]int, workers)
		for _, p := range pods {
			counts[e.queueOf(string(p.UID))]++
		}
		// Even within 10%: more than 10 standard deviations of a uniform
		// choice for 10,000 objects.
		even := len(pods) / workers
		for q, n := range counts {
			if n < even*9/10 || n > even*11/10 {
				t.Errorf("%d workers: worker %d has %d of %d objects, want about %d", workers, q, n, len(pods), even)
			}
		}
	}
}

func lint(t *testing.T, text string) {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, text)
	}
	var list []*dto.MetricFamily
	for _, mf := range mfs {
		list = append(list, mf)
	}
	problems, err := promlint.NewWithMetricFamilies(list).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

// TestEscapedLabelValues checks that label values that need escaping come
// out escaped, and read back as they were, beside objects whose values
// need none.
func TestEscapedLabelValues(t *testing.T) {
	e := testEngine(t, EngineOptions{})
	nodes := map[string]string{"p0": "plain", "p1": `quo"te`, "p2": `back\slash`, "p3": "new\nline", "p4": "ünïcode"}
	for name, node := range nodes {
		e.Update(0, pod("ns", name, "uid-"+name, node, "Running"))
	}
	text := exposition(e, false)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, text)
	}
	got := map[string]string{}
	for _, m := range mfs["pod_info"].GetMetric() {
		var pod, node string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "pod":
				pod = l.GetValue()
			case "node":
				node = l.GetValue()
			}
		}
		got[pod] = node
	}
	if !maps.Equal(got, nodes) {
		t.Errorf("pod_info's nodes read back as %q, want %q", got, nodes)
	}
}

func TestLabelsSizeIsExact(t *testing.T) {
	quoted := newFamilyState(&Family{Name: "m", LabelNames: []string{"b", "a"}, ConstLabels: [][2]string{{"c", `x"y`}}}, 0)
	unquoted := newFamilyState(&Family{Name: "m", LabelNames: []string{"b", "a"}, ConstLabels: [][2]string{{"c", "xy"}}}, 0)
	for _, tc := range []struct {
		values []string
		plain  bool // with the unquoted constant
	}{
		{[]string{"", ""}, true},
		{[]string{"plain", "value"}, true},
		{[]string{`back\slash`, "value"}, false},
		{[]string{"plain", "new\nline"}, false},
		{[]string{`"quoted"`, "ünïcode"}, false},
		{[]string{"ünï", "côdé"}, true},
	} {
		values := tc.values
		extra := []extraLabel{{"label_x", values[1]}, {"label_y", values[0]}}
		for _, extra := range [][]extraLabel{nil, extra} {
			for _, s := range []*familyState{quoted, unquoted} {
				n, plain := s.labelsSize(values, extra)
				got := s.appendLabels(nil, values, extra, plain)
				if n != len(got) {
					t.Errorf("labelsSize(%q, %q) = %d, rendered %d bytes: %s", values, extra, n, len(got), got)
				}
				if want := tc.plain && s == unquoted; plain != want {
					t.Errorf("labelsSize(%q, %q) says plain %v, want %v", values, extra, plain, want)
				}
				// Asked to escape, lines that need none come out the same.
				if escaped := s.appendLabels(nil, values, extra, false); plain && !bytes.Equal(escaped, got) {
					t.Errorf("plain labels %s rendered %s when escaped", got, escaped)
				}
			}
		}
	}
	if got, want := string(quoted.appendLabels(nil, []string{"1", "2\n"}, nil, false)), `{a="2\n",b="1",c="x\"y"}`; got != want {
		t.Errorf("appendLabels = %s, want %s", got, want)
	}
}

// intList is a CEL list literal of the integers 0 to n-1.
func intList(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = strconv.Itoa(i)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// podWithContainers is a pod of n containers.
func podWithContainers(name string, n int) *unstructured.Unstructured {
	p := pod("ns", name, "uid-"+name, "n1", "Running")
	containers := make([]any, n)
	for i := range containers {
		containers[i] = map[string]any{"name": fmt.Sprintf("c%d", i)}
	}
	p.Object["spec"].(map[string]any)["containers"] = containers
	return p
}

// waitIdle waits until the engine has computed every event handed to it.
// Its deadline only catches a hang: on a busy machine the work may take
// many times what it takes on an idle one.
func waitIdle(t *testing.T, e *Engine) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Minute); !e.Idle(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d events still pending after 5 minutes: the engine hangs", e.Pending())
		}
	}
}

// TestCostLimitIsAnEvaluationError checks that an expression whose
// evaluation runs away (nested comprehensions over long lists, one of them
// the object's) is loaded, since what it costs depends on the objects, and
// is stopped by the cost limit on each object: the failures are counted
// with the limit's message, the family exposes nothing, and the exporter
// goes on computing its other families, for later events too.
//
// The limit is lowered to costLimit so that each stopped evaluation takes
// little work: the default one takes a second or more under -race.
func TestCostLimitIsAnEvaluationError(t *testing.T) {
	const costLimit = 10000
	list := intList(200)
	config := configHead + `resources:
- resource: pods
  metrics:
  - name: pod_info
    help: One series per pod.
    type: info
    labels:
      pod: object.metadata.name
  - name: pod_runaway
    help: Forty thousand comparisons per container.
    type: gauge
    labels:
      pod: object.metadata.name
    value: 'object.spec.containers.map(c, ` + list + `.map(x, ` + list + `.filter(y, x + y > 0).size()).sum()).sum()'
`
	env, err := indexers.NewEnv(indexers.WithCostLimit(costLimit))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile("c.yaml", []byte(config), env)
	if err != nil {
		t.Fatalf("the config is refused: %v", err)
	}
	e := NewEngine(c, EngineOptions{Workers: 2})
	t.Cleanup(e.Close)
	h := e.Handler(0)
	for _, name := range []string{"a", "b", "c"} {
		h.OnAdd(podWithContainers(name, 2), true)
	}
	waitIdle(t, e)
	info, runaway := e.resources[0].families[0], e.resources[0].families[1]
	if series, _, errs := runaway.stats(); series != 0 || errs != 3 {
		t.Errorf("pod_runaway: %d series, %d errors; want 0 and 3 (one per pod)", series, errs)
	}
	runaway.mu.Lock()
	last := runaway.lastError
	runaway.mu.Unlock()
	want := fmt.Sprintf(`metric "pod_runaway" value: cost limit exceeded: evaluation stopped after %d cost units; simplify the expression or raise the limit`, costLimit)
	if last != want {
		t.Errorf("last error %q, want %q", last, want)
	}
	// Later events are still computed.
	h.OnAdd(podWithContainers("d", 1), false)
	waitIdle(t, e)
	if series, _, errs := info.stats(); series != 4 || errs != 0 {
		t.Errorf("pod_info: %d series, %d errors; want 4 and 0", series, errs)
	}
	if series, _, errs := runaway.stats(); series != 0 || errs != 4 {
		t.Errorf("pod_runaway after a fourth pod: %d series, %d errors; want 0 and 4", series, errs)
	}
	var telemetry bool
	for _, fs := range e.familyStats() {
		if fs.name == "pod_runaway" && fs.errors == 4 {
			telemetry = true
		}
	}
	if !telemetry {
		t.Errorf("the telemetry does not count the failures: %+v", e.familyStats())
	}
	got := exposition(e, false)
	if n := strings.Count(got, "\npod_info{"); n != 4 || strings.Contains(got, "\npod_runaway{") {
		t.Errorf("exposition with %d pod_info series, want 4 and no pod_runaway series:\n%s", n, got)
	}
}

// TestRunawaySeriesAreCapped checks that label expressions that give every
// object (or every element of a long each list) a series of its own are
// held to --max-series-per-metric: the series beyond it are dropped and
// counted, and what a family keeps does not grow with the objects.
func TestRunawaySeriesAreCapped(t *testing.T) {
	const limit, pods, elements = 50, 150, 200
	config := configHead + `resources:
- resource: pods
  metrics:
  - name: pod_uid_info
    help: A series per pod, by a label unique to each.
    type: info
    labels:
      id: object.metadata.uid + "/" + string(size(object.metadata.name))
  - name: pod_elements
    help: Two hundred series per pod.
    type: gauge
    each: '` + intList(elements) + `.map(i, object.metadata.name + "-" + string(i))'
    labels:
      element: each
  - name: pods_by_uid
    help: A group per pod.
    type: gauge
    aggregate: count
    labels:
      uid: object.metadata.uid
`
	c, err := Compile("c.yaml", []byte(config), testConfigEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(c, EngineOptions{MaxSeriesPerMetric: limit, Workers: 2})
	t.Cleanup(e.Close)
	h := e.Handler(0)
	for i := range pods {
		h.OnAdd(pod("ns", fmt.Sprintf("p%03d", i), fmt.Sprintf("uid-%03d", i), "n1", "Running"), true)
	}
	waitIdle(t, e)
	exp := exposition(e, false)
	for i, want := range []struct {
		name    string
		dropped uint64
	}{
		{"pod_uid_info", pods - limit},
		{"pod_elements", pods*elements - limit},
		{"pods_by_uid", pods - limit},
	} {
		fs := e.resources[0].families[i]
		series, dropped, errs := fs.stats()
		if series != limit || dropped != want.dropped || errs != 0 {
			t.Errorf("%s: %d series, %d dropped, %d errors; want %d, %d and 0", want.name, series, dropped, errs, limit, want.dropped)
		}
		if n := strings.Count(exp, "\n"+want.name+"{"); n != limit {
			t.Errorf("%s: %d series exposed, want %d", want.name, n, limit)
		}
		// What the family holds is bounded by the cap, not by the objects.
		fs.mu.Lock()
		held, bytes := len(fs.groups), 0
		for _, r := range fs.rows {
			bytes += int(r.n)
			if r.n > 0 && fs.f.Aggregate == AggregateNone {
				held++
			}
		}
		fs.mu.Unlock()
		if held > limit || bytes > limit*100 {
			t.Errorf("%s holds %d entries and %d bytes of series for %d series", want.name, held, bytes, limit)
		}
	}
	for _, fs := range e.familyStats() {
		if fs.series != limit || fs.dropped == 0 {
			t.Errorf("telemetry of %s: %d series, %d dropped", fs.name, fs.series, fs.dropped)
		}
	}
}

// lookupFunc is an indexers.Lookup whose Get is a function.
type lookupFunc func(resource, namespace, name string) (any, bool, error)

func (f lookupFunc) Get(resource, namespace, name string) (any, bool, error) {
	return f(resource, namespace, name)
}

func (f lookupFunc) ByIndex(_, _, _ string) ([]any, error) { return nil, nil }

// TestLookupChangeDuringEvaluation checks the order in which a pod's series
// and the node it reads can be computed at startup: the pod is evaluated
// while its node is not cached yet (get() fails), and the node is cached
// and its handler runs before that evaluation ends. The node's handler must
// find the pod among its dependents, so that the pod is recomputed with
// the node; otherwise the pod would keep its error until it changes.
func TestLookupChangeDuringEvaluation(t *testing.T) {
	config := configHead + `resources:
- resource: pods
  metrics:
  - name: pod_zone_info
    help: The zone of each pod's node.
    type: info
    labels:
      pod: object.metadata.name
      zone: get("nodes", object.spec.nodeName).metadata.labels["zone"]
`
	c, err := Compile("c.yaml", []byte(config), testConfigEnv(t))
	if err != nil {
		t.Fatalf("the config is refused: %v", err)
	}
	e := NewEngine(c, EngineOptions{Workers: 1})
	t.Cleanup(e.Close)
	p := pod("shop", "web-1", "u1", "n1", "Running")
	node := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": "n1", "labels": map[string]any{"zone": "z1"}},
	}}
	var (
		mu         sync.Mutex
		cached     bool
		recomputed = make(chan struct{})
	)
	e.Bind([]Getter{func(key string) (any, bool, error) { return p, key == "shop/web-1", nil }},
		lookupFunc(func(resource, _, name string) (any, bool, error) {
			mu.Lock()
			defer mu.Unlock()
			if resource != "nodes" || name != "n1" {
				return nil, false, nil
			}
			if cached {
				return node, true, nil
			}
			// The node is not cached at this read. It is cached right
			// after, and its handler looks for the dependents while the
			// pod's evaluation goes on; recomputing them waits for it.
			cached = true
			refs := e.deps.dependents([]depKey{{resource: "nodes", value: "n1"}})
			go func() {
				defer close(recomputed)
				e.recompute(refs)
			}()
			return nil, false, nil
		}))
	e.Update(0, p)
	select {
	case <-recomputed:
	case <-time.After(time.Minute):
		t.Fatal("the recomputation did not end within a minute")
	}
	got := exposition(e, false)
	if !strings.Contains(got, `pod_zone_info{pod="web-1",zone="z1"} 1`) {
		t.Errorf("the pod was not recomputed once its node was cached:\n%s", got)
	}
	if _, _, errs := e.resources[0].families[0].stats(); errs != 1 {
		t.Errorf("%d evaluation errors, want 1 (the first evaluation)", errs)
	}
}

// TestSharedHeads computes the same random adds, changes and deletes of
// pods in two engines, one whose families keep each pod's identity labels
// once (as NewEngine sets them up) and one whose families keep every line
// whole, and checks that they write the same exposition after every batch,
// with names that need escaping and slots taken again by new pods, and
// that the first holds fewer bytes.
func TestSharedHeads(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	nsPod := map[string]string{"namespace": "object.metadata.namespace", "pod": "object.metadata.name"}
	with := func(m map[string]string, k, v string) map[string]string {
		m = maps.Clone(m)
		m[k] = v
		return m
	}
	newEngine := func() *Engine {
		c := &Compiled{Resources: []*CompiledResource{{
			Config: ResourceConfig{Resource: "pods"},
			Families: []*Family{
				family(t, env, "pod_info", TypeGauge, "h", with(nsPod, "node", "object.spec.nodeName"), "", "", "", [2]string{"cluster", "c1"}),
				family(t, env, "pod_status_phase", TypeGauge, "h", with(nsPod, "phase", "each"), "object.status.phase == each", `["Pending", "Running"]`, ""),
				family(t, env, "pod_restarts_total", TypeCounter, "h", with(nsPod, "container", "each.name"), "each.restartCount", "object.status.containerStatuses", ""),
				family(t, env, "pod_by_uid", TypeGauge, "h", map[string]string{"uid": "object.metadata.uid"}, "", "", ""),
				family(t, env, "pod_node", TypeGauge, "h", map[string]string{"node": "object.spec.nodeName"}, "", "", ""),
			},
		}}}
		e := NewEngine(c, EngineOptions{})
		t.Cleanup(e.Close)
		return e
	}
	shared, whole := newEngine(), newEngine()
	for _, fs := range whole.resources[0].families {
		fs.heads = nil
	}
	for i, want := range []bool{true, true, true, false, false} {
		if got := shared.resources[0].families[i].heads != nil; got != want {
			t.Fatalf("family %s shares heads: %v, want %v", shared.resources[0].families[i].f.Name, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(3, 3)) //nolint:gosec // G404: seeded test data, not a secret
	names := []string{"web", `we"b`, `a\b`, "line\nbreak", strings.Repeat("long", 40), "é"}
	for batch := range 100 {
		for range 1 + rng.IntN(20) {
			n := rng.IntN(60)
			p := pod(names[n%len(names)], fmt.Sprintf("%s-%d", names[(n/7)%len(names)], n), fmt.Sprintf("u%d", n),
				fmt.Sprintf("n%d", rng.IntN(3)), []string{"Pending", "Running"}[rng.IntN(2)], slices.Repeat([]int64{int64(rng.IntN(5))}, rng.IntN(4))...)
			if rng.IntN(4) == 0 {
				shared.Delete(0, p)
				whole.Delete(0, p)
				continue
			}
			shared.Update(0, p)
			whole.Update(0, p)
		}
		if got, want := exposition(shared, batch%2 == 0), exposition(whole, batch%2 == 0); got != want {
			t.Fatalf("batch %d: wrote\n%s\nwant\n%s", batch, got, want)
		}
	}
	live := func(e *Engine) (n int) {
		for _, fs := range e.resources[0].families {
			fs.mu.Lock()
			n += fs.live
			fs.mu.Unlock()
		}
		return n
	}
	if s, w := live(shared), live(whole); s >= w {
		t.Fatalf("%d bytes of lines with shared heads, %d without", s, w)
	}
}

// TestGateHoldsFamiliesUntilTheInitialListIsComputed checks that a
// resource's families are not written on scrapes until its gate holds and
// every object of its handler's initial list is computed, and that once
// written they stay, whatever the gate and the events pending.
func TestGateHoldsFamiliesUntilTheInitialListIsComputed(t *testing.T) {
	e := testEngine(t, EngineOptions{Workers: 1})
	var open atomic.Bool
	e.SetGate(func(i int) bool { return i == 0 && open.Load() })
	h := e.Handler(0)
	served := func() bool { return strings.Contains(exposition(e, false), "\npod_info{") }

	h.OnAdd(pod("shop", "a", "uid-a", "n1", "Running", 0), true)
	waitIdle(t, e)
	if served() {
		t.Fatal("pod_info is written before the gate holds")
	}

	// The gate holds, but an object of the initial list is not computed:
	// its stripe is locked, so the worker waits.
	stripe := e.stripe("uid-b")
	stripe.Lock()
	h.OnAdd(pod("shop", "b", "uid-b", "n1", "Running", 0), true)
	open.Store(true)
	if served() {
		stripe.Unlock()
		t.Fatal("pod_info is written while an object of the initial list is not computed")
	}
	stripe.Unlock()
	waitIdle(t, e)
	if got := exposition(e, false); strings.Count(got, "\npod_info{") != 2 {
		t.Fatalf("after the initial list is computed, want the 2 pods' pod_info:\n%s", got)
	}

	// Once written, families stay: with the gate shut and an event of a
	// later change pending.
	// The handler computes an event of a worker with nothing queued
	// itself: it is handed over from a goroutine of its own, which waits
	// on the stripe as the worker would.
	open.Store(false)
	stripe = e.stripe("uid-c")
	stripe.Lock()
	handed := make(chan struct{})
	go func() {
		defer close(handed)
		h.OnAdd(pod("shop", "c", "uid-c", "n1", "Running", 0), false)
	}()
	for e.Pending() == 0 {
		runtime.Gosched()
	}
	ok := served()
	stripe.Unlock()
	<-handed
	waitIdle(t, e)
	if !ok {
		t.Error("pod_info is not written after it was, with the gate shut and an event pending")
	}
}

// TestSharedEachLists: families with the same each expression share its
// list per object (one slot), and write what they write each with its own
// list, through random adds, changes and deletes of pods; a shared each
// that fails is counted, and reported under its own metric's name, by
// every family that has it.
func TestSharedEachLists(t *testing.T) {
	const config = `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  metrics:
  - name: restarts_total
    help: h
    type: counter
    each: object.status.containerStatuses
    labels: {pod: object.metadata.name, container: each.name}
    value: each.restartCount
  - name: restarted
    help: h
    type: gauge
    each: "object.status.containerStatuses "
    labels: {pod: object.metadata.name, uid: object.metadata.uid, container: each.name}
    value: each.restartCount > 0
  - name: team
    help: h
    type: gauge
    each: '[object.metadata.labels["team"]]'
    labels: {pod: object.metadata.name, team: each}
  - name: team_too
    help: h
    type: gauge
    each: '[object.metadata.labels["team"]]'
    labels: {pod: object.metadata.name, team: each}
  - name: phase
    help: h
    type: gauge
    each: '["Pending", "Running"]'
    labels: {pod: object.metadata.name, phase: each}
    value: object.status.phase == each
`
	compile := func() *Compiled {
		c, err := Compile("c.yaml", []byte(config), testConfigEnv(t))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	sharedConfig, ownConfig := compile(), compile()
	var slots []int
	for _, f := range sharedConfig.Resources[0].Families {
		slots = append(slots, f.EachSlot)
	}
	if want := []int{0, 0, 1, 1, 2}; !slices.Equal(slots, want) || sharedConfig.Resources[0].EachSlots != 3 {
		t.Fatalf("each slots %v of %d, want %v of 3", slots, sharedConfig.Resources[0].EachSlots, want)
	}
	for _, f := range ownConfig.Resources[0].Families {
		f.EachSlot = -1
	}
	shared, own := NewEngine(sharedConfig, EngineOptions{}), NewEngine(ownConfig, EngineOptions{})
	t.Cleanup(shared.Close)
	t.Cleanup(own.Close)

	rng := rand.New(rand.NewPCG(5, 5)) //nolint:gosec // G404: seeded test data, not a secret
	// failed counts the updates of pods without the label team.
	var failed uint64
	for batch := range 50 {
		for range 1 + rng.IntN(10) {
			n := rng.IntN(30)
			p := pod("ns", fmt.Sprintf("p%d", n), fmt.Sprintf("u%d", n), "n1", []string{"Pending", "Running"}[rng.IntN(2)],
				slices.Repeat([]int64{int64(rng.IntN(3))}, rng.IntN(4))...)
			if rng.IntN(4) == 0 {
				shared.Delete(0, p)
				own.Delete(0, p)
				continue
			}
			if rng.IntN(2) == 0 {
				p.SetLabels(map[string]string{"team": fmt.Sprintf("t%d", rng.IntN(3))})
			} else {
				failed++
			}
			shared.Update(0, p)
			own.Update(0, p)
		}
		if got, want := exposition(shared, batch%2 == 0), exposition(own, batch%2 == 0); got != want {
			t.Fatalf("batch %d: wrote\n%s\nwant\n%s", batch, got, want)
		}
	}
	if failed == 0 {
		t.Fatal("no pod without the label team was computed")
	}
	for _, fs := range shared.resources[0].families[2:4] {
		_, _, errs := fs.stats()
		if errs != failed {
			t.Errorf("%s: %d errors, want %d (one per update of a pod without the label team)", fs.f.Name, errs, failed)
		}
		if msg, want := fs.lastErrorMessage(), fmt.Sprintf("metric %q each: ", fs.f.Name); !strings.HasPrefix(msg, want) {
			t.Errorf("%s: last error %q, want one that starts with %q", fs.f.Name, msg, want)
		}
	}
}

// TestReplacedObjectLeavesNoSeries: an update whose object has another UID
// is an object deleted and created again under the same name while the
// watch was down, as an informer's relist delivers it. Nothing of the old
// UID stays: not its series (pod_info on its node, pod_status_phase with
// its phase beside the new one's), nor its place in the aggregates, nor
// the label sets it claimed in a family whose labels do not identify the
// object. The exposition is then the one of an engine that saw the new
// object only, with each series once.
func TestReplacedObjectLeavesNoSeries(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	byNode := family(t, env, "pod_node", TypeGauge, "The node of each pod, by name only.", map[string]string{"pod": "object.metadata.name", "node": "object.spec.nodeName"}, "", "", "")
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			engine := func() *Engine {
				e := testEngine(t, EngineOptions{Workers: workers})
				e.compiled.Resources[0].Families = append(e.compiled.Resources[0].Families, byNode)
				e.resources[0].families = append(e.resources[0].families, newFamilyState(byNode, 0))
				return e
			}
			e := engine()
			h := e.Handler(0)
			old := pod("shop", "web", "uid-old", "n1", "Pending", 3)
			other := pod("shop", "db", "uid-db", "n1", "Running", 1)
			h.OnAdd(old, true)
			h.OnAdd(other, true)
			waitIdle(t, e)
			// Deleted and created again on another node, in another phase;
			// the relist delivers an update from the old object to the new.
			recreated := pod("shop", "web", "uid-new", "n2", "Running", 0)
			h.OnUpdate(old, recreated)
			waitIdle(t, e)

			want := engine()
			want.Update(0, other)
			want.Update(0, recreated)
			// Slots are reused: the lines of the objects come in another
			// order.
			sorted := func(text string) string {
				lines := strings.Split(text, "\n")
				slices.Sort(lines)
				return strings.Join(lines, "\n")
			}
			got := exposition(e, false)
			if w := exposition(want, false); sorted(got) != sorted(w) {
				t.Errorf("after the replacement:\n%s\nwant, as for the new object only:\n%s", got, w)
			}
			lint(t, got)
			if n := len(e.resources[0].slots.slots); n != 2 {
				t.Errorf("%d objects hold a slot, want 2", n)
			}
			for _, fs := range e.resources[0].families {
				if h := fs.health(); h.duplicates != 0 {
					t.Errorf("%s: %d series left out as duplicates (%s)", fs.f.Name, h.duplicates, h.lastDuplicate)
				}
			}
		})
	}
}

// TestEarlyObjectsNoEventNamed: objects computed as their first list
// arrives (Engine.Early) are served once the handler has synced, except
// those that no event of the handler named (a list cut off before its end
// received them, and they were deleted before it was listed again), whose
// series are removed before the families are served; aggregates count only
// the objects left.
func TestEarlyObjectsNoEventNamed(t *testing.T) {
	e := testEngine(t, EngineOptions{Workers: 2})
	var synced atomic.Bool
	e.SetGate(func(int) bool { return synced.Load() })
	early := e.Early(0)
	if early == nil {
		t.Fatal("Early is nil for families whose labels tell pods apart")
	}
	for _, name := range []string{"a", "b", "gone"} {
		early(pod("shop", name, "uid-"+name, "n1", "Running", 0))
	}
	waitIdle(t, e)
	if got := exposition(e, false); strings.Contains(got, "\npod_info{") {
		t.Fatalf("pod_info is written before the handler has synced:\n%s", got)
	}
	h := e.Handler(0)
	h.OnAdd(pod("shop", "a", "uid-a", "n1", "Running", 0), true)
	h.OnAdd(pod("shop", "b", "uid-b", "n1", "Running", 0), true)
	synced.Store(true)
	for !e.servesAll() || !e.Idle() {
		time.Sleep(time.Millisecond)
	}
	got := exposition(e, false)
	for _, name := range []string{"a", "b"} {
		if !strings.Contains(got, fmt.Sprintf(`pod_info{namespace="shop",pod=%q,cluster="c1",node="n1"} 1`, name)) {
			t.Errorf("no pod_info of pod %s, named by an event:\n%s", name, got)
		}
	}
	if strings.Contains(got, `pod="gone"`) {
		t.Errorf("pod gone, which no event named, is still written:\n%s", got)
	}
	if !strings.Contains(got, `pods_per_node{node="n1",phase="Running"} 2`) {
		t.Errorf("pods_per_node counts other than the 2 pods named:\n%s", got)
	}
}

// TestEarlyNeedsLabelsThatTellObjectsApart: a family whose labels may not
// tell objects apart needs each replaced object's series removed before
// its replacement's are computed, which computing objects as they arrive
// does not promise: its resource's objects are computed from the handler's
// events only.
func TestEarlyNeedsLabelsThatTellObjectsApart(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	c := &Compiled{Resources: []*CompiledResource{{
		Config:   ResourceConfig{Resource: "pods"},
		Families: []*Family{family(t, env, "pod_node", TypeInfo, "The pod's node.", map[string]string{"node": "object.spec.nodeName"}, "", "", "")},
	}}}
	e := NewEngine(c, EngineOptions{})
	defer e.Close()
	if e.Early(0) != nil {
		t.Error("Early is not nil for a family labelled by node alone")
	}
}
