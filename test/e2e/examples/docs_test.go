package examples_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestDocs runs every command the Markdown docs show (README.md and
// docs/**/*.md; docs/reference/ is the commands' help, which
// TestHelpExamples runs) against the demo's workload, and checks the
// outputs they show. The conventions a page follows:
//
//   - Commands are in fenced blocks tagged sh. Each line starting with
//     "kubectl informer " is a command; a trailing backslash continues it.
//     Other lines (make, helm, kubectl apply, comments) are not run, except
//     curl lines after a command of the same block that serves (export,
//     serve): they ask it, on the port it was given; and kubectl label and
//     kubectl annotate lines of a block with a command that runs until
//     stopped: they make the changes it shows, each of those commands
//     having printed its first line.
//   - Commands run from the repository's root (the files they name must be
//     in it) with bash, against the demo workload (make demo), each block's
//     in order. Each must exit 0, but in a block whose shown output has a
//     line starting with "error: " or, as kubectl says the API server's
//     errors, "Error from server " (an example of a mistake and its
//     message), where a command may exit with another code. A command that runs until stopped (watch,
//     query -w, tree -w, serve, export) runs until the block ends, then
//     gets Ctrl-C and must exit 0.
//   - A block tagged text right after a command's sh block (blank lines
//     between) is the output of the block's commands, standard output then
//     standard error, in order. It is compared after masking what
//     legitimately varies: the AGE, DURATION, LAST SCHEDULE and LAST SEEN
//     columns, a CLUSTER-IP column (but "None"),
//     "(5m ago)", timestamps,
//     unix times in metrics, UIDs, resource versions of watch lines, and
//     ports; spaces between fields do not count. For a command that runs
//     until stopped, the text is lines it prints, in any order: the test
//     waits until each has been printed.
//   - An interactive session (query ... -i) shows its transcript in the
//     text block: lines starting with a prompt ("pods> ") are its input,
//     fed on stdin, and the others its output (without a terminal there is
//     no banner, which the transcript may show).
//   - A command written after a prompt ("$ kubectl informer ...") is not
//     run, and fails the test, in an sh block or in another (a console
//     transcript), but in the sections another test writes and checks
//     (testedElsewhere), where it is logged as tested by that test.
//   - A block that cannot run against the demo (it needs a node, Helm or
//     Prometheus) has the line <!-- docs-test: not run: REASON --> right
//     above it: the test logs each by name and counts them.
//
// DOCS=docs/cookbook.md runs the commands of the pages named only. With
// UPDATE_DOCS=1 the test writes the real output of each block that ends by
// itself into its text block (an empty ```text block after a command's sh
// block is filled): `make docs-outputs`.
func TestDocs(t *testing.T) {
	sb := newSandbox(t)
	sb.viewer(t)
	update := os.Getenv("UPDATE_DOCS") != ""
	pages := docPages(t, sb.root)
	skipped, commands, exempted := 0, 0, 0
	for _, page := range pages {
		b, err := os.ReadFile(filepath.Join(sb.root, page))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		blocks := docBlocks(lines)
		inSh, outside := promptedCommands(lines)
		for _, n := range inSh {
			t.Errorf("%s:%d: a command in an sh block starts with a prompt, and so is not run: write it without \"$ \"", page, n)
		}
		for _, e := range testedElsewhere {
			if e.page != page {
				continue
			}
			from, to := e.section(t, lines)
			var in []int
			outside = slices.DeleteFunc(outside, func(n int) bool {
				if n > from && n < to {
					in = append(in, n)
					return true
				}
				return false
			})
			exempted += len(in)
			t.Logf("tested by %s: %s:%d-%d: %d commands after a prompt, at lines %v", e.test, page, from, to, len(in), in)
		}
		for _, n := range outside {
			t.Errorf("%s:%d: a command after a prompt (\"$ kubectl informer\") outside sh blocks is not run: put it in an sh block, without \"$ \", and its output in the text block after it", page, n)
		}
		var updates []docBlock
		for _, bl := range blocks {
			name := fmt.Sprintf("%s:%d", page, bl.line)
			if bl.notRun != "" {
				skipped++
				t.Logf("not run: %s (%s): %s", name, bl.notRun, strings.Join(bl.commands, "; "))
				continue
			}
			commands += len(bl.commands)
			t.Run(name, func(t *testing.T) {
				defer sb.stopBackground(t)
				got := sb.runBlock(t, bl, update)
				if t.Failed() || !bl.hasOutput {
					return
				}
				if update && got != nil {
					bl.output = strings.Split(strings.TrimRight(*got, "\n"), "\n")
					updates = append(updates, bl)
				}
			})
		}
		if len(updates) > 0 {
			writeOutputs(t, filepath.Join(sb.root, page), lines, updates)
		}
	}
	t.Logf("%d commands of %d pages run; %d blocks not run (marked); %d commands shown after a prompt, tested by other tests",
		commands, len(pages), skipped, exempted)
	if commands == 0 {
		t.Fatal("found no command in the docs; the parser missed them")
	}
}

// testedElsewhere are the sections of pages that another test writes and
// checks, commands and outputs: their console transcripts ("$ kubectl
// informer ...") are that test's, and are logged as tested by it rather
// than counted as not run. A section is the lines between the line
// starting with begin and the one starting with end.
var testedElsewhere = []exemptSection{
	// The bad inputs of docs/reliability.md: each command, what it
	// printed and its exit code, run against a control plane and servers
	// that fail as each case needs.
	{page: "docs/reliability.md", test: "TestBadInputDoc (test/e2e/query)",
		begin: "<!-- bad-input: begin;", end: "<!-- bad-input: end -->"},
}

type exemptSection struct {
	page, test, begin, end string
}

// section returns the lines (1-based) of the section's markers in the
// page of lines, and fails the test unless both are there.
func (e exemptSection) section(t *testing.T, lines []string) (from, to int) {
	t.Helper()
	for i, l := range lines {
		switch {
		case from == 0 && strings.HasPrefix(l, e.begin):
			from = i + 1
		case from != 0 && strings.HasPrefix(l, e.end):
			return from, i + 1
		}
	}
	t.Fatalf("%s has no section %q ... %q, which %s writes: update testedElsewhere", e.page, e.begin, e.end, e.test)
	return 0, 0
}

// docPages returns README.md and the Markdown pages under docs/ but
// docs/reference/, relative to root; DOCS=PAGE,... names others.
func docPages(t *testing.T, root string) []string {
	t.Helper()
	if only := os.Getenv("DOCS"); only != "" {
		return strings.Split(only, ",")
	}
	pages := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && rel == filepath.Join("docs", "reference") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// runsUntil reports whether a command runs until stopped.
func runsUntil(command string) bool {
	long, _ := runsUntilStopped(command)
	return long
}

// docBlock is an sh block holding commands, and the text block after it.
type docBlock struct {
	// line is the sh block's first line, 1-based.
	line int
	// commands are its "kubectl informer" and curl lines, continuations
	// joined.
	commands []string
	// notRun is the reason of its not-run marker.
	notRun string
	// hasOutput tells whether a text block follows, whose lines (0-based,
	// the fences excluded) are [from, to), and output its content.
	hasOutput bool
	from, to  int
	output    []string
}

var (
	fence  = regexp.MustCompile("^(\\s*)```(\\S*)\\s*$")
	notRun = regexp.MustCompile(`^\s*<!--\s*docs-test:\s*not run:\s*(.*?)\s*-->\s*$`)
	// change is a line that changes objects for a command that runs until
	// stopped to show.
	change = regexp.MustCompile(`^kubectl (label|annotate) `)
)

// docBlocks returns the sh blocks of a page that hold commands.
func docBlocks(lines []string) []docBlock {
	var out []docBlock
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		end := i + 1
		for end < len(lines) && !fence.MatchString(lines[end]) {
			end++
		}
		if m[2] != "sh" {
			i = end
			continue
		}
		bl := docBlock{line: i + 1}
		if i > 0 {
			if n := notRun.FindStringSubmatch(lines[i-1]); n != nil {
				bl.notRun = n[1]
			}
		}
		var cur []string
		for _, l := range lines[i+1 : min(end, len(lines))] {
			l = strings.TrimSpace(l)
			if len(cur) == 0 && !strings.HasPrefix(l, "kubectl informer ") && !strings.HasPrefix(l, "curl ") && !change.MatchString(l) {
				continue
			}
			cur = append(cur, l)
			if !strings.HasSuffix(l, `\`) {
				bl.commands = append(bl.commands, strings.Join(cur, "\n"))
				cur = nil
			}
		}
		i = end
		if !slices.ContainsFunc(bl.commands, func(c string) bool { return strings.HasPrefix(c, "kubectl informer ") }) {
			continue
		}
		// A text block right after it is its output.
		j := end + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j < len(lines) {
			if m := fence.FindStringSubmatch(lines[j]); m != nil && m[2] == "text" {
				k := j + 1
				for k < len(lines) && !fence.MatchString(lines[k]) {
					k++
				}
				bl.hasOutput, bl.from, bl.to = true, j+1, k
				bl.output = lines[j+1 : k]
				i = k
			}
		}
		out = append(out, bl)
	}
	return out
}

// promptedCommands returns the lines (1-based) of the commands written
// after a prompt ("$ kubectl informer ...") in sh blocks and in other
// fenced blocks.
func promptedCommands(lines []string) (inSh, outside []int) {
	block := ""
	for i, l := range lines {
		if m := fence.FindStringSubmatch(l); m != nil {
			if block == "" {
				block = m[2] + " "
			} else {
				block = ""
			}
			continue
		}
		if block == "" || !strings.HasPrefix(strings.TrimSpace(l), "$ kubectl informer ") {
			continue
		}
		if block == "sh " {
			inSh = append(inSh, i+1)
		} else {
			outside = append(outside, i+1)
		}
	}
	return inSh, outside
}

var (
	prompt      = regexp.MustCompile(`^[a-z][a-z0-9.,/-]*> `)
	banner      = regexp.MustCompile(`cached\. Type a CEL filter`)
	interactive = regexp.MustCompile(`\s(-i|--interactive)(\s|$)`)
)

// runBlock runs the commands of a block and checks its shown output. It
// returns the output of a block whose commands all end by themselves, for
// UPDATE_DOCS, which does not compare it.
func (s *sandbox) runBlock(t *testing.T, bl docBlock, update bool) *string {
	t.Helper()
	var got strings.Builder
	updatable := true
	mayFail := slices.ContainsFunc(bl.output, func(l string) bool {
		return strings.HasPrefix(l, "error: ") || strings.HasPrefix(l, "Error from server ")
	})
	// following print lines that the block's changes cause: checked once
	// they are made.
	var following []*proc
	for i, c := range bl.commands {
		if strings.HasPrefix(c, "curl ") && !s.serving() || change.MatchString(c) && !slices.ContainsFunc(bl.commands, runsUntil) {
			continue
		}
		stdin := ""
		want := bl.output
		if strings.HasPrefix(c, "kubectl informer ") && interactive.MatchString(c) {
			// Its transcript: the lines after the prompts are its input.
			var in []string
			want = nil
			for _, l := range bl.output {
				switch {
				case prompt.MatchString(l):
					in = append(in, prompt.ReplaceAllString(l, ""))
				case !banner.MatchString(l):
					want = append(want, l)
				}
			}
			stdin = strings.Join(in, "\n") + "\n"
			bl.output = want
			updatable = false
		}
		p := s.start(t, "bash", c, stdin)
		if !p.long {
			p.wait(t, mayFail)
			got.WriteString(p.out.String())
			got.WriteString(p.err.String())
			continue
		}
		if !p.serves {
			// The text shows what it prints, in any order.
			updatable = false
		}
		if !bl.hasOutput || p.ready != "" || slices.ContainsFunc(bl.commands[i:], change.MatchString) {
			p.waitServing(t, func(out string) bool { return out != "" }, s.poke(t, c))
			if bl.hasOutput && p.ready == "" {
				following = append(following, p)
			}
			continue
		}
		// Lines it prints, in any order.
		p.waitServing(t, func(out string) bool {
			m := missing(maskLines(want), maskLines(strings.Split(out, "\n")))
			p.waitingFor = "\nshown lines (masked) it has not printed:\n" + strings.Join(m, "\n")
			return out != "" && m == nil
		}, s.poke(t, c))
	}
	if len(following) > 0 {
		// The lines they print together, in any order.
		p := following[0]
		p.waitServing(t, func(string) bool {
			var out []string
			for _, f := range following {
				out = append(out, strings.Split(f.out.String(), "\n")...)
			}
			m := missing(maskLines(bl.output), maskLines(out))
			p.waitingFor = "\nshown lines (masked) they have not printed:\n" + strings.Join(m, "\n")
			return m == nil
		}, nil)
	}
	if !bl.hasOutput {
		return nil
	}
	if updatable {
		out := got.String()
		if update {
			return &out
		}
		if w, g := maskLines(bl.output), maskLines(strings.Split(got.String(), "\n")); !slices.Equal(w, g) {
			t.Errorf("shown output of %s differs from the commands' (masked, - shown, + got):\n%s\nreal output:\n%s",
				strings.Join(bl.commands, "; "), lineDiff(w, g), out)
		}
		return nil
	}
	if slices.ContainsFunc(bl.commands, func(c string) bool { return interactive.MatchString(c) }) {
		if w, g := maskLines(bl.output), maskLines(strings.Split(got.String(), "\n")); !slices.Equal(w, g) {
			t.Errorf("shown transcript of %s differs from the session's (masked, - shown, + got):\n%s\nreal output:\n%s",
				strings.Join(bl.commands, "; "), lineDiff(w, g), got.String())
		}
	}
	return nil
}

var namespaceFlag = regexp.MustCompile(`(?:^|\s)(?:-n|--namespace)[ =](\S+)`)

// poke returns a function that changes an annotation of the pods of the
// command's namespace (of every namespace without -n) so that a watch
// prints them.
func (s *sandbox) poke(t *testing.T, command string) func(int) {
	ns := ""
	if m := namespaceFlag.FindStringSubmatch(command); m != nil {
		ns = m[1]
	}
	return func(i int) {
		if i == 0 || i%20 != 0 { // a round every second, from the first one on
			return
		}
		pods, err := cluster.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Log(err)
			return
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"examples/poke":"%d"}}}`, i)
		for _, p := range pods.Items {
			_, _ = cluster.Client.CoreV1().Pods(p.Namespace).Patch(context.Background(), p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		}
	}
}

// varyingColumn finds the columns of a table header whose values vary
// from run to run: those that count from the time the objects were
// created or now (AGE, DURATION of a job still running, LAST SCHEDULE,
// LAST SEEN), and a Service's CLUSTER-IP, which the API server allocates
// (but "None", of a headless Service).
var varyingColumn = regexp.MustCompile(`(?:^|\s)(AGE|DURATION|LAST SCHEDULE|LAST SEEN|CLUSTER-IP)(?:\s|$)`)

var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?( UTC)?`), "<time>"},
	{regexp.MustCompile(`\(\S+ ago\)`), "(<age> ago)"},
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<uid>"},
	{regexp.MustCompile(`((?:ADDED|UPDATED|DELETED|ENTERED|LEFT)(?: \((?:related|missed)\))?\s+\S+\s+\S+\s+)\d+`), "${1}<rv>"},
	{regexp.MustCompile(`(resourceVersion"?:\s*"?)\d+`), "${1}<rv>"},
	// The value of a sample of a time (kube_pod_created), not any number
	// near 1e9 (1Gi of memory).
	{regexp.MustCompile(`((?:_created|_time|_timestamp\w*)(?:\{[^}]*\})? )(?:1\.\d+e\+09|1\d{9}(?:\.\d+)?)\b`), "${1}<unixtime>"},
	// A port of a host, of a listen address or a NodePort (80:30481/TCP),
	// not a number after a colon ("containerPort":8080).
	{regexp.MustCompile(`(localhost|127\.0\.0\.1|\[::\]|0\.0\.0\.0|\d|^|[\s=])(:)\d{4,5}\b`), "${1}:<port>"},
	// The version and commit of the build, in the first line of version.
	{regexp.MustCompile(`^kubectl-informer \S+ \(commit \S+, `), "kubectl-informer <version> (commit <commit>, "},
}

// maskLines returns lines with what legitimately varies from run to run
// masked, each as its fields joined by one space, without leading and
// trailing blank lines.
func maskLines(lines []string) []string {
	var out []string
	var cols []int     // offsets of the varying columns of the table being read
	var names []string // and their headers
	for _, l := range lines {
		switch {
		case strings.TrimSpace(l) == "":
			cols = nil
		case strings.ToUpper(l) == l && varyingColumn.MatchString(l):
			// Columns count in characters: a tree's rows draw with
			// several bytes each.
			cols, names = nil, nil
			for _, m := range varyingColumn.FindAllStringSubmatchIndex(l, -1) {
				cols = append(cols, utf8.RuneCountInString(l[:m[2]]))
				names = append(names, l[m[2]:m[3]])
			}
		default:
			r := []rune(l)
			for i := len(cols) - 1; i >= 0; i-- {
				c := cols[i]
				if len(r) <= c || c > 0 && r[c-1] != ' ' {
					continue
				}
				end := c
				for end < len(r) && r[end] != ' ' {
					end++
				}
				with := "<age>"
				if names[i] == "CLUSTER-IP" {
					if string(r[c:end]) == "None" {
						continue
					}
					with = "<cluster-ip>"
				}
				r = slices.Concat(r[:c], []rune(with), r[end:])
			}
			l = string(r)
		}
		for _, m := range masks {
			l = m.re.ReplaceAllString(l, m.with)
		}
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	for len(out) > 0 && out[0] == "" {
		out = out[1:]
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// missing returns the lines of want not in got.
func missing(want, got []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			out = append(out, w)
		}
	}
	return out
}

// lineDiff shows the lines of want and got that differ.
func lineDiff(want, got []string) string {
	var b strings.Builder
	for i := 0; i < max(len(want), len(got)); i++ {
		switch {
		case i >= len(got):
			fmt.Fprintf(&b, "- %s\n", want[i])
		case i >= len(want):
			fmt.Fprintf(&b, "+ %s\n", got[i])
		case want[i] != got[i]:
			fmt.Fprintf(&b, "- %s\n+ %s\n", want[i], got[i])
		default:
			fmt.Fprintf(&b, "  %s\n", want[i])
		}
	}
	return b.String()
}

// writeOutputs replaces the text blocks of blocks in the page of lines.
func writeOutputs(t *testing.T, path string, lines []string, blocks []docBlock) {
	t.Helper()
	for i := len(blocks) - 1; i >= 0; i-- {
		bl := blocks[i]
		lines = slices.Concat(lines[:bl.from], bl.output, lines[bl.to:])
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil { //nolint:gosec // a page of the docs
		t.Fatal(err)
	}
	t.Logf("wrote the outputs of %d blocks into %s", len(blocks), path)
}

func TestMaskLines(t *testing.T) {
	shown := []string{
		"NAMESPACE   NAME               READY   REASON   AGE",
		"shop        CronJob/report-1   -                20s",
		"shop        └─Job/migrate-1    -                20s",
		"",
		"NAME     READY   STATUS             RESTARTS       AGE   TOTAL",
		"web-1    1/2     CrashLoopBackOff   39 (26d ago)   13s   39",
		"2026-11-29T06:37:43.200Z ADDED   pod payments/api-1 697",
		`kube_pod_created{namespace="shop",uid="055faf22-e812-4cf3-8618-4e7228e3ddd1"} 1.764398e+09`,
		"",
		"NAME      TYPE           CLUSTER-IP   EXTERNAL-IP   PORT(S)        AGE   INTERNAL",
		"leaving   ClusterIP      None         <none>        80/TCP         58s   false",
		"web       LoadBalancer   10.0.0.187   192.0.2.1     80:30481/TCP   58s   true",
		"kubectl-informer dev (commit unknown, go1.26.8, linux/amd64)",
	}
	varied := []string{
		"NAMESPACE   NAME               READY   REASON   AGE",
		"shop        CronJob/report-1   -                3h12m",
		"shop        └─Job/migrate-1    -                3h12m",
		"",
		"NAME     READY   STATUS             RESTARTS         AGE     TOTAL",
		"web-1    1/2     CrashLoopBackOff   39 (2d20h ago)   4m10s   39",
		"2026-12-01T00:00:00.000Z ADDED   pod payments/api-1 12",
		`kube_pod_created{namespace="shop",uid="2546e801-bb4a-42c2-ae31-bb75796a4819"} 1.764399e+09`,
		"",
		"NAME      TYPE           CLUSTER-IP   EXTERNAL-IP   PORT(S)        AGE   INTERNAL",
		"leaving   ClusterIP      None         <none>        80/TCP         3m    false",
		"web       LoadBalancer   10.0.0.7     192.0.2.1     80:31007/TCP   3m    true",
		"kubectl-informer v0.1.0 (commit 2f4beed4ccc2d56d53dca1c990abca94c525e2b4, go1.26.8, linux/amd64)",
	}
	if w, g := maskLines(shown), maskLines(varied); !slices.Equal(w, g) {
		t.Errorf("what varies from run to run is not masked:\n%s", lineDiff(w, g))
	}
	for i, l := range shown {
		changed := slices.Clone(shown)
		switch {
		case strings.Contains(l, "kube_pod_created"):
			changed[i] = strings.Replace(l, "shop", "batch", 1)
		case strings.Contains(l, "39"):
			changed[i] = strings.Replace(l, "39", "40", 1)
		case strings.Contains(l, "report-1"):
			changed[i] = strings.Replace(l, "report-1", "report-2", 1)
		case strings.Contains(l, "migrate-1"):
			changed[i] = strings.Replace(l, "-  ", "1  ", 1)
		case strings.Contains(l, "api-1"):
			changed[i] = strings.Replace(l, "api-1", "api-2", 1)
		case strings.Contains(l, "None"):
			// A headless Service's is not masked.
			changed[i] = strings.Replace(l, "None     ", "10.0.0.12", 1)
		case strings.Contains(l, "LoadBalancer"):
			changed[i] = strings.Replace(l, "192.0.2.1", "192.0.2.2", 1)
		case strings.HasPrefix(l, "kubectl-informer "):
			// The Go version and platform are not the build's.
			changed[i] = strings.Replace(l, "go1.26.8", "go1.27.0", 1)
		default:
			continue
		}
		if slices.Equal(maskLines(shown), maskLines(changed)) {
			t.Errorf("a change of line %d is masked: %q", i, changed[i])
		}
	}
}
