package indexers

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrBudgetExceeded is wrapped by the error of an evaluation refused because
// its [Budget] was spent.
var ErrBudgetExceeded = errors.New("CEL cost budget exceeded")

// ErrInterrupted is wrapped, with the context's cause, by the error of an
// evaluation stopped because its [Budget]'s context ended.
var ErrInterrupted = errors.New("evaluation interrupted")

// Budget bounds the evaluations of one piece of work (a query server's
// request) as a whole: the sum of their costs, in the cost units of
// Kubernetes' CEL cost model, and the time they may run, through a
// context. Programs are tied to it with [Program.WithBudget]. A Budget is
// safe for concurrent use.
//
// The evaluation that spends the last of a budget completes (each one is
// still held to the Env's per-evaluation limit); the evaluations after it
// fail. An evaluation under way when the context ends stops within 100
// iterations of a comprehension.
type Budget struct {
	ctx   context.Context
	limit uint64
	used  atomic.Uint64
	// uncounted: the budget only stops evaluations when ctx ends (see
	// NewContextBudget).
	uncounted bool
}

// NewBudget returns a budget of limit cost units (0: no limit on cost)
// whose evaluations also stop when ctx ends.
func NewBudget(ctx context.Context, limit uint64) *Budget {
	return &Budget{ctx: ctx, limit: limit}
}

// NewContextBudget returns a budget that only stops its evaluations when
// ctx ends, for a command the user can interrupt: it limits no cost and
// counts none of what CEL tracks (Used counts only the objects functions
// read). An evaluation the per-evaluation cost limit bounds (an
// expression whose cost estimate is within it, or an object small enough
// for its estimate to be), when that limit is at most the default, may
// then run without the interpreter, and ends within that bound rather
// than within 100 iterations of a comprehension; the context is checked
// before each evaluation.
func NewContextBudget(ctx context.Context) *Budget {
	return &Budget{ctx: ctx, uncounted: true}
}

// Used returns the cost charged so far.
func (b *Budget) Used() uint64 { return b.used.Load() }

// Context returns the context the budget's evaluations stop with.
func (b *Budget) Context() context.Context { return b.ctx }

// Err returns the error an evaluation charged to b would fail with now, or
// nil.
func (b *Budget) Err() error { return b.check() }

// budgetVar is the name under which an evaluation's activation holds its
// Budget. It is not a valid CEL identifier, so no expression can refer to
// it.
const budgetVar = "@budget"

// charge charges b n units for work done outside CEL's cost tracking (the
// objects a relationship function reads) and returns the error the
// evaluation stops with when that spent it, or its context ended.
func (b *Budget) charge(n uint64) error {
	b.used.Add(n)
	return b.check()
}

// Charge charges b n units for work an expression caused outside CEL's
// cost tracking and outside this package (the objects a lookup read for
// it and left out), and returns the error the evaluation stops with when
// that spent it, or its context ended.
func (b *Budget) Charge(n uint64) error { return b.charge(n) }

// Limit returns the budget's cost limit; 0 means none.
func (b *Budget) Limit() uint64 { return b.limit }

// check returns the error of an evaluation that may not start: the
// context's cause once it ended, or an error wrapping ErrBudgetExceeded.
func (b *Budget) check() error {
	if b.ctx.Err() != nil {
		return fmt.Errorf("%w: %w", ErrInterrupted, context.Cause(b.ctx))
	}
	if used := b.used.Load(); b.limit > 0 && used > b.limit {
		return fmt.Errorf("%w: the expressions cost %d units, more than the %d allowed per request", ErrBudgetExceeded, used, b.limit)
	}
	return nil
}

// IsBudgetStop reports whether err ended an evaluation because of its
// budget: spent, or its context ended.
func IsBudgetStop(err error) bool {
	return errors.Is(err, ErrBudgetExceeded) || errors.Is(err, ErrInterrupted)
}
