package indexers

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/openapi"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// ResolveSchema returns the OpenAPI v3 schema the API server publishes for
// gvk, with its references resolved, ready for [Env.CompileWithSchema]. It
// returns nil and no error when the server publishes no schema for gvk;
// expressions are then checked dynamically. It reads and decodes the
// OpenAPI document of the group version through client: use [Schemas] to
// resolve several kinds.
func ResolveSchema(client discovery.DiscoveryInterface, gvk schema.GroupVersionKind) (*spec.Schema, error) {
	return NewSchemas(client).Resolve(gvk)
}

// Schemas resolves schemas as ResolveSchema does, reading and decoding the
// OpenAPI document of each group version once: the document of the core
// group is over a megabyte of JSON, which a load of a dozen of its
// resources would otherwise decode a dozen times. It keeps the decoded
// documents: drop it once the kinds are resolved. It is safe for
// concurrent use: kinds of different group versions are resolved in
// parallel.
type Schemas struct {
	client discovery.DiscoveryInterface
	// mu guards docs.
	mu   sync.Mutex
	docs map[schema.GroupVersion]*readOnce
}

// readOnce is a group version's document, read by the first resolution
// that needs it.
type readOnce struct {
	once sync.Once
	doc  *schemaDoc
}

// schemaDoc is the decoded OpenAPI document of a group version.
type schemaDoc struct {
	components map[string]*spec.Schema
	// kinds maps each kind the document defines to its schema's name.
	kinds map[schema.GroupVersionKind]string
	err   error
}

// NewSchemas returns a Schemas that reads documents through client.
func NewSchemas(client discovery.DiscoveryInterface) *Schemas {
	return &Schemas{client: client, docs: map[schema.GroupVersion]*readOnce{}}
}

// Resolve returns the schema of gvk as ResolveSchema does.
func (s *Schemas) Resolve(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	sch, err := s.resolve(gvk)
	if errors.Is(err, resolver.ErrSchemaNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("resolving the OpenAPI schema of %q: %w", gvk.String(), err)
	}
	return sch, nil
}

func (s *Schemas) resolve(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	gv := gvk.GroupVersion()
	s.mu.Lock()
	r, ok := s.docs[gv]
	if !ok {
		r = &readOnce{}
		s.docs[gv] = r
	}
	s.mu.Unlock()
	r.once.Do(func() { r.doc = s.read(gv) })
	doc := r.doc
	if doc.err != nil {
		return nil, doc.err
	}
	name, ok := doc.kinds[gvk]
	if !ok {
		return nil, fmt.Errorf("cannot resolve group version kind %q: %w", gvk, resolver.ErrSchemaNotFound)
	}
	return resolver.PopulateRefs(func(ref string) (*spec.Schema, bool) {
		sch, ok := doc.components[strings.TrimPrefix(ref, schemaRefPrefix)]
		return sch, ok
	}, name)
}

// schemaRefPrefix begins the references of an OpenAPI v3 document to its
// schemas.
const schemaRefPrefix = "#/components/schemas/"

// read reads and decodes the document of gv, as the API server's
// resolver.ClientDiscoveryResolver does.
func (s *Schemas) read(gv schema.GroupVersion) *schemaDoc {
	paths, err := s.client.OpenAPIV3().Paths()
	if err != nil {
		return &schemaDoc{err: err}
	}
	path := "apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "api/" + gv.Version
	}
	c, ok := paths[path]
	if !ok {
		return &schemaDoc{err: fmt.Errorf("cannot resolve group version %q: %w", gv, resolver.ErrSchemaNotFound)}
	}
	b, err := c.Schema(runtime.ContentTypeJSON)
	if err != nil {
		return &schemaDoc{err: err}
	}
	var resp struct {
		Components struct {
			Schemas map[string]*spec.Schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		return &schemaDoc{err: err}
	}
	doc := &schemaDoc{components: resp.Components.Schemas, kinds: map[schema.GroupVersionKind]string{}}
	for name, sch := range doc.components {
		var gvks []schema.GroupVersionKind
		if err := sch.Extensions.GetObject("x-kubernetes-group-version-kind", &gvks); err != nil {
			return &schemaDoc{err: err}
		}
		for _, k := range gvks {
			// Of two schemas that say they are the same kind, always
			// the same one.
			if prev, dup := doc.kinds[k]; !dup || name < prev {
				doc.kinds[k] = name
			}
		}
	}
	return doc
}

