package indexers

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

func items(n int) *unstructured.Unstructured {
	list := make([]any, n)
	for i := range list {
		list[i] = int64(i)
	}
	return &unstructured.Unstructured{Object: map[string]any{"items": list}}
}

// TestSizeBoundedEvaluation: a program whose cost estimate exceeds the limit
// for objects as large as a request, but not for small ones, evaluates a
// small prepared object without tracking its cost, and still stops a large
// one at the limit.
func TestSizeBoundedEvaluation(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	// items² iterations of about 5 cost units.
	p, err := env.Compile(`object.items.all(x, object.items.all(y, x + y >= 0))`, KindPredicate, "test")
	if err != nil {
		t.Fatal(err)
	}
	if !p.tracked || !p.hasUntracked || p.plans.untracked == nil || len(p.bounds) == 0 {
		t.Fatalf("tracked %v, untracked %v, bounds %v: want a tracked program with bounds and one without tracking", p.tracked, p.plans.untracked != nil, p.bounds)
	}
	small, large := p.Prepare(items(50)), p.Prepare(items(500))
	_, smallSizes, smallMeasured := p.objectValue(small)
	_, largeSizes, largeMeasured := p.objectValue(large)
	if got := programOf(t, p, &activation{sizes: smallSizes, measured: smallMeasured}); got != p.plans.untracked {
		t.Errorf("a prepared object of %+v (bounds %v) is evaluated with cost tracking", smallSizes, p.bounds)
	}
	if got := programOf(t, p, &activation{sizes: largeSizes, measured: largeMeasured}); got != p.plans.prog {
		t.Errorf("a prepared object of %+v (bounds %v) is evaluated without cost tracking", largeSizes, p.bounds)
	}
	if got := programOf(t, p, &activation{}); got != p.plans.prog {
		t.Error("an object not measured is evaluated without cost tracking")
	}
	if ok, err := p.Match(small); err != nil || !ok {
		t.Errorf("Match(small) = %v, %v; want true", ok, err)
	}
	if _, err := p.Match(large); !errors.Is(err, ErrCostLimitExceeded) {
		t.Errorf("Match(large): error %v, want one wrapping ErrCostLimitExceeded", err)
	}
	// An object not prepared is measured too, by what the program reads
	// of it: a large list it does not read leaves it untracked.
	unread := items(50)
	unread.Object["other"] = items(5000).Object["items"]
	for _, c := range []struct {
		name string
		obj  *unstructured.Unstructured
		want any
	}{{"small", items(50), p.plans.untracked}, {"large", items(500), p.plans.prog}, {"small with a large list not read", unread, p.plans.untracked}} {
		_, sizes, measured := p.objectValue(c.obj)
		if got := programOf(t, p, &activation{sizes: sizes, measured: measured}); got != c.want {
			t.Errorf("%s object, not prepared, measured %+v (%v): tracked %v", c.name, sizes, measured, got == p.plans.prog)
		}
	}
	if ok, err := p.Match(unread); err != nil || !ok {
		t.Errorf("Match(unread) = %v, %v; want true", ok, err)
	}
	if _, err := p.Match(items(500)); !errors.Is(err, ErrCostLimitExceeded) {
		t.Errorf("Match(large, not prepared): error %v, want one wrapping ErrCostLimitExceeded", err)
	}
	// each is measured too: a large one is tracked, wherever it comes from.
	pe, err := env.CompileEach(`each.all(x, each.all(y, x + y >= 0))`, KindPredicate, "test")
	if err != nil {
		t.Fatal(err)
	}
	bigEach := types.DefaultTypeAdapter.NativeToValue(items(500).Object["items"])
	if _, err := pe.EvalEach(t.Context(), pe.Prepare(items(1)), bigEach); !errors.Is(err, ErrCostLimitExceeded) {
		t.Errorf("EvalEach(small object, large each): error %v, want one wrapping ErrCostLimitExceeded", err)
	}
	smallEach := types.DefaultTypeAdapter.NativeToValue(items(10).Object["items"])
	if v, err := pe.EvalEach(t.Context(), pe.Prepare(items(1)), smallEach); err != nil || v != types.True {
		t.Errorf("EvalEach(small object, small each) = %v, %v; want true", v, err)
	}
}

