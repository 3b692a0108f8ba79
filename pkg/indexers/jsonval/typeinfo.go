package jsonval

import (
	"encoding"
	"encoding/json"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// kind says how values of one Go type are presented to CEL.
type kind uint8

const (
	kindUnsupported kind = iota // json.Marshal fails: channels, functions, complex numbers
	kindBool
	kindInt
	kindUint
	kindFloat
	kindString
	kindBytes // []byte: base64 string
	kindStruct
	kindMap
	kindSlice
	kindArray
	kindPointer
	kindInterface
	kindTime          // metav1.Time
	kindMicroTime     // metav1.MicroTime
	kindQuantity      // resource.Quantity
	kindIntOrString   // intstr.IntOrString
	kindMarshaler     // any other json.Marshaler
	kindTextMarshaler // encoding.TextMarshaler that is not a json.Marshaler
)

// keyKind says how map keys become JSON object keys.
type keyKind uint8

const (
	keyString keyKind = iota
	keyInt
	keyUint
	keyText
)

// typeInfo describes how one Go type is presented. A typeInfo is immutable once
// published in typeCache.
type typeInfo struct {
	typ  reflect.Type
	kind kind
	bits int // float size for kindFloat

	elem   *typeInfo     // pointer, slice, array and map element
	key    keyKind       // map key encoding
	fields *structFields // kindStruct

	// addrOnly marks a marshaler whose method has a pointer receiver: it is
	// used only for addressable values, as encoding/json does, and plain
	// presents the others.
	addrOnly bool
	plain    *typeInfo
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType      = reflect.TypeFor[interface{ IsZero() bool }]()

	timeType        = reflect.TypeFor[metav1.Time]()
	microTimeType   = reflect.TypeFor[metav1.MicroTime]()
	quantityType    = reflect.TypeFor[resource.Quantity]()
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()
)

var (
	// typeCache maps reflect.Type to its complete *typeInfo. Reads need no
	// lock; entries are stored only while holding buildMu.
	typeCache sync.Map

	// buildMu serialises building, so that each type, including recursive
	// ones, gets exactly one typeInfo.
	buildMu sync.Mutex
)

// infoFor returns the cached typeInfo of t, building it on first use.
func infoFor(t reflect.Type) *typeInfo {
	if ti, ok := typeCache.Load(t); ok {
		return ti.(*typeInfo)
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	b := builder{pending: map[reflect.Type]*typeInfo{}}
	ti := b.build(t)
	for t, ti := range b.pending {
		typeCache.Store(t, ti)
	}
	return ti
}

// builder builds the typeInfos of a type graph. Types under construction are
// kept in pending, which ends recursion; they are published together when the
// whole graph is complete. It is used only while holding buildMu.
type builder struct {
	pending map[reflect.Type]*typeInfo
}

func (b *builder) build(t reflect.Type) *typeInfo {
	if ti, ok := typeCache.Load(t); ok {
		return ti.(*typeInfo)
	}
	if ti, ok := b.pending[t]; ok {
		return ti
	}
	ti := &typeInfo{typ: t}
	b.pending[t] = ti
	b.classify(ti, true)
	return ti
}

// classify fills ti following encoding/json's choice of encoder for a type
// (newTypeEncoder); allowAddr is false for the presentation of values that are
// not addressable.
func (b *builder) classify(ti *typeInfo, allowAddr bool) {
	t := ti.typ
	switch t {
	case timeType:
		ti.kind = kindTime
		return
	case microTimeType:
		ti.kind = kindMicroTime
		return
	case quantityType:
		ti.kind = kindQuantity
		return
	case intOrStringType:
		ti.kind = kindIntOrString
		return
	}
	// Pointers and interfaces are followed: the pointed-to type decides.
	if k := t.Kind(); k != reflect.Pointer && k != reflect.Interface {
		if b.classifyMarshaler(ti, allowAddr, jsonMarshalerType, kindMarshaler) ||
			b.classifyMarshaler(ti, allowAddr, textMarshalerType, kindTextMarshaler) {
			return
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		ti.kind = kindBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		ti.kind = kindInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		ti.kind = kindUint
	case reflect.Float32, reflect.Float64:
		ti.kind = kindFloat
		ti.bits = t.Bits()
	case reflect.String:
		ti.kind = kindString
	case reflect.Struct:
		ti.kind = kindStruct
		ti.fields = b.structFields(t)
	case reflect.Map:
		b.classifyMap(ti)
	case reflect.Slice:
		if isByteSlice(t) {
			ti.kind = kindBytes
			return
		}
		ti.kind = kindSlice
		ti.elem = b.build(t.Elem())
	case reflect.Array:
		ti.kind = kindArray
		ti.elem = b.build(t.Elem())
	case reflect.Pointer:
		ti.kind = kindPointer
		ti.elem = b.build(t.Elem())
	case reflect.Interface:
		ti.kind = kindInterface
	default:
		ti.kind = kindUnsupported
	}
}

// classifyMarshaler reports whether t marshals itself through iface, and if so
// sets ti up for it.
func (b *builder) classifyMarshaler(ti *typeInfo, allowAddr bool, iface reflect.Type, k kind) bool {
	t := ti.typ
	if t.Implements(iface) {
		ti.kind = k
		return true
	}
	if allowAddr && reflect.PointerTo(t).Implements(iface) {
		ti.kind = k
		ti.addrOnly = true
		ti.plain = &typeInfo{typ: t}
		b.classify(ti.plain, false)
		return true
	}
	return false
}

func (b *builder) classifyMap(ti *typeInfo) {
	t := ti.typ
	switch t.Key().Kind() {
	case reflect.String:
		ti.key = keyString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		ti.key = keyInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		ti.key = keyUint
	default:
		if !t.Key().Implements(textMarshalerType) {
			ti.kind = kindUnsupported
			return
		}
		ti.key = keyText
	}
	// encoding/json prefers the string kind over MarshalText for keys, but
	// MarshalText over integer kinds.
	if ti.key != keyString && t.Key().Implements(textMarshalerType) {
		ti.key = keyText
	}
	ti.kind = kindMap
	ti.elem = b.build(t.Elem())
}

// isByteSlice reports whether encoding/json encodes slice type t as base64.
func isByteSlice(t reflect.Type) bool {
	if t.Elem().Kind() != reflect.Uint8 {
		return false
	}
	p := reflect.PointerTo(t.Elem())
	return !p.Implements(jsonMarshalerType) && !p.Implements(textMarshalerType)
}
