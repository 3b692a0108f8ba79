package query_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestQueryWatchShowsEmptyAnswer runs query -w in every output format on a
// namespace holding one pod, then deletes the pod: the answer that became
// empty must be seen. Each format's last answer is what kubectl get prints
// for the empty namespace (nothing for -o name, jsonpath and tables, an
// empty List for -o json and yaml, the header of custom columns), set apart
// from the previous answer by an empty line, and followed on stderr by
// "No resources found in NAMESPACE namespace."; --count prints 0.
func TestQueryWatchShowsEmptyAnswer(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "watch-empty")
	message := "No resources found in " + ns + " namespace.\n"
	for _, c := range []struct {
		name   string
		args   []string
		counts bool // a count, with no kubectl get equivalent
		// get are kubectl get's arguments when not args: groups are a
		// table, empty as kubectl get's default table is.
		get []string
	}{
		{name: "table"},
		{name: "wide", args: []string{"-o", "wide"}},
		{name: "name", args: []string{"-o", "name"}},
		{name: "json", args: []string{"-o", "json"}},
		{name: "yaml", args: []string{"-o", "yaml"}},
		{name: "jsonpath", args: []string{"-o", "jsonpath={.items[*].metadata.name}"}},
		{name: "custom-columns", args: []string{"-o", "custom-columns=NAME:.metadata.name"}},
		{name: "count", args: []string{"--count"}, counts: true},
		{name: "group-by", args: []string{"--group-by", "object.status.phase"}, get: []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "h1"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/h:1"}}}}
			if _, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			r := cluster.StartPlugin(t, append([]string{"query", "pods", "-n", ns, "-w"}, c.args...)...)
			framework.Eventually(t, "the first answer is printed", func() bool { return r.Out.String() != "" })
			first := r.Out.String()
			zero := int64(0)
			if err := cluster.Client.CoreV1().Pods(ns).Delete(ctx, "h1", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
				t.Fatal(err)
			}
			if c.counts {
				framework.Eventually(t, "the count becomes 0", func() bool { return r.Out.String() == first+"0\n" })
				return
			}
			framework.Eventually(t, "the empty answer is said", func() bool { return strings.HasSuffix(r.ErrOut.String(), message) })
			if strings.Contains(strings.TrimSuffix(r.ErrOut.String(), message), "No resources found") {
				t.Errorf("stderr %q: the first answer, not empty, was said to be", r.ErrOut.String())
			}
			get := c.args
			if c.get != nil {
				get = c.get
			}
			want := kubectl(t, append([]string{"get", "pods", "-n", ns}, get...)...)
			if want.code != 0 {
				t.Fatalf("kubectl get: exit %d, stderr %q", want.code, want.errOut)
			}
			if got := strings.TrimPrefix(r.Out.String(), first); got != "\n"+want.out {
				t.Errorf("after the pod was deleted, query -w printed %q; want an empty line then kubectl get's %q", got, want.out)
			}
		})
	}
}
