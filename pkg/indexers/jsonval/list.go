package jsonval

import (
	"reflect"
	"sync/atomic"
	"unsafe"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// listValue presents a non-nil slice or an array as a JSON array.
type listValue struct {
	info *typeInfo // kindSlice or kindArray
	v    reflect.Value
	// structs points to the first of the list's elements presented, when
	// they are structs: all are made at once when one is first asked for,
	// in one allocation, and given again when asked for again.
	structs atomic.Pointer[structValue]
}

var (
	_ traits.Lister = (*listValue)(nil)
	_ traits.Zeroer = (*listValue)(nil)
)

func (l *listValue) elem(i int) ref.Val {
	if l.info.elem.kind == kindStruct {
		return &l.structElems()[i]
	}
	return l.info.elem.value(l.v.Index(i))
}

// structElems returns the elements of a list of structs, presented.
func (l *listValue) structElems() []structValue {
	n := l.v.Len()
	if p := l.structs.Load(); p != nil {
		return unsafe.Slice(p, n) //nolint:gosec // G103: the n elements made together below
	}
	s := make([]structValue, n)
	for i := range s {
		s[i] = structValue{info: l.info.elem, v: l.v.Index(i)}
	}
	if l.structs.CompareAndSwap(nil, &s[0]) {
		return s
	}
	return unsafe.Slice(l.structs.Load(), n) //nolint:gosec // G103: made by another goroutine meanwhile, as below
}

// Get implements traits.Indexer.
func (l *listValue) Get(index ref.Val) ref.Val {
	i, err := types.IndexOrError(index)
	if err != nil {
		return types.ValOrErr(index, "%v", err)
	}
	if i < 0 || i >= l.v.Len() {
		return types.NewErr("index '%d' out of range in list size '%d'", i, l.v.Len())
	}
	return l.elem(i)
}

// Contains implements traits.Container.
func (l *listValue) Contains(e ref.Val) ref.Val {
	for i := range l.v.Len() {
		if e.Equal(l.elem(i)) == types.True {
			return types.True
		}
	}
	return types.False
}

// Add implements traits.Adder: the concatenation, as a new list.
func (l *listValue) Add(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	n, ok := o.Size().(types.Int)
	if !ok {
		return types.MaybeNoSuchOverloadErr(o.Size())
	}
	elems := make([]ref.Val, 0, l.v.Len()+int(n))
	for i := range l.v.Len() {
		elems = append(elems, l.elem(i))
	}
	for i := range n {
		elems = append(elems, o.Get(i))
	}
	return types.NewRefValList(types.DefaultTypeAdapter, elems)
}

// Size implements traits.Sizer.
func (l *listValue) Size() ref.Val { return types.Int(l.v.Len()) }

// IsZeroValue implements traits.Zeroer.
func (l *listValue) IsZeroValue() bool { return l.v.Len() == 0 }

// Iterator implements traits.Iterable.
func (l *listValue) Iterator() traits.Iterator { return &listIterator{l: l} }

// ConvertToNative implements ref.Val; see convertToNative.
func (l *listValue) ConvertToNative(t reflect.Type) (any, error) {
	return convertToNative(l, l.v, t)
}

// ConvertToType implements ref.Val.
func (l *listValue) ConvertToType(t ref.Type) ref.Val { return convertToType(l, types.ListType, t) }

// Equal implements ref.Val: equal to any list with equal elements.
func (l *listValue) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.False
	}
	if o.Size() != l.Size() {
		return types.False
	}
	for i := range l.v.Len() {
		if types.Equal(l.elem(i), o.Get(types.Int(i))) == types.False {
			return types.False
		}
	}
	return types.True
}

// Type implements ref.Val.
func (l *listValue) Type() ref.Type { return types.ListType }

// Value implements ref.Val: the wrapped slice or array, which must not be
// modified.
func (l *listValue) Value() any { return goValue(l.v) }

func (l *listValue) String() string { return types.Format(l) }

type listIterator struct {
	iterator
	l    *listValue
	next int
}

func (it *listIterator) HasNext() ref.Val { return types.Bool(it.next < it.l.v.Len()) }

func (it *listIterator) Next() ref.Val {
	if it.next >= it.l.v.Len() {
		return errNoMoreElements
	}
	v := it.l.elem(it.next)
	it.next++
	return v
}
