package jsonval

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unsafe"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/util/sets"
)

// field is one JSON member of a struct type.
type field struct {
	name  string
	key   ref.Val // name as a CEL string
	index []int   // path through embedded structs, as for reflect.Value.FieldByIndex
	info  *typeInfo

	omitEmpty bool
	omitZero  bool
	isZero    func(reflect.Value) bool // IsZero method used by omitzero; nil: reflect.Value.IsZero
	quoted    bool                     // ",string": the scalar is presented as its JSON text

	// empty, when not emptyUnknown, tells an omitempty member of the
	// struct itself (not of an embedded one) absent by reading its memory
	// at offset in an addressable struct, without a reflect.Value of it.
	empty  emptyTest
	offset uintptr

	tagged bool // name comes from a json tag; used only while building
}

// emptyTest is how a member's memory tells it empty, as isEmptyValue does.
type emptyTest uint8

const (
	emptyUnknown emptyTest = iota
	emptyNil               // a pointer; a map when nil (a map that is not nil is tested by isEmptyValue)
	emptyLen               // a string or slice: its length, the word after its data pointer
	emptyByte              // bool, int8, uint8
	emptyWord16
	emptyWord32
	emptyWord64
	emptyFloat32 // 0 and -0 are empty
	emptyFloat64
)

// emptyTestOf returns the emptyTest of a member of type t.
func emptyTestOf(t reflect.Type) emptyTest {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map:
		return emptyNil
	case reflect.String, reflect.Slice:
		return emptyLen
	case reflect.Bool, reflect.Int8, reflect.Uint8:
		return emptyByte
	case reflect.Int16, reflect.Uint16:
		return emptyWord16
	case reflect.Int32, reflect.Uint32:
		return emptyWord32
	case reflect.Float32:
		return emptyFloat32
	case reflect.Float64:
		return emptyFloat64
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint64, reflect.Uintptr:
		if t.Size() == 8 {
			return emptyWord64
		}
	}
	return emptyUnknown
}

// isEmptyAt reports whether the member at p, of f's type, is empty; for a
// map that is not nil it answers false, and get tests its length.
func (f *field) isEmptyAt(p unsafe.Pointer) bool {
	switch f.empty {
	case emptyNil:
		return *(*unsafe.Pointer)(p) == nil
	case emptyLen:
		return *(*int)(unsafe.Add(p, unsafe.Sizeof(uintptr(0)))) == 0
	case emptyByte:
		return *(*uint8)(p) == 0
	case emptyWord16:
		return *(*uint16)(p) == 0
	case emptyWord32:
		return *(*uint32)(p) == 0
	case emptyWord64:
		return *(*uint64)(p) == 0
	case emptyFloat32:
		return *(*float32)(p) == 0
	case emptyFloat64:
		return *(*float64)(p) == 0
	}
	return false
}

// structFields lists the JSON members of a struct type in encoding order.
type structFields struct {
	list   []field
	byName map[string]*field
}

// get returns the member in struct value v, and false when the member is absent
// from the JSON form: omitted as empty or zero, or inside a nil embedded
// pointer.
func (f *field) get(v reflect.Value) (reflect.Value, bool) {
	if f.empty != emptyUnknown && v.CanAddr() {
		// An absent member is told without making a reflect.Value of it.
		p := unsafe.Add(unsafe.Pointer(v.UnsafeAddr()), f.offset) //nolint:gosec // G103: within the struct, at the offset reflect gave
		if f.isEmptyAt(p) {
			return reflect.Value{}, false
		}
		if fv := v.Field(f.index[0]); fv.Kind() != reflect.Map || fv.Len() > 0 {
			return fv, true
		}
		return reflect.Value{}, false
	}
	for i, x := range f.index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	if f.omitEmpty && isEmptyValue(v) {
		return reflect.Value{}, false
	}
	if f.omitZero {
		if f.isZero != nil && f.isZero(v) || f.isZero == nil && v.IsZero() {
			return reflect.Value{}, false
		}
	}
	return v, true
}

// value presents the member value fv, as returned by get.
func (f *field) value(fv reflect.Value) ref.Val {
	if f.quoted {
		return quotedValue(f.info, fv)
	}
	return f.info.value(fv)
}

