package plan

import (
	"cmp"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/internal/getprint"
)

// isJSONPath reports whether a --sort-by is written as kubectl get's, a
// JSONPath such as .metadata.name or {.metadata.name}, rather than CEL (in
// which neither form is an expression).
func isJSONPath(expr string) bool {
	s := strings.TrimSpace(expr)
	if rest, ok := strings.CutPrefix(s, "{"); ok {
		s = strings.TrimSpace(rest)
	}
	return strings.HasPrefix(s, ".") || strings.HasPrefix(s, "$")
}

// sortPath is a --sort-by written as kubectl's JSONPath: it orders the
// objects as kubectl get --sort-by does (see [sortKey]).
type sortPath struct {
	field string // as kubectl rewrites it: {.metadata.name}
	// budget, when set, stops the reading of objects once it is spent or
	// its context ends (see Plan.ChargeTo).
	budget *indexers.Budget
}

// compileSortPath checks a kubectl JSONPath --sort-by as kubectl does.
func compileSortPath(expr string) (*sortPath, error) {
	field, err := getprint.RelaxedJSONPathExpression(strings.TrimSpace(expr))
	if err != nil {
		return nil, err
	}
	if err := jsonpath.New("sorting").AllowMissingKeys(true).Parse(field); err != nil {
		return nil, err
	}
	return &sortPath{field: field}, nil
}

// Value is the sort key of obj: nil when the path finds nothing (which
// kubectl orders first), else a [sortKey] of the first value found in the
// object's JSON form, as kubectl reads it.
func (s *sortPath) Value(obj any) (any, error) {
	if s.budget != nil {
		if err := s.budget.Err(); err != nil {
			return nil, err
		}
	}
	var fields map[string]any
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		fields = o.Object
	default:
		var err error
		if fields, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, err
		}
	}
	// A parser keeps the state of one search: one per object.
	parser := jsonpath.New("sorting").AllowMissingKeys(true)
	if err := parser.Parse(s.field); err != nil {
		return nil, err
	}
	results, err := parser.FindResults(fields)
	if err != nil {
		return nil, err
	}
	if len(results) == 0 || len(results[0]) == 0 || !results[0][0].IsValid() {
		return nil, nil
	}
	v := results[0][0].Interface()
	if v == nil {
		return nil, nil
	}
	k := sortKey{value: v}
	if str, ok := v.(string); ok {
		if q, err := resource.ParseQuantity(str); err == nil {
			k.quantity = &q
		}
	}
	return k, nil
}

// sortKey is a value found by a kubectl JSONPath --sort-by. Keys order
// as kubectl get orders them: numbers of the same JSON type by value,
// strings byte-wise unless both are quantities (100m before 1), which are
// compared as quantities. Values kubectl cannot order (booleans, lists,
// maps, a number against a string), on which kubectl get exits, are
// ordered as [query.Compare] orders them.
type sortKey struct {
	value    any
	quantity *resource.Quantity
}

// Compare implements query.Ordered.
func (k sortKey) Compare(other any) int {
	o, ok := other.(sortKey)
	if !ok {
		return query.Compare(k.value, other)
	}
	if k.quantity != nil && o.quantity != nil {
		return k.quantity.Cmp(*o.quantity)
	}
	switch a := k.value.(type) {
	case string:
		if b, ok := o.value.(string); ok {
			return strings.Compare(a, b)
		}
	case int64:
		if b, ok := o.value.(int64); ok {
			return cmp.Compare(a, b)
		}
	case float64:
		if b, ok := o.value.(float64); ok {
			return cmp.Compare(a, b)
		}
	}
	return query.Compare(k.value, o.value)
}

// String is the key's value as it would be printed.
func (k sortKey) String() string { return fmt.Sprint(k.value) }
