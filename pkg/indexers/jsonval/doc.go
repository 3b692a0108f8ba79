// Package jsonval presents typed Go API objects to CEL as their JSON form,
// lazily.
//
// New wraps a Go value, typically a *corev1.Pod or any other object held in a
// typed informer cache, in a CEL value (ref.Val) that looks exactly like the
// object after json.Marshal and a decode into unstructured maps, which is what
// CEL sees for the same object from a dynamic informer and what admission
// policies see as `object`:
//
//   - structs and string-keyed maps are maps (traits.Mapper) keyed by the JSON
//     field names, honouring json tags: renamed fields, "-", omitempty,
//     omitzero, ",string" and embedded (inline) structs with the precedence
//     rules of encoding/json;
//   - slices and arrays are lists (traits.Lister); []byte is a base64 string;
//   - integers are int, and floats are int when their JSON text is an integer
//     and double otherwise, as k8s.io/apimachinery/pkg/util/json decodes them;
//   - metav1.Time and metav1.MicroTime are RFC 3339 strings (null when zero),
//     resource.Quantity is its canonical string, intstr.IntOrString is an int
//     or a string; any other json.Marshaler or encoding.TextMarshaler is
//     marshalled and decoded on access;
//   - a nil pointer, slice or map is null, or absent when the field is
//     omitempty.
//
// Maps iterate in the order json.Marshal writes them: struct members in
// declaration order, map keys sorted. (Maps decoded from JSON iterate in
// random order, so only order-independent results are the same.)
//
// Nothing is converted until an expression reads it: selecting
// object.status.phase reads two struct fields and builds one string. Per-type
// tables (JSON names, index paths, omit rules) are built once per reflect.Type
// and shared by all values.
//
// ToNative materialises any CEL value, including these views, into the plain
// Go data model of encoding/json (map[string]any, []any, string, int64,
// float64, bool, nil), for printing.
//
// # Contract
//
// A value returned by New never modifies the wrapped object, and is safe for
// concurrent use by multiple goroutines as long as nobody modifies the object.
// Objects from an informer cache are shared and must never be mutated, so they
// can be wrapped as they are, without a DeepCopy. ConvertToNative and Value may
// return pointers into the wrapped object; those are read-only too.
//
// Values of unsupported kinds (channels, functions, complex numbers, NaN and
// infinite floats, maps with unsupported keys), and marshallers that fail,
// yield CEL error values where json.Marshal would fail: when the member is
// read, or tested with has().
//
// The view shows what the Go object holds. Typed clients and informers leave
// TypeMeta empty, so object.kind and object.apiVersion are absent unless they
// are set, in an informer transform for instance.
//
// It imports no package of the project.
package jsonval
