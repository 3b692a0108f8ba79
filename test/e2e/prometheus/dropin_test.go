package prometheus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// ksmJob is the job kube-prometheus scrapes kube-state-metrics as, which
// its rules and dashboards select.
const ksmJob = "kube-state-metrics"

// kubePrometheusManifests holds the ClusterRole the drop-in runs with.
const kubePrometheusManifests = "deploy/kube-prometheus/kube-rbac-proxy"

// TestKubeStateMetricsDropIn runs the plugin's binary as
// kube-state-metrics (through a symbolic link of that name) with the
// arguments of deploy/kube-prometheus (kube-prometheus'), on free loopback
// ports, as a user holding that ClusterRole without secrets, so that the
// lists of one resource are forbidden. A real Prometheus scrapes its main
// and telemetry ports as the ServiceMonitor of deploy/kube-prometheus has
// the Prometheus Operator scrape them (job="kube-state-metrics", its
// metric relabelings), and an exporter of the plugin's own as
// job="kubectl-informer", with kube-prometheus' kube-state-metrics alerts
// and the project's rules loaded. It checks that both ports are targets,
// that every rule evaluates without error, that the drop-in is ready and
// names the forbidden resource on /readyz, that kube-state-metrics' alerts
// see the forbidden lists and a consistent sharding, and that the
// project's alerts work under both job names.
func TestKubeStateMetricsDropIn(t *testing.T) {
	kubeconfig := dropInUser(t, "secrets")
	mainAddr, telemetryAddr := framework.ClosedPort(t), framework.ClosedPort(t)
	dropIn := startDropIn(t, kubeconfig, manifestArgs(t, kubePrometheusManifests, mainAddr, telemetryAddr)...)

	config := filepath.Join(t.TempDir(), "exporter.yaml")
	if err := os.WriteFile(config, []byte(exporterConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	exporter, exporterAddr := startExporter(t, "", "--config", config)

	ksmRules := filepath.Join(cluster.Root, kubePrometheusRules)
	prom := cluster.StartPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
- %s
- %s
scrape_configs:
%s- job_name: %s
  honor_labels: true
  static_configs:
  - targets: [%s]
`, strconv.Quote(filepath.Join(cluster.Root, monitoring, "rules.yaml")), strconv.Quote(ksmRules),
		serviceMonitorScrapeConfigs(t, mainAddr, telemetryAddr), job, exporterAddr))
	sel := `job="` + ksmJob + `"`

	ok := t.Run("both ports are targets", func(t *testing.T) {
		// kube-prometheus' count:up1 counts the targets up per job.
		dropIn.waitFor(t, prom, `count without (instance) (up{`+sel+`} == 1)`, func(v model.Vector) error {
			if len(v) != 1 || v[0].Value != 2 {
				return fmt.Errorf("targets of job %s up: %v, want 2 (main and telemetry port)", ksmJob, v)
			}
			return nil
		})
	})
	if !ok {
		t.FailNow()
	}

	t.Run("self-metrics", func(t *testing.T) {
		prom.WaitAnswer(t, `kube_state_metrics_total_shards{`+sel+`}`, framework.Answer{"": 1})
		prom.WaitAnswer(t, `kube_state_metrics_shard_ordinal{`+sel+`}`, framework.Answer{"0": 0}, "shard_ordinal")
		prom.WaitFor(t, `kube_state_metrics_build_info{`+sel+`}`, nonEmpty)
		// client-go fills the caches with watches that stream the lists;
		// those of secrets fail, and so do the lists made then.
		prom.WaitFor(t, `kube_state_metrics_watch_total{`+sel+`,result="success"} > 0`, nonEmpty)
		prom.WaitFor(t, `kube_state_metrics_list_total{`+sel+`,resource="*v1.Secret",result="error"} > 0`, nonEmpty)
		// The exporter's own metrics come from one of the two targets:
		// the dashboard's sums count each once.
		prom.WaitFor(t, `count by (instance) (kubectl_informer_build_info{`+sel+`})`, func(v model.Vector) error {
			if len(v) != 1 {
				return fmt.Errorf("kubectl_informer_build_info is served by %d targets of job %s, want 1: %v", len(v), ksmJob, v)
			}
			return nil
		})
	})

	t.Run("the promtool tests' series are the drop-in's", func(t *testing.T) {
		checkFixtureSeries(t, prom, strings.TrimSuffix(kubePrometheusRules, ".yaml")+"_test.yaml")
	})

	t.Run("ready while a resource cannot be listed, naming it", func(t *testing.T) {
		// kube-state-metrics' chart probes /readyz on the telemetry port;
		// as kube-state-metrics, the drop-in is ready without what it may
		// not read.
		var code int
		var body string
		defer func() { t.Logf("/readyz on the telemetry port: %d %q", code, body) }()
		framework.Eventually(t, "/readyz on the telemetry port answers 200 naming secrets forbidden", func() bool {
			code, body = framework.Get(t, "http://"+telemetryAddr+"/readyz")
			return code == http.StatusOK && strings.Contains(body, "secrets: not synced") && strings.Contains(body, "forbidden")
		})
	})

	exprs := alertExprs(t, kubePrometheusRules)
	t.Run("kube-state-metrics' alerts", func(t *testing.T) {
		// The lists of secrets are forbidden: the share of failed lists
		// is above kube-prometheus' threshold, and the alert is pending.
		prom.WaitFor(t, exprs["KubeStateMetricsListErrors"], nonEmpty)
		prom.WaitFor(t, `ALERTS{alertname="KubeStateMetricsListErrors",alertstate="pending"}`, nonEmpty)
		// One exporter, shard 0 of 1: both sharding expressions compute
		// 0, and so neither alert's expression answers.
		for _, alert := range []string{"KubeStateMetricsShardingMismatch", "KubeStateMetricsShardsMissing"} {
			value := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(exprs[alert]), "!= 0"))
			if value == strings.TrimSpace(exprs[alert]) {
				t.Fatalf("%s: %q does not end with != 0", alert, exprs[alert])
			}
			prom.WaitAnswer(t, value, framework.Answer{"": 0})
			if v := query(t, prom, exprs[alert]); len(v) > 0 {
				t.Errorf("%s answers %v", alert, v)
			}
		}
		if v := query(t, prom, `ALERTS{alertname=~"KubeStateMetricsSharding.*|KubeStateMetricsShardsMissing"}`); len(v) > 0 {
			t.Errorf("sharding alerts pending or firing: %v", v)
		}
	})

	t.Run("every rule evaluates", func(t *testing.T) {
		checkRulesHealthy(t, prom)
	})

	t.Run("the project's alerts under both job names", func(t *testing.T) {
		// The drop-in's lists of secrets fail: its own telemetry says so,
		// under job kube-state-metrics.
		for _, alert := range []string{"KubectlInformerListWatchFailing", "KubectlInformerResourceNotSynced"} {
			prom.WaitFor(t, `ALERTS{alertname="`+alert+`",`+sel+`,resource="secrets"}`, nonEmpty)
		}
		// Both exporters answer: no alert on targets, under either job.
		if v := query(t, prom, `ALERTS{alertname=~"KubectlInformerDown|KubectlInformerAbsent|KubectlInformerScrapeSlow"}`); len(v) > 0 {
			t.Fatalf("alerts on targets while both exporters answer: %v", v)
		}
		// Each exporter stops: its targets are down, and Down is pending
		// under its job; so is Absent, as no target of the job answers.
		for _, stop := range []struct {
			job  string
			stop func()
		}{
			{job, func() { exporter.Stop(t) }},
			{ksmJob, func() { dropIn.stop(t) }},
		} {
			stop.stop()
			for _, alert := range []string{"KubectlInformerDown", "KubectlInformerAbsent"} {
				prom.WaitFor(t, `ALERTS{alertname="`+alert+`",job="`+stop.job+`",alertstate="pending"}`, nonEmpty)
			}
		}
		// Down names the target that served the exporter's build
		// information.
		prom.WaitFor(t, `ALERTS{alertname="KubectlInformerDown",`+sel+`}`, func(v model.Vector) error {
			if got := framework.AnswerOf(v, "instance"); len(got) != 1 || got[telemetryAddr]+got[mainAddr] != 1 {
				return fmt.Errorf("KubectlInformerDown pending for %s, want one of %s and %s", got, mainAddr, telemetryAddr)
			}
			return nil
		})
	})
}

// TestKubeStateMetricsDropInDashboard runs the drop-in with every
// permission of deploy/kube-prometheus' ClusterRole, checks that it
// answers the probes of kube-state-metrics' chart (/livez on the main
// port, /readyz on the telemetry port), and runs every query of the
// shipped dashboard with $job = kube-state-metrics against it, scraped on
// both ports as kube-prometheus scrapes it: each must return data.
func TestKubeStateMetricsDropInDashboard(t *testing.T) {
	kubeconfig := dropInUser(t)
	mainAddr, telemetryAddr := framework.ClosedPort(t), framework.ClosedPort(t)
	dropIn := startDropIn(t, kubeconfig, manifestArgs(t, kubePrometheusManifests, mainAddr, telemetryAddr)...)
	for _, probe := range []string{"http://" + mainAddr + "/livez", "http://" + telemetryAddr + "/readyz"} {
		framework.Eventually(t, probe+" answers 200", func() bool {
			select {
			case <-dropIn.exited:
				t.Fatalf("kube-state-metrics exited: %v\n%s", dropIn.err, dropIn.log)
			default:
			}
			resp, err := http.Get(probe) //nolint:gosec,noctx // G107: the test's own exporter
			if err != nil {
				return false
			}
			_ = resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	}
	prom := cluster.StartPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
- %s
scrape_configs:
%s`, strconv.Quote(filepath.Join(cluster.Root, monitoring, "rules.yaml")), serviceMonitorScrapeConfigs(t, mainAddr, telemetryAddr)))
	dropIn.waitFor(t, prom, `count(up{job="`+ksmJob+`"} == 1)`, func(v model.Vector) error {
		if len(v) != 1 || v[0].Value != 2 {
			return fmt.Errorf("targets up: %v, want 2", v)
		}
		return nil
	})
	checkDashboard(t, prom, []string{ksmJob})
}

