package jsonval

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
)

// ToNative materialises a CEL value, such as the result of an expression, into
// the data model of encoding/json: map[string]any, []any, string, int64,
// float64, bool and nil.
//
// Views made by New become what json.Marshal and a decode with
// k8s.io/apimachinery/pkg/util/json make of the wrapped object. Other values:
// unsigned integers become int64, or float64 beyond its range; map keys that
// are ints, uints or bools become their text; optional values become their
// value or nil; type values become their name; bytes, timestamps, durations
// and messages become their protobuf JSON form (a base64 string, an RFC 3339
// string, "1.5s", ...).
//
// An error or unknown value, anywhere inside, is returned as an error, and so
// is nesting deeper than 10000 levels, which only a cyclic Go value reaches.
func ToNative(val ref.Val) (any, error) {
	return toNative(val, 0)
}

// maxDepth is the nesting limit of k8s.io/apimachinery/pkg/util/json.
const maxDepth = 10000

var errTooDeep = fmt.Errorf("exceeded max depth of %d", maxDepth)

func toNative(val ref.Val, depth int) (any, error) {
	switch v := val.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(v), nil
	case types.Int:
		return int64(v), nil
	case types.Uint:
		if v > math.MaxInt64 {
			return float64(v), nil
		}
		return int64(v), nil
	case types.Double:
		return float64(v), nil
	case types.String:
		return string(v), nil
	case *types.Err:
		return nil, v
	case ref.Type:
		return v.TypeName(), nil
	case *types.Unknown:
		return nil, fmt.Errorf("unknown value %v", v)
	case *types.Optional:
		if !v.HasValue() {
			return nil, nil
		}
		return toNative(v.GetValue(), depth)
	case traits.Mapper:
		if depth >= maxDepth {
			return nil, errTooDeep
		}
		return mapToNative(v, depth+1)
	case traits.Lister:
		if depth >= maxDepth {
			return nil, errTooDeep
		}
		return listToNative(v, depth+1)
	}
	j, err := val.ConvertToNative(types.JSONValueType)
	if err != nil {
		// Library types without a JSON form (quantity, ip, cidr, url,
		// semver) print as their text.
		if s, ok := val.Value().(fmt.Stringer); ok {
			return s.String(), nil
		}
		return nil, fmt.Errorf("cannot convert %s value to JSON: %w", val.Type().TypeName(), err)
	}
	return j.(*structpb.Value).AsInterface(), nil
}

func mapToNative(m traits.Mapper, depth int) (any, error) {
	n, _ := m.Size().(types.Int)
	out := make(map[string]any, int(n))
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		name, err := objectKey(k)
		if err != nil {
			return nil, err
		}
		v, found := m.Find(k)
		if !found {
			if types.IsUnknownOrError(v) {
				return toNative(v, depth)
			}
			return nil, fmt.Errorf("no such key: %v", k)
		}
		nv, err := toNative(v, depth)
		if err != nil {
			if errors.Is(err, errTooDeep) {
				return nil, err
			}
			return nil, fmt.Errorf("%q: %w", name, err)
		}
		out[name] = nv
	}
	return out, nil
}

// objectKey returns the JSON object key for a CEL map key.
func objectKey(k ref.Val) (string, error) {
	switch k := k.(type) {
	case types.String:
		return string(k), nil
	case types.Int:
		return strconv.FormatInt(int64(k), 10), nil
	case types.Uint:
		return strconv.FormatUint(uint64(k), 10), nil
	case types.Bool:
		return strconv.FormatBool(bool(k)), nil
	case *types.Err:
		return "", k
	}
	return "", fmt.Errorf("unsupported map key type %s", k.Type().TypeName())
}

func listToNative(l traits.Lister, depth int) (any, error) {
	n, ok := l.Size().(types.Int)
	if !ok {
		return toNative(l.Size(), depth)
	}
	out := make([]any, 0, int(n))
	for i := range n {
		nv, err := toNative(l.Get(i), depth)
		if errors.Is(err, errTooDeep) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		out = append(out, nv)
	}
	return out, nil
}

var (
	anyType      = reflect.TypeFor[any]()
	anyValueType = reflect.TypeFor[*anypb.Any]()
)

// convertToNative implements ConvertToNative for the views:
//   - any: the JSON form, as ToNative returns it;
//   - a type the view itself has (ref.Val, traits.Mapper, ...): the view;
//   - the type of the wrapped Go value or a pointer to it: the wrapped value,
//     which must not be modified;
//   - *structpb.Value, *structpb.Struct, *structpb.ListValue, *anypb.Any: the
//     JSON form as a protobuf message;
//   - any other type: the JSON form decoded into that type by encoding/json.
func convertToNative(val ref.Val, v reflect.Value, t reflect.Type) (any, error) {
	if t == anyType {
		return ToNative(val)
	}
	if reflect.TypeOf(val).AssignableTo(t) {
		return val, nil
	}
	if v.CanInterface() {
		if v.Type().AssignableTo(t) {
			return v.Interface(), nil
		}
		if v.CanAddr() && reflect.PointerTo(v.Type()).AssignableTo(t) {
			return v.Addr().Interface(), nil
		}
	}
	native, err := ToNative(val)
	if err != nil {
		return nil, err
	}
	switch t {
	case types.JSONValueType, types.JSONStructType, types.JSONListType, anyValueType:
		return jsonMessage(native, t)
	}
	if reflect.TypeOf(native).AssignableTo(t) {
		return native, nil
	}
	b, err := json.Marshal(native)
	if err != nil {
		return nil, err
	}
	out := reflect.New(t)
	if err := json.Unmarshal(b, out.Interface()); err != nil {
		return nil, fmt.Errorf("type conversion error to '%v': %w", t, err)
	}
	return out.Elem().Interface(), nil
}

// jsonMessage converts the JSON form to one of the well-known protobuf types.
func jsonMessage(native any, t reflect.Type) (any, error) {
	pv, err := structpb.NewValue(native)
	if err != nil {
		return nil, err
	}
	var msg proto.Message
	switch {
	case pv.GetStructValue() != nil:
		msg = pv.GetStructValue()
	case pv.GetListValue() != nil:
		msg = pv.GetListValue()
	}
	switch t {
	case types.JSONValueType:
		return pv, nil
	case anyValueType:
		if msg != nil {
			return anypb.New(msg)
		}
	case reflect.TypeOf(msg):
		return msg, nil
	}
	return nil, fmt.Errorf("type conversion error to '%v'", t)
}