// schemaEnv is the environment in which object has the type of a schema.
type schemaEnv struct {
	env *cel.Env
	// eachEnv is env with each declared as dyn (see CompileEachWithSchema).
	eachEnv *cel.Env
	object  *apiservercel.DeclType
}

// schemaEnv returns the environment for schema, building it on first use.
func (e *Env) schemaEnv(s *spec.Schema) (*schemaEnv, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if se, ok := e.schemaEnvs[s]; ok {
		return se, nil
	}
	object := openapi.SchemaDeclType(jsonView(s, true, 0), true)
	if object == nil || !object.IsObject() {
		// Nothing to check against (x-kubernetes-preserve-unknown-fields at
		// the root, for example): check dynamically.
		se := &schemaEnv{env: e.dyn, eachEnv: e.dynEach}
		e.schemaEnvs[s] = se
		return se, nil
	}
	object = object.MaybeAssignTypeName(schemaName(s))
	env, err := e.extend(object.CelType(), object)
	if err != nil {
		return nil, fmt.Errorf("declaring the schema of %s: %w", schemaName(s), err)
	}
	eachEnv, err := env.Extend(cel.Variable(EachVar, cel.DynType))
	if err != nil {
		return nil, fmt.Errorf("declaring the schema of %s: %w", schemaName(s), err)
	}
	se := &schemaEnv{env: env, eachEnv: eachEnv, object: object}
	e.schemaEnvs[s] = se
	return se, nil
}

// schemaName names the type of the object: its kind when the schema says,
// as in "Pod.spec.containers", else "Object". The name must not be that of
// a variable: the checker would take object.spec for a type name.
func schemaName(s *spec.Schema) string {
	if kind := schemaKind(s); isIdentifier(kind) && kind != ObjectVar {
		return kind
	}
	return "Object"
}

// schemaKind returns the kind the schema describes, "" when it does not say.
func schemaKind(s *spec.Schema) string {
	gvks, _ := s.Extensions["x-kubernetes-group-version-kind"].([]any)
	for _, gvk := range gvks {
		if m, ok := gvk.(map[string]any); ok {
			if kind, ok := m["kind"].(string); ok {
				return kind
			}
		}
	}
	return ""
}

// maxSchemaDepth bounds the depth of the schema that is declared; deeper
// parts are dyn.
const maxSchemaDepth = 64

