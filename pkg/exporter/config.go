package exporter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-informer/kubectl-informer/internal/suggest"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// LineError is one error in a config file. Error() returns
// "FILE:LINE: CONTEXT: message", for example:
//
//	exporter.yaml:14: metric "kube_pod_info": type "histogram" is not supported; use gauge, counter or info
//
// The errors of [Parse], [Compile] and [Load] join every LineError found
// in the file (errors.Join), sorted by line: their Unwrap() []error lists
// them, and errors.As finds the first.
type LineError struct {
	// Path is the config file.
	Path string
	// Line is the 1-based line of the YAML node at fault; 0 when the error
	// is about the file as a whole.
	Line int
	// Context names the entry at fault, such as `resource "pods"` or
	// `metric "kube_pod_info" label "node"`; empty at the top level.
	Context string
	// Err says what is wrong. For an expression that does not compile it
	// is an [*indexers.ExprError] (whose own context is left empty, as
	// Context says it), which shows the expression with a caret.
	Err error
}

// Error implements error.
func (e *LineError) Error() string {
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
func (e *LineError) Unwrap() error { return e.Err }

// Load reads the config file at path, checks it and compiles its
// expressions with env; see [Compile].
func Load(path string, env *indexers.Env) (*Compiled, error) {
	data, err := os.ReadFile(path) //nolint:gosec // G304: the config file the user names
	if err != nil {
		return nil, fmt.Errorf("reading the exporter config: %w", err)
	}
	return Compile(path, data, env)
}

// Parse decodes and checks the YAML of a config file without compiling its
// expressions; path is used in messages. Unknown fields are errors, as is
// anything docs/exporter-config.md says is invalid. Every error found is
// returned, joined and sorted by line, each a [*LineError] naming the
// line of the YAML node at fault.
func Parse(path string, data []byte) (*Config, error) {
	p, cfg := parseConfig(path, data)
	if err := p.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// configParser decodes a config file and collects its errors, with the
// YAML nodes of every field so that errors and expressions can name their
// line.
type configParser struct {
	path string
	data []byte
	// prefix is the config's prefix as written, for the names of metrics
	// in messages before the config is decoded.
	prefix string
	// nodes are the key and value nodes of every field, map entry and list
	// element, by path (see nodeKey).
	nodes map[string]fieldNodes
	// malformed is set when a node does not have the shape its field
	// needs (a list for a string, a duplicate key, ...).
	malformed bool
	// fatal is set when the file cannot be decoded at all: no config is
	// returned and nothing more is checked.
	fatal bool
	errs  []*LineError
}

// fieldNodes are the nodes of one field: key is nil for list elements.
type fieldNodes struct {
	key, value *yaml.Node
}

// nodeKey joins the parts of a path to a field, such as
// ("resources", 0, "metrics", 2, "labels", "node").
func nodeKey(parts ...any) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(0)
		}
		fmt.Fprint(&b, p)
	}
	return b.String()
}

func (p *configParser) errorf(line int, context, format string, args ...any) {
	p.errs = append(p.errs, &LineError{Path: p.path, Line: line, Context: context, Err: fmt.Errorf(format, args...)})
}

func (p *configParser) add(line int, context string, err error) {
	p.errs = append(p.errs, &LineError{Path: p.path, Line: line, Context: context, Err: err})
}

