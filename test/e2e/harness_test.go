package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// TestHarnessIsReal creates a namespace and a pod through the API, lists them
// back, and checks that the unprivileged user is forbidden.
func TestHarnessIsReal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), framework.HangTimeout)
	defer cancel()
	cs := cluster.Client

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "harness"}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "harness", Labels: map[string]string{"app": "hello"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/hello:1"}}},
	}
	if _, err := cs.CoreV1().Pods("harness").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod: %v", err)
	}

	pods, err := cs.CoreV1().Pods("harness").List(ctx, metav1.ListOptions{LabelSelector: "app=hello"})
	if err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Name != "hello" || pods.Items[0].UID == "" {
		t.Fatalf("listed %d pods %v, want the one pod hello with a UID", len(pods.Items), pods.Items)
	}
	got, err := cs.CoreV1().Namespaces().Get(ctx, "harness", metav1.GetOptions{})
	if err != nil || got.Status.Phase != corev1.NamespaceActive {
		t.Fatalf("namespace harness: %v, phase %q; want Active", err, got.Status.Phase)
	}

	nobody, err := kubernetes.NewForConfig(cluster.UnprivilegedConfig)
	if err != nil {
		t.Fatal(err)
	}
	_, err = nobody.CoreV1().Pods("harness").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("unprivileged list of pods: got %v, want Forbidden", err)
	}

	out, err := cluster.Kubectl("--kubeconfig", cluster.UnprivilegedKubeconfig, "get", "pods", "-n", "harness")
	if err == nil || !strings.Contains(out, "forbidden") {
		t.Fatalf("kubectl as the unprivileged user: err=%v, output %q; want a forbidden error", err, out)
	}
}

// TestWorkloadLoads loads a small workload and checks what the API holds
// against what the loader reports; a second load creates nothing.
func TestWorkloadLoads(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), framework.HangTimeout)
	defer cancel()
	spec := workload.Spec{Namespaces: 3, Nodes: 4, Pods: 60, PodsPerDeployment: 7}
	sum, err := workload.Load(ctx, cluster.Config, spec, nil)
	if err != nil {
		t.Fatalf("loading: %v", err)
	}
	if sum.Pods != 60 || sum.Nodes != 4 || sum.Namespaces != 3 || sum.Deployments != 9 || sum.CustomResources != 6 {
		t.Fatalf("created %+v; want 60 pods, 4 nodes, 3 namespaces, 9 deployments, 6 databases", sum)
	}

	pods, err := cluster.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: "pod-template-hash"})
	if err != nil {
		t.Fatal(err)
	}
	phases := map[corev1.PodPhase]int{}
	for _, p := range pods.Items {
		phases[p.Status.Phase]++
	}
	want := spec.PodPhases()
	for ph, n := range want {
		if phases[ph] != n {
			t.Errorf("pods in phase %s: API has %d, loader wrote %d", ph, phases[ph], n)
		}
	}
	nodes, err := cluster.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "topology.kubernetes.io/zone=zone-a"})
	if err != nil || len(nodes.Items) != 2 {
		t.Fatalf("nodes in zone-a: %v, %d; want 2", err, len(nodes.Items))
	}
	out, err := cluster.Kubectl("get", "db", "-A", "-o", "name")
	if err != nil || strings.Count(out, "database.demo.kubectl-informer.io/") != 6 {
		t.Fatalf("kubectl get db: %v\n%s\nwant 6 databases by short name", err, out)
	}

	again, err := workload.Load(ctx, cluster.Config, spec, nil)
	if err != nil {
		t.Fatalf("second load: %v", err)
	}
	if again.Pods != 0 || again.Existing != 60+4+3+9+6 {
		t.Fatalf("second load %+v; want nothing created and 82 existing", again)
	}
}

// TestPluginThroughKubectl puts the host release's archive, unpacked, on
// PATH and checks that kubectl finds the plugin and runs "kubectl informer
// version" through it.
func TestPluginThroughKubectl(t *testing.T) {
	_, dir := hostRelease(t)
	kubectl := filepath.Join(cluster.BinDir, "kubectl")
	env := append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))

	list := exec.Command(kubectl, "plugin", "list")
	list.Env = env
	out, _ := list.CombinedOutput() // exits non-zero when other plugins on PATH have warnings
	if !strings.Contains(string(out), filepath.Join(dir, exeName("kubectl-informer"))) {
		t.Fatalf("kubectl plugin list does not show the plugin:\n%s", out)
	}

	run := exec.Command(kubectl, "informer", "version")
	run.Env = env
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl informer version: %v\n%s", err, out)
	}
	want := "kubectl-informer " + releaseVersion + " (commit " + releaseCommit + ", " + runtime.Version()
	if !strings.HasPrefix(string(out), want) {
		t.Fatalf("kubectl informer version printed %q; want prefix %q", out, want)
	}
}
