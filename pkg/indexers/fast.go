package indexers

import (
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
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
//	A == B             A and B one of the above, a literal, or each
//	string(A)          A one of the above, of type bool, int, uint, double or string
func compileFast(e ast.Expr) fastExpr {
	switch e.Kind() {
	case ast.IdentKind, ast.SelectKind:
		if p, ok := selectPath(e); ok {
			return p
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
		case fn == operators.Equals && !call.IsMemberFunction() && len(call.Args()) == 2:
			l, r := operand(call.Args()[0]), operand(call.Args()[1])
			if l != nil && r != nil {
				return &equals{l, r}
			}
		case fn == "string" && !call.IsMemberFunction() && len(call.Args()) == 1:
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
	root   string
	fields []types.String
	opt    []types.String
	def    ref.Val
}

func selectPath(e ast.Expr) (*path, bool) {
	var fields []types.String
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
	return &path{root: root, fields: fields}, true
}

// optionalPath parses V.f….?g.?h…, at least one optional selection, all
// those after the first optional too.
func optionalPath(e ast.Expr) (*path, bool) {
	var opt []types.String
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
	return p, true
}

func (p *path) eval(object, each any) (ref.Val, bool) {
	var root any = object
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
		if v, ok = mm[string(f)]; !ok {
			return nil, false
		}
	}
	for _, f := range p.opt {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[string(f)]; !ok {
			return p.def, true
		}
	}
	return types.DefaultTypeAdapter.NativeToValue(v), true
}

// evalVal walks CEL values (jsonval views of typed objects).
func (p *path) evalVal(v ref.Val) (ref.Val, bool) {
	for _, f := range p.fields {
		m, ok := v.(traits.Mapper)
		if !ok {
			return nil, false
		}
		if v, ok = m.Find(f); !ok || types.IsUnknownOrError(v) {
			return nil, false
		}
	}
	for _, f := range p.opt {
		m, ok := v.(traits.Mapper)
		if !ok {
			return nil, false
		}
		found := false
		if v, found = m.Find(f); !found {
			return p.def, true
		}
		if types.IsUnknownOrError(v) {
			return nil, false
		}
	}
	return v, true
}

type equals struct{ l, r fastExpr }

func (e *equals) eval(object, each any) (ref.Val, bool) {
	l, ok := e.l.eval(object, each)
	if !ok {
		return nil, false
	}
	r, ok := e.r.eval(object, each)
	if !ok {
		return nil, false
	}
	v := types.Equal(l, r)
	if types.IsUnknownOrError(v) {
		return nil, false
	}
	return v, true
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
