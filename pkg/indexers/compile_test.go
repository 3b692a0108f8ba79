package indexers_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

func TestCompileErrors(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		name    string
		expr    string
		kind    indexers.Kind
		context string
		want    string // the whole Error() text
	}{{
		name:    "misspelled variable",
		expr:    `obect.status.phase == "Running"`,
		kind:    indexers.KindPredicate,
		context: "--where",
		want: `invalid --where expression: undeclared reference to 'obect' (did you mean "object"?)
 | obect.status.phase == "Running"
 | ^`,
	}, {
		name:    "syntax error",
		expr:    `object.status.phase ==`,
		kind:    indexers.KindPredicate,
		context: "--where",
		want: `invalid --where expression: syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}
 | object.status.phase ==
 |                       ^`,
	}, {
		name:    "unknown function",
		expr:    `lenght(object.metadata.name) > 3`,
		kind:    indexers.KindPredicate,
		context: "--where",
		want: `invalid --where expression: undeclared reference to 'lenght'
 | lenght(object.metadata.name) > 3
 | ^`,
	}, {
		name:    "misspelled function",
		expr:    `sise(object.spec.containers) > 1`,
		kind:    indexers.KindPredicate,
		context: "--where",
		want: `invalid --where expression: undeclared reference to 'sise' (did you mean "size"?)
 | sise(object.spec.containers) > 1
 | ^`,
	}, {
		name:    "misspelled iteration variable",
		expr:    `object.spec.containers.all(container, contaner.image != "")`,
		kind:    indexers.KindPredicate,
		context: "--where",
		want: `invalid --where expression: undeclared reference to 'contaner' (did you mean "container"?)
 | object.spec.containers.all(container, contaner.image != "")
 |                                       ^`,
	}, {
		name:    "predicate of the wrong type",
		expr:    `object.metadata.name.size()`,
		kind:    indexers.KindPredicate,
		context: "--where",
		want:    `invalid --where expression: must evaluate to bool but got int`,
	}, {
		name:    "index of the wrong type",
		expr:    `object.metadata.name.size()`,
		kind:    indexers.KindIndex,
		context: `index "byLength"`,
		want:    `invalid index "byLength" expression: must evaluate to string, list(string) or null but got int`,
	}, {
		name:    "index list of the wrong type",
		expr:    `[1, 2]`,
		kind:    indexers.KindIndex,
		context: `index "numbers"`,
		want:    `invalid index "numbers" expression: must evaluate to string, list(string) or null but got list(int)`,
	}, {
		name:    "resource that is not a literal",
		expr:    `get(object.kind, object.metadata.name) != null`,
		kind:    indexers.KindPredicate,
		context: "--where",
		want: `invalid --where expression: the first argument of get() must be a string literal naming a resource, such as "nodes"
 | get(object.kind, object.metadata.name) != null
 |     ^`,
	}, {
		name:    "index name that is not a literal",
		expr:    `byIndex("pods", "by" + "Node", object.spec.nodeName).size()`,
		kind:    indexers.KindValue,
		context: `column "neighbours"`,
		want: `invalid column "neighbours" expression: the second argument of byIndex() must be a string literal naming an index, such as "byNode"
 | byIndex("pods", "by" + "Node", object.spec.nodeName).size()
 |                 ^`,
	}, {
		name:    "invalid regular expression",
		expr:    `object.metadata.name.matches("[")`,
		kind:    indexers.KindPredicate,
		context: "--where",
		want: "invalid --where expression: invalid matches argument: error parsing regexp: missing closing ]: `[`\n" +
			` | object.metadata.name.matches("[")` + "\n" +
			` |                              ^`,
	}, {
		name:    "error on a later line",
		expr:    "object.status.phase == \"Running\" &&\n\tobject.metadata.name.startsWith(1)",
		kind:    indexers.KindPredicate,
		context: "--where",
		want: "invalid --where expression at line 2: found no matching overload for 'startsWith' applied to 'dyn.(int)'\n" +
			" | \tobject.metadata.name.startsWith(1)\n" +
			" | \t                     ^",
	}, {
		name:    "empty",
		expr:    "  ",
		kind:    indexers.KindValue,
		context: `column "x"`,
		want:    `invalid column "x" expression: the expression is empty`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := env.Compile(tt.expr, tt.kind, tt.context)
			if err == nil {
				t.Fatalf("Compile(%q) = %v, want an error", tt.expr, p)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Compile(%q) error:\n%s\nwant:\n%s", tt.expr, got, tt.want)
			}
			var exprErr *indexers.ExprError
			if !errors.As(err, &exprErr) {
				t.Fatalf("Compile(%q) error is a %T, want an *ExprError", tt.expr, err)
			}
			if exprErr.Context != tt.context || exprErr.Expr != tt.expr {
				t.Errorf("ExprError context %q, expr %q; want %q, %q", exprErr.Context, exprErr.Expr, tt.context, tt.expr)
			}
		})
	}
}

