package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// itemJSON appends to dst the JSON of item as the List kubectl get prints
// holds it: the encoding of content(item), with every object's keys sorted
// as encoding/json sorts a map's, compact or, with ind, as json.Indent
// indents it. A typed object is encoded from a shallow copy stamped with
// its kind, without converting it to a map first, which costs several
// times the encoding; its members are then sorted and indented in one
// pass. Anything else is encoded from content.
func (p *Printer) itemJSON(dst *bytes.Buffer, item Item, ind *indent) error {
	if _, ok := item.Object.(*unstructured.Unstructured); !ok && !strings.EqualFold(p.output, "name") {
		if obj, ok := p.printedCopy(item); ok {
			raw, err := json.Marshal(obj)
			if err == nil {
				return sortMembers(dst, raw, ind)
			}
		}
	}
	content, err := p.content(item)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return err
	}
	if ind != nil {
		return json.Indent(dst, raw, ind.prefix, ind.unit)
	}
	dst.Write(raw)
	return nil
}

// printedCopy returns a shallow copy of a typed object with what content
// changes of it: its apiVersion and kind, no managed fields in -o json
// and yaml (unless shown), the cluster annotation over several clusters.
// The cached object is not changed. ok is false for objects it cannot
// copy so.
func (p *Printer) printedCopy(item Item) (runtime.Object, bool) {
	gvk, err := p.kindOf(item.Object)
	if err != nil {
		return nil, false
	}
	v := reflect.ValueOf(item.Object)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	obj, ok := c.Interface().(runtime.Object)
	if !ok {
		return nil, false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, false
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	if !p.opts.ShowManagedFields && isJSONOrYAML(p.output) {
		m.SetManagedFields(nil)
	}
	if p.opts.Clusters {
		annotations := maps.Clone(m.GetAnnotations())
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[ClusterAnnotation] = item.Cluster
		m.SetAnnotations(annotations)
	}
	return obj, true
}

// member is one member of a JSON object being sorted: its key, decoded,
// and its key and value as written.
type member struct {
	key        string
	raw, value []byte
}

var memberLists = sync.Pool{New: func() any { return new([]member) }}

// indent is the indentation json.Indent gives JSON: a new line for each
// member of an object or element of a list, starting with prefix and unit
// once per depth; "key": value with a blank; empty objects and lists stay
// {} and []. A nil *indent writes compact JSON.
type indent struct {
	prefix, unit string
	depth        int
}

// newline starts a line at the depth.
func (d *indent) newline(dst *bytes.Buffer) {
	if d == nil {
		return
	}
	dst.WriteByte('\n')
	dst.WriteString(d.prefix)
	for range d.depth {
		dst.WriteString(d.unit)
	}
}

// enter starts the first line inside an object or list.
func (d *indent) enter(dst *bytes.Buffer) {
	if d != nil {
		d.depth++
		d.newline(dst)
	}
}

// leave starts the line of the end of an object or list.
func (d *indent) leave(dst *bytes.Buffer) {
	if d != nil {
		d.depth--
		d.newline(dst)
	}
}

// colon writes what separates a key from its value.
func (d *indent) colon(dst *bytes.Buffer) {
	if d == nil {
		dst.WriteByte(':')
	} else {
		dst.WriteString(": ")
	}
}

// sortMembers appends src, compact JSON as encoding/json writes it, to dst
// with the members of every object in the order of their keys, compared
// as Go strings, as encoding/json orders a map's keys; indented as
// json.Indent indents it with ind's prefix and unit, or compact when ind is
// nil, in the same pass.
func sortMembers(dst *bytes.Buffer, src []byte, ind *indent) error {
	if ind != nil {
		ind = &indent{prefix: ind.prefix, unit: ind.unit}
	}
	rest, err := sortValue(dst, src, ind)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return errors.New("sorting JSON: data after the value")
	}
	return nil
}

