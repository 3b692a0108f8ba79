package indexers

import (
	"slices"

	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// fastExpr evaluates one of the simplest expressions without the
// interpreter: most label and column expressions only read a field
// (object.metadata.name, object.spec.?nodeName.orValue(""), each.name) or
// compare one with a literal or with each. Its result is the interpreter's
// for the same variables, because it reads fields the way the interpreter
// does (traits.Mapper.Find on the same values) and compares them with
// types.Equal as the interpreter's == does. Where the interpreter would
// report an error (a missing field, a value that is not a map) it gives
// up (ok false) and the interpreter runs, to report it.
type fastExpr interface {
	eval(object, each any) (v ref.Val, ok bool)
}

// compileFast returns the fastExpr of e, or nil when e is not one of the
// forms it handles:
//
//	V.f.g…             V is object or each
//	V.f.?g.?h.orValue(L)  L a literal or []
//	A == B, A != B     A and B one of these forms, a literal, or each
//	A < B, <=, >, >=   the same, both of one of CEL's ordered types
//	A in [L, …]        a list of literals
//	P && Q, P || Q, !P  P and Q of these forms
//	has(V.f.g…)        a presence test
//	P ? A : B          A and B these forms, list literals of literals,
//	                   optional.none() or optional.of(L); or only one of
//	                   them is, and the other is left to the interpreter
//	string(A)          A one of these forms, of type bool, int, uint, double or string
func compileFast(e ast.Expr) fastExpr {
	switch e.Kind() {
	case ast.IdentKind, ast.SelectKind:
		if p, ok := selectPath(e); ok {
			return p
		}
		if e.Kind() == ast.SelectKind && e.AsSelect().IsTestOnly() {
			if p, ok := selectPath(e.AsSelect().Operand()); ok {
				return &presence{operand: p, field: types.String(e.AsSelect().FieldName())}
			}
		}
	case ast.CallKind:
		call := e.AsCall()
		switch fn := call.FunctionName(); {
		case fn == "orValue" && call.IsMemberFunction() && len(call.Args()) == 1:
			def, ok := literal(call.Args()[0])
			if !ok {
				return nil
			}
			if p, ok := optionalPath(call.Target()); ok {
				p.def = def
				return p
			}
		case call.IsMemberFunction():
		case len(call.Args()) == 2 && comparisons[fn] != nil:
			l, r := operand(call.Args()[0]), operand(call.Args()[1])
			if l != nil && r != nil {
				return &compare{l: l, r: r, test: comparisons[fn]}
			}
		case (fn == operators.LogicalAnd || fn == operators.LogicalOr) && len(call.Args()) == 2:
			l, r := compileFast(call.Args()[0]), compileFast(call.Args()[1])
			if l != nil && r != nil {
				return &logical{l: l, r: r, or: fn == operators.LogicalOr}
			}
		case fn == operators.LogicalNot && len(call.Args()) == 1:
			if x := compileFast(call.Args()[0]); x != nil {
				return &not{x}
			}
		case fn == operators.Conditional && len(call.Args()) == 3:
			c, a, b := compileFast(call.Args()[0]), branch(call.Args()[1]), branch(call.Args()[2])
			if c != nil && (a != nil || b != nil) {
				if a == nil {
					a = interpreted{}
				}
				if b == nil {
					b = interpreted{}
				}
				return &conditional{c: c, a: a, b: b}
			}
		case fn == operators.In && len(call.Args()) == 2:
			x := operand(call.Args()[0])
			set, ok := literalList(call.Args()[1])
			if x != nil && ok {
				return &in{x: x, set: set}
			}
		case fn == "string" && len(call.Args()) == 1:
			if x := compileFast(call.Args()[0]); x != nil {
				return &toString{x}
			}
		}
	}
	return nil
}

// operand is a side of ==: a fast expression or a literal.
func operand(e ast.Expr) fastExpr {
	if v, ok := literal(e); ok {
		return constant{v}
	}
	return compileFast(e)
}

// literal returns the value of a constant or of an empty list literal.
func literal(e ast.Expr) (ref.Val, bool) {
	switch e.Kind() {
	case ast.LiteralKind:
		return e.AsLiteral(), true
	case ast.ListKind:
		if e.AsList().Size() == 0 {
			return types.DefaultTypeAdapter.NativeToValue([]any{}), true
		}
	}
	return nil, false
}

type constant struct{ v ref.Val }

func (c constant) eval(any, any) (ref.Val, bool) { return c.v, true }

// path is V.f.g… (fields), then, when optional, .?h.?i… (opt) and
// .orValue(def).
type path struct {
	root string
	// fields and opt hold types.String values, boxed once here rather
	// than at each Find.
	fields []ref.Val
	opt    []ref.Val
	def    ref.Val
	// names is fields then opt.
	names []ref.Val
}

func selectPath(e ast.Expr) (*path, bool) {
	var fields []ref.Val
	for e.Kind() == ast.SelectKind {
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			return nil, false
		}
		fields = append(fields, types.String(sel.FieldName()))
		e = sel.Operand()
	}
	if e.Kind() != ast.IdentKind {
		return nil, false
	}
	root := e.AsIdent()
	if root != ObjectVar && root != EachVar {
		return nil, false
	}
	for i, j := 0, len(fields)-1; i < j; i, j = i+1, j-1 {
		fields[i], fields[j] = fields[j], fields[i]
	}
	return &path{root: root, fields: fields, names: fields}, true
}

