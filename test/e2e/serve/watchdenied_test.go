package serve_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/queryserver"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestWatchDenied checks that a server whose user may list pods but not
// watch them says so once in its log and, for as long as it lasts, on
// /readyz, with the API server's message.
func TestWatchDenied(t *testing.T) {
	ns := cluster.NewNamespace(t, "watch-denied")
	cluster.CreatePod(t, ns, "p1", nil)
	kc, user := cluster.ServiceAccountKubeconfig(t, ns, "lister", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "get"}})
	addr := framework.ClosedPort(t)
	certDir := t.TempDir()
	s := &server{
		run: cluster.StartPlugin(t, "serve", "pods", "-n", ns, "--kubeconfig", kc, "--listen-address", addr, "--cert-dir", certDir),
		url: "https://" + addr,
		ca:  filepath.Join(certDir, queryserver.SelfSignedCertFile),
	}
	want := `User "` + user + `" cannot watch resource "pods" in API group "" in the namespace "` + ns + `"`
	var last string
	framework.Eventually(t, "/readyz says the watch is denied", func() bool {
		if _, err := os.Stat(s.ca); err != nil {
			return false
		}
		hc := s.anonymousClient(t)
		defer hc.CloseIdleConnections()
		hc.Timeout = 2 * time.Second
		resp, err := hc.Get(s.url + "/readyz")
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		last = resp.Status + ": " + string(body)
		return resp.StatusCode == http.StatusOK && strings.Contains(last, queryserver.WatchDeniedSummary) && strings.Contains(last, want)
	})
	framework.Eventually(t, "the log says the watch is denied", func() bool {
		return strings.Contains(s.run.ErrOut.String(), queryserver.WatchDeniedSummary)
	})
	if n := strings.Count(s.run.ErrOut.String(), queryserver.WatchDeniedSummary); n != 1 {
		t.Errorf("the log says it %d times, want once:\n%s", n, s.run.ErrOut)
	}
	t.Logf("/readyz: %s", last)
}
