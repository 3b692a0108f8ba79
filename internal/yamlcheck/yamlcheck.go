// Package yamlcheck checks a YAML config file against the Go struct it
// decodes into, and reports every error found with the line of the YAML
// node at fault: unknown fields with a "did you mean", values of the wrong
// shape, duplicate keys, YAML tags read where a string was meant. The
// exporter's and the query's config files are read with it, so that both
// report mistakes the same way: "FILE:LINE: CONTEXT: message", every one
// of them, sorted by line.
package yamlcheck

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-informer/kubectl-informer/internal/suggest"
)

// Error is one error in a config file. Error() returns
// "FILE:LINE: CONTEXT: message", for example:
//
//	exporter.yaml:14: metric "kube_pod_info": type "histogram" is not supported; use gauge, counter or info
type Error struct {
	// Path is the config file.
	Path string
	// Line is the 1-based line of the YAML node at fault; 0 when the error
	// is about the file as a whole.
	Line int
	// Context names the entry at fault, such as `resource "pods"` or
	// `metric "kube_pod_info" label "node"`; empty at the top level.
	Context string
	// Err says what is wrong. For an expression that does not compile it
	// is an *indexers.ExprError (whose own context is left empty, as
	// Context says it), which shows the expression with a caret.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Context != "" {
		b.WriteString(e.Context)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Parser reads one config file and collects its errors, with the YAML nodes
// of every field so that errors and expressions can name their line.
type Parser struct {
	// Path is the file, for messages; Data its content.
	Path string
	Data []byte
	// Nodes are the key and value nodes of every field, map entry and
	// list element, by path (see NodeKey).
	Nodes map[string]FieldNodes
	// Malformed is set when a node does not have the shape its field
	// needs (a list for a string, a duplicate key, ...).
	Malformed bool
	// Fatal is set when the file cannot be decoded at all: nothing more
	// is checked.
	Fatal bool
	// Errs are the errors found so far.
	Errs []*Error

	// Nouns name struct types in messages about their fields, such as
	// "the config": "the fields of the config are …".
	Nouns map[reflect.Type]string
	// ElemContext, when set, names the i-th element e of a list of elem
	// type in messages, as the context of what is inside it; ok false
	// keeps the enclosing context and names the element FIELD[i].
	ElemContext func(elem reflect.Type, e *yaml.Node, context string, i int) (ctx string, ok bool)
	// IsExpr, when set, reports whether the field at path holds a CEL
	// expression: its messages then say how to quote one.
	IsExpr func(path []any) bool
}

// FieldNodes are the nodes of one field: key is nil for list elements.
type FieldNodes struct {
	Key, Value *yaml.Node
}

// New returns a Parser of data, the content of the file path.
func New(path string, data []byte) *Parser {
	return &Parser{Path: path, Data: data, Nodes: map[string]FieldNodes{}}
}

// NodeKey joins the parts of a path to a field, such as
// ("resources", 0, "metrics", 2, "labels", "node").
func NodeKey(parts ...any) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(0)
		}
		fmt.Fprint(&b, p)
	}
	return b.String()
}

// Errorf records an error at line.
func (p *Parser) Errorf(line int, context, format string, args ...any) {
	p.Errs = append(p.Errs, &Error{Path: p.Path, Line: line, Context: context, Err: fmt.Errorf(format, args...)})
}

// Add records err at line.
func (p *Parser) Add(line int, context string, err error) {
	p.Errs = append(p.Errs, &Error{Path: p.Path, Line: line, Context: context, Err: err})
}

