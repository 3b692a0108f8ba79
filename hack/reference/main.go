// Command reference writes the command reference, a Markdown page per
// command generated from its help, into a directory (docs/reference),
// removing the generated pages of commands that no longer exist.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
)

func main() {
	dir := flag.String("dir", "docs/reference", "the directory to write the pages into")
	flag.Parse()
	if err := write(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	pages := app.Reference()
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return err
	}
	for _, path := range old {
		b, err := os.ReadFile(path) //nolint:gosec // G304: a page of the reference directory named on the command line
		if err != nil {
			return err
		}
		if _, ok := pages[filepath.Base(path)]; !ok && strings.HasPrefix(string(b), app.ReferenceHeader) {
			if err := os.Remove(path); err != nil {
				return err
			}
		}
	}
	for name, page := range pages {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(page), 0o600); err != nil {
			return err
		}
	}
	return nil
}
