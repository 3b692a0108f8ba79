package indexers

import (
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/functions"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// fastExpr evaluates an expression without the interpreter: most label
// and column expressions only read a field (object.metadata.name,
// object.spec.?nodeName.orValue(""), each.name) or compare one with a
// literal, and most of the others map or filter a short list of them.
// Its result is the interpreter's for the same variables, because it reads
// fields the way the interpreter does (traits.Mapper.Find on the same
// values), compares them with types.Equal as the interpreter's == does,
// builds lists and maps as it does, iterates comprehensions as its folder
// does, and calls the very function bindings the interpreter's plan would. Where the interpreter would report an error (a
// missing field, a value that is not a map, a function refusing its
// arguments), or where it would behave in a way fastExpr does not follow,
// it gives up (ok false) and the interpreter runs, to report it: fastExpr
// has no side effects, so giving up half way changes nothing.
//
// locals hold the variables of the comprehensions being evaluated, at the
// slots compileFast gave them.
type fastExpr interface {
	eval(object, each any, locals []ref.Val) (v ref.Val, ok bool)
}

// fastCompiler compiles checked expressions into fastExprs.
type fastCompiler struct {
	env  *cel.Env
	refs map[int64]*ast.ReferenceInfo
	// scope names the comprehension variables visible at each slot; ""
	// for a slot whose variable is hidden (a comprehension's iteration
	// variables in its result).
	scope []string
	// slots is the number of slots the expression needs.
	slots int
}

// compileFast returns the fastExpr of the checked expression and the
// number of local slots its evaluation needs, or nil when the expression
// is not made only of the forms it handles:
//
//	object, each, comprehension variables, literals
//	V.f, V.?f, has(V.f)   field selection, optional or not, and presence
//	V[i], V[?i]           list and map indexing, optional or not
//	[A, …], {K: A, …}     list and map literals (no optional entries)
//	A == B, A != B, A < B, <=, >, >=, A && B, A || B, !A, P ? A : B
//	comprehensions        map, filter, all, exists, transformList, … of
//	                      one or two variables
//	calls of the Env's functions that have bindings: string(), size(),
//	                      startsWith(), quantity(), orValue(), flatten(), …
//
// get(), byIndex() and the crs.* functions, variables of other names
// (cluster) and message construction are left to the interpreter.
func compileFast(env *cel.Env, checked *ast.AST) (fastExpr, int) {
	c := &fastCompiler{env: env, refs: checked.ReferenceMap()}
	x := c.compile(checked.Expr())
	if x == nil {
		return nil, 0
	}
	return x, c.slots
}

func (c *fastCompiler) compile(e ast.Expr) fastExpr {
	switch e.Kind() {
	case ast.LiteralKind:
		return constant{e.AsLiteral()}
	case ast.ListKind:
		if l, ok := literalList(e); ok {
			return constant{types.NewRefValList(types.DefaultTypeAdapter, l)}
		}
		return c.list(e.AsList())
	case ast.MapKind:
		return c.mapLiteral(e.AsMap())
	case ast.ComprehensionKind:
		return c.comprehension(e.AsComprehension())
	case ast.IdentKind, ast.SelectKind:
		if p, ok := c.selectPath(e); ok {
			return p
		}
		if e.Kind() == ast.IdentKind {
			return c.ident(e)
		}
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			if p, ok := c.selectPath(sel.Operand()); ok {
				return &presence{operand: p, field: types.String(sel.FieldName())}
			}
		}
		operand := c.compile(sel.Operand())
		if operand == nil {
			return nil
		}
		return &selection{operand: operand, field: types.String(sel.FieldName()), test: sel.IsTestOnly()}
	case ast.CallKind:
		return c.call(e, e.AsCall())
	}
	return nil
}

