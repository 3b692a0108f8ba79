package indexers_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// newEnv returns an environment with the default options.
func newEnv(t testing.TB, opts ...indexers.Option) *indexers.Env {
	t.Helper()
	env, err := indexers.NewEnv(opts...)
	if err != nil {
		t.Fatalf("NewEnv: %v", err)
	}
	return env
}

// compile compiles expr or fails the test.
func compile(t testing.TB, env *indexers.Env, expr string, kind indexers.Kind) *indexers.Program {
	t.Helper()
	p, err := env.Compile(expr, kind, "test")
	if err != nil {
		t.Fatalf("Compile(%q): %v", expr, err)
	}
	return p
}

// obj wraps a JSON object as an unstructured object.
func obj(m map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}

// pod returns a pod as a JSON object; node and phase are left out when "".
func pod(namespace, name, node, phase string) *unstructured.Unstructured {
	spec := map[string]any{
		"containers": []any{
			map[string]any{"name": "app", "image": "registry.example/app:1.2.3",
				"resources": map[string]any{"requests": map[string]any{"memory": "128Mi", "cpu": "250m"}}},
		},
	}
	if node != "" {
		spec["nodeName"] = node
	}
	status := map[string]any{"podIP": "10.1.2.3"}
	if phase != "" {
		status["phase"] = phase
	}
	return obj(map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata": map[string]any{
			"name":              name,
			"namespace":         namespace,
			"labels":            map[string]any{"app": "web", "tier": "frontend"},
			"creationTimestamp": "2024-05-01T10:00:00Z",
		},
		"spec":   spec,
		"status": status,
	})
}
