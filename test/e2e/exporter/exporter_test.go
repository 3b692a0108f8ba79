package exporter_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

const config = `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  metrics:
  - name: test_pod_info
    help: One series per pod.
    type: info
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
      node: object.spec.?nodeName.orValue("")
      phase: object.status.phase
      zone: 'has(object.spec.nodeName) ? get("nodes", object.spec.nodeName).metadata.labels["topology.kubernetes.io/zone"] : ""'
  - name: test_pods_per_node_phase
    help: Pods per node and phase.
    type: gauge
    aggregate: count
    labels:
      node: object.spec.?nodeName.orValue("")
      phase: object.status.phase
`

// start runs an exporter on the test cluster with the config text and
// returns it, the URL of its handler once it is ready, and the config's
// path.
func start(t *testing.T, text string, shard exporter.Shard) (*exporter.Exporter, string, string) {
	t.Helper()
	return startWith(t, text, exporter.Options{Shard: shard})
}

// startWith starts an exporter with opts on a config file holding text and
// serves it until the test ends; it returns once the exporter is ready.
func startWith(t *testing.T, text string, opts exporter.Options) (*exporter.Exporter, string, string) {
	t.Helper()
	opts.ConfigPath = writeConfig(t, text)
	x, url := cluster.ServeExporter(t, nil, opts)
	framework.WaitReady(t, url)
	return x, url, opts.ConfigPath
}

// TestStartupPacingRestored checks that the garbage collector's pacing
// for the initial sync (no target percentage, a memory limit) is replaced
// by the process's own again after the exporter is ready: its target
// percentage and its memory limit. The exporter restores them just after
// it reports ready, so the test waits for the runtime to show them.
func TestStartupPacingRestored(t *testing.T) {
	prev := debug.SetGCPercent(150)
	defer debug.SetGCPercent(prev)
	prevLimit := debug.SetMemoryLimit(5 << 40)
	defer debug.SetMemoryLimit(prevLimit)
	startWith(t, config, exporter.Options{StartupPacing: factory.FillPacing{Floor: 64 << 20, Factor: 3}})
	framework.Eventually(t, "the GC percent is 150 and the memory limit 5 TiB again", func() bool {
		return gcPercent() == 150 && memoryLimit() == 5<<40
	})
}