func (c *fastCompiler) call(e ast.Expr, call ast.CallExpr) fastExpr {
	args := call.Args()
	switch fn := call.FunctionName(); {
	case (fn == "orValue" || fn == "or") && call.IsMemberFunction() && len(args) == 1:
		if def, ok := literal(args[0]); ok && fn == "orValue" {
			if p, ok := c.optionalPath(call.Target()); ok {
				p.def = def
				return p
			}
		}
		// Planned apart from any binding: the alternative is evaluated
		// only when the optional is empty.
		opt, alt := c.compile(call.Target()), c.compile(args[0])
		if opt != nil && alt != nil {
			return &orElse{opt: opt, alt: alt, unwrap: fn == "orValue"}
		}
		return nil
	case fn == "flatten" && call.IsMemberFunction() && len(args) == 0:
		// L.map(x, E).flatten(): E's elements are collected as E is
		// evaluated, without a list of lists to flatten afterwards.
		if r := c.refs[e.ID()]; r != nil && slices.Equal(r.OverloadIDs, []string{"list_flatten"}) {
			if f, ok := c.compile(call.Target()).(*fold); ok && f.collect && !f.spread {
				f.spread = true
				return f
			}
		}
	case call.IsMemberFunction():
	case len(args) == 2 && comparisons[fn] != nil:
		l, r := c.operand(args[0]), c.operand(args[1])
		if l == nil || r == nil {
			return nil
		}
		cmp := &compare{l: l, r: r, test: comparisons[fn]}
		if fn == operators.Equals || fn == operators.NotEquals {
			if sc := stringComparison(cmp, fn == operators.NotEquals); sc != nil {
				return sc
			}
		}
		return cmp
	case (fn == operators.LogicalAnd || fn == operators.LogicalOr) && len(args) == 2:
		l, r := c.compile(args[0]), c.compile(args[1])
		if l != nil && r != nil {
			return &logical{l: l, r: r, or: fn == operators.LogicalOr}
		}
		return nil
	case fn == operators.LogicalNot && len(args) == 1:
		if x := c.compile(args[0]); x != nil {
			return &not{x}
		}
		return nil
	case fn == operators.Conditional && len(args) == 3:
		cond, a, b := c.compile(args[0]), c.branch(args[1]), c.branch(args[2])
		if cond != nil && (a != nil || b != nil) {
			if a == nil {
				a = interpreted{}
			}
			if b == nil {
				b = interpreted{}
			}
			return &conditional{c: cond, a: a, b: b}
		}
		return nil
	case fn == operators.In && len(args) == 2:
		if set, ok := literalList(args[1]); ok {
			if x := c.operand(args[0]); x != nil {
				return &in{x: x, set: set}
			}
			return nil
		}
	case fn == "string" && len(args) == 1:
		if x := c.compile(args[0]); x != nil {
			return &toString{x}
		}
		return nil
	case (fn == operators.Index || fn == operators.OptIndex) && len(args) == 2:
		x, i := c.compile(args[0]), c.compile(args[1])
		if x != nil && i != nil {
			return &index{operand: x, index: i, optional: fn == operators.OptIndex}
		}
		return nil
	case fn == operators.OptSelect && len(args) == 2:
		name, ok := args[1].AsLiteral().(types.String)
		if args[1].Kind() != ast.LiteralKind || !ok {
			return nil
		}
		if x := c.compile(args[0]); x != nil {
			return &selection{operand: x, field: name, optional: true}
		}
		return nil
	}
	return c.function(e, call)
}

// function is a call of one of the Env's functions, as the interpreter
// plans it: arguments evaluated first, then the binding of the overload
// the checker chose when it chose one, else the function's dynamic
// dispatch.
func (c *fastCompiler) function(e ast.Expr, call ast.CallExpr) fastExpr {
	name := call.FunctionName()
	if unhandledFunctions[name] || strings.HasPrefix(name, "crs.") {
		return nil
	}
	decl, ok := c.env.Functions()[name]
	if !ok {
		return nil
	}
	for _, o := range decl.OverloadDecls() {
		if o.HasLateBinding() {
			return nil
		}
	}
	bindings, err := decl.Bindings()
	if err != nil {
		return nil
	}
	chosen := name
	if r := c.refs[e.ID()]; r != nil && len(r.OverloadIDs) == 1 {
		chosen = r.OverloadIDs[0]
	}
	var impl, dispatch *functions.Overload
	for _, b := range bindings {
		switch b.Operator {
		case chosen:
			impl = b
		case name:
			dispatch = b
		}
	}
	if impl == nil {
		impl = dispatch
	}
	if impl == nil {
		return nil
	}
	var args []fastExpr
	if call.IsMemberFunction() {
		t := c.compile(call.Target())
		if t == nil {
			return nil
		}
		args = append(args, t)
	}
	for _, a := range call.Args() {
		x := c.compile(a)
		if x == nil {
			return nil
		}
		args = append(args, x)
	}
	f := &function{impl: impl, args: args}
	switch {
	case len(args) == 1 && impl.Unary != nil, len(args) == 2 && impl.Binary != nil, impl.Function != nil:
		return f
	}
	return nil
}

