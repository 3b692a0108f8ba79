package node

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

// memoryLimit and memoryRequest are kube-prometheus' figures for
// kube-state-metrics, which deploy/kube-prometheus ships for the image in
// its place, with GOMEMLIMIT set to the limit.
const memoryLimit, memoryRequest = "250Mi", "190Mi"

// TestMemoryLimitThousandsOfPods runs the chart in kube-state-metrics mode
// under deploy/kube-prometheus' memory limit, GOMEMLIMIT following it, on a
// cluster holding a workload of 3,000 pods beside the real node (pods bound
// to nodes without a kubelet, a few left unscheduled), and checks that the
// exporter becomes Ready, serves kube_pod_info for every pod the API server
// holds, and is never OOM-killed nor restarted. Its peak memory is read
// from its container's cgroup and logged against the limit.
func TestMemoryLimitThousandsOfPods(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "memory")
	t.Cleanup(func() { _ = cluster.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}) })
	spec := loadBesideNode(t, workload.Spec{Pods: 3000, Prefix: ns + "-", Concurrency: 8})
	var want int
	for i := range spec.Namespaces {
		pods, err := cluster.Client.CoreV1().Pods(spec.NamespaceName(i)).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want += len(pods.Items)
	}
	if want < spec.Pods {
		t.Fatalf("the API server holds %d pods of the workload, want %d", want, spec.Pods)
	}
	defer checkPlacement(t, spec)

	vals := framework.MergeValues(dropInValues(), map[string]any{
		"resources": map[string]any{
			"requests": map[string]any{"cpu": "10m", "memory": memoryRequest},
			"limits":   map[string]any{"memory": memoryLimit},
		},
		"env": []any{map[string]any{
			"name":      "GOMEMLIMIT",
			"valueFrom": map[string]any{"resourceFieldRef": map[string]any{"resource": "limits.memory"}},
		}},
	})
	rel := cluster.HelmInstall(t, "memory", ns, vals)
	t.Cleanup(func() { cluster.HelmUninstall(t, rel.Name, ns) })
	pods, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + rel.Name})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("want the exporter's one pod: %v, %v", pods, err)
	}
	pod := pods.Items[0]
	if pod.Spec.NodeName != framework.NodeName || pod.Status.PodIP == "" {
		t.Fatalf("pod %s runs on %q at %q", pod.Name, pod.Spec.NodeName, pod.Status.PodIP)
	}

	token := cluster.ServiceAccountToken(t, ns, "scraper", prometheusRules...)
	namespaces := map[string]bool{}
	for i := range spec.Namespaces {
		namespaces[spec.NamespaceName(i)] = true
	}
	url := fmt.Sprintf("http://%s:8080/metrics", pod.Status.PodIP)
	var got int
	framework.Eventually(t, fmt.Sprintf("/metrics has kube_pod_info for the %d pods of the workload", want), func() bool {
		got, err = countPodInfo(url, token, namespaces)
		if err != nil {
			t.Log(err)
		}
		return got == want
	})

	// The container ran through it all: no restart, no OOM kill.
	p, err := cluster.Client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Status.ContainerStatuses) != 1 {
		t.Fatalf("pod %s has %d container statuses, want 1", p.Name, len(p.Status.ContainerStatuses))
	}
	cs := p.Status.ContainerStatuses[0]
	if cs.RestartCount != 0 || cs.LastTerminationState.Terminated != nil || cs.State.Running == nil || !cs.Ready {
		t.Errorf("container %s: restarts %d, last state %+v, state %+v, ready %v; want running and ready since it started",
			cs.Name, cs.RestartCount, cs.LastTerminationState.Terminated, cs.State, cs.Ready)
	}
	limit := p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
	if want := resource.MustParse(memoryLimit); limit.Cmp(want) != 0 {
		t.Fatalf("the container's memory limit is %s, want %s", limit.String(), memoryLimit)
	}

	// What the kernel saw: the container's cgroup (v1) under the pod's QoS
	// class, its limit the container's, and the most it ever used.
	dir := containerCgroup(t, p, cs)
	limitFile, peakFile := "memory.limit_in_bytes", "memory.max_usage_in_bytes"
	if cgroupV2() {
		limitFile, peakFile = "memory.max", "memory.peak"
	}
	if n := cgroupValue(t, dir, limitFile); n != limit.Value() {
		t.Errorf("the cgroup's memory limit is %d bytes, want the container's %d", n, limit.Value())
	}
	peak := cgroupValue(t, dir, peakFile)
	if oom := oomKills(t, dir); oom != 0 {
		t.Errorf("the cgroup counts %d OOM kills", oom)
	}
	t.Logf("%d pods of the workload reported; memory limit %s (%d bytes), GOMEMLIMIT %s, peak usage %.1f MiB (%.0f%% of the limit), from %s",
		got, limit.String(), limit.Value(), goMemLimit(dir), float64(peak)/(1<<20), 100*float64(peak)/float64(limit.Value()), dir)
}

