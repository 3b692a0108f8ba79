package indexers

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// activation holds the variables of one evaluation. It replaces the map
// activation cel-go builds from a map[string]any, which costs a map per
// evaluation.
type activation struct {
	object any
	lookup Lookup
	// cluster is the value of the variable cluster; nil: not bound.
	cluster ref.Val
	// budget is the budget the evaluation is charged to; nil: none. The
	// relationship function that reads a number of objects its
	// expression does not bound (selected()) charges it what it reads.
	budget *Budget
	// each is bound only for programs compiled with CompileEach.
	each    any
	hasEach bool
	// sizes are the sizes of object and each (see jsonval.Sizes), when
	// measured.
	sizes    jsonval.Sizes
	measured bool
}

var _ interpreter.Activation = (*activation)(nil)

// ResolveName implements interpreter.Activation.
func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case ObjectVar:
		return a.object, true
	case lookupVar:
		return a.lookup, a.lookup != nil
	case EachVar:
		return a.each, a.hasEach
	case ClusterVar:
		return a.cluster, a.cluster != nil
	case budgetVar:
		return a.budget, a.budget != nil
	}
	return nil, false
}

// Parent implements interpreter.Activation.
func (a *activation) Parent() interpreter.Activation { return nil }

// Eval evaluates the expression against obj and returns the CEL value it
// produces, whatever the kind of the program. ctx may stop a long
// evaluation: it is checked every 100 iterations of a comprehension (the
// frequency Kubernetes uses), and the error then wraps context.Cause(ctx).
// Other errors name the context of the program, as those of Match do.
func (p *Program) Eval(ctx context.Context, obj any) (ref.Val, error) {
	v, err := p.eval(ctx, obj)
	if err != nil {
		return nil, p.wrap(err)
	}
	return v, nil
}

// Match evaluates a predicate against obj. A result other than a bool is an
// error.
func (p *Program) Match(obj any) (bool, error) {
	v, err := p.eval(context.Background(), obj)
	if err != nil {
		return false, p.wrap(err)
	}
	b, ok := v.(types.Bool)
	if !ok {
		return false, p.wrap(fmt.Errorf("must evaluate to bool but got %s", typeName(v)))
	}
	return bool(b), nil
}

// IndexValues evaluates an index expression against obj and returns the
// values under which obj is indexed: one for a string, the elements of a
// list of strings (in order, duplicates kept), none for null or an empty
// optional. Anything else is an error.
func (p *Program) IndexValues(obj any) ([]string, error) {
	values, err := p.indexValues(obj)
	if err != nil {
		return nil, p.wrap(err)
	}
	return values, nil
}

// Value evaluates the expression against obj and returns the result as a
// plain Go value, for printing and sorting:
//
//	null, empty optional       nil
//	bool                       bool
//	int                        int64
//	uint                       int64 (float64 beyond math.MaxInt64)
//	double                     float64
//	string                     string
//	bytes                      string, base64-encoded as in JSON
//	timestamp                  string, RFC 3339 as in JSON
//	duration                   string, as in JSON ("1.5s")
//	list                       []any
//	map                        map[string]any (other keys formatted with %v)
//	type                       string, the type name
//	other (quantity, ip, ...)  string, from its String method
//
// The result shares nothing with obj and may be modified.
func (p *Program) Value(obj any) (any, error) {
	v, err := p.eval(context.Background(), obj)
	if err != nil {
		return nil, p.wrap(err)
	}
	g, err := jsonval.ToNative(v)
	if err != nil {
		return nil, p.wrap(err)
	}
	return g, nil
}

// eval evaluates the program; its errors are not prefixed with the context.
// A context that can never be cancelled costs nothing.
func (p *Program) eval(ctx context.Context, obj any) (ref.Val, error) {
	object, sizes, measured := p.objectValue(obj)
	if p.budget != nil {
		return p.budgetEval(ctx, &activation{object: object, lookup: p.lookup, cluster: p.cluster, sizes: sizes, measured: measured})
	}
	if p.fastFor(ctx, sizes, measured) {
		if v, ok := p.fastEval(object, nil); ok {
			return v, nil
		}
	}
	return p.evalPooled(ctx, activation{object: object, lookup: p.lookup, cluster: p.cluster, sizes: sizes, measured: measured})
}