// unhandledFunctions are those the interpreter plans apart from their
// bindings, or whose bindings read what a fastExpr does not have.
var unhandledFunctions = map[string]bool{
	"get": true, "byIndex": true,
}

// comprehension compiles a fold: its range and accumulator's start in the
// scope around it, its condition and step with its variables, its result
// with the accumulator only.
func (c *fastCompiler) comprehension(comp ast.ComprehensionExpr) fastExpr {
	rng, init := c.compile(comp.IterRange()), c.compile(comp.AccuInit())
	if rng == nil || init == nil {
		return nil
	}
	outer := len(c.scope)
	defer func() { c.scope = c.scope[:outer] }()
	f := &fold{rng: rng, init: init, iter: outer, iter2: -1}
	c.scope = append(c.scope, comp.IterVar())
	if comp.HasIterVar2() {
		f.iter2 = len(c.scope)
		c.scope = append(c.scope, comp.IterVar2())
	}
	f.accu = len(c.scope)
	c.scope = append(c.scope, comp.AccuVar())
	c.slots = max(c.slots, len(c.scope))
	if f.cond = c.compile(comp.LoopCondition()); f.cond == nil {
		return nil
	}
	if when, elems, ok := appending(comp); ok {
		// map and filter: the elements are collected in a slice.
		f.collect = true
		if when != nil {
			if f.when = c.compile(when); f.when == nil {
				return nil
			}
		}
		for _, x := range elems {
			e := c.compile(x)
			if e == nil {
				return nil
			}
			f.elems = append(f.elems, e)
		}
		return f
	}
	if f.step = c.compile(comp.LoopStep()); f.step == nil {
		return nil
	}
	for i := outer; i < f.accu; i++ {
		c.scope[i] = ""
	}
	if f.result = c.compile(comp.Result()); f.result == nil {
		return nil
	}
	return f
}

// ident is an identifier the checker resolved to a constant or a type
// (string in type(x) == string), as the interpreter plans it.
func (c *fastCompiler) ident(e ast.Expr) fastExpr {
	r, ok := c.refs[e.ID()]
	if !ok || r == nil {
		return nil
	}
	if r.Value != nil {
		return constant{r.Value}
	}
	if v, found := c.env.CELTypeProvider().FindIdent(r.Name); found {
		return constant{v}
	}
	return nil
}

// appending recognizes the comprehensions that build a list from an empty
// one, appending to it at each step and reading it nowhere else, as the
// map and filter macros do: step @result + [E, …], or
// when ? @result + [E, …] : @result, result @result.
func appending(comp ast.ComprehensionExpr) (when ast.Expr, elems []ast.Expr, ok bool) {
	accu := comp.AccuVar()
	isAccu := func(e ast.Expr) bool { return e.Kind() == ast.IdentKind && e.AsIdent() == accu }
	init := comp.AccuInit()
	if init.Kind() != ast.ListKind || init.AsList().Size() != 0 || !isAccu(comp.Result()) || readsIdent(comp.LoopCondition(), accu) {
		return nil, nil, false
	}
	step := comp.LoopStep()
	if step.Kind() == ast.CallKind && step.AsCall().FunctionName() == operators.Conditional {
		args := step.AsCall().Args()
		if len(args) != 3 || !isAccu(args[2]) || readsIdent(args[0], accu) {
			return nil, nil, false
		}
		when, step = args[0], args[1]
	}
	if step.Kind() != ast.CallKind || step.AsCall().FunctionName() != operators.Add {
		return nil, nil, false
	}
	args := step.AsCall().Args()
	if len(args) != 2 || !isAccu(args[0]) || args[1].Kind() != ast.ListKind || len(args[1].AsList().OptionalIndices()) > 0 {
		return nil, nil, false
	}
	elems = args[1].AsList().Elements()
	for _, e := range elems {
		if readsIdent(e, accu) {
			return nil, nil, false
		}
	}
	return when, elems, true
}

