package query_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-informer/kubectl-informer/internal/kubeconfigs"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestWatchDenied checks that a user allowed to list pods but not to watch
// them is told so by the commands that watch, which end with exit code 1
// as kubectl get -w does, with the API server's message kubectl prints and
// a kubectl auth can-i watch command that answers "no" for that user.
func TestWatchDenied(t *testing.T) {
	ns := cluster.NewNamespace(t, "watch-denied")
	cluster.CreatePod(t, ns, "p1", nil)
	kc, _ := cluster.ServiceAccountKubeconfig(t, ns, "lister", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "get"}})

	// kubectl's own answer: the list, then the watch refused.
	ctx, cancel := context.WithTimeout(context.Background(), framework.HangTimeout)
	defer cancel()
	kubectl := exec.CommandContext(ctx, filepath.Join(cluster.BinDir, "kubectl"), "--kubeconfig", kc, "get", "pods", "-n", ns, "-w")
	var stderr strings.Builder
	kubectl.Stderr = &stderr
	if err := kubectl.Run(); err == nil {
		t.Fatalf("kubectl get -w succeeded; stderr %q", stderr.String())
	}
	msg, ok := strings.CutPrefix(strings.TrimSpace(stderr.String()), "Error from server (Forbidden): ")
	if !ok || !strings.Contains(msg, `cannot watch resource "pods"`) {
		t.Fatalf("kubectl get -w said %q, want a refused watch", stderr.String())
	}
	raw, err := clientcmd.LoadFromFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	canI := "kubectl auth can-i watch pods -n " + ns + " --kubeconfig " + kc + " --context " + raw.CurrentContext

	for _, args := range [][]string{{"query", "-w"}, {"watch"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), framework.HangTimeout)
			defer cancel()
			code, _, errOut := framework.RunPlugin(ctx, nil, append(args, "--kubeconfig", kc, "pods", "-n", ns, "--cache-dir", t.TempDir())...)
			if ctx.Err() != nil {
				t.Fatalf("still watching after %s; stderr %q", framework.HangTimeout, errOut)
			}
			if code != 1 {
				t.Errorf("exit %d, want 1; stderr %q", code, errOut)
			}
			if !strings.HasPrefix(errOut, "error: "+msg+"\n") {
				t.Errorf("stderr %q, want it to start with kubectl's message %q", errOut, msg)
			}
			if !strings.Contains(errOut, "(check with "+canI+")") {
				t.Errorf("stderr %q, want the hint %q", errOut, canI)
			}
			checkCanI(t, canI, "no")
		})
	}

	// Over two contexts, the cluster whose watch is denied is named in a
	// warning, with its hint, and the other's answer goes on following its
	// cluster; the end says that not every cluster was followed (exit 3).
	t.Run("query -w over two contexts", func(t *testing.T) {
		two := filepath.Join(t.TempDir(), "two.kubeconfig")
		if err := kubeconfigs.Merge(two, []string{cluster.Kubeconfig, kc}, []string{"admin", "lister"}); err != nil {
			t.Fatal(err)
		}
		r := cluster.StartPlugin(t, "query", "-w", "--kubeconfig", two, "--context", "admin,lister", "pods", "-n", ns, "-o", "name", "--cache-dir", t.TempDir())
		framework.Eventually(t, "the warning naming the cluster whose watch is denied", func() bool {
			return strings.Contains(r.ErrOut.String(), `warning: cluster "lister": `+msg)
		})
		if want := "(check with kubectl auth can-i watch pods -n " + ns + " --kubeconfig " + two + " --context lister)"; !strings.Contains(r.ErrOut.String(), want) {
			t.Errorf("stderr %q, want the hint %q", r.ErrOut.String(), want)
		}
		cluster.CreatePod(t, ns, "p2", nil)
		framework.Eventually(t, "the admin's cluster's new pod in the answer", func() bool {
			return strings.Contains(r.Out.String(), "pod/p2")
		})
		if code := r.Stop(t); code != 3 {
			t.Errorf("exit %d after Ctrl-C, want 3; stderr %q", code, r.ErrOut.String())
		}
	})
}