// loadBesideNode loads the workload of spec (Prefix set to names of the
// test's own) beside the real node: its pods name a scheduler that does
// not run, so that the few it leaves unscheduled are never placed on the
// node, its nodes are tainted so that no other pod is placed on them
// (none runs a kubelet), and its deployments are paused, so that the
// deployment controller makes no pods for them. Its namespaces, nodes and
// the Database CRD, if it created it, are deleted when the test ends (the
// CRD waited for until it is gone). It returns spec with its defaults.
func loadBesideNode(t *testing.T, spec workload.Spec) workload.Spec {
	t.Helper()
	ctx := context.Background()
	spec.SchedulerName = spec.Prefix + "no-scheduler"
	spec.NodeTaints = []corev1.Taint{{Key: "kubectl-informer.io/no-kubelet", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	spec.PausedDeployments = true
	spec = spec.Default()

	ext, err := apiextensionsclient.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	crd := workload.DatabaseCRD().Name
	_, err = crds.Get(ctx, crd, metav1.GetOptions{})
	createdCRD := apierrors.IsNotFound(err)
	t.Cleanup(func() {
		// Pods bound to a node without a kubelet are deleted at once: none
		// would confirm their end.
		force := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
		for i := range spec.Namespaces {
			ns := spec.NamespaceName(i)
			if err := cluster.Client.CoreV1().Pods(ns).DeleteCollection(ctx, force, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting the pods of %s: %v", ns, err)
			}
			if err := cluster.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting namespace %s: %v", ns, err)
			}
		}
		for i := range spec.Nodes {
			if err := cluster.Client.CoreV1().Nodes().Delete(ctx, spec.NodeName(i), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting node %s: %v", spec.NodeName(i), err)
			}
		}
		if createdCRD {
			// Gone before the next workload loads: one that found it
			// still being deleted would create Databases of no type.
			if err := crds.Delete(ctx, crd, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting the CRD %s: %v", crd, err)
			}
			framework.Eventually(t, "the CRD "+crd+" is gone", func() bool {
				_, err := crds.Get(ctx, crd, metav1.GetOptions{})
				return apierrors.IsNotFound(err)
			})
		}
	})
	lctx, cancel := context.WithTimeout(ctx, 10*framework.HangTimeout)
	defer cancel()
	sum, err := workload.Load(lctx, cluster.Config, spec, nil)
	if err != nil {
		t.Fatalf("loading the workload: %v", err)
	}
	t.Logf("workload: %s", sum)
	return spec
}

// checkPlacement checks that no pod but the workload's is bound to the
// nodes of the workload spec, and none of the workload's to the real node.
func checkPlacement(t *testing.T, spec workload.Spec) {
	t.Helper()
	namespaces := map[string]bool{}
	for i := range spec.Namespaces {
		ns := spec.NamespaceName(i)
		namespaces[ns] = true
		pods, err := cluster.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + framework.NodeName})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			t.Errorf("pod %s/%s of the workload was placed on the node %s", p.Namespace, p.Name, framework.NodeName)
		}
	}
	for i := range spec.Nodes {
		pods, err := cluster.Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + spec.NodeName(i)})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if !namespaces[p.Namespace] {
				t.Errorf("pod %s/%s was placed on %s, a node of the workload where no kubelet runs", p.Namespace, p.Name, spec.NodeName(i))
			}
		}
	}
}

// podInfoNamespace finds the namespace label of a series.
var podInfoNamespace = regexp.MustCompile(`[{,]namespace="([^"]*)"`)

// countPodInfo scrapes url with token and counts the kube_pod_info series
// of pods in namespaces.
func countPodInfo(url, token string, namespaces map[string]bool) (int, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	n := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("kube_pod_info{")) {
			continue
		}
		if m := podInfoNamespace.FindSubmatch(line); m != nil && namespaces[string(m[1])] {
			n++
		}
	}
	return n, sc.Err()
}

// containerCgroup is the memory cgroup (v1, cgroupfs driver) of the
// container cs of pod p on the machine.
func containerCgroup(t *testing.T, p *corev1.Pod, cs corev1.ContainerStatus) string {
	t.Helper()
	id, ok := strings.CutPrefix(cs.ContainerID, "containerd://")
	if !ok {
		t.Fatalf("container ID %q is not containerd's", cs.ContainerID)
	}
	qos := map[corev1.PodQOSClass]string{corev1.PodQOSGuaranteed: "", corev1.PodQOSBurstable: "burstable", corev1.PodQOSBestEffort: "besteffort"}[p.Status.QOSClass]
	root := "/sys/fs/cgroup/memory/kubepods"
	if cgroupV2() {
		root = "/sys/fs/cgroup/kubepods"
	}
	dir := filepath.Join(root, qos, "pod"+string(p.UID), id)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the container's cgroup: %v", err)
	}
	return dir
}

// cgroupValue reads the number in file of the cgroup dir.
func cgroupValue(t *testing.T, dir, file string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("%s/%s: %v", dir, file, err)
	}
	return n
}

// oomKills is the oom_kill count of the cgroup dir: in memory.oom_control
// (v1) or memory.events (v2).
func oomKills(t *testing.T, dir string) int64 {
	t.Helper()
	file := "memory.oom_control"
	if cgroupV2() {
		file = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(dir, file)) //nolint:gosec // G304: a cgroup's file
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "oom_kill "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("%s/%s: %q", dir, file, l)
			}
			return n
		}
	}
	t.Logf("%s/%s counts no OOM kills (an older kernel): %q", dir, file, b)
	return 0
}

// cgroupV2 reports whether the machine's cgroups are one unified (v2)
// hierarchy rather than one per controller (v1).
func cgroupV2() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err == nil
}

// goMemLimit is the GOMEMLIMIT in the environment of the cgroup dir's
// first process, as the container runs it.
func goMemLimit(dir string) string {
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return err.Error()
	}
	pid, _, _ := strings.Cut(strings.TrimSpace(string(procs)), "\n")
	env, err := os.ReadFile(filepath.Join("/proc", pid, "environ"))
	if err != nil {
		return err.Error()
	}
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, "GOMEMLIMIT="); ok {
			return v
		}
	}
	return "unset"
}