// local returns the slot of the comprehension variable name, -1 if none
// is visible.
func (c *fastCompiler) local(name string) int {
	for i := len(c.scope) - 1; i >= 0; i-- {
		if c.scope[i] == name {
			return i
		}
	}
	return -1
}

func (c *fastCompiler) list(l ast.ListExpr) fastExpr {
	if len(l.OptionalIndices()) > 0 {
		return nil
	}
	out := &listLiteral{}
	for _, e := range l.Elements() {
		x := c.compile(e)
		if x == nil {
			return nil
		}
		out.elems = append(out.elems, x)
	}
	return out
}

func (c *fastCompiler) mapLiteral(m ast.MapExpr) fastExpr {
	if r := c.recordLiteral(m); r != nil {
		return r
	}
	out := &mapLiteral{}
	for _, e := range m.Entries() {
		entry := e.AsMapEntry()
		if entry.IsOptional() {
			return nil
		}
		k, v := c.compile(entry.Key()), c.compile(entry.Value())
		if k == nil || v == nil {
			return nil
		}
		out.keys, out.values = append(out.keys, k), append(out.values, v)
	}
	return out
}

// recordLiteral compiles a map literal whose keys are distinct constant
// strings (one at least) to a record; nil for any other.
func (c *fastCompiler) recordLiteral(m ast.MapExpr) fastExpr {
	entries := m.Entries()
	if len(entries) == 0 {
		return nil
	}
	out := &recordLiteral{}
	for _, e := range entries {
		entry := e.AsMapEntry()
		if entry.IsOptional() || entry.Key().Kind() != ast.LiteralKind {
			return nil
		}
		k, ok := entry.Key().AsLiteral().(types.String)
		if !ok || slices.Contains(out.keys.strs, k) {
			return nil
		}
		v := c.compile(entry.Value())
		if v == nil {
			return nil
		}
		out.keys.strs, out.keys.vals = append(out.keys.strs, k), append(out.keys.vals, k)
		out.values = append(out.values, v)
	}
	return out
}

// operand is a side of ==: a fast expression or a literal.
func (c *fastCompiler) operand(e ast.Expr) fastExpr {
	if v, ok := literal(e); ok {
		return constant{v}
	}
	return c.compile(e)
}

// literal returns the value of a constant or of an empty list or map
// literal.
func literal(e ast.Expr) (ref.Val, bool) {
	switch e.Kind() {
	case ast.LiteralKind:
		return e.AsLiteral(), true
	case ast.ListKind:
		if e.AsList().Size() == 0 {
			return types.DefaultTypeAdapter.NativeToValue([]any{}), true
		}
	case ast.MapKind:
		if e.AsMap().Size() == 0 {
			return emptyMap, true
		}
	}
	return nil, false
}

// emptyMap is the value of {}: immutable, so one serves every evaluation.
var emptyMap = types.NewRefValMap(types.DefaultTypeAdapter, map[ref.Val]ref.Val{})

type constant struct{ v ref.Val }

func (c constant) eval(any, any, []ref.Val) (ref.Val, bool) { return c.v, true }

// path is V.f.g… (fields), then, when optional, .?h.?i… (opt) and
// .orValue(def). V is object, each, or the comprehension variable at
// slot.
type path struct {
	root string
	slot int
	// fields and opt hold types.String values, boxed once here rather
	// than at each Find.
	fields []ref.Val
	opt    []ref.Val
	def    ref.Val
	// names is fields then opt, walked through structs by walk.
	names []ref.Val
	walk  *jsonval.Path
}

// localRoot marks the path of a comprehension variable.
const localRoot = ""

func (c *fastCompiler) selectPath(e ast.Expr) (*path, bool) {
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
	slot := c.local(root)
	switch {
	case slot >= 0:
		root = localRoot
	case root != ObjectVar && root != EachVar:
		return nil, false
	}
	for i, j := 0, len(fields)-1; i < j; i, j = i+1, j-1 {
		fields[i], fields[j] = fields[j], fields[i]
	}
	return &path{root: root, slot: slot, fields: fields, names: fields, walk: jsonval.NewPath(fields)}, true
}