// jsonView returns a copy of the schema s describing the data as this
// package evaluates it: JSON values, with no conversion driven by the
// schema. Kubernetes converts some values according to their schema
// (date-time strings to timestamps, for example) and hides data the schema
// does not describe; this package does neither, so that an expression means
// the same with or without a schema. Hence:
//
//   - strings are strings, whatever their format;
//   - data whose shape the schema leaves open is dyn: untyped schemas,
//     x-kubernetes-int-or-string, x-kubernetes-preserve-unknown-fields,
//     objects without properties nor additionalProperties, arrays without
//     items, and objects with a property whose name is not a CEL identifier
//     (CEL would only know it escaped, as "a__dash__b", while the data holds
//     "a-b");
//   - a resource (the root, or an embedded resource) always has apiVersion,
//     kind and the usual metadata.
//
// The result is only read by openapi.SchemaDeclType.
func jsonView(s *spec.Schema, resource bool, depth int) *spec.Schema {
	if s == nil || depth > maxSchemaDepth {
		return dynSchema()
	}
	adapted := &openapi.Schema{Schema: s}
	if adapted.IsXIntOrString() || adapted.IsXPreserveUnknownFields() || len(s.Type) != 1 {
		return dynSchema()
	}
	switch s.Type[0] {
	case "object":
		if len(s.Properties) > 0 {
			props := make(map[string]spec.Schema, len(s.Properties))
			for name, prop := range s.Properties {
				if !plainFieldName(name) {
					return dynSchema()
				}
				props[name] = *jsonView(&prop, (&openapi.Schema{Schema: &prop}).IsXEmbeddedResource(), depth+1)
			}
			c := *s
			c.Properties = props
			c.AdditionalProperties = nil
			if resource {
				withResourceFields(&c)
			}
			return &c
		}
		if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
			c := *s
			c.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: jsonView(ap.Schema, false, depth+1)}
			return &c
		}
		return dynSchema()
	case "array":
		if s.Items == nil || s.Items.Schema == nil {
			return dynSchema()
		}
		c := *s
		items := s.Items.Schema
		c.Items = &spec.SchemaOrArray{Schema: jsonView(items, (&openapi.Schema{Schema: items}).IsXEmbeddedResource(), depth+1)}
		return &c
	case "string":
		c := *s
		c.Format = ""
		return &c
	case "integer", "number", "boolean":
		return s
	}
	return dynSchema()
}

// dynSchema returns a schema that openapi.SchemaDeclType declares as dyn:
// it does so for x-kubernetes-int-or-string, and for nothing else.
func dynSchema() *spec.Schema {
	s := &spec.Schema{}
	s.AddExtension("x-kubernetes-int-or-string", true)
	return s
}

// plainFieldName reports whether a property can be selected in CEL under
// its own name: an identifier, or a reserved word, which Kubernetes' type
// provider recognizes as a field name (object.metadata.namespace).
func plainFieldName(name string) bool {
	escaped, ok := apiservercel.Escape(name)
	return ok && (escaped == name || escaped == "__"+name+"__")
}

// withResourceFields makes sure the resource schema c has apiVersion, kind
// and metadata. A metadata without properties (as in some CRD schemas) is
// replaced by the fields every object has; Kubernetes would keep only name
// and generateName.
func withResourceFields(c *spec.Schema) {
	for _, name := range []string{"apiVersion", "kind"} {
		if p, ok := c.Properties[name]; !ok || !p.Type.Contains("string") {
			c.Properties[name] = *spec.StringProperty()
		}
	}
	meta, ok := c.Properties["metadata"]
	if !ok || !meta.Type.Contains("object") || !meta.Properties["name"].Type.Contains("string") ||
		!meta.Properties["generateName"].Type.Contains("string") {
		c.Properties["metadata"] = *objectMetaSchema()
	}
}

// objectMetaSchema describes the metadata of an object (ObjectMeta) as JSON.
func objectMetaSchema() *spec.Schema {
	str, integer, boolean := spec.StringProperty, spec.Int64Property, spec.BoolProperty
	owner := &spec.Schema{SchemaProps: spec.SchemaProps{
		Type: []string{"object"},
		Properties: map[string]spec.Schema{
			"apiVersion":         *str(),
			"kind":               *str(),
			"name":               *str(),
			"uid":                *str(),
			"controller":         *boolean(),
			"blockOwnerDeletion": *boolean(),
		},
	}}
	return &spec.Schema{SchemaProps: spec.SchemaProps{
		Type: []string{"object"},
		Properties: map[string]spec.Schema{
			"name":                       *str(),
			"generateName":               *str(),
			"namespace":                  *str(),
			"selfLink":                   *str(),
			"uid":                        *str(),
			"resourceVersion":            *str(),
			"generation":                 *integer(),
			"creationTimestamp":          *str(),
			"deletionTimestamp":          *str(),
			"deletionGracePeriodSeconds": *integer(),
			"labels":                     *spec.MapProperty(str()),
			"annotations":                *spec.MapProperty(str()),
			"ownerReferences":            *spec.ArrayProperty(owner),
			"finalizers":                 *spec.ArrayProperty(str()),
			"managedFields":              *spec.ArrayProperty(dynSchema()),
		},
	}}
}

