package factory

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// A wirePruner removes, from the protobuf encoding of one kind of object
// and of its list, the fields that would be pruned once the object is
// decoded (see prepareFunc), so that they are never decoded: no strings,
// slices and maps allocated for a container's environment, probes and
// the like, or for managedFields, only to be dropped at once.
//
// It is an optimisation only: the objects decoded from the pruned bytes are
// then prepared as usual, and anything the pruner does not understand
// (another kind, an unexpected encoding) is passed through unchanged.
type wirePruner struct {
	// nodes maps a kind ("Pod", "PodList") to what its encoding keeps.
	nodes map[string]*wireNode
	// exact is set when an object decoded from a pruned encoding holds
	// exactly what jsonval.Prune would leave of it: it needs no pruning
	// after decoding, only trimming (see prepareFunc).
	exact bool
}

// wireNode says what to keep of the fields of one protobuf message, by
// field number. Numbers past the end of fields, or of a zero wireField,
// are dropped.
type wireNode struct {
	fields []wireField
}

type wireField struct {
	keep bool
	// child, when not nil, prunes the field's message (each element's,
	// for a repeated field); nil keeps it whole.
	child *wireNode
}

var objectMetaType = reflect.TypeFor[metav1.ObjectMeta]()

// newWirePruner returns the pruner for objects of gvk and their lists that
// keeps fields (nil: every field) and, with trim, drops
// metadata.managedFields. It returns nil when gvk is not a built-in type
// or when there is nothing to prune.
func newWirePruner(gvk schema.GroupVersionKind, fields *jsonval.Paths, trim bool) *wirePruner {
	if fields == nil && !trim {
		return nil
	}
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil
	}
	list, err := scheme.Scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil
	}
	exact := true
	item, whole := buildWireNode(reflect.TypeOf(obj).Elem(), fields, trim, &exact)
	if whole {
		return nil
	}
	// A list: its metadata, and its items pruned as the objects are.
	lt := reflect.TypeOf(list).Elem()
	listNode := &wireNode{}
	for i := range lt.NumField() {
		f := lt.Field(i)
		num, ok := protoNumber(f)
		if !ok {
			continue
		}
		switch jsonName(f) {
		case "metadata":
			listNode.set(num, wireField{keep: true})
		case "items":
			listNode.set(num, wireField{keep: true, child: item})
		}
	}
	return &wirePruner{nodes: map[string]*wireNode{gvk.Kind: item, gvk.Kind + "List": listNode}, exact: exact}
}

func (n *wireNode) set(num int, f wireField) {
	for len(n.fields) <= num {
		n.fields = append(n.fields, wireField{})
	}
	n.fields[num] = f
}

func (n *wireNode) field(num uint64) wireField {
	if num < uint64(len(n.fields)) {
		return n.fields[num]
	}
	return wireField{}
}

// buildWireNode returns what to keep of the encoding of the struct type t
// given the JSON paths kept (nil: everything); whole reports that all of it
// is kept. Like jsonval.Prune, it keeps maps and types with their own JSON
// encoding whole when a path reaches them, and lists unless the paths go
// on into their elements. With trim, t is an
// object whose metadata loses its managedFields, as trimObject does.
// *exact is cleared when a field is kept that Prune might drop.
func buildWireNode(t reflect.Type, keep *jsonval.Paths, trim bool, exact *bool) (node *wireNode, whole bool) {
	if keep == nil && !trim {
		return nil, true
	}
	if t.Kind() != reflect.Struct || hasOwnJSON(t) || keep.Iterated() {
		return nil, true // an object whose members are iterated over whole, as Prune keeps it
	}
	node = &wireNode{}
	whole = true
	keptAny := false
	for i := range t.NumField() {
		f := t.Field(i)
		num, ok := protoNumber(f)
		if !ok {
			continue // not encoded
		}
		name := jsonName(f)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		var wf wireField
		switch {
		case name == "" && f.Anonymous:
			// Inline in JSON, a message of its own in protobuf: its
			// members are the parent's.
			child, all := buildWireNode(ft, keep, false, exact)
			wf = wireField{keep: all || child.keepsAny(), child: child}
		case name == "-":
			// Encoded, but not a JSON member: Prune never reaches it.
			wf.keep, *exact = true, false
		default:
			sub, kept := keep.Child(name)
			if !kept {
				break
			}
			wf.keep = true
			switch {
			case trim && name == "metadata" && ft == objectMetaType:
				wf.child = trimmedMeta(sub, exact)
			case ft.Kind() == reflect.Struct:
				if child, all := buildWireNode(ft, sub, false, exact); !all {
					wf.child = child
				}
			case ft.Kind() == reflect.Slice:
				// A repeated message: each element pruned as Prune
				// prunes the elements of a list.
				each, ok := sub.ElementPaths()
				switch {
				case !ok || each == nil:
				case isMessage(ft.Elem()):
					if child, all := buildWireNode(ft.Elem(), each, false, exact); !all {
						wf.child = child
					}
				default:
					*exact = false // kept whole, which Prune may not
				}
			}
		}
		if !wf.keep || wf.child != nil {
			whole = false
		}
		keptAny = keptAny || wf.keep
		node.set(num, wf)
	}
	if whole {
		return nil, true
	}
	if !keptAny {
		return &wireNode{}, false
	}
	return node, false
}

