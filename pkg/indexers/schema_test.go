package indexers_test

import (
	"errors"
	"reflect"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// Schema builders, to write schemas as they come out of the API server's
// OpenAPI v3 document once references are resolved.
func object(props map[string]spec.Schema) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: props}}
}

func str() spec.Schema { return *spec.StringProperty() }

func withExtension(s spec.Schema, key string, value any) spec.Schema {
	s.AddExtension(key, value)
	return s
}

// podSchema is a part of the schema of core/v1 Pod.
func podSchema() *spec.Schema {
	quantity := spec.Schema{SchemaProps: spec.SchemaProps{OneOf: []spec.Schema{str(), *spec.Float64Property()}}}
	container := object(map[string]spec.Schema{
		"name":  str(),
		"image": str(),
		"resources": object(map[string]spec.Schema{
			"requests": *spec.MapProperty(&quantity),
		}),
	})
	containers := withExtension(withExtension(*spec.ArrayProperty(&container),
		"x-kubernetes-list-type", "map"), "x-kubernetes-list-map-keys", []any{"name"})
	metadata := object(map[string]spec.Schema{
		"name":              str(),
		"generateName":      str(),
		"namespace":         str(),
		"labels":            *spec.MapProperty(spec.StringProperty()),
		"creationTimestamp": *spec.DateTimeProperty(),
	})
	s := object(map[string]spec.Schema{
		"apiVersion": str(),
		"kind":       str(),
		"metadata":   metadata,
		"spec": object(map[string]spec.Schema{
			"nodeName":   str(),
			"priority":   *spec.Int32Property(),
			"containers": containers,
			"extra":      withExtension(object(nil), "x-kubernetes-preserve-unknown-fields", true),
			"security":   object(map[string]spec.Schema{"run-as": str()}),
		}),
		"status": object(map[string]spec.Schema{
			"phase": str(),
			"podIP": str(),
		}),
	})
	s.AddExtension("x-kubernetes-group-version-kind", []any{map[string]any{"group": "", "version": "v1", "kind": "Pod"}})
	return &s
}

func TestCompileWithSchemaErrors(t *testing.T) {
	env := newEnv(t)
	schema := podSchema()
	tests := []struct {
		expr string
		kind indexers.Kind
		want string
	}{{
		expr: `object.staus.phase == "Running"`,
		kind: indexers.KindPredicate,
		want: `invalid --where expression: undefined field 'staus' (did you mean "status"?)
 | object.staus.phase == "Running"
 |        ^`,
	}, {
		expr: `object.spec.containers.all(c, c.imag != "")`,
		kind: indexers.KindPredicate,
		want: `invalid --where expression: undefined field 'imag' (did you mean "image"?)
 | object.spec.containers.all(c, c.imag != "")
 |                                 ^`,
	}, {
		expr: `object.spec.containers.exists(c, c.resources.requets.size() > 0)`,
		kind: indexers.KindPredicate,
		want: `invalid --where expression: undefined field 'requets' (did you mean "requests"?)
 | object.spec.containers.exists(c, c.resources.requets.size() > 0)
 |                                              ^`,
	}, {
		expr: `object.metadata.lables.app == "web"`,
		kind: indexers.KindPredicate,
		want: `invalid --where expression: undefined field 'lables' (did you mean "labels"?)
 | object.metadata.lables.app == "web"
 |                 ^`,
	}, {
		expr: `object.spec.nodeName.nope`,
		kind: indexers.KindValue,
		want: `invalid --where expression: type 'string' does not support field selection
 | object.spec.nodeName.nope
 |                     ^`,
	}, {
		expr: `object.status.xyz == "a"`,
		kind: indexers.KindPredicate,
		want: `invalid --where expression: undefined field 'xyz'
 | object.status.xyz == "a"
 |               ^`,
	}, {
		expr: `object.status`,
		kind: indexers.KindPredicate,
		want: `invalid --where expression: must evaluate to bool but got Pod.status`,
	}, {
		expr: `object.spec.priority`,
		kind: indexers.KindIndex,
		want: `invalid --where expression: must evaluate to string, list(string) or null but got int`,
	}, {
		expr: `object.status.phase == 1`,
		kind: indexers.KindPredicate,
		want: `invalid --where expression: found no matching overload for '_==_' applied to '(string, int)'
 | object.status.phase == 1
 |                     ^`,
	}, {
		expr: `object.metadata.creationTimestamp > timestamp("2024-01-01T00:00:00Z")`,
		kind: indexers.KindPredicate,
		want: `invalid --where expression: found no matching overload for '_>_' applied to '(string, timestamp)'
 | object.metadata.creationTimestamp > timestamp("2024-01-01T00:00:00Z")
 |                                   ^`,
	}, {
		expr: `object.status.phase`,
		kind: indexers.KindNumber,
		want: `invalid --where expression: must evaluate to a number or bool (or null, or an optional of one) but got string`,
	}}
	for _, tt := range tests {
		_, err := env.CompileWithSchema(tt.expr, tt.kind, "--where", schema)
		if err == nil {
			t.Errorf("CompileWithSchema(%q) succeeded, want an error", tt.expr)
			continue
		}
		if got := err.Error(); got != tt.want {
			t.Errorf("CompileWithSchema(%q) error:\n%s\nwant:\n%s", tt.expr, got, tt.want)
		}
		var exprErr *indexers.ExprError
		if !errors.As(err, &exprErr) {
			t.Errorf("error is a %T, want an *ExprError", err)
		}
	}
}

