package app

import (
	"strings"
	"testing"
)

// TestQueryValidateNoCluster checks flag and expression errors without any
// cluster: the kubeconfig points nowhere, and Validate must not need it.
func TestQueryValidateNoCluster(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"pods", "--where", "object.status.phase =="}, "invalid --where expression: syntax error"},
		{[]string{"pods", "--where", "1"}, "must evaluate to bool"},
		{[]string{"pods", "--index", "byNode"}, `--index "byNode": want NAME=CEL`},
		{[]string{"pods", "--index", "namespace=object.metadata.namespace"}, `index "namespace" is built in`},
		{[]string{"pods", "--by", "x=y"}, `unknown index "x": known indexes are namespace`},
		{[]string{"pods", "--columns", "=x"}, `--columns "=x": want NAME=CEL`},
		{[]string{"pods", "--group-by", "object.kind"}, "--group-by needs --count"},
		{[]string{"pods", "--count", "--sort-by", "object.kind"}, "--sort-by cannot be combined with --count"},
		{[]string{"pods", "--count", "-o", "json"}, "-o json cannot be used with it"},
		{[]string{"pods", "--limit", "-1"}, "--limit must not be negative"},
		{[]string{"pods", "--sync-timeout", "0s"}, "--sync-timeout must be positive"},
		{[]string{"pods", "-o", "xml"}, `output format "xml"`},
	}
	for _, tt := range tests {
		args := append([]string{"query", "--kubeconfig", "/nonexistent/kubeconfig", "-A"}, tt.args...)
		code, _, errOut := run(args...)
		if code != ExitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}