// optionalPath parses V.f….?g.?h…, at least one optional selection, all
// those after the first optional too.
func (c *fastCompiler) optionalPath(e ast.Expr) (*path, bool) {
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
	p, ok := c.selectPath(e)
	if !ok {
		return nil, false
	}
	for i, j := 0, len(opt)-1; i < j; i, j = i+1, j-1 {
		opt[i], opt[j] = opt[j], opt[i]
	}
	p.opt = opt
	p.names = slices.Concat(p.fields, opt)
	p.walk = jsonval.NewPath(p.names)
	return p, true
}

// rootValue returns the variable the path starts from.
func (p *path) rootValue(object, each any, locals []ref.Val) any {
	switch p.root {
	case ObjectVar:
		return object
	case EachVar:
		return each
	}
	return locals[p.slot]
}

func (p *path) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	root := p.rootValue(object, each, locals)
	if p.root == localRoot && len(p.names) == 0 {
		v, _ := root.(ref.Val)
		return v, v != nil
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
// structs with jsonval.Path's Walk, then with Find.
func (p *path) evalVal(v ref.Val) (ref.Val, bool) {
	v, n, found := p.walk.Walk(v)
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
func (c *fastCompiler) branch(e ast.Expr) fastExpr {
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
	return c.operand(e)
}

// interpreted is a side of a conditional left to the interpreter: the
// whole expression is then evaluated by it.
type interpreted struct{}

func (interpreted) eval(any, any, []ref.Val) (ref.Val, bool) { return nil, false }

// presence is has(V.f.g…): whether the map or object V.f… has the member.
// A V.f… that is not there, or not a map, is an error the interpreter
// reports.
type presence struct {
	operand *path
	field   ref.Val
}

func (e *presence) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	v, ok := e.operand.eval(object, each, locals)
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

func (e *conditional) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	v, ok := e.c.eval(object, each, locals)
	if !ok {
		return nil, false
	}
	switch v {
	case types.True:
		return e.a.eval(object, each, locals)
	case types.False:
		return e.b.eval(object, each, locals)
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

// stringCompare is P == "s" (or P != "s", or "s" == P…), P a path: when P
// ends at a string member of a struct, it is compared as it is, without
// a CEL value made of it; otherwise as by the comparison it stands for.
type stringCompare struct {
	p      *path
	s      string
	negate bool
	cmp    *compare
}

// stringComparison returns the stringCompare of cmp, an == (!= when
// negate) of a path that selects fields only and a string constant; nil
// for any other.
func stringComparison(cmp *compare, negate bool) fastExpr {
	p, isPath := cmp.l.(*path)
	k, isConst := cmp.r.(constant)
	if !isPath {
		p, isPath = cmp.r.(*path)
		k, isConst = cmp.l.(constant)
	}
	if !isPath || !isConst || len(p.opt) > 0 || p.def != nil || len(p.names) == 0 {
		return nil
	}
	s, isString := k.v.(types.String)
	if !isString {
		return nil
	}
	return &stringCompare{p: p, s: string(s), negate: negate, cmp: cmp}
}

func (e *stringCompare) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	if v, ok := e.p.rootValue(object, each, locals).(ref.Val); ok {
		if s, ok := e.p.walk.WalkString(v); ok {
			return types.Bool((s == e.s) != e.negate), true
		}
	}
	return e.cmp.eval(object, each, locals)
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

func (e *compare) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	l, r, ok := evalPair(e.l, e.r, object, each, locals)
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

func (e *in) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	x, ok := e.x.eval(object, each, locals)
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

func (e *logical) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	l, ok := evalBool(e.l, object, each, locals)
	if !ok {
		return nil, false
	}
	if bool(l) == e.or { // true || …, false && …
		return l, true
	}
	r, ok := evalBool(e.r, object, each, locals)
	if !ok {
		return nil, false
	}
	return r, true
}

// not is !P.
type not struct{ x fastExpr }

func (e *not) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	b, ok := evalBool(e.x, object, each, locals)
	if !ok {
		return nil, false
	}
	return !b, true
}

// evalBool evaluates x, whose value must be a bool; ok is false otherwise,
// or when x gives up.
func evalBool(x fastExpr, object, each any, locals []ref.Val) (b types.Bool, ok bool) {
	v, ok := x.eval(object, each, locals)
	if !ok {
		return false, false
	}
	b, ok = v.(types.Bool)
	return b, ok
}

// evalPair evaluates a, then b; ok is false when either gives up.
func evalPair(a, b fastExpr, object, each any, locals []ref.Val) (av, bv ref.Val, ok bool) {
	if av, ok = a.eval(object, each, locals); !ok {
		return nil, nil, false
	}
	if bv, ok = b.eval(object, each, locals); !ok {
		return nil, nil, false
	}
	return av, bv, true
}

type toString struct{ x fastExpr }

func (s *toString) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	v, ok := s.x.eval(object, each, locals)
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

// selection is V.f (test: has(V.f); optional: V.?f) on a value other than
// a path's. On an optional value, V.f and V.?f select within its value and
// give an optional, empty when V is empty or has no f, as the interpreter's
// optional selection does.
type selection struct {
	operand        fastExpr
	field          ref.Val
	test, optional bool
}

func (e *selection) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	v, ok := e.operand.eval(object, each, locals)
	if !ok {
		return nil, false
	}
	optional := e.optional
	if o, isOpt := v.(*types.Optional); isOpt {
		if e.test {
			return nil, false
		}
		if !o.HasValue() {
			return types.OptionalNone, true
		}
		v, optional = o.GetValue(), true
	}
	m, ok := v.(traits.Mapper)
	if !ok {
		return nil, false
	}
	found, present := m.Find(e.field)
	if e.test && (!present || !types.IsUnknownOrError(found)) {
		return types.Bool(present), true
	}
	return selected(found, present, optional)
}

