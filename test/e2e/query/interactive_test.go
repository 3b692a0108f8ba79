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
	out := r.ok(t)
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
		" |        ^\n"
	if r.errOut != wantErr {
		t.Errorf("stderr:\n%s\nwant\n%s", r.errOut, wantErr)
	}
}
