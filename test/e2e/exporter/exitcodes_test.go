package exporter_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestUnknownResourceExitCode names a resource type the server does not
// have to every verb that contacts the cluster: each says so and exits
// with 2, the code of a mistake in the input, whether the name comes from
// the command line or a config file.
func TestUnknownResourceExitCode(t *testing.T) {
	path := writeConfig(t, strings.ReplaceAll(config, "resource: pods", "resource: podz"))
	const unknown = `the server doesn't have a resource type "podz"`
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"query", []string{"query", "podz", "-A"}},
		{"watch", []string{"watch", "podz", "-A"}},
		{"serve", []string{"serve", "podz", "-A", "--listen-address", "127.0.0.1:0", "--cert-dir", t.TempDir()}},
		{"export", []string{"export", "--config", path, "--web.listen-address", "127.0.0.1:0"}},
		{"export --check", []string{"export", "--config", path, "--check"}},
		{"export --print-rbac", []string{"export", "--config", path, "--print-rbac"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{tt.args[0], "--kubeconfig", cluster.Kubeconfig}, tt.args[1:]...)
			code, out, errOut := framework.RunPlugin(context.Background(), nil, args...)
			if code != 2 || !strings.Contains(errOut, unknown) {
				t.Errorf("exit code %d, stdout:\n%s\nstderr:\n%s\nwant 2 and %q", code, out, errOut, unknown)
			}
		})
	}
}

// TestExportFlagMistakes checks that export refuses flags that contradict
// each other, and names only the flag at fault.
func TestExportFlagMistakes(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		want    string
		notWant []string
	}{
		{"--port and --web.listen-address", []string{"--port", "18080", "--web.listen-address", "127.0.0.1:0"},
			"--port and --web.listen-address both choose where to listen: give one", nil},
		{"unknown --resources", []string{"--resources", "podz"},
			`--resources: resource "podz" is not one of the kube-state-metrics profile`, []string{"--metric-allowlist", "--metric-denylist", "--metric-opt-in-list"}},
		{"bad --metric-opt-in-list", []string{"--metric-opt-in-list", "("},
			`--metric-opt-in-list: metric opt-in pattern "("`, []string{"--resources", "--metric-allowlist", "--metric-denylist"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"export", "--kubeconfig", cluster.Kubeconfig, "--profile", "kube-state-metrics", "--check"}, tt.args...)
			code, out, errOut := framework.RunPlugin(context.Background(), nil, args...)
			if code != 2 || !strings.HasPrefix(errOut, "error: "+tt.want) || strings.Count(errOut, "error: ") != 1 {
				t.Errorf("exit code %d, stdout:\n%s\nstderr:\n%s\nwant 2 and one error %q", code, out, errOut, tt.want)
			}
			for _, flag := range tt.notWant {
				if strings.Contains(errOut, flag) {
					t.Errorf("stderr %q names %s, which was not given", errOut, flag)
				}
			}
		})
	}
}