// selected is what a selection or an index that found (present) or did
// not find found gives, as an optional or not.
func selected(found ref.Val, present, optional bool) (ref.Val, bool) {
	switch {
	case present && types.IsUnknownOrError(found):
		return nil, false
	case !present && optional:
		return types.OptionalNone, true
	case !present:
		return nil, false
	case optional:
		return types.OptionalOf(found), true
	}
	return found, true
}

// index is V[i] (optional: V[?i]) of a list, by an int, or of a map. On an
// optional value, it indexes its value and gives an optional.
type index struct {
	operand, index fastExpr
	optional       bool
}

func (e *index) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	v, i, ok := evalPair(e.operand, e.index, object, each, locals)
	if !ok {
		return nil, false
	}
	optional := e.optional
	if o, isOpt := v.(*types.Optional); isOpt {
		if !o.HasValue() {
			return types.OptionalNone, true
		}
		v, optional = o.GetValue(), true
	}
	var found ref.Val
	present := false
	switch x := v.(type) {
	case traits.Mapper:
		if _, isString := i.(types.String); !isString {
			return nil, false // numeric keys compare across types: the interpreter's
		}
		found, present = x.Find(i)
	case traits.Lister:
		n, isInt := i.(types.Int)
		size, sized := x.Size().(types.Int)
		if !isInt || !sized {
			return nil, false
		}
		if present = n >= 0 && n < size; present {
			found = x.Get(n)
		}
	default:
		return nil, false
	}
	return selected(found, present, optional)
}

// listLiteral is [A, …].
type listLiteral struct{ elems []fastExpr }

func (e *listLiteral) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	vals := make([]ref.Val, len(e.elems))
	for i, x := range e.elems {
		v, ok := x.eval(object, each, locals)
		if !ok || types.IsUnknownOrError(v) {
			return nil, false
		}
		vals[i] = v
	}
	return valList(vals), true
}

// mapLiteral is {K: A, …}.
type mapLiteral struct{ keys, values []fastExpr }

func (e *mapLiteral) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	entries := make(map[ref.Val]ref.Val, len(e.keys))
	for i, kx := range e.keys {
		k, ok := kx.eval(object, each, locals)
		if !ok || types.IsUnknownOrError(k) {
			return nil, false
		}
		if _, dup := entries[k]; dup {
			return nil, false
		}
		v, ok := e.values[i].eval(object, each, locals)
		if !ok || types.IsUnknownOrError(v) {
			return nil, false
		}
		entries[k] = v
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, entries), true
}

// recordLiteral is {"K": A, …} with distinct constant string keys: its
// value is a record.
type recordLiteral struct {
	keys   recordKeys
	values []fastExpr
}

