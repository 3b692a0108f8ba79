package indexers

import (
	"strings"

	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
)

// Descending reports whether expr is a negation, -X, as a whole, and
// returns X with the minus sign turned into a blank (so that the columns
// of its errors are those of expr): a sort key written -X orders by X from
// the largest to the smallest, whatever its type. An expression that does
// not parse is returned unchanged, for Compile to report.
func (e *Env) Descending(expr string) (string, bool) {
	trimmed := strings.TrimLeft(expr, " \t\r\n")
	if !strings.HasPrefix(trimmed, "-") {
		return expr, false
	}
	parsed, iss := e.dyn.Parse(expr)
	if iss.Err() != nil {
		return expr, false
	}
	root := parsed.NativeRep().Expr()
	if root.Kind() != ast.CallKind || root.AsCall().FunctionName() != operators.Negate || len(root.AsCall().Args()) != 1 {
		return expr, false
	}
	at := len(expr) - len(trimmed)
	return expr[:at] + " " + expr[at+1:], true
}