// isMessage reports whether t, the element type of a slice, is encoded as a
// message of its own: a struct, not a pointer to one (Prune would keep a
// nil element as it is) nor a type with its own JSON form.
func isMessage(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && !hasOwnJSON(t)
}

// trimmedMeta returns what to keep of an ObjectMeta of which keep is kept
// (nil: all of it), without its managedFields.
func trimmedMeta(keep *jsonval.Paths, exact *bool) *wireNode {
	node, whole := buildWireNode(objectMetaType, keep, false, exact)
	if whole {
		node = &wireNode{}
		for i := range objectMetaType.NumField() {
			if num, ok := protoNumber(objectMetaType.Field(i)); ok {
				node.set(num, wireField{keep: true})
			}
		}
	}
	for i := range objectMetaType.NumField() {
		f := objectMetaType.Field(i)
		if num, ok := protoNumber(f); ok && jsonName(f) == "managedFields" {
			node.set(num, wireField{})
		}
	}
	return node
}

func (n *wireNode) keepsAny() bool {
	if n == nil {
		return false
	}
	for _, f := range n.fields {
		if f.keep {
			return true
		}
	}
	return false
}

// hasOwnJSON reports whether t encodes itself (Time, Quantity,
// IntOrString, RawExtension and the like): jsonval keeps those whole.
func hasOwnJSON(t reflect.Type) bool {
	m := reflect.TypeFor[json.Marshaler]()
	return t.Implements(m) || reflect.PointerTo(t).Implements(m)
}

