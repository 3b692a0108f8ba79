package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/cli-runtime/pkg/printers"
)

// printRows prints aggregates (ModeAggregates): a table with a column per
// key, then one per aggregate, headed by their names in upper case; or,
// with -o json and yaml, a list of objects with a field per key and
// aggregate, in that order. A table of no rows writes "No resources
// found" as other tables do.
func (p *Printer) printRows(w io.Writer, res *Result) error {
	names := append(append([]string(nil), res.KeyNames...), res.AggregateNames...)
	switch {
	case p.isTable:
		if len(res.Rows) == 0 {
			p.noResources()
			return nil
		}
		tw := printers.GetNewTabWriter(w)
		if !p.opts.NoHeaders {
			headers := make([]string, len(names))
			for i, n := range names {
				headers[i] = strings.ToUpper(n)
			}
			_, _ = fmt.Fprintln(tw, strings.Join(headers, "\t"))
		}
		for _, r := range res.Rows {
			cells := make([]string, 0, len(names))
			for _, t := range r.KeyText {
				cells = append(cells, printers.EscapeTerminal(t))
			}
			for _, v := range r.Values() {
				cells = append(cells, printers.EscapeTerminal(formatAggregate(v)))
			}
			_, _ = fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		return tw.Flush()
	case p.output == "json" || p.output == "yaml":
		text, err := rowsJSON(res, names)
		if err != nil {
			return err
		}
		if p.output == "yaml" {
			if text, err = jsonToYAML(text); err != nil {
				return err
			}
		}
		if len(res.Rows) == 0 && p.opts.SayEmpty {
			p.noResources()
		}
		_, err = w.Write(text)
		return err
	}
	return fmt.Errorf("aggregates are printed as a table, or with -o json or yaml; output format %q cannot print them", p.output)
}

// rowsJSON is the rows of res as a JSON list of objects, indented as
// kubectl indents JSON, their fields in the order of names.
func rowsJSON(res *Result, names []string) ([]byte, error) {
	var b bytes.Buffer
	if len(res.Rows) == 0 {
		return []byte("[]\n"), nil
	}
	b.WriteString("[\n")
	for i, r := range res.Rows {
		b.WriteString("    {\n")
		values := append(append([]any(nil), r.Keys...), r.Values()...)
		for j, v := range values {
			key, err := json.Marshal(names[j])
			if err != nil {
				return nil, err
			}
			val, err := json.Marshal(jsonValue(v))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", names[j], err)
			}
			fmt.Fprintf(&b, "        %s: %s", key, val)
			if j < len(values)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString("    }")
		if i < len(res.Rows)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return b.Bytes(), nil
}

// jsonValue is v as JSON gives it: a quantity as kubectl prints it (a
// string, as in the objects of the API).
func jsonValue(v any) any {
	if q, ok := v.(resource.Quantity); ok {
		return q.String()
	}
	return v
}

// jsonToYAML converts JSON text to YAML, keeping the order of the fields.
func jsonToYAML(text []byte) ([]byte, error) {
	var node yaml.Node
	if err := yaml.Unmarshal(text, &node); err != nil {
		return nil, err
	}
	clearStyle(&node)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&node); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// clearStyle makes a node read from JSON print in YAML's block style, its
// strings quoted only where YAML needs it.
func clearStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		clearStyle(c)
	}
}
