package serve_test

import (
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestServerFlags checks the mistakes in --query-server and its companions that
// query reports without any answer from a query server.
func TestServerFlags(t *testing.T) {
	closed := framework.ClosedPort(t)
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"plain HTTP", []string{"pods", "-A", "--query-server", "http://x"}, app.ExitUsage, `--query-server "http://x": the query server speaks HTTPS only: want https://x`},
		{"not a URL", []string{"pods", "-A", "--query-server", "localhost"}, app.ExitUsage, `--query-server "localhost" is not a URL: want https://HOST:PORT`},
		{"interactive", []string{"pods", "-A", "-i", "--query-server", "https://" + closed}, app.ExitUsage, "--query-server answers one query: -i and --watch need local caches"},
		{"watch", []string{"pods", "-A", "--watch", "--query-server", "https://" + closed}, app.ExitUsage, "--query-server answers one query: -i and --watch need local caches"},
		{"managed fields", []string{"pods", "-A", "-o", "json", "--show-managed-fields", "--query-server", "https://" + closed}, app.ExitUsage, "a query server does not keep metadata.managedFields"},
		{"server-ca alone", []string{"pods", "-A", "--server-ca", "ca.crt"}, app.ExitUsage, "--server-ca is only for --query-server"},
		{"nothing listens", []string{"pods", "-A", "--query-server", "https://" + closed}, app.ExitRuntime, "https://" + closed + "/v1/query"},
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
	r := run(t, "query", "--kubeconfig", cluster.Kubeconfig, "pods", "-A", "--query-server", "https://"+closed)
	if !strings.Contains(r.errOut, "connection refused") {
		t.Errorf("query --query-server https://%s: stderr %q does not say the connection was refused", closed, r.errOut)
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
			`get("configmaps", …): this server does not serve configmaps; it serves pods, nodes, deployments.apps`},
	}
	for _, c := range cases {
		r := s.query(t, cluster.Kubeconfig, c.args...)
		if r.code != app.ExitUsage || r.out != "" || !strings.Contains(r.errOut, c.msg) {
			t.Errorf("query %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), r.code, r.out, r.errOut, c.msg)
		}
	}
}

// TestServerSpellings checks that --server (-s) is the API server's
// address, as in kubectl and in every other verb, that --query-server names
// the query server, and that the older spelling --server URL given with a
// flag only a query server takes still names the query server, with a
// deprecation warning.
func TestServerSpellings(t *testing.T) {
	// A kubeconfig whose API server does not answer: only -s reaches it.
	unreachable := cluster.KubeconfigFor(t, "https://"+framework.ClosedPort(t))
	want := localQuery(t, "pods", "-A", "-o", "name")
	if want.code != 0 || want.out == "" {
		t.Fatalf("local query: exit %d, stderr %q", want.code, want.errOut)
	}
	for _, flag := range []string{"-s", "--server"} {
		got := run(t, "query", "--kubeconfig", unreachable, "--config", configFile, "pods", "-A", "-o", "name", flag, cluster.Config.Host)
		if got != want {
			t.Errorf("query %s API-SERVER differs from the local query\n%s", flag, diff("local", want, flag, got))
		}
	}

	s := startServer(t)
	remote := s.query(t, cluster.Kubeconfig, "pods", "-A", "-o", "name")
	if remote != want {
		t.Errorf("--query-server differs from the local query\n%s", diff("local", want, "--query-server", remote))
	}
	old := run(t, "query", "--kubeconfig", cluster.Kubeconfig, "--config", configFile, "pods", "-A", "-o", "name", "--server", s.url, "--server-ca", s.ca)
	if old.code != 0 || old.out != want.out {
		t.Errorf("--server URL --server-ca CA: exit %d, stderr %q; want the query server's answer\n%s", old.code, old.errOut, diff("local", want, "--server", old))
	}
	if !strings.HasPrefix(old.errOut, "Warning: ") || !strings.Contains(old.errOut, "deprecated") || !strings.Contains(old.errOut, "--query-server") {
		t.Errorf("--server URL --server-ca CA: stderr %q, want a deprecation warning naming --query-server", old.errOut)
	}
}

// TestServerCertificateHint checks that a query server whose certificate
// the client does not trust is reported with the flag that fixes it.
func TestServerCertificateHint(t *testing.T) {
	s := startServer(t)
	// Without --server-ca the kubeconfig's certificate authority, which
	// did not sign the server's self-signed certificate, verifies it.
	r := run(t, "query", "--kubeconfig", cluster.Kubeconfig, "--config", configFile, "pods", "-A", "--query-server", s.url)
	if r.code != app.ExitRuntime || r.out != "" || !strings.Contains(r.errOut, "x509") || !strings.Contains(r.errOut, "pass --server-ca") {
		t.Errorf("query --query-server %s without --server-ca: exit %d, stdout %q, stderr %q; want exit %d, the x509 error and a hint of --server-ca", s.url, r.code, r.out, r.errOut, app.ExitRuntime)
	}
}
