package serve_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
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
	summary := "ok, but RBAC denies the watch of 1 served resource while allowing its list"
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
		return resp.StatusCode == http.StatusOK && strings.Contains(last, summary)
	})
	// /readyz answers anyone: it names neither the server's user nor
	// its resources.
	if strings.Contains(last, user) || strings.Contains(last, "pods") {
		t.Errorf("/readyz says %q, which names the user or the resource", last)
	}
	framework.Eventually(t, "the log says the watch is denied, with the API server's message naming the user", func() bool {
		log := s.run.ErrOut.String()
		return strings.Contains(log, queryserver.WatchDeniedSummary) && strings.Contains(log, user) && strings.Contains(log, "cannot watch resource")
	})
	// The reflector lists again after each refused watch: once the API
	// server has answered a list of pods in a namespace after the log's
	// warning (no other client lists them here), the informer has stayed
	// failing across a list, and the warning must not have been repeated.
	first := namespacePodLists(t)
	framework.Eventually(t, "a list of pods after the warning", func() bool { return namespacePodLists(t) > first })
	if n := strings.Count(s.run.ErrOut.String(), queryserver.WatchDeniedSummary); n != 1 {
		t.Errorf("the log says it %d times, want once:\n%s", n, s.run.ErrOut)
	}
	t.Logf("/readyz: %s", last)
}

// namespacePodLists returns the number of lists of pods in a namespace
// the API server has answered, from its metrics.
func namespacePodLists(t *testing.T) float64 {
	t.Helper()
	body, err := cluster.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("reading the API server's metrics: %v", err)
	}
	total := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "apiserver_request_total{") && strings.Contains(line, `code="200"`) &&
			strings.Contains(line, `resource="pods"`) && strings.Contains(line, `scope="namespace"`) && strings.Contains(line, `verb="LIST"`) {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			total += v
		}
	}
	return total
}