// sortValue writes the value at the start of src, sorted, and returns
// what follows it.
func sortValue(dst *bytes.Buffer, src []byte, ind *indent) ([]byte, error) {
	if len(src) == 0 {
		return nil, errors.New("sorting JSON: a value is missing")
	}
	switch src[0] {
	case '{':
		return sortObject(dst, src, ind)
	case '[':
		dst.WriteByte('[')
		src = src[1:]
		if len(src) > 0 && src[0] == ']' {
			dst.WriteByte(']')
			return src[1:], nil
		}
		ind.enter(dst)
		for {
			var err error
			if src, err = sortValue(dst, src, ind); err != nil {
				return nil, err
			}
			if len(src) == 0 {
				return nil, errors.New("sorting JSON: a list is not closed")
			}
			switch src[0] {
			case ']':
				ind.leave(dst)
				dst.WriteByte(']')
				return src[1:], nil
			case ',':
				dst.WriteByte(',')
				ind.newline(dst)
				src = src[1:]
			default:
				return nil, errors.New("sorting JSON: a list is not closed")
			}
		}
	default:
		n, err := scalarLen(src)
		if err != nil {
			return nil, err
		}
		dst.Write(src[:n])
		return src[n:], nil
	}
}

// sortObject writes the object at the start of src with its members
// sorted, and returns what follows it.
func sortObject(dst *bytes.Buffer, src []byte, ind *indent) ([]byte, error) {
	list := memberLists.Get().(*[]member)
	members := (*list)[:0]
	defer func() {
		clear(members)
		*list = members[:0]
		memberLists.Put(list)
	}()
	src = src[1:]
	for i := 0; ; i++ {
		if len(src) > 0 && src[0] == '}' {
			src = src[1:]
			break
		}
		if i > 0 {
			if len(src) == 0 || src[0] != ',' {
				return nil, errors.New("sorting JSON: an object is not closed")
			}
			src = src[1:]
		}
		n, err := scalarLen(src)
		if err != nil || n < 2 || src[0] != '"' || len(src) <= n || src[n] != ':' {
			return nil, errors.New("sorting JSON: a member has no key")
		}
		m := member{raw: src[:n]}
		if bytes.IndexByte(m.raw, '\\') < 0 {
			m.key = string(m.raw[1 : n-1])
		} else if err := json.Unmarshal(m.raw, &m.key); err != nil {
			return nil, err
		}
		src = src[n+1:]
		end, err := valueLen(src)
		if err != nil {
			return nil, err
		}
		m.value, src = src[:end], src[end:]
		members = append(members, m)
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	dst.WriteByte('{')
	if len(members) == 0 {
		dst.WriteByte('}')
		return src, nil
	}
	ind.enter(dst)
	for i, m := range members {
		if i > 0 {
			dst.WriteByte(',')
			ind.newline(dst)
		}
		dst.Write(m.raw)
		ind.colon(dst)
		if _, err := sortValue(dst, m.value, ind); err != nil {
			return nil, err
		}
	}
	ind.leave(dst)
	dst.WriteByte('}')
	return src, nil
}

// scalarLen returns the length of the string, number, true, false or null
// at the start of src.
func scalarLen(src []byte) (int, error) {
	if len(src) > 0 && src[0] == '"' {
		for i := 1; i < len(src); i++ {
			switch src[i] {
			case '\\':
				i++
			case '"':
				return i + 1, nil
			}
		}
		return 0, errors.New("sorting JSON: a string is not closed")
	}
	i := 0
	for i < len(src) && src[i] != ',' && src[i] != ':' && src[i] != ']' && src[i] != '}' {
		i++
	}
	if i == 0 {
		return 0, errors.New("sorting JSON: a value is missing")
	}
	return i, nil
}

// valueLen returns the length of the value at the start of src.
func valueLen(src []byte) (int, error) {
	if len(src) == 0 {
		return 0, errors.New("sorting JSON: a value is missing")
	}
	if src[0] != '{' && src[0] != '[' {
		return scalarLen(src)
	}
	depth := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '"':
			n, err := scalarLen(src[i:])
			if err != nil {
				return 0, err
			}
			i += n - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
	}
	return 0, errors.New("sorting JSON: an object or list is not closed")
}