// TestAdoptSizeBounds: the expression checked against a schema, which tells
// lists from strings, bounds the sizes of objects more closely than the
// same expression checked as dyn, whose program adopts its bounds.
func TestAdoptSizeBounds(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	const expr = `object.spec.containers.map(c, object.spec.containers.filter(d, d.name == c.name).map(d, d.image)).flatten()`
	dyn, err := env.Compile(expr, KindValue, "test")
	if err != nil {
		t.Fatal(err)
	}
	typed, err := env.CheckWithSchema(expr, KindValue, "test", false, containersSchema())
	if err != nil {
		t.Fatal(err)
	}
	if len(typed.bounds) == 0 || typed.bounds[len(typed.bounds)-1].Bytes <= largestBytes(dyn.bounds) {
		t.Fatalf("bounds: typed %v, dyn %v; want the typed ones to allow longer strings", typed.bounds, dyn.bounds)
	}
	dyn.AdoptSizeBounds(typed)
	if len(dyn.bounds) != len(typed.bounds) || dyn.bounds[0] != typed.bounds[0] {
		t.Errorf("adopted %v, want %v", dyn.bounds, typed.bounds)
	}
	other, err := env.Compile(`object.spec.containers.map(c, c.name)`, KindValue, "test")
	if err != nil {
		t.Fatal(err)
	}
	before := other.bounds
	other.AdoptSizeBounds(typed)
	if len(other.bounds) != len(before) {
		t.Errorf("adopted the bounds of another expression: %v", other.bounds)
	}
}

func largestBytes(bounds []jsonval.Sizes) int {
	n := 0
	for _, b := range bounds {
		n = max(n, b.Bytes)
	}
	return n
}

// containersSchema is the schema of objects with spec.containers, a list of
// objects with a name and an image.
func containersSchema() *spec.Schema {
	obj := func(props map[string]spec.Schema) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: props}}
	}
	container := obj(map[string]spec.Schema{"name": *spec.StringProperty(), "image": *spec.StringProperty()})
	s := obj(map[string]spec.Schema{
		"apiVersion": *spec.StringProperty(),
		"kind":       *spec.StringProperty(),
		"metadata":   obj(map[string]spec.Schema{"name": *spec.StringProperty()}),
		"spec":       obj(map[string]spec.Schema{"containers": *spec.ArrayProperty(&container)}),
	})
	return &s
}

// TestCheckWithoutObjectIsDynamic: an expression that does not name object
// checks against a schema as without one (the exporter's check leaves it
// out): the same size bounds, with and without each.
// Those that name it, however, say so.
func TestCheckWithoutObjectIsDynamic(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expr              string
		withEach, bounded bool
	}{
		{`each.name`, true, false},
		{`each.restartCount > 0`, true, false},
		{`each.map(x, each.filter(y, y == x).size()).sum()`, true, true},
		{`each.resource == "cpu" ? double(quantity(each.quantity).milliValue()) / 1000.0 : 0.0`, true, false},
		{`[1, 2, 3].map(x, x * 2)`, false, false},
		{`"a".size()`, false, false},
	} {
		compile := env.Compile
		if tc.withEach {
			compile = env.CompileEach
		}
		p, err := compile(tc.expr, KindValue, "test")
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if p.UsesObject() {
			t.Errorf("%s: UsesObject true", tc.expr)
		}
		typed, err := env.CheckWithSchema(tc.expr, KindValue, "test", tc.withEach, containersSchema())
		if err != nil {
			t.Fatalf("%s against the schema: %v", tc.expr, err)
		}
		if !slices.Equal(typed.bounds, p.bounds) {
			t.Errorf("%s: bounds %v against the schema, %v without", tc.expr, typed.bounds, p.bounds)
		}
		if tc.bounded != (len(p.bounds) > 0) {
			t.Errorf("%s: bounds %v, want some: %v", tc.expr, p.bounds, tc.bounded)
		}
	}
	for _, expr := range []string{`object.metadata.name`, `has(object.spec)`, `object.?spec.orValue({})`,
		`[1].map(x, object.metadata.name)`, `object`} {
		p, err := env.Compile(expr, KindValue, "test")
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if !p.UsesObject() {
			t.Errorf("%s: UsesObject false", expr)
		}
	}
}

