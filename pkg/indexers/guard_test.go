package indexers_test

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// deploymentSchema is a part of the schema of apps/v1 Deployment: its
// status has no phase, its spec no nodeName.
func deploymentSchema() *spec.Schema {
	s := object(map[string]spec.Schema{
		"apiVersion": str(),
		"kind":       str(),
		"metadata":   object(map[string]spec.Schema{"name": str(), "generateName": str(), "namespace": str()}),
		"spec":       object(map[string]spec.Schema{"replicas": *spec.Int32Property()}),
		"status":     object(map[string]spec.Schema{"replicas": *spec.Int32Property(), "readyReplicas": *spec.Int32Property()}),
	})
	s.AddExtension("x-kubernetes-group-version-kind", []any{map[string]any{"group": "apps", "version": "v1", "kind": "Deployment"}})
	return &s
}

func deployment(name string, ready int64) *unstructured.Unstructured {
	return obj(map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
		"spec":       map[string]any{"replicas": int64(2)},
		"status":     map[string]any{"replicas": int64(2), "readyReplicas": ready},
	})
}

// TestCompileWithSchemasGuarded checks expressions written for pods and
// deployments together against each schema, the other being known: what
// object.kind rules out and the optional forms of a field of the other
// type are accepted, and evaluate on each kind as without a schema.
func TestCompileWithSchemasGuarded(t *testing.T) {
	env := newEnv(t)
	pods, deploys := podSchema(), deploymentSchema()
	running, pending, ready := pod("default", "a", "n1", "Running"), pod("default", "b", "", "Pending"), deployment("d", 2)
	tests := []struct {
		expr                 string
		running, pending, dp any
	}{
		{`object.kind == "Pod" ? object.status.phase == "Running" : true`, true, false, true},
		{`object.kind != "Pod" ? object.status.readyReplicas > 0 : object.status.phase == "Running"`, true, false, true},
		{`object.kind == "Deployment" || object.status.phase == "Running"`, true, false, true},
		{`object.kind == "Pod" && object.status.phase == "Running"`, true, false, false},
		{`!(object.kind in ["Pod"]) || object.status.phase == "Running"`, true, false, true},
		{`object.status.?phase.orValue("") == "Running"`, true, false, false},
		{`has(object.status.phase)`, true, true, false},
		{`object.?spec.?nodeName.orValue("")`, "n1", "", ""},
		{`has(object.status.readyReplicas) ? object.status.readyReplicas : 0`, int64(0), int64(0), int64(2)},
	}
	for _, tt := range tests {
		progs := map[string]*indexers.Program{}
		for name, s := range map[string][2]*spec.Schema{"pods": {pods, deploys}, "deployments": {deploys, pods}} {
			p, err := env.CompileWithSchema(tt.expr, indexers.KindValue, "--where", s[0], s[1])
			if err != nil {
				t.Errorf("for %s: CompileWithSchema(%q): %v", name, tt.expr, err)
				continue
			}
			progs[name] = p
		}
		if len(progs) < 2 {
			continue
		}
		for _, c := range []struct {
			prog string
			o    *unstructured.Unstructured
			want any
		}{{"pods", running, tt.running}, {"pods", pending, tt.pending}, {"deployments", ready, tt.dp}} {
			got, err := progs[c.prog].Value(c.o)
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Errorf("%q on %s %s = %#v, %v; want %#v", tt.expr, c.prog, c.o.GetName(), got, err, c.want)
			}
		}
	}
}

// TestCompileWithSchemasRefused checks that guards do not hide typos nor
// fields read where they do not exist.
func TestCompileWithSchemasRefused(t *testing.T) {
	env := newEnv(t)
	pods, deploys := podSchema(), deploymentSchema()
	tests := []struct {
		expr   string
		schema *spec.Schema
		others []*spec.Schema
		want   string
	}{
		// Not guarded: deployments have no status.phase.
		{`object.status.phase == "Running"`, deploys, []*spec.Schema{pods}, "undefined field 'phase'"},
		// A typo on pods alone, plain or optional, with its suggestion.
		{`object.status.phse == "Running"`, pods, nil, `undefined field 'phse' (did you mean "phase"?)`},
		{`object.status.?phse.orValue("") == "Running"`, pods, nil, `undefined field 'phse' (did you mean "phase"?)`},
		{`has(object.status.phse)`, pods, nil, `undefined field 'phse' (did you mean "phase"?)`},
		// A field of no queried type is a typo, optional or not.
		{`object.status.?phse.orValue("") == "Running"`, deploys, []*spec.Schema{pods}, "undefined field 'phse'"},
		{`has(object.status.phse)`, pods, []*spec.Schema{deploys}, `undefined field 'phse' (did you mean "phase"?)`},
		// The branch object.kind leaves reachable is checked.
		{`object.kind == "Pod" ? object.status.phse == "Running" : true`, pods, []*spec.Schema{deploys}, `undefined field 'phse' (did you mean "phase"?)`},
		{`object.kind == "Pod" && object.status.phse == "Running"`, pods, []*spec.Schema{deploys}, `undefined field 'phse' (did you mean "phase"?)`},
		// Only the optional forms of a field another type has: a plain
		// select below one is not.
		{`has(object.status.phase.size)`, deploys, []*spec.Schema{pods}, "undefined field 'phase'"},
		// The output type of what is checked still counts.
		{`object.kind == "Pod" && object.status.phase`, pods, []*spec.Schema{deploys}, "expected type 'bool' but found 'string'"},
	}
	for _, tt := range tests {
		_, err := env.CompileWithSchema(tt.expr, indexers.KindPredicate, "--where", tt.schema, tt.others...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CompileWithSchema(%q) error %v, want one containing %q", tt.expr, err, tt.want)
		}
	}
}

// TestFieldCaret checks that the caret points at a misspelled field in
// the optional forms too, not at the "?" or the parenthesis of has().
func TestFieldCaret(t *testing.T) {
	env := newEnv(t)
	for _, tt := range []struct{ expr, want string }{
		{`object.status.?phse.orValue("") == ""`, `invalid --where expression: undefined field 'phse' (did you mean "phase"?)
 | object.status.?phse.orValue("") == ""
 |                ^`},
		{`object.spec.containers.exists(c, has(c.imag))`, `invalid --where expression: undefined field 'imag' (did you mean "image"?)
 | object.spec.containers.exists(c, has(c.imag))
 |                                        ^`},
	} {
		_, err := env.CompileWithSchema(tt.expr, indexers.KindPredicate, "--where", podSchema())
		if err == nil || err.Error() != tt.want {
			t.Errorf("CompileWithSchema(%q) error:\n%v\nwant:\n%s", tt.expr, err, tt.want)
		}
	}
}
