package indexers_test

import (
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// TestCompileHintsForKubectlHabits checks that expressions written as
// kubectl's JSONPath, field selectors or shell tests are would be get a
// hint naming the CEL form.
func TestCompileHintsForKubectlHabits(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		name string
		expr string
		kind indexers.Kind
		hint string
	}{
		{name: "JSONPath sort key", expr: ".metadata.creationTimestamp", kind: indexers.KindValue,
			hint: "(did you mean object.metadata.creationTimestamp? expressions are CEL, not JSONPath)"},
		{name: "JSONPath in braces", expr: "{.status.phase}", kind: indexers.KindValue,
			hint: "(did you mean object.status.phase? expressions are CEL, not JSONPath)"},
		{name: "field without object", expr: `status.phase == "Running"`, kind: indexers.KindPredicate,
			hint: "undeclared reference to 'status' (did you mean object.status.phase? fields are read from the variable object)"},
		{name: "field without object, later on", expr: `object.kind == "Pod" && spec.nodeName == "n1"`, kind: indexers.KindPredicate,
			hint: "undeclared reference to 'spec' (did you mean object.spec.nodeName? fields are read from the variable object)"},
		{name: "single equals", expr: `object.status.phase = "Running"`, kind: indexers.KindPredicate,
			hint: "(did you mean ==? = does not compare in CEL)"},
		{name: "single equals after a comparison", expr: `object.spec.replicas >= 1 && object.kind = "Deployment"`, kind: indexers.KindPredicate,
			hint: "(did you mean ==? = does not compare in CEL)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := env.Compile(tt.expr, tt.kind, "--where")
			if err == nil {
				t.Fatalf("%q compiled", tt.expr)
			}
			if first, _, _ := strings.Cut(err.Error(), "\n"); !strings.Contains(first, tt.hint) {
				t.Errorf("error\n%v\nwant its first line to contain %q", err, tt.hint)
			}
		})
	}
	// A misspelling close to a name is still suggested as one; == and a
	// = inside a string get no hint.
	for expr, want := range map[string]string{
		`obect.status.phase == "x"`:          `(did you mean "object"?)`,
		`object.metadata.name == "a=b" && x`: "undeclared reference to 'x'",
	} {
		_, err := env.Compile(expr, indexers.KindPredicate, "--where")
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "==?") || strings.Contains(err.Error(), "JSONPath") {
			t.Errorf("%q: error %v, want %q and no other hint", expr, err, want)
		}
	}
}
