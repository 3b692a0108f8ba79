package query

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"text/template"
	"text/template/parse"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kubectl-informer/kubectl-informer/pkg/query/internal/getprint"
)

// Templates over a List of many objects are printed one item at a time
// too, when the template reads the List only through its items, which is
// how templates over query answers are written:
//
//	-o jsonpath='{range .items[*]}…{end}'    text around it allowed
//	-o jsonpath='{.items[*].metadata.name}'  text around it allowed
//	-o go-template='{{range .items}}…{{end}}' text around it allowed, no $ inside
//	-o custom-columns=…                      (its columns are single paths)
//
// Each item is given to kubectl's own template engine in a List of that one
// item, and what the template prints for it is what it prints for that
// item in the whole List. Other templates are executed over the whole List,
// as kubectl does. The output is kubectl's, byte for byte, also when the
// template fails on an item (see TestStreamedTemplatesMatchKubectl):
//   - a JSONPath template prints nothing but its error when one item fails,
//     as kubectl finds every result before printing any; its text is held
//     until the last item, and on an error the whole List is given to
//     kubectl's printer for its message;
//   - a Go template prints as it goes; on an error the whole List is given
//     to kubectl's printer, and its output from where the items printed so
//     far end is written (the rest of the failing item, then the message).

// templateText returns the format of a template output (jsonpath,
// go-template, …) and its template, read from its file for the jsonpath
// and Go template -file formats (custom columns are read by their
// printer); ok is false for other outputs.
func (p *Printer) templateText() (format, text string, ok bool, err error) {
	format, text = p.output, p.opts.Template
	if text == "" {
		var found bool
		if format, text, found = strings.Cut(p.output, "="); !found {
			return "", "", false, nil
		}
	} else if format == "" {
		format = "go-template"
	}
	switch format {
	case "jsonpath-file", "go-template-file", "templatefile":
		if p.opts.ServerSide {
			return "", "", false, TemplateFile(format)
		}
		data, err := os.ReadFile(text) //nolint:gosec // G304: the template file the user named, as kubectl reads it
		if err != nil {
			return "", "", false, err
		}
		text = string(data)
	}
	return format, text, true, nil
}

// streamedTemplate returns the function that streams res in the printer's
// template format, or nil when the template is not of a streamed form.
func (p *Printer) streamedTemplate() func(io.Writer, *Result) error {
	format, text, ok, err := p.templateText()
	if !ok || err != nil {
		return nil // printed as the whole List, which reports the error
	}
	switch format {
	case "jsonpath", "jsonpath-file":
		if form, ok := jsonPathItemForm(text); ok {
			return func(w io.Writer, res *Result) error { return p.streamJSONPath(w, res, text, form) }
		}
	case "go-template", "go-template-file", "template", "templatefile":
		if lead, trail, ok := goTemplateItemForm(text); ok {
			return func(w io.Writer, res *Result) error { return p.streamGoTemplate(w, res, lead, trail) }
		}
	case "custom-columns", "custom-columns-file":
		return p.streamColumns
	}
	return nil
}

// oneItemList is the List of kubectl get holding only content.
func oneItemList(content map[string]any) *unstructured.UnstructuredList {
	return &unstructured.UnstructuredList{Object: listHead(), Items: []unstructured.Unstructured{{Object: content}}}
}

// printWhole prints res as the whole List through kubectl's printer (or
// its one item alone with SingleItem), writing what it prints after its
// first skip bytes to w.
func (p *Printer) printWhole(w io.Writer, res *Result, skip int) error {
	printer, err := p.resourcePrinter(schema.GroupKind{})
	if err != nil {
		return err
	}
	list, err := p.list(res)
	if err != nil {
		return err
	}
	if skip > 0 {
		w = &skipWriter{w: w, skip: skip}
	}
	if p.opts.SingleItem && len(list.Items) == 1 {
		return printer.PrintObj(&list.Items[0], w)
	}
	return printer.PrintObj(list, w)
}

// skipWriter drops the first skip bytes written to it.
type skipWriter struct {
	w    io.Writer
	skip int
}

func (s *skipWriter) Write(b []byte) (int, error) {
	n := len(b)
	if s.skip >= n {
		s.skip -= n
		return n, nil
	}
	b, s.skip = b[s.skip:], 0
	if _, err := s.w.Write(b); err != nil {
		return 0, err
	}
	return n, nil
}

// jsonPathForm is the shape of a JSONPath template printed item by item:
// lead and trail are its static parts before and after the items' part
// (one result list each); joined marks {.items[*]…}, whose values are all
// separated by blanks, where a {range .items[*]}…{end} prints each item's
// results as they come.
type jsonPathForm struct {
	lead, trail int
	joined      bool
}

