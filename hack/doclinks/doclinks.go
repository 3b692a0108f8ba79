// Package doclinks checks the links of the project's Markdown pages:
// README.md and every page under docs/. A relative link must name a file
// or directory that exists and, for a Markdown page, a heading of that
// page when it has an #anchor; every page of docs/ must be linked from
// README.md or docs/README.md, so that a reader can find it.
//
// It reads files only, and imports nothing of the project.
package doclinks

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Index is the page that lists the pages of docs/, beside README.md.
const Index = "docs/README.md"

// Check reads README.md and docs/**/*.md under root and returns a
// problem per broken link and per page of docs/ that neither README.md
// nor docs/README.md links, each naming the file and line; none when all
// is well. Paths in the problems are relative to root, with slashes.
func Check(root string) ([]string, error) {
	pages := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			pages = append(pages, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(pages[1:])

	anchors := map[string]map[string]bool{} // page → its headings' anchors
	anchorsOf := func(page string) (map[string]bool, error) {
		if a, ok := anchors[page]; ok {
			return a, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page))) //nolint:gosec // G304: a page of the repository
		if err != nil {
			return nil, err
		}
		a := Anchors(string(b))
		anchors[page] = a
		return a, nil
	}

	var problems []string
	linked := map[string]bool{} // pages of docs/ linked from README.md or docs/README.md
	for _, page := range pages {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page))) //nolint:gosec // G304: a page of the repository
		if err != nil {
			return nil, err
		}
		for _, l := range Links(string(b)) {
			target, anchor, _ := strings.Cut(l.Target, "#")
			resolved := page
			if target != "" {
				resolved = path.Clean(path.Join(path.Dir(page), target))
				if strings.HasPrefix(resolved, "../") || resolved == ".." {
					problems = append(problems, fmt.Sprintf("%s:%d: link %q leaves the repository", page, l.Line, l.Target))
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(resolved))); err != nil {
					problems = append(problems, fmt.Sprintf("%s:%d: link %q: no file %s", page, l.Line, l.Target, resolved))
					continue
				}
				if page == "README.md" || page == Index {
					linked[resolved] = true
				}
			}
			if anchor == "" || !strings.HasSuffix(resolved, ".md") {
				continue
			}
			a, err := anchorsOf(resolved)
			if err != nil {
				return nil, err
			}
			if !a[anchor] {
				problems = append(problems, fmt.Sprintf("%s:%d: link %q: %s has no heading whose anchor is #%s", page, l.Line, l.Target, resolved, anchor))
			}
		}
	}
	for _, page := range pages {
		if strings.HasPrefix(page, "docs/") && page != Index && !linked[page] {
			problems = append(problems, fmt.Sprintf("%s is linked neither from README.md nor from %s", page, Index))
		}
	}
	return problems, nil
}

// Link is a relative link of a page: its target as written (a path, a
// path#anchor or an #anchor) and its line.
type Link struct {
	Target string
	Line   int
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+(\S+)`)
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// Links returns the relative links of a Markdown page, outside fenced
// code blocks and code spans: links with a scheme (https:, mailto:) are
// left out.
func Links(text string) []Link {
	var links []Link
	for _, pl := range proseLines(text) {
		line := codeSpan.ReplaceAllString(pl.text, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, t := range targets {
			t = strings.Trim(t, "<>")
			if scheme.MatchString(t) {
				continue
			}
			links = append(links, Link{Target: t, Line: pl.n})
		}
	}
	return links
}

// proseLine is a line of a Markdown page outside fenced code blocks, and
// its number (1-based).
type proseLine struct {
	n    int
	text string
}

// proseLines returns the lines of a Markdown page outside fenced code
// blocks, in order.
func proseLines(text string) []proseLine {
	var out []proseLine
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		if f, ok := fenceOf(line, fence); ok {
			fence = f
			continue
		}
		if fence == "" {
			out = append(out, proseLine{n: i + 1, text: line})
		}
	}
	return out
}

// fenceOf tells whether line opens or closes a fenced code block, given
// the fence open before it ("" for none), and returns the fence open
// after it.
func fenceOf(line, open string) (string, bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return open, false
	}
	for _, c := range []string{"```", "~~~"} {
		if !strings.HasPrefix(t, c) {
			continue
		}
		n := len(t) - len(strings.TrimLeft(t, c[:1]))
		f := t[:n]
		if open == "" {
			return f, true
		}
		if strings.HasPrefix(open, c[:1]) && n >= len(open) && strings.TrimSpace(t[n:]) == "" {
			return "", true
		}
	}
	return open, false
}

var (
	heading  = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	mdLink   = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	notInIDs = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`)
)

// Anchors returns the anchors of a page's headings as GitHub makes them:
// the heading's text in lower case, without punctuation, spaces made
// hyphens, and -1, -2… after the second and later of the same.
func Anchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, pl := range proseLines(text) {
		m := heading.FindStringSubmatch(pl.text)
		if m == nil {
			continue
		}
		id := Anchor(m[2])
		if n := seen[id]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", id, n)] = true
		} else {
			anchors[id] = true
		}
		seen[id]++
	}
	return anchors
}

// Anchor is the anchor GitHub gives a heading of this text.
func Anchor(text string) string {
	text = mdLink.ReplaceAllString(text, "$1")
	text = strings.ToLower(text)
	text = notInIDs.ReplaceAllString(text, "")
	return strings.ReplaceAll(text, " ", "-")
}
