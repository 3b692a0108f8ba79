package exporter_test

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
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
	eventually(t, "the log names the refused watch", func() (bool, string) {
		return strings.Contains(run.ErrOut.String(), "cannot watch resource"), run.ErrOut.String()
	})
	// The reflector lists again after each refused watch, and watches
	// again: once a watch after the warning has been refused too, the
	// informer has stayed failing across a list, and the warning must
	// not have been repeated.
	refused := func() float64 {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return 0
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "kubectl_informer_watch_request_errors_total{") && strings.Contains(line, `namespace="`+ns+`"`) {
				v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
				return v
			}
		}
		return 0
	}
	first := refused()
	eventually(t, "a watch refused after the warning", func() (bool, string) {
		v := refused()
		return v > first, fmt.Sprintf("%v watches refused, %v when the warning was seen", v, first)
	})
	eventually(t, "/readyz still names the refused watch", readyz)
	if n := strings.Count(run.ErrOut.String(), "list and watch requests fail"); n != 1 {
		t.Errorf("the log warns %d times, want once:\n%s", n, run.ErrOut)
	}
}
