package query_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// queryInput runs "kubectl informer query ARGS" with input on stdin.
func queryInput(t *testing.T, input string, args ...string) result {
	t.Helper()
	code, out, errOut := framework.RunPlugin(context.Background(), strings.NewReader(input), append([]string{"query", "--kubeconfig", cluster.Kubeconfig}, args...)...)
	return result{code: code, out: out, errOut: errOut}
}

func TestInteractive(t *testing.T) {
	all := pods(t, metav1.ListOptions{})
	shop := workload.NamespaceName(0)
	var pending, shopPending int
	var shopNames []string
	for _, p := range all {
		if p.Namespace == shop {
			shopNames = append(shopNames, "pod/"+p.Name)
		}
		if p.Status.Phase == corev1.PodPending {
			pending++
			if p.Namespace == shop {
				shopPending++
			}
		}
	}
	if pending == 0 || shopPending == 0 {
		t.Fatalf("the workload has %d pending pods, %d in %s: want some", pending, shopPending, shop)
	}
	input := strings.Join([]string{
		":count",
		`object.status.phase == "Pending"`,
		`object.staus.phase == "Pending"`, // refused; the filter stays
		":by namespace " + shop,
		":where",
		":count",
		":o name",
		":resources",
		":quit",
		":count",
	}, "\n")
	r := queryInput(t, input, "pods", "-A", "-i")
	// A line failed: the session exits with 2, as that filter would on the
	// command line.
	if r.code != 2 {
		t.Errorf("exit code %d, want 2: line 3 failed", r.code)
	}
	out := r.out
	want := []string{strconv.Itoa(len(all)), strconv.Itoa(pending), strconv.Itoa(shopPending), strconv.Itoa(len(shopNames))}
	got := lines(out)
	if len(got) < len(want) || strings.Join(got[:len(want)], " ") != strings.Join(want, " ") {
		t.Fatalf("the counts are\n%s\nwant %q", out, want)
	}
	// The table of :count off, then the names of :o name, then :resources.
	if !strings.HasPrefix(got[len(want)], "NAMESPACE ") {
		t.Errorf("after :count, a table; got %q", got[len(want)])
	}
	tail := strings.Join(got[len(got)-len(shopNames)-2:], "\n")
	var wantTail string
	for _, p := range shopNames {
		wantTail += p + "\n"
	}
	wantTail += "RESOURCE   OBJECTS   INDEXES\npods       " + strconv.Itoa(len(all))
	if !strings.HasPrefix(tail, strings.TrimSuffix(wantTail, "\n")) {
		t.Errorf("the output ends with\n%s\nwant\n%s", tail, wantTail)
	}
	if strings.Count(out, "\n") != len(want)+1+len(shopNames)+len(shopNames)+2 {
		t.Errorf("%d lines printed; was something answered after :quit?\n%s", strings.Count(out, "\n"), out)
	}
	wantErr := "error: invalid filter expression: undefined field 'staus' (did you mean \"status\"?)\n" +
		" | object.staus.phase == \"Pending\"\n" +
		" |        ^\n" +
		"error: 1 of 9 input lines failed (line 3); each printed its error above\n"
	if r.errOut != wantErr {
		t.Errorf("stderr:\n%s\nwant\n%s", r.errOut, wantErr)
	}
}

// TestInteractiveLookups: a session of pods in one namespace and nodes
// reads both with get() and byIndex() in any expression, though the
// starting query read neither; a resource it does not cache is refused,
// and the piped session then exits with 2.
func TestInteractiveLookups(t *testing.T) {
	shop := workload.NamespaceName(0)
	var shopPods int
	for _, p := range pods(t, metav1.ListOptions{}) {
		if p.Namespace == shop {
			shopPods++
		}
	}
	nodes, err := cluster.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := len(nodes.Items)
	if n == 0 || shopPods == 0 {
		t.Fatalf("the workload has %d nodes and %d pods in %s: want some", n, shopPods, shop)
	}
	input := strings.Join([]string{
		":count",
		`get("nodes", object.metadata.name) != null`, // the nodes only
		`get("no", object.metadata.name) == null`,    // the pods only
		":index byName=object.metadata.name",
		`size(byIndex("nodes", "byName", object.metadata.name)) == 1`,
		`size(byIndex("pods", "namespace", "` + shop + `")) == ` + strconv.Itoa(shopPods),
		`get("configmaps", "` + shop + `", "x") == null`,
		":quit",
	}, "\n")
	r := queryInput(t, input, "pods,nodes", "-n", shop, "-i")
	want := []string{
		strconv.Itoa(shopPods + n), strconv.Itoa(n), strconv.Itoa(shopPods),
		`pods: index "byName" has ` + strconv.Itoa(shopPods) + ` values`,
		`nodes: index "byName" has ` + strconv.Itoa(n) + ` values`,
		strconv.Itoa(n), strconv.Itoa(shopPods + n),
	}
	if got := lines(r.out); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stdout:\n%s\nwant:\n%s\nstderr:\n%s", r.out, strings.Join(want, "\n"), r.errOut)
	}
	wantErr := `error: filter: "configmaps" is not cached here (the caches hold pods, nodes): start a new query that names it, or whose flags read it with get()` + "\n" +
		"error: 1 of 8 input lines failed (line 7); each printed its error above\n"
	if r.errOut != wantErr || r.code != 2 {
		t.Errorf("exit code %d, stderr:\n%s\nwant 2 and:\n%s", r.code, r.errOut, wantErr)
	}
}