func TestCompileUnknownKind(t *testing.T) {
	env := newEnv(t)
	if _, err := env.Compile("true", indexers.Kind(42), "--where"); err == nil || !strings.Contains(err.Error(), "unknown expression kind 42") {
		t.Errorf("Compile with an unknown kind: error %v, want one naming the kind", err)
	}
}

func TestExprErrorPosition(t *testing.T) {
	env := newEnv(t)
	_, err := env.Compile("object.status.phase == \"Running\" &&\n  obect.spec.nodeName == \"n1\"", indexers.KindPredicate, "--where")
	var exprErr *indexers.ExprError
	if !errors.As(err, &exprErr) {
		t.Fatalf("error %v is not an *ExprError", err)
	}
	if exprErr.Line != 2 || exprErr.Column != 3 {
		t.Errorf("error at line %d, column %d; want line 2, column 3", exprErr.Line, exprErr.Column)
	}
	if want := `undeclared reference to 'obect' (did you mean "object"?)`; exprErr.Message != want {
		t.Errorf("message %q, want %q", exprErr.Message, want)
	}
}

func TestExprErrorFormat(t *testing.T) {
	tests := []struct {
		name string
		err  indexers.ExprError
		want string
	}{{
		name: "whole expression",
		err:  indexers.ExprError{Context: "--where", Expr: "1", Message: "must evaluate to bool but got int"},
		want: "invalid --where expression: must evaluate to bool but got int",
	}, {
		name: "no context",
		err:  indexers.ExprError{Expr: "a b", Line: 1, Column: 3, Message: "oops"},
		want: "invalid expression: oops\n | a b\n |   ^",
	}, {
		name: "characters beyond ASCII",
		err:  indexers.ExprError{Context: "--where", Expr: `"héhé" + x`, Line: 1, Column: 10, Message: "oops"},
		want: "invalid --where expression: oops\n | \"héhé\" + x\n |          ^",
	}, {
		name: "line only",
		err:  indexers.ExprError{Context: "--where", Expr: "a\nb", Line: 2, Message: "oops"},
		want: "invalid --where expression at line 2: oops\n | b",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error():\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestCompileAcceptedOutputTypes(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		expr string
		kind indexers.Kind
	}{
		{`object.status.phase == "Pending"`, indexers.KindPredicate},
		{`object.spec.paused`, indexers.KindPredicate}, // dyn: checked at run time
		{`object.spec.nodeName`, indexers.KindIndex},
		{`"n1"`, indexers.KindIndex},
		{`null`, indexers.KindIndex},
		{`["a", "b"]`, indexers.KindIndex},
		{`object.spec.containers.map(c, c.image)`, indexers.KindIndex},
		{`object.?spec.?nodeName`, indexers.KindIndex},
		{`optional.of("a")`, indexers.KindIndex},
		{`object.metadata.labels`, indexers.KindValue},
		{`1 + 2`, indexers.KindValue},
	}
	for _, tt := range tests {
		if _, err := env.Compile(tt.expr, tt.kind, "test"); err != nil {
			t.Errorf("Compile(%q, %v): %v", tt.expr, tt.kind, err)
		}
	}
}

func TestReferences(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		expr string
		want []indexers.Reference
	}{
		{`object.status.phase == "Running"`, nil},
		{`get("nodes", object.spec.nodeName) != null`, []indexers.Reference{{Resource: "nodes", Calls: []string{`get("nodes", …)`}}}},
		{
			`get("nodes", object.spec.nodeName) != null &&
			 byIndex("pods", "byNode", object.spec.nodeName).size() > 1 &&
			 byIndex("pods", "namespace", object.metadata.namespace).size() > 1 &&
			 object.spec.containers.all(c, get("configmaps", object.metadata.namespace, c.name) == null) &&
			 byIndex("pods", "byNode", "n2").size() > 0`,
			[]indexers.Reference{
				{Resource: "configmaps", Calls: []string{`get("configmaps", …)`}},
				{Resource: "nodes", Calls: []string{`get("nodes", …)`}},
				{Resource: "pods", Indexes: []string{"byNode", "namespace"}, Calls: []string{`byIndex("pods", "byNode", …)`, `byIndex("pods", "namespace", …)`}},
			},
		},
	}
	for _, tt := range tests {
		p := compile(t, env, tt.expr, indexers.KindPredicate)
		if got := p.References(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("References of %q = %#v, want %#v", tt.expr, got, tt.want)
		}
	}
}

func TestProgramAccessors(t *testing.T) {
	env := newEnv(t)
	p, err := env.Compile(`object.spec.nodeName`, indexers.KindIndex, `index "byNode"`)
	if err != nil {
		t.Fatal(err)
	}
	if p.Expr() != `object.spec.nodeName` || p.Kind() != indexers.KindIndex || p.Context() != `index "byNode"` {
		t.Errorf("Expr, Kind, Context = %q, %v, %q", p.Expr(), p.Kind(), p.Context())
	}
	if got := indexers.KindPredicate.String(); got != "predicate" {
		t.Errorf("KindPredicate.String() = %q", got)
	}
}