// isEmptyValue is encoding/json's omitempty test.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// structFields computes the JSON members of struct type t with the rules of
// encoding/json: embedded structs without a tag name are flattened breadth
// first, and for each name the shallowest field wins, a tagged one over an
// untagged one at the same depth; other ties drop the name altogether.
func (b *builder) structFields(t reflect.Type) *structFields {
	type embedded struct {
		typ   reflect.Type
		index []int
	}
	var fields []field
	next := []embedded{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := sets.New[reflect.Type]()

	for len(next) > 0 {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}

		for _, e := range current {
			if visited.Has(e.typ) {
				continue
			}
			visited.Insert(e.typ)

			for i := range e.typ.NumField() {
				sf := e.typ.Field(i)
				if !includeField(sf) {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !isValidTag(name) {
					name = ""
				}
				index := append(slices.Clip(e.index), i)

				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					// Flatten the embedded struct at the next depth.
					nextCount[ft]++
					if nextCount[ft] == 1 {
						next = append(next, embedded{typ: ft, index: index})
					}
					continue
				}

				f := field{
					name:      name,
					tagged:    name != "",
					index:     index,
					info:      b.build(sf.Type),
					omitEmpty: hasOption(opts, "omitempty"),
					omitZero:  hasOption(opts, "omitzero"),
					quoted:    hasOption(opts, "string") && isQuotable(ft.Kind()),
				}
				if f.name == "" {
					f.name = sf.Name
				}
				if f.omitZero {
					f.isZero = isZeroFunc(sf.Type)
				}
				if len(index) == 1 && f.omitEmpty && !f.omitZero {
					f.empty, f.offset = emptyTestOf(sf.Type), sf.Offset
				}
				fields = append(fields, f)
				if count[e.typ] > 1 {
					// The embedding struct appears more than once at this
					// depth: record a duplicate so that the name is dropped.
					fields = append(fields, f)
				}
			}
		}
	}

	return newStructFields(dominantFields(fields))
}

func newStructFields(list []field) *structFields {
	sf := &structFields{list: list, byName: make(map[string]*field, len(list))}
	for i := range sf.list {
		sf.list[i].key = types.String(sf.list[i].name)
		sf.byName[sf.list[i].name] = &sf.list[i]
	}
	return sf
}

// includeField reports whether encoding/json looks at struct field sf at all.
func includeField(sf reflect.StructField) bool {
	if !sf.Anonymous {
		return sf.IsExported()
	}
	t := sf.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// Embedded structs of unexported types may still have exported fields.
	return sf.IsExported() || t.Kind() == reflect.Struct
}

// dominantFields keeps, for each name, the field that encoding/json encodes,
// and returns the survivors in field index order.
func dominantFields(fields []field) []field {
	slices.SortFunc(fields, func(a, b field) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return +1
		}
		return slices.Compare(a.index, b.index)
	})
	out := fields[:0]
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		// The first of a run is dominant unless the second is as shallow and
		// as tagged.
		if j-i == 1 || len(fields[i].index) != len(fields[i+1].index) || fields[i].tagged != fields[i+1].tagged {
			out = append(out, fields[i])
		}
		i = j
	}
	slices.SortFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	return out
}

// isZeroFunc returns the omitzero test for a field of type t that has an IsZero
// method, and nil for other types.
func isZeroFunc(t reflect.Type) func(reflect.Value) bool {
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() ||
				v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil() ||
				v.Interface().(interface{ IsZero() bool }).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() || v.Interface().(interface{ IsZero() bool }).IsZero()
		}
	case t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.Interface().(interface{ IsZero() bool }).IsZero()
		}
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				c := reflect.New(v.Type()).Elem()
				c.Set(v)
				v = c
			}
			return v.Addr().Interface().(interface{ IsZero() bool }).IsZero()
		}
	}
	return nil
}

func hasOption(opts, name string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == name {
			return true
		}
	}
	return false
}

func isQuotable(k reflect.Kind) bool {
	switch k {
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.String:
		return true
	}
	return false
}

// isValidTag is encoding/json's test for a usable tag name.
func isValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
			// Punctuation allowed in names.
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
