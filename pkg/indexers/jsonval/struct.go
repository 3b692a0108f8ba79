package jsonval

import (
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// structValue presents a struct as a map from JSON member names to values.
// Members that the JSON form omits are absent.
type structValue struct {
	info *typeInfo // kindStruct
	v    reflect.Value
}

var (
	_ traits.Mapper = (*structValue)(nil)
	_ traits.Zeroer = (*structValue)(nil)
)

// Find implements traits.Mapper.
func (s *structValue) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		return invalidKey(key)
	}
	f := s.info.fields.byName[string(k)]
	if f == nil {
		return nil, false
	}
	fv, ok := f.get(s.v)
	if !ok {
		return nil, false
	}
	return f.value(fv), true
}

// Get implements traits.Indexer.
func (s *structValue) Get(key ref.Val) ref.Val { return getOrErr(s, key) }

// Contains implements traits.Container.
func (s *structValue) Contains(key ref.Val) ref.Val {
	_, found := s.Find(key)
	return types.Bool(found)
}

// Size implements traits.Sizer.
func (s *structValue) Size() ref.Val {
	n := 0
	for i := range s.info.fields.list {
		if _, ok := s.info.fields.list[i].get(s.v); ok {
			n++
		}
	}
	return types.Int(n)
}

// IsZeroValue implements traits.Zeroer: an object without members.
func (s *structValue) IsZeroValue() bool {
	for i := range s.info.fields.list {
		if _, ok := s.info.fields.list[i].get(s.v); ok {
			return false
		}
	}
	return true
}

// Iterator implements traits.Iterable: the present members in declaration
// order.
func (s *structValue) Iterator() traits.Iterator { return &structIterator{s: s} }

// ConvertToNative implements ref.Val; see convertToNative.
func (s *structValue) ConvertToNative(t reflect.Type) (any, error) {
	return convertToNative(s, s.v, t)
}

// ConvertToType implements ref.Val.
func (s *structValue) ConvertToType(t ref.Type) ref.Val { return convertToType(s, types.MapType, t) }

// Equal implements ref.Val: equal to any map with equal entries.
func (s *structValue) Equal(other ref.Val) ref.Val { return mapEqual(s, other) }

// Type implements ref.Val.
func (s *structValue) Type() ref.Type { return types.MapType }

// Value implements ref.Val: a pointer to the wrapped struct when it is
// addressable, else a copy. The struct must not be modified.
func (s *structValue) Value() any { return goValue(s.v) }

func (s *structValue) String() string { return types.Format(s) }

// structIterator yields the names of the present members.
type structIterator struct {
	iterator
	s    *structValue
	next int // index of the next member to consider
}

func (it *structIterator) HasNext() ref.Val {
	fields := it.s.info.fields.list
	for ; it.next < len(fields); it.next++ {
		if _, ok := fields[it.next].get(it.s.v); ok {
			return types.True
		}
	}
	return types.False
}

func (it *structIterator) Next() ref.Val {
	if it.HasNext() != types.True {
		return errNoMoreElements
	}
	f := &it.s.info.fields.list[it.next]
	it.next++
	return f.key
}

// Walk looks names up in turn from v, each in the value the previous one
// found, as Find would, without building a view of the structs on the way:
// a path of field names read for each of many objects allocates only its
// result. It walks while v is a view of a struct; it returns the value
// reached after the first n names, with found true, for the caller to go on
// from with Find (n is len(names) when it went all the way, 0 when v is
// not a struct's view), or, with found false, the index n of the first
// name that is missing.
func Walk(v ref.Val, names []ref.Val) (out ref.Val, n int, found bool) {
	s, ok := v.(*structValue)
	if !ok {
		return v, 0, true
	}
	info, sv := s.info, s.v
	for i, name := range names {
		k, ok := name.(types.String)
		if !ok {
			return info.value(sv), i, true
		}
		f := info.fields.byName[string(k)]
		if f == nil {
			return nil, i, false
		}
		fv, ok := f.get(sv)
		if !ok {
			return nil, i, false
		}
		if f.quoted {
			return f.value(fv), i + 1, true
		}
		ti := f.info
		if ti.kind == kindPointer && ti.elem.kind == kindStruct && !fv.IsNil() {
			ti, fv = ti.elem, fv.Elem()
		}
		if i == len(names)-1 || ti.kind != kindStruct {
			return ti.value(fv), i + 1, true
		}
		info, sv = ti, fv
	}
	return v, 0, true
}
