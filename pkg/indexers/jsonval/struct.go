package jsonval

import (
	"reflect"
	"sync/atomic"

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

// A Path is a path of field names, looked up in turn by Walk. It keeps
// the fields its names are in the struct type it last walked from, so
// that a walk from a value of that type looks no name up. It is safe for
// concurrent use.
type Path struct {
	names []ref.Val
	plan  atomic.Pointer[pathPlan]
}

// pathPlan is the fields a Path's names are, walking from root: fields[i]
// is names[i]'s, nil when the struct reached has no such member. It ends
// where a walk from root leaves the structs: after a missing field, a
// quoted one or one that is not a struct (or a pointer to one), or before
// a name that is not a string.
type pathPlan struct {
	root   *typeInfo
	fields []*field
}

// NewPath returns the Path of names, which are types.String values (a
// name of another type ends a walk).
func NewPath(names []ref.Val) *Path { return &Path{names: names} }

// planFor returns the fields of p's names walking from root.
func (p *Path) planFor(root *typeInfo) *pathPlan {
	if pl := p.plan.Load(); pl != nil && pl.root == root {
		return pl
	}
	pl := &pathPlan{root: root}
	info := root
	for _, name := range p.names {
		k, ok := name.(types.String)
		if !ok {
			break
		}
		f := info.fields.byName[string(k)]
		pl.fields = append(pl.fields, f)
		if f == nil || f.quoted {
			break
		}
		ti := f.info
		if ti.kind == kindPointer && ti.elem.kind == kindStruct {
			ti = ti.elem
		}
		if ti.kind != kindStruct {
			break
		}
		info = ti
	}
	p.plan.Store(pl)
	return pl
}

// Walk looks p's names up in turn from v, each in the value the previous
// one found, as Find would, without building a view of the structs on the
// way: a path of field names read for each of many objects allocates only
// its result. It walks while v is a view of a struct; it returns the value
// reached after the first n names, with found true, for the caller to go
// on from with Find (n is len(names) when it went all the way, 0 when v is
// not a struct's view), or, with found false, the index n of the first
// name that is missing.
func (p *Path) Walk(v ref.Val) (out ref.Val, n int, found bool) {
	s, ok := v.(*structValue)
	if !ok {
		return v, 0, true
	}
	st := p.walk(s)
	switch {
	case !st.found:
		return nil, st.n, false
	case st.quoted != nil:
		return st.quoted.value(st.v), st.n, true
	case st.info == nil:
		return v, 0, true
	}
	return st.info.value(st.v), st.n, true
}

// WalkString is [Path.Walk] for a path to a string member, from a struct
// through its names all: the string, without making a CEL value of it.
// ok is false when the walk does not end so (a member absent or of another
// type, a scalar quoted as a string): Walk tells what it gives then.
func (p *Path) WalkString(v ref.Val) (s string, ok bool) {
	sv, isStruct := v.(*structValue)
	if !isStruct {
		return "", false
	}
	st := p.walk(sv)
	if !st.found || st.quoted != nil || st.info == nil || st.info.kind != kindString || st.n != len(p.names) {
		return "", false
	}
	return validUTF8(st.v.String()), true
}

// stop is where a walk from a struct stopped: at the member (quoted: a
// scalar presented as its JSON text) or value v of type info, after n
// names; or before the n-th name, not found. info is nil when there are no
// names: the walk stayed at the struct.
type stop struct {
	info   *typeInfo
	v      reflect.Value
	quoted *field
	n      int
	found  bool
}

// walk walks from s through p's names, as far as structs go.
func (p *Path) walk(s *structValue) stop {
	info, sv := s.info, s.v
	plan := p.planFor(info).fields
	for i, name := range p.names {
		k, ok := name.(types.String)
		if !ok {
			return stop{info: info, v: sv, n: i, found: true}
		}
		var f *field
		if i < len(plan) {
			f = plan[i]
		} else {
			f = info.fields.byName[string(k)]
		}
		if f == nil {
			return stop{n: i}
		}
		fv, ok := f.get(sv)
		if !ok {
			return stop{n: i}
		}
		if f.quoted {
			return stop{v: fv, quoted: f, n: i + 1, found: true}
		}
		ti := f.info
		if ti.kind == kindPointer && ti.elem.kind == kindStruct && !fv.IsNil() {
			ti, fv = ti.elem, fv.Elem()
		}
		if i == len(p.names)-1 || ti.kind != kindStruct {
			return stop{info: ti, v: fv, n: i + 1, found: true}
		}
		info, sv = ti, fv
	}
	return stop{found: true}
}
