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