func (e *recordLiteral) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	vals := make([]ref.Val, len(e.values))
	for i, x := range e.values {
		v, ok := x.eval(object, each, locals)
		if !ok || types.IsUnknownOrError(v) {
			return nil, false
		}
		vals[i] = v
	}
	return &record{keys: &e.keys, vals: vals}, true
}

// function is a call of a function's binding.
type function struct {
	impl *functions.Overload
	args []fastExpr
}

func (e *function) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	var buf [3]ref.Val
	args := buf[:0]
	for _, x := range e.args {
		v, ok := x.eval(object, each, locals)
		if !ok || types.IsUnknownOrError(v) {
			return nil, false
		}
		args = append(args, v)
	}
	if t := e.impl.OperandTrait; t != 0 && (len(args) == 0 || !args[0].Type().HasTrait(t)) {
		return nil, false
	}
	var v ref.Val
	switch {
	case len(args) == 1 && e.impl.Unary != nil:
		v = e.impl.Unary(args[0])
	case len(args) == 2 && e.impl.Binary != nil:
		v = e.impl.Binary(args[0], args[1])
	case e.impl.Function != nil:
		// A slice of its own: the function may keep it.
		v = e.impl.Function(slices.Clone(args)...)
	default:
		return nil, false
	}
	if v == nil || types.IsUnknownOrError(v) {
		return nil, false
	}
	return v, true
}

// fold is a comprehension, iterated as the interpreter's folder iterates
// it: the range evaluated, then the accumulator's start (an empty list or
// map is accumulated in place, then frozen); for each element (each index
// or key, and value, with two variables), the condition, which ends the
// loop once it is false, then the step; then the result.
type fold struct {
	rng, init, cond, step, result fastExpr
	iter, iter2, accu             int
	// collect: the fold appends elems, when when holds (nil: always),
	// to the list it gives (see appending); step and result are nil.
	collect bool
	when    fastExpr
	elems   []fastExpr
	// spread: each element collected is a list whose elements are
	// collected instead, as flatten() would (see fastCompiler.call); an
	// element that is not a list is collected as it is.
	spread bool
}

func (e *fold) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	rng, ok := e.rng.eval(object, each, locals)
	if !ok || types.IsUnknownOrError(rng) {
		return nil, false
	}
	var accu ref.Val
	if !e.collect {
		if accu, ok = e.init.eval(object, each, locals); !ok || types.IsUnknownOrError(accu) {
			return nil, false
		}
	}
	mutable := false
	switch a := accu.(type) {
	case traits.Lister:
		if a.Size() == types.IntZero {
			accu, mutable = types.NewMutableList(types.DefaultTypeAdapter), true
		}
	case traits.Mapper:
		if a.Size() == types.IntZero {
			accu, mutable = types.NewMutableMap(types.DefaultTypeAdapter, map[ref.Val]ref.Val{}), true
		}
	}
	locals[e.accu] = accu
	st := folding{e: e, object: object, each: each, locals: locals, ok: true}
	if e.iter2 >= 0 {
		// A folder of its own, on the heap: st, which the other loops
		// call directly, stays on the stack.
		f := &folding{}
		*f = st
		switch r := rng.(type) {
		case traits.Mapper:
			types.ToFoldableMap(r).Fold(f)
		case traits.Lister:
			types.ToFoldableList(r).Fold(f)
		default:
			return nil, false
		}
		st = *f
	} else if l, isList := rng.(traits.Lister); isList && rng.Type() == types.ListType {
		// A list's elements in order, as its iterator gives them, without
		// allocating one.
		n, isInt := l.Size().(types.Int)
		if !isInt {
			return nil, false
		}
		if e.collect && n > 0 {
			st.out = make([]ref.Val, 0, int(n)*len(e.elems))
		}
		for i := types.Int(0); i < n && st.ok; i++ {
			if !st.FoldEntry(l.Get(i), nil) {
				break
			}
		}
	} else {
		it, isIterable := rng.(traits.Iterable)
		if !isIterable || !rng.Type().HasTrait(traits.IterableType) {
			return nil, false
		}
		for i := it.Iterator(); st.ok && i.HasNext() == types.True; {
			if !st.FoldEntry(i.Next(), nil) {
				break
			}
		}
	}
	if !st.ok {
		return nil, false
	}
	locals[e.iter] = nil
	if e.iter2 >= 0 {
		locals[e.iter2] = nil
	}
	if e.collect {
		if len(st.out) == 0 {
			return emptyList, true
		}
		return valList(st.out), true
	}
	res, ok := e.result.eval(object, each, locals)
	locals[e.accu] = nil
	if !ok || types.IsUnknownOrError(res) {
		return nil, false
	}
	if mutable {
		switch r := res.(type) {
		case traits.MutableLister:
			res = r.ToImmutableList()
		case traits.MutableMapper:
			res = r.ToImmutableMap()
		}
	}
	return res, true
}