// interpreterUnused is a cel.Program that fails the test when it is run.
type interpreterUnused struct {
	cel.Program
	t *testing.T
}

func (i interpreterUnused) Eval(any) (ref.Val, *cel.EvalDetails, error) {
	i.t.Error("the interpreter evaluated")
	return nil, nil, errors.New("unused")
}

func (i interpreterUnused) ContextEval(context.Context, any) (ref.Val, *cel.EvalDetails, error) {
	return i.Eval(nil)
}

// TestContextBudgetTakesTheFastPath checks that a program charged to a
// budget that only stops with its context evaluates an object within its
// cost bounds, not prepared, without the interpreter; and one beyond them,
// counted budgets, and limits above the default or none, with it.
func TestContextBudgetTakesTheFastPath(t *testing.T) {
	env, err := NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	p, err := env.Compile(`object.items.all(x, object.items.all(y, x + y >= 0))`, KindPredicate, "test")
	if err != nil {
		t.Fatal(err)
	}
	if p.fast == nil || p.fastSlots == 0 || !p.tracked {
		t.Fatalf("fast %v, slots %d, tracked %v: want a tracked comprehension with a fast path", p.fast != nil, p.fastSlots, p.tracked)
	}
	ctx, cancel := context.WithCancel(t.Context())
	fast := p.WithBudget(NewContextBudget(ctx))
	fast.plans = &plans{prog: interpreterUnused{t: t}, untracked: interpreterUnused{t: t}}
	if ok, err := fast.Match(items(50)); err != nil || !ok {
		t.Errorf("Match(small) = %v, %v; want true", ok, err)
	}
	if _, err := p.WithBudget(NewContextBudget(ctx)).Match(items(500)); !errors.Is(err, ErrCostLimitExceeded) {
		t.Errorf("Match(large): error %v, want one wrapping ErrCostLimitExceeded", err)
	}
	counted := p.WithBudget(NewBudget(ctx, 0))
	if _, sizes, measured := counted.objectValue(items(50)); measured {
		t.Errorf("an object charged to a counted budget is measured (%+v): it is charged what it costs", sizes)
	}
	if ok, err := counted.Match(items(50)); err != nil || !ok || counted.budget.Used() == 0 {
		t.Errorf("Match(small), counted = %v, %v, charged %d; want true, charged its cost", ok, err, counted.budget.Used())
	}
	cancel()
	if _, err := fast.Match(items(50)); !errors.Is(err, ErrInterrupted) {
		t.Errorf("after the context ended: %v; want ErrInterrupted", err)
	}

	// Without a cost limit, or above the default, nothing bounds an
	// evaluation closely enough: the interpreter runs it, to stop with the
	// context.
	for _, limit := range []uint64{NoCostLimit, 10 * DefaultCostLimit} {
		env, err := NewEnv(WithCostLimit(limit))
		if err != nil {
			t.Fatal(err)
		}
		q, err := env.Compile(`object.items.all(x, object.items.all(y, x + y >= 0))`, KindPredicate, "test")
		if err != nil {
			t.Fatal(err)
		}
		interpreted := q.WithBudget(NewContextBudget(t.Context()))
		interpreted.fast = failingFast{t: t}
		if ok, err := interpreted.Match(items(50)); err != nil || !ok {
			t.Errorf("Match(small), cost limit %d = %v, %v; want true", limit, ok, err)
		}
	}
}

// failingFast is a fast path that fails the test when it is taken.
type failingFast struct{ t *testing.T }

func (f failingFast) eval(any, any, []ref.Val) (ref.Val, bool) {
	f.t.Error("the fast path evaluated")
	return nil, false
}

// programOf is p.programFor(vars), which must not fail.
func programOf(t *testing.T, p *Program, vars *activation) cel.Program {
	t.Helper()
	prog, err := p.programFor(vars)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}
