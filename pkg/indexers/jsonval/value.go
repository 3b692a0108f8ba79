package jsonval

import (
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// New returns the CEL value of obj's JSON form; see the package documentation
// for the mapping. Structs, maps and slices are wrapped, not converted: New
// costs one type-table lookup and one small allocation.
//
// obj is typically a pointer to an API object from a typed informer cache.
// Unstructured content (*unstructured.Unstructured, map[string]any, []any) is
// adapted exactly as cel-go's default adapter does, so expressions see the
// same values whichever informer the object came from; a ref.Val is returned
// as it is, and nil is null.
func New(obj any) ref.Val {
	switch o := obj.(type) {
	case nil:
		return types.NullValue
	case ref.Val:
		return o
	case *unstructured.Unstructured:
		if o == nil {
			return types.NullValue
		}
		return types.DefaultTypeAdapter.NativeToValue(o.Object)
	case map[string]any, []any:
		return types.DefaultTypeAdapter.NativeToValue(o)
	}
	v := reflect.ValueOf(obj)
	return infoFor(v.Type()).value(v)
}