// err returns the errors found, sorted by line, or nil.
func (p *configParser) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
	errs := make([]error, len(p.errs))
	for i, e := range p.errs {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// valueNode returns the value node at path, or that of the nearest
// enclosing field that has one (a missing field is reported at the entry
// that lacks it).
func (p *configParser) valueNode(parts ...any) *yaml.Node {
	for n := len(parts); n >= 0; n-- {
		if f, ok := p.nodes[nodeKey(parts[:n]...)]; ok && f.value != nil {
			return f.value
		}
	}
	return nil
}

// line returns the line of the value at path (see valueNode); 1 when
// nothing is known.
func (p *configParser) line(parts ...any) int {
	if n := p.valueNode(parts...); n != nil {
		return n.Line
	}
	return 1
}

// keyLine returns the line of the key of the map entry at path, for errors
// about the key itself.
func (p *configParser) keyLine(parts ...any) int {
	if f, ok := p.nodes[nodeKey(parts...)]; ok && f.key != nil {
		return f.key.Line
	}
	return p.line(parts...)
}

// yamlLine matches the line yaml.v3 puts in its messages.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// yamlError turns a message of yaml.v3 into a LineError; a message
// without a line is about the first line.
func (p *configParser) yamlError(msg string) {
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := 1
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	p.errorf(line, "", "%s", msg)
}

// parseConfig decodes and checks a config. The parser holds the errors; the
// config is nil when the file could not be decoded.
func parseConfig(path string, data []byte) (*configParser, *Config) {
	p := &configParser{path: path, data: data, nodes: map[string]fieldNodes{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		p.fatal = true
		p.yamlError(err.Error())
		return p, nil
	}
	if len(doc.Content) == 0 {
		p.fatal = true
		p.errorf(0, "", "the config is empty; it needs apiVersion: %s, kind: %s and resources", ConfigAPIVersion, ConfigKind)
		return p, nil
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		p.fatal = true
		p.errorf(next.Line, "", "a second YAML document; the config is a single document: remove this one or the \"---\" before it")
		return p, nil
	} else if !errors.Is(err, io.EOF) {
		p.fatal = true
		p.yamlError(err.Error())
		return p, nil
	}
	root := resolveAlias(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		p.fatal = true
		p.errorf(root.Line, "", "the config must be a mapping with apiVersion, kind and resources, not %s", nodeKindName(root))
		return p, nil
	}
	// Decoding first stops at what no walk should go through, such as
	// aliases that expand into a huge document; type errors are reported
	// by walk, with more to say.
	cfg := &Config{}
	decodeErr := root.Decode(cfg)
	var typeErr *yaml.TypeError
	if decodeErr != nil && !errors.As(decodeErr, &typeErr) {
		p.fatal = true
		p.yamlError(decodeErr.Error())
		return p, nil
	}
	p.prefix = scalarField(root, "prefix")
	p.nodes[nodeKey()] = fieldNodes{value: root}
	p.walk(root, reflect.TypeFor[Config](), nil, "", "")
	if p.malformed || typeErr != nil {
		// What the config holds would be misread: report only this.
		p.fatal = true
		if !p.malformed {
			for _, msg := range typeErr.Errors {
				p.yamlError(msg)
			}
		}
		return p, nil
	}
	// Unknown fields, if any, are reported; decoding left them out and the
	// rest is checked as well, so that one run shows every error.
	p.validate(cfg)
	return p, cfg
}

// resolveAlias returns the node an alias stands for.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// nodeKindName names the kind of a node for messages.
func nodeKindName(n *yaml.Node) string {
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

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// scalarField returns the value of the scalar key of mapping n, or "".
func scalarField(n *yaml.Node, key string) string {
	for _, kv := range mappingPairs(n) {
		if kv[0].Value == key {
			if v := resolveAlias(kv[1]); v.Kind == yaml.ScalarNode && !isNull(v) {
				return v.Value
			}
		}
	}
	return ""
}

// mappingPairs returns the key and value nodes of mapping n, those of merge
// keys ("<<: *anchor") after the explicit ones and only where no explicit
// key has their name, as YAML merges them.
func mappingPairs(n *yaml.Node) [][2]*yaml.Node {
	var pairs, merged [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			v = resolveAlias(v)
			switch v.Kind {
			case yaml.MappingNode:
				merged = append(merged, mappingPairs(v)...)
			case yaml.SequenceNode:
				for _, m := range v.Content {
					if m = resolveAlias(m); m.Kind == yaml.MappingNode {
						merged = append(merged, mappingPairs(m)...)
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

// structNouns name the config's structs in messages about their fields.
var structNouns = map[reflect.Type]string{
	reflect.TypeFor[Config]():         "the config",
	reflect.TypeFor[ResourceConfig](): "a resource",
	reflect.TypeFor[MetricConfig]():   "a metric",
}

// yamlFields returns the fields of struct type t by YAML name, and the
// names in declaration order.
func yamlFields(t reflect.Type) (map[string]reflect.StructField, []string) {
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

// walk checks that node n can be decoded into a value of type t: mappings
// where t is a struct or a map, lists where it is a slice, strings where
// it is a string, and no unknown fields or duplicate keys. It records the
// nodes of every field under path. context names the entry n belongs to;
// field names n within it.
func (p *configParser) walk(n *yaml.Node, t reflect.Type, path []any, context, field string) {
	n = resolveAlias(n)
	if isNull(n) {
		return // decodes to the zero value, as if absent
	}
	want := func(kind yaml.Kind, what string) bool {
		if n.Kind == kind {
			return true
		}
		p.malformed = true
		msg := fmt.Sprintf("must be %s, not %s", what, nodeKindName(n))
		if kind == yaml.ScalarNode && isExprPath(path) {
			msg += `; quote an expression that starts with "{" or "[", or contains ": "`
		}
		if field == "" {
			p.errorf(n.Line, context, "%s", msg)
		} else {
			p.errorf(n.Line, context, "%s %s", field, msg)
		}
		return false
	}
	switch t.Kind() {
	case reflect.String:
		if !want(yaml.ScalarNode, "a string") {
			return
		}
		if n.Tag != "" && n.Tag != "!" && !strings.HasPrefix(n.Tag, "!!") {
			p.malformed = true
			msg := fmt.Sprintf("%s: %q was read as a YAML tag; quote a value that starts with \"!\"", field, n.Tag)
			if isExprPath(path) {
				msg += fmt.Sprintf(", as in %s: \"!has(object.spec.nodeName)\"", lastField(field))
			}
			p.errorf(n.Line, context, "%s", msg)
		}
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		// Whether the scalar fits is for decoding to say.
		want(yaml.ScalarNode, "a "+t.Kind().String())
	case reflect.Pointer:
		p.walk(n, t.Elem(), path, context, field)
	case reflect.Interface:
		// Anything goes.
	case reflect.Struct:
		if !want(yaml.MappingNode, "a mapping") {
			return
		}
		byName, names := yamlFields(t)
		seen := map[string]*yaml.Node{}
		for _, kv := range mappingPairs(n) {
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
					msg += fmt.Sprintf("; the fields of %s are %s", structNouns[t], strings.Join(names, ", "))
				}
				p.errorf(k.Line, context, "%s", msg)
				continue
			}
			sub := append(slices.Clip(path), k.Value)
			p.nodes[nodeKey(sub...)] = fieldNodes{key: k, value: resolveAlias(v)}
			p.walk(v, f.Type, sub, context, k.Value)
		}
	case reflect.Map:
		if !want(yaml.MappingNode, "a mapping") {
			return
		}
		seen := map[string]*yaml.Node{}
		for _, kv := range mappingPairs(n) {
			k, v := kv[0], kv[1]
			if !p.checkKey(k, seen, context) {
				continue
			}
			sub := append(slices.Clip(path), k.Value)
			p.nodes[nodeKey(sub...)] = fieldNodes{key: k, value: resolveAlias(v)}
			p.walk(v, t.Elem(), sub, context, field+"."+k.Value)
		}
	case reflect.Slice:
		if !want(yaml.SequenceNode, "a list") {
			return
		}
		for i, e := range n.Content {
			sub := append(slices.Clip(path), i)
			e = resolveAlias(e)
			p.nodes[nodeKey(sub...)] = fieldNodes{value: e}
			ctx, name := context, fmt.Sprintf("%s[%d]", field, i)
			switch t.Elem() {
			case reflect.TypeFor[ResourceConfig]():
				ctx, name = resourceContext(scalarOf(e, "resource"), i), ""
			case reflect.TypeFor[MetricConfig]():
				ctx, name = metricContext(p.prefix, scalarOf(e, "name"), context, i), ""
			}
			p.walk(e, t.Elem(), sub, ctx, name)
		}
	default:
		panic(fmt.Sprintf("exporter: config field of unexpected type %s", t))
	}
}

// isExprPath reports whether the field at path holds a CEL expression.
func isExprPath(path []any) bool {
	n := len(path)
	if n >= 1 && (path[n-1] == "value" || path[n-1] == "each") {
		return true
	}
	return n >= 2 && (path[n-2] == "labels" || path[n-2] == "indexes")
}

// scalarOf is scalarField for a node that may not be a mapping.
func scalarOf(n *yaml.Node, key string) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	return scalarField(n, key)
}

func lastField(field string) string {
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		return field[i+1:]
	}
	return field
}

// checkKey reports whether k is a string key seen for the first time in its
// mapping, and reports an error otherwise.
func (p *configParser) checkKey(k *yaml.Node, seen map[string]*yaml.Node, context string) bool {
	k = resolveAlias(k)
	if k.Kind != yaml.ScalarNode {
		p.malformed = true
		p.errorf(k.Line, context, "a key is %s; keys must be strings", nodeKindName(k))
		return false
	}
	if first, dup := seen[k.Value]; dup {
		p.malformed = true
		p.errorf(k.Line, context, "%q is defined twice (first at line %d); keep one", k.Value, first.Line)
		return false
	}
	seen[k.Value] = k
	return true
}

// resourceContext names the i-th resource entry in messages.
func resourceContext(resource string, i int) string {
	if resource == "" {
		return fmt.Sprintf("resources[%d]", i)
	}
	return fmt.Sprintf("resource %q", resource)
}

// metricContext names the j-th metric of a resource in messages, by its
// full name.
func metricContext(prefix, name, resourceContext string, j int) string {
	if name == "" {
		return fmt.Sprintf("%s metrics[%d]", resourceContext, j)
	}
	return fmt.Sprintf("metric %q", prefix+name)
}

// validate checks what decoding cannot: required fields, names and values.
func (p *configParser) validate(c *Config) {
	if c.APIVersion != ConfigAPIVersion {
		p.errorf(p.line("apiVersion"), "", "%s; set apiVersion: %s", isOrMissing("apiVersion", c.APIVersion), ConfigAPIVersion)
	}
	if c.Kind != ConfigKind {
		p.errorf(p.line("kind"), "", "%s; set kind: %s", isOrMissing("kind", c.Kind), ConfigKind)
	}
	prefixOK := true
	if c.Prefix != "" {
		if msg := metricNameProblem(fmt.Sprintf("prefix %q", c.Prefix), c.Prefix); msg != "" {
			prefixOK = false
			p.errorf(p.line("prefix"), "", "%s", msg)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.CommonLabels)) {
		if msg := labelNameProblem(name); msg != "" {
			p.errorf(p.keyLine("commonLabels", name), "", "commonLabels: %s", msg)
		}
	}
	if len(c.Resources) == 0 {
		p.errorf(p.line("resources"), "", "resources is empty; list at least one resource with the metrics to compute from it")
	}
	resourceLines := map[string]int{}
	metricLines := map[string]int{}
	for i, r := range c.Resources {
		ctx := resourceContext(r.Resource, i)
		at := func(parts ...any) []any { return append([]any{"resources", i}, parts...) }
		if strings.TrimSpace(r.Resource) == "" {
			p.errorf(p.line(at("resource")...), ctx, "resource is missing; name the resource to watch as kubectl does, such as resource: pods")
		} else if first, dup := resourceLines[r.Resource]; dup {
			p.errorf(p.line(at("resource")...), ctx, "listed twice (first at line %d); put its indexes and metrics in one entry", first)
		} else {
			resourceLines[r.Resource] = p.line(at("resource")...)
		}
		p.validateResource(r, ctx, at)
		for j, m := range r.Metrics {
			mat := func(parts ...any) []any { return at(append([]any{"metrics", j}, parts...)...) }
			p.validateMetric(c, m, metricContext(c.Prefix, m.Name, ctx, j), prefixOK, metricLines, mat)
		}
	}
}

func isOrMissing(field, value string) string {
	if value == "" {
		return field + " is missing"
	}
	return fmt.Sprintf("%s is %q", field, value)
}

// validateResource checks the fields of a resource entry other than its
// metrics.
func (p *configParser) validateResource(r ResourceConfig, ctx string, at func(...any) []any) {
	seen := map[string]bool{}
	for k, ns := range r.Namespaces {
		switch {
		case seen[ns]:
			p.errorf(p.line(at("namespaces", k)...), ctx, "namespace %q is listed twice; keep one", ns)
		case ns == "":
			p.errorf(p.line(at("namespaces", k)...), ctx, "namespaces[%d] is empty; name a namespace, or leave namespaces out for all of them", k)
		default:
			if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
				p.errorf(p.line(at("namespaces", k)...), ctx, "namespace %q is not a valid namespace name: %s", ns, strings.Join(msgs, "; "))
			}
		}
		seen[ns] = true
	}
	if r.LabelSelector != "" {
		if _, err := labels.Parse(r.LabelSelector); err != nil {
			p.errorf(p.line(at("labelSelector")...), ctx, "labelSelector %q: %v; write it as for kubectl get -l, such as app=web,tier!=cache", r.LabelSelector, err)
		}
	}
	if r.FieldSelector != "" {
		if _, err := fields.ParseSelector(r.FieldSelector); err != nil {
			p.errorf(p.line(at("fieldSelector")...), ctx, "fieldSelector %q: %v; write it as for kubectl get --field-selector, such as status.phase=Running", r.FieldSelector, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Indexes)) {
		line := p.keyLine(at("indexes", name)...)
		switch {
		case name == "" || strings.ContainsAny(name, " =,"):
			p.errorf(line, ctx, "invalid index name %q; use a name of letters, digits, '-' or '_', such as byNode", name)
		case name == indexers.NamespaceIndex:
			p.errorf(line, ctx, "index %q is built in and cannot be redefined; choose another name", name)
		}
		if strings.TrimSpace(r.Indexes[name]) == "" {
			p.errorf(p.line(at("indexes", name)...), ctx, "index %q has no expression; give the CEL expression of its values, such as object.spec.nodeName", name)
		}
	}
}

// validateMetric checks a metric. metricLines holds the line of every full
// name seen so far.
func (p *configParser) validateMetric(c *Config, m MetricConfig, ctx string, prefixOK bool, metricLines map[string]int, at func(...any) []any) {
	full := c.Prefix + m.Name
	nameLine := p.line(at("name")...)
	switch {
	case m.Name == "":
		p.errorf(nameLine, ctx, "name is missing; name the metric, such as name: pod_info")
	case !prefixOK:
		// The prefix is reported once; the name alone is checked below.
	default:
		if msg := metricNameProblem(fmt.Sprintf("name %q", full), full); msg != "" {
			p.errorf(nameLine, ctx, "%s", msg)
		}
	}
	if m.Name != "" {
		if first, dup := metricLines[full]; dup {
			p.errorf(nameLine, ctx, "the name is already used at line %d; metric names must be unique in the config, prefix included", first)
		} else {
			metricLines[full] = nameLine
		}
	}
	if strings.TrimSpace(m.Help) == "" {
		p.errorf(p.line(at("help")...), ctx, "help is missing; say in a sentence what the metric measures")
	}
	typeLine := p.line(at("type")...)
	switch m.Type {
	case "":
		p.errorf(typeLine, ctx, "type is missing; use gauge, counter or info")
	case TypeGauge, TypeCounter, TypeInfo:
		if m.Name == "" {
			break
		}
		switch {
		case m.Type == TypeCounter && !strings.HasSuffix(full, "_total"):
			p.errorf(nameLine, ctx, "the name of a counter must end in _total; rename it %q", full+"_total")
		case m.Type != TypeCounter && strings.HasSuffix(full, "_total"):
			p.errorf(nameLine, ctx, "only the name of a counter may end in _total; rename it or use type counter")
		case m.Type == TypeInfo && !strings.HasSuffix(full, "_info"):
			p.errorf(nameLine, ctx, "the name of an info metric must end in _info; rename it %q", full+"_info")
		}
	default:
		p.errorf(typeLine, ctx, "type %q is not supported; use gauge, counter or info", m.Type)
	}
	for _, name := range slices.Sorted(maps.Keys(m.Labels)) {
		line := p.keyLine(at("labels", name)...)
		if msg := labelNameProblem(name); msg != "" {
			p.errorf(line, ctx, "%s", msg)
		} else if _, common := c.CommonLabels[name]; common {
			p.errorf(line, ctx, "label %q is also in commonLabels; rename one of them", name)
		}
		if strings.TrimSpace(m.Labels[name]) == "" {
			p.errorf(p.line(at("labels", name)...), ctx, "label %q has no expression; give the CEL expression of its value, such as object.metadata.name", name)
		}
	}
	aggLine := p.line(at("aggregate")...)
	switch m.Aggregate {
	case AggregateNone, AggregateSum, AggregateMin, AggregateMax:
	case AggregateCount:
		if m.Value != "" {
			p.errorf(p.line(at("value")...), ctx, "aggregate count counts series and ignores value; remove value, or use aggregate sum to add values up")
		}
	default:
		p.errorf(aggLine, ctx, "aggregate %q is not supported; use count, sum, min or max, or leave it out for one series per object", m.Aggregate)
	}
	if m.Type == TypeInfo {
		if m.Aggregate != AggregateNone {
			p.errorf(aggLine, ctx, "an info metric cannot be aggregated; remove aggregate, or use type gauge")
		}
		if m.Value != "" {
			p.errorf(p.line(at("value")...), ctx, "the value of an info metric is always 1; remove value, or use type gauge")
		}
	}
	if m.Value != "" && strings.TrimSpace(m.Value) == "" {
		p.errorf(p.line(at("value")...), ctx, "value is blank; give a CEL expression, or leave value out for 1")
	}
	if m.Each != "" && strings.TrimSpace(m.Each) == "" {
		p.errorf(p.line(at("each")...), ctx, "each is blank; give a CEL expression yielding a list, or leave each out")
	}
}

// nameChars says what names are made of.
const nameChars = "use letters, digits and '_', not starting with a digit"

// metricNameProblem says what is wrong with a metric name, or returns "".
// what names the name in the message, such as `name "x"`.
func metricNameProblem(what, name string) string {
	if !model.LegacyValidation.IsValidMetricName(name) {
		return fmt.Sprintf("%s is not a valid metric name: %s", what, nameChars)
	}
	if strings.Contains(name, ":") {
		return fmt.Sprintf("%s contains ':', which is reserved for recording rules; use '_'", what)
	}
	return ""
}

// labelNameProblem says what is wrong with a label name, or returns "".
func labelNameProblem(name string) string {
	if !model.LegacyValidation.IsValidLabelName(name) {
		return fmt.Sprintf("label name %q is not valid: %s", name, nameChars)
	}
	if strings.HasPrefix(name, model.ReservedLabelPrefix) {
		return fmt.Sprintf("label name %q starts with %q, which is reserved for Prometheus' own labels; rename it", name, model.ReservedLabelPrefix)
	}
	return ""
}
