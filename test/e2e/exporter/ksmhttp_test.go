package exporter_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// servedKSM is an exporter served on its listeners by Serve.
type servedKSM struct {
	x               *exporter.Exporter
	main, telemetry string // base URLs
}

// startKSM starts an exporter with opts as cfg (nil: the admin) and
// serves it with scfg until the test ends, on two loopback ports, main
// and telemetry, unless scfg names its own; it returns without waiting
// for them to answer.
func startKSM(t *testing.T, cfg *rest.Config, opts exporter.Options, scfg exporter.ServeConfig) servedKSM {
	t.Helper()
	if cfg == nil {
		cfg = cluster.Config
	}
	x, err := exporter.New(cfg, cluster.Resolver(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if scfg.ListenAddresses == nil {
		scfg.ListenAddresses, scfg.TelemetryAddresses = []string{framework.ClosedPort(t)}, []string{framework.ClosedPort(t)}
	}
	served := make(chan error, 1)
	go func() { served <- x.Serve(ctx, scfg, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serving: %v", err)
		}
	})
	if err := x.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return servedKSM{x: x, main: "http://" + scfg.ListenAddresses[0], telemetry: "http://" + scfg.TelemetryAddresses[0]}
}

// serveKSM is startKSM, returning once both listeners answer /healthz.
func serveKSM(t *testing.T, cfg *rest.Config, opts exporter.Options, scfg exporter.ServeConfig) servedKSM {
	t.Helper()
	s := startKSM(t, cfg, opts, scfg)
	for _, base := range []string{s.main, s.telemetry} {
		framework.Eventually(t, base+"/healthz answers", func() bool {
			resp, err := http.Get(base + "/healthz")
			if err != nil {
				return false
			}
			_ = resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	}
	return s
}

// getWith fetches url with the bearer token (none when empty) and returns
// its status code and body.
func getWith(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return framework.Do(t, req)
}

// sample is the value of the series of name in mfs with exactly labels,
// and whether there is one.
func sample(mfs map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	for _, m := range mfs[name].GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if len(got) != len(labels) {
			continue
		}
		same := true
		for k, v := range labels {
			same = same && got[k] == v
		}
		if same {
			return framework.SampleValue(m), true
		}
	}
	return 0, false
}

// ksmProfile serves the kube-state-metrics profile's families of pods and
// deployments.
func ksmProfile() exporter.Sources {
	return exporter.Sources{Profile: profiles.KubeStateMetrics, Selection: exporter.Selection{Resources: []string{"pods", "deployments"}}}
}

// TestKubeStateMetricsTelemetryListener serves the profile in
// kube-state-metrics' mode on two listeners: the telemetry listener serves
// kube-state-metrics' own metrics (requests counted by the type of each
// resource, the shard, the build), beside the plugin's, and answers the
// probes; the main listener serves the families, /livez as the API
// server's, and not kube-state-metrics' own metrics.
func TestKubeStateMetricsTelemetryListener(t *testing.T) {
	s := serveKSM(t, nil, exporter.Options{Sources: ksmProfile(), KubeStateMetrics: true, Shard: exporter.Shard{Index: 0, Total: 1}}, exporter.ServeConfig{})
	framework.WaitReady(t, s.main)
	framework.WaitReady(t, s.telemetry)

	// Every resource watched has been listed, by a list or by a watch
	// streaming its initial list, counted under the type
	// kube-state-metrics names it by.
	var mfs map[string]*dto.MetricFamily
	framework.Eventually(t, "requests of pods and deployments counted on the telemetry listener", func() bool {
		code, body := getWith(t, s.telemetry+"/metrics", "")
		if code != http.StatusOK {
			return false
		}
		mfs = framework.ParseText(t, body)
		for _, res := range []string{"*v1.Pod", "*v1.Deployment"} {
			lists, _ := sample(mfs, "kube_state_metrics_list_total", map[string]string{"resource": res, "result": "success"})
			watches, _ := sample(mfs, "kube_state_metrics_watch_total", map[string]string{"resource": res, "result": "success"})
			if lists+watches == 0 {
				return false
			}
		}
		return true
	})
	t.Logf("requests counted:\n%s", strings.Join(framework.SeriesLines(map[string]*dto.MetricFamily{
		"kube_state_metrics_list_total": mfs["kube_state_metrics_list_total"], "kube_state_metrics_watch_total": mfs["kube_state_metrics_watch_total"]}, nil), "\n"))
	for _, name := range []string{"kube_state_metrics_list_total", "kube_state_metrics_watch_total"} {
		// Lists streamed by watches, none may have been a list request.
		mf, ok := mfs[name]
		if ok && mf.GetType() != dto.MetricType_COUNTER {
			t.Errorf("%s is a %v, want a counter", name, mf.GetType())
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() != "success" {
					t.Errorf("%s: %v, want only successes as admin", name, m.GetLabel())
				}
			}
		}
	}
	if v, ok := sample(mfs, "kube_state_metrics_shard_ordinal", map[string]string{"shard_ordinal": "0"}); !ok || v != 0 {
		t.Errorf("kube_state_metrics_shard_ordinal{shard_ordinal=\"0\"} = %v, %v; want 0", v, ok)
	}
	if v, ok := sample(mfs, "kube_state_metrics_total_shards", map[string]string{}); !ok || v != 1 {
		t.Errorf("kube_state_metrics_total_shards = %v, %v; want 1", v, ok)
	}
	if mf := mfs["kube_state_metrics_build_info"]; len(mf.GetMetric()) != 1 {
		t.Errorf("kube_state_metrics_build_info: %v", mf.GetMetric())
	}
	for _, name := range []string{"kubectl_informer_build_info", "go_goroutines", "process_resident_memory_bytes"} {
		if _, ok := mfs[name]; !ok {
			t.Errorf("the telemetry listener has no %s", name)
		}
	}
	for _, name := range []string{"kube_pod_info", "kube_deployment_created"} {
		if _, ok := mfs[name]; ok {
			t.Errorf("the telemetry listener serves the family %s", name)
		}
	}

	// The main listener: the families, and the scrapes observed by
	// kube-state-metrics' http_request_duration_seconds.
	code, body := getWith(t, s.main+"/metrics", "")
	if code != http.StatusOK {
		t.Fatalf("main /metrics: %d", code)
	}
	main := framework.ParseText(t, body)
	for _, name := range []string{"kube_pod_info", "kube_deployment_created"} {
		if _, ok := main[name]; !ok {
			t.Errorf("the main listener has no %s", name)
		}
	}
	for name := range main {
		if strings.HasPrefix(name, "kube_state_metrics_") {
			t.Errorf("the main listener serves %s, which the telemetry listener serves", name)
		}
	}
	framework.Eventually(t, "the main scrape observed on the telemetry listener", func() bool {
		_, body := getWith(t, s.telemetry+"/metrics", "")
		for _, m := range framework.ParseText(t, body)["http_request_duration_seconds"].GetMetric() {
			if m.GetHistogram().GetSampleCount() > 0 {
				return true
			}
		}
		return false
	})

	for _, base := range []string{s.main, s.telemetry} {
		for _, path := range []string{"/livez", "/healthz", "/readyz"} {
			if code, body := getWith(t, base+path, ""); code != http.StatusOK {
				t.Errorf("%s%s: %d %s", base, path, code, body)
			}
		}
	}
}

// TestKubeStateMetricsListErrors runs the exporter with the token of a
// ServiceAccount that may list pods and not deployments: kube_state_metrics_list_total counts the
// failed lists of deployments as errors, and grows as they are retried,
// while the pods' succeed.
func TestKubeStateMetricsListErrors(t *testing.T) {
	ns := cluster.NewNamespace(t, "ksm-list-errors")
	cfg := rest.AnonymousClientConfig(cluster.Config)
	cfg.BearerToken = cluster.ServiceAccountToken(t, ns, "exporter",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch"}})
	s := serveKSM(t, cfg, exporter.Options{Sources: ksmProfile(), KubeStateMetrics: true}, exporter.ServeConfig{})
	errorsOf := func() float64 {
		_, body := getWith(t, s.telemetry+"/metrics", "")
		v, _ := sample(framework.ParseText(t, body), "kube_state_metrics_list_total", map[string]string{"resource": "*v1.Deployment", "result": "error"})
		return v
	}
	var first float64
	framework.Eventually(t, "a failed list of deployments counted", func() bool {
		first = errorsOf()
		return first > 0
	})
	framework.Eventually(t, "the retried list of deployments counted", func() bool { return errorsOf() > first })
	_, readyz := getWith(t, s.telemetry+"/readyz", "")
	t.Logf("/readyz with deployments forbidden:\n%s", readyz)
	_, body := getWith(t, s.telemetry+"/metrics", "")
	mfs := framework.ParseText(t, body)
	if _, ok := sample(mfs, "kube_state_metrics_list_total", map[string]string{"resource": "*v1.Pod", "result": "error"}); ok {
		t.Error("failed lists of pods counted, which the ServiceAccount may list")
	}
}

// TestKubeStateMetricsAuthFilter serves with the auth filter: the metrics
// of both listeners answer a ServiceAccount token that RBAC allows to get
// /metrics, and refuse with 403 one it does not, with 401 a request
// without a token or with a token the API server does not know; the
// probes stay open.
func TestKubeStateMetricsAuthFilter(t *testing.T) {
	ns := cluster.NewNamespace(t, "ksm-auth")
	allowed := cluster.ServiceAccountToken(t, ns, "scraper", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}})
	denied := cluster.ServiceAccountToken(t, ns, "other")
	s := serveKSM(t, nil, exporter.Options{Sources: ksmProfile(), KubeStateMetrics: true}, exporter.ServeConfig{AuthFilter: true})
	framework.WaitReady(t, s.main)
	for _, base := range []string{s.main, s.telemetry} {
		for _, tc := range []struct {
			token string
			want  int
		}{
			{allowed, http.StatusOK},
			{denied, http.StatusForbidden},
			{"", http.StatusUnauthorized},
			{"not-a-token", http.StatusUnauthorized},
		} {
			code, body := getWith(t, base+"/metrics", tc.token)
			if code != tc.want {
				t.Errorf("%s/metrics with token %.12q: %d, want %d: %.300s", base, tc.token, code, tc.want, body)
			}
			if code == http.StatusOK && !strings.Contains(body, "kube_state_metrics_build_info") && !strings.Contains(body, "kube_pod_info") {
				t.Errorf("%s/metrics allowed, but without metrics: %.300s", base, body)
			}
		}
		for _, path := range []string{"/livez", "/healthz", "/readyz"} {
			if code, body := getWith(t, base+path, ""); code != http.StatusOK {
				t.Errorf("%s%s without a token: %d %s, want 200", base, path, code, body)
			}
		}
	}
}

