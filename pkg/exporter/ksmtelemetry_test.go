package exporter

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// ksmInformer is an informer of gvk, as resource, with request counts.
func ksmInformer(gvk schema.GroupVersionKind, resource string, lists, listErrors, watches, watchErrors uint64) *factory.Informer {
	inf := &factory.Informer{Resource: factory.Resource{GVK: gvk, GVR: gvk.GroupVersion().WithResource(resource)}}
	inf.Requests.Lists.Store(lists)
	inf.Requests.ListErrors.Store(listErrors)
	inf.Requests.Watches.Store(watches)
	inf.Requests.WatchErrors.Store(watchErrors)
	return inf
}

var (
	podGVK        = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	hpaGVK        = schema.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}
	fooGVK        = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Foo"}
)

// TestKubeStateMetricsTelemetry checks kube-state-metrics' own metrics as
// its registry writes them: the list and watch counters by the type of
// each resource (summed over its namespaces, a series once not zero), the
// shard, the custom resource state counters at zero without a custom
// resource config; they pass promlint; and the counters of an informer a
// reload drops stay counted.
func TestKubeStateMetricsTelemetry(t *testing.T) {
	pods := []*factory.Informer{ksmInformer(podGVK, "pods", 3, 1, 5, 0), ksmInformer(podGVK, "pods", 2, 0, 1, 1)}
	deployments := ksmInformer(deploymentGVK, "deployments", 0, 0, 4, 0)
	hpas := ksmInformer(hpaGVK, "horizontalpodautoscalers", 1, 0, 0, 0)
	foos := ksmInformer(fooGVK, "foos", 0, 0, 2, 2)
	x := &Exporter{log: slog.New(slog.DiscardHandler), opts: Options{KubeStateMetrics: true, Shard: Shard{Index: 2, Total: 3}}, shard: Shard{Index: 2, Total: 3}}
	x.active = &activeConfig{engine: testEngine(t, EngineOptions{}), informers: [][]*factory.Informer{pods, {deployments}, {hpas}},
		lookups: map[string][]*factory.Informer{"foos": {foos}}}
	x.tel = newTelemetry(x)
	x.ksm = newKSMTelemetry(x)

	names := []string{"kube_state_metrics_list_total", "kube_state_metrics_watch_total", "kube_state_metrics_shard_ordinal",
		"kube_state_metrics_total_shards", "kube_state_metrics_custom_resource_state_add_events_total",
		"kube_state_metrics_custom_resource_state_update_events_total", "kube_state_metrics_custom_resource_state_delete_events_total",
		"kube_state_metrics_custom_resource_state_cache", "kube_state_metrics_list_objects"}
	const want = `# HELP kube_state_metrics_custom_resource_state_add_events_total Number of times that the CRD informer triggered the add event.
# TYPE kube_state_metrics_custom_resource_state_add_events_total counter
kube_state_metrics_custom_resource_state_add_events_total 0
# HELP kube_state_metrics_custom_resource_state_cache Net amount of CRDs affecting the cache currently.
# TYPE kube_state_metrics_custom_resource_state_cache gauge
kube_state_metrics_custom_resource_state_cache 0
# HELP kube_state_metrics_custom_resource_state_delete_events_total Number of times that the CRD informer triggered the remove event.
# TYPE kube_state_metrics_custom_resource_state_delete_events_total counter
kube_state_metrics_custom_resource_state_delete_events_total 0
# HELP kube_state_metrics_custom_resource_state_update_events_total Number of times that the CRD informer triggered the update event.
# TYPE kube_state_metrics_custom_resource_state_update_events_total counter
kube_state_metrics_custom_resource_state_update_events_total 0
# HELP kube_state_metrics_list_total Number of total resource list calls in kube-state-metrics
# TYPE kube_state_metrics_list_total counter
kube_state_metrics_list_total{resource="*v1.Pod",result="error"} 1
kube_state_metrics_list_total{resource="*v1.Pod",result="success"} 4
kube_state_metrics_list_total{resource="*v2.HorizontalPodAutoscaler",result="success"} 1
# HELP kube_state_metrics_shard_ordinal Current sharding ordinal/index of this instance
# TYPE kube_state_metrics_shard_ordinal gauge
kube_state_metrics_shard_ordinal{shard_ordinal="2"} 2
# HELP kube_state_metrics_total_shards Number of total shards this instance is aware of
# TYPE kube_state_metrics_total_shards gauge
kube_state_metrics_total_shards 3
# HELP kube_state_metrics_watch_total Number of total resource watch calls in kube-state-metrics
# TYPE kube_state_metrics_watch_total counter
kube_state_metrics_watch_total{resource="*unstructured.Unstructured",result="error"} 2
kube_state_metrics_watch_total{resource="*v1.Deployment",result="success"} 4
kube_state_metrics_watch_total{resource="*v1.Pod",result="error"} 1
kube_state_metrics_watch_total{resource="*v1.Pod",result="success"} 5
`
	if err := testutil.GatherAndCompare(x.ksm.registry, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	problems, err := testutil.GatherAndLint(x.ksm.registry)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	for _, name := range []string{"kube_state_metrics_build_info", "http_request_duration_seconds"} {
		if n, err := testutil.GatherAndCount(x.ksm.registry, name); err != nil || n == 0 && name == "kube_state_metrics_build_info" {
			t.Errorf("%s: %d series, %v", name, n, err)
		}
	}

	// A reload drops the deployments' informer; the pods' count on.
	pods[0].Requests.Watches.Add(2)
	x.active = &activeConfig{engine: x.active.engine, informers: [][]*factory.Informer{pods}}
	const after = `# HELP kube_state_metrics_watch_total Number of total resource watch calls in kube-state-metrics
# TYPE kube_state_metrics_watch_total counter
kube_state_metrics_watch_total{resource="*unstructured.Unstructured",result="error"} 2
kube_state_metrics_watch_total{resource="*v1.Deployment",result="success"} 4
kube_state_metrics_watch_total{resource="*v1.Pod",result="error"} 1
kube_state_metrics_watch_total{resource="*v1.Pod",result="success"} 7
`
	if err := testutil.GatherAndCompare(x.ksm.registry, strings.NewReader(after), "kube_state_metrics_watch_total"); err != nil {
		t.Errorf("after a reload: %v", err)
	}
}

// TestKubeStateMetricsUnsharded: without a shard, kube-state-metrics'
// defaults: shard 0 of 1.
func TestKubeStateMetricsUnsharded(t *testing.T) {
	x := &Exporter{log: slog.New(slog.DiscardHandler), opts: Options{KubeStateMetrics: true}}
	x.ksm = newKSMTelemetry(x)
	const want = `# HELP kube_state_metrics_shard_ordinal Current sharding ordinal/index of this instance
# TYPE kube_state_metrics_shard_ordinal gauge
kube_state_metrics_shard_ordinal{shard_ordinal="0"} 0
# HELP kube_state_metrics_total_shards Number of total shards this instance is aware of
# TYPE kube_state_metrics_total_shards gauge
kube_state_metrics_total_shards 1
`
	if err := testutil.GatherAndCompare(x.ksm.registry, strings.NewReader(want), "kube_state_metrics_shard_ordinal", "kube_state_metrics_total_shards"); err != nil {
		t.Error(err)
	}
}

// TestKubeStateMetricsConfigFiles: the config files' hash (the first 48
// bits of their MD5, as kube-state-metrics writes it; the values here are
// computed by Python's hashlib), reload success and time, by type and
// file name; a file never read has none; a failed load of the exporter's
// own config file reports it failed, keeping the hash last loaded; with a
// custom resource config, the CRD counters are not reported.
func TestKubeStateMetricsConfigFiles(t *testing.T) {
	dir := t.TempDir()
	options, crs := filepath.Join(dir, "options.yaml"), filepath.Join(dir, "crs.yaml")
	if err := os.WriteFile(options, []byte("resources: [pods]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	x := &Exporter{log: slog.New(slog.DiscardHandler), opts: Options{KubeStateMetrics: true, Sources: Sources{ConfigPath: options},
		KubeStateMetricsConfigFiles: []KubeStateMetricsConfigFile{{Type: "config", Path: options}, {Type: "customresourceconfig", Path: crs}}}}
	x.ksm = newKSMTelemetry(x)
	config := []string{"kube_state_metrics_config_hash", "kube_state_metrics_last_config_reload_successful", "kube_state_metrics_custom_resource_state_cache"}
	if n, err := testutil.GatherAndCount(x.ksm.registry, config...); err != nil || n != 0 {
		t.Errorf("before a load: %d series, %v; want none", n, err)
	}
	before := time.Now().Unix()
	x.ksm.loaded(nil)
	want := `# HELP kube_state_metrics_config_hash Hash of the currently loaded configuration.
# TYPE kube_state_metrics_config_hash gauge
kube_state_metrics_config_hash{filename="` + options + `",type="config"} 2.00391457933201e+14
# HELP kube_state_metrics_last_config_reload_successful Whether the last configuration reload attempt was successful.
# TYPE kube_state_metrics_last_config_reload_successful gauge
kube_state_metrics_last_config_reload_successful{filename="` + options + `",type="config"} 1
`
	if err := testutil.GatherAndCompare(x.ksm.registry, strings.NewReader(want), config...); err != nil {
		t.Error(err)
	}
	mfs, err := x.ksm.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "kube_state_metrics_last_config_reload_success_timestamp_seconds" {
			if v := mf.GetMetric()[0].GetGauge().GetValue(); v < float64(before) {
				t.Errorf("reload success time %v, before the load (%d)", v, before)
			}
		}
	}

	if err := os.WriteFile(options, []byte("resources: [nodes]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	x.ksm.loaded(&LoadError{Err: os.ErrInvalid})
	want = strings.Replace(want, `type="config"} 1`, `type="config"} 0`, 1)
	if err := testutil.GatherAndCompare(x.ksm.registry, strings.NewReader(want), config...); err != nil {
		t.Errorf("after a failed load: %v", err)
	}
	x.ksm.loaded(nil)
	want = strings.Replace(strings.Replace(want, `type="config"} 0`, `type="config"} 1`, 1), "2.00391457933201e+14", "1.34554227324419e+14", 1)
	if err := testutil.GatherAndCompare(x.ksm.registry, strings.NewReader(want), config...); err != nil {
		t.Errorf("after a load of a changed file: %v", err)
	}
}

// testKSMExporter serves a pods resource and a deployments one, a family
// each, in kube-state-metrics' mode when ksm is set.
func testKSMExporter(t *testing.T, ksm bool) *Exporter {
	t.Helper()
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	name := map[string]string{"name": "object.metadata.name"}
	c := &Compiled{Resources: []*CompiledResource{
		{Config: ResourceConfig{Resource: "pods"}, Families: []*Family{family(t, env, "test_pod_info", TypeInfo, "Pods.", name, "", "", "")}},
		{Config: ResourceConfig{Resource: "deployments.apps"}, Families: []*Family{family(t, env, "test_deployment_info", TypeInfo, "Deployments.", name, "", "", "")}},
		{Config: ResourceConfig{Resource: "foos.example.com"}, Families: []*Family{family(t, env, "test_foo_info", TypeInfo, "Foos.", name, "", "", "")}},
	}}
	e := NewEngine(c, EngineOptions{})
	t.Cleanup(e.Close)
	e.Update(0, pod("shop", "web-1", "u1", "n1", "Running"))
	e.Update(1, pod("shop", "web", "u2", "", "Running"))
	e.Update(2, pod("shop", "foo", "u3", "", "Running"))
	x := &Exporter{log: slog.New(slog.DiscardHandler), opts: Options{KubeStateMetrics: ksm}}
	x.active = &activeConfig{engine: e, names: []string{"pods", "deployments.apps", "foos.example.com"}, informers: [][]*factory.Informer{
		{ksmInformer(podGVK, "pods", 0, 0, 1, 0)}, {ksmInformer(deploymentGVK, "deployments", 0, 0, 1, 0)}, {ksmInformer(fooGVK, "foos", 0, 0, 1, 0)}}}
	x.tel = newTelemetry(x)
	if ksm {
		x.ksm = newKSMTelemetry(x)
	}
	return x
}

// TestResourcesParameter filters the families of /metrics by resource,
// as kube-state-metrics' ?resources= and ?exclude_resources= do, by the
// names it gives resources; without its mode, the parameters mean
// nothing.
func TestResourcesParameter(t *testing.T) {
	x := testKSMExporter(t, true)
	served := func(x *Exporter, query string) []string {
		t.Helper()
		resp, body := fetch(t, x, "/metrics"+query)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/metrics%s: %d", query, resp.StatusCode)
		}
		var out []string
		for _, f := range []string{"test_pod_info", "test_deployment_info", "test_foo_info"} {
			if strings.Contains(body, "\n"+f+"{") {
				out = append(out, f)
			}
		}
		return out
	}
	for query, want := range map[string]string{
		"":                                      "test_pod_info test_deployment_info test_foo_info",
		"?resources=pods":                       "test_pod_info",
		"?resources=deployments":                "test_deployment_info",
		"?resources=deployments.apps":           "",
		"?resources=pods,+deployments,":         "test_pod_info test_deployment_info",
		"?resources=pods&resources=deployments": "test_pod_info test_deployment_info",
		"?exclude_resources=pods":               "test_deployment_info test_foo_info",
		"?resources=pods,deployments&exclude_resources=pods": "test_deployment_info",
		"?exclude_resources=pods,deployments":                "test_foo_info",
		"?resources=":                                        "",
		"?exclude_resources=":                                "test_pod_info test_deployment_info test_foo_info",
	} {
		if got := strings.Join(served(x, query), " "); got != want {
			t.Errorf("/metrics%s serves %q, want %q", query, got, want)
		}
	}
	if got := strings.Join(served(testKSMExporter(t, false), "?resources=pods"), " "); got != "test_pod_info test_deployment_info test_foo_info" {
		t.Errorf("without KubeStateMetrics, /metrics?resources=pods serves %q, want every family", got)
	}
}

// serveOn returns the response of h to a GET of path with the headers
// given as name, value pairs.
func serveOn(h http.Handler, path string, headers ...string) *http.Response {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

// TestTelemetryListenerHandlers: the telemetry handler serves the
// exporter's own metrics and kube-state-metrics', and the probes; the
// main handler then serves the families without kube-state-metrics' own
// metrics and the exporter's, which it serves when there is no telemetry
// listener; each scrape of the main /metrics is observed by
// http_request_duration_seconds.
func TestTelemetryListenerHandlers(t *testing.T) {
	x := testKSMExporter(t, true)
	main, telemetry, err := x.Handlers(t.Context(), ServeConfig{TelemetryAddresses: []string{"127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	body := func(resp *http.Response) string {
		t.Helper()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	m := body(serveOn(main, "/metrics"))
	if !strings.Contains(m, "\ntest_pod_info{") || strings.Contains(m, "kube_state_metrics_") || strings.Contains(m, "kubectl_informer_") || strings.Contains(m, "go_goroutines") {
		t.Errorf("main /metrics with a telemetry listener:\n%s", m)
	}
	tm := body(serveOn(telemetry, "/metrics"))
	for _, s := range []string{"kube_state_metrics_build_info{", "kube_state_metrics_watch_total{", "kubectl_informer_build_info{", "kubectl_informer_metric_series{", `http_request_duration_seconds_count{handler="metrics",method="get"} 1`} {
		if !strings.Contains(tm, s) {
			t.Errorf("telemetry /metrics has no %s", s)
		}
	}
	if strings.Contains(tm, "test_pod_info{") {
		t.Error("telemetry /metrics serves the families")
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if resp := serveOn(telemetry, path); resp.StatusCode != http.StatusOK {
			t.Errorf("telemetry %s: %d", path, resp.StatusCode)
		}
	}
	// Without a telemetry listener, the main /metrics has them all.
	alone, _, err := x.Handlers(t.Context(), ServeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if m := body(serveOn(alone, "/metrics")); !strings.Contains(m, "kube_state_metrics_build_info{") || !strings.Contains(m, "\ntest_pod_info{") {
		t.Errorf("main /metrics without a telemetry listener:\n%s", m)
	}
}

// TestNoGzip: with NoGzip the main /metrics is never compressed; the
// telemetry listener's is when asked, as kube-state-metrics' is.
func TestNoGzip(t *testing.T) {
	x := testKSMExporter(t, true)
	for _, noGzip := range []bool{false, true} {
		// The main /metrics without a telemetry listener, whose body
		// (the families and the exporter's own metrics) is long enough
		// to be compressed; the telemetry listener's beside one.
		main, _, err := x.Handlers(context.Background(), ServeConfig{NoGzip: noGzip})
		if err != nil {
			t.Fatal(err)
		}
		_, telemetry, err := x.Handlers(context.Background(), ServeConfig{NoGzip: noGzip, TelemetryAddresses: []string{"127.0.0.1:0"}})
		if err != nil {
			t.Fatal(err)
		}
		want := "gzip"
		if noGzip {
			want = ""
		}
		if got := serveOn(main, "/metrics", "Accept-Encoding", "gzip").Header.Get("Content-Encoding"); got != want {
			t.Errorf("NoGzip %v: main Content-Encoding %q, want %q", noGzip, got, want)
		}
		if got := serveOn(telemetry, "/metrics", "Accept-Encoding", "gzip").Header.Get("Content-Encoding"); got != "gzip" {
			t.Errorf("NoGzip %v: telemetry Content-Encoding %q, want gzip", noGzip, got)
		}
	}
}

// TestServerTimeouts: both servers take the timeouts given; zero ones the
// defaults.
func TestServerTimeouts(t *testing.T) {
	x := testKSMExporter(t, true)
	given := ServerTimeouts{ReadHeader: time.Second, Read: 2 * time.Second, Write: 3 * time.Second, Idle: 4 * time.Second}
	for _, tc := range []struct {
		timeouts                      ServerTimeouts
		readHeader, read, write, idle time.Duration
	}{
		{given, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second},
		{ServerTimeouts{}, DefaultReadHeaderTimeout, 0, 0, 0},
	} {
		main, telemetry, err := x.servers(t.Context(), ServeConfig{Timeouts: tc.timeouts, TelemetryAddresses: []string{"127.0.0.1:0"}})
		if err != nil {
			t.Fatal(err)
		}
		for name, srv := range map[string]*http.Server{"main": main, "telemetry": telemetry} {
			if srv.ReadHeaderTimeout != tc.readHeader || srv.ReadTimeout != tc.read || srv.WriteTimeout != tc.write || srv.IdleTimeout != tc.idle {
				t.Errorf("%+v: %s server timeouts %v %v %v %v", tc.timeouts, name, srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
			}
		}
	}
	if _, telemetry, _ := x.servers(t.Context(), ServeConfig{}); telemetry != nil {
		t.Error("a telemetry server without TelemetryAddresses")
	}
}

// prometheus3Accept is the Accept header of Prometheus 3's scrapes with
// its default scrape_protocols.
const prometheus3Accept = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6," +
	"application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4," +
	"text/plain;version=0.0.4;q=0.3,*/*;q=0.2"

// TestKubeStateMetricsTelemetryFormat: in kube-state-metrics' mode the
// telemetry listener's /metrics answers as promhttp.HandlerFor with its
// default options, kube-state-metrics' telemetry handler: the same
// Content-Type for each Accept (the text format to an OpenMetrics one, no
// # EOF), counters named with _total. The main listener answers
// OpenMetrics, as kube-state-metrics' main listener does.
func TestKubeStateMetricsTelemetryFormat(t *testing.T) {
	x := testKSMExporter(t, true)
	main, telemetry, err := x.Handlers(t.Context(), ServeConfig{TelemetryAddresses: []string{"127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "reference_total", Help: "A counter."}))
	reference := promhttp.HandlerFor(registry, promhttp.HandlerOpts{})
	for _, accept := range []string{
		"", prometheus3Accept, "application/openmetrics-text;version=1.0.0", "application/openmetrics-text",
		"text/plain;version=0.0.4", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited",
	} {
		t.Run(accept, func(t *testing.T) {
			want := serveOn(reference, "/metrics", "Accept", accept).Header.Get("Content-Type")
			resp := serveOn(telemetry, "/metrics", "Accept", accept)
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Header.Get("Content-Type"); got != want || resp.StatusCode != http.StatusOK {
				t.Errorf("%d, Content-Type %q; kube-state-metrics' handler answers %q", resp.StatusCode, got, want)
			}
			if expfmt.Format(want).FormatType() != expfmt.TypeTextPlain {
				return
			}
			for _, line := range []string{"# TYPE kube_state_metrics_watch_total counter\n", "# TYPE kubectl_informer_metric_series_dropped_total counter\n"} {
				if !bytes.Contains(b, []byte(line)) {
					t.Errorf("no %q in\n%s", line, b)
				}
			}
			if bytes.Contains(b, []byte("# EOF")) {
				t.Errorf("an OpenMetrics # EOF in the text format:\n%s", b)
			}
			lint(t, string(b))
		})
	}
	if ct := serveOn(main, "/metrics", "Accept", prometheus3Accept).Header.Get("Content-Type"); expfmt.Format(ct).FormatType() != expfmt.TypeOpenMetrics {
		t.Errorf("main /metrics to Prometheus 3: Content-Type %q, want OpenMetrics", ct)
	}
}
