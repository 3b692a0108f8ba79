package getprint

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// patchFile records every intended difference between the files of this
// package and kubectl's: the package clause, and the cobra flag bindings
// left out. It is the output of, in this directory,
//
//	D=$(go list -m -f '{{.Dir}}' k8s.io/kubectl)
//	for f in $(ls *.go | grep -v -e '^doc.go$' -e '^upstream_test.go$'); do
//	  diff -u --label k8s.io/kubectl/pkg/cmd/get/$f --label pkg/query/internal/getprint/$f $D/pkg/cmd/get/$f $f
//	done > testdata/kubectl.patch
const patchFile = "testdata/kubectl.patch"

// ownFiles are this package's files that are not copies.
var ownFiles = []string{"doc.go", "upstream_test.go"}

// TestCopiedFromUpstream checks that every other file of this package is
// kubectl's file of the same name in pkg/cmd/get, at the k8s.io/kubectl
// version go.mod requires, with only the edits of testdata/kubectl.patch:
// when a new kubectl changes one of them, the copy must take the change.
// It reads kubectl from the module cache, which holds it because this
// module depends on it, and uses no network.
func TestCopiedFromUpstream(t *testing.T) {
	version, dir := kubectlModule(t)
	patches, err := parsePatches(patchFile)
	if err != nil {
		t.Fatal(err)
	}
	copies, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	copies = slices.DeleteFunc(copies, func(f string) bool { return slices.Contains(ownFiles, f) })
	if len(copies) == 0 {
		t.Fatal("no copied files found")
	}
	for _, f := range copies {
		have, err := os.ReadFile(f) //nolint:gosec // G304: this package's own source files
		if err != nil {
			t.Fatal(err)
		}
		if err := checkCopy(version, dir, f, patches[f], string(have)); err != nil {
			t.Error(err)
		}
	}
	for f := range patches {
		if !slices.Contains(copies, f) {
			t.Errorf("%s records edits of %s, which is not in this package: regenerate it", patchFile, f)
		}
	}
}

// checkCopy compares have, the copy of kubectl's file f, with
// pkg/cmd/get/f of kubectl at version in dir, edited by hunks. The error says which file
// changed, where, and what to do.
func checkCopy(version, dir, f string, hunks []hunk, have string) error {
	redo := fmt.Sprintf("copy the file again from %s, make the edits of %s again "+
		"(package getprint; no cobra flag bindings), regenerate %s as upstream_test.go says, and review the change",
		filepath.Join(dir, "pkg", "cmd", "get", f), patchFile, patchFile)
	upstream, err := os.ReadFile(filepath.Join(dir, "pkg", "cmd", "get", f)) //nolint:gosec // G304: kubectl's file in the module cache
	if err != nil {
		return fmt.Errorf("%s: k8s.io/kubectl %s has no pkg/cmd/get/%s (%w): the copy follows nothing; find where that code went, or remove the copy", f, version, f, err)
	}
	want, err := applyPatch(string(upstream), hunks)
	if err != nil {
		return fmt.Errorf("%s: k8s.io/kubectl %s changed pkg/cmd/get/%s where the recorded edits apply: %w; %s", f, version, f, err, redo)
	}
	if line, u, c, differ := firstDifference(want, have); differ {
		return fmt.Errorf("%s: differs from pkg/cmd/get/%s of k8s.io/kubectl %s with the recorded edits made, at line %d:\n  kubectl, edited: %q\n  the copy:        %q\n"+
			"when kubectl changed, %s; an edit of the copy's own must be recorded in %s too",
			f, f, version, line, u, c, redo, patchFile)
	}
	return nil
}

// kubectlModule returns the version of k8s.io/kubectl that go.mod requires
// and its directory in the module cache, without the network.
func kubectlModule(t *testing.T) (version, dir string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", "k8s.io/kubectl")
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/kubectl: %v\n%s", err, stderr.String())
	}
	version, dir, _ = strings.Cut(strings.TrimSpace(string(out)), " ")
	if dir == "" {
		t.Fatalf("k8s.io/kubectl %s is not in the module cache: run 'go mod download k8s.io/kubectl'", version)
	}
	return version, dir
}

