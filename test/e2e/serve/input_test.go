package serve_test

import (
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestServerFlags checks the mistakes in --server and its companions that
// query reports without any answer from a query server.
func TestServerFlags(t *testing.T) {
	closed := framework.ClosedPort(t)
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"plain HTTP", []string{"pods", "-A", "--server", "http://x"}, app.ExitUsage, `--server "http://x": the query server speaks HTTPS only: want https://x`},
		{"not a URL", []string{"pods", "-A", "--server", "localhost"}, app.ExitUsage, `--server "localhost" is not a URL: want https://HOST:PORT`},
		{"interactive", []string{"pods", "-A", "-i", "--server", "https://" + closed}, app.ExitUsage, "--server answers one query: -i and --watch need local caches"},
		{"watch", []string{"pods", "-A", "--watch", "--server", "https://" + closed}, app.ExitUsage, "--server answers one query: -i and --watch need local caches"},
		{"managed fields", []string{"pods", "-A", "-o", "json", "--show-managed-fields", "--server", "https://" + closed}, app.ExitUsage, "a query server does not keep metadata.managedFields"},
		{"server-ca alone", []string{"pods", "-A", "--server-ca", "ca.crt"}, app.ExitUsage, "--server-ca is only for --server"},
		{"nothing listens", []string{"pods", "-A", "--server", "https://" + closed}, app.ExitRuntime, "https://" + closed + "/v1/query"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, append([]string{"query", "--kubeconfig", cluster.Kubeconfig}, c.args...)...)
			if r.code != c.code || r.out != "" || !strings.HasPrefix(r.errOut, "error: ") || !strings.Contains(r.errOut, c.msg) {
				t.Errorf("query %s: exit %d, stdout %q, stderr %q; want exit %d and %q", strings.Join(c.args, " "), r.code, r.out, r.errOut, c.code, c.msg)
			}
		})
	}
	// A refused connection says so.
	r := run(t, "query", "--kubeconfig", cluster.Kubeconfig, "pods", "-A", "--server", "https://"+closed)
	if !strings.Contains(r.errOut, "connection refused") {
		t.Errorf("query --server https://%s: stderr %q does not say the connection was refused", closed, r.errOut)
	}
}

// testUnserved checks that a query of a resource the server does not
// serve, directly or through get(), is a usage error naming what it
// serves.
func testUnserved(t *testing.T, s *server) {
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"configmaps", "-A"}, "this server does not serve configmaps; it serves pods, nodes, deployments.apps"},
		{[]string{"pods", "-A", "--where", `get("configmaps", object.metadata.namespace, "x") != null`},
			`get()/byIndex() resource "configmaps": this server does not serve configmaps; it serves pods, nodes, deployments.apps`},
	}
	for _, c := range cases {
		r := s.query(t, cluster.Kubeconfig, c.args...)
		if r.code != app.ExitUsage || r.out != "" || !strings.Contains(r.errOut, c.msg) {
			t.Errorf("query %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), r.code, r.out, r.errOut, c.msg)
		}
	}
}