// Prepared is an object converted once for several evaluations; see
// [Program.Prepare]. It is for the evaluations of one goroutine.
type Prepared struct {
	value any
	// size measures the object, once, if a program needs its sizes; nil
	// when the Env's objects cannot be measured.
	size *objectSize
}

// objectSize is an object's sizes (see jsonval.Sizes), measured on first
// use.
type objectSize struct {
	obj      any // until measured
	sizes    jsonval.Sizes
	measured bool
}

func (o *objectSize) get() jsonval.Sizes {
	if !o.measured {
		o.sizes, o.measured, o.obj = objectSizes(o.obj), true, nil
	}
	return o.sizes
}

// Prepare converts obj into the value the object variable takes, for
// passing to several programs of the same Env in its place: each would
// otherwise convert obj on its own. The first program whose cost estimate
// is within the limit for small enough objects measures obj, so that those
// programs evaluate it without tracking their cost when it is small enough.
func (p *Program) Prepare(obj any) Prepared {
	if pr, ok := obj.(Prepared); ok {
		return pr
	}
	pr := Prepared{value: p.object(obj)}
	if p.measurable {
		pr.size = &objectSize{obj: obj}
	}
	return pr
}

// objectSizes measures obj as the default converter presents it.
func objectSizes(obj any) jsonval.Sizes {
	return jsonval.MaxSizes(unwrap(obj))
}

// unwrap returns what the default converter presents of obj: the content
// of an unstructured object, obj itself otherwise.
func unwrap(obj any) any {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if u == nil {
			return nil
		}
		return u.Object
	}
	return obj
}

// objectValue returns the value of the object variable for obj, and its
// sizes when p can use them and obj was prepared (see Prepare).
func (p *Program) objectValue(obj any) (value any, sizes jsonval.Sizes, measured bool) {
	pr, ok := obj.(Prepared)
	if !ok {
		if p.tracked && p.hasUntracked && p.measurable && p.reads != nil && (p.budget == nil || p.budget.uncounted) {
			// Measured, it may be evaluated without tracking its cost,
			// and by the fast path: far cheaper than tracking it. Only
			// what the expression reads counts.
			return p.object(obj), p.reads.Object.MaxSizes(unwrap(obj)), true
		}
		return p.object(obj), jsonval.Sizes{}, false
	}
	if !p.hasUntracked || pr.size == nil {
		return pr.value, jsonval.Sizes{}, false
	}
	return pr.value, pr.size.get(), true
}

// EvalEach evaluates like Eval with the variable each bound to each (a CEL
// value or a plain Go value), for programs compiled with CompileEach.
func (p *Program) EvalEach(ctx context.Context, obj, each any) (ref.Val, error) {
	object, sizes, measured := p.objectValue(obj)
	if p.budget != nil {
		v, err := p.budgetEval(ctx, &activation{object: object, lookup: p.lookup, cluster: p.cluster, each: each, hasEach: true})
		if err != nil {
			return nil, p.wrap(err)
		}
		return v, nil
	}
	if !p.tracked && p.fastFor(ctx, sizes, measured) {
		if v, ok := p.fastEval(object, each); ok {
			return v, nil
		}
	}
	if measured {
		es, ok := eachSizes(each)
		sizes, measured = sizes.Max(es), ok
	}
	if p.tracked && p.fastFor(ctx, sizes, measured) {
		if v, ok := p.fastEval(object, each); ok {
			return v, nil
		}
	}
	v, err := p.evalPooled(ctx, activation{object: object, lookup: p.lookup, cluster: p.cluster, each: each, hasEach: true, sizes: sizes, measured: measured})
	if err != nil {
		return nil, p.wrap(err)
	}
	return v, nil
}

