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
				cel.UnaryBinding(func(v ref.Val) ref.Val {
					q, ok := v.(apiservercel.Quantity)
					if !ok {
						return types.MaybeNoSuchOverloadErr(v)
					}
					return types.Int(q.Quantity.Value())
				}))),
		cel.Function("milliValue",
			cel.MemberOverload(quantityMilliValueOverload, []*cel.Type{apiservercel.QuantityType}, cel.IntType,
				cel.UnaryBinding(func(v ref.Val) ref.Val {
					q, ok := v.(apiservercel.Quantity)
					if !ok {
						return types.MaybeNoSuchOverloadErr(v)
					}
					return types.Int(q.MilliValue())
				}))),
	}
}
