package indexers_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// TestBudget checks that a budget is charged what each evaluation costs,
// lets evaluations start while it is not spent, and refuses the next ones
// with ErrBudgetExceeded; the program it was tied to is not changed.
func TestBudget(t *testing.T) {
	env := newEnv(t, indexers.WithCostTracking())
	prog := compile(t, env, `object.metadata.name.startsWith("web") && object.status.phase == "Running"`, indexers.KindPredicate)
	obj := pod("default", "web-1", "n1", "Running")

	probe := indexers.NewBudget(context.Background(), 0)
	if ok, err := prog.WithBudget(probe).Match(obj); err != nil || !ok {
		t.Fatalf("Match with a budget: %v, %v; want true", ok, err)
	}
	cost := probe.Used()
	if cost == 0 {
		t.Fatal("an evaluation with cost tracking charged nothing")
	}

	const limit = 100
	b := indexers.NewBudget(context.Background(), limit)
	charged := prog.WithBudget(b)
	var evaluated uint64
	var err error
	for range 1000 {
		if _, err = charged.Match(obj); err != nil {
			break
		}
		evaluated++
	}
	// An evaluation starts while no more than limit has been spent.
	if want := limit/cost + 1; evaluated != want {
		t.Errorf("%d evaluations of cost %d within a budget of %d, want %d", evaluated, cost, limit, want)
	}
	if !errors.Is(err, indexers.ErrBudgetExceeded) || !indexers.IsBudgetStop(err) {
		t.Errorf("the evaluation over budget failed with %v; want ErrBudgetExceeded", err)
	}
	if !strings.HasPrefix(err.Error(), "test: CEL cost budget exceeded: the expressions cost ") {
		t.Errorf("message %q does not name the program and the budget", err)
	}
	if got := b.Used(); got != evaluated*cost {
		t.Errorf("budget used %d, want %d", got, evaluated*cost)
	}
	if b.Err() == nil {
		t.Error("Err of a spent budget is nil")
	}
	// The program itself is not tied to the budget.
	if ok, err := prog.Match(obj); err != nil || !ok {
		t.Errorf("the original program: %v, %v; want true", ok, err)
	}
}

// TestBudgetContext checks that evaluations charged to a budget whose
// context ended fail with ErrInterrupted, including one already running a
// long comprehension, and that values and index values are charged too.
func TestBudgetContext(t *testing.T) {
	env := newEnv(t, indexers.WithCostTracking())
	ctx, cancel := context.WithCancelCause(context.Background())
	b := indexers.NewBudget(ctx, 0)
	value := compile(t, env, `object.metadata.name`, indexers.KindValue).WithBudget(b)
	index := compile(t, env, `object.spec.containers.map(c, c.image)`, indexers.KindIndex).WithBudget(b)
	obj := pod("default", "web-1", "n1", "Running")
	if _, err := value.Value(obj); err != nil {
		t.Fatal(err)
	}
	if _, err := index.IndexValues(obj); err != nil {
		t.Fatal(err)
	}
	if b.Used() == 0 {
		t.Error("Value and IndexValues charged nothing")
	}
	stop := errors.New("the client went away")
	cancel(stop)
	for name, eval := range map[string]func() error{
		"Value":       func() error { _, err := value.Value(obj); return err },
		"IndexValues": func() error { _, err := index.IndexValues(obj); return err },
	} {
		err := eval()
		if !errors.Is(err, indexers.ErrInterrupted) || !errors.Is(err, stop) || !indexers.IsBudgetStop(err) {
			t.Errorf("%s after the context ended: %v; want ErrInterrupted with the cause", name, err)
		}
	}

	// A running comprehension stops when the context ends.
	long, cancelLong := context.WithCancel(context.Background())
	lb := indexers.NewBudget(long, 0)
	slow := compile(t, env, `[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, a + b + c > 0)))`, indexers.KindPredicate).WithBudget(lb)
	cancelLong()
	if _, err := slow.Match(obj); !errors.Is(err, indexers.ErrInterrupted) {
		t.Errorf("a comprehension after the context ended: %v; want ErrInterrupted", err)
	}
}

// TestBudgetWithoutTracking checks the documented limit: programs of an Env
// that does not track every evaluation's cost are charged nothing, but
// still stop with the budget's context.
func TestBudgetWithoutTracking(t *testing.T) {
	env := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	b := indexers.NewBudget(ctx, 1)
	prog := compile(t, env, `object.status.phase == "Running"`, indexers.KindPredicate).WithBudget(b)
	obj := pod("default", "web-1", "n1", "Running")
	for range 3 {
		if ok, err := prog.Match(obj); err != nil || !ok {
			t.Fatalf("Match: %v, %v", ok, err)
		}
	}
	if b.Used() != 0 {
		t.Errorf("an untracked program charged %d", b.Used())
	}
	cancel()
	if _, err := prog.Match(obj); !errors.Is(err, indexers.ErrInterrupted) {
		t.Errorf("after the context ended: %v; want ErrInterrupted", err)
	}
}
