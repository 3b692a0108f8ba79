package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReferenceIsCurrent checks that docs/reference holds the help of
// every command, as --help prints it now, and no page of a command that
// is gone: a change of a command's help fails here until its page is
// generated again.
func TestReferenceIsCurrent(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "docs", "reference")
	pages := Reference()
	for name, want := range pages {
		got, err := os.ReadFile(filepath.Join(dir, name)) //nolint:gosec // G304: a page of the reference
		if err != nil {
			t.Errorf("%v: run make reference", err)
			continue
		}
		if string(got) != want {
			t.Errorf("docs/reference/%s is not the help of %q as it is now: run make reference", name, strings.TrimSuffix(strings.ReplaceAll(name, "_", " "), ".md"))
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // G304: a page of the reference
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := pages[filepath.Base(f)]; !ok && strings.HasPrefix(string(b), ReferenceHeader) {
			t.Errorf("docs/reference/%s is the page of a command that no longer exists: run make reference", filepath.Base(f))
		}
	}
}
