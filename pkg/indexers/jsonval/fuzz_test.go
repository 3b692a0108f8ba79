package jsonval_test

import (
	"encoding/json"
	"testing"

	"github.com/google/cel-go/common/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// FuzzPodView decodes arbitrary JSON into a Pod and evaluates expressions
// against the typed Pod (read through the lazy view) and against its JSON
// form: both must give the same value, or both fail; nothing panics.
func FuzzPodView(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"a","labels":{"x":"y"}},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"memory":"1Gi"}}}]}}`,
		`{"status":{"phase":"Running","containerStatuses":[{"name":"c","restartCount":3,"state":{"running":{"startedAt":"2025-01-01T00:00:00Z"}}}]}}`,
		`{"spec":{"nodeName":"","hostNetwork":false,"priority":0,"overhead":{"cpu":"100m"},"containers":[{"ports":[{"containerPort":80,"protocol":"TCP"}]}]}}`,
		`{"metadata":{"creationTimestamp":null,"annotations":{}},"spec":{"containers":null}}`, `{}`, `null`, `[]`,
	} {
		f.Add([]byte(seed))
	}
	env, err := indexers.NewEnv()
	if err != nil {
		f.Fatal(err)
	}
	var programs []*indexers.Program
	for _, expr := range []string{
		`object`, `object.metadata`, `object.spec`, `object.status`,
		`object.metadata.?labels.orValue({})`, `object.spec.?containers.orValue([]).map(c, c.?image.orValue(""))`,
		`object.spec.?containers.orValue([]).map(c, c.?resources.?limits.orValue({}))`,
		`object.status.?containerStatuses.orValue([]).map(s, s.?restartCount.orValue(-1))`,
		`has(object.spec.nodeName)`, `has(object.metadata.creationTimestamp)`, `object.spec.?priority.orValue(-1)`,
		`size(object.metadata.?annotations.orValue({}))`, `object.?spec.?overhead.orValue({})`,
	} {
		p, err := env.Compile(expr, indexers.KindValue, "test")
		if err != nil {
			f.Fatal(err)
		}
		programs = append(programs, p)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var pod corev1.Pod
		if json.Unmarshal(data, &pod) != nil {
			return
		}
		// The JSON form of the decoded Pod, as the API server would send it.
		out, err := json.Marshal(&pod)
		if err != nil {
			return
		}
		var m map[string]any
		if err := utiljson.Unmarshal(out, &m); err != nil { // integers as int64, as client-go decodes them
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		for _, p := range programs {
			typed, errTyped := p.Value(&pod)
			plain, errPlain := p.Value(u)
			if (errTyped == nil) != (errPlain == nil) {
				t.Fatalf("%s on %s: typed %v (%v), JSON %v (%v)", p.Expr(), out, typed, errTyped, plain, errPlain)
			}
			if errTyped != nil {
				continue
			}
			a, b := types.DefaultTypeAdapter.NativeToValue(typed), types.DefaultTypeAdapter.NativeToValue(plain)
			if a.Equal(b) != types.True {
				t.Fatalf("%s on %s:\ntyped %#v\nJSON  %#v", p.Expr(), out, typed, plain)
			}
		}
	})
}
