package exporter

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// TestDefaultServesEveryObject runs more objects than the cap of former
// defaults (100,000) through a real cache.Indexer and the engine's queue,
// with the exporter's default options, and checks that every series is
// served and none is counted as dropped, after adds, updates and deletes.
func TestDefaultServesEveryObject(t *testing.T) {
	if testing.Short() {
		t.Skip("100,001 objects")
	}
	const n = 100_001
	x, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	c := &Compiled{Resources: []*CompiledResource{{
		Config:   ResourceConfig{Resource: "pods"},
		Families: []*Family{family(t, env, "pod_info", TypeInfo, "A series per pod.", map[string]string{"uid": "object.metadata.uid"}, "", "", "")},
	}}}
	e := NewEngine(c, EngineOptions{MaxSeriesPerMetric: x.opts.MaxSeriesPerMetric, Workers: 2})
	t.Cleanup(e.Close)
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	h := e.Handler(0)
	obj := func(i int, phase string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"namespace": "ns", "name": fmt.Sprintf("p%06d", i), "uid": fmt.Sprintf("u%06d", i)},
			"status":   map[string]any{"phase": phase},
		}}
	}
	for i := range n {
		o := obj(i, "Pending")
		if err := store.Add(o); err != nil {
			t.Fatal(err)
		}
		h.OnAdd(o, true)
	}
	// Some objects change, some go away, new ones come.
	for i := 0; i < n; i += 1000 {
		o := obj(i, "Running")
		old, _, _ := store.Get(o)
		if err := store.Update(o); err != nil {
			t.Fatal(err)
		}
		h.OnUpdate(old, o)
		gone := obj(i+1, "Pending")
		if err := store.Delete(gone); err != nil {
			t.Fatal(err)
		}
		h.OnDelete(gone)
		added := obj(n+i, "Pending")
		if err := store.Add(added); err != nil {
			t.Fatal(err)
		}
		h.OnAdd(added, false)
	}
	waitIdle(t, e)
	want := len(store.ListKeys())
	if want <= 100_000 {
		t.Fatalf("the store holds %d objects, want more than 100,000", want)
	}
	var cw countingWriter
	if err := e.WriteFamilies(&cw, false); err != nil {
		t.Fatal(err)
	}
	if served := cw.lines - 2; served != want { // less HELP and TYPE
		t.Errorf("%d series served for %d objects", served, want)
	}
	for _, fs := range e.familyStats() {
		if fs.series != want || fs.dropped != 0 || fs.unserved != 0 {
			t.Errorf("%s: %d series, %d dropped, %d not served; want %d, 0 and 0", fs.name, fs.series, fs.dropped, fs.unserved, want)
		}
	}
}

// TestCappedMetricsAreReported checks what a cap that bites shows: a
// warning per capped metric, once, with the cap, the series wanted and
// the flag; /readyz still 200, naming each capped metric with the series
// it serves of those wanted; and kubectl_informer_metric_series_capped.
func TestCappedMetricsAreReported(t *testing.T) {
	e := testEngine(t, EngineOptions{MaxSeriesPerMetric: 3})
	for i := range 5 {
		e.Update(0, pod("ns", fmt.Sprintf("p%d", i), fmt.Sprintf("u%d", i), fmt.Sprintf("n%d", i), "Running"))
	}
	var logs bytes.Buffer
	x := testExporter(t, e, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: dropTime})))
	l := &familyLog{}
	x.logFamilies(l)
	x.logFamilies(l)
	var capped []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "metric capped") {
			capped = append(capped, line)
		}
	}
	const prefix = `level=WARN msg="metric capped: series beyond --max-series-per-metric are not served; raise it, or set it to 0 for no cap" `
	wantLogs := []string{
		prefix + `metric=pod_info cap=3 series_wanted=5 series_served=3`,
		prefix + `metric=pod_status_phase cap=3 series_wanted=10 series_served=3`,
		prefix + `metric=pods_per_node cap=3 series_wanted=5 series_served=3`,
		prefix + `metric=restarts_per_node_max cap=3 series_wanted=5 series_served=3`,
	}
	if strings.Join(capped, "\n") != strings.Join(wantLogs, "\n") {
		t.Errorf("logged:\n%s\nwant once each:\n%s", strings.Join(capped, "\n"), strings.Join(wantLogs, "\n"))
	}

	resp, body := fetch(t, x, "/readyz")
	const wantBody = `ok, but 4 metrics are capped by --max-series-per-metric (raise it, or set it to 0 for no cap):
pod_info: 3 of 5 series served
pod_status_phase: 3 of 10 series served
pods_per_node: 3 of 5 series served
restarts_per_node_max: 3 of 5 series served
`
	if resp.StatusCode != http.StatusOK || body != wantBody {
		t.Errorf("/readyz: %d\n%s\nwant 200\n%s", resp.StatusCode, body, wantBody)
	}
	_, metrics := fetch(t, x, "/metrics")
	for _, want := range []string{
		`kubectl_informer_metric_series_capped{metric="pod_info"} 2`,
		`kubectl_informer_metric_series_capped{metric="pod_status_phase"} 7`,
		`kubectl_informer_metric_series_capped{metric="pod_restarts_total"} 0`,
		`kubectl_informer_metric_series_dropped_total{metric="pod_info"} 2`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// Once the objects beyond the cap are gone, every metric is whole
	// again: /readyz says ok.
	for i := 1; i < 5; i++ {
		e.Delete(0, pod("ns", fmt.Sprintf("p%d", i), fmt.Sprintf("u%d", i), fmt.Sprintf("n%d", i), "Running"))
	}
	if _, body := fetch(t, x, "/readyz"); body != "ok\n" {
		t.Errorf("/readyz once nothing is capped: %q, want ok", body)
	}
}