// jsonPathItemForm reports whether text is a JSONPath template printed item
// by item, and its form.
func jsonPathItemForm(text string) (jsonPathForm, bool) {
	parser, err := jsonpath.Parse("out", text)
	if err != nil {
		return jsonPathForm{}, false
	}
	nodes := parser.Root.Nodes
	lead, trail := 0, 0
	for lead < len(nodes) && staticJSONPath(nodes[lead]) {
		lead++
	}
	for trail < len(nodes)-lead && staticJSONPath(nodes[len(nodes)-1-trail]) {
		trail++
	}
	middle := nodes[lead : len(nodes)-trail]
	if len(middle) == 0 {
		return jsonPathForm{}, false
	}
	first, ok := middle[0].(*jsonpath.ListNode)
	if !ok {
		return jsonPathForm{}, false
	}
	form := jsonPathForm{lead: lead, trail: trail}
	if len(middle) == 1 {
		// {.items[*]…}: a union after the items would group its values by
		// member over all items, not item by item.
		if !allItems(first.Nodes) {
			return jsonPathForm{}, false
		}
		for _, n := range first.Nodes[2:] {
			if n.Type() == jsonpath.NodeUnion || n.Type() == jsonpath.NodeIdentifier {
				return jsonPathForm{}, false
			}
		}
		form.joined = true
		return form, true
	}
	// {range .items[*]} … {end}, the end that closes it last.
	if len(first.Nodes) != 3 || !identifier(first.Nodes[0], "range") || !allItems(first.Nodes[1:]) {
		return jsonPathForm{}, false
	}
	depth := 0
	for i, n := range middle {
		l, ok := n.(*jsonpath.ListNode)
		if !ok || len(l.Nodes) == 0 {
			continue
		}
		switch {
		case identifier(l.Nodes[0], "range"):
			depth++
		case identifier(l.Nodes[0], "end"):
			depth--
			if depth == 0 && i != len(middle)-1 {
				return jsonPathForm{}, false
			}
		}
	}
	return form, depth == 0
}

// staticJSONPath reports whether n prints a text whatever the data: text,
// or {"text"}.
func staticJSONPath(n jsonpath.Node) bool {
	switch n := n.(type) {
	case *jsonpath.TextNode:
		return true
	case *jsonpath.ListNode:
		for _, c := range n.Nodes {
			if c.Type() != jsonpath.NodeText {
				return false
			}
		}
		return len(n.Nodes) > 0
	}
	return false
}

// allItems reports whether nodes begin with .items[*].
func allItems(nodes []jsonpath.Node) bool {
	if len(nodes) < 2 {
		return false
	}
	field, ok := nodes[0].(*jsonpath.FieldNode)
	if !ok || field.Value != "items" {
		return false
	}
	array, ok := nodes[1].(*jsonpath.ArrayNode)
	if !ok {
		return false
	}
	for _, p := range array.Params {
		if p.Known || p.Derived {
			return false
		}
	}
	return true
}

func identifier(n jsonpath.Node, name string) bool {
	id, ok := n.(*jsonpath.IdentifierNode)
	return ok && id.Name == name
}

// streamJSONPath prints res as kubectl's JSONPath printer prints the List
// of its items, finding each item's results in a List of that item with a
// new JSONPath (one keeps state while it finds results).
func (p *Printer) streamJSONPath(w io.Writer, res *Result, text string, form jsonPathForm) error {
	if len(res.Items) == 0 {
		return p.printWhole(w, res, 0)
	}
	var out bytes.Buffer
	values := 0 // printed by a joined form so far
	var trail [][]reflect.Value
	for i, item := range res.Items {
		if err := p.stopped(); err != nil {
			return err
		}
		content, err := p.content(item)
		if err != nil {
			return err
		}
		j := jsonpath.New("out").AllowMissingKeys(!p.opts.StrictTemplateKeys)
		if err := j.Parse(text); err != nil {
			return err
		}
		results, err := j.FindResults(oneItemList(content).UnstructuredContent())
		if err != nil || len(results) < form.lead+form.trail {
			return p.printWhole(w, res, 0) // kubectl's error, and nothing printed
		}
		if i == 0 {
			for _, r := range results[:form.lead] {
				if err := j.PrintResults(&out, r); err != nil {
					return err
				}
			}
			trail = results[len(results)-form.trail:]
		}
		for _, r := range results[form.lead : len(results)-form.trail] {
			if form.joined && values > 0 && len(r) > 0 {
				out.WriteByte(' ')
			}
			values += len(r)
			if err := j.PrintResults(&out, r); err != nil {
				return err
			}
		}
	}
	j := jsonpath.New("out")
	for _, r := range trail {
		if err := j.PrintResults(&out, r); err != nil {
			return err
		}
	}
	_, err := w.Write(out.Bytes())
	return err
}