// activations are reused by evaluations: an evaluation of a few labels and
// values per object would otherwise allocate one for each.
var activations = sync.Pool{New: func() any { return new(activation) }}

// evalPooled is evalVars with an activation from the pool, holding a. The
// interpreter keeps no reference to it once the evaluation has returned.
func (p *Program) evalPooled(ctx context.Context, a activation) (ref.Val, error) {
	vars := activations.Get().(*activation)
	*vars = a
	v, err := p.evalVars(ctx, vars)
	*vars = activation{}
	activations.Put(vars)
	return v, err
}

// uninterruptedCostLimit is the largest cost limit under which an
// evaluation charged to a budget that only stops with its context may run
// to its end once the context has ended, on the fast path: the default
// limit, which the interpreter, tracking its cost, spends in about 0.3 s on
// one core, and the fast path in less; a command stopped then still ends
// within 2 seconds (docs/reliability.md).
const uninterruptedCostLimit = DefaultCostLimit

// budgetEval evaluates bounded by the budget's context as well as ctx, and
// charges the budget.
func (p *Program) budgetEval(ctx context.Context, vars *activation) (ref.Val, error) {
	b := p.budget
	if err := b.check(); err != nil {
		return nil, err
	}
	// A program that tracks no cost is charged nothing either way; one
	// that does is charged what it costs, which only the interpreter
	// tracks. A fast path that does not iterate ends at once, with or
	// without a context. A budget that counts no cost takes the fast path
	// wherever the per-evaluation limit bounds the evaluation closely
	// enough: the cost estimate is within a limit of at most
	// uninterruptedCostLimit.
	fast := !p.tracked && p.fastSlots == 0
	if b.uncounted && p.costLimit <= uninterruptedCostLimit {
		fast = !p.tracked || p.withinBounds(vars.sizes, vars.measured)
	}
	if p.fast != nil && fast {
		if v, ok := p.fastEval(vars.object, vars.each); ok {
			return v, nil
		}
	}
	if !b.uncounted {
		vars.measured = false // a budget is charged what the evaluation costs
	}
	vars.budget = b
	if ctx.Done() == nil {
		ctx = b.ctx
	}
	v, cost, err := p.evalCost(ctx, vars)
	if cost > 0 && !b.uncounted {
		b.used.Add(cost)
	}
	if err != nil {
		// Stopped by the budget: its context ended, or a function that
		// scans spent it.
		if berr := b.check(); berr != nil {
			return nil, berr
		}
	}
	return v, err
}

func (p *Program) evalVars(ctx context.Context, vars *activation) (ref.Val, error) {
	v, _, err := p.evalCost(ctx, vars)
	return v, err
}

// evalCost evaluates and returns the cost the evaluation tracked (0 for a
// program that does not track it).
func (p *Program) evalCost(ctx context.Context, vars *activation) (ref.Val, uint64, error) {
	var (
		v   ref.Val
		det *cel.EvalDetails
		err error
	)
	prog, err := p.programFor(vars)
	if err != nil {
		return nil, 0, err
	}
	if ctx.Done() != nil {
		v, det, err = prog.ContextEval(ctx, vars)
	} else {
		v, det, err = prog.Eval(vars)
	}
	var cost uint64
	if det != nil {
		if c := det.ActualCost(); c != nil {
			cost = *c
		}
	}
	if err == nil {
		return v, cost, nil
	}
	return nil, cost, p.evalError(ctx, err)
}

// fastFor reports whether the fast path may evaluate an object of the
// given sizes (measured or not): always for a program that does not track
// its cost, and for one that does, as programFor, where it would be
// evaluated without tracking. A fast path that iterates (a comprehension)
// does not watch ctx: where ctx can end the evaluation, the interpreter
// evaluates, checking it as it iterates.
func (p *Program) fastFor(ctx context.Context, sizes jsonval.Sizes, measured bool) bool {
	if p.fast == nil || (p.fastSlots > 0 && ctx.Done() != nil) {
		return false
	}
	if !p.tracked {
		return true
	}
	return p.withinBounds(sizes, measured)
}