// TestCompileWithSchemaEvaluates checks that expressions compiled with a
// schema evaluate JSON objects as they do without one.
func TestCompileWithSchemaEvaluates(t *testing.T) {
	env := newEnv(t)
	schema := podSchema()
	o := pod("default", "web-1", "n1", "Running")
	o.Object["spec"].(map[string]any)["extra"] = map[string]any{"anything": map[string]any{"goes": int64(1)}}
	o.Object["spec"].(map[string]any)["security"] = map[string]any{"run-as": "root"}
	tests := []struct {
		expr string
		want any
	}{
		{`object.status.phase == "Running"`, true},
		{`object.metadata.namespace`, "default"},
		{`object.metadata.labels.app`, "web"},
		{`object.metadata.name.startsWith("web-")`, true},
		{`object.spec.containers.map(c, c.image)`, []any{"registry.example/app:1.2.3"}},
		{`object.spec.containers.all(c, quantity(c.resources.requests.memory).isGreaterThan(quantity("100Mi")))`, true},
		{`timestamp(object.metadata.creationTimestamp) > timestamp("2024-01-01T00:00:00Z")`, true},
		{`object.spec.extra.anything.goes == 1`, true},
		{`object.spec.security["run-as"]`, "root"},
		{`object.?spec.?nodeName.orValue("")`, "n1"},
		{`has(object.spec.priority)`, false},
		{`object.kind + "/" + object.metadata.name`, "Pod/web-1"},
	}
	for _, tt := range tests {
		p, err := env.CompileWithSchema(tt.expr, indexers.KindValue, "test", schema)
		if err != nil {
			t.Errorf("CompileWithSchema(%q): %v", tt.expr, err)
			continue
		}
		got, err := p.Value(o)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Value(%q) = %#v, %v; want %#v", tt.expr, got, err, tt.want)
		}
		// The same without a schema.
		dynGot, err := compile(t, env, tt.expr, indexers.KindValue).Value(o)
		if err != nil || !reflect.DeepEqual(dynGot, got) {
			t.Errorf("without a schema, Value(%q) = %#v, %v; want %#v", tt.expr, dynGot, err, got)
		}
	}
}

func TestCompileWithSchemaIndex(t *testing.T) {
	env := newEnv(t)
	p, err := env.CompileWithSchema(`object.spec.containers.map(c, c.image)`, indexers.KindIndex, `index "byImage"`, podSchema())
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.IndexValues(pod("default", "a", "", ""))
	if err != nil || !reflect.DeepEqual(got, []string{"registry.example/app:1.2.3"}) {
		t.Errorf("IndexValues = %q, %v", got, err)
	}
}

