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
		{[]string{"pods", "--index", "byNode"}, `--index "byNode": want [RESOURCE:]NAME=CEL`},
		{[]string{"pods", "--index", "namespace=object.metadata.namespace"}, `index "namespace" is built in`},
		{[]string{"pods", "--by", "x=y"}, `unknown index "x": known indexes are namespace`},
		{[]string{"pods", "--columns", "=x"}, `--columns "=x": want NAME=CEL`},
		{[]string{"pods", "--group-by", "object.kind", "-o", "json"}, "--count prints numbers: -o json cannot be used with it"},
		{[]string{"pods", "--count", "--show-labels"}, "--show-labels and -L cannot be combined with --count"},
		{[]string{"pods", "--group-by", "object.kind", "-L", "app"}, "--show-labels and -L cannot be combined with --count, --group-by or --aggregate"},
		{[]string{"pods", "--sort-by", "metadata.creationTimestamp"}, "did you mean object.metadata.creationTimestamp?"},
		{[]string{"pods", "--where", `status.phase == "Running"`}, "did you mean object.status.phase?"},
		{[]string{"pods", "--where", `object.status.phase = "Running"`}, "did you mean ==?"},
		{[]string{"pods", "pod/a"}, "there is no need to specify a resource type as a separate argument"},
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

// TestEmptyAndInvalidInput checks that empty values and selectors that do
// not parse are usage errors (exit code 2) that name the flag, found
// before any contact with the cluster.
func TestEmptyAndInvalidInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"query", ""}, `resource argument "" names no resource type: name one, such as pods`},
		{[]string{"query", ","}, `resource argument "," names no resource type`},
		{[]string{"query", "pods", "-l", "!!!"}, `-l/--selector "!!!": `},
		{[]string{"query", "pods", "--field-selector", "a"}, `--field-selector "a": `},
		{[]string{"query", "pods", "--where", ""}, "--where is empty: give it a CEL expression, or leave the flag out"},
		{[]string{"query", "pods", "--sort-by", ""}, "--sort-by is empty"},
		{[]string{"query", "pods", "--count", "--group-by", ""}, "--group-by is empty"},
		{[]string{"query", "pods", "--where", " "}, "--where is empty"},
		{[]string{"query", "pods", "--index", ":byNode=object.spec.nodeName"}, `--index ":byNode=object.spec.nodeName": want [RESOURCE:]NAME=CEL`},
		{[]string{"query", "pods", "--index", "pods:=object.spec.nodeName"}, `want [RESOURCE:]NAME=CEL`},
		{[]string{"query", "pods", "--index", "byNode=object.spec.nodeName", "--index", "pods:byNode=object.spec.nodeName"},
			`index "byNode" is defined both for every resource (--index byNode=…) and for pods (--index pods:byNode=…): keep one`},
		{[]string{"watch", "pods", "--where", ""}, "--where is empty"},
		{[]string{"watch", "", "-l", "!!!"}, `resource argument "" names no resource type`},
		{[]string{"serve", "pods", "-l", "!!!"}, `-l/--selector "!!!": `},
		{[]string{"serve", "pods", "--memory-headroom", "lots"}, `--memory-headroom "lots": want a size such as 100Mi or 1Gi, or 0`},
		{[]string{"serve", "pods", "--memory-headroom", "-1Mi"}, `--memory-headroom "-1Mi"`},
		{[]string{"serve", "pods", "--idle-timeout", "0s"}, `--idle-timeout must be positive, got 0s`},
		{[]string{"serve", "pods", "--write-timeout", "-1s"}, `--write-timeout must be positive, got -1s`},
		{[]string{"serve", "pods", "--authorization-deny-cache-ttl", "0s"}, `--authorization-deny-cache-ttl must be positive`},
		{[]string{"serve", "pods", "--authorization-qps", "-1"}, `--authorization-qps must not be negative, got -1: 0 sends reviews without a limit`},
		{[]string{"indexes", "", "--field-selector", "a"}, `resource argument "" names no resource type`},
	}
	for _, tt := range tests {
		args := append([]string{tt.args[0], "--kubeconfig", "/nonexistent/kubeconfig", "-A"}, tt.args[1:]...)
		code, _, errOut := run(args...)
		if code != ExitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

func TestParseIndexFlags(t *testing.T) {
	every, byRes, errs := parseIndexFlags([]string{
		"byNode=object.spec.nodeName",
		"pods:byPhase=object.status.phase",
		" deploy : byApp = object.metadata.labels.app",
		"pods:byIP=object.status.?podIP.orValue(\"\")",
	})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(every) != 1 || every[0].Name != "byNode" || every[0].Expr != "object.spec.nodeName" {
		t.Errorf("indexes of every resource: %+v", every)
	}
	if len(byRes) != 2 || len(byRes["pods"]) != 2 || byRes["pods"][0].Name != "byPhase" || byRes["pods"][1].Name != "byIP" ||
		len(byRes["deploy"]) != 1 || byRes["deploy"][0].Name != "byApp" || byRes["deploy"][0].Expr != "object.metadata.labels.app" {
		t.Errorf("indexes by resource: %+v", byRes)
	}
}

// TestQueryAllNamespacesWinsOverNamespace checks that -A with -n is
// accepted, as kubectl get accepts it: the query fails only for want of
// a cluster, not with a usage error.
func TestQueryAllNamespacesWinsOverNamespace(t *testing.T) {
	code, _, errOut := run("query", "--kubeconfig", "/nonexistent/kubeconfig", "-A", "-n", "x", "pods", "--sync-timeout", "1s")
	if code == ExitUsage || strings.Contains(errOut, "cannot be used together") {
		t.Errorf("exit %d, stderr %q; want -A with -n accepted", code, errOut)
	}
}
