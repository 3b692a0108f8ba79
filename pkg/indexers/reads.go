package indexers

import (
	"maps"
	"slices"

	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// Reads are the parts of object, and of each, that an expression reads,
// closer than ObjectPaths: where it iterates over a list read from them
// (the range of map(), filter(), exists() and the like) and reads the
// elements only through field selections, the paths go on into the
// elements, through jsonval.Elements (status.containerStatuses[].name
// for object.status.containerStatuses.map(s, s.name)). An iteration reads
// the list's length too, as the path to the elements' member ""
// (jsonval.Fingerprint reads no member of that name in a struct).
type Reads struct {
	// Object are the paths of object read; nil: object may be read
	// whole.
	Object *jsonval.Paths
	// Each are the paths of each read, from each (each.name reads
	// name); nil: each may be read whole.
	Each *jsonval.Paths
}

// Reads returns what the expression reads of object and each, and false
// when it was not analysed.
func (p *Program) Reads() (Reads, bool) {
	if p.reads == nil {
		return Reads{}, false
	}
	r := Reads{}
	if p.reads.Object != nil {
		r.Object = &jsonval.Paths{}
		r.Object.Union(p.reads.Object)
	}
	if p.reads.Each != nil {
		r.Each = &jsonval.Paths{}
		r.Each.Union(p.reads.Each)
	}
	return r, true
}

// ListPath returns the path of object that the expression is, when it is
// only a list read from the object (object.status.containerStatuses, or
// object.status.?containerStatuses.orValue([])): the values of each are
// then its elements.
func (p *Program) ListPath() ([]string, bool) {
	return p.listPath, p.listPath != nil
}

// binding is what a variable is: a part of object or of each, at path.
type binding struct {
	each bool
	path []string
}

// readAnalysis collects the reads of an expression.
type readAnalysis struct {
	reads Reads
}

// analyseReads computes the Reads of e.
func analyseReads(e ast.Expr) *Reads {
	a := &readAnalysis{reads: Reads{Object: &jsonval.Paths{}, Each: &jsonval.Paths{}}}
	a.walk(e, map[string]binding{ObjectVar: {}, EachVar: {each: true}})
	return &a.reads
}

// listPathOf returns the path that e is, when it is a list read from
// object (see ListPath).
func listPathOf(e ast.Expr) []string {
	b, ok := source(e, map[string]binding{ObjectVar: {}})
	if !ok || b.each || len(b.path) == 0 {
		return nil
	}
	return b.path
}

func (a *readAnalysis) add(b binding) {
	switch {
	case b.each && len(b.path) == 0:
		a.reads.Each = nil
	case b.each:
		if a.reads.Each != nil {
			a.reads.Each.Add(b.path)
		}
	case len(b.path) == 0:
		a.reads.Object = nil
	default:
		if a.reads.Object != nil {
			a.reads.Object.Add(b.path)
		}
	}
}

// walk adds what e reads, with the variables vars bound.
func (a *readAnalysis) walk(e ast.Expr, vars map[string]binding) {
	if b, ok := chain(e, vars); ok {
		a.add(b)
		return
	}
	if b, ok := shapeOf(e, vars); ok {
		a.add(b)
		return
	}
	if e.Kind() != ast.ComprehensionKind {
		for _, c := range children(e) {
			a.walk(c, vars)
		}
		return
	}
	c := e.AsComprehension()
	// Its variables hide those of the same names.
	inner := maps.Clone(vars)
	delete(inner, c.IterVar())
	if c.HasIterVar2() {
		delete(inner, c.IterVar2())
	}
	if b, ok := a.rangeOf(c.IterRange(), vars); ok {
		elems := elements(b)
		a.add(length(b))
		if c.HasIterVar2() {
			inner[c.IterVar2()] = elems // the first is an index
		} else {
			inner[c.IterVar()] = elems
		}
	} else {
		a.walk(c.IterRange(), vars)
	}
	a.walk(c.AccuInit(), vars)
	delete(inner, c.AccuVar())
	a.walk(c.LoopCondition(), inner)
	a.walk(c.LoopStep(), inner)
	result := maps.Clone(vars)
	delete(result, c.AccuVar())
	a.walk(c.Result(), result)
}

// elements is the binding of the elements of the list b.
func elements(b binding) binding {
	return binding{each: b.each, path: append(slices.Clip(b.path), jsonval.Elements)}
}

// length is what reading the length of the list b reads: the elements'
// member "", which jsonval.Fingerprint finds in no struct, so that it sums
// whether b is present and null, a list's length, and any other value
// whole.
func length(b binding) binding {
	return binding{each: b.each, path: append(slices.Clip(elements(b).path), "")}
}

// rangeOf reports whether e, the range of a comprehension, is a list read
// from a bound variable (see source), or some of its elements, filtered
// (L.filter(x, P) of such a list L): it then adds what the filter reads,
// and returns the list.
func (a *readAnalysis) rangeOf(e ast.Expr, vars map[string]binding) (binding, bool) {
	if b, ok := source(e, vars); ok {
		return b, true
	}
	if l, cond, ok := orNothing(e); ok {
		b, ok := a.rangeOf(l, vars)
		if ok {
			a.walk(cond, vars)
		}
		return b, ok
	}
	if e.Kind() != ast.ComprehensionKind {
		return binding{}, false
	}
	c := e.AsComprehension()
	cond, ok := filterOf(c)
	if !ok {
		return binding{}, false
	}
	b, ok := a.rangeOf(c.IterRange(), vars)
	if !ok {
		return binding{}, false
	}
	a.add(length(b))
	inner := maps.Clone(vars)
	delete(inner, c.AccuVar())
	inner[c.IterVar()] = elements(b)
	a.walk(cond, inner)
	return b, true
}

// orNothing reports whether e is a conditional whose one branch is an empty
// list literal (C ? L : [], or C ? [] : L), and returns the other branch
// and the condition: iterating over e iterates over L or over nothing.
func orNothing(e ast.Expr) (l, cond ast.Expr, ok bool) {
	if e.Kind() != ast.CallKind || e.AsCall().FunctionName() != "_?_:_" || len(e.AsCall().Args()) != 3 {
		return nil, nil, false
	}
	args := e.AsCall().Args()
	empty := func(x ast.Expr) bool { return x.Kind() == ast.ListKind && len(x.AsList().Elements()) == 0 }
	switch {
	case empty(args[2]):
		return args[1], args[0], true
	case empty(args[1]):
		return args[2], args[0], true
	}
	return nil, nil, false
}

// shapeOf reports whether e is type(X) or size(X) (X.size()) of a source
// X (see source), and returns what it reads of X: whether it is present
// and null, a list's length, any other value whole. Both are told by
// them, the elements of a list not read.
func shapeOf(e ast.Expr, vars map[string]binding) (binding, bool) {
	if e.Kind() != ast.CallKind {
		return binding{}, false
	}
	call := e.AsCall()
	var x ast.Expr
	switch {
	case call.FunctionName() == "type" && !call.IsMemberFunction() && len(call.Args()) == 1,
		call.FunctionName() == "size" && !call.IsMemberFunction() && len(call.Args()) == 1:
		x = call.Args()[0]
	case call.FunctionName() == "size" && call.IsMemberFunction() && len(call.Args()) == 0:
		x = call.Target()
	default:
		return binding{}, false
	}
	b, ok := source(x, vars)
	if !ok {
		return binding{}, false
	}
	return length(b), true
}

// filterOf returns the condition of c when c is a filter() macro: its
// result is the elements of its range for which the condition holds.
func filterOf(c ast.ComprehensionExpr) (ast.Expr, bool) {
	isIdent := func(e ast.Expr, name string) bool { return e.Kind() == ast.IdentKind && e.AsIdent() == name }
	accu, x := c.AccuVar(), c.IterVar()
	if c.HasIterVar2() || !isIdent(c.Result(), accu) || c.AccuInit().Kind() != ast.ListKind ||
		len(c.AccuInit().AsList().Elements()) != 0 || c.LoopStep().Kind() != ast.CallKind {
		return nil, false
	}
	if lit := c.LoopCondition(); lit.Kind() != ast.LiteralKind || lit.AsLiteral() != types.True {
		return nil, false
	}
	step := c.LoopStep().AsCall()
	if step.FunctionName() != "_?_:_" || len(step.Args()) != 3 || !isIdent(step.Args()[2], accu) {
		return nil, false
	}
	add := step.Args()[1]
	if add.Kind() != ast.CallKind || add.AsCall().FunctionName() != "_+_" || len(add.AsCall().Args()) != 2 {
		return nil, false
	}
	l, r := add.AsCall().Args()[0], add.AsCall().Args()[1]
	if !isIdent(l, accu) || r.Kind() != ast.ListKind || len(r.AsList().Elements()) != 1 || !isIdent(r.AsList().Elements()[0], x) {
		return nil, false
	}
	return step.Args()[0], true
}

// chain reports whether e is a bound variable followed by field selections
// (plain, has() tests or optional ones), and returns what it reads.
func chain(e ast.Expr, vars map[string]binding) (binding, bool) {
	switch e.Kind() {
	case ast.IdentKind:
		b, ok := vars[e.AsIdent()]
		return b, ok
	case ast.SelectKind:
		sel := e.AsSelect()
		b, ok := chain(sel.Operand(), vars)
		if !ok {
			return binding{}, false
		}
		return binding{each: b.each, path: append(slices.Clip(b.path), sel.FieldName())}, true
	case ast.CallKind:
		call := e.AsCall()
		if call.FunctionName() != "_?._" || len(call.Args()) != 2 || call.Args()[1].Kind() != ast.LiteralKind {
			return binding{}, false
		}
		name, isString := call.Args()[1].AsLiteral().(types.String)
		if !isString || name == "" {
			return binding{}, false
		}
		b, ok := chain(call.Args()[0], vars)
		if !ok {
			return binding{}, false
		}
		return binding{each: b.each, path: append(slices.Clip(b.path), string(name))}, true
	}
	return binding{}, false
}

// source reports whether e is a chain (see chain), or an optional chain
// with a default that reads nothing (X.?f.orValue([])), and returns what
// it reads.
func source(e ast.Expr, vars map[string]binding) (binding, bool) {
	if b, ok := chain(e, vars); ok {
		return b, true
	}
	if e.Kind() != ast.CallKind {
		return binding{}, false
	}
	call := e.AsCall()
	if call.FunctionName() != "orValue" || !call.IsMemberFunction() || len(call.Args()) != 1 || !constantExpr(call.Args()[0]) {
		return binding{}, false
	}
	return chain(call.Target(), vars)
}

// constantExpr reports whether e is a literal, or a list or map of
// literals.
func constantExpr(e ast.Expr) bool {
	switch e.Kind() {
	case ast.LiteralKind:
		return true
	case ast.ListKind, ast.MapKind:
		for _, c := range children(e) {
			if !constantExpr(c) {
				return false
			}
		}
		return true
	}
	return false
}
