package query

import (
	"bufio"
	"bytes"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// A List of many objects is printed as -o json, yaml and name one item at
// a time, as it is produced, rather than built whole and then encoded: the
// output is byte for byte what kubectl's printers write for the whole List
// (see TestStreamedMatchesKubectl), and the memory it takes is that of one
// item, not of every item converted and the whole text besides.

// streamed returns the function that streams res in the printer's format,
// or nil when that format is not streamed.
func (p *Printer) streamed(res *Result) func(io.Writer, *Result) error {
	output := strings.ToLower(p.output)
	if output == "name" {
		return p.streamNames // the same lines for one object
	}
	if p.opts.SingleItem && len(res.Items) == 1 {
		return nil // the object alone, not a List
	}
	switch output {
	case "json":
		return p.streamJSON
	case "yaml":
		return p.streamYAML
	}
	return p.streamedTemplate()
}

// jsonIndent is the indentation of kubectl's JSON printer, and itemIndent
// the prefix of the lines of an item of a List it prints.
const (
	jsonIndent = "    "
	itemIndent = jsonIndent + jsonIndent
)

// streamJSON writes res as kubectl's JSON printer writes the v1 List of
// its items: encoding/json's encoding of the List's map (keys sorted,
// HTML characters escaped), indented by four spaces. Each item is encoded
// and indented at its depth on its own, in the pass that sorts its keys.
func (p *Printer) streamJSON(w io.Writer, res *Result) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	_, _ = bw.WriteString("{\n" + jsonIndent + `"apiVersion": "v1",` + "\n" + jsonIndent + `"items": [`)
	var indented bytes.Buffer
	for i, item := range res.Items {
		text, err := p.listItemJSON(&indented, item)
		if err != nil {
			return err
		}
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		_, _ = bw.WriteString("\n" + itemIndent)
		if _, err := bw.Write(text); err != nil {
			return err // the reader has gone: no use encoding the rest
		}
	}
	if len(res.Items) > 0 {
		_, _ = bw.WriteString("\n" + jsonIndent)
	}
	_, _ = bw.WriteString("],\n" + jsonIndent + `"kind": "List",` + "\n" + jsonIndent + `"metadata": {` + "\n" +
		itemIndent + `"resourceVersion": ""` + "\n" + jsonIndent + "}\n}\n")
	return bw.Flush()
}

// listItemJSON returns the text of item in streamJSON's List, encoded
// into buf (reset first) or, with PrintOptions.Encoded, as kept there.
func (p *Printer) listItemJSON(buf *bytes.Buffer, item Item) ([]byte, error) {
	buf.Reset()
	cache := p.opts.Encoded
	if cache == nil || p.opts.ShowManagedFields || p.opts.Clusters {
		err := p.itemJSON(buf, item, &indent{prefix: itemIndent, unit: jsonIndent})
		return buf.Bytes(), err
	}
	gvk, err := p.kindOf(item.Object)
	if err != nil {
		return nil, err
	}
	if text, ok := cache.Load(gvk, item.Object); ok {
		return text, nil
	}
	if err := p.itemJSON(buf, item, &indent{prefix: itemIndent, unit: jsonIndent}); err != nil {
		return nil, err
	}
	text := bytes.Clone(buf.Bytes())
	cache.Store(gvk, item.Object, text)
	return text, nil
}

// streamYAML writes res as kubectl's YAML printer writes the v1 List of
// its items: sigs.k8s.io/yaml's YAML of its JSON, keys sorted, the items a
// sequence at the List's indentation. Each item is written as the one
// element of a sequence, which is how the List's sequence writes it.
func (p *Printer) streamYAML(w io.Writer, res *Result) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if len(res.Items) == 0 {
		_, _ = bw.WriteString("apiVersion: v1\nitems: []\n")
	} else {
		_, _ = bw.WriteString("apiVersion: v1\nitems:\n")
	}
	var encoded bytes.Buffer
	for _, item := range res.Items {
		// sigs.k8s.io/yaml's Marshal: the YAML of the JSON, here of a
		// list of the one item.
		encoded.Reset()
		encoded.WriteByte('[')
		if err := p.itemJSON(&encoded, item, nil); err != nil {
			return err
		}
		encoded.WriteByte(']')
		out, err := yaml.JSONToYAML(encoded.Bytes())
		if err != nil {
			return err
		}
		if _, err := bw.Write(out); err != nil {
			return err
		}
	}
	_, _ = bw.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	return bw.Flush()
}

// streamNames writes res as -o name does, a line per item, with its
// cluster first over several clusters.
func (p *Printer) streamNames(w io.Writer, res *Result) error {
	printer, err := p.resourcePrinter(schema.GroupKind{})
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, item := range res.Items {
		content, err := p.content(item)
		if err != nil {
			return err
		}
		if p.opts.Clusters {
			_, _ = bw.WriteString(item.Cluster + " ")
		}
		if err := printer.PrintObj(&unstructured.Unstructured{Object: content}, bw); err != nil {
			return err
		}
	}
	return bw.Flush()
}