// optionalPath parses V.f….?g.?h…, at least one optional selection, all
// those after the first optional too.
func optionalPath(e ast.Expr) (*path, bool) {
	var opt []ref.Val
	for e.Kind() == ast.CallKind {
		call := e.AsCall()
		if call.FunctionName() != operators.OptSelect || len(call.Args()) != 2 {
			return nil, false
		}
		name := call.Args()[1]
		if name.Kind() != ast.LiteralKind {
			return nil, false
		}
		s, ok := name.AsLiteral().(types.String)
		if !ok {
			return nil, false
		}
		opt = append(opt, s)
		e = call.Args()[0]
	}
	if len(opt) == 0 {
		return nil, false
	}
	p, ok := selectPath(e)
	if !ok {
		return nil, false
	}
	for i, j := 0, len(opt)-1; i < j; i, j = i+1, j-1 {
		opt[i], opt[j] = opt[j], opt[i]
	}
	p.opt = opt
	p.names = slices.Concat(p.fields, opt)
	return p, true
}

func (p *path) eval(object, each any) (ref.Val, bool) {
	root := object
	if p.root == EachVar {
		root = each
	}
	switch r := root.(type) {
	case nil:
		return nil, false
	case map[string]any:
		return p.evalNative(r)
	case ref.Val:
		return p.evalVal(r)
	}
	return p.evalVal(types.DefaultTypeAdapter.NativeToValue(root))
}

// evalNative walks JSON maps as they are, converting only the value found,
// as the interpreter does.
func (p *path) evalNative(m map[string]any) (ref.Val, bool) {
	var v any = m
	for _, f := range p.fields {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[string(f.(types.String))]; !ok {
			return nil, false
		}
	}
	for _, f := range p.opt {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[string(f.(types.String))]; !ok {
			return p.def, true
		}
	}
	return types.DefaultTypeAdapter.NativeToValue(v), true
}

// evalVal walks CEL values (jsonval views of typed objects), through
// structs with jsonval.Walk, then with Find.
func (p *path) evalVal(v ref.Val) (ref.Val, bool) {
	v, n, found := jsonval.Walk(v, p.names)
	if !found {
		if n < len(p.fields) {
			return nil, false
		}
		return p.def, true
	}
	if types.IsUnknownOrError(v) {
		return nil, false
	}
	fields, opt := p.fields, p.opt
	if n <= len(fields) {
		fields = fields[n:]
	} else {
		fields, opt = nil, opt[n-len(p.fields):]
	}
	for _, f := range fields {
		m, ok := v.(traits.Mapper)
		if !ok {
			return nil, false
		}
		if v, ok = m.Find(f); !ok || types.IsUnknownOrError(v) {
			return nil, false
		}
	}
	for _, f := range opt {
		m, ok := v.(traits.Mapper)
		if !ok {
			return nil, false
		}
		if v, found = m.Find(f); !found {
			return p.def, true
		}
		if types.IsUnknownOrError(v) {
			return nil, false
		}
	}
	return v, true
}

// branch is a side of a conditional: a fast expression, a literal, a list
// literal of literals, optional.none() or optional.of(L).
func branch(e ast.Expr) fastExpr {
	if l, ok := literalList(e); ok {
		return constant{types.NewRefValList(types.DefaultTypeAdapter, l)}
	}
	if e.Kind() == ast.CallKind && !e.AsCall().IsMemberFunction() {
		switch call := e.AsCall(); {
		case call.FunctionName() == "optional.none" && len(call.Args()) == 0:
			return constant{types.OptionalNone}
		case call.FunctionName() == "optional.of" && len(call.Args()) == 1:
			if v, ok := literal(call.Args()[0]); ok {
				return constant{types.OptionalOf(v)}
			}
		}
	}
	return operand(e)
}

// interpreted is a side of a conditional left to the interpreter: the
// whole expression is then evaluated by it.
type interpreted struct{}

func (interpreted) eval(any, any) (ref.Val, bool) { return nil, false }

// presence is has(V.f.g…): whether the map or object V.f… has the member.
// A V.f… that is not there, or not a map, is an error the interpreter
// reports.
type presence struct {
	operand *path
	field   ref.Val
}

func (e *presence) eval(object, each any) (ref.Val, bool) {
	v, ok := e.operand.eval(object, each)
	if !ok {
		return nil, false
	}
	m, ok := v.(traits.Mapper)
	if !ok {
		return nil, false
	}
	v, found := m.Find(e.field)
	if found && types.IsUnknownOrError(v) {
		return nil, false
	}
	return types.Bool(found), true
}

// conditional is P ? A : B.
type conditional struct{ c, a, b fastExpr }