// withinBounds reports whether objects of the given sizes are within one
// of the bounds under which p's cost estimate is within its limit.
func (p *Program) withinBounds(sizes jsonval.Sizes, measured bool) bool {
	if !p.hasUntracked || !measured {
		return false
	}
	bounds := p.bounds
	if bounds == nil {
		bounds = p.plans.bounds()
	}
	for _, b := range bounds {
		if sizes.Within(b) {
			return true
		}
	}
	return false
}

// fastEval evaluates with the fast path, with room for its comprehension
// variables.
func (p *Program) fastEval(object, each any) (ref.Val, bool) {
	var locals []ref.Val
	if p.fastSlots > 0 {
		locals = make([]ref.Val, p.fastSlots)
	}
	return p.fast.eval(object, each, locals)
}

// programFor returns the program that evaluates vars: without cost
// tracking when their sizes are within one of the bounds under which its
// cost estimate is within the limit.
func (p *Program) programFor(vars *activation) (cel.Program, error) {
	if err := p.plans.get(); err != nil {
		return nil, fmt.Errorf("planning %s expression %q: %w", p.context, p.expr, err)
	}
	if p.withinBounds(vars.sizes, vars.measured) {
		return p.plans.untracked, nil
	}
	return p.plans.prog, nil
}

// evalError explains the error of an interpreted evaluation.
func (p *Program) evalError(ctx context.Context, err error) error {
	var cancelled interpreter.EvalCancelledError
	switch {
	case errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded:
		return fmt.Errorf("%w: evaluation stopped after %d cost units; simplify the expression or %s", ErrCostLimitExceeded, p.costLimit, p.costHint)
	case ctx.Err() != nil:
		return fmt.Errorf("evaluation interrupted: %w", context.Cause(ctx))
	}
	return err
}

func (p *Program) indexValues(obj any) ([]string, error) {
	if p.values != nil {
		if values, ok := p.values(obj); ok {
			return values, nil
		}
	}
	v, err := p.eval(context.Background(), obj)
	if err != nil {
		return nil, err
	}
	return indexValues(v)
}

// eachSizes measures the value of each: a part of an object, a list or map
// CEL built of such parts, a string or a scalar, as CEL or Go values; ok is
// false for anything else, which is not measured.
func eachSizes(each any) (s jsonval.Sizes, ok bool) {
	if v, isVal := each.(ref.Val); isVal {
		return jsonval.ValueMaxSizes(v)
	}
	switch each.(type) {
	case nil, bool, int, int64, uint64, float64, string, map[string]any, []any:
		return jsonval.MaxSizes(each), true
	}
	return s, false
}

// wrap prefixes an evaluation error with the context of the program.
func (p *Program) wrap(err error) error {
	if p.context == "" {
		return err
	}
	return fmt.Errorf("%s: %w", p.context, err)
}

func indexValues(v ref.Val) ([]string, error) {
	switch v := v.(type) {
	case types.String:
		return []string{string(v)}, nil
	case types.Null:
		return nil, nil
	case *types.Optional:
		if !v.HasValue() {
			return nil, nil
		}
		return indexValues(v.GetValue())
	case traits.Lister:
		n, ok := v.Size().(types.Int)
		if !ok {
			break
		}
		values := make([]string, 0, int(n))
		for it := v.Iterator(); it.HasNext() == types.True; {
			e := it.Next()
			s, ok := e.(types.String)
			if !ok {
				return nil, fmt.Errorf("must evaluate to %s but got a list containing %s", KindIndex.must(), typeName(e))
			}
			values = append(values, string(s))
		}
		return values, nil
	}
	return nil, fmt.Errorf("must evaluate to %s but got %s", KindIndex.must(), typeName(v))
}

func typeName(v ref.Val) string {
	if v == nil {
		return "nothing"
	}
	if types.IsError(v) {
		return "an error"
	}
	return v.Type().TypeName()
}
