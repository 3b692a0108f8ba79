package faults_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestExporterRelist restarts the kube-apiserver under a running exporter
// and, while it is down, deletes a pod in etcd. The exporter reconnects by
// itself, lists again (counted in kubectl_informer_relists_total), and its
// series converge: the deleted pod's series is gone, a pod created after
// the restart has one, and no pod has two.
func TestExporterRelist(t *testing.T) {
	ns := cluster.NewNamespace(t, "export-relist")
	for _, name := range []string{"a", "b", "c"} {
		cluster.CreatePod(t, ns, name, nil)
	}
	x, url := startExporter(t, `- resource: pods
  namespaces: [`+ns+`]
  metrics:
  - name: test_pod_info
    help: One series per pod.
    type: gauge
    labels:
      pod: object.metadata.name
`)
	if got := pods(t, url); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("series before the restart: %v", got)
	}

	err := cluster.RestartAPIServer(func() error {
		return cluster.EtcdDelete(context.Background(), "/registry/pods/"+ns+"/b")
	})
	if err != nil {
		t.Fatal(err)
	}
	cluster.CreatePod(t, ns, "d", nil)
	var got []string
	waitFor(t, x, "the series of a, c and d", func() bool {
		got = pods(t, url)
		return slices.Equal(got, []string{"a", "c", "d"})
	})
	_, body := get(url + "/metrics")
	relists := fmt.Sprintf(`kubectl_informer_relists_total{namespace=%q,resource="pods"} `, ns)
	if !strings.Contains(body, relists) || strings.Contains(body, relists+"0\n") {
		t.Errorf("/metrics does not count the relist (%s…):\n%s", relists, grepLines(body, "kubectl_informer_relists_total"))
	}
	if code := x.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, x.ErrOut)
	}
}

// pods returns the pod label of every test_pod_info series, sorted; a pod
// with two series is there twice.
func pods(t *testing.T, url string) []string {
	t.Helper()
	_, body := get(url + "/metrics")
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, `test_pod_info{pod="`); ok {
			out = append(out, rest[:strings.IndexByte(rest, '"')])
		}
	}
	slices.Sort(out)
	return out
}

func get(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitFor polls cond every 100 ms until it holds, failing the test after
// framework.HangTimeout with the command's output.
func waitFor(t *testing.T, r *framework.Run, what string, cond func() bool) {
	t.Helper()
	if !poll(framework.HangTimeout, cond) {
		t.Fatalf("timed out after %s waiting for %s\nstderr:\n%s", framework.HangTimeout, what, r.ErrOut)
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
