package indexers

import (
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// metadataFields are the top-level fields of an object that a
// metadata-only informer (PartialObjectMetadata) holds.
var metadataFields = sets.New("apiVersion", "kind", "metadata")

// ReadsOnlyMetadata reports whether the expression reads nothing of object
// but object.apiVersion, object.kind and object.metadata, so that it gives
// the same answers on metadata-only objects. It errs on the side of false:
// any other use of object (object.spec, object["metadata"], passing object
// to a function) makes it false. Objects read through get() and byIndex()
// do not count: they come from their own informers.
func (p *Program) ReadsOnlyMetadata() bool { return p.metadataOnly }

func onlyMetadata(e ast.Expr) bool {
	if e.Kind() == ast.IdentKind {
		return e.AsIdent() != ObjectVar
	}
	if e.Kind() == ast.SelectKind {
		sel := e.AsSelect()
		if op := sel.Operand(); op.Kind() == ast.IdentKind && op.AsIdent() == ObjectVar {
			return metadataFields.Has(sel.FieldName())
		}
	}
	for _, c := range children(e) {
		if !onlyMetadata(c) {
			return false
		}
	}
	return true
}

// children returns the subexpressions of e.
func children(e ast.Expr) []ast.Expr {
	switch e.Kind() {
	case ast.SelectKind:
		return []ast.Expr{e.AsSelect().Operand()}
	case ast.CallKind:
		call := e.AsCall()
		var out []ast.Expr
		if call.IsMemberFunction() {
			out = append(out, call.Target())
		}
		return append(out, call.Args()...)
	case ast.ListKind:
		return e.AsList().Elements()
	case ast.MapKind:
		var out []ast.Expr
		for _, en := range e.AsMap().Entries() {
			out = append(out, en.AsMapEntry().Key(), en.AsMapEntry().Value())
		}
		return out
	case ast.StructKind:
		var out []ast.Expr
		for _, f := range e.AsStruct().Fields() {
			out = append(out, f.AsStructField().Value())
		}
		return out
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		return []ast.Expr{c.IterRange(), c.AccuInit(), c.LoopCondition(), c.LoopStep(), c.Result()}
	}
	return nil
}

// ObjectPaths returns the JSON paths of object that the expression reads
// (object.status.phase reads status.phase; object.spec.containers.map(…)
// reads spec.containers whole), or nil when it may read anything: object
// used other than through a chain of field selections, such as size(object)
// or object[k]. Objects read through get() and byIndex() do not count. The
// caller owns the returned value.
func (p *Program) ObjectPaths() *jsonval.Paths {
	if p.paths == nil {
		return nil
	}
	out := &jsonval.Paths{}
	out.Union(p.paths)
	return out
}

// ObjectIsJSON reports whether the variable object is the object handed to
// an evaluation presented as its JSON form (by the Env's default
// converter, see jsonval.New): ObjectPaths are then paths of fields of that
// object.
func (p *Program) ObjectIsJSON() bool { return p.measurable }

// objectPaths computes ObjectPaths from a checked expression.
func objectPaths(e ast.Expr) *jsonval.Paths {
	paths := &jsonval.Paths{}
	whole := false
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		if path, ok := selectChain(e); ok {
			if len(path) == 0 {
				whole = true // object itself
			} else {
				paths.Add(path)
			}
			return
		}
		for _, c := range children(e) {
			walk(c)
		}
	}
	walk(e)
	if whole {
		return nil
	}
	return paths
}

// selectChain reports whether e is object followed by field selections
// (plain, has() tests or optional ones, object.?a), and returns their
// names.
func selectChain(e ast.Expr) ([]string, bool) {
	switch e.Kind() {
	case ast.IdentKind:
		return []string{}, e.AsIdent() == ObjectVar
	case ast.SelectKind:
		sel := e.AsSelect()
		path, ok := selectChain(sel.Operand())
		return append(path, sel.FieldName()), ok
	case ast.CallKind:
		call := e.AsCall()
		if call.FunctionName() != "_?._" || len(call.Args()) != 2 || call.Args()[1].Kind() != ast.LiteralKind {
			return nil, false
		}
		name, isString := call.Args()[1].AsLiteral().(types.String)
		if !isString {
			return nil, false
		}
		path, ok := selectChain(call.Args()[0])
		return append(path, string(name)), ok
	}
	return nil, false
}

// UsesObject reports whether the expression names the variable object: one
// that does not checks against a schema of the objects as without one,
// which declares nothing else.
func (p *Program) UsesObject() bool { return p.usesObject }

// UsesEach reports whether the expression reads the variable each (see
// CompileEach); one that does not gives the same value for every element.
func (p *Program) UsesEach() bool { return p.usesEach }

// readsIdent reports whether e reads the variable name where it is free in
// e: a comprehension inside e that binds the same name (the macros all
// name their accumulator @result) reads its own there. A comprehension's
// range and start are read outside it, its condition and step with its
// variables bound, its result with its accumulator bound.
func readsIdent(e ast.Expr, name string) bool {
	switch e.Kind() {
	case ast.IdentKind:
		return e.AsIdent() == name
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		if readsIdent(c.IterRange(), name) || readsIdent(c.AccuInit(), name) {
			return true
		}
		if c.AccuVar() == name {
			return false
		}
		if c.Result() != nil && readsIdent(c.Result(), name) {
			return true
		}
		if c.IterVar() == name || c.HasIterVar2() && c.IterVar2() == name {
			return false
		}
		return readsIdent(c.LoopCondition(), name) || readsIdent(c.LoopStep(), name)
	}
	for _, c := range children(e) {
		if readsIdent(c, name) {
			return true
		}
	}
	return false
}

// usesIdent reports whether e mentions the identifier name.
func usesIdent(e ast.Expr, name string) bool {
	if e.Kind() == ast.IdentKind {
		return e.AsIdent() == name
	}
	for _, c := range children(e) {
		if usesIdent(c, name) {
			return true
		}
	}
	return false
}