// Err returns the errors found, sorted by line and joined (errors.Join),
// or nil.
func (p *Parser) Err() error {
	if len(p.Errs) == 0 {
		return nil
	}
	sort.SliceStable(p.Errs, func(i, j int) bool { return p.Errs[i].Line < p.Errs[j].Line })
	errs := make([]error, len(p.Errs))
	for i, e := range p.Errs {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// ValueNode returns the value node at path, or that of the nearest
// enclosing field that has one (a missing field is reported at the entry
// that lacks it).
func (p *Parser) ValueNode(parts ...any) *yaml.Node {
	for n := len(parts); n >= 0; n-- {
		if f, ok := p.Nodes[NodeKey(parts[:n]...)]; ok && f.Value != nil {
			return f.Value
		}
	}
	return nil
}

// Line returns the line of the value at path (see ValueNode); 1 when
// nothing is known.
func (p *Parser) Line(parts ...any) int {
	if n := p.ValueNode(parts...); n != nil {
		return n.Line
	}
	return 1
}

// KeyLine returns the line of the key of the map entry at path, for errors
// about the key itself.
func (p *Parser) KeyLine(parts ...any) int {
	if f, ok := p.Nodes[NodeKey(parts...)]; ok && f.Key != nil {
		return f.Key.Line
	}
	return p.Line(parts...)
}

// YAMLError records an error of yaml.v3 as one about the file as a whole:
// yaml.v3 gives the line it found at fault only in its message, which is
// kept as it is.
func (p *Parser) YAMLError(err error) {
	p.Errorf(0, "", "%v", err)
}

// Root reads the single YAML document of the file and returns its root,
// a mapping. When the file is empty, is not YAML, holds more than one
// document or a root that is not a mapping, the error is recorded (empty
// says what an empty file lacks; notMapping, with a %s for what the root
// is, what the root should be), Fatal is set and Root returns nil.
func (p *Parser) Root(empty, notMapping string) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(p.Data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		p.Fatal = true
		p.YAMLError(err)
		return nil
	}
	if len(doc.Content) == 0 {
		p.Fatal = true
		p.Errorf(0, "", "%s", empty)
		return nil
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		p.Fatal = true
		p.Errorf(next.Line, "", "a second YAML document; the config is a single document: remove this one or the \"---\" before it")
		return nil
	} else if !errors.Is(err, io.EOF) {
		p.Fatal = true
		p.YAMLError(err)
		return nil
	}
	root := ResolveAlias(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		p.Fatal = true
		p.Errorf(root.Line, "", notMapping, NodeKindName(root))
		return nil
	}
	p.Nodes[NodeKey()] = FieldNodes{Value: root}
	return root
}

// ResolveAlias returns the node an alias stands for.
func ResolveAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// NodeKindName names the kind of a node for messages.
func NodeKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a string"
	}
	return "empty"
}

// IsNull reports whether n is a YAML null.
func IsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// Field returns the value node of key in mapping n, aliases resolved, or
// nil when n is not a mapping or has no such key.
func Field(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for _, kv := range MappingPairs(n) {
		if kv[0].Value == key {
			return ResolveAlias(kv[1])
		}
	}
	return nil
}

// ScalarField returns the value of the scalar key of mapping n, or "".
func ScalarField(n *yaml.Node, key string) string {
	if v := Field(n, key); v != nil && v.Kind == yaml.ScalarNode && !IsNull(v) {
		return v.Value
	}
	return ""
}

// MappingPairs returns the key and value nodes of mapping n, those of merge
// keys ("<<: *anchor") after the explicit ones and only where no explicit
// key has their name, as YAML merges them.
func MappingPairs(n *yaml.Node) [][2]*yaml.Node {
	var pairs, merged [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			v = ResolveAlias(v)
			switch v.Kind {
			case yaml.MappingNode:
				merged = append(merged, MappingPairs(v)...)
			case yaml.SequenceNode:
				for _, m := range v.Content {
					if m = ResolveAlias(m); m.Kind == yaml.MappingNode {
						merged = append(merged, MappingPairs(m)...)
					}
				}
			}
			continue
		}
		pairs = append(pairs, [2]*yaml.Node{k, v})
	}
	for _, m := range merged {
		if !slices.ContainsFunc(pairs, func(kv [2]*yaml.Node) bool { return kv[0].Value == m[0].Value }) {
			pairs = append(pairs, m)
		}
	}
	return pairs
}