// authFilterManifests runs the drop-in without kube-rbac-proxy.
const authFilterManifests = "deploy/kube-prometheus/auth-filter"

// TestKubeStateMetricsDropInAuthFilter runs the drop-in with the arguments
// of deploy/kube-prometheus/auth-filter (--auth-filter; its ports moved to
// free loopback ports) and applies the RBAC that deploy/kube-prometheus
// gives Prometheus' service account: a Prometheus that scrapes both ports
// with that account's token has both targets up, while requests without a
// token, or with the token of an account the RBAC does not name, are
// refused on both ports.
func TestKubeStateMetricsDropInAuthFilter(t *testing.T) {
	ctx := context.Background()
	const ns, prometheusAccount, stranger = "monitoring", "prometheus-k8s", "not-prometheus"
	if _, err := cluster.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tokens := map[string]string{}
	for _, sa := range []string{prometheusAccount, stranger} {
		if _, err := cluster.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		expiry := int64(3600)
		tr, err := cluster.Client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tokens[sa] = tr.Status.Token
	}
	// Prometheus' RBAC, as rendered: the roles and bindings of
	// prometheus-rbac.yaml, not the exporter's own (kube-state-metrics).
	var scraper rbacv1.ClusterRole
	docs := rendered(t, authFilterManifests, "ClusterRole", "kube-state-metrics-scraper", &scraper)
	var rbac []string
	for _, doc := range docs {
		var obj metav1.PartialObjectMetadata
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if obj.APIVersion == rbacv1.SchemeGroupVersion.String() && obj.Name != ksmJob {
			rbac = append(rbac, doc)
		}
	}
	if len(rbac) != 4 {
		t.Fatalf("%s renders %d roles and bindings for Prometheus, want 4", authFilterManifests, len(rbac))
	}
	file := filepath.Join(t.TempDir(), "rbac.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(rbac, "\n---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := cluster.Kubectl("apply", "-f", file); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = cluster.Kubectl("delete", "-f", file) })

	kubeconfig := dropInUser(t)
	mainAddr, telemetryAddr := framework.ClosedPort(t), framework.ClosedPort(t)
	args := manifestArgs(t, authFilterManifests, mainAddr, telemetryAddr)
	if !slices.Contains(args, "--auth-filter") {
		t.Fatalf("%s: arguments %q, want --auth-filter", authFilterManifests, args)
	}
	dropIn := startDropIn(t, kubeconfig, args...)
	prom := cluster.StartPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
