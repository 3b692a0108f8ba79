package exporter_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestWatchDenied checks that an exporter whose user may list pods but
// not watch them names the refused watch on /readyz, with the API
// server's message, and says so once in its log: a list allowed between
// two refused watches does not make the informer healthy again.
func TestWatchDenied(t *testing.T) {
	ns := cluster.NewNamespace(t, "watch-denied")
	cluster.CreatePod(t, ns, "p1", nil)
	kc, user := cluster.ServiceAccountKubeconfig(t, ns, "lister", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "get"}})
	addr := framework.ClosedPort(t)
	run := cluster.StartPlugin(t, "export", "--profile", "kube-state-metrics", "--resources", "pods", "--namespaces", ns,
		"--kubeconfig", kc, "--web.listen-address", addr)
	want := `watch failing for `
	msg := `User "` + user + `" cannot watch resource "pods" in API group "" in the namespace "` + ns + `"`
	readyz := func() (bool, string) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		code, body := resp.StatusCode, string(b)
		return code == http.StatusServiceUnavailable && strings.Contains(body, want) && strings.Contains(body, msg), fmt.Sprintf("%d %q", code, body)
	}
	eventually(t, "/readyz names the refused watch", readyz)
	// The reflector lists again after each refused watch: the informer
	// stays failing across those lists, so the warning is not repeated.
	relisted := func() (bool, string) {
		return strings.Count(run.ErrOut.String(), "cannot watch resource") >= 1, run.ErrOut.String()
	}
	eventually(t, "the log names the refused watch", relisted)
	eventually(t, "/readyz still names the refused watch", readyz)
	if n := strings.Count(run.ErrOut.String(), "list and watch requests fail"); n != 1 {
		t.Errorf("the log warns %d times, want once:\n%s", n, run.ErrOut)
	}
}
