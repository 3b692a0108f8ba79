package exporter

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
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
	return NewEngine(c, opts)
}

func exposition(e *Engine, openMetrics bool) string {
	var b bytes.Buffer
	e.WriteFamilies(&b, openMetrics)
	return b.String()
}

func TestEngineGolden(t *testing.T) {
	e := testEngine(t, EngineOptions{})
	e.Update(0, pod("shop", "web-1", "u1", "n1", "Running", 2, 0))
	e.Update(0, pod("shop", "web-2", "u2", "n1", "Pending"))
	e.Update(0, pod("data", "db-0", "u3", "n2", "Running", 7))
	want := `# HELP pod_info Pod information.
# TYPE pod_info gauge
pod_info{cluster="c1",namespace="shop",node="n1",pod="web-1"} 1
pod_info{cluster="c1",namespace="shop",node="n1",pod="web-2"} 1
pod_info{cluster="c1",namespace="data",node="n2",pod="db-0"} 1
# HELP pod_status_phase The pod's phase.
# TYPE pod_status_phase gauge
pod_status_phase{namespace="shop",phase="Pending",pod="web-1"} 0
pod_status_phase{namespace="shop",phase="Running",pod="web-1"} 1
pod_status_phase{namespace="shop",phase="Pending",pod="web-2"} 1
pod_status_phase{namespace="shop",phase="Running",pod="web-2"} 0
pod_status_phase{namespace="data",phase="Pending",pod="db-0"} 0
pod_status_phase{namespace="data",phase="Running",pod="db-0"} 1
# HELP pod_restarts_total Container restarts.
# TYPE pod_restarts_total counter
pod_restarts_total{container="c0",namespace="shop",pod="web-1"} 2
pod_restarts_total{container="c1",namespace="shop",pod="web-1"} 0
pod_restarts_total{container="c0",namespace="data",pod="db-0"} 7
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
	for _, line := range []string{`pods_per_node{node="n2",phase="Running"} 2`, `restarts_per_node_max{node="n2"} 9`, `pod_restarts_total{container="c0",namespace="shop",pod="web-2"} 9`} {
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
		"# TYPE pod info\n", `pod_info{cluster="c1",namespace="shop",node="n1",pod="web-1"} 1`,
		"# TYPE pod_restarts counter\n", `pod_restarts_total{container="c0",namespace="shop",pod="web-1"} 2`,
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

func TestLabelsSizeIsExact(t *testing.T) {
	f := &Family{Name: "m", LabelNames: []string{"b", "a"}, ConstLabels: [][2]string{{"c", `x"y`}}}
	s := newFamilyState(f, 0)
	for _, values := range [][]string{
		{"", ""},
		{"plain", "value"},
		{`back\slash`, "new\nline"},
		{`"quoted"`, "ünïcode"},
	} {
		got := s.appendLabels(nil, values)
		if n := s.labelsSize(values); n != len(got) {
			t.Errorf("labelsSize(%q) = %d, rendered %d bytes: %s", values, n, len(got), got)
		}
	}
	if got, want := string(s.appendLabels(nil, []string{"1", "2\n"})), `{a="2\n",b="1",c="x\"y"}`; got != want {
		t.Errorf("appendLabels = %s, want %s", got, want)
	}
}