- job_name: %s
  honor_labels: true
  authorization:
    credentials: %s
  static_configs:
  - targets: [%s, %s]
`, ksmJob, strconv.Quote(tokens[prometheusAccount]), mainAddr, telemetryAddr))
	dropIn.waitFor(t, prom, `count(up{job="`+ksmJob+`"} == 1)`, func(v model.Vector) error {
		if len(v) != 1 || v[0].Value != 2 {
			return fmt.Errorf("targets up with Prometheus' token: %v, want 2", v)
		}
		return nil
	})
	for _, addr := range []string{mainAddr, telemetryAddr} {
		for who, token := range map[string]string{"no token": "", stranger: tokens[stranger]} {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
			if err != nil {
				t.Fatal(err)
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
				t.Errorf("GET %s/metrics with %s: %s, want 401 or 403", addr, who, resp.Status)
			}
		}
	}
}

// dropInUser adds a user allowed what the ClusterRole of deploy/kube-prometheus
// grants, except list and watch on the core resources named by forbidden,
// and returns its kubeconfig.
func dropInUser(t *testing.T, forbidden ...string) string {
	t.Helper()
	var role rbacv1.ClusterRole
	rendered(t, kubePrometheusManifests, "ClusterRole", ksmJob, &role)
	var rules []rbacv1.PolicyRule
	for _, r := range role.Rules {
		if slices.Equal(r.APIGroups, []string{""}) {
			r.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(res string) bool { return slices.Contains(forbidden, res) })
		}
		rules = append(rules, r)
	}
	name := "kube-state-metrics-drop-in"
	if len(forbidden) > 0 {
		name += "-without-" + strings.Join(forbidden, "-")
	}
	kubeconfig, _ := cluster.AddUserAllowed(t, name, rules...)
	return kubeconfig
}

// dropIn is the plugin's binary running as kube-state-metrics, in a
// process of its own.
type dropIn struct {
	cmd    *exec.Cmd
	log    *framework.SyncBuffer
	exited chan struct{}
	err    error // once exited is closed
}

// startDropIn runs the plugin's binary as kube-state-metrics (see
// framework.Cluster.DropInBinary) with args and --kubeconfig until the
// test ends.
func startDropIn(t *testing.T, kubeconfig string, args ...string) *dropIn {
	t.Helper()
	dir := t.TempDir()
	link := cluster.DropInBinary(t)
	d := &dropIn{log: &framework.SyncBuffer{}, exited: make(chan struct{})}
	d.cmd = exec.Command(link, append(args, "--kubeconfig="+kubeconfig)...) //nolint:gosec // G204: the binary the test built
	d.cmd.Env = append(os.Environ(), "KUBECACHEDIR="+filepath.Join(dir, "cache"))
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.err = d.cmd.Wait(); close(d.exited) }()
	t.Cleanup(func() {
		d.stop(t)
		if t.Failed() {
			t.Logf("kube-state-metrics' log:\n%s", d.log)
		}
	})
	return d
}

// serviceMonitorScrapeConfigs writes the scrape configs the Prometheus
// Operator makes of the ServiceMonitor of deploy/kube-prometheus, for the
// parts that a static target keeps: one per endpoint, in order, scraping
// the address given for it as its plain HTTP port, under the job its
// jobLabel names (kube-state-metrics), with its honorLabels and
// metricRelabelings.
func serviceMonitorScrapeConfigs(t *testing.T, targets ...string) string {
	t.Helper()
	var sm struct {
		Spec struct {
			JobLabel  string `json:"jobLabel"`
			Endpoints []struct {
				Port              string           `json:"port"`
				HonorLabels       bool             `json:"honorLabels"`
				MetricRelabelings []map[string]any `json:"metricRelabelings"`
			} `json:"endpoints"`
		} `json:"spec"`
	}
	rendered(t, kubePrometheusManifests, "ServiceMonitor", ksmJob, &sm)
	var svc corev1.Service
	rendered(t, kubePrometheusManifests, "Service", ksmJob, &svc)
	jobName := svc.Labels[sm.Spec.JobLabel]
	if len(sm.Spec.Endpoints) != len(targets) || jobName != ksmJob {
		t.Fatalf("the ServiceMonitor of %s has %d endpoints and names the job %q; want %d and %q", kubePrometheusManifests, len(sm.Spec.Endpoints), jobName, len(targets), ksmJob)
	}
	snake := strings.NewReplacer("sourceLabels", "source_labels", "targetLabel", "target_label")
	var b strings.Builder
	for i, ep := range sm.Spec.Endpoints {
		var relabel []map[string]any
		for _, m := range ep.MetricRelabelings {
			out := map[string]any{}
			for k, v := range m {
				out[snake.Replace(k)] = v
			}
			relabel = append(relabel, out)
		}
		config := map[string]any{
			"job_name":       ksmJob + "-" + ep.Port,
			"honor_labels":   ep.HonorLabels,
			"static_configs": []any{map[string]any{"targets": []string{targets[i]}}},
			// The Operator sets the job from the Service's label.
			"relabel_configs": []any{map[string]any{"target_label": "job", "replacement": jobName}},
		}
		if len(relabel) > 0 {
			config["metric_relabel_configs"] = relabel
		}
		out, err := yaml.Marshal([]any{config})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(out)
	}
	return b.String()
}

// rendered renders the kustomization in dir, relative to the module root,
// and decodes the object of that kind and name into v; it returns the
// rendered documents.
func rendered(t *testing.T, dir, kind, name string, v any) []string {
	t.Helper()
	out, err := cluster.Kubectl("kustomize", filepath.Join(cluster.Root, dir))
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, out)
	}
	docs := strings.Split(out, "\n---\n")
	for _, doc := range docs {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Kind == kind && meta.Metadata.Name == name {
			if err := yaml.Unmarshal([]byte(doc), v); err != nil {
				t.Fatal(err)
			}
			return docs
		}
	}
	t.Fatalf("%s renders no %s %s", dir, kind, name)
	return nil
}

// manifestArgs returns the arguments of the kube-state-metrics container
// of the Deployment that the kustomization in dir renders, its main and
// telemetry ports moved to the loopback addresses given.
func manifestArgs(t *testing.T, dir, mainAddr, telemetryAddr string) []string {
	t.Helper()
	var d appsv1.Deployment
	rendered(t, dir, "Deployment", ksmJob, &d)
	var args []string
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == ksmJob {
			args = c.Args
		}
	}
	if len(args) == 0 {
		t.Fatalf("%s: the Deployment has no container %s with arguments", dir, ksmJob)
	}
	host, port := splitHostPort(t, mainAddr)
	thost, tport := splitHostPort(t, telemetryAddr)
	moved := map[string]string{"--host": host, "--port": port, "--telemetry-host": thost, "--telemetry-port": tport}
	var out []string
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if _, ok := moved[name]; !ok {
			out = append(out, a)
		}
	}
	for _, name := range []string{"--host", "--port", "--telemetry-host", "--telemetry-port"} {
		out = append(out, name+"="+moved[name])
	}
	return out
}

func splitHostPort(t *testing.T, addr string) (host, port string) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return host, port
}

// stop ends the drop-in with SIGTERM, as the kubelet does, and waits for
// it.
func (d *dropIn) stop(t *testing.T) {
	t.Helper()
	select {
	case <-d.exited:
		return
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(framework.HangTimeout):
		_ = d.cmd.Process.Kill()
		<-d.exited
		t.Errorf("kube-state-metrics did not end within %s of SIGTERM", framework.HangTimeout)
	}
}

// waitFor waits as Prometheus.WaitFor does, and fails at once with the
// drop-in's log if it has exited.
func (d *dropIn) waitFor(t *testing.T, prom *framework.Prometheus, q string, check func(model.Vector) error) {
	t.Helper()
	prom.WaitFor(t, q, func(v model.Vector) error {
		select {
		case <-d.exited:
			t.Fatalf("kube-state-metrics exited: %v\n%s", d.err, d.log)
		default:
		}
		return check(v)
	})
}

// alertExprs reads the alerts of a rules file, relative to the module
// root, by name.
func alertExprs(t *testing.T, path string) map[string]string {
	t.Helper()
	var rules struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string }
		}
	}
	readYAML(t, path, &rules)
	out := map[string]string{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out[r.Alert] = r.Expr
			}
		}
	}
	return out
}

// ruleStates is the answer of Prometheus' /api/v1/rules.
type ruleStates struct {
	Data struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Name           string    `json:"name"`
				Health         string    `json:"health"`
				LastError      string    `json:"lastError"`
				LastEvaluation time.Time `json:"lastEvaluation"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"data"`
}

// checkRulesHealthy waits until Prometheus has evaluated every rule it
// loaded, and fails if any evaluation failed.
func checkRulesHealthy(t *testing.T, prom *framework.Prometheus) {
	t.Helper()
	framework.Eventually(t, "Prometheus has evaluated every rule", func() bool {
		resp, err := http.Get(prom.URL + "/api/v1/rules") //nolint:gosec,noctx // G107: the test's own Prometheus
		if err != nil {
			return false
		}
		defer func() { _ = resp.Body.Close() }()
		var states ruleStates
		if err := json.NewDecoder(resp.Body).Decode(&states); err != nil {
			t.Fatalf("/api/v1/rules: %v", err)
		}
		n, evaluated := 0, 0
		for _, g := range states.Data.Groups {
			for _, r := range g.Rules {
				n++
				if r.Health == "err" || r.LastError != "" {
					t.Fatalf("rule %s of group %s fails: %s", r.Name, g.Name, r.LastError)
				}
				if r.Health == "ok" && !r.LastEvaluation.IsZero() {
					evaluated++
				}
			}
		}
		return n > 0 && evaluated == n
	})
}

// seriesSelector is a series of a promtool test: a name and labels.
var (
	seriesSelector = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\}$`)
	seriesLabel    = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"`)
)