// goTemplateItemForm reports whether text is a Go template printed item by
// item: {{range .items}}…{{end}} with only text around it, whose body
// neither reads the List ($) nor leaves the range early (break, continue)
// nor calls other templates; lead and trail are the text around it.
func goTemplateItemForm(text string) (lead, trail string, ok bool) {
	// The functions kubectl's templates have, for parsing only.
	stub := func(...any) string { return "" }
	t, err := template.New("output").Funcs(template.FuncMap{"exists": stub, "base64decode": stub}).Parse(text)
	if err != nil || t.Tree == nil || len(t.Templates()) != 1 {
		return "", "", false
	}
	var rng *parse.RangeNode
	for _, n := range t.Root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			if rng == nil {
				lead += string(n.Text)
			} else {
				trail += string(n.Text)
			}
		case *parse.RangeNode:
			if rng != nil {
				return "", "", false
			}
			rng = n
		default:
			return "", "", false
		}
	}
	if rng == nil || len(rng.Pipe.Decl) != 0 || len(rng.Pipe.Cmds) != 1 || len(rng.Pipe.Cmds[0].Args) != 1 {
		return "", "", false
	}
	field, ok := rng.Pipe.Cmds[0].Args[0].(*parse.FieldNode)
	if !ok || len(field.Ident) != 1 || field.Ident[0] != "items" {
		return "", "", false
	}
	return lead, trail, itemLocal(rng.List)
}

// itemLocal reports whether a range body reads only its item: no $, no
// break or continue, no template calls.
func itemLocal(n parse.Node) bool {
	switch n := n.(type) {
	case *parse.ListNode:
		return n == nil || allItemLocal(n.Nodes)
	case *parse.VariableNode:
		return n.Ident[0] != "$"
	case *parse.TemplateNode, *parse.BreakNode, *parse.ContinueNode:
		return false
	case *parse.ActionNode:
		return itemLocal(n.Pipe)
	case *parse.PipeNode:
		return n == nil || allItemLocal(n.Cmds)
	case *parse.CommandNode:
		return allItemLocal(n.Args)
	case *parse.ChainNode:
		return itemLocal(n.Node)
	case *parse.IfNode:
		return branchLocal(&n.BranchNode)
	case *parse.RangeNode:
		return branchLocal(&n.BranchNode)
	case *parse.WithNode:
		return branchLocal(&n.BranchNode)
	}
	return true // text, fields, constants, identifiers, dot, nil
}

func allItemLocal[N parse.Node](nodes []N) bool {
	for _, n := range nodes {
		if !itemLocal(n) {
			return false
		}
	}
	return true
}

func branchLocal(b *parse.BranchNode) bool {
	return itemLocal(b.Pipe) && itemLocal(b.List) && itemLocal(b.ElseList)
}

// streamGoTemplate prints res as kubectl's Go template printer prints the
// List of its items, as it goes.
func (p *Printer) streamGoTemplate(w io.Writer, res *Result, lead, trail string) error {
	if len(res.Items) == 0 {
		return p.printWhole(w, res, 0)
	}
	printer, err := p.resourcePrinter(schema.GroupKind{})
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	written := 0
	write := func(s []byte) error {
		n, err := bw.Write(s)
		written += n
		return err
	}
	if err := write([]byte(lead)); err != nil {
		return err
	}
	var one bytes.Buffer
	for _, item := range res.Items {
		content, err := p.content(item)
		if err != nil {
			return err
		}
		one.Reset()
		err = printer.PrintObj(oneItemList(content), &one)
		body, ok := bytes.CutPrefix(one.Bytes(), []byte(lead))
		if ok {
			body, ok = bytes.CutSuffix(body, []byte(trail))
		}
		if err != nil || !ok {
			// The rest of kubectl's output for the whole List: what it
			// printed of this item, then its message.
			if err := p.printWhole(bw, res, written); err != nil {
				_ = bw.Flush()
				return err
			}
			return bw.Flush()
		}
		if err := write(body); err != nil {
			return err // the reader has gone
		}
	}
	if err := write([]byte(trail)); err != nil {
		return err
	}
	return bw.Flush()
}

// streamColumns prints res as kubectl's custom-columns printer prints the
// List of its items: the same printer given each item in turn, into one
// tabwriter, which aligns the columns over all rows as it does over the
// List's. The printer parses its columns anew for each call, which is the
// same: a column is one path (no {range}), which keeps no state.
func (p *Printer) streamColumns(w io.Writer, res *Result) error {
	if len(res.Items) == 0 {
		return p.printWhole(w, res, 0)
	}
	printer, err := p.resourcePrinter(schema.GroupKind{})
	if err != nil {
		return err
	}
	columns, ok := printer.(*getprint.CustomColumnsPrinter)
	if !ok {
		return fmt.Errorf("-o %s: unexpected printer %T", p.output, printer)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	tw := printers.GetNewTabWriter(bw)
	for _, item := range res.Items {
		content, err := p.content(item)
		if err != nil {
			return err
		}
		if err := columns.PrintObj(&unstructured.Unstructured{Object: content}, tw); err != nil {
			_ = tw.Flush()
			_ = bw.Flush()
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return bw.Flush()
}