// hunk is one hunk of a unified diff: the line of the old file where it
// starts (1-based) and its lines, each starting with ' ', '-' or '+'.
type hunk struct {
	oldStart int
	lines    []string
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@`)

// parsePatches reads a file of unified diffs and returns their hunks by
// the base name of the new file.
func parsePatches(name string) (map[string][]hunk, error) {
	b, err := os.ReadFile(name) //nolint:gosec // G304: the patch file in testdata
	if err != nil {
		return nil, err
	}
	out := map[string][]hunk{}
	file := ""
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "--- "):
		case strings.HasPrefix(l, "+++ "):
			file = path.Base(strings.Fields(l)[1])
			out[file] = nil
		case strings.HasPrefix(l, "@@"):
			m := hunkHeader.FindStringSubmatch(l)
			if m == nil || file == "" {
				return nil, fmt.Errorf("%s:%d: not a hunk header: %q", name, i+1, l)
			}
			start, _ := strconv.Atoi(m[1])
			out[file] = append(out[file], hunk{oldStart: start})
		case strings.HasPrefix(l, `\`): // "\ No newline at end of file"
		case len(out[file]) > 0 && (l == "" || strings.ContainsRune(" -+", rune(l[0]))):
			if l == "" {
				l = " "
			}
			h := &out[file][len(out[file])-1]
			h.lines = append(h.lines, l)
		default:
			return nil, fmt.Errorf("%s:%d: not a line of a unified diff: %q", name, i+1, l)
		}
	}
	return out, nil
}

// applyPatch applies hunks to text strictly: each must find its context
// and removed lines at the line its header names.
func applyPatch(text string, hunks []hunk) (string, error) {
	old := strings.SplitAfter(text, "\n")
	var out []string
	pos := 0 // next line of old, 0-based
	for _, h := range hunks {
		start := h.oldStart - 1
		if start < pos || start > len(old) {
			return "", fmt.Errorf("a hunk starts at line %d, outside the file or before the previous hunk's end", h.oldStart)
		}
		out = append(out, old[pos:start]...)
		pos = start
		for _, l := range h.lines {
			op, body := l[0], l[1:]+"\n"
			switch op {
			case ' ', '-':
				if pos >= len(old) || old[pos] != body {
					got := "end of file"
					if pos < len(old) {
						got = strconv.Quote(strings.TrimSuffix(old[pos], "\n"))
					}
					return "", fmt.Errorf("line %d is %s, the edit expects %q", pos+1, got, strings.TrimSuffix(body, "\n"))
				}
				if op == ' ' {
					out = append(out, old[pos])
				}
				pos++
			case '+':
				out = append(out, body)
			}
		}
	}
	out = append(out, old[pos:]...)
	return strings.Join(out, ""), nil
}

// firstDifference returns the first line (1-based) where a and b differ,
// with that line of each.
func firstDifference(a, b string) (line int, la, lb string, differ bool) {
	if a == b {
		return 0, "", "", false
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; ; i++ {
		if i >= len(al) || i >= len(bl) || al[i] != bl[i] {
			get := func(ls []string) string {
				if i < len(ls) {
					return ls[i]
				}
				return "<end of file>"
			}
			return i + 1, get(al), get(bl), true
		}
	}
}

// TestCheckCopyCatchesUpstreamChanges checks the check itself on a copy of
// kubectl's files where upstream changed: outside the edits, inside them,
// or removed the file.
func TestCheckCopyCatchesUpstreamChanges(t *testing.T) {
	version, dir := kubectlModule(t)
	patches, err := parsePatches(patchFile)
	if err != nil {
		t.Fatal(err)
	}
	const f = "get_flags.go"
	upstream, err := os.ReadFile(filepath.Join(dir, "pkg", "cmd", "get", f)) //nolint:gosec // G304: kubectl's file in the module cache
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(string) string
		want   string
	}{
		{"unchanged", func(s string) string { return s }, ""},
		{"outside the edits", func(s string) string {
			return strings.Replace(s, "func (f *PrintFlags) Copy() PrintFlags {", "func (f *PrintFlags) Copy() (out PrintFlags) {", 1)
		}, "get_flags.go: differs from pkg/cmd/get/get_flags.go of k8s.io/kubectl vX with the recorded edits made, at line"},
		{"where an edit applies", func(s string) string {
			return strings.Replace(s, "\"github.com/spf13/cobra\"", "\"github.com/spf13/cobra/v2\"", 1)
		}, "get_flags.go: k8s.io/kubectl vX changed pkg/cmd/get/get_flags.go where the recorded edits apply: line"},
		{"removed", nil, "get_flags.go: k8s.io/kubectl vX has no pkg/cmd/get/get_flags.go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := t.TempDir()
			if tt.change != nil {
				changed := tt.change(string(upstream))
				if tt.want != "" && changed == string(upstream) {
					t.Fatalf("the change does not apply to kubectl %s's %s", version, f)
				}
				if err := os.MkdirAll(filepath.Join(fake, "pkg", "cmd", "get"), 0o750); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(fake, "pkg", "cmd", "get", f), []byte(changed), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := checkCopy("vX", fake, f, patches[f], string(have))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
				t.Errorf("error %v, want one starting %q", err, tt.want)
			}
		})
	}
}