// TestKubeStateMetricsResourcesParameter filters the main /metrics by
// resource, as kube-state-metrics' ?resources= and ?exclude_resources=.
func TestKubeStateMetricsResourcesParameter(t *testing.T) {
	s := serveKSM(t, nil, exporter.Options{Sources: ksmProfile(), KubeStateMetrics: true}, exporter.ServeConfig{})
	framework.WaitReady(t, s.main)
	families := func(query string) (pods, deployments bool) {
		code, body := getWith(t, s.main+"/metrics"+query, "")
		if code != http.StatusOK {
			t.Fatalf("/metrics%s: %d", query, code)
		}
		for name := range framework.ParseText(t, body) {
			pods = pods || strings.HasPrefix(name, "kube_pod_")
			deployments = deployments || strings.HasPrefix(name, "kube_deployment_")
		}
		return pods, deployments
	}
	framework.Eventually(t, "the families of pods and deployments", func() bool {
		p, d := families("")
		return p && d
	})
	for _, tc := range []struct {
		query             string
		pods, deployments bool
	}{
		{"?resources=pods", true, false},
		{"?resources=deployments", false, true},
		{"?resources=pods,%20deployments", true, true},
		{"?resources=pods&resources=deployments", true, true},
		{"?exclude_resources=pods", false, true},
		{"?resources=pods,deployments&exclude_resources=deployments", true, false},
		{"?resources=nodes", false, false},
	} {
		if p, d := families(tc.query); p != tc.pods || d != tc.deployments {
			t.Errorf("/metrics%s: families of pods %v, of deployments %v; want %v, %v", tc.query, p, d, tc.pods, tc.deployments)
		}
	}
	// Without kube-state-metrics' mode, the parameters mean nothing.
	plain := serveKSM(t, nil, exporter.Options{Sources: ksmProfile()}, exporter.ServeConfig{})
	framework.WaitReady(t, plain.main)
	_, body := getWith(t, plain.main+"/metrics?resources=pods", "")
	if _, ok := framework.ParseText(t, body)["kube_deployment_created"]; !ok {
		t.Error("without KubeStateMetrics, ?resources=pods left out the deployments' families")
	}
}

