package indexers

import (
	"context"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/traits"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestFastMatchesInterpreter evaluates expressions of the forms fastExpr
// handles, and some it must not handle, against typed and unstructured
// objects, with and without each: wherever the fast path answers, its
// answer is the interpreter's, value and type; where the interpreter
// fails, the fast path does not answer.
func TestFastMatchesInterpreter(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	ptrue := true
	full := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", UID: "u-1", Labels: map[string]string{"app": "web", "tier": ""},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-1", Controller: &ptrue}}},
		Spec: corev1.PodSpec{NodeName: "node-1", HostNetwork: true, Priority: new(int32),
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: new(int64), SELinuxOptions: &corev1.SELinuxOptions{User: "u"}},
			Containers:      []corev1.Container{{Name: "app", Image: "nginx"}, {Name: "side", Image: "envoy"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.1",
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 3}, {Name: "side"}}},
	}
	empty := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "bare"}}
	var objects []any
	for _, p := range []*corev1.Pod{full, empty} {
		objects = append(objects, p)
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, &unstructured.Unstructured{Object: m})
	}
	withEach := []string{
		`each`, `each.name`, `each.?restartCount.orValue(0)`, `each.?image.orValue("none")`, `each.restartCount`,
		`object.status.phase == each`, `each == "Running"`, `each.name == object.spec.nodeName`,
		`each.?restartCount.orValue(0) > 2`, `each != "Running" && object.spec.hostNetwork`, `each in ["Running", "app"]`,
		`object.metadata.namespace`, `string(each.?restartCount.orValue(0))`,
		`has(each.restartCount)`, `has(each.name) && has(each.restartCount)`, `each.name == "app" ? optional.of(1) : optional.none()`,
		`has(each.restartCount) ? optional.of(each.restartCount + 1) : optional.none()`,
		`each.?restartCount.orValue(0) > 2 ? optional.none() : optional.of("low")`,
	}
	plain := []string{
		`object.metadata.namespace`, `object.metadata.name`, `object.metadata.uid`, `object.metadata.labels`,
		`object.metadata.labels.app`, `object.metadata.labels.tier`, `object.metadata.labels.missing`,
		`object.spec.nodeName`, `object.status.?hostIP.orValue("")`, `object.status.?podIP.orValue("")`,
		`object.spec.?priorityClassName.orValue("")`, `object.spec.?priority.orValue(-1)`, `object.spec.priority`,
		`string(object.spec.?hostNetwork.orValue(false))`, `string(object.spec.hostNetwork)`, `string(object.metadata.name)`,
		`string(object.spec.containers)`, `object.status.?containerStatuses.orValue([])`, `object.spec.containers`,
		`object.status.phase == "Running"`, `object.status.phase == "Pending"`, `"Running" == object.status.phase`,
		`object.spec.?nodeName.orValue("") == ""`, `object.metadata.?labels.?app.orValue("none")`,
		`object.metadata.?annotations.?x.orValue(null)`, `object.spec.hostNetwork == true`, `object.spec.priority == 0`,
		`object.spec.priority == 0.0`, `object.metadata.name.size()`, `object.metadata.?ownerReferences.orValue([])[0].kind`,
		`object.kind`, `object.apiVersion`, `object`, `object.status`, `object.metadata.labels == {"app": "web", "tier": ""}`,
		`object.status.phase != "Running"`, `object.metadata.namespace < "t"`, `object.metadata.namespace <= "shop"`,
		`object.metadata.name > "a"`, `object.metadata.name >= "web-0"`, `object.spec.priority < 1`, `object.spec.priority > 0u`,
		`object.spec.priority >= 0.0`, `object.spec.hostNetwork > false`, `object.metadata.name < object.spec.nodeName`,
		`object.status.phase == "Running" && object.metadata.namespace < "ns-5"`, `object.spec.hostNetwork || object.spec.nodeName == "x"`,
		`object.spec.nodeName == "x" || object.spec.hostNetwork`, `object.spec.priority == 1 && object.spec.nodeName.size() > 0`,
		`!object.spec.hostNetwork`, `!(object.status.phase == "Running")`, `object.status.phase in ["Running", "Pending"]`,
		`object.spec.priority in [0, 1]`, `object.metadata.name in []`, `object.spec.?nodeName.orValue("") in ["node-1"]`,
		`object.status.?phase.orValue("") == "" ? [] : ["Pending", "Succeeded", "Failed", "Unknown", "Running"]`,
		`object.spec.hostNetwork ? object.metadata.name : "none"`, `object.spec.hostNetwork ? 1 : 2`,
		`object.metadata.creationTimestamp < timestamp("2030-01-01T00:00:00Z")`,
		`object.spec.securityContext.runAsUser`, `object.spec.?securityContext.?runAsUser.orValue(-1)`,
		`object.spec.securityContext.seLinuxOptions.user`, `object.spec.?securityContext.?seLinuxOptions.?user.orValue("")`,
		`object.spec.securityContext.seLinuxOptions`, `object.spec.?securityContext.?runAsGroup.orValue(-1)`,
		`object.metadata.creationTimestamp`, `object.status.?startTime.orValue("")`, `object.metadata.?labels.?app.orValue("")`,
		`object.spec.containers`, `object.spec.?containers.orValue([])`, `object.status.?conditions.orValue([])`,
		`has(object.spec.nodeName)`, `has(object.status.hostIP)`, `has(object.spec.securityContext)`, `has(object.status.podIP)`,
		`has(object.spec.securityContext.seLinuxOptions)`, `has(object.metadata.labels.app)`, `has(object.metadata.labels.missing)`,
		`has(object.metadata.labels)`, `has(object.spec.hostNetwork)`, `has(object.spec.priority)`,
		`object.spec.hostNetwork ? [object.metadata.name] : []`,
		`has(object.spec.securityContext) && has(object.spec.securityContext.runAsUser) ? optional.of(object.spec.securityContext.runAsUser) : optional.none()`,
	}
	// Conditionals with a side left to the interpreter, which they fall
	// back to whenever that side is chosen: not counted in the share the
	// fast path answers.
	partial := map[string]bool{
		`has(each.restartCount) ? optional.of(each.restartCount + 1) : optional.none()`:                                                                         true,
		`object.spec.hostNetwork ? [object.metadata.name] : []`:                                                                                                 true,
		`has(object.spec.securityContext) && has(object.spec.securityContext.runAsUser) ? optional.of(object.spec.securityContext.runAsUser) : optional.none()`: true,
	}
	fastForms, answered, evaluations := 0, 0, 0
	for _, tc := range []struct {
		exprs   []string
		each    bool
		element func(obj any) []any
	}{
		{exprs: plain},
		{exprs: withEach, each: true, element: func(obj any) []any {
			return []any{nil, "Running", int64(3), map[string]any{"name": "app", "restartCount": int64(2)}, types.String("x"),
				firstStatus(t, env, obj)}
		}},
	} {
		for _, expr := range tc.exprs {
			var p *Program
			if tc.each {
				p, err = env.CompileEach(expr, KindValue, "test")
			} else {
				p, err = env.Compile(expr, KindValue, "test")
			}
			if err != nil {
				t.Fatalf("%s: %v", expr, err)
			}
			if p.fast == nil {
				continue
			}
			fastForms++
			for _, obj := range objects {
				elements := []any{nil}
				if tc.each {
					elements = tc.element(obj)
				}
				for _, each := range elements {
					object, _, _ := p.objectValue(obj)
					want, wantErr := p.evalVars(context.Background(), &activation{object: object, each: each, hasEach: tc.each})
					got, ok := p.fast.eval(object, each)
					if !partial[expr] {
						evaluations++
						if ok {
							answered++
						}
					}
					switch {
					case wantErr != nil && ok:
						t.Errorf("%s on %T, each %v: fast answered %v, the interpreter failed: %v", expr, obj, each, got, wantErr)
					case wantErr == nil && ok && (got.Type() != want.Type() || got.Equal(want) != types.True):
						t.Errorf("%s on %T, each %v: fast answered %v (%s), the interpreter %v (%s)", expr, obj, each, got, got.Type().TypeName(), want, want.Type().TypeName())
					}
				}
			}
		}
	}
	if fastForms < 30 {
		t.Errorf("only %d expressions take the fast path", fastForms)
	}
	// The objects lack many of the fields read, but most evaluations
	// succeed, and those must not fall back to the interpreter.
	if answered*2 < evaluations {
		t.Errorf("the fast path answered %d of %d evaluations", answered, evaluations)
	}
	t.Logf("%d expressions take the fast path; it answered %d of %d evaluations", fastForms, answered, evaluations)
	for _, expr := range []string{`object.metadata.name.size()`, `object.spec.containers[0].name`, `has(object.spec.containers[0].name)`, `object.spec.containers.exists(c, c.name == "app")`,
		`object.spec.priority == 1 && object.spec.nodeName.size() > 0`, `object.metadata.name in [object.spec.nodeName]`, `object.spec.hostNetwork ? [object.metadata.name] : [object.spec.nodeName]`} {
		p, err := env.Compile(expr, KindValue, "test")
		if err != nil {
			t.Fatal(err)
		}
		if p.fast != nil {
			t.Errorf("%s takes the fast path", expr)
		}
	}
}

// firstStatus returns the first container status of obj as a program
// sees it (nil when there is none).
func firstStatus(t *testing.T, env *Env, obj any) any {
	t.Helper()
	p, err := env.Compile(`object.status.?containerStatuses.orValue([])`, KindValue, "test")
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Eval(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	l := v.(traits.Lister)
	if l.Size() == types.Int(0) {
		return nil
	}
	first := l.Get(types.Int(0))
	return first
}
