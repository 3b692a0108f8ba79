package jsonval

import (
	"testing"

	"github.com/google/cel-go/interpreter"
)

// objectActivation binds the variable object without allocating a map.
type objectActivation struct{ object any }

func (a objectActivation) ResolveName(name string) (any, bool) {
	if name == "object" {
		return a.object, true
	}
	return nil, false
}

func (objectActivation) Parent() interpreter.Activation { return nil }

// benchmarkExpression compares evaluating expr on a typed pod through New
// (the view is built in every iteration, as for each object in a cache) with
// evaluating it on the pod decoded into unstructured maps.
func benchmarkExpression(b *testing.B, expr string, want any) {
	prg := program(b, celEnv(b), expr)
	pod := fullPod()
	plain := unstructuredOf(b, pod)
	for _, bc := range []struct {
		name   string
		object func() any
	}{
		{"view", func() any { return New(pod) }},
		{"unstructured", func() any { return plain }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if got := evaluate(prg, bc.object()); got.Value != want {
				b.Fatalf("%s = %+v, want %v", expr, got, want)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := prg.Eval(objectActivation{bc.object()}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPhase(b *testing.B) {
	benchmarkExpression(b, `object.status.phase == "Pending"`, true)
}

func BenchmarkContainerPorts(b *testing.B) {
	benchmarkExpression(b, `object.spec.containers.exists(c, has(c.ports) && c.ports.exists(p, p.containerPort == 9090))`, true)
}

func BenchmarkLabel(b *testing.B) {
	benchmarkExpression(b, `object.metadata.labels['tier'] == 'frontend'`, true)
}

func BenchmarkRequestsCPU(b *testing.B) {
	benchmarkExpression(b, `object.spec.containers.all(c, c.resources.requests.cpu != '')`, true)
}

func BenchmarkNew(b *testing.B) {
	pod := fullPod()
	b.ReportAllocs()
	for b.Loop() {
		_ = New(pod)
	}
}

// BenchmarkToNative materialises a whole pod; for comparison, the JSON round
// trip of the same pod.
func BenchmarkToNative(b *testing.B) {
	pod := fullPod()
	b.Run("view", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ToNative(New(pod)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json round trip", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = unstructuredOf(b, pod)
		}
	})
}