// TestLivezFollowsTheAPIServer: /livez answers 503 when the API server
// cannot be reached, as kube-state-metrics' does.
func TestLivezFollowsTheAPIServer(t *testing.T) {
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Host = "https://" + framework.ClosedPort(t)
	x, err := exporter.New(cfg, cluster.Resolver(t), exporter.Options{Sources: ksmProfile()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := x.Handler()
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/livez", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("/livez with the API server unreachable: %d %s, want 503", rec.Code, rec.Body.String())
	}
}

// TestTelemetryListenerTLS: the telemetry listener takes the main one's
// web config: with TLS, both serve HTTPS only, with the certificate given.
func TestTelemetryListenerTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, "kubectl-informer test CA")
	ca.writeServerCert(t, filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key"))
	web := filepath.Join(dir, "web.yaml")
	if err := os.WriteFile(web, []byte("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mainAddr, telemetryAddr := framework.ClosedPort(t), framework.ClosedPort(t)
	startKSM(t, nil, exporter.Options{Sources: ksmProfile(), KubeStateMetrics: true},
		exporter.ServeConfig{ListenAddresses: []string{mainAddr}, TelemetryAddresses: []string{telemetryAddr}, WebConfigFile: web})
	trusted := ca.client()
	for _, addr := range []string{mainAddr, telemetryAddr} {
		framework.Eventually(t, "https://"+addr+"/readyz answers 200", func() bool {
			r := request(trusted, "https://"+addr+"/readyz", "", "")
			return r.err == nil && r.code == http.StatusOK
		})
		r := request(&http.Client{Timeout: framework.HangTimeout}, "http://"+addr+"/healthz", "", "")
		if r.err != nil || r.code != http.StatusBadRequest {
			t.Errorf("GET http://%s/healthz: %d %q %v; want 400", addr, r.code, r.body, r.err)
		}
	}
	if r := request(trusted, "https://"+telemetryAddr+"/metrics", "", ""); r.err != nil || r.code != http.StatusOK || !strings.Contains(r.body, "kube_state_metrics_build_info") {
		t.Errorf("telemetry /metrics over HTTPS: %d %v\n%.300s", r.code, r.err, r.body)
	}
}
