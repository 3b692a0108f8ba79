package indexers_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// FuzzExpression compiles arbitrary expressions and evaluates those that
// compile against a typed pod and the same pod as JSON: compiling either
// succeeds or fails with an *ExprError (the message and caret the user
// sees), evaluating either yields a value or an error, the two forms of
// the object give the same outcome, and nothing panics or runs on.
func FuzzExpression(f *testing.F) {
	for _, seed := range []string{
		`object.status.phase == "Running"`, `object.metadata.?labels.?app.orValue("")`, `object.spec.containers.map(c, c.image)`,
		`object.spec.containers.all(c, object.spec.containers.all(d, d.name != "" || c.name != ""))`,
		`size(object.metadata.name) > 3 ? object.metadata.name.substring(0, 3) : ""`, `int("x")`, `1/0`, `[1,2,3].map(x, x * x)`,
		`object.metadata.name.matches("(a+)+$")`, `has(object.spec.nodeName)`, `string(object.spec)`, `object`, `{`, `"`, ``,
		`object.spec.containers.exists(c, c.resources.?limits.?memory.orValue("0") == "1Gi")`, `quantity("1Gi").isGreaterThan(quantity("1Mi"))`,
	} {
		f.Add(seed)
	}
	env, err := indexers.NewEnv()
	if err != nil {
		f.Fatal(err)
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx"}, {Name: "side", Image: "envoy"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	data, err := json.Marshal(pod)
	if err != nil {
		f.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		f.Fatal(err)
	}
	asJSON := &unstructured.Unstructured{Object: m}
	f.Fuzz(func(t *testing.T, expr string) {
		p, err := env.Compile(expr, indexers.KindValue, "--columns x")
		if err != nil {
			var ee *indexers.ExprError
			if !errors.As(err, &ee) && !strings.Contains(err.Error(), "cost") {
				t.Fatalf("%q: compile error %T %v is not an *ExprError", expr, err, err)
			}
			return
		}
		// The cost limit ends any evaluation within a second or so; the
		// deadline only catches one that hangs, however busy the machine.
		const hang = 2 * time.Minute
		ctx, cancel := context.WithTimeout(context.Background(), hang)
		defer cancel()
		_, errTyped := p.Eval(ctx, pod)
		_, errJSON := p.Eval(ctx, asJSON)
		if errors.Is(errTyped, context.DeadlineExceeded) || errors.Is(errJSON, context.DeadlineExceeded) {
			t.Fatalf("%q: evaluating did not end within %s", expr, hang)
		}
		if (errTyped == nil) != (errJSON == nil) {
			t.Fatalf("%q: typed pod: %v; JSON pod: %v", expr, errTyped, errJSON)
		}
	})
}
