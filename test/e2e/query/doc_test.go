package query_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// The section of docs/reliability.md that TestBadInputDoc writes.
const (
	docFile     = "docs/reliability.md"
	docBegin    = "<!-- bad-input: begin; written by TestBadInputDoc (test/e2e/query), do not edit -->\n"
	docEnd      = "<!-- bad-input: end -->\n"
	updateDocs  = "UPDATE_DOCS"
	exporterTop = "apiVersion: kubectl-informer.io/v1alpha1\nkind: ExporterConfig\nresources:\n"
)

// badInput is a command given something wrong, run for the table of
// docs/reliability.md.
type badInput struct {
	// what says what is wrong.
	what string
	// args follow "kubectl informer"; files are written where it runs.
	args  []string
	files map[string]string
}

// badInputs are the cases of the table. The addresses of the servers
// started for them are printed as 127.0.0.1:PORT; pod is a pod of the
// namespace shop.
func badInputs(closed, stalledKubeconfig, unprivilegedKubeconfig, pod string) []badInput {
	return []badInput{
		{what: "invalid CEL", args: []string{"query", "pods", "-A", "--where", `object.status.phase = "Running"`}},
		{what: "--where that is not a bool", args: []string{"query", "pods", "-A", "--where", "object.metadata.name"}},
		{what: "unknown field (checked against the resource's OpenAPI schema)", args: []string{"query", "pods", "-A", "--where", `object.staus.phase == "Pending"`}},
		{what: "unknown resource", args: []string{"query", "podz", "-A"}},
		{what: "empty resource argument", args: []string{"query", "", "-A"}},
		{what: "empty --where", args: []string{"query", "pods", "-A", "--where", ""}},
		{what: "label selector that does not parse", args: []string{"query", "pods", "-A", "-l", "!!!"}},
		{what: "get() with a namespace for a cluster-scoped resource", args: []string{"query", "pods", "-n", "shop", "--where", `get("nodes", "shop", object.spec.nodeName) != null`}},
		{what: "--index that does not fit one of several resources", args: []string{"query", "pods,nodes", "-A", "--index", "byNode=object.spec.nodeName", "--by", "byNode=x"}},
		{what: "query config: misspelled field", args: []string{"query", "pods", "-A", "--config", "query-typo.yaml"},
			files: map[string]string{"query-typo.yaml": "apiVersion: kubectl-informer.io/v1alpha1\nkind: QueryConfig\noutptu: wide\n"}},
		{what: "unknown index in --by", args: []string{"query", "pods", "-A", "--by", "byZone=zone-a"}},
		{what: "bad --by syntax", args: []string{"query", "pods", "-A", "--by", "nodename"}},
		{what: "bad -o", args: []string{"query", "pods", "-A", "-o", "xml"}},
		{what: "unknown flag", args: []string{"query", "pods", "--sort", "object.metadata.name"}},
		{what: "forbidden", args: []string{"query", "pods", "-n", "shop", "--kubeconfig", unprivilegedKubeconfig}},
		{what: "forbidden in every namespace", args: []string{"query", "pods", "-A", "--kubeconfig", unprivilegedKubeconfig}},
		{what: "--as that the API server refuses (the user may not impersonate)", args: []string{"query", "pods", "-n", "shop", "--kubeconfig", unprivilegedKubeconfig, "--as", "someone-else"}},
		{what: "named object that does not exist", args: []string{"query", "pods", pod, "nope", "-n", "shop", "-o", "name"}},
		{what: "unreachable API server (nothing listens)", args: []string{"query", "pods", "--kubeconfig", "unreachable.kubeconfig"}},
		{what: "silent API server (accepts connections, never answers), --request-timeout", args: []string{"query", "pods", "--kubeconfig", "silent.kubeconfig", "--request-timeout", "2s"}},
		{what: "silent API server, --sync-timeout", args: []string{"query", "pods", "--kubeconfig", "silent.kubeconfig", "--sync-timeout", "2s"}},
		{what: "query server URL that is not HTTPS", args: []string{"query", "pods", "--query-server", "http://" + closed}},
		{what: "unreachable query server", args: []string{"query", "pods", "--query-server", "https://" + closed}},
		{what: "-i with a query server", args: []string{"query", "pods", "-i", "--query-server", "https://" + closed}},
		{what: "several contexts not in the kubeconfig", args: []string{"query", "pods", "-A", "--context", "east,nowhere"}},
		{what: "--context-selector without --all-contexts", args: []string{"query", "pods", "-A", "--context-selector", "^prod-"}},
		{what: "several contexts for a verb that reads one cluster", args: []string{"export", "--profile", "kube-state-metrics", "--context", "east,west"}},
		{what: "query server: its clusters without --query-server", args: []string{"query", "pods", "-A", "--server-clusters", "east,west"}},
		{what: "sync timeout (the server answers discovery, never the list of pods)", args: []string{"query", "pods", "-A", "--kubeconfig", stalledKubeconfig, "--sync-timeout", "2s"}},
		{what: "cost limit exceeded (the query stops at the first object)", args: []string{"query", "pods", "-n", "shop", "--field-selector", "metadata.name=" + pod, "--count",
			"--where", "object.spec.containers.all(c, lists.range(1000).all(x, lists.range(1000).all(y, x + y >= 0)))"}},
		{what: "exporter config: unknown field", args: []string{"export", "--config", "unknown-field.yaml", "--check"},
			files: map[string]string{"unknown-field.yaml": exporterTop + `- resource: pods
  metrics:
  - name: pod_info
    help: Information about a pod.
    type: info
    lables:
      pod: object.metadata.name
`}},
		{what: "exporter config: bad metric name", args: []string{"export", "--config", "bad-name.yaml", "--check"},
			files: map[string]string{"bad-name.yaml": exporterTop + `- resource: pods
  metrics:
  - name: pod-phase
    help: The phase of a pod.
    type: gauge
    labels:
      pod: object.metadata.name
      phase: object.status.phase
`}},
		{what: "exporter config: invalid CEL (FILE:LINE of the line at fault)", args: []string{"export", "--config", "bad-cel.yaml", "--check"},
			files: map[string]string{"bad-cel.yaml": exporterTop + `- resource: pods
  metrics:
  - name: pod_ready_containers
    help: Ready containers of a pod.
    type: gauge
    labels:
      pod: object.metadata.name
    value: >-
      object.status.?containerStatuses.orValue([])
        .filter(s, s.ready))
        .size()
`}},
		{what: "exporter config: Secret data without allowSecretData", args: []string{"export", "--config", "secret-data.yaml", "--check"},
			files: map[string]string{"secret-data.yaml": exporterTop + `- resource: secrets
  metrics:
  - name: secret_info
    help: Information about a secret.
    type: info
    labels:
      secret: object.metadata.name
      token: object.data.token
`}},
	}
}