// Fields returns the fields of struct type t by YAML name, and the names
// in declaration order.
func Fields(t reflect.Type) (map[string]reflect.StructField, []string) {
	byName := map[string]reflect.StructField{}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		byName[name] = f
		names = append(names, name)
	}
	return byName, names
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// Walk checks that node n can be decoded into a value of type t: mappings
// where t is a struct or a map, lists where it is a slice, strings where
// it is a string or a type that unmarshals itself from one (a duration),
// and no unknown fields or duplicate keys. It records the nodes of every
// field under path. context names the entry n belongs to; field names n
// within it.
func (p *Parser) Walk(n *yaml.Node, t reflect.Type, path []any, context, field string) {
	n = ResolveAlias(n)
	if IsNull(n) {
		return // decodes to the zero value, as if absent
	}
	isExpr := p.IsExpr != nil && p.IsExpr(path)
	want := func(kind yaml.Kind, what string) bool {
		if n.Kind == kind {
			return true
		}
		p.Malformed = true
		msg := fmt.Sprintf("must be %s, not %s", what, NodeKindName(n))
		if kind == yaml.ScalarNode && isExpr {
			msg += `; quote an expression that starts with "{" or "[", or contains ": "`
		}
		if field == "" {
			p.Errorf(n.Line, context, "%s", msg)
		} else {
			p.Errorf(n.Line, context, "%s %s", field, msg)
		}
		return false
	}
	if t.Kind() == reflect.Struct && (reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)) {
		want(yaml.ScalarNode, "a string")
		return
	}
	switch t.Kind() {
	case reflect.String:
		if !want(yaml.ScalarNode, "a string") {
			return
		}
		if n.Tag != "" && n.Tag != "!" && !strings.HasPrefix(n.Tag, "!!") {
			p.Malformed = true
			msg := fmt.Sprintf("%s: %q was read as a YAML tag; quote a value that starts with \"!\"", field, n.Tag)
			if isExpr {
				msg += fmt.Sprintf(", as in %s: \"!has(object.spec.nodeName)\"", lastField(field))
			}
			p.Errorf(n.Line, context, "%s", msg)
		}
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		// Whether the scalar fits is for decoding to say.
		want(yaml.ScalarNode, "a "+t.Kind().String())
	case reflect.Pointer:
		p.Walk(n, t.Elem(), path, context, field)
	case reflect.Interface:
		// Anything goes.
	case reflect.Struct:
		if !want(yaml.MappingNode, "a mapping") {
			return
		}
		byName, names := Fields(t)
		seen := map[string]*yaml.Node{}
		for _, kv := range MappingPairs(n) {
			k, v := kv[0], kv[1]
			if !p.checkKey(k, seen, context) {
				continue
			}
			f, ok := byName[k.Value]
			if !ok {
				msg := fmt.Sprintf("unknown field %q", k.Value)
				if s, ok := suggest.Closest(k.Value, names); ok {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				} else {
					msg += fmt.Sprintf("; the fields of %s are %s", p.noun(t), strings.Join(names, ", "))
				}
				p.Errorf(k.Line, context, "%s", msg)
				continue
			}
			sub := append(slices.Clip(path), k.Value)
			p.Nodes[NodeKey(sub...)] = FieldNodes{Key: k, Value: ResolveAlias(v)}
			p.Walk(v, f.Type, sub, context, k.Value)
		}
	case reflect.Map:
		if !want(yaml.MappingNode, "a mapping") {
			return
		}
		seen := map[string]*yaml.Node{}
		for _, kv := range MappingPairs(n) {
			k, v := kv[0], kv[1]
			if !p.checkKey(k, seen, context) {
				continue
			}
			sub := append(slices.Clip(path), k.Value)
			p.Nodes[NodeKey(sub...)] = FieldNodes{Key: k, Value: ResolveAlias(v)}
			p.Walk(v, t.Elem(), sub, context, field+"."+k.Value)
		}
	case reflect.Slice:
		if !want(yaml.SequenceNode, "a list") {
			return
		}
		for i, e := range n.Content {
			sub := append(slices.Clip(path), i)
			e = ResolveAlias(e)
			p.Nodes[NodeKey(sub...)] = FieldNodes{Value: e}
			ctx, name := context, fmt.Sprintf("%s[%d]", field, i)
			if p.ElemContext != nil {
				if c, ok := p.ElemContext(t.Elem(), e, context, i); ok {
					ctx, name = c, ""
				}
			}
			p.Walk(e, t.Elem(), sub, ctx, name)
		}
	default:
		panic(fmt.Sprintf("yamlcheck: config field of unexpected type %s", t))
	}
}

