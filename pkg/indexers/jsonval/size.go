package jsonval

import (
	"encoding"
	"encoding/json"
	"reflect"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Sizes are the sizes of the largest values of a JSON value as CEL sees
// it: Elems of its largest list or map (a struct's members counted as a
// map's, their names counted as keys), Bytes of its longest string (map
// keys and times included, as JSON has them) or bytes. Numbers, booleans
// and nulls have no size.
//
// A CEL program's cost estimate made with lists and maps of at most Elems
// elements and strings of at most Bytes holds for every value whose Sizes
// are within them: such a program need not track the cost of evaluating
// them when that estimate is within its limit.
type Sizes struct {
	Elems, Bytes int
}

func (s *Sizes) elems(n int) { s.Elems = max(s.Elems, n) }
func (s *Sizes) bytes(n int) { s.Bytes = max(s.Bytes, n) }

// Within reports whether s is at most bound in both sizes.
func (s Sizes) Within(bound Sizes) bool {
	return s.Elems <= bound.Elems && s.Bytes <= bound.Bytes
}

// Max returns the larger of s and o in each size.
func (s Sizes) Max(o Sizes) Sizes {
	return Sizes{Elems: max(s.Elems, o.Elems), Bytes: max(s.Bytes, o.Bytes)}
}

// MaxSizes measures obj as [New] presents it to CEL.
func MaxSizes(obj any) Sizes {
	var s Sizes
	if obj != nil {
		v := reflect.ValueOf(obj)
		infoFor(v.Type()).measure(v, &s)
	}
	return s
}

// ValueMaxSizes is [MaxSizes] for a value presented to CEL: a part of an
// object as [New] presents it, a list or map CEL built of such values, a
// string, bytes or a scalar. ok is false when v (or a part of it) is of
// another kind, which it does not measure.
func ValueMaxSizes(v ref.Val) (s Sizes, ok bool) {
	switch v := v.(type) {
	case *structValue:
		v.info.measure(v.v, &s)
	case *mapValue:
		v.info.measure(v.v, &s)
	case *listValue:
		v.info.measure(v.v, &s)
	case types.String:
		s.bytes(len(v))
	case types.Bytes:
		s.bytes(len(v))
	case types.Bool, types.Int, types.Uint, types.Double, types.Null, types.Timestamp, types.Duration:
	case traits.Mapper:
		return mapperSizes(v)
	case traits.Lister:
		return listerSizes(v)
	default:
		return s, false
	}
	return s, true
}

// timeSize is the length of t as timeValue presents it.
func timeSize(t time.Time, layout string) int {
	if t.IsZero() {
		return 0
	}
	if y := t.UTC().Year(); y >= 0 && y <= 9999 {
		// The length of the layout's UTC form in these years.
		return len(layout) - len("2006-01-02T15:04:05Z07:00") + len("2006-01-02T15:04:05Z")
	}
	return len(t.UTC().Format(layout))
}

// EntryLister is a map that lists its entries by position, without
// allocating: a map built by another package, which ValueMaxSizes would
// otherwise measure through its iterator (or its Value, which may build a
// Go map to answer).
type EntryLister interface {
	traits.Mapper
	// Entries returns the number of entries; Entry(i) the i-th, for
	// 0 ≤ i < Entries().
	Entries() int
	Entry(i int) (key, value ref.Val)
}

// mapperSizes and listerSizes measure a map or list that CEL built, whose
// keys and elements are measured in turn.
func mapperSizes(m traits.Mapper) (s Sizes, ok bool) {
	n, isInt := m.Size().(types.Int)
	if !isInt {
		return s, false
	}
	s.elems(int(n))
	if el, isLister := m.(EntryLister); isLister {
		for i := range el.Entries() {
			if !s.entry(el.Entry(i)) {
				return s, false
			}
		}
		return s, true
	}
	if entries, isRefVal := m.Value().(map[ref.Val]ref.Val); isRefVal {
		// A map CEL built (a map literal): its entries as they are, which
		// its iterator would give through reflection, a copy of each key.
		for k, v := range entries {
			if !s.entry(k, v) {
				return s, false
			}
		}
		return s, true
	}
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		if !s.entry(k, m.Get(k)) {
			return s, false
		}
	}
	return s, true
}