// dropTime leaves the time out of test logs.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey && len(groups) == 0 {
		return slog.Attr{}
	}
	return a
}

// TestDuplicateSeriesAreDropped checks that series of a metric without
// aggregate that have the same labels, of different objects or of the
// elements of one object, are served once: the first is served, the
// others are counted, and the metric is logged once with the fix.
func TestDuplicateSeriesAreDropped(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	c := &Compiled{Resources: []*CompiledResource{{
		Config: ResourceConfig{Resource: "pods"},
		Families: []*Family{
			family(t, env, "pod_phase", TypeGauge, "Phases.", map[string]string{"phase": "object.status.phase"}, "", "", ""),
			family(t, env, "pod_letter", TypeGauge, "Letters of a pod.", map[string]string{"namespace": "object.metadata.namespace", "pod": "object.metadata.name", "letter": "each"}, "", `["a", "b", "a"]`, ""),
		},
	}}}
	e := NewEngine(c, EngineOptions{})
	t.Cleanup(e.Close)
	e.Update(0, pod("shop", "web-1", "u1", "n1", "Running"))
	e.Update(0, pod("shop", "web-2", "u2", "n1", "Running"))
	e.Update(0, pod("shop", "web-3", "u3", "n1", "Pending"))
	want := `# HELP pod_phase Phases.
# TYPE pod_phase gauge
pod_phase{phase="Running"} 1
pod_phase{phase="Pending"} 1
# HELP pod_letter Letters of a pod.
# TYPE pod_letter gauge
pod_letter{namespace="shop",pod="web-1",letter="a"} 1
pod_letter{namespace="shop",pod="web-1",letter="b"} 1
pod_letter{namespace="shop",pod="web-2",letter="a"} 1
pod_letter{namespace="shop",pod="web-2",letter="b"} 1
pod_letter{namespace="shop",pod="web-3",letter="a"} 1
pod_letter{namespace="shop",pod="web-3",letter="b"} 1
`
	if got := exposition(e, false); got != want {
		t.Errorf("exposition:\n%s\nwant:\n%s", got, want)
	}
	lint(t, exposition(e, false))
	stats := e.familyStats()
	if stats[0].duplicates != 1 || stats[0].series != 2 || stats[1].duplicates != 3 || stats[1].series != 6 {
		t.Errorf("duplicates %d and %d, series %d and %d; want 1 and 3, 2 and 6", stats[0].duplicates, stats[1].duplicates, stats[0].series, stats[1].series)
	}

	// The pod whose series was served goes away: the label set is free
	// for the next pod that has it.
	e.Delete(0, pod("shop", "web-1", "u1", "n1", "Running"))
	e.Update(0, pod("shop", "web-3", "u3", "n1", "Running"))
	e.Update(0, pod("shop", "web-2", "u2", "n1", "Running"))
	got := exposition(e, false)
	if !strings.HasPrefix(got, "# HELP pod_phase Phases.\n# TYPE pod_phase gauge\npod_phase{phase=\"Running\"} 1\n# HELP pod_letter") {
		t.Errorf("after the pod served went away, want one Running series:\n%s", got)
	}

	var logs bytes.Buffer
	x := testExporter(t, e, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: dropTime})))
	l := &familyLog{}
	x.logFamilies(l)
	x.logFamilies(l)
	const msg = `level=WARN msg="metric has series with the same labels: one is served, the others are dropped; add labels that tell the objects apart, or use aggregate: count to count them" `
	wantLogs := msg + `metric=pod_phase duplicates=2 series="pod_phase{phase=\"Running\"}"` + "\n" +
		msg + `metric=pod_letter duplicates=5 series="pod_letter{namespace=\"shop\",pod=\"web-2\",letter=\"a\"}"` + "\n"
	if logs.String() != wantLogs {
		t.Errorf("logged:\n%s\nwant:\n%s", logs.String(), wantLogs)
	}
	_, metrics := fetch(t, x, "/metrics")
	if want := `kubectl_informer_metric_series_duplicate_total{metric="pod_phase"} 2`; !strings.Contains(metrics, want+"\n") {
		t.Errorf("/metrics lacks %s", want)
	}
}
