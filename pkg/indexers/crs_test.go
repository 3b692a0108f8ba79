package indexers

import (
	"context"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/go-cmp/cmp"
)

// TestCRSPath: paths resolve as kube-state-metrics resolves them.
func TestCRSPath(t *testing.T) {
	obj := map[string]any{
		"status": map[string]any{
			"conditions": []any{
				map[string]any{"type": "Ready", "status": "True", "n": int64(3), "ok": true},
				map[string]any{"type": "Synced", "status": "False", "n": 4.0, "ok": false},
			},
			"phase": "Running",
		},
		"spec": map[string]any{"refs": []any{"a", "b", "c"}},
	}
	for _, c := range []struct {
		path []string
		want any
	}{
		{[]string{"status", "phase"}, "Running"},
		{[]string{"status", "conditions", "[type=Synced]", "status"}, "False"},
		{[]string{"status", "conditions", "[n=4]", "type"}, "Synced"},    // a number
		{[]string{"status", "conditions", "[n=3]", "type"}, "Ready"},     // an integer
		{[]string{"status", "conditions", "[ok=true]", "type"}, "Ready"}, // a bool
		{[]string{"status", "conditions", "[type=Gone]", "status"}, nil},
		{[]string{"status", "conditions", "1", "type"}, "Synced"},
		{[]string{"status", "conditions", "-1", "type"}, "Synced"}, // from the end
		{[]string{"status", "conditions", "2"}, nil},
		{[]string{"status", "conditions", "x"}, nil},
		{[]string{"status", "phase=Running"}, "Running"}, // key=value on a map: the value
		{[]string{"status", "phase", "deeper"}, nil},
		{[]string{"spec", "refs", "0"}, "a"},
		{nil, obj},
	} {
		p, err := crsCompilePath(c.path)
		if err != nil {
			t.Fatalf("%v: %v", c.path, err)
		}
		if diff := cmp.Diff(c.want, p.get(obj)); diff != "" {
			t.Errorf("%v: (-want +got)\n%s", c.path, diff)
		}
		// The same path walked on the value as CEL sees it.
		got, err := p.resolve(types.DefaultTypeAdapter.NativeToValue(obj))
		if err != nil {
			t.Fatalf("%v: resolve: %v", c.path, err)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%v: resolve (-want +got)\n%s", c.path, diff)
		}
	}
	if _, err := crsCompilePath([]string{"[type]"}); err == nil {
		t.Error("[type]: no error, want an invalid list lookup")
	}
}

// TestCRSFloat: values convert as kube-state-metrics converts them.
func TestCRSFloat(t *testing.T) {
	for _, c := range []struct {
		in   any
		want float64
	}{
		{int64(3), 3}, {2.5, 2.5}, {true, 1}, {false, 0},
		{"True", 1}, {"yes", 1}, {"NO", 0}, {"Unknown", 0},
		{"2019-10-22T16:29:31Z", 1571761771},
		{"250m", 0.25}, {"1Gi", 1 << 30},
		{"50%", 0.5},
		{"1e3", 1000},
	} {
		got, err := crsFloat(c.in, false)
		if err != nil || got != c.want {
			t.Errorf("crsFloat(%v) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []any{nil, "abc", map[string]any{}} {
		if _, err := crsFloat(in, false); err == nil {
			t.Errorf("crsFloat(%v): no error", in)
		}
	}
	if got, err := crsFloat(nil, true); err != nil || got != 0 {
		t.Errorf("crsFloat(nil, nilIsZero) = %v, %v; want 0", got, err)
	}
}

// TestCRSConstantSpecIsBoundOnce: the specification of a crs.* call is
// compiled once per program when it is a constant, as in the configs
// translated from kube-state-metrics', not at every evaluation; the
// answers are those of a call bound at every evaluation.
func TestCRSConstantSpecIsBoundOnce(t *testing.T) {
	binds := 0
	bind := crsBinders[crsGaugeOverload]
	crsBinders[crsGaugeOverload] = func(spec ref.Val) func(ref.Val) ref.Val {
		binds++
		return bind(spec)
	}
	t.Cleanup(func() { crsBinders[crsGaugeOverload] = bind })
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	// As the translated configs write it (pkg/exporter/crs: settings).
	const gauge = `crs.gauge(object.status, {"valueFrom": dyn(["replicas"]), "nilIsZero": dyn(false), "labelFromKey": dyn(""), "labelsFromPath": dyn({})})`
	constant, err := env.Compile(gauge+`.map(s, crs.value(s))`, KindValue, "value")
	if err != nil {
		t.Fatal(err)
	}
	// The same specification, built at every evaluation.
	variable, err := env.Compile(`[["replicas"]].map(p, crs.gauge(object.status, {"valueFrom": dyn(p), "nilIsZero": dyn(false), "labelFromKey": dyn(""), "labelsFromPath": dyn({})})).flatten().map(s, crs.value(s))`, KindValue, "value")
	if err != nil {
		t.Fatal(err)
	}
	afterCompile := binds
	for i := range 5 {
		obj := map[string]any{"status": map[string]any{"replicas": int64(i)}}
		c, err := constant.Eval(context.Background(), obj)
		if err != nil {
			t.Fatal(err)
		}
		v, err := variable.Eval(context.Background(), obj)
		if err != nil {
			t.Fatal(err)
		}
		if c.Equal(v) != types.True || c.Equal(types.DefaultTypeAdapter.NativeToValue([]float64{float64(i)})) != types.True {
			t.Errorf("replicas %d: bound once %v, bound per evaluation %v", i, c, v)
		}
	}
	// One bind per evaluation of the variable specification, none for the
	// constant one beyond its planning.
	if afterCompile < 1 || binds-afterCompile != 5 {
		t.Errorf("binds: %d when compiled, %d more over 5 evaluations of each; want at least 1, then 5 (the variable one's)", afterCompile, binds-afterCompile)
	}
}
