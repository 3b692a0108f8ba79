package indexers_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

func TestIPFamilyFunction(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}
	for addr, want := range map[string]string{
		"10.0.0.1":                "4",
		"::ffff:10.0.0.1":         "4",
		"::FFFF:a00:1":            "4",
		"0:0:0:0:0:ffff:10.0.0.1": "4",
		"fd00::1":                 "6",
		"::1":                     "6",
		"fe80::1%eth0":            "6",
		"::10.0.0.1":              "6",
		"64:ff9b::10.0.0.1":       "6",
		"10.0.0.300":              "",
		"010.0.0.1":               "",
		"fe80::1%":                "",
		"":                        "",
		"not an address":          "",
	} {
		expr := "ipFamily(" + strconv.Quote(addr) + ")"
		p, err := env.Compile(expr, indexers.KindValue, "test")
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		v, err := p.Eval(context.Background(), obj)
		if err != nil || v != types.String(want) {
			t.Errorf("%s = %v, %v; want %q", expr, v, err, want)
		}
	}
}