// memoryLimit reads the runtime's soft memory limit without changing it.
func memoryLimit() uint64 {
	s := []metrics.Sample{{Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// gcPercent reads the garbage collector's target percentage without
// changing it.
func gcPercent() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// series returns the samples of metric as "label=value,…" → value.
func series(t *testing.T, url, metric string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range framework.Scrape(t, url)[metric].GetMetric() {
		var parts []string
		for _, l := range m.GetLabel() {
			parts = append(parts, l.GetName()+"="+l.GetValue())
		}
		sort.Strings(parts)
		out[strings.Join(parts, ",")] = framework.SampleValue(m)
	}
	return out
}

func zoneOf(t *testing.T) map[string]string {
	t.Helper()
	nodes, err := cluster.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range nodes.Items {
		out[n.Name] = n.Labels["topology.kubernetes.io/zone"]
	}
	return out
}

// expected computes the two families from the API's own list.
func expected(t *testing.T) (info map[string]float64, perNode map[string]float64) {
	t.Helper()
	pods, err := cluster.Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zones := zoneOf(t)
	info, perNode = map[string]float64{}, map[string]float64{}
	for _, p := range pods.Items {
		zone := ""
		if p.Spec.NodeName != "" {
			zone = zones[p.Spec.NodeName]
		}
		info[fmt.Sprintf("namespace=%s,node=%s,phase=%s,pod=%s,zone=%s", p.Namespace, p.Spec.NodeName, p.Status.Phase, p.Name, zone)] = 1
		perNode[fmt.Sprintf("node=%s,phase=%s", p.Spec.NodeName, p.Status.Phase)]++
	}
	return info, perNode
}

func equal(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// eventually retries check for up to framework.HangTimeout.
func eventually(t *testing.T, what string, check func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(framework.HangTimeout)
	for {
		ok, detail := check()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %s", what, framework.HangTimeout, detail)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestSeriesFollowTheObjects(t *testing.T) {
	_, srv, _ := start(t, config, exporter.Shard{})
	check := func() (bool, string) {
		info, perNode := expected(t)
		gotInfo, gotPerNode := series(t, srv, "test_pod_info"), series(t, srv, "test_pods_per_node_phase")
		return equal(info, gotInfo) && equal(perNode, gotPerNode), fmt.Sprintf("info %d/%d series, per node %v vs %v", len(gotInfo), len(info), gotPerNode, perNode)
	}
	eventually(t, "series match the objects after sync", check)

	ctx := context.Background()
	all, err := cluster.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Running"})
	if err != nil || len(all.Items) < 2 {
		t.Fatalf("running pods: %v", err)
	}
	// An update changes the series.
	p := all.Items[0]
	p.Status.Phase = corev1.PodFailed
	if _, err := cluster.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, &p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "an update changes the series", check)
	// A delete removes them.
	victim := all.Items[1]
	zero := int64(0)
	if err := cluster.Client.CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a delete removes the series", func() (bool, string) {
		ok, detail := check()
		for k := range series(t, srv, "test_pod_info") {
			if strings.Contains(k, "pod="+victim.Name+",") {
				return false, "the deleted pod still has a series"
			}
		}
		return ok, detail
	})
	// A change of a looked-up node recomputes the pods that read it.
	node, err := cluster.Client.CoreV1().Nodes().Get(ctx, "node-001", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Labels["topology.kubernetes.io/zone"] = "zone-moved"
	if _, err := cluster.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a node change recomputes its pods' series", check)
}

func TestShardsUnion(t *testing.T) {
	_, whole, _ := start(t, config, exporter.Shard{})
	want := series(t, whole, "test_pod_info")
	union := map[string]float64{}
	for s := range 3 {
		_, srv, _ := start(t, config, exporter.Shard{Index: s, Total: 3})
		got := series(t, srv, "test_pod_info")
		if len(got) == 0 || len(got) == len(want) {
			t.Errorf("shard %d has %d of %d series; want a part", s, len(got), len(want))
		}
		for k, v := range got {
			if _, dup := union[k]; dup {
				t.Errorf("series %s in two shards", k)
			}
			union[k] = v
		}
	}
	if !equal(union, want) {
		t.Errorf("the union of 3 shards has %d series, the unsharded exporter %d", len(union), len(want))
	}
}

func TestReloadKeepsCaches(t *testing.T) {
	x, srv, path := start(t, config, exporter.Shard{})
	_, before := framework.Get(t, srv+"/metrics")
	lists := listRequests(t, before)
	more := config + `  - name: test_pods_count
    help: Pods, counted once more.
    type: gauge
    aggregate: count
`
	if err := os.WriteFile(path, []byte(more), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := x.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	framework.WaitReady(t, srv)
	if got := series(t, srv, "test_pods_count"); len(got) != 1 {
		t.Errorf("after reload, test_pods_count has %v", got)
	}
	_, after := framework.Get(t, srv+"/metrics")
	if l := listRequests(t, after); l != lists {
		t.Errorf("list requests went from %v to %v: the reload listed again", lists, l)
	}
	// A broken config keeps the running one and says so.
	if err := os.WriteFile(path, []byte("apiVersion: nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := x.Reload(t.Context()); err == nil {
		t.Fatal("a broken config reloaded")
	}
	_, body := framework.Get(t, srv+"/metrics")
	if !strings.Contains(body, "kubectl_informer_config_last_reload_successful 0") || !strings.Contains(body, "test_pods_count") {
		t.Errorf("after a failed reload: want the failure counted and the old series kept")
	}
}

func listRequests(t *testing.T, body string) string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "kubectl_informer_list_requests_total{") {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no kubectl_informer_list_requests_total in /metrics")
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func TestMetricsEndpoint(t *testing.T) {
	ksm, err := os.ReadFile(filepath.Join(cluster.Root, "examples", "kube-state-metrics-pods.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, srv, _ := start(t, string(ksm), exporter.Shard{})
	_, body := framework.Get(t, srv+"/metrics")
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	var list []*dto.MetricFamily
	for _, mf := range mfs {
		list = append(list, mf)
	}
	problems, err := promlint.NewWithMetricFamilies(list).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range problems {
		t.Errorf("promlint: %s: %s", pr.Metric, pr.Text)
	}

	// kube-state-metrics' label sets, exactly.
	wantLabels := map[string]string{
		"kube_pod_info":                            "created_by_kind,created_by_name,host_ip,host_network,namespace,node,pod,pod_ip,priority_class,uid",
		"kube_pod_status_phase":                    "namespace,phase,pod,uid",
		"kube_pod_container_status_restarts_total": "container,namespace,pod,uid",
	}
	pods, err := cluster.Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, labels := range wantLabels {
		mf, ok := mfs[name]
		if !ok {
			t.Errorf("%s is missing", name)
			continue
		}
		for _, m := range mf.GetMetric() {
			var names []string
			for _, l := range m.GetLabel() {
				names = append(names, l.GetName())
			}
			sort.Strings(names) // the exposition's order of labels means nothing
			if got := strings.Join(names, ","); got != labels {
				t.Errorf("%s has labels %s, want %s", name, got, labels)
				break
			}
		}
	}
	if n := len(mfs["kube_pod_info"].GetMetric()); n != len(pods.Items) {
		t.Errorf("kube_pod_info has %d series for %d pods", n, len(pods.Items))
	}
	if n := len(mfs["kube_pod_status_phase"].GetMetric()); n != 5*len(pods.Items) {
		t.Errorf("kube_pod_status_phase has %d series for %d pods; want 5 each", n, len(pods.Items))
	}
	running := 0
	for _, m := range mfs["kube_pod_status_phase"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "phase" && l.GetValue() == "Running" && m.GetGauge().GetValue() == 1 {
				running++
			}
		}
	}
	wantRunning := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			wantRunning++
		}
	}
	if running != wantRunning {
		t.Errorf("kube_pod_status_phase{phase=\"Running\"}==1 for %d pods, the API has %d running", running, wantRunning)
	}

	// OpenMetrics on request, gzip when accepted.
	req, _ := http.NewRequest(http.MethodGet, srv+"/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/openmetrics-text") || !strings.HasSuffix(string(b), "# EOF\n") ||
		!strings.Contains(string(b), "# TYPE kube_pod_container_status_restarts counter\n") {
		t.Errorf("OpenMetrics: Content-Type %q, ends with EOF %v", resp.Header.Get("Content-Type"), strings.HasSuffix(string(b), "# EOF\n"))
	}
	req, _ = http.NewRequest(http.MethodGet, srv+"/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err = http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("Accept-Encoding gzip answered with Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
}

// TestReadyzBeforeSync points the informers at a server that never answers:
// /readyz stays 503 and names the resource, /healthz is 200.
func TestReadyzBeforeSync(t *testing.T) {
	silent := &rest.Config{Host: "http://" + framework.SilentServer(t)}
	_, srv := cluster.ServeExporter(t, silent, exporter.Options{Sources: exporter.Sources{ConfigPath: writeConfig(t, config)}})
	// The server never answers: the caches never sync.
	eventually(t, "/readyz before sync names pods and nodes", func() (bool, string) {
		code, body := framework.Get(t, srv+"/readyz")
		if code != http.StatusServiceUnavailable {
			t.Fatalf("/readyz before sync: %d %q; want 503", code, body)
		}
		return strings.Contains(body, "pods") && strings.Contains(body, "nodes"), fmt.Sprintf("%d %q", code, body)
	})
	if code, _ := framework.Get(t, srv+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(`apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  metrics:
  - name: pods_by_phase
    help: Pods by phase.
    type: gauge
    labels:
      phase: object.status.phase =
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}
	cmd := app.NewRootCommand(streams)
	cmd.SetArgs([]string{"export", "--config", bad, "--check"})
	if code := app.Execute(cmd, streams); code != app.ExitUsage {
		t.Errorf("--check of a bad config: exit %d, want %d", code, app.ExitUsage)
	}
	if want := bad + ":10: metric \"pods_by_phase\" label \"phase\""; !strings.Contains(errOut.String(), want) || !strings.Contains(errOut.String(), "^") {
		t.Errorf("--check printed %q; want %q and a caret", errOut.String(), want)
	}
	out.Reset()
	errOut.Reset()
	cmd = app.NewRootCommand(streams)
	cmd.SetArgs([]string{"export", "--config", filepath.Join(cluster.Root, "examples", "kube-state-metrics-pods.yaml"), "--check"})
	if code := app.Execute(cmd, streams); code != 0 || !strings.Contains(out.String(), "kube_pod_status_phase") {
		t.Errorf("--check of the KSM example: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

// TestMutualLookups: pods read their node with get() and nodes count their
// pods with byIndex(), so each resource is both configured and looked up;
// a reload of the same config (indexes included) lists nothing again.
func TestMutualLookups(t *testing.T) {
	const mutual = `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  indexes:
    byNode: 'object.spec.?nodeName'
  metrics:
  - name: test_pod_zone_info
    help: The zone of each scheduled pod.
    type: info
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
      zone: 'has(object.spec.nodeName) ? get("nodes", object.spec.nodeName).metadata.labels["topology.kubernetes.io/zone"] : ""'
- resource: nodes
  metrics:
  - name: test_node_pods
    help: Pods on each node.
    type: gauge
    labels:
      node: object.metadata.name
    value: size(byIndex("pods", "byNode", object.metadata.name))
`
	x, srv, _ := start(t, mutual, exporter.Shard{})
	want := map[string]float64{}
	pods, err := cluster.Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cluster.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		want["node="+n.Name] = 0
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			want["node="+p.Spec.NodeName]++
		}
	}
	eventually(t, "pods per node through byIndex", func() (bool, string) {
		got := series(t, srv, "test_node_pods")
		return equal(got, want), fmt.Sprintf("%v vs %v", got, want)
	})
	if n := len(series(t, srv, "test_pod_zone_info")); n != len(pods.Items) {
		t.Errorf("test_pod_zone_info has %d series for %d pods", n, len(pods.Items))
	}
	_, before := framework.Get(t, srv+"/metrics")
	if err := x.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	framework.WaitReady(t, srv)
	_, after := framework.Get(t, srv+"/metrics")
	if a, b := watchRequests(t, before), watchRequests(t, after); a != b {
		t.Errorf("a reload of the same config started new list/watches:\n%s\n%s", a, b)
	}
	if got := series(t, srv, "test_node_pods"); !equal(got, want) {
		t.Errorf("after reload: %v, want %v", got, want)
	}
	// The telemetry's counts, kept on the events of the reloaded config's
	// informers, match the cluster.
	eventually(t, "object and index value counts after reload", func() (bool, string) {
		pods, err := cluster.Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := cluster.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		byNode := map[string]bool{}
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				byNode[p.Spec.NodeName] = true
			}
		}
		counts := map[string]float64{
			"namespace=,resource=pods":  float64(len(pods.Items)),
			"namespace=,resource=nodes": float64(len(nodes.Items)),
		}
		objects, values := series(t, srv, "kubectl_informer_resource_objects"), series(t, srv, "kubectl_informer_index_values")
		v := values["index=byNode,resource=pods"]
		return equal(objects, counts) && v == float64(len(byNode)), fmt.Sprintf("objects %v vs %v, byNode values %v vs %d", objects, counts, v, len(byNode))
	})
}

func watchRequests(t *testing.T, body string) string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "kubectl_informer_watch_requests_total{") || strings.HasPrefix(l, "kubectl_informer_list_requests_total{") {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestReloadOnFileChange changes the config file under a running exporter:
// the new family appears without a SIGHUP.
func TestReloadOnFileChange(t *testing.T) {
	x, srv, path := start(t, config, exporter.Shard{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := x.WatchReloads(ctx); err != nil {
		t.Fatal(err)
	}
	more := config + `  - name: test_pods_by_namespace
    help: Pods per namespace.
    type: gauge
    aggregate: count
    labels:
      namespace: object.metadata.namespace
`
	// Written beside and renamed over, as editors and ConfigMap mounts do.
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(more), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	// Other tests of the package add pods in namespaces of their own: the
	// answer is the API server's count per namespace, read each time.
	eventually(t, "a changed config file is reloaded", func() (bool, string) {
		pods, err := cluster.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]float64{}
		for _, p := range pods.Items {
			want["namespace="+p.Namespace]++
		}
		got := series(t, srv, "test_pods_by_namespace")
		return equal(got, want), fmt.Sprintf("%v, want %v", got, want)
	})
}

// TestWebConfigBasicAuth serves with an exporter-toolkit web config that
// requires basic auth.
func TestWebConfigBasicAuth(t *testing.T) {
	x, _, _ := start(t, config, exporter.Shard{})
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(web, []byte("basic_auth_users:\n  prometheus: "+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := framework.ClosedPort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- x.Serve(ctx, exporter.ServeConfig{ListenAddresses: []string{addr}, WebConfigFile: web}, slog.New(slog.DiscardHandler))
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	url := "http://" + addr + "/metrics"
	var resp *http.Response
	for deadline := time.Now().Add(framework.HangTimeout); ; time.Sleep(50 * time.Millisecond) {
		if resp, err = http.Get(url); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without credentials: %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.SetBasicAuth("prometheus", "s3cret")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "test_pod_info") {
		t.Errorf("with credentials: %d", resp.StatusCode)
	}
}

// TestLookupOnlyEvents checks that the events of a resource read only by
// get() are counted in kubectl_informer_resource_events_total, by its
// resolved name, as its cache receives them.
func TestLookupOnlyEvents(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "lookupevents")
	_, url, _ := startWith(t, `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  namespaces: [`+ns+`]
  metrics:
  - name: test_pod_settings_info
    help: A pod, with whether its namespace has settings.
    type: info
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
      settings: 'string(get("cm", object.metadata.namespace, "settings") != null)'
`, exporter.Options{})
	want := func(add, update, del float64) {
		t.Helper()
		var got map[string]float64
		framework.Eventually(t, fmt.Sprintf("the configmaps' events are add %v, update %v, delete %v", add, update, del), func() bool {
			got = series(t, url, "kubectl_informer_resource_events_total")
			return got["resource=configmaps,type=add"] == add && got["resource=configmaps,type=update"] == update &&
				got["resource=configmaps,type=delete"] == del
		})
	}
	want(0, 0, 0)
	cms := cluster.Client.CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want(1, 0, 0)
	cm.Data = map[string]string{"a": "b"}
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want(1, 1, 0)
	if err := cms.Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want(1, 1, 1)
}

// TestSteadyGCPercent checks that the garbage collector's target once synced
// is SteadyGCPercent when it is set, whatever it was before the sync.
func TestSteadyGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(150)
	defer debug.SetGCPercent(prev)
	startWith(t, config, exporter.Options{StartupPacing: factory.FillPacing{Floor: 64 << 20, Factor: 3}, SteadyGCPercent: 40})
	framework.Eventually(t, "the GC percent is 40", func() bool {
		return gcPercent() == 40
	})
}
