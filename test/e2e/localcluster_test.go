package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocalCluster drives the tool behind `make cluster-up` and
// `make cluster-down`: up starts a ready cluster and writes a kubeconfig with
// an admin and an unprivileged context, a second up is a no-op, down stops
// exactly those processes.
func TestLocalCluster(t *testing.T) {
	tool := filepath.Join(cluster.BinDir, "localcluster")
	if _, err := os.Stat(tool); err != nil {
		t.Fatalf("%s is missing: run 'make controlplane'", tool)
	}
	dir := filepath.Join(t.TempDir(), "cluster")
	lc := func(args ...string) (string, error) {
		out, err := exec.Command(tool, append(args, "-bin", cluster.BinDir, "-dir", dir)...).CombinedOutput()
		return string(out), err
	}
	out, err := lc("up")
	if err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = lc("down") })
	kubeconfig := strings.TrimSpace(out)
	if kubeconfig != filepath.Join(dir, "kubeconfig") {
		t.Fatalf("up printed %q, want the kubeconfig path", kubeconfig)
	}
	pids := map[string]string{}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".pid"))
		if err != nil {
			t.Fatal(err)
		}
		pids[name] = string(b)
	}

	kubectl := func(args ...string) (string, error) {
		out, err := exec.Command(filepath.Join(cluster.BinDir, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := kubectl("create", "namespace", "lc"); err != nil {
		t.Fatalf("admin create namespace: %v\n%s", err, out)
	}
	if out, err := kubectl("get", "namespace", "lc", "-o", "name"); err != nil || strings.TrimSpace(out) != "namespace/lc" {
		t.Fatalf("admin get namespace: %v\n%s", err, out)
	}
	if out, err := kubectl("--context", "local-unprivileged", "get", "pods"); err == nil || !strings.Contains(out, `User "unprivileged" cannot list resource "pods"`) {
		t.Fatalf("unprivileged get pods: err=%v\n%s\nwant forbidden", err, out)
	}

	if out, err := lc("up"); err != nil || strings.TrimSpace(out) != kubeconfig {
		t.Fatalf("second up: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "kube-apiserver.pid")); string(b) != pids["kube-apiserver"] {
		t.Fatalf("second up restarted kube-apiserver (pid %s, was %s)", b, pids["kube-apiserver"])
	}
	if out, err := lc("status"); err != nil || !strings.Contains(out, "ready; KUBECONFIG=") {
		t.Fatalf("status: %v\n%s", err, out)
	}

	if out, err := lc("down"); err != nil {
		t.Fatalf("down: %v\n%s", err, out)
	}
	for name, pid := range pids {
		if _, err := os.Stat("/proc/" + pid); err == nil {
			cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			if strings.Contains(string(cmdline), name) {
				t.Errorf("%s (pid %s) still runs after down", name, pid)
			}
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("down left %s behind", dir)
	}
	if out, err := lc("status"); err == nil {
		t.Errorf("status after down succeeded:\n%s", out)
	}
}
