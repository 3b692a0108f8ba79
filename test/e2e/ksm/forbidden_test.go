package ksm_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// get fetches url and returns its status code and body; 0 and the error
// while nothing answers.
func get(url string) (int, string) {
	resp, err := http.Get(url) //nolint:gosec,noctx // G107: the test's own exporter
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err.Error()
	}
	return resp.StatusCode, string(b)
}

// sample returns the value of family's series in mfs whose labels include
// labels, and whether there is one.
func sample(mfs map[string]*dto.MetricFamily, family string, labels map[string]string) (float64, bool) {
	for _, m := range mfs[family].GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if match {
			return framework.SampleValue(m), true
		}
	}
	return 0, false
}

// TestForbiddenResource runs the drop-in as a user that may list and
// watch configmaps but not secrets, with --resources=configmaps,secrets,
// as kube-state-metrics runs when its ClusterRole lost secrets. As
// kube-state-metrics, it is ready once what it may read has synced:
// /readyz answers 200 and names secrets as forbidden, the configmaps'
// families are served, kube_state_metrics_list_total{result="error"} of
// secrets keeps growing as the lists are retried (what kube-prometheus'
// KubeStateMetricsListErrors alerts on), the project's telemetry reports
// secrets not synced, the log says so once, with the rule to add, and a
// reload succeeds.
// export --profile kube-state-metrics under the same user stays unready,
// naming secrets. Once the rule is granted, both serve the secrets
// without a restart and are ready.
func TestForbiddenResource(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "forbidden")
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const user = "ksm-without-secrets"
	kubeconfig, _ := cluster.AddUserAllowed(t, user,
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}})

	telemetry := "http://127.0.0.1:" + strconv.Itoa(freePort(t))
	p := startKSM(t, nil, "--kubeconfig", kubeconfig, "--resources=configmaps,secrets", "--namespaces="+ns,
		"--telemetry-port="+strings.TrimPrefix(telemetry, "http://127.0.0.1:"))
	exportAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	export := cluster.StartPlugin(t, "export", "--profile", "kube-state-metrics", "--resources", "configmaps,secrets", "--namespaces", ns,
		"--kubeconfig", kubeconfig, "--web.listen-address", exportAddr)

	forbidden := `secrets in ` + ns + `: not synced, its families are not served: list failing for `
	var code int
	var body string
	readyz := func(url string) (int, string) { return get(url + "/readyz") }
	p.waitFor(t, func() bool {
		code, body = readyz(p.url)
		return code == http.StatusOK && strings.Contains(body, forbidden) && strings.Contains(body, `secrets is forbidden: User "`+user+`"`)
	}, func() string {
		return fmt.Sprintf("drop-in /readyz: %d %q, want 200 naming secrets forbidden", code, body)
	})
	t.Logf("the drop-in's /readyz with secrets forbidden:\n%s", body)
	p.waitServed(t, p.url, "kube_configmap_info", ns, "configmap", []string{"cm"})

	// Each list of secrets the reflector retries is refused, and counted.
	secretErrors := map[string]string{"resource": "*v1.Secret", "result": "error"}
	listErrors := func() float64 {
		mfs := p.scrape(t, telemetry)
		v, _ := sample(mfs, "kube_state_metrics_list_total", secretErrors)
		return v
	}
	var first, last float64
	p.waitFor(t, func() bool { first = listErrors(); return first > 0 },
		func() string { return "no kube_state_metrics_list_total{resource=\"*v1.Secret\",result=\"error\"}" })
	p.waitFor(t, func() bool { last = listErrors(); return last > first },
		func() string {
			return fmt.Sprintf("kube_state_metrics_list_total of secrets' errors stays at %v: the lists are not retried", first)
		})
	mfs := p.scrape(t, telemetry)
	if v, ok := sample(mfs, "kube_state_metrics_list_total", map[string]string{"resource": "*v1.ConfigMap", "result": "error"}); ok {
		t.Errorf("kube_state_metrics_list_total of configmaps' errors: %v, want none", v)
	}
	if v, ok := sample(mfs, "kubectl_informer_resource_synced", map[string]string{"resource": "secrets", "namespace": ns}); !ok || v != 0 {
		t.Errorf("kubectl_informer_resource_synced of secrets: %v (served: %v), want 0", v, ok)
	}
	if v, ok := sample(mfs, "kubectl_informer_resource_synced", map[string]string{"resource": "configmaps", "namespace": ns}); !ok || v != 1 {
		t.Errorf("kubectl_informer_resource_synced of configmaps: %v (served: %v), want 1", v, ok)
	}
	if code, body := readyz(p.url); code != http.StatusOK {
		t.Errorf("drop-in /readyz after the lists were retried: %d %q, want 200", code, body)
	}
	// Logged once, lists retried since, with the rule that lets it read
	// secrets.
	log := p.stderr.String()
	if n := strings.Count(log, "list and watch requests fail"); n != 1 {
		t.Errorf("the drop-in warns of failing requests %d times, want once:\n%s", n, log)
	}
	for _, want := range []string{"secrets in " + ns, "has not synced, and its families are not served", `resources: [\"secrets\"], verbs: [\"list\", \"watch\"]`} {
		if !strings.Contains(log, want) {
			t.Errorf("the drop-in's log does not say %q:\n%s", want, log)
		}
	}

	// A reload (SIGHUP) succeeds without secrets too.
	reloads := func(result string) float64 {
		v, _ := sample(p.scrape(t, telemetry), "kubectl_informer_config_reloads_total", map[string]string{"result": result})
		return v
	}
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitFor(t, func() bool { return reloads("success")+reloads("failure") >= 2 },
		func() string { return "the reload on SIGHUP was not counted" })
	if n := reloads("failure"); n != 0 {
		t.Errorf("%v reloads failed with secrets forbidden, want none", n)
	}
	if code, body := readyz(p.url); code != http.StatusOK {
		t.Errorf("drop-in /readyz after the reload: %d %q, want 200", code, body)
	}

	// export keeps waiting for every resource: unready, naming secrets,
	// after its lists of secrets were retried.
	exportURL := "http://" + exportAddr
	framework.Eventually(t, "export's lists of secrets retried", func() bool {
		code, body := get(exportURL + "/metrics")
		if code != http.StatusOK {
			return false
		}
		v, _ := sample(framework.ParseText(t, body), "kubectl_informer_list_request_errors_total", map[string]string{"resource": "secrets", "namespace": ns})
		return v >= 2
	})
	if code, body := readyz(exportURL); code != http.StatusServiceUnavailable || !strings.Contains(body, "not synced: secrets in "+ns) || !strings.Contains(body, "forbidden") {
		t.Errorf("export's /readyz with secrets forbidden: %d %q, want 503 naming secrets forbidden\n%s", code, body, export.ErrOut)
	}

	// The rule granted, both list secrets at their next attempt.
	role, err := cluster.Client.RbacV1().ClusterRoles().Get(ctx, user, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list", "watch"}})
	if _, err := cluster.Client.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.waitServed(t, p.url, "kube_secret_info", ns, "secret", []string{"s"})
	p.waitFor(t, func() bool {
		code, body = readyz(p.url)
		return code == http.StatusOK && body == "ok\n"
	}, func() string {
		return fmt.Sprintf("drop-in /readyz with secrets granted: %d %q, want 200 ok", code, body)
	})
	framework.Eventually(t, "export's /readyz answers 200 ok with secrets granted", func() bool {
		code, body = readyz(exportURL)
		return code == http.StatusOK && body == "ok\n"
	})
	if v := labelValues(framework.Scrape(t, exportURL), "kube_secret_info", ns, "secret"); len(v) != 1 || v[0] != "s" {
		t.Errorf("export's kube_secret_info of namespace %s: %v, want [s]", ns, v)
	}
}