// noun names struct type t in messages.
func (p *Parser) noun(t reflect.Type) string {
	if s, ok := p.Nouns[t]; ok {
		return s
	}
	return "this entry"
}

func lastField(field string) string {
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		return field[i+1:]
	}
	return field
}

// checkKey reports whether k is a string key seen for the first time in its
// mapping, and reports an error otherwise.
func (p *Parser) checkKey(k *yaml.Node, seen map[string]*yaml.Node, context string) bool {
	k = ResolveAlias(k)
	if k.Kind != yaml.ScalarNode {
		p.Malformed = true
		p.Errorf(k.Line, context, "a key is %s; keys must be strings", NodeKindName(k))
		return false
	}
	if first, dup := seen[k.Value]; dup {
		p.Malformed = true
		p.Errorf(k.Line, context, "%q is defined twice (first at line %d); keep one", k.Value, first.Line)
		return false
	}
	seen[k.Value] = k
	return true
}

// ExprLine returns the line of the file that holds the character of expr
// at the given 1-based line and column of the expression, expr being the
// value of scalar node n. YAML may have folded or unindented the
// expression, so the characters other than blanks of the expression are
// matched with those of the source, from where the scalar starts. When
// that fails (escape sequences), or for an error without a position, the
// line of the scalar is returned.
func (p *Parser) ExprLine(n *yaml.Node, expr string, line, column int) int {
	if n == nil {
		return 1
	}
	if line < 1 {
		return n.Line
	}
	// The index of the character at fault, then the number of non-blank
	// characters before it.
	runes := []rune(expr)
	at := 0
	for i, l := range strings.Split(expr, "\n") {
		if i == line-1 {
			at += max(column-1, 0)
			break
		}
		at += utf8.RuneCountInString(l) + 1
	}
	at = min(at, len(runes)-1)
	for at < len(runes)-1 && unicode.IsSpace(runes[at]) {
		at++
	}
	for at > 0 && unicode.IsSpace(runes[at]) {
		at--
	}
	var wanted []rune // the non-blank characters up to the one at fault
	for _, r := range runes[:at+1] {
		if !unicode.IsSpace(r) {
			wanted = append(wanted, r)
		}
	}
	if len(wanted) == 0 {
		return n.Line
	}

	src, fileLine, ok := p.scalarSource(n)
	if !ok {
		return n.Line
	}
	matched := 0
	for _, r := range src {
		switch {
		case r == '\n':
			fileLine++
		case unicode.IsSpace(r):
		case r == wanted[matched]:
			if matched++; matched == len(wanted) {
				return fileLine
			}
		case r == '\\' && n.Style == yaml.DoubleQuotedStyle, r == '\'' && n.Style == yaml.SingleQuotedStyle:
			// An escape: the character after it is the one to match.
		default:
			return n.Line
		}
	}
	return n.Line
}

// scalarSource returns the source from where the content of scalar n
// starts (past the header line of a block scalar, past the opening quote
// of a quoted one) and the line it is on.
func (p *Parser) scalarSource(n *yaml.Node) (string, int, bool) {
	data := p.Data
	line := 1
	for line < n.Line {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return "", 0, false
		}
		data, line = data[i+1:], line+1
	}
	// Column is 1-based, in characters.
	for col := 1; col < n.Column && len(data) > 0; col++ {
		_, size := utf8.DecodeRune(data)
		data = data[size:]
	}
	switch n.Style {
	case yaml.LiteralStyle, yaml.FoldedStyle:
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return "", 0, false
		}
		data, line = data[i+1:], line+1
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		if len(data) == 0 {
			return "", 0, false
		}
		data = data[1:]
	}
	return string(data), line, true
}
