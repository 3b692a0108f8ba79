package indexers

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	textsuggest "github.com/kubectl-informer/kubectl-informer/internal/suggest"
)

// ErrCostLimitExceeded is wrapped by the error of an evaluation that was
// stopped because it exceeded the cost limit (see [WithCostLimit]).
var ErrCostLimitExceeded = errors.New("cost limit exceeded")

// ExprError is the error of an expression that does not compile. Error()
// prints the message, then the line of the expression at fault with a caret
// under the offending column:
//
//	invalid --where expression: undeclared reference to 'obect' (did you mean "object"?)
//	 | obect.status.phase == "Running"
//	 | ^
type ExprError struct {
	// Context names where the expression came from, such as "--where",
	// `index "byNode"` or `column "node"`.
	Context string
	// Expr is the expression as written.
	Expr string
	// Line is the 1-based line of the error in Expr, 0 when the error is
	// about the expression as a whole.
	Line int
	// Column is the 1-based column (in characters) of the error on Line, 0
	// when the error is about the expression as a whole.
	Column int
	// Message says what is wrong, in lowercase, without the context.
	Message string
}

// Error implements error.
func (e *ExprError) Error() string {
	var b strings.Builder
	b.WriteString("invalid ")
	if e.Context != "" {
		b.WriteString(e.Context)
		b.WriteByte(' ')
	}
	b.WriteString("expression")
	lines := strings.Split(e.Expr, "\n")
	if e.Line > 0 && len(lines) > 1 {
		fmt.Fprintf(&b, " at line %d", e.Line)
	}
	b.WriteString(": ")
	b.WriteString(e.Message)
	if e.Line < 1 || e.Line > len(lines) {
		return b.String()
	}
	line := strings.TrimRight(lines[e.Line-1], "\r")
	b.WriteString("\n | ")
	b.WriteString(line)
	if e.Column < 1 {
		return b.String()
	}
	b.WriteString("\n | ")
	// Pad with the characters of the line itself turned into blanks, so
	// that tabs keep the caret aligned.
	col := 1
	for _, r := range line {
		if col >= e.Column {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		col++
	}
	for ; col < e.Column; col++ {
		b.WriteByte(' ')
	}
	b.WriteByte('^')
	return b.String()
}

// newExprError builds the error of expr at a 1-based line and a 0-based
// column as cel-go reports them (line 0 or a negative column: no position).
func newExprError(context, expr string, line, column int, format string, args ...any) *ExprError {
	e := &ExprError{Context: context, Expr: expr, Message: fmt.Sprintf(format, args...)}
	if line > 0 && column >= 0 {
		e.Line, e.Column = line, column+1
	}
	return e
}

// cleanMessage adapts a cel-go message to this tool's conventions: it
// starts in lowercase and leaves out the container, which this tool never
// sets.
func cleanMessage(msg string) string {
	msg = strings.TrimSuffix(msg, " (in container '')")
	if r, size := utf8.DecodeRuneInString(msg); r >= 'A' && r <= 'Z' {
		// "Syntax error: ..." but not "IP ...".
		if next, _ := utf8.DecodeRuneInString(msg[size:]); next < 'A' || next > 'Z' {
			msg = string(r+'a'-'A') + msg[size:]
		}
	}
	return msg
}

// suggest returns the candidate closest to word, if one is close enough to
// be a likely misspelling of it; of equally close ones, the first in
// lexical order.
func suggest(word string, candidates []string) (string, bool) {
	return textsuggest.Closest(word, slices.Sorted(slices.Values(candidates)))
}
