package indexers

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// guards is what a check against the schema of one resource knows beyond
// that schema: the kind of the resource, and the declared types of the
// other resources the same expression is evaluated on.
//
// An expression written for several resources reads some fields only
// where they exist, and the check against each schema honours that:
//
//   - a branch that object.kind rules out for this kind is not checked:
//     the unreachable branch of c ? a : b, and the right of c && x or
//     c || x when c decides the result. c is object.kind == "K",
//     object.kind != "K", object.kind in ["K", …], and !, && and || of
//     those;
//   - a field that this resource's type lacks but another resource's type
//     has at the same place is accepted in the optional forms: a.?f is an
//     empty optional and has(a.f) is false, as they evaluate on this
//     resource's objects; a branch that such a has() rules out is not
//     checked either (has(a.f) ? a.f : 0).
//
// A field that no resource has stays an error, with its suggestion: a
// typo is caught wherever it is written.
type guards struct {
	// kind is the kind of the resource ("Pod"); "" when unknown, and then
	// no branch is ruled out.
	kind string
	// others are the declared types of object in the other resources.
	others []*apiservercel.DeclType
	// dyn is the environment, object being dyn, in which an expression
	// that was narrowed for the check is compiled.
	dyn *cel.Env
}

// check parses expr and checks it in env, object being declared with the
// type object, after removing from it what the guards rule out for this
// resource. narrowed reports whether anything was removed: the checked
// AST then says only that the expression is valid for this resource, and
// its output type may be looser than that of the whole expression.
func (g *guards) check(env *cel.Env, object *apiservercel.DeclType, expr string) (checked *cel.Ast, iss *cel.Issues, narrowed bool) {
	parsed, iss := env.Parse(expr)
	if iss.Err() != nil {
		return nil, iss, false
	}
	native := parsed.NativeRep()
	n := &narrower{kind: g.kind, object: object, others: g.others, nextID: maxID(native.Expr()) + 1}
	if object != nil && len(g.others) > 0 {
		n.optional(ast.NavigateAST(native))
	}
	n.prune(native.Expr())
	checked, iss = env.Check(parsed)
	return checked, iss, n.changed
}

// narrower rewrites a parsed expression in place.
type narrower struct {
	kind    string
	object  *apiservercel.DeclType
	others  []*apiservercel.DeclType
	nextID  int64
	changed bool
	fac     ast.ExprFactory
}

func (n *narrower) id() int64 {
	n.nextID++
	return n.nextID - 1
}

func (n *narrower) factory() ast.ExprFactory {
	if n.fac == nil {
		n.fac = ast.NewExprFactory()
	}
	return n.fac
}

// prune replaces, from the root down, the parts of e that object.kind (or
// a constant, such as a has() made false) rules out: an unreachable
// branch by dyn(null), which checks as any type, and the operand of a
// decided && or || by the result.
func (n *narrower) prune(e ast.Expr) {
	if e.Kind() == ast.CallKind {
		call := e.AsCall()
		args := call.Args()
		switch fn := call.FunctionName(); {
		case fn == operators.Conditional && len(args) == 3:
			if v, ok := n.decide(args[0]); ok {
				dead := args[2]
				if !v {
					dead = args[1]
				}
				dead.SetKindCase(n.factory().NewCall(0, "dyn", n.factory().NewLiteral(n.id(), types.NullValue)))
				n.changed = true
			}
		case (fn == operators.LogicalAnd || fn == operators.LogicalOr) && len(args) == 2:
			// false && x and true || x: x cannot change the result.
			short := fn == operators.LogicalOr
			for i, a := range args {
				if v, ok := n.decide(a); ok && v == short {
					other := args[1-i]
					other.SetKindCase(n.factory().NewLiteral(0, types.Bool(short)))
					n.changed = true
					break
				}
			}
		}
	}
	for _, c := range children(e) {
		n.prune(c)
	}
}

