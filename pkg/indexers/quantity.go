package indexers

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	apiservercel "k8s.io/apiserver/pkg/cel"
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