// checkFixtureSeries checks that the input series of the promtool tests in
// path (relative to the module root) are shaped as the drop-in's, which
// prom scrapes: for each, the drop-in serves its metric under its job with
// the same label names, and with its resource label's value, when it has
// one (the resource's Go type, as kube-state-metrics names it).
func checkFixtureSeries(t *testing.T, prom *framework.Prometheus, path string) {
	t.Helper()
	var tests struct {
		Tests []struct {
			InputSeries []struct {
				Series string `json:"series"`
			} `json:"input_series"`
		} `json:"tests"`
	}
	readYAML(t, path, &tests)
	n := 0
	for _, tc := range tests.Tests {
		for _, in := range tc.InputSeries {
			n++
			m := seriesSelector.FindStringSubmatch(in.Series)
			if m == nil {
				t.Fatalf("%s: series %q is not NAME{LABELS}", path, in.Series)
			}
			labels := map[string]string{}
			for _, l := range seriesLabel.FindAllStringSubmatch(m[2], -1) {
				labels[l[1]] = l[2]
			}
			if labels["job"] != ksmJob {
				t.Errorf("%s: series %s is not of job %s", path, in.Series, ksmJob)
				continue
			}
			q := fmt.Sprintf(`%s{job=%q}`, m[1], ksmJob)
			if res, ok := labels["resource"]; ok {
				q = fmt.Sprintf(`%s{job=%q,resource=%q}`, m[1], ksmJob, res)
			}
			prom.WaitFor(t, q, func(v model.Vector) error {
				if len(v) == 0 {
					return fmt.Errorf("the drop-in serves no %s, which %s feeds the alerts", q, path)
				}
				for _, s := range v {
					var got, want []string
					for name := range s.Metric {
						if name != model.MetricNameLabel && name != model.InstanceLabel {
							got = append(got, string(name))
						}
					}
					for name := range labels {
						if name != string(model.InstanceLabel) {
							want = append(want, name)
						}
					}
					slices.Sort(got)
					slices.Sort(want)
					if !slices.Equal(got, want) {
						return fmt.Errorf("the drop-in serves %s with the labels %v; %s gives it %v", s.Metric, got, path, want)
					}
				}
				return nil
			})
		}
	}
	if n == 0 {
		t.Fatalf("%s has no input series", path)
	}
}
