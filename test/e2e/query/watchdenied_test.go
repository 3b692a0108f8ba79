package query_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/tools/clientcmd"

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
}
