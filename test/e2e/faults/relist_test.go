package faults_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestWatchRelist restarts the kube-apiserver under a running watch and,
// while it is down, deletes a pod in etcd, behind its back. The watch's
// reflector cannot resume its watch on the new server, lists again, and
// the watch prints a RELIST line with what the list found, then the
// deletion it missed; the unchanged pods are not replayed. Events after
// the relist come as before.
func TestWatchRelist(t *testing.T) {
	ns := cluster.NewNamespace(t, "relist")
	a := cluster.CreatePod(t, ns, "a", nil)
	b := cluster.CreatePod(t, ns, "b", nil)
	c := cluster.CreatePod(t, ns, "c", nil)
	w := cluster.StartPlugin(t, "watch", "pods", "-n", ns)
	w.WaitLines(t, 3)

	err := cluster.RestartAPIServer(func() error {
		return cluster.EtcdDelete(context.Background(), "/registry/pods/"+ns+"/b")
	})
	if err != nil {
		t.Fatal(err)
	}
	// The reflector retries with a backoff of up to a few seconds.
	w.WaitLines(t, 5)
	d := cluster.CreatePod(t, ns, "d", nil)
	// Nothing else may come before the pod created last.
	cluster.CreatePod(t, ns, "last", nil)
	got := w.WaitLineContaining(t, " pod "+ns+"/last ")
	got = got[:len(got)-1]
	if code := w.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, w.ErrOut)
	}
	t.Logf("printed:\n%s", w.Out)
	// The initial list comes in no particular order: sort by what follows
	// the time.
	slices.SortFunc(got[:3], func(x, y string) int {
		return strings.Compare(x[strings.IndexByte(x, ' '):], y[strings.IndexByte(y, ' '):])
	})
	framework.CheckEventLines(t, got, []string{
		fmt.Sprintf("ADDED   pod %s/a %s", ns, a.ResourceVersion),
		fmt.Sprintf("ADDED   pod %s/b %s", ns, b.ResourceVersion),
		fmt.Sprintf("ADDED   pod %s/c %s", ns, c.ResourceVersion),
		"RELIST  pod listed=2 added=0 changed=0 removed=1",
		fmt.Sprintf("DELETED (missed) pod %s/b %s", ns, b.ResourceVersion),
		fmt.Sprintf("ADDED   pod %s/d %s", ns, d.ResourceVersion),
	})
	if strings.Contains(w.ErrOut.String(), "error") {
		t.Errorf("stderr:\n%s", w.ErrOut)
	}
}