// entry adds the sizes of a map entry to s; false when it measures
// neither (see ValueMaxSizes).
func (s *Sizes) entry(k, v ref.Val) bool {
	ks, ok := ValueMaxSizes(k)
	if !ok {
		return false
	}
	vs, ok := ValueMaxSizes(v)
	if !ok {
		return false
	}
	*s = s.Max(ks).Max(vs)
	return true
}

func listerSizes(l traits.Lister) (s Sizes, ok bool) {
	n, isInt := l.Size().(types.Int)
	if !isInt {
		return s, false
	}
	s.elems(int(n))
	for it := l.Iterator(); it.HasNext() == types.True; {
		es, ok := ValueMaxSizes(it.Next())
		if !ok {
			return s, false
		}
		s = s.Max(es)
	}
	return s, true
}

// measure adds the sizes of v, a value of type ti.typ, to s.
func (ti *typeInfo) measure(v reflect.Value, s *Sizes) {
	switch ti.kind {
	case kindString:
		s.bytes(v.Len())
		return
	case kindBytes:
		s.bytes((v.Len() + 2) / 3 * 4) // base64
		return
	case kindStruct:
		present := 0
		for i := range ti.fields.list {
			f := &ti.fields.list[i]
			fv, ok := f.get(v)
			if !ok {
				continue
			}
			present++
			s.bytes(len(f.name)) // a member's name is a map key
			if f.quoted {        // a scalar as its JSON text
				s.bytes(32)
				continue
			}
			f.info.measure(fv, s)
		}
		s.elems(present)
		return
	case kindMap:
		s.elems(v.Len())
		if v.Len() == 0 {
			return
		}
		// The key and value are set in place, not allocated per entry.
		k := reflect.New(ti.typ.Key()).Elem()
		e := reflect.New(ti.typ.Elem()).Elem()
		for it := v.MapRange(); it.Next(); {
			if k.SetIterKey(it); k.Kind() == reflect.String {
				s.bytes(k.Len())
			} else {
				s.bytes(32) // a number as a key
			}
			if ti.elem.addrOnly {
				// Not addressable, as CEL sees it (see marshalerValue).
				ti.elem.measure(it.Value(), s)
				continue
			}
			e.SetIterValue(it)
			ti.elem.measure(e, s)
		}
		return
	case kindSlice, kindArray:
		n := v.Len()
		s.elems(n)
		for i := range n {
			ti.elem.measure(v.Index(i), s)
		}
		return
	case kindPointer:
		if !v.IsNil() {
			ti.elem.measure(v.Elem(), s)
		}
		return
	case kindInterface:
		if !v.IsNil() {
			e := v.Elem()
			infoFor(e.Type()).measure(e, s)
		}
		return
	}
	if !v.CanInterface() {
		return // presented as an error
	}
	switch ti.kind {
	case kindTime:
		s.bytes(timeSize(as[metav1.Time](v).Time, time.RFC3339))
	case kindMicroTime:
		s.bytes(timeSize(as[metav1.MicroTime](v).Time, metav1.RFC3339Micro))
	case kindQuantity:
		q := as[resource.Quantity](v) // String caches its result in q: use a copy
		s.bytes(len(q.String()))
	case kindIntOrString:
		s.bytes(len(as[intstr.IntOrString](v).StrVal))
	case kindMarshaler, kindTextMarshaler:
		if ti.addrOnly && !v.CanAddr() {
			ti.plain.measure(v, s)
			return
		}
		m := v
		if ti.addrOnly {
			m = v.Addr()
		}
		var b []byte
		var err error
		if ti.kind == kindMarshaler {
			b, err = m.Interface().(json.Marshaler).MarshalJSON()
		} else {
			b, err = m.Interface().(encoding.TextMarshaler).MarshalText()
		}
		if err != nil {
			return // presented as an error
		}
		if ti.kind == kindTextMarshaler {
			s.bytes(len(b))
			return
		}
		// Measured as it is presented: decoded.
		vs, ok := ValueMaxSizes(decodeJSON(b, ti.typ))
		if !ok {
			// No part of a JSON text is larger than the text.
			vs = Sizes{Elems: len(b), Bytes: len(b)}
		}
		*s = s.Max(vs)
	}
}

