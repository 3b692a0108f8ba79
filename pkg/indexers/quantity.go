package indexers

import (
	"context"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	apiservercel "k8s.io/apiserver/pkg/cel"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// Quantity functions beyond those of Kubernetes' quantity library, for the
// values Kubernetes' Go API gives (resource.Quantity's Value and
// MilliValue), which kube-state-metrics reports:
//
//	quantity("1.5Gi").value() == 1610612736   // rounded up to an integer
//	quantity("100m").value() == 1
//	quantity("100m").milliValue() == 100      // thousandths, rounded up
//
// A quantity beyond the range of int saturates, as in the Go API.
const (
	quantityValueOverload      = "quantity_value"
	quantityMilliValueOverload = "quantity_milli_value"
)

// quantityFunctions declares value() and milliValue() on quantities.
func quantityFunctions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Function("value",
			cel.MemberOverload(quantityValueOverload, []*cel.Type{apiservercel.QuantityType}, cel.IntType,
				cel.UnaryBinding(unaryOf(func(q apiservercel.Quantity) ref.Val {
					return types.Int(q.Quantity.Value())
				})))),
		cel.Function("milliValue",
			cel.MemberOverload(quantityMilliValueOverload, []*cel.Type{apiservercel.QuantityType}, cel.IntType,
				cel.UnaryBinding(unaryOf(func(q apiservercel.Quantity) ref.Val {
					return types.Int(q.MilliValue())
				})))),
	}
}

// unaryOf makes the binding of a function of one argument of type T from
// fn; an argument of another type is no such overload.
func unaryOf[T ref.Val](fn func(T) ref.Val) func(ref.Val) ref.Val {
	return func(v ref.Val) ref.Val {
		x, ok := v.(T)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		return fn(x)
	}
}

// ValueKeepingQuantities evaluates the expression against obj as Value
// does, except that a quantity, alone or as an element of a list, is a
// resource.Quantity rather than its text: aggregates add quantities up in
// their unit.
func (p *Program) ValueKeepingQuantities(obj any) (any, error) {
	v, err := p.eval(context.Background(), obj)
	if err != nil {
		return nil, p.wrap(err)
	}
	g, err := keepQuantities(v)
	if err != nil {
		return nil, p.wrap(err)
	}
	return g, nil
}

// keepQuantities is jsonval.ToNative with quantities kept as such.
func keepQuantities(v ref.Val) (any, error) {
	switch x := v.(type) {
	case apiservercel.Quantity:
		return x.DeepCopy(), nil
	case *apiservercel.Quantity:
		return x.DeepCopy(), nil
	case traits.Lister:
		var out []any
		for it := x.Iterator(); it.HasNext() == types.True; {
			e, err := keepQuantities(it.Next())
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	return jsonval.ToNative(v)
}
