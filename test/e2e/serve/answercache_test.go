package serve_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestAnswerCache: the server keeps the -o json text of the objects it
// answers (--answer-cache), and an answer given after an object changed or
// went is that of a local query all the same, once the server's cache
// holds the change; with a cache too small for the answer, answers are
// whole too, and the server says once that the cache is full.
func TestAnswerCache(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "answers")
	zero := int64(0)
	t.Cleanup(func() { // the other tests' answers count pods
		_ = cluster.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	})
	for i := range 3 {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: ns, Labels: map[string]string{"state": "before"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
		}
		if _, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s := startServer(t)
	jsonArgs := []string{"pods", "-n", ns, "-o", "json"}
	// matches is the server's answer checked against a local query's.
	matches := func(what string, args ...string) result {
		t.Helper()
		remote := s.query(t, cluster.Kubeconfig, args...)
		if local := localQuery(t, args...); !sameAnswer(local, remote, -1) || local.code != 0 {
			t.Fatalf("%s: query %s: --query-server differs from the local query\n%s", what, strings.Join(args, " "), diff("local", local, "--query-server", remote))
		}
		return remote
	}
	// holds waits until the server's cache answers want to --where.
	holds := func(where, want string) {
		t.Helper()
		framework.Eventually(t, fmt.Sprintf("the server answers %q to --where %s", want, where), func() bool {
			r := s.query(t, cluster.Kubeconfig, "pods", "-n", ns, "--where", where, "-o", "name")
			return r.code == 0 && r.out == want
		})
	}
	holds(`object.metadata.labels.state == "before"`, "pod/p0\npod/p1\npod/p2\n")
	for round := range 2 { // the first keeps the texts, the second writes them
		matches(fmt.Sprintf("answer %d", round), jsonArgs...)
	}
	matches("several resources", "deployments,pods", "-n", ns, "-o", "json")

	patch := []byte(`{"metadata":{"labels":{"state":"after"}}}`)
	changed, err := cluster.Client.CoreV1().Pods(ns).Patch(ctx, "p0", types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holds(`object.metadata.resourceVersion == "`+changed.ResourceVersion+`"`, "pod/p0\n")
	if r := matches("after a change", jsonArgs...); !strings.Contains(r.out, `"state": "after"`) {
		t.Fatalf("the answer after p0 changed does not hold its new label:\n%s", r.out)
	}
	if err := cluster.Client.CoreV1().Pods(ns).Delete(ctx, "p1", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	holds("true", "pod/p0\npod/p2\n")
	if r := matches("after a deletion", jsonArgs...); strings.Contains(r.out, `"name": "p1"`) {
		t.Fatalf("the answer after p1 was deleted still holds it:\n%s", r.out)
	}

	small := startServer(t, "--answer-cache", "4Ki")
	for round := range 2 {
		remote := small.query(t, cluster.Kubeconfig, jsonArgs...)
		if local := localQuery(t, jsonArgs...); !sameAnswer(local, remote, -1) {
			t.Fatalf("answer %d of a server with a small cache differs from the local query\n%s", round, diff("local", local, "--query-server", remote))
		}
	}
	if code := small.run.Stop(t); code != 0 {
		t.Fatalf("serve exited %d\n%s", code, small.run.ErrOut)
	}
	full := 0
	for _, l := range framework.Lines(small.run.ErrOut.String()) {
		if strings.Contains(l, "the answer cache is full") && strings.Contains(l, "--answer-cache") {
			full++
		}
	}
	if full != 1 {
		t.Errorf("the server said %d times that its answer cache is full, want once:\n%s", full, small.run.ErrOut)
	}
}
