package query_test

import (
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
)

// TestResourceTypeErrorsMatchKubectl checks the mistakes in naming resource
// types against kubectl get's own answer: the same words on stderr, nothing
// on stdout, and a usage error (exit code 2, where kubectl exits with 1).
func TestResourceTypeErrorsMatchKubectl(t *testing.T) {
	// An empty type in a list: kubectl's words, byte for byte.
	for _, arg := range []string{"pods,", ",pods", "pods,,deployments"} {
		want := kubectl(t, "get", arg, "-n", "shop")
		got := query(t, arg, "-n", "shop")
		if want.code != 1 || got.code != app.ExitUsage || got.out != "" || got.errOut != want.errOut {
			t.Errorf("query %s: exit %d, stdout %q, stderr %q; want exit %d and kubectl's %q (kubectl exited %d)", arg, got.code, got.out, got.errOut, app.ExitUsage, want.errOut, want.code)
		}
	}

	// No type at all: kubectl get's lines, with this verb's name.
	for _, verb := range []string{"query", "watch"} {
		want := kubectl(t, "get")
		got := run(t, verb, "--kubeconfig", cluster.Kubeconfig)
		wantErr := strings.NewReplacer("resource to get", "resource to "+verb, "'kubectl get -h'", "'kubectl informer "+verb+" -h'").Replace(want.errOut)
		if want.code != 1 || got.code != app.ExitUsage || got.out != "" || got.errOut != wantErr {
			t.Errorf("%s without a type: exit %d, stderr %q; want exit %d and %q", verb, got.code, got.errOut, app.ExitUsage, wantErr)
		}
	}

	// A version the group does not serve: kubectl's message, then the
	// group and version, and the versions served, not the type itself.
	want := kubectl(t, "get", "deployments.v2.apps", "-n", "shop")
	got := query(t, "deployments.v2.apps", "-n", "shop")
	kubectlMsg := strings.TrimSuffix(want.errOut, "\n")
	if want.code != 1 || got.code != app.ExitUsage || !strings.HasPrefix(got.errOut, kubectlMsg+` in group "apps" and version "v2"`) ||
		!strings.Contains(got.errOut, `did you mean "deployments.v1.apps"?`) {
		t.Errorf("query deployments.v2.apps: exit %d, stderr %q; want exit %d, kubectl's %q naming group apps and version v2, and deployments.v1.apps", got.code, got.errOut, app.ExitUsage, kubectlMsg)
	}
	// The same type in an unknown group: no suggestion of the type itself.
	got = query(t, "deployments.example.com", "-n", "shop")
	if got.code != app.ExitUsage || !strings.HasPrefix(got.errOut, `error: the server doesn't have a resource type "deployments" in group "example.com"`) || strings.Contains(got.errOut, "did you mean") {
		t.Errorf("query deployments.example.com: exit %d, stderr %q; want a usage error naming group example.com without a suggestion", got.code, got.errOut)
	}
}