var loopbackPort = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// TestBadInputDoc runs the plugin's binary on each bad input of
// badInputs, against the test cluster (and servers that fail as each case
// needs), and checks that the table of docs/reliability.md shows exactly
// what it printed and its exit code. With UPDATE_DOCS=1, it writes the
// table instead.
func TestBadInputDoc(t *testing.T) {
	bin := pluginBinary(t)
	dir := t.TempDir()
	stalled, _ := stallingProxy(t, podRequests)
	closed := framework.ClosedPort(t)
	for name, from := range map[string]string{
		"unprivileged.kubeconfig": cluster.UnprivilegedKubeconfig, "stalled.kubeconfig": stalled,
		"unreachable.kubeconfig": cluster.KubeconfigFor(t, "https://"+closed),
		"silent.kubeconfig":      cluster.KubeconfigFor(t, "https://"+framework.SilentServer(t)),
	} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	shop := pods(t, metav1.ListOptions{FieldSelector: "metadata.namespace=shop"})
	if len(shop) == 0 {
		t.Fatal("no pods in the namespace shop")
	}
	cases := badInputs(closed, "stalled.kubeconfig", "unprivileged.kubeconfig", names(shop, false)[0])

	var table, transcripts strings.Builder
	table.WriteString("| bad input | exit code | message |\n|---|---|---|\n")
	for _, c := range cases {
		for name, content := range c.files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		var out, errOut bytes.Buffer
		cmd := exec.Command(bin, append(c.args, "--cache-dir", t.TempDir())...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &errOut
		err := cmd.Run()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatalf("%s: %v", c.what, err)
		}
		code := cmd.ProcessState.ExitCode()
		if errOut.Len() == 0 {
			t.Errorf("%s: exit code %d and nothing on stderr", c.what, code)
		}
		command := loopbackPort.ReplaceAllString("kubectl informer "+shellQuote(c.args), "127.0.0.1:PORT")
		message := loopbackPort.ReplaceAllString(errOut.String(), "127.0.0.1:PORT")
		first, _, _ := strings.Cut(message, "\n")
		fmt.Fprintf(&table, "| %s | %d | `%s` |\n", cell(c.what), code, cell(first))
		fmt.Fprintf(&transcripts, "%s:\n\n", capitalize(c.what))
		for name, content := range c.files {
			fmt.Fprintf(&transcripts, "```yaml\n# %s\n%s```\n\n", name, content)
		}
		fmt.Fprintf(&transcripts, "```text\n$ %s\n%s%s[exit code %d]\n```\n\n", command, out.String(), message, code)
	}
	section := table.String() + "\n" + strings.TrimSuffix(transcripts.String(), "\n")

	path := filepath.Join(cluster.Root, docFile)
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), docBegin)
	current, after, ok2 := strings.Cut(rest, docEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the markers of the generated section:\n%s%s", docFile, docBegin, docEnd)
	}
	if current == section {
		return
	}
	if os.Getenv(updateDocs) != "" {
		if err := os.WriteFile(path, []byte(before+docBegin+section+docEnd+after), 0o644); err != nil { //nolint:gosec // G306: a tracked doc, readable like the rest of the tree
			t.Fatal(err)
		}
		t.Logf("wrote the bad-input section of %s", docFile)
		return
	}
	got, want := strings.Split(section, "\n"), strings.Split(current, "\n")
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s does not show what the plugin prints; first difference, at line %d of the section:\n  printed: %q\n  in doc:  %q\nrun the test with %s=1 to rewrite the section", docFile, i+1, g, w, updateDocs)
			break
		}
	}
}

// shellQuote joins args as a POSIX shell would read them back.
func shellQuote(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,/:=@") == "" {
			quoted[i] = a
			continue
		}
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

// cell escapes s for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