// MaxSizes measures what of obj p keeps, as [MaxSizes] measures obj: the
// largest list or map and string an expression can meet when it reads
// only the paths of p (see [Paths]). It walks those paths only: a value at
// the end of a path is measured whole, as is a map or a struct whose
// members are iterated over (Elements), and a list whose paths go on into
// its elements counts its length and the elements' parts the paths keep.
// A nil p measures obj whole.
func (p *Paths) MaxSizes(obj any) Sizes {
	if p == nil {
		return MaxSizes(obj)
	}
	var s Sizes
	if obj != nil {
		v := reflect.ValueOf(obj)
		measureAt(infoFor(v.Type()), v, p, &s)
	}
	return s
}

// measureAt adds the sizes of the parts of v, of type ti.typ, that keep
// keeps (nil: all of v) to s.
func measureAt(ti *typeInfo, v reflect.Value, keep *Paths, s *Sizes) {
	if keep == nil {
		ti.measure(v, s)
		return
	}
	switch ti.kind {
	case kindPointer:
		if !v.IsNil() {
			measureAt(ti.elem, v.Elem(), keep, s)
		}
	case kindInterface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		switch x := e.Interface().(type) {
		case map[string]any, []any:
			measureAnyAt(x, keep, s)
			return
		}
		measureAt(infoFor(e.Type()), e, keep, s)
	case kindStruct:
		if keep.Iterated() || ti.fields == nil {
			ti.measure(v, s) // its members read as a map's entries
			return
		}
		for name, child := range keep.children {
			f, ok := ti.fields.byName[name]
			if !ok {
				continue
			}
			fv, ok := f.get(v)
			if !ok {
				continue
			}
			s.bytes(len(name))
			if f.quoted {
				s.bytes(32)
				continue
			}
			measureAt(f.info, fv, child, s)
		}
	case kindSlice, kindArray:
		each, ok := keep.ElementPaths()
		if !ok {
			ti.measure(v, s)
			return
		}
		n := v.Len()
		s.elems(n)
		for i := range n {
			measureAt(ti.elem, v.Index(i), each, s)
		}
	case kindMap:
		if m, ok := v.Interface().(map[string]any); ok {
			measureMapAt(m, keep, s)
			return
		}
		if keep.Iterated() || ti.typ.Key().Kind() != reflect.String || ti.elem.addrOnly {
			ti.measure(v, s)
			return
		}
		// Entries read by their keys (requests.cpu): those entries.
		for name, child := range keep.children {
			e := v.MapIndex(reflect.ValueOf(name).Convert(ti.typ.Key()))
			if !e.IsValid() {
				continue
			}
			s.bytes(len(name))
			measureAt(ti.elem, e, child, s)
		}
	default:
		ti.measure(v, s)
	}
}

// measureAnyAt is measureAt for v, a value of an unstructured object.
func measureAnyAt(v any, keep *Paths, s *Sizes) {
	if keep != nil {
		switch x := v.(type) {
		case map[string]any:
			measureMapAt(x, keep, s)
			return
		case []any:
			measureListAt(x, keep, s)
			return
		}
	}
	*s = s.Max(MaxSizes(v))
}

// measureMapAt and measureListAt are measureAt for the maps and lists of
// an unstructured object.
func measureMapAt(m map[string]any, keep *Paths, s *Sizes) {
	if keep.Iterated() {
		*s = s.Max(MaxSizes(m))
		return
	}
	for name, child := range keep.children {
		if v, ok := m[name]; ok {
			s.bytes(len(name))
			measureAnyAt(v, child, s)
		}
	}
}

func measureListAt(l []any, keep *Paths, s *Sizes) {
	each, ok := keep.ElementPaths()
	if !ok {
		*s = s.Max(MaxSizes(l))
		return
	}
	s.elems(len(l))
	for _, e := range l {
		measureAnyAt(e, each, s)
	}
}
