package indexers

import (
	"fmt"
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// record is the value of a map literal whose keys are distinct constant
// strings, as the fast path builds it ({"name": c.name, "image": c.image}):
// the literal's keys, shared by every record built from it, and the values
// evaluated in their order. It is the map CEL builds (types.NewRefValMap)
// without a Go map: a key is found by comparing at most a few strings, and
// building one allocates its values only. What it does not do itself
// (converting, comparing, printing) it hands to that map, built then.
type record struct {
	keys *recordKeys
	vals []ref.Val
}

// recordKeys are a record literal's keys, as strings to compare and as
// values to give (a types.String made a ref.Val is allocated).
type recordKeys struct {
	strs []types.String
	vals []ref.Val
}

var (
	_ jsonval.EntryLister = (*record)(nil)
	_ traits.Foldable     = (*record)(nil)
)

// Entries and Entry list the entries in the literal's order, for
// measuring (see jsonval.ValueMaxSizes).
func (r *record) Entries() int                   { return len(r.vals) }
func (r *record) Entry(i int) (key, val ref.Val) { return r.keys.vals[i], r.vals[i] }

// asMap returns the map CEL would have built.
func (r *record) asMap() traits.Mapper {
	m := make(map[ref.Val]ref.Val, len(r.vals))
	for i, k := range r.keys.vals {
		m[k] = r.vals[i]
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, m)
}

// Find returns the value of key; a key that is not a string is in no
// record, as in a map of string keys.
func (r *record) Find(key ref.Val) (ref.Val, bool) {
	if s, ok := key.(types.String); ok {
		for i, k := range r.keys.strs {
			if k == s {
				return r.vals[i], true
			}
		}
	}
	return nil, false
}

func (r *record) Contains(key ref.Val) ref.Val {
	_, found := r.Find(key)
	return types.Bool(found)
}

func (r *record) Get(key ref.Val) ref.Val {
	v, found := r.Find(key)
	if !found {
		return types.ValOrErr(v, "no such key: %v", key)
	}
	return v
}

func (r *record) Size() ref.Val { return types.Int(len(r.vals)) }

// IsZeroValue reports whether the record is empty, as for a map.
func (r *record) IsZeroValue() bool { return len(r.vals) == 0 }

// Iterator gives the keys in the literal's order (a map's order is not
// defined).
func (r *record) Iterator() traits.Iterator { return &sliceIterator{vals: r.keys.vals} }

// Fold folds the entries in the literal's order.
func (r *record) Fold(f traits.Folder) {
	for i, k := range r.keys.vals {
		if !f.FoldEntry(k, r.vals[i]) {
			return
		}
	}
}

func (r *record) ConvertToNative(t reflect.Type) (any, error) { return r.asMap().ConvertToNative(t) }

func (r *record) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.MapType:
		return r
	case types.TypeType:
		return types.MapType
	}
	return r.asMap().ConvertToType(t)
}

func (r *record) Equal(other ref.Val) ref.Val { return r.asMap().Equal(other) }
func (r *record) Type() ref.Type              { return types.MapType }
func (r *record) Value() any                  { return r.asMap().Value() }
func (r *record) String() string              { return fmt.Sprint(r.asMap()) }

// valList is a list the fast path builds (a fold's collected elements, a
// list literal): the list CEL builds (types.NewRefValList) in one
// allocation, not three. What it does not do itself (converting,
// comparing, concatenating, printing) it hands to that list, built then.
type valList []ref.Val

var (
	_ traits.Lister   = valList(nil)
	_ traits.Foldable = valList(nil)
)

// asList returns the list CEL would have built.
func (l valList) asList() traits.Lister { return types.NewRefValList(types.DefaultTypeAdapter, l) }

func (l valList) Get(index ref.Val) ref.Val {
	i, err := types.IndexOrError(index)
	if err != nil {
		return types.ValOrErr(index, "%v", err)
	}
	if i < 0 || i >= len(l) {
		return types.NewErr("index '%d' out of range in list size '%d'", i, len(l))
	}
	return l[i]
}

func (l valList) Contains(elem ref.Val) ref.Val {
	for _, v := range l {
		if b, ok := elem.Equal(v).(types.Bool); ok && b == types.True {
			return types.True
		}
	}
	return types.False
}

func (l valList) Size() ref.Val     { return types.Int(len(l)) }
func (l valList) IsZeroValue() bool { return len(l) == 0 }

func (l valList) Iterator() traits.Iterator { return &sliceIterator{vals: l} }

// Fold folds the elements with their indexes, as CEL's lists do.
func (l valList) Fold(f traits.Folder) {
	for i, v := range l {
		if !f.FoldEntry(i, v) {
			return
		}
	}
}

func (l valList) Add(other ref.Val) ref.Val                   { return l.asList().Add(other) }
func (l valList) ConvertToNative(t reflect.Type) (any, error) { return l.asList().ConvertToNative(t) }

func (l valList) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.ListType:
		return l
	case types.TypeType:
		return types.ListType
	}
	return l.asList().ConvertToType(t)
}

func (l valList) Equal(other ref.Val) ref.Val { return l.asList().Equal(other) }
func (l valList) Type() ref.Type              { return types.ListType }
func (l valList) Value() any                  { return []ref.Val(l) }
func (l valList) String() string              { return fmt.Sprint(l.asList()) }

// sliceIterator iterates values in order: a record's keys, a valList's
// elements.
type sliceIterator struct {
	vals []ref.Val
	next int
}

func (it *sliceIterator) HasNext() ref.Val { return types.Bool(it.next < len(it.vals)) }

func (it *sliceIterator) Next() ref.Val {
	if it.next >= len(it.vals) {
		return nil
	}
	it.next++
	return it.vals[it.next-1]
}

func (it *sliceIterator) ConvertToNative(reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion on iterators not supported")
}

func (it *sliceIterator) ConvertToType(ref.Type) ref.Val { return types.NewErr("no such overload") }
func (it *sliceIterator) Equal(ref.Val) ref.Val          { return types.NewErr("no such overload") }
func (it *sliceIterator) Type() ref.Type                 { return types.IteratorType }
func (it *sliceIterator) Value() any                     { return nil }
