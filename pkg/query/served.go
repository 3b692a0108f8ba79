package query

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"text/template"
	"text/template/parse"
	"unsafe"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/internal/getprint"
)

// Printing for others (PrintOptions.ServerSide, PrintOptions.Context): a
// query server prints what its callers ask for with their templates, so
// printing must read nothing of the server's host and stop when the
// request's time is spent.
//
//   - The -file formats read a file: a server refuses them before
//     anything else (a *TemplateFileError), whatever the file, so that the
//     answer says nothing of the server's files. The caller reads its file
//     and sends the text (see InlineTemplate).
//   - Once the context ends, whatever is written fails, and a Go template
//     stops at the next template it calls and the next element it ranges
//     over, with an error wrapping indexers.ErrInterrupted: a template
//     that prints nothing stops as well as one that prints much.
//   - A JSONPath template finds all its results before printing any, and
//     recursive descents (..) multiply them: a served one may hold at most
//     MaxServedRecursiveDescents, and each item of a streamed List is
//     found only while the context lasts.

// MaxServedRecursiveDescents is the number of recursive descents (..) a
// JSONPath template may hold when printed for others.
const MaxServedRecursiveDescents = 2

// MaxTemplateBytes bounds the length of a template printed for others.
const MaxTemplateBytes = 64 << 10

// templateFileFormats are the -o formats that read their template from a
// file, and the format that takes the same template as text.
var templateFileFormats = map[string]string{
	"go-template-file":    "go-template",
	"templatefile":        "template",
	"jsonpath-file":       "jsonpath",
	"custom-columns-file": "custom-columns",
}

// TemplateFileError is a -file output format asked of a printer that
// reads no files (PrintOptions.ServerSide). It names neither the file nor
// anything about it.
type TemplateFileError struct {
	// Format is the -file format, Inline the one taking the text.
	Format, Inline string
}

func (e *TemplateFileError) Error() string {
	return fmt.Sprintf("-o %s: a query server reads no files: send the template's text with -o %s=TEMPLATE "+
		"(kubectl informer query --query-server reads a template file itself and sends its text)", e.Format, e.Inline)
}

// TemplateFile returns, when output (FORMAT or FORMAT=FILE) is a format
// that reads its template from a file, a *TemplateFileError; else nil. The
// format is compared case-insensitively.
func TemplateFile(output string) error {
	format, _, _ := strings.Cut(output, "=")
	format = strings.ToLower(strings.TrimSpace(format))
	if inline, ok := templateFileFormats[format]; ok {
		return &TemplateFileError{Format: format, Inline: inline}
	}
	return nil
}

// InlineTemplate returns output and template (the -o value and the
// --template argument) with the template of a -file format read with
// readFile (os.ReadFile when nil) and given as the text of the format that
// takes it: go-template-file and templatefile become go-template,
// jsonpath-file jsonpath, custom-columns-file custom-columns (then
// noHeaders is false: kubectl prints a -file's headers whatever
// --no-headers says). Other formats are returned as they are.
func InlineTemplate(output, template string, noHeaders bool, readFile func(string) ([]byte, error)) (string, string, bool, error) {
	var tfe *TemplateFileError
	if !errors.As(TemplateFile(output), &tfe) {
		return output, template, noHeaders, nil
	}
	path := template
	if path == "" {
		_, path, _ = strings.Cut(output, "=")
	}
	if path == "" {
		return "", "", false, fmt.Errorf("-o %s: name the template file, as -o %s=FILE or with --template FILE", tfe.Format, tfe.Format)
	}
	if readFile == nil {
		readFile = os.ReadFile
	}
	data, err := readFile(path)
	if err != nil {
		return "", "", false, fmt.Errorf("-o %s: reading the template file: %w", tfe.Format, err)
	}
	if tfe.Inline != "custom-columns" {
		return tfe.Inline, string(data), noHeaders, nil
	}
	spec, err := columnsSpec(string(data))
	if err != nil {
		return "", "", false, fmt.Errorf("-o %s: template file %q: %w", tfe.Format, path, err)
	}
	return tfe.Inline, spec, false, nil
}

// columnsSpec returns the -o custom-columns spec (HEADER:PATH,...) of the
// text of a custom-columns file, read as kubectl reads one: a line of
// headers, then a line of paths, separated by blanks.
func columnsSpec(text string) (string, error) {
	file, err := getprint.NewCustomColumnsPrinterFromTemplate(strings.NewReader(text), nil)
	if err != nil {
		return "", err
	}
	cols := make([]string, len(file.Columns))
	for i, c := range file.Columns {
		if strings.ContainsAny(c.Header, ",:") || strings.Contains(c.FieldSpec, ",") {
			return "", fmt.Errorf("column %q: a header with ',' or ':', or a path with ',', cannot be sent as -o custom-columns: query without --query-server", c.Header)
		}
		cols[i] = c.Header + ":" + c.FieldSpec
	}
	return strings.Join(cols, ","), nil
}

