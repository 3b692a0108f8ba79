package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// PrinterColumn is one of the additionalPrinterColumns of a
// CustomResourceDefinition's version: the API server prints its custom
// resources with a NAME column and these columns.
type PrinterColumn struct {
	// Name is the column's header (printed in upper case).
	Name string `json:"name"`
	// Type is the OpenAPI type of the value: integer, number, string,
	// boolean, or date (printed as an age).
	Type string `json:"type"`
	// Format is an OpenAPI format such as "name"; informational.
	Format string `json:"format,omitempty"`
	// Description says what the column shows; informational.
	Description string `json:"description,omitempty"`
	// Priority 0 columns are printed in the default table, higher ones
	// only by -o wide.
	Priority int32 `json:"priority,omitempty"`
	// JSONPath is a simple JSONPath, without braces, evaluated against
	// each object (".spec.replicas").
	JSONPath string `json:"jsonPath"`
}

// parseColumn parses a printer column's JSONPath as the API server does.
func parseColumn(c PrinterColumn) (*jsonpath.JSONPath, error) {
	jp := jsonpath.New(c.Name)
	if err := jp.Parse("{" + c.JSONPath + "}"); err != nil {
		return nil, fmt.Errorf("printer column %q: unrecognized JSONPath %q: %w", c.Name, c.JSONPath, err)
	}
	jp.AllowMissingKeys(true)
	return jp, nil
}

// jsonPathFields returns the fields a column's JSONPath starts with, up to
// its first list index, filter or wildcard (".spec.containers[*].image"
// reads spec.containers); false when it does not start with a field.
func jsonPathFields(path string) ([]string, bool) {
	parser, err := jsonpath.Parse("column", "{"+path+"}")
	if err != nil || len(parser.Root.Nodes) != 1 {
		return nil, false
	}
	list, ok := parser.Root.Nodes[0].(*jsonpath.ListNode)
	if !ok {
		return nil, false
	}
	var fields []string
	for _, n := range list.Nodes {
		f, ok := n.(*jsonpath.FieldNode)
		if !ok || f.Value == "" {
			break
		}
		fields = append(fields, f.Value)
	}
	return fields, len(fields) > 0
}

// customColumns returns the cells of obj for the CRD printer columns
// whose parsed paths are paths, as the API server computes them: a value
// missing or of another type than the column's is an empty cell, a date
// is printed as an age.
func customColumns(obj runtime.Object, columns []PrinterColumn, paths []*jsonpath.JSONPath, now time.Time) ([]any, error) {
	var content map[string]any
	if u, ok := obj.(runtime.Unstructured); ok {
		content = u.UnstructuredContent()
	} else {
		var err error
		if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, fmt.Errorf("converting %s for printing: %w", indexers.ObjectName(obj), err)
		}
	}
	name, _, _ := unstructured.NestedString(content, "metadata", "name")
	cells := make([]any, 1, 1+len(paths))
	cells[0] = name
	var buf bytes.Buffer
	for i, jp := range paths {
		results, err := jp.FindResults(content)
		if err != nil || len(results) == 0 || len(results[0]) == 0 {
			cells = append(cells, nil)
			continue
		}
		value := results[0][0].Interface()
		if columns[i].Type != "string" {
			cells = append(cells, jsonCell(columns[i].Type, value, now))
			continue
		}
		buf.Reset()
		if err := jp.PrintResults(&buf, []reflect.Value{reflect.ValueOf(value)}); err != nil {
			cells = append(cells, nil)
			continue
		}
		cells = append(cells, buf.String())
	}
	return cells, nil
}

// jsonCell converts a JSON value to the cell of a column of type
// headerType; nil when the value is not of that type.
func jsonCell(headerType string, value any, now time.Time) any {
	switch headerType {
	case "integer":
		switch v := value.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		case json.Number:
			if i, err := v.Int64(); err == nil {
				return i
			}
		}
	case "number":
		switch v := value.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return f
			}
		}
	case "boolean":
		if b, ok := value.(bool); ok {
			return b
		}
	case "date":
		if s, ok := value.(string); ok {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(s); err != nil {
				return "<invalid>"
			}
			return age(t, now)
		}
	}
	return nil
}