// fieldCandidates lists the fields of the object that the failing select
// expression with the given id reads from, when its type can be worked out
// from the declared type of object.
func fieldCandidates(env *cel.Env, object *apiservercel.DeclType, expr string, id int64) []string {
	if object == nil {
		return nil
	}
	parsed, iss := env.Parse(expr)
	if iss.Err() != nil {
		return nil
	}
	matches := ast.MatchDescendants(ast.NavigateAST(parsed.NativeRep()), func(e ast.NavigableExpr) bool {
		return e.ID() == id
	})
	if len(matches) == 0 || len(matches[0].Children()) == 0 {
		return nil
	}
	t := declTypeOf(matches[0].Children()[0], object)
	if t == nil || !t.IsObject() {
		return nil
	}
	names := make([]string, 0, len(t.Fields))
	for name := range t.Fields {
		if strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__") && len(name) > 4 {
			name = name[2 : len(name)-2] // an escaped reserved word
		}
		names = append(names, name)
	}
	return names
}

// declTypeOf works out the declared type of a parsed expression made of
// object, iteration variables, field selections and indexing; nil when it
// cannot.
func declTypeOf(e ast.NavigableExpr, object *apiservercel.DeclType) *apiservercel.DeclType {
	children := e.Children()
	switch e.Kind() {
	case ast.IdentKind:
		return identType(e, object)
	case ast.SelectKind:
		return memberType(declTypeOf(children[0], object), e.AsSelect().FieldName())
	case ast.CallKind:
		call := e.AsCall()
		switch call.FunctionName() {
		case "_[_]", "_[?_]":
			if t := declTypeOf(children[0], object); t != nil && (t.IsList() || t.IsMap()) {
				return t.ElemType
			}
		case "_?._":
			if field, ok := stringLiteral(call.Args()[1]); ok {
				return memberType(declTypeOf(children[0], object), field)
			}
		}
	}
	return nil
}

// identType returns the type of an identifier: an iteration variable of an
// enclosing comprehension, or object.
func identType(e ast.NavigableExpr, object *apiservercel.DeclType) *apiservercel.DeclType {
	name := e.AsIdent()
	for from := e; ; {
		p, ok := from.Parent()
		if !ok {
			break
		}
		if t, bound := iterVarType(p, from, name, object); bound {
			return t
		}
		from = p
	}
	if name == ObjectVar {
		return object
	}
	return nil
}

// iterVarType returns the type of the iteration variable name if the
// expression p is a comprehension that binds it for its child from.
func iterVarType(p, from ast.NavigableExpr, name string, object *apiservercel.DeclType) (t *apiservercel.DeclType, bound bool) {
	if p.Kind() != ast.ComprehensionKind {
		return nil, false
	}
	c := p.AsComprehension()
	if from.ID() == c.IterRange().ID() || (name != c.IterVar() && name != c.IterVar2()) {
		return nil, false
	}
	var rangeType *apiservercel.DeclType
	for _, child := range p.Children() {
		if child.ID() == c.IterRange().ID() {
			rangeType = declTypeOf(child, object)
		}
	}
	switch {
	case rangeType == nil:
		return nil, true
	case name == c.IterVar2(), !c.HasIterVar2() && rangeType.IsList():
		return rangeType.ElemType, true // the element of a list or the value of a map
	case rangeType.IsMap():
		return rangeType.KeyType, true
	}
	return nil, true
}

// memberType returns the type of the field of an object type, or of the
// values of a map type.
func memberType(t *apiservercel.DeclType, field string) *apiservercel.DeclType {
	switch {
	case t == nil:
		return nil
	case t.IsObject():
		if f, ok := t.Fields[field]; ok {
			return f.Type
		}
		if f, ok := t.Fields["__"+field+"__"]; ok {
			return f.Type
		}
	case t.IsMap():
		return t.ElemType
	}
	return nil
}
