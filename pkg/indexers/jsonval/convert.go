package jsonval

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// value presents v, a value of type ti.typ, as CEL sees its JSON form.
// Composite values are wrapped, not converted.
func (ti *typeInfo) value(v reflect.Value) ref.Val {
	switch ti.kind {
	case kindBool:
		return types.Bool(v.Bool())
	case kindInt:
		return types.Int(v.Int())
	case kindUint:
		return uintValue(v.Uint())
	case kindFloat:
		return floatValue(v.Float(), ti.bits)
	case kindString:
		return stringValue(v.String())
	case kindBytes:
		if v.IsNil() {
			return types.NullValue
		}
		return types.String(base64.StdEncoding.EncodeToString(v.Bytes()))
	case kindStruct:
		return &structValue{info: ti, v: v}
	case kindMap:
		if v.IsNil() {
			return types.NullValue
		}
		return &mapValue{info: ti, v: v}
	case kindSlice:
		if v.IsNil() {
			return types.NullValue
		}
		return &listValue{info: ti, v: v}
	case kindArray:
		return &listValue{info: ti, v: v}
	case kindPointer:
		if v.IsNil() {
			return types.NullValue
		}
		return ti.elem.value(v.Elem())
	case kindInterface:
		if v.IsNil() {
			return types.NullValue
		}
		e := v.Elem()
		return infoFor(e.Type()).value(e)
	}
	if !v.CanInterface() {
		return types.NewErr("json: cannot read value of type %v through an unexported field", ti.typ)
	}
	switch ti.kind {
	case kindTime:
		return timeValue(as[metav1.Time](v).Time, time.RFC3339)
	case kindMicroTime:
		return timeValue(as[metav1.MicroTime](v).Time, metav1.RFC3339Micro)
	case kindQuantity:
		q := as[resource.Quantity](v) // String caches its result in q: use a copy
		return types.String(q.String())
	case kindIntOrString:
		return intOrStringValue(as[intstr.IntOrString](v))
	case kindMarshaler:
		return marshalerValue(ti, v)
	case kindTextMarshaler:
		return textMarshalerValue(ti, v)
	}
	return types.NewErr("json: unsupported type: %v", ti.typ)
}

// as returns the value of v, whose type is exactly T, without boxing a copy
// when v is addressable.
func as[T any](v reflect.Value) T {
	if v.CanAddr() {
		return *v.Addr().Interface().(*T)
	}
	return v.Interface().(T)
}

// uintValue presents an unsigned integer as the JSON decoding does: int64, or
// float64 beyond its range.
func uintValue(u uint64) ref.Val {
	if u > math.MaxInt64 {
		return types.Double(float64(u))
	}
	return types.Int(int64(u))
}

// floatValue presents a float as decoding encoding/json's text of it does: an
// int64 when the text is an integer within range, else the float64 the text
// parses to.
func floatValue(f float64, bits int) ref.Val {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return types.NewErr("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, bits))
	}
	if f == math.Trunc(f) {
		// Integers this small are written exactly.
		if math.Abs(f) <= 1<<24 || bits == 64 && math.Abs(f) <= 1<<53 {
			return types.Int(int64(f))
		}
		// Below 1e21, encoding/json writes the shortest round-tripping
		// digits padded with zeros, which may not fit an int64.
		if math.Abs(f) < 1e21 {
			if n, err := strconv.ParseInt(strconv.FormatFloat(f, 'f', -1, bits), 10, 64); err == nil {
				return types.Int(n)
			}
		}
	}
	if bits == 32 {
		// The text is the shortest decimal that round-trips as float32.
		f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', -1, 32), 64)
	}
	return types.Double(f)
}

// stringValue presents a string as encoding/json writes it: each byte of
// invalid UTF-8 becomes U+FFFD.
func stringValue(s string) ref.Val {
	return types.String(validUTF8(s))
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // utf8.RuneError for an invalid byte
		i += size
	}
	return b.String()
}

func timeValue(t time.Time, layout string) ref.Val {
	if t.IsZero() {
		return types.NullValue
	}
	return types.String(t.UTC().Format(layout))
}

func intOrStringValue(v intstr.IntOrString) ref.Val {
	switch v.Type {
	case intstr.Int:
		return types.Int(v.IntVal)
	case intstr.String:
		return stringValue(v.StrVal)
	}
	return types.NewErr("json: error calling MarshalJSON for type intstr.IntOrString: impossible IntOrString.Type")
}

func marshalerValue(ti *typeInfo, v reflect.Value) ref.Val {
	var m json.Marshaler
	if ti.addrOnly {
		if !v.CanAddr() {
			return ti.plain.value(v)
		}
		m = v.Addr().Interface().(json.Marshaler)
	} else {
		m = v.Interface().(json.Marshaler)
	}
	b, err := m.MarshalJSON()
	if err != nil {
		return types.NewErr("json: error calling MarshalJSON for type %v: %v", ti.typ, err)
	}
	return decodeJSON(b, ti.typ)
}

func textMarshalerValue(ti *typeInfo, v reflect.Value) ref.Val {
	var m encoding.TextMarshaler
	if ti.addrOnly {
		if !v.CanAddr() {
			return ti.plain.value(v)
		}
		m = v.Addr().Interface().(encoding.TextMarshaler)
	} else {
		m = v.Interface().(encoding.TextMarshaler)
	}
	b, err := m.MarshalText()
	if err != nil {
		return types.NewErr("json: error calling MarshalText for type %v: %v", ti.typ, err)
	}
	return stringValue(string(b))
}

// decodeJSON presents JSON text exactly as CEL sees it in an unstructured
// object: decoded by k8s.io/apimachinery/pkg/util/json and adapted by cel-go's
// default type adapter.
func decodeJSON(b []byte, t reflect.Type) ref.Val {
	var out any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		return types.NewErr("json: invalid JSON from MarshalJSON for type %v: %v", t, err)
	}
	return types.DefaultTypeAdapter.NativeToValue(out)
}

// quotedValue presents a scalar field tagged ",string": its JSON text becomes
// a string.
func quotedValue(ti *typeInfo, v reflect.Value) ref.Val {
	for ti.kind == kindPointer {
		if v.IsNil() {
			return types.NullValue
		}
		ti, v = ti.elem, v.Elem()
	}
	switch ti.kind {
	case kindBool, kindInt, kindUint, kindFloat, kindString:
		if !v.CanInterface() {
			break
		}
		b, err := json.Marshal(v.Interface())
		if err != nil {
			return types.NewErr("json: %v", err)
		}
		return types.String(b)
	}
	return ti.value(v)
}
