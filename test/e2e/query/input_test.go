package query_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/cmd/kubectl-informer/app"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestNamespaceOfClusterScoped checks that get() given a namespace for a
// cluster-scoped resource is refused with a caret once the resources are
// resolved, before anything is listed: as a user who may list nothing,
// the answer is that mistake, not "forbidden".
func TestNamespaceOfClusterScoped(t *testing.T) {
	for _, kubeconfig := range []string{cluster.Kubeconfig, cluster.UnprivilegedKubeconfig} {
		r := query(t, "pods", "-A", "--kubeconfig", kubeconfig, "--where", `get("nodes", "a", "x") != null`)
		want := "error: invalid --where expression: \"nodes\" is cluster-scoped: its objects have no namespace; call get(\"nodes\", NAME) without one\n" +
			" | get(\"nodes\", \"a\", \"x\") != null\n" +
			" |              ^\n"
		if r.code != app.ExitUsage || r.out != "" || r.errOut != want {
			t.Errorf("as %s: exit %d, stdout %q, stderr\n%s\nwant exit 2 and\n%s", filepath.Base(kubeconfig), r.code, r.out, r.errOut, want)
		}
	}
	// The same filter typed in an interactive session, after the caches
	// filled: refused the same way, and the session goes on.
	r := queryInput(t, `get("nodes", "a", "x") != null`+"\n:count\n", "pods,nodes", "-A", "-i")
	want := "error: invalid filter expression: \"nodes\" is cluster-scoped: its objects have no namespace; call get(\"nodes\", NAME) without one\n" +
		" | get(\"nodes\", \"a\", \"x\") != null\n" +
		" |              ^\n"
	if r.code != app.ExitUsage || !strings.Contains(r.errOut, want) {
		t.Errorf("-i: exit %d, stderr\n%s\nwant exit 2 and\n%s", r.code, r.errOut, want)
	}

	// A namespaced resource takes one.
	r = query(t, "pods", "-A", "--count", "--where", `get("namespaces", object.metadata.namespace) != null && get("configmaps", object.metadata.namespace, "none") == null`)
	if r.code != 0 {
		t.Errorf("get() of a namespaced resource with a namespace: exit %d, stderr %q", r.code, r.errOut)
	}
}

// TestResourceIndexes checks --index RESOURCE:NAME=CEL: an index of one
// resource among several, answered as the API lists them, and the error
// of an index for every resource that does not fit one of them.
func TestResourceIndexes(t *testing.T) {
	ctx := context.Background()
	node := "node-001"
	pods, err := cluster.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"node/" + node}
	for _, p := range pods.Items {
		want = append(want, "pod/"+p.Name)
	}
	if len(want) < 2 {
		t.Fatalf("no pod on %s in the workload", node)
	}
	r := query(t, "pods,nodes", "-A", "--index", "pods:byNode=object.spec.?nodeName.orValue(\"\")",
		"--index", "nodes:byNode=object.metadata.name", "--by", "byNode="+node, "-o", "name")
	got := framework.Lines(r.ok(t))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("--by byNode=%s over pods and nodes printed\n%v\nwant\n%v", node, got, want)
	}

	// One index for both does not fit nodes: the error says which form
	// to use.
	r = query(t, "pods,nodes", "-A", "--index", "byNode=object.spec.nodeName", "--by", "byNode="+node)
	for _, w := range []string{
		"for nodes: invalid index \"byNode\" expression: undefined field 'nodeName'",
		"--index byNode=… is registered on every resource queried and does not fit nodes: give it to one resource with --index RESOURCE:byNode=…, such as --index pods:byNode=object.spec.nodeName",
	} {
		if r.code != app.ExitUsage || !strings.Contains(r.errOut, w) {
			t.Errorf("an index for every resource that does not fit nodes: exit %d, stderr %q; want exit 2 and %q", r.code, r.errOut, w)
		}
	}
	// An index of a resource neither queried nor read.
	r = query(t, "pods", "-A", "--index", "nodes:byZone=object.metadata.labels[\"topology.kubernetes.io/zone\"]", "--count")
	if w := "--index nodes:byZone=…: nodes is neither queried nor read by byIndex(): query it, or leave the index out"; r.code != app.ExitUsage || !strings.Contains(r.errOut, w) {
		t.Errorf("an index of a resource not queried: exit %d, stderr %q; want exit 2 and %q", r.code, r.errOut, w)
	}
	// Read by byIndex(), it is registered where byIndex() reads.
	r = query(t, "pods", "-A", "--count", "--index", "nodes:byZone=object.metadata.labels[\"topology.kubernetes.io/zone\"]",
		"--where", `has(object.spec.nodeName) && byIndex("nodes", "byZone", "zone-a").exists(n, n.metadata.name == object.spec.nodeName)`)
	if r.code != 0 || r.out == "0\n" {
		t.Errorf("byIndex() on an index of nodes given with --index nodes:byZone: exit %d, stdout %q, stderr %q", r.code, r.out, r.errOut)
	}
	// An unknown resource.
	r = query(t, "pods", "-A", "--index", "podz:byNode=object.spec.nodeName")
	if w := `--index podz:byNode=…: the server doesn't have a resource type "podz"`; r.code != app.ExitUsage || !strings.Contains(r.errOut, w) {
		t.Errorf("an index of an unknown resource: exit %d, stderr %q; want exit 2 and %q", r.code, r.errOut, w)
	}
}

// TestQueryConfigErrors checks the errors of a query config file through
// the command line: each at its line, all of them, exit code 2.
func TestQueryConfigErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	typos := write("typos.yaml", "apiVersion: kubectl-informer.io/v1alpha1\nkind: QueryConfig\nindexs:\n  pods:\n    byNode: object.spec.nodeName\ndefaults:\n  outptu: wide\n")
	r := query(t, "pods", "-A", "--config", typos)
	want := "error: " + typos + ":3: unknown field \"indexs\" (did you mean \"indexes\"?)\n" + typos + ":7: unknown field \"outptu\" (did you mean \"output\"?)\n"
	if r.code != app.ExitUsage || r.errOut != want {
		t.Errorf("two typos: exit %d, stderr\n%s\nwant exit 2 and\n%s", r.code, r.errOut, want)
	}
	exporter := write("exporter.yaml", "apiVersion: kubectl-informer.io/v1alpha1\nkind: ExporterConfig\ncommonLabels:\n  cluster: demo\nresources: []\n")
	r = query(t, "pods", "-A", "--config", exporter)
	want = "error: " + exporter + ":2: this is an ExporterConfig, the config of the exporter; a query config has kind: QueryConfig\n"
	if r.code != app.ExitUsage || r.errOut != want {
		t.Errorf("an ExporterConfig: exit %d, stderr\n%s\nwant exit 2 and\n%s", r.code, r.errOut, want)
	}
	badIndex := write("bad-index.yaml", "apiVersion: kubectl-informer.io/v1alpha1\nkind: QueryConfig\nindexes:\n  pods:\n    byNode: object.spec.nodeNam\n")
	r = query(t, "pods", "-A", "--config", badIndex, "--count")
	if w := `invalid index "byNode" of pods in ` + badIndex + `:5 expression: undefined field 'nodeNam'`; r.code != app.ExitUsage || !strings.Contains(r.errOut, w) {
		t.Errorf("an index the schema refutes: exit %d, stderr %q; want exit 2 and %q", r.code, r.errOut, w)
	}
}
