package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrintRBACFlags checks the flags of export --print-rbac that need no
// cluster: their combinations and values, and a config that does not load,
// refused before anything contacts the server.
func TestPrintRBACFlags(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(`apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
`), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(`apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  metrics:
  - name: pod_info
    help: A pod.
    type: info
    labels:
      pod: object.metadata.name =
`), 0o600); err != nil {
		t.Fatal(err)
	}
	// Nothing listens there: a test that reached the server would fail
	// with exit code 1.
	kc := kubeconfig(t, closedServer(t))
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"with --check", []string{"--config", good, "--print-rbac", "--check"}, ExitUsage, "--check and --print-rbac: give one"},
		{"--rbac-name alone", []string{"--config", good, "--rbac-name", "x"}, ExitUsage, "--rbac-name is only for --print-rbac"},
		{"--rbac-namespace alone", []string{"--config", good, "--rbac-namespace", "x"}, ExitUsage, "--rbac-namespace is only for --print-rbac"},
		{"invalid name", []string{"--config", good, "--print-rbac", "--rbac-name", "Exporter"}, ExitUsage, `--rbac-name "Exporter"`},
		{"invalid namespace", []string{"--config", good, "--print-rbac", "--rbac-namespace", "a.b"}, ExitUsage, `--rbac-namespace "a.b"`},
		{"invalid config", []string{"--config", bad, "--print-rbac"}, ExitUsage, bad + `:10: metric "pod_info" label "pod"`},
		{"unreachable server", []string{"--config", good, "--print-rbac"}, ExitRuntime, "the API server could not be reached"},
		{"invalid -n", []string{"--config", good, "-n", "a.b"}, ExitUsage, `--namespace "a.b"`},
		{"invalid -n with --print-rbac", []string{"--config", good, "--print-rbac", "-n", "Shop"}, ExitUsage, `--namespace "Shop"`},
		{"unreachable server, profile", []string{"--profile", "kube-state-metrics", "--print-rbac"}, ExitRuntime, "the API server could not be reached"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(append([]string{"export", "--kubeconfig", kc}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tc.code, tc.stderr)
			}
			// Said once, not once per resource.
			if n := strings.Count(errOut, tc.stderr); n > 1 {
				t.Errorf("stderr says %q %d times:\n%s", tc.stderr, n, errOut)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
		})
	}
}
