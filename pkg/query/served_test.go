package query

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// TestServerSideReadsNoFiles: a printer for others refuses every -file
// format, as -o FORMAT=FILE and with --template FILE, with the same error
// whether the file exists or not, and an error that names neither; a
// printer for the command line reads the same file.
func TestServerSideReadsNoFiles(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "token")
	if err := os.WriteFile(secret, []byte("SECRET-TOKEN\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, format := range []string{"go-template-file", "templatefile", "jsonpath-file", "custom-columns-file", "Go-Template-File"} {
		errorOf := func(path string, asTemplate bool) error {
			output, opts := format+"="+path, PrintOptions{ServerSide: true}
			if asTemplate {
				output, opts.Template = format, path
			}
			_, err := NewPrinter(output, opts)
			return err
		}
		for _, asTemplate := range []bool{false, true} {
			exists, absent := errorOf(secret, asTemplate), errorOf(missing, asTemplate)
			var tfe *TemplateFileError
			if !errors.As(exists, &tfe) {
				t.Fatalf("-o %s (--template %t) of an existing file: got %v, want a *TemplateFileError", format, asTemplate, exists)
			}
			if absent == nil || exists.Error() != absent.Error() {
				t.Errorf("-o %s (--template %t): the error for an existing file differs from a missing one's:\n%v\n%v", format, asTemplate, exists, absent)
			}
			if msg := exists.Error(); strings.Contains(msg, dir) || strings.Contains(msg, "SECRET") || !strings.Contains(msg, "="+"TEMPLATE") {
				t.Errorf("-o %s: the error names the file or does not name the format to use: %s", format, msg)
			}
		}
	}
	if _, err := NewPrinter("go-template-file="+secret, PrintOptions{}); err != nil {
		t.Errorf("the command line's printer does not read the template file: %v", err)
	}
}

// TestInlineTemplate: a -file format is sent as the format taking the
// text of its file, which prints what the file prints; other formats are
// sent as they are; a missing file is an error naming the format.
func TestInlineTemplate(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.tmpl":        `{{range .items}}{{.metadata.name}} {{end}}`,
		"names.jsonpath": `{range .items[*]}{.metadata.name}{"\t"}{.spec.nodeName}{"\n"}{end}`,
		"columns.txt":    "POD          NODE\nmetadata.name  .spec.nodeName\n",
		"bad-columns":    "A,B  C\nx y\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	spec := Spec{Namespace: "default"}
	for _, c := range []struct {
		output, template string
		noHeaders        bool
		wantOutput       string
	}{
		{output: "go-template-file=" + filepath.Join(dir, "go.tmpl"), wantOutput: "go-template"},
		{output: "templatefile", template: filepath.Join(dir, "go.tmpl"), wantOutput: "template"},
		{output: "jsonpath-file=" + filepath.Join(dir, "names.jsonpath"), wantOutput: "jsonpath"},
		{output: "custom-columns-file=" + filepath.Join(dir, "columns.txt"), wantOutput: "custom-columns"},
		// kubectl prints a custom-columns file's headers whatever
		// --no-headers says: so does the text sent.
		{output: "custom-columns-file=" + filepath.Join(dir, "columns.txt"), noHeaders: true, wantOutput: "custom-columns"},
	} {
		output, template, noHeaders, err := InlineTemplate(c.output, c.template, c.noHeaders, nil)
		if err != nil {
			t.Fatalf("InlineTemplate(%q, %q): %v", c.output, c.template, err)
		}
		if output != c.wantOutput {
			t.Errorf("InlineTemplate(%q) output = %q, want %q", c.output, output, c.wantOutput)
		}
		local := printCase{spec: spec, output: c.output, opts: PrintOptions{Template: c.template, NoHeaders: c.noHeaders}}
		sent := printCase{spec: spec, output: output, opts: PrintOptions{Template: template, NoHeaders: noHeaders, ServerSide: true}}
		if a, b := printed(t, local), printed(t, sent); a != b || a == "" {
			t.Errorf("-o %s prints %q locally, and %q as sent (-o %s --template %q)", c.output, a, b, output, template)
		}
	}
	for _, output := range []string{"json", "go-template={{.kind}}", ""} {
		if o, tmpl, _, err := InlineTemplate(output, "", false, nil); err != nil || o != output || tmpl != "" {
			t.Errorf("InlineTemplate(%q) = %q, %q, %v; want it unchanged", output, o, tmpl, err)
		}
	}
	if _, _, _, err := InlineTemplate("jsonpath-file="+filepath.Join(dir, "missing"), "", false, nil); err == nil || !strings.Contains(err.Error(), "-o jsonpath-file") {
		t.Errorf("a missing file: %v", err)
	}
	if _, _, _, err := InlineTemplate("custom-columns-file="+filepath.Join(dir, "bad-columns"), "", false, nil); err == nil || !strings.Contains(err.Error(), `"A,B"`) {
		t.Errorf("a header with a comma: %v", err)
	}
}