func TestCompileWithoutSchema(t *testing.T) {
	env := newEnv(t)
	// With no schema, fields are checked when the expression runs.
	p, err := env.CompileWithSchema(`object.staus.phase == "Running"`, indexers.KindPredicate, "--where", nil)
	if err != nil {
		t.Fatalf("CompileWithSchema with a nil schema: %v", err)
	}
	if _, err := p.Match(pod("default", "a", "", "Running")); err == nil || err.Error() != "--where: no such key: staus" {
		t.Errorf("Match: error %v", err)
	}
}

// TestSchemaWithoutMetadata: some CRD schemas leave metadata out, or
// describe it without properties; objects still have the usual metadata.
func TestSchemaWithoutMetadata(t *testing.T) {
	env := newEnv(t)
	schema := object(map[string]spec.Schema{
		"metadata": object(nil),
		"spec":     object(map[string]spec.Schema{"replicas": *spec.Int64Property()}),
	})
	o := obj(map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": "w", "namespace": "default", "labels": map[string]any{"app": "x"}},
		"spec":       map[string]any{"replicas": int64(3)},
	})
	for expr, want := range map[string]any{
		`object.metadata.labels.app`:                    "x",
		`object.metadata.namespace + "/" + object.kind`: "default/Widget",
		`object.spec.replicas * 2`:                      int64(6),
	} {
		p, err := env.CompileWithSchema(expr, indexers.KindValue, "test", &schema)
		if err != nil {
			t.Errorf("CompileWithSchema(%q): %v", expr, err)
			continue
		}
		if got, err := p.Value(o); err != nil || got != want {
			t.Errorf("Value(%q) = %#v, %v; want %#v", expr, got, err, want)
		}
	}
	_, err := env.CompileWithSchema(`object.spec.replica > 1`, indexers.KindPredicate, "--where", &schema)
	if want := "invalid --where expression: undefined field 'replica' (did you mean \"replicas\"?)\n | object.spec.replica > 1\n |             ^"; err == nil || err.Error() != want {
		t.Errorf("CompileWithSchema error:\n%v\nwant:\n%s", err, want)
	}
}

// TestSchemaWithoutShape: a schema that leaves the whole object open is no
// help for checking; expressions are checked dynamically.
func TestSchemaWithoutShape(t *testing.T) {
	env := newEnv(t)
	schema := withExtension(object(nil), "x-kubernetes-preserve-unknown-fields", true)
	p, err := env.CompileWithSchema(`object.spec.anything == 1`, indexers.KindPredicate, "--where", &schema)
	if err != nil {
		t.Fatalf("CompileWithSchema: %v", err)
	}
	if ok, err := p.Match(map[string]any{"spec": map[string]any{"anything": int64(1)}}); err != nil || !ok {
		t.Errorf("Match = %v, %v; want true", ok, err)
	}
}

// TestCompileNumber checks what a KindNumber expression may yield.
func TestCompileNumber(t *testing.T) {
	env := newEnv(t)
	for _, expr := range []string{`object.spec.priority`, `object.status.phase == "Running"`, `1.5`, `object.metadata.uid`} {
		if _, err := env.CompileWithSchema(expr, indexers.KindNumber, "value", podSchema()); (err == nil) != (expr != `object.metadata.uid`) {
			t.Errorf("CompileWithSchema(%q, KindNumber): %v", expr, err)
		}
	}
	// dyn is checked on each object.
	if _, err := env.Compile(`object.status.phase`, indexers.KindNumber, "value"); err != nil {
		t.Errorf("Compile(dyn, KindNumber): %v", err)
	}
}

// TestCompileEachWithSchema checks that each is declared, dyn, beside an
// object checked against the schema.
func TestCompileEachWithSchema(t *testing.T) {
	env := newEnv(t)
	p, err := env.CompileEachWithSchema(`object.metadata.name + "/" + each.name`, indexers.KindValue, "label", podSchema())
	if err != nil {
		t.Fatal(err)
	}
	if !p.UsesEach() {
		t.Error("UsesEach() = false")
	}
	_, err = env.CompileEachWithSchema(`object.spec.nodeNme + each.name`, indexers.KindValue, "label", podSchema())
	want := `invalid label expression: undefined field 'nodeNme' (did you mean "nodeName"?)
 | object.spec.nodeNme + each.name
 |             ^`
	if err == nil || err.Error() != want {
		t.Errorf("CompileEachWithSchema error:\n%v\nwant:\n%s", err, want)
	}
}
