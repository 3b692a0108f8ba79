package app

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitColumns(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"node=object.spec.nodeName", []string{"node=object.spec.nodeName"}},
		{"a=x,b=y", []string{"a=x", "b=y"}},
		{`zone=get("nodes", object.spec.nodeName).metadata.labels["z"],n=1`, []string{`zone=get("nodes", object.spec.nodeName).metadata.labels["z"]`, "n=1"}},
		{`s=object.metadata.name.split(",").size()`, []string{`s=object.metadata.name.split(",").size()`}},
		{`l=[1, 2],m={"a": 1, "b": 2}`, []string{`l=[1, 2]`, `m={"a": 1, "b": 2}`}},
		{`eq=x == 1, y=2`, []string{`eq=x == 1`, ` y=2`}},
		{`c=a,b == c`, []string{`c=a,b == c`}},
		{`q='it\'s, x=1'`, []string{`q='it\'s, x=1'`}},
	}
	for _, tt := range tests {
		if got := SplitColumns(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitColumns(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

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