// printed returns what c prints.
func printed(t *testing.T, c printCase) string {
	t.Helper()
	res, err := Run(newIndexer(t, podIndexersFor(nil), testPodsAny()...), c.spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPrinter(c.output, c.opts)
	if err != nil {
		t.Fatalf("NewPrinter(%q): %v", c.output, err)
	}
	var out bytes.Buffer
	if err := p.Print(&out, res); err != nil {
		t.Fatalf("Print: %v", err)
	}
	return out.String()
}

func testPodsAny() []any {
	var objs []any
	for _, p := range testPods() {
		objs = append(objs, p)
	}
	return objs
}

// nestedTemplate is a Go template of depth levels, each calling the next
// twice: its leaf, leaf, is executed 2^depth times.
func nestedTemplate(depth int, leaf string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{{define "t%d"}}%s{{end}}`, depth, leaf)
	for i := depth - 1; i >= 0; i-- {
		fmt.Fprintf(&b, `{{define "t%d"}}{{template "t%d" .}}{{template "t%d" .}}{{end}}`, i, i+1, i+1)
	}
	b.WriteString(`{{template "t0" .}}`)
	return b.String()
}

// endingContext is a context that ends after its Err has been asked n
// times: the point where printing stops depends on no clock.
type endingContext struct {
	context.Context
	left atomic.Int64
}

func endAfter(n int64) *endingContext {
	c := &endingContext{Context: context.Background()}
	c.left.Store(n)
	return c
}

func (c *endingContext) Err() error {
	if c.left.Add(-1) < 0 {
		return context.DeadlineExceeded
	}
	return nil
}

// TestPrintStopsWithContext: a Go template that calls templates 2^24
// times, printing nothing or something each time, and templates ranging
// over the items stop once the printer's context ends, with an error
// wrapping indexers.ErrInterrupted and the context's; so do JSONPath
// templates and every other format; without a context they print.
func TestPrintStopsWithContext(t *testing.T) {
	spec := Spec{Namespace: "default"}
	// checks is how many times the context is asked before it ends:
	// within the work of the first templates, at once for the others.
	for _, c := range []struct {
		name, output string
		checks       int64
	}{
		{"nested templates printing nothing", "go-template=" + nestedTemplate(24, ""), 20},
		{"nested templates printing", "go-template=" + nestedTemplate(24, "x"), 20},
		{"ranges", `go-template={{range .items}}{{range $.items}}{{range $.items}}{{end}}{{end}}{{end}}`, 20},
		{"streamed range", `go-template={{range .items}}{{.metadata.name}}{{end}}`, 1},
		{"jsonpath", `jsonpath={range .items[*]}{.metadata.name}{end}`, 1},
		{"json", "json", 1},
		{"table", "", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Run(newIndexer(t, podIndexersFor(nil), testPodsAny()...), spec)
			if err != nil {
				t.Fatal(err)
			}
			ctx := endAfter(c.checks)
			p, err := NewPrinter(c.output, PrintOptions{Context: ctx, ServerSide: true})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err = p.Print(&out, res)
			if !errors.Is(err, indexers.ErrInterrupted) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Print = %v (printed %d bytes), want an error wrapping %v and %v", err, out.Len(), indexers.ErrInterrupted, context.DeadlineExceeded)
			}
			if out.Len() >= 1<<20 {
				t.Errorf("printed %d bytes before stopping", out.Len())
			}
		})
	}
	// A template the context does not stop prints as kubectl does.
	res, err := Run(newIndexer(t, podIndexersFor(nil), testPodsAny()...), spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, output := range []string{"go-template=" + nestedTemplate(3, "{{len .items}}"), `go-template={{range .items}}{{range $.items}}.{{end}}{{end}}`} {
		bounded, err := NewPrinter(output, PrintOptions{Context: context.Background(), ServerSide: true})
		if err != nil {
			t.Fatal(err)
		}
		plain, err := NewPrinter(output, PrintOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var a, b bytes.Buffer
		if err := bounded.Print(&a, res); err != nil {
			t.Fatal(err)
		}
		if err := plain.Print(&b, res); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() || a.Len() == 0 {
			t.Errorf("-o %s with a context printed %q, without %q", output, a.String(), b.String())
		}
	}
}

// TestServerSideTemplateBounds: a printer for others refuses templates
// longer than MaxTemplateBytes and JSONPath templates with more recursive
// descents than MaxServedRecursiveDescents, which the command line's
// printer accepts.
func TestServerSideTemplateBounds(t *testing.T) {
	for _, output := range []string{
		"go-template=" + strings.Repeat("x", MaxTemplateBytes+1),
		"jsonpath={" + strings.Repeat("..metadata", MaxServedRecursiveDescents+1) + "}",
		"jsonpath={range ..items[*]}{..metadata..name}{end}",
	} {
		if _, err := NewPrinter(output, PrintOptions{}); err != nil {
			t.Fatalf("the command line refuses %.40q: %v", output, err)
		}
		if _, err := NewPrinter(output, PrintOptions{ServerSide: true}); err == nil {
			t.Errorf("a printer for others accepts %.60q", output)
		}
	}
	if _, err := NewPrinter("jsonpath={..metadata.name}", PrintOptions{ServerSide: true}); err != nil {
		t.Errorf("one recursive descent: %v", err)
	}
}