// decide evaluates a condition on object.kind for this kind; ok is false
// when c is not such a condition.
func (n *narrower) decide(c ast.Expr) (value, ok bool) {
	if c.Kind() == ast.LiteralKind {
		b, ok := c.AsLiteral().(types.Bool)
		return bool(b), ok
	}
	if c.Kind() != ast.CallKind {
		return false, false
	}
	call := c.AsCall()
	args := call.Args()
	switch call.FunctionName() {
	case operators.LogicalNot:
		if len(args) == 1 {
			v, ok := n.decide(args[0])
			return !v, ok
		}
	case operators.Equals, operators.NotEquals:
		if len(args) != 2 || n.kind == "" {
			return false, false
		}
		lit, ok := stringLiteral(args[1])
		if !ok || !isObjectKind(args[0]) {
			if lit, ok = stringLiteral(args[0]); !ok || !isObjectKind(args[1]) {
				return false, false
			}
		}
		return (lit == n.kind) == (call.FunctionName() == operators.Equals), true
	case operators.In:
		if len(args) != 2 || n.kind == "" || !isObjectKind(args[0]) || args[1].Kind() != ast.ListKind {
			return false, false
		}
		in := false
		for _, el := range args[1].AsList().Elements() {
			lit, ok := stringLiteral(el)
			if !ok {
				return false, false
			}
			in = in || lit == n.kind
		}
		return in, true
	case operators.LogicalAnd, operators.LogicalOr:
		if len(args) != 2 {
			return false, false
		}
		short := call.FunctionName() == operators.LogicalOr
		l, lok := n.decide(args[0])
		r, rok := n.decide(args[1])
		switch {
		case (lok && l == short) || (rok && r == short):
			return short, true
		case lok && rok:
			return !short, true
		}
	}
	return false, false
}

// isObjectKind reports whether e is object.kind. The parsed expression
// declares no variable named object in its comprehensions that matters
// here: the macros' own variables are the user's, and shadowing object is
// unusual enough not to be told apart.
func isObjectKind(e ast.Expr) bool {
	if e.Kind() != ast.SelectKind {
		return false
	}
	sel := e.AsSelect()
	if sel.IsTestOnly() || sel.FieldName() != "kind" {
		return false
	}
	op := sel.Operand()
	return op.Kind() == ast.IdentKind && op.AsIdent() == ObjectVar
}

// optional replaces a.?f by optional.none() and has(a.f) by false where f
// is a field this resource's type lacks and another resource's type has.
func (n *narrower) optional(root ast.NavigableExpr) {
	var targets []ast.NavigableExpr
	var values []ast.Expr
	for _, e := range ast.MatchDescendants(root, func(ast.NavigableExpr) bool { return true }) {
		var operand ast.NavigableExpr
		var field string
		var replacement ast.Expr
		switch e.Kind() {
		case ast.SelectKind:
			sel := e.AsSelect()
			if !sel.IsTestOnly() {
				continue
			}
			operand, field = e.Children()[0], sel.FieldName()
			replacement = n.factory().NewLiteral(0, types.False)
		case ast.CallKind:
			call := e.AsCall()
			if call.FunctionName() != operators.OptSelect || len(call.Args()) != 2 {
				continue
			}
			f, ok := stringLiteral(call.Args()[1])
			if !ok {
				continue
			}
			operand, field = e.Children()[0], f
			replacement = n.factory().NewCall(0, "optional.none")
		default:
			continue
		}
		if !n.elsewhere(operand, field) {
			continue
		}
		targets = append(targets, e)
		values = append(values, replacement)
	}
	for i, t := range targets {
		t.SetKindCase(values[i])
		n.changed = true
	}
}

// elsewhere reports whether field is missing from the type of operand in
// this resource and present in that of another resource.
func (n *narrower) elsewhere(operand ast.NavigableExpr, field string) bool {
	t := declTypeOf(operand, n.object)
	if t == nil || !t.IsObject() || memberType(t, field) != nil {
		return false
	}
	for _, o := range n.others {
		if memberType(declTypeOf(operand, o), field) != nil {
			return true
		}
	}
	return false
}

// maxID returns the largest id in e.
func maxID(e ast.Expr) int64 {
	m := e.ID()
	for _, c := range children(e) {
		m = max(m, maxID(c))
	}
	return m
}
