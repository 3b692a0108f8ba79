package faults_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestExporterOutage stops the kube-apiserver under a running exporter.
// While it is down, /readyz answers 503 naming the resource and why its
// requests fail, /healthz stays 200, /metrics keeps the series as last
// seen, and a pod is changed, one deleted and one created, in etcd, behind
// the API server's back. Once it is back, /readyz answers 200 again and the
// series are exactly those of the pods there are, with their new labels:
// none left over from the deleted pod, none twice.
func TestExporterOutage(t *testing.T) {
	ns := cluster.NewNamespace(t, "outage")
	cluster.CreatePod(t, ns, "a", map[string]string{"track": "old"})
	cluster.CreatePod(t, ns, "b", nil)
	cluster.CreatePod(t, ns, "c", nil)
	x, url := startExporter(t, `- resource: pods
  namespaces: [`+ns+`]
  metrics:
  - name: test_pod_info
    help: One series per pod.
    type: gauge
    labels:
      pod: object.metadata.name
      track: object.metadata.?labels.?track.orValue("")
`)
	before := []string{`{pod="a",track="old"}`, `{pod="b",track=""}`, `{pod="c",track=""}`}
	waitSeries(t, x, url, "test_pod_info", before...)
	healthy := fmt.Sprintf(`namespace=%q,resource="pods"`, ns)
	if v := telemetry(url, "resource_healthy", healthy); v != 1 {
		t.Errorf("kubectl_informer_resource_healthy{%s} = %v before the outage, want 1", healthy, v)
	}

	failing := regexp.MustCompile(`(?m)^pods in ` + ns + `: (list|watch) failing for \d+s: .*connection refused$`)
	var readyz string
	key := func(name string) string { return "/registry/pods/" + ns + "/" + name }
	err := cluster.RestartAPIServer(func() error {
		var code int
		if !poll(framework.HangTimeout, func() bool {
			code, readyz = get(url + "/readyz")
			return code == http.StatusServiceUnavailable && failing.MatchString(readyz)
		}) {
			return fmt.Errorf("/readyz while the API server is down: %d %q, want 503 matching %s", code, readyz, failing)
		}
		if code, body := get(url + "/healthz"); code != http.StatusOK {
			return fmt.Errorf("/healthz while the API server is down: %d %q", code, body)
		}
		if got := series(url, "test_pod_info"); !slices.Equal(got, before) {
			return fmt.Errorf("series while the API server is down: %v, want them as last seen: %v", got, before)
		}
		if v := telemetry(url, "resource_healthy", healthy); v != 0 {
			return fmt.Errorf("kubectl_informer_resource_healthy{%s} = %v while the API server is down, want 0", healthy, v)
		}
		if !poll(framework.HangTimeout, func() bool { return strings.Contains(x.ErrOut.String(), "resource=\"pods in "+ns+"\"") }) {
			return errors.New("the failing requests were not logged")
		}

		// Behind the API server's back: a changed, b deleted, e created.
		ctx := context.Background()
		obj, err := cluster.EtcdGet(ctx, key("a"))
		if err != nil {
			return err
		}
		a := obj.(*corev1.Pod)
		a.Labels["track"] = "new"
		if err := cluster.EtcdPut(ctx, key("a"), a); err != nil {
			return err
		}
		if err := cluster.EtcdDelete(ctx, key("b")); err != nil {
			return err
		}
		obj, err = cluster.EtcdGet(ctx, key("c"))
		if err != nil {
			return err
		}
		e := obj.(*corev1.Pod)
		e.Name, e.UID, e.Labels = "e", uuid.NewUUID(), map[string]string{"track": "born"}
		return cluster.EtcdPut(ctx, key("e"), e)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("/readyz while the API server was down:\n%s", readyz)

	// The reflector retries with a backoff of up to a few seconds.
	waitFor(t, x, "/readyz to answer 200 ok", func() bool {
		code, body := get(url + "/readyz")
		return code == http.StatusOK && body == "ok\n"
	})
	waitSeries(t, x, url, "test_pod_info", `{pod="a",track="new"}`, `{pod="c",track=""}`, `{pod="e",track="born"}`)
	if v := telemetry(url, "resource_healthy", healthy); v != 1 {
		t.Errorf("kubectl_informer_resource_healthy{%s} = %v after the outage, want 1", healthy, v)
	}
	if v := telemetry(url, "relists_total", healthy); v < 1 {
		t.Errorf("kubectl_informer_relists_total{%s} = %v after the outage, want at least 1", healthy, v)
	}
	waitFor(t, x, "the recovery to be logged", func() bool {
		return strings.Contains(x.ErrOut.String(), "succeed again")
	})

	// The watch goes on.
	cluster.CreatePod(t, ns, "d", nil)
	waitSeries(t, x, url, "test_pod_info", `{pod="a",track="new"}`, `{pod="c",track=""}`, `{pod="d",track=""}`, `{pod="e",track="born"}`)
	if code := x.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, x.ErrOut)
	}
}