// checkServed returns why a printer for others may not print output with
// template: a -file format, a template too long, or a JSONPath template
// with too many recursive descents; or nil.
func checkServed(output, template string) error {
	if err := TemplateFile(output); err != nil {
		return err
	}
	format, text, found := strings.Cut(output, "=")
	if template != "" {
		text = template
		if format == "" {
			format = "go-template"
		}
	} else if !found {
		return nil
	}
	if len(text) > MaxTemplateBytes {
		return fmt.Errorf("-o %s: the template is %d bytes long, more than the %d a query server prints", format, len(text), MaxTemplateBytes)
	}
	if format == "jsonpath" || format == "jsonpath-as-json" {
		parser, err := jsonpath.Parse("out", text)
		if err != nil {
			return nil // the printer reports it
		}
		if n := recursiveDescents(parser.Root); n > MaxServedRecursiveDescents {
			return fmt.Errorf("-o %s: the template holds %d recursive descents (..), more than the %d a query server evaluates: name the fields", format, n, MaxServedRecursiveDescents)
		}
	}
	return nil
}

// recursiveDescents counts the recursive descents (..) under n.
func recursiveDescents(n jsonpath.Node) int {
	switch n := n.(type) {
	case *jsonpath.RecursiveNode:
		return 1
	case *jsonpath.ListNode:
		c := 0
		for _, m := range n.Nodes {
			c += recursiveDescents(m)
		}
		return c
	case *jsonpath.FilterNode:
		return recursiveDescents(n.Left) + recursiveDescents(n.Right)
	case *jsonpath.UnionNode:
		c := 0
		for _, m := range n.Nodes {
			c += recursiveDescents(m)
		}
		return c
	}
	return 0
}

// stopped returns the error printing stops with once the printer's
// context has ended, or nil.
func (p *Printer) stopped() error {
	ctx := p.opts.Context
	if ctx == nil || ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("%w: printing: %w", indexers.ErrInterrupted, context.Cause(ctx))
}

// stoppingWriter fails every write once its printer's context has ended.
type stoppingWriter struct {
	w io.Writer
	p *Printer
	// failed is set by the first write refused.
	failed bool
}

func (s *stoppingWriter) Write(b []byte) (int, error) {
	if err := s.p.stopped(); err != nil {
		s.failed = true
		return 0, err
	}
	return s.w.Write(b)
}

// deadlineFunc is the function a served Go template calls at the start of
// each template and of each element it ranges over; deadlineVar the
// variable that takes its empty result, so that nothing is printed.
const (
	deadlineFunc = "kubectlInformerDeadline"
	deadlineVar  = "$kubectlInformerDeadline"
)

// stoppableGoTemplate is kubectl's Go template printer whose execution
// stops once the printer's context has ended: every template and range
// body of kubectl's parsed template calls deadlineFunc first.
type stoppableGoTemplate struct {
	kubectl *printers.GoTemplatePrinter
	p       *Printer
}

// stoppable makes kubectl's Go template printer stop with p's context.
func (p *Printer) stoppable(kubectl *printers.GoTemplatePrinter) (printers.ResourcePrinter, error) {
	t := kubectlTemplate(kubectl)
	if t == nil {
		return nil, errors.New("this build cannot bound the execution of Go templates: a query server does not print them")
	}
	funcs := template.FuncMap{deadlineFunc: func() (string, error) { return "", p.stopped() }}
	check, err := template.New("check").Funcs(funcs).Parse("{{" + deadlineVar + " := " + deadlineFunc + "}}")
	if err != nil {
		return nil, err
	}
	t.Funcs(funcs)
	node := check.Root.Nodes[0]
	for _, tt := range t.Templates() {
		if tt.Tree != nil && tt.Root != nil {
			withCheck(tt.Root, node)
		}
	}
	return &stoppableGoTemplate{kubectl: kubectl, p: p}, nil
}

// kubectlTemplate returns the parsed template of kubectl's printer, which
// it keeps unexported; nil if it has none of that name and type.
func kubectlTemplate(g *printers.GoTemplatePrinter) *template.Template {
	f := reflect.ValueOf(g).Elem().FieldByName("template")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*template.Template]() {
		return nil
	}
	field := unsafe.Pointer(f.UnsafeAddr()) //nolint:gosec // G103: the field of the type checked above
	t, _ := reflect.NewAt(f.Type(), field).Elem().Interface().(*template.Template)
	return t
}

// withCheck puts check first in list and in the body of every range
// under it.
func withCheck(list *parse.ListNode, check parse.Node) {
	if list == nil {
		return
	}
	list.Nodes = append([]parse.Node{check}, list.Nodes...)
	for _, n := range list.Nodes[1:] {
		checkBranches(n, check)
	}
}

// checkBranches adds check to the ranges under n.
func checkBranches(n parse.Node, check parse.Node) {
	var b *parse.BranchNode
	switch n := n.(type) {
	case *parse.RangeNode:
		withCheck(n.List, check)
		if n.ElseList != nil {
			for _, m := range n.ElseList.Nodes {
				checkBranches(m, check)
			}
		}
		return
	case *parse.IfNode:
		b = &n.BranchNode
	case *parse.WithNode:
		b = &n.BranchNode
	default:
		return
	}
	for _, l := range []*parse.ListNode{b.List, b.ElseList} {
		if l != nil {
			for _, m := range l.Nodes {
				checkBranches(m, check)
			}
		}
	}
}

// PrintObj prints obj as kubectl's printer does, or fails with the
// printer's stop error once its context has ended.
func (g *stoppableGoTemplate) PrintObj(obj runtime.Object, w io.Writer) error {
	err := g.kubectl.PrintObj(obj, w)
	if stop := g.p.stopped(); err != nil && stop != nil {
		return stop
	}
	return err
}
