package jsonval

import (
	"fmt"
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

var errNoMoreElements = types.NewErr("no more elements")

// iterator supplies the ref.Val methods of iterators, which are not values
// expressions can use.
type iterator struct{}

func (iterator) ConvertToNative(reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion on iterators not supported")
}
func (iterator) ConvertToType(ref.Type) ref.Val { return types.NewErr("no such overload") }
func (iterator) Equal(ref.Val) ref.Val          { return types.NewErr("no such overload") }
func (iterator) Type() ref.Type                 { return types.IteratorType }
func (iterator) Value() any                     { return nil }

// invalidKey is Find's answer for a key that is not a string: errors and
// unknowns are passed on, other keys are simply not found, as for maps
// decoded from JSON.
func invalidKey(key ref.Val) (ref.Val, bool) {
	if types.IsUnknownOrError(key) {
		return key, false
	}
	return nil, false
}

// getOrErr implements traits.Indexer.Get with the error of cel-go's maps.
func getOrErr(m traits.Mapper, key ref.Val) ref.Val {
	v, found := m.Find(key)
	if !found {
		return types.ValOrErr(v, "no such key: %v", key)
	}
	return v
}

// mapEqual is cel-go's map equality: the same size, and every key of m maps to
// an equal value in other.
func mapEqual(m traits.Mapper, other ref.Val) ref.Val {
	o, ok := other.(traits.Mapper)
	if !ok {
		return types.False
	}
	if m.Size() != o.Size() {
		return types.False
	}
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		v, _ := m.Find(k)
		ov, found := o.Find(k)
		if !found || types.Equal(v, ov) == types.False {
			return types.False
		}
	}
	return types.True
}

func convertToType(v ref.Val, own *types.Type, t ref.Type) ref.Val {
	switch t {
	case own:
		return v
	case types.TypeType:
		return own
	}
	return types.NewErr("type conversion error from '%s' to '%s'", own, t)
}

// goValue returns the Go value behind a view without copying it where
// possible.
func goValue(v reflect.Value) any {
	if !v.CanInterface() {
		return nil
	}
	if v.Kind() == reflect.Struct && v.CanAddr() {
		return v.Addr().Interface()
	}
	return v.Interface()
}
