package indexers

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// objectFields are the top-level fields of Kubernetes objects: an
// expression that names one of them without object. was written as kubectl's
// JSONPath or a field selector is.
var objectFields = []string{"apiVersion", "kind", "metadata", "spec", "status", "data", "binaryData", "stringData", "type",
	"rules", "subjects", "roleRef", "webhooks", "secrets", "subsets", "endpoints", "items", "template"}

// fieldPath matches a dotted path of identifiers at the start of a string.
var fieldPath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*`)

// habitHint returns a hint for an expression written as kubectl habits
// would have it, given the message of its first compile error and the
// 0-based column on its 1-based line, or "" when none applies: a JSONPath
// (.metadata.name, {.metadata.name}) for object.metadata.name, a field
// without object. (status.phase) for object.status.phase, a single = for
// ==.
func habitHint(expr, msg, word string, line, column int) string {
	trimmed := strings.TrimSpace(expr)
	if path, ok := jsonPathOf(trimmed); ok {
		return fmt.Sprintf("did you mean %s? expressions are CEL, not JSONPath", path)
	}
	if strings.HasPrefix(msg, "undeclared reference to '") && slices.Contains(objectFields, word) {
		runes := lineRunes(expr, line)
		path := word
		if column >= 0 && column < len(runes) {
			if m := fieldPath.FindString(string(runes[column:])); strings.HasPrefix(m, word) {
				path = m
			}
		}
		return fmt.Sprintf("did you mean object.%s? fields are read from the variable object", path)
	}
	if strings.HasPrefix(msg, "syntax error") && hasSingleEquals(expr) {
		return "did you mean ==? = does not compare in CEL"
	}
	return ""
}

// jsonPathOf returns object.PATH for a kubectl JSONPath such as
// .metadata.creationTimestamp or {.status.phase}.
func jsonPathOf(s string) (string, bool) {
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	s = strings.TrimPrefix(s, "$")
	if !strings.HasPrefix(s, ".") || len(s) < 2 {
		return "", false
	}
	path := fieldPath.FindString(s[1:])
	if path == "" {
		return "", false
	}
	return "object." + s[1:], true
}

// hasSingleEquals reports whether expr has an = outside string literals
// that is not part of ==, !=, <= or >=.
func hasSingleEquals(expr string) bool {
	found := false
	OutsideStrings(expr, func(i int) bool {
		if expr[i] != '=' || i+1 < len(expr) && expr[i+1] == '=' || i > 0 && strings.IndexByte("=!<>", expr[i-1]) >= 0 {
			return true
		}
		found = true
		return false
	})
	return found
}

// OutsideStrings calls fn with the index of each byte of expr that is not
// inside a quoted string literal ("…" or '…', with backslash escapes), in
// order, until fn returns false. The quotes themselves are inside.
func OutsideStrings(expr string, fn func(i int) bool) {
	var quote byte
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case quote != 0:
			switch c {
			case '\\':
				i++
			case quote:
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case !fn(i):
			return
		}
	}
}
