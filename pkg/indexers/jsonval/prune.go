package jsonval

import (
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Paths is a set of JSON field paths to keep when pruning an object, as a
// tree: a path keeps the whole subtree at its end. The zero value keeps
// nothing; a nil *Paths keeps everything.
type Paths struct {
	// children maps a member name to what to keep below it; a nil child
	// keeps the member whole.
	children map[string]*Paths
}

// NewPaths returns the set of the given paths, each a list of JSON member
// names from the root ("status", "phase").
func NewPaths(paths ...[]string) *Paths {
	p := &Paths{}
	for _, path := range paths {
		p.Add(path)
	}
	return p
}

// Add keeps path (and everything below it). Adding a path below one already
// kept whole changes nothing; adding a prefix of kept paths keeps it whole.
// A path ending with Elements (every element whole) keeps the list whole.
func (p *Paths) Add(path []string) {
	for len(path) > 0 && path[len(path)-1] == Elements {
		path = path[:len(path)-1]
	}
	n := p
	for i, name := range path {
		if n.children == nil {
			n.children = map[string]*Paths{}
		}
		child, ok := n.children[name]
		if ok && child == nil {
			return // kept whole already
		}
		if i == len(path)-1 {
			n.children[name] = nil
			return
		}
		if !ok {
			child = &Paths{}
			n.children[name] = child
		}
		n = child
	}
}

// ElementPaths returns what p, the paths kept of a list, keeps of each of
// its elements, and whether it keeps the list element by element: only
// when every path of p goes on into the elements (see Elements), as Prune
// does. child is nil when the elements are kept whole.
func (p *Paths) ElementPaths() (child *Paths, ok bool) {
	if p == nil || len(p.children) != 1 {
		return nil, false
	}
	child, ok = p.children[Elements]
	return child, ok
}

// Iterated reports whether p, the paths kept of a map or an object, goes
// on through Elements: an expression iterates over its members, or reads
// how many there are, and it is kept whole.
func (p *Paths) Iterated() bool {
	if p == nil {
		return false
	}
	_, ok := p.children[Elements]
	return ok
}

// Child returns what p keeps below the member name: kept is false when the
// member is pruned, and child is nil when it is kept whole. A nil p keeps
// every member whole.
func (p *Paths) Child(name string) (child *Paths, kept bool) {
	if p == nil {
		return nil, true
	}
	child, kept = p.children[name]
	return child, kept
}

// Union adds every path of o to p. A nil o keeps everything, which p cannot
// express: Union reports false and p is then meaningless.
func (p *Paths) Union(o *Paths) bool {
	if o == nil {
		return false
	}
	for _, path := range o.List() {
		p.Add(path)
	}
	return true
}

// List returns the kept paths, sorted.
func (p *Paths) List() [][]string {
	var out [][]string
	var walk func(n *Paths, prefix []string)
	walk = func(n *Paths, prefix []string) {
		for name, child := range n.children {
			path := append(append([]string(nil), prefix...), name)
			if child == nil {
				out = append(out, path)
			} else {
				walk(child, path)
			}
		}
	}
	if p != nil {
		walk(p, nil)
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], ".") < strings.Join(out[j], ".") })
	return out
}

// String lists the paths as "a.b, c".
func (p *Paths) String() string {
	if p == nil {
		return "<everything>"
	}
	var parts []string
	for _, path := range p.List() {
		parts = append(parts, strings.Join(path, "."))
	}
	return strings.Join(parts, ", ")
}

// Prune removes from obj, in place, every JSON member not kept by keep, so
// that the object presents (through New, or once encoded) only the kept
// fields and their ancestors. obj must be a pointer to a struct, an
// *unstructured.Unstructured or a map[string]any; anything else is left as
// it is. A path goes on into the elements of a list through Elements
// (spec.containers[].name keeps each container's name, and its elements
// with nothing else): the list keeps its length, each element what the
// rest of the paths keep. A list reached by a path that does not go on
// with Elements, a map or an object whose members are iterated over (its
// paths go on with Elements), and a map of Go type, are kept whole. A nil
// keep prunes nothing.
//
// Prune modifies obj: call it only on objects nobody else holds yet, such
// as objects fresh from a decoder.
func Prune(obj any, keep *Paths) {
	if keep == nil {
		return
	}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		pruneMap(o.Object, keep)
		return
	case map[string]any:
		pruneMap(o, keep)
		return
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	pruneValue(v.Elem(), keep)
}

func pruneMap(m map[string]any, keep *Paths) {
	if keep.Iterated() {
		return
	}
	for k, v := range m {
		child, ok := keep.children[k]
		switch {
		case !ok:
			delete(m, k)
		case child != nil:
			pruneAny(v, child)
		}
	}
}

// pruneAny prunes v, a value of an unstructured object, in place.
func pruneAny(v any, keep *Paths) {
	switch v := v.(type) {
	case map[string]any:
		pruneMap(v, keep)
	case []any:
		if each, ok := keep.ElementPaths(); ok && each != nil {
			for _, e := range v {
				pruneAny(e, each)
			}
		}
	}
}

// pruneValue prunes the addressable value v.
func pruneValue(v reflect.Value, keep *Paths) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			pruneValue(v.Elem(), keep)
		}
		return
	case reflect.Interface:
		if !v.IsNil() {
			pruneAny(v.Interface(), keep)
		}
		return
	case reflect.Slice, reflect.Array:
		if each, ok := keep.ElementPaths(); ok && each != nil {
			for i := range v.Len() {
				pruneValue(v.Index(i), each)
			}
		}
		return
	case reflect.Struct:
	default:
		return // scalars and maps are kept whole
	}
	ti := infoFor(v.Type())
	if ti.kind != kindStruct || ti.fields == nil || keep.Iterated() {
		return // marshalers and the like, and members iterated over, are kept whole
	}
	for i := range ti.fields.list {
		f := &ti.fields.list[i]
		fv, ok := fieldByIndex(v, f.index)
		if !ok || !fv.CanSet() {
			continue
		}
		child, kept := keep.children[f.name]
		switch {
		case !kept:
			fv.Set(reflect.Zero(fv.Type()))
		case child != nil:
			pruneValue(fv, child)
		}
	}
}

// fieldByIndex follows index through embedded structs, stopping at nil
// embedded pointers.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// Covers reports whether every path of o is kept by p. A nil p covers
// everything; a nil o (everything) is covered only by a nil p.
func (p *Paths) Covers(o *Paths) bool {
	if p == nil {
		return true
	}
	if o == nil {
		return false
	}
	for _, path := range o.List() {
		n, whole := p, false
		for _, name := range path {
			child, ok := n.children[name]
			if !ok {
				return false
			}
			if child == nil {
				whole = true
				break
			}
			n = child
		}
		if !whole {
			return false // p keeps only part of what the path keeps
		}
	}
	return true
}