// protoNumber returns the field number of a struct field's protobuf tag
// (`protobuf:"bytes,1,opt,name=metadata"`).
func protoNumber(f reflect.StructField) (int, bool) {
	tag := f.Tag.Get("protobuf")
	if tag == "" || tag == "-" {
		return 0, false
	}
	parts := strings.Split(tag, ",")
	if len(parts) < 2 {
		return 0, false
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n <= 0 || n > 1<<12 {
		return 0, false
	}
	return n, true
}

// jsonName is a struct field's JSON member name, "" when inline.
func jsonName(f reflect.StructField) string {
	tag, ok := f.Tag.Lookup("json")
	if !ok {
		if f.Anonymous {
			return ""
		}
		return f.Name
	}
	name, _, _ := strings.Cut(tag, ",")
	return name
}

// protobufPrefix starts every Kubernetes protobuf encoding; a
// runtime.Unknown envelope follows it.
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

var errWire = errors.New("unexpected protobuf encoding")

// maxPooledBuffer bounds the buffers kept for reuse: those of events, not
// of whole lists.
const maxPooledBuffer = 1 << 20

var wireBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// prune returns data, the protobuf encoding of an object in its envelope,
// with the fields the pruner drops removed, written to *buf; or data
// itself when the object is of another kind or not understood.
func (p *wirePruner) prune(data []byte, buf *[]byte) []byte {
	if len(data) < len(protobufPrefix) || string(data[:len(protobufPrefix)]) != string(protobufPrefix) {
		return data
	}
	env := data[len(protobufPrefix):]
	node := p.nodes[envelopeKind(env)]
	if node == nil {
		return data
	}
	out := append((*buf)[:0], protobufPrefix...)
	out, err := appendEnvelope(out, env, node)
	*buf = out[:0]
	if err != nil {
		return data
	}
	return out
}

// envelopeKind returns the kind named by a runtime.Unknown's TypeMeta
// (field 1; its kind is field 2), "" when none is found.
func envelopeKind(env []byte) string {
	kind := ""
	_ = eachField(env, func(num uint64, wt int, _, _, value []byte) error {
		if num == 1 && wt == 2 {
			_ = eachField(value, func(n uint64, w int, _, _, v []byte) error {
				if n == 2 && w == 2 {
					kind = string(v)
				}
				return nil
			})
		}
		return nil
	})
	return kind
}

// appendEnvelope appends the runtime.Unknown env with its raw object
// (field 2) pruned by node.
func appendEnvelope(dst, env []byte, node *wireNode) ([]byte, error) {
	err := eachField(env, func(num uint64, wt int, tag, field, value []byte) error {
		if num == 2 && wt == 2 {
			dst = appendMessage(dst, tag, value, node)
			return nil
		}
		dst = append(dst, field...)
		return nil
	})
	return dst, err
}

// appendPruned appends the fields of the message msg that node keeps.
func appendPruned(dst, msg []byte, node *wireNode) ([]byte, error) {
	err := eachField(msg, func(num uint64, wt int, tag, field, value []byte) error {
		f := node.field(num)
		switch {
		case !f.keep:
		case f.child == nil || wt != 2:
			dst = append(dst, field...)
		default:
			var err error
			dst, err = appendPrunedMessage(dst, tag, value, f.child)
			return err
		}
		return nil
	})
	return dst, err
}

// appendMessage appends tag, then msg pruned by node with its length; on
// an error inside msg it appends msg whole.
func appendMessage(dst, tag, msg []byte, node *wireNode) []byte {
	start := len(dst)
	out, err := appendPrunedMessage(dst, tag, msg, node)
	if err != nil {
		dst = append(dst[:start], tag...)
		dst = binary.AppendUvarint(dst, uint64(len(msg)))
		return append(dst, msg...)
	}
	return out
}

// appendPrunedMessage appends tag, the length of msg once pruned by node,
// and the pruned msg: it prunes msg in place after the tag and then moves
// it to make room for its length.
func appendPrunedMessage(dst, tag, msg []byte, node *wireNode) ([]byte, error) {
	dst = append(dst, tag...)
	start := len(dst)
	dst, err := appendPruned(dst, msg, node)
	if err != nil {
		return dst, err
	}
	n := len(dst) - start
	size := varintLen(uint64(n)) //nolint:gosec // G115: a length is never negative
	dst = append(dst, make([]byte, size)...)
	copy(dst[start+size:], dst[start:start+n])
	binary.PutUvarint(dst[start:], uint64(n)) //nolint:gosec // G115: a length is never negative
	return dst, nil
}

// eachField calls fn with each field of the protobuf message msg: its
// number, wire type, tag, whole encoding (tag included) and, for
// length-delimited fields, its value.
func eachField(msg []byte, fn func(num uint64, wt int, tag, field, value []byte) error) error {
	for i := 0; i < len(msg); {
		start := i
		tag, n := binary.Uvarint(msg[i:])
		if n <= 0 {
			return errWire
		}
		i += n
		num, wt := tag>>3, int(tag&7)
		tagLen := n
		var value []byte
		switch wt {
		case 0:
			_, n := binary.Uvarint(msg[i:])
			if n <= 0 {
				return errWire
			}
			i += n
		case 1:
			i += 8
		case 2:
			l, n := binary.Uvarint(msg[i:])
			if n <= 0 || l > uint64(len(msg)-i-n) { //nolint:gosec // G115: n bytes were read from msg[i:], so i+n <= len(msg)
				return errWire
			}
			i += n
			value = msg[i : i+int(l)] //nolint:gosec // G115: l <= len(msg)-i-n was checked above
			i += int(l)               //nolint:gosec // G115: l <= len(msg)-i-n was checked above
		case 5:
			i += 4
		default:
			return errWire // groups are not used by Kubernetes
		}
		if i > len(msg) || num == 0 {
			return errWire
		}
		if err := fn(num, wt, msg[start:start+tagLen], msg[start:i], value); err != nil {
			return err
		}
	}
	return nil
}

func varintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// pruningSerializer is a NegotiatedSerializer whose protobuf decoder
// prunes each object's encoding before decoding it.
type pruningSerializer struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

func newPruningSerializer(inner runtime.NegotiatedSerializer, p *wirePruner) runtime.NegotiatedSerializer {
	infos := append([]runtime.SerializerInfo(nil), inner.SupportedMediaTypes()...)
	for i := range infos {
		if infos[i].MediaType == runtime.ContentTypeProtobuf {
			infos[i].Serializer = pruningDecoder{Serializer: infos[i].Serializer, pruner: p}
		}
	}
	return pruningSerializer{NegotiatedSerializer: inner, infos: infos}
}

func (s pruningSerializer) SupportedMediaTypes() []runtime.SerializerInfo { return s.infos }

type pruningDecoder struct {
	runtime.Serializer
	pruner *wirePruner
}

// Decode prunes data and decodes it. The decoded object holds no
// reference to the bytes decoded (strings and byte slices are copied), so
// the buffer is reused.
func (d pruningDecoder) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	buf := wireBuffers.Get().(*[]byte)
	obj, actual, err := d.Serializer.Decode(d.pruner.prune(data, buf), gvk, into)
	if cap(*buf) <= maxPooledBuffer {
		wireBuffers.Put(buf)
	}
	return obj, actual, err
}