func (e *conditional) eval(object, each any) (ref.Val, bool) {
	v, ok := e.c.eval(object, each)
	if !ok {
		return nil, false
	}
	switch v {
	case types.True:
		return e.a.eval(object, each)
	case types.False:
		return e.b.eval(object, each)
	}
	return nil, false
}

// literalList returns the elements of a list literal of literals.
func literalList(e ast.Expr) ([]ref.Val, bool) {
	if e.Kind() != ast.ListKind {
		return nil, false
	}
	l := e.AsList()
	if len(l.OptionalIndices()) > 0 {
		return nil, false
	}
	var out []ref.Val
	for _, x := range l.Elements() {
		if x.Kind() != ast.LiteralKind {
			return nil, false
		}
		out = append(out, x.AsLiteral())
	}
	return out, true
}

// comparisons are the binary operators compare handles: each says whether
// its operands are in its relation, or ok false to leave them to the
// interpreter.
var comparisons = map[string]func(l, r ref.Val) (result, ok bool){
	operators.Equals:        func(l, r ref.Val) (bool, bool) { return equal(l, r) },
	operators.NotEquals:     func(l, r ref.Val) (bool, bool) { eq, ok := equal(l, r); return !eq, ok },
	operators.Less:          ordered(func(c int64) bool { return c < 0 }),
	operators.LessEquals:    ordered(func(c int64) bool { return c <= 0 }),
	operators.Greater:       ordered(func(c int64) bool { return c > 0 }),
	operators.GreaterEquals: ordered(func(c int64) bool { return c >= 0 }),
}

// equal is the interpreter's ==: types.Equal.
func equal(l, r ref.Val) (bool, bool) {
	v := types.Equal(l, r)
	b, ok := v.(types.Bool)
	return bool(b), ok
}

// ordered is a relation of two values of the same ordered type (string,
// int, uint, double, bool, bytes, timestamp, duration) by their
// traits.Comparer, as the interpreter's overloads of <, <=, > and >=
// compare them; values of two types (1 < 2.5, which the interpreter also
// answers) are left to the interpreter.
func ordered(holds func(c int64) bool) func(l, r ref.Val) (bool, bool) {
	return func(l, r ref.Val) (bool, bool) {
		if l.Type() != r.Type() {
			return false, false
		}
		switch l.(type) {
		case types.String, types.Int, types.Uint, types.Double, types.Bool, types.Bytes, types.Timestamp, types.Duration:
		default:
			return false, false
		}
		c, ok := l.(traits.Comparer).Compare(r).(types.Int)
		if !ok {
			return false, false
		}
		return holds(int64(c)), true
	}
}

// compare is A == B, A != B, A < B, A <= B, A > B or A >= B.
type compare struct {
	l, r fastExpr
	test func(l, r ref.Val) (bool, bool)
}

func (e *compare) eval(object, each any) (ref.Val, bool) {
	l, ok := e.l.eval(object, each)
	if !ok {
		return nil, false
	}
	r, ok := e.r.eval(object, each)
	if !ok {
		return nil, false
	}
	holds, ok := e.test(l, r)
	if !ok {
		return nil, false
	}
	return types.Bool(holds), true
}

// in is A in [L, …]: whether A equals one of the literals.
type in struct {
	x   fastExpr
	set []ref.Val
}

func (e *in) eval(object, each any) (ref.Val, bool) {
	x, ok := e.x.eval(object, each)
	if !ok {
		return nil, false
	}
	for _, v := range e.set {
		eq, ok := equal(x, v)
		if !ok {
			return nil, false
		}
		if eq {
			return types.True, true
		}
	}
	return types.False, true
}

// logical is P && Q or P || Q. It answers only where both sides it needs
// are booleans: the interpreter's answer is then the same whatever the
// side it does not need would have been (false && error is false).
// Otherwise the interpreter runs, which also absorbs an error on the left
// (error && false is false).
type logical struct {
	l, r fastExpr
	or   bool
}

func (e *logical) eval(object, each any) (ref.Val, bool) {
	l, ok := e.l.eval(object, each)
	if !ok {
		return nil, false
	}
	lb, ok := l.(types.Bool)
	if !ok {
		return nil, false
	}
	if bool(lb) == e.or { // true || …, false && …
		return lb, true
	}
	r, ok := e.r.eval(object, each)
	if !ok {
		return nil, false
	}
	if _, ok := r.(types.Bool); !ok {
		return nil, false
	}
	return r, true
}

// not is !P.
type not struct{ x fastExpr }

func (e *not) eval(object, each any) (ref.Val, bool) {
	v, ok := e.x.eval(object, each)
	if !ok {
		return nil, false
	}
	b, ok := v.(types.Bool)
	if !ok {
		return nil, false
	}
	return !b, true
}

type toString struct{ x fastExpr }

func (s *toString) eval(object, each any) (ref.Val, bool) {
	v, ok := s.x.eval(object, each)
	if !ok {
		return nil, false
	}
	switch v.(type) {
	case types.String:
		return v, true
	case types.Bool, types.Int, types.Uint, types.Double:
		out := v.ConvertToType(types.StringType)
		if types.IsUnknownOrError(out) {
			return nil, false
		}
		return out, true
	}
	return nil, false
}
