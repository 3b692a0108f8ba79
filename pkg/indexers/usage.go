package indexers

import "github.com/google/cel-go/common/ast"

// metadataFields are the top-level fields of an object that a
// metadata-only informer (PartialObjectMetadata) holds.
var metadataFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// ReadsOnlyMetadata reports whether the expression reads nothing of object
// but object.apiVersion, object.kind and object.metadata, so that it gives
// the same answers on metadata-only objects. It errs on the side of false:
// any other use of object (object.spec, object["metadata"], passing object
// to a function) makes it false. Objects read through get() and byIndex()
// do not count: they come from their own informers.
func (p *Program) ReadsOnlyMetadata() bool { return p.metadataOnly }

func onlyMetadata(e ast.Expr) bool {
	switch e.Kind() {
	case ast.IdentKind:
		return e.AsIdent() != ObjectVar
	case ast.SelectKind:
		sel := e.AsSelect()
		if op := sel.Operand(); op.Kind() == ast.IdentKind && op.AsIdent() == ObjectVar {
			return metadataFields[sel.FieldName()]
		}
		return onlyMetadata(sel.Operand())
	case ast.CallKind:
		call := e.AsCall()
		if call.IsMemberFunction() && !onlyMetadata(call.Target()) {
			return false
		}
		for _, a := range call.Args() {
			if !onlyMetadata(a) {
				return false
			}
		}
		return true
	case ast.ListKind:
		for _, el := range e.AsList().Elements() {
			if !onlyMetadata(el) {
				return false
			}
		}
		return true
	case ast.MapKind:
		for _, en := range e.AsMap().Entries() {
			me := en.AsMapEntry()
			if !onlyMetadata(me.Key()) || !onlyMetadata(me.Value()) {
				return false
			}
		}
		return true
	case ast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			if !onlyMetadata(f.AsStructField().Value()) {
				return false
			}
		}
		return true
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		return onlyMetadata(c.IterRange()) && onlyMetadata(c.AccuInit()) &&
			onlyMetadata(c.LoopCondition()) && onlyMetadata(c.LoopStep()) && onlyMetadata(c.Result())
	default: // literals
		return true
	}
}