// emptyList is the list a collecting fold gives when it collects nothing:
// immutable, so one serves every evaluation.
var emptyList = types.NewRefValList(types.DefaultTypeAdapter, []ref.Val{})

// folding is the state of one fold's iteration: a traits.Folder.
type folding struct {
	e            *fold
	object, each any
	locals       []ref.Val
	// ok is false once an evaluation gave up.
	ok bool
	// out are the elements collected.
	out []ref.Val
}

// FoldEntry binds the element and evaluates the condition, then the step;
// it reports whether to go on.
func (st *folding) FoldEntry(key, val any) bool {
	e, locals := st.e, st.locals
	locals[e.iter] = asValue(key)
	if e.iter2 >= 0 {
		locals[e.iter2] = asValue(val)
	}
	b, ok := evalBool(e.cond, st.object, st.each, locals)
	if !ok {
		st.ok = false
		return false
	}
	if b != types.True {
		return false
	}
	if e.collect {
		return st.append()
	}
	accu, ok := e.step.eval(st.object, st.each, locals)
	if !ok || types.IsUnknownOrError(accu) {
		st.ok = false
		return false
	}
	locals[e.accu] = accu
	return true
}

// append appends the elements of a collecting fold, when its when holds.
func (st *folding) append() bool {
	e := st.e
	if e.when != nil {
		b, ok := evalBool(e.when, st.object, st.each, st.locals)
		if !ok {
			st.ok = false
			return false
		}
		if b != types.True {
			return true
		}
	}
	for _, x := range e.elems {
		if l, isLiteral := x.(*listLiteral); isLiteral && e.spread {
			// Its elements, without the list.
			for _, y := range l.elems {
				if !st.collect(y) {
					return false
				}
			}
			continue
		}
		v, ok := x.eval(st.object, st.each, st.locals)
		if !ok || types.IsUnknownOrError(v) {
			st.ok = false
			return false
		}
		if l, isList := v.(traits.Lister); isList && e.spread {
			if !st.spreadList(l) {
				return false
			}
			continue
		}
		st.out = append(st.out, v)
	}
	return true
}

// collect evaluates x and collects its value.
func (st *folding) collect(x fastExpr) bool {
	v, ok := x.eval(st.object, st.each, st.locals)
	if !ok || types.IsUnknownOrError(v) {
		st.ok = false
		return false
	}
	st.out = append(st.out, v)
	return true
}

// spreadList collects the elements of l, in the order its iterator gives
// them.
func (st *folding) spreadList(l traits.Lister) bool {
	if n, isInt := l.Size().(types.Int); isInt && l.Type() == types.ListType {
		for i := types.Int(0); i < n; i++ {
			v := l.Get(i)
			if types.IsUnknownOrError(v) {
				st.ok = false
				return false
			}
			st.out = append(st.out, v)
		}
		return true
	}
	for it := l.Iterator(); it.HasNext() == types.True; {
		st.out = append(st.out, it.Next())
	}
	return true
}

// asValue is v as the interpreter binds a comprehension variable to it.
func asValue(v any) ref.Val {
	if r, ok := v.(ref.Val); ok {
		return r
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}

// orElse is O.orValue(A) (unwrap) or O.or(A): O's value, else A.
type orElse struct {
	opt, alt fastExpr
	unwrap   bool
}

func (e *orElse) eval(object, each any, locals []ref.Val) (ref.Val, bool) {
	v, ok := e.opt.eval(object, each, locals)
	if !ok {
		return nil, false
	}
	o, isOpt := v.(*types.Optional)
	switch {
	case !isOpt:
		return nil, false
	case !o.HasValue():
		return e.alt.eval(object, each, locals)
	case e.unwrap:
		return o.GetValue(), true
	}
	return o, true
}
