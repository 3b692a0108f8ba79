package doclinks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinks fails when a relative link of README.md or of a page of docs/
// names a file that does not exist or a heading its page does not have,
// or when a page of docs/ is linked neither from README.md nor from
// docs/README.md.
func TestLinks(t *testing.T) {
	problems, err := Check(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCheckFindsBrokenLinks gives Check pages with each kind of broken
// link, and a page that nothing links, and expects each to be reported,
// and nothing of the links that hold.
func TestCheckFindsBrokenLinks(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Tool\n\n"+
		"See [the guide](docs/README.md), [query](docs/query.md#the-config-file) and [a missing page](docs/gone.md).\n"+
		"[Here](#tool), [nowhere](#no-such-heading), [examples](examples/), [site](https://example.com/x.md).\n"+
		"`[not a link](docs/in-code.md)`\n\n"+
		"```sh\n[not a link either](docs/in-block.md)\n# Not a heading\n```\n")
	write("docs/README.md", "# Guide\n\n- [Query](query.md)\n- [Watch](watch.md#-w-and---watch)\n")
	write("docs/query.md", "# `kubectl informer query`\n\n## The config file\n\n## Output\n\n## Output\n\n"+
		"[second output](#output-1), [third output](#output-2), [watch](watch.md#events), [back](../README.md#not-a-heading)\n")
	write("docs/watch.md", "# Watch\n\n## `-w` and `--watch`\n\n## Events\n")
	write("docs/orphan.md", "# Nobody links here\n")
	write("examples/config.yaml", "")

	problems, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`README.md:3: link "docs/gone.md": no file docs/gone.md`,
		`README.md:4: link "#no-such-heading": README.md has no heading whose anchor is #no-such-heading`,
		`docs/query.md:9: link "#output-2": docs/query.md has no heading whose anchor is #output-2`,
		`docs/query.md:9: link "../README.md#not-a-heading": README.md has no heading whose anchor is #not-a-heading`,
		`docs/orphan.md is linked neither from README.md nor from docs/README.md`,
	}
	got := map[string]bool{}
	for _, p := range problems {
		got[p] = true
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("not reported: %s", w)
		}
	}
	if len(problems) != len(want) {
		t.Errorf("reported %d problems, want %d:\n%s", len(problems), len(want), strings.Join(problems, "\n"))
	}
}

// TestAnchor checks anchors against those GitHub gives headings of the
// project's pages.
func TestAnchor(t *testing.T) {
	for text, want := range map[string]string{
		"Reading other resources: `get()` and `byIndex()`": "reading-other-resources-get-and-byindex",
		"`aggregate`: one series per label set":            "aggregate-one-series-per-label-set",
		"In kube-state-metrics' place in kube-prometheus":  "in-kube-state-metrics-place-in-kube-prometheus",
		"1. Swap the image":                                "1-swap-the-image",
		"The exporter under a memory limit":                "the-exporter-under-a-memory-limit",
		"See [the guide](docs/README.md)":                  "see-the-guide",
	} {
		if got := Anchor(text); got != want {
			t.Errorf("Anchor(%q) = %q, want %q", text, got, want)
		}
	}
}
