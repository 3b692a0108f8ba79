package indexers_test

import (
	"context"
	"testing"

	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

func TestQuantityValues(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}
	for expr, want := range map[string]int64{
		`quantity("1.5Gi").value()`:      1610612736,
		`quantity("100m").value()`:       1,
		`quantity("100m").milliValue()`:  100,
		`quantity("2").milliValue()`:     2000,
		`quantity("1500u").milliValue()`: 2, // rounded up, as resource.Quantity does
		`quantity("128974848").value()`:  128974848,
		`quantity("129e6").value()`:      129000000,
		`quantity("-1").value()`:         -1,
	} {
		p, err := env.Compile(expr, indexers.KindValue, "test")
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		v, err := p.Eval(context.Background(), obj)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if v != types.Int(want) {
			t.Errorf("%s = %v, want %d", expr, v, want)
		}
	}
	if _, err := env.Compile(`"1".value()`, indexers.KindValue, "test"); err == nil {
		t.Error("value() of a string compiles")
	}
}
