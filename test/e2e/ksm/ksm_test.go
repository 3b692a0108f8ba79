package ksm_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// createConfigMaps creates n ConfigMaps in ns and returns their names.
func createConfigMaps(t *testing.T, ns string, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%02d", i)}}
		if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		names = append(names, cm.Name)
	}
	return names
}

// staticShard returns the ConfigMaps of ns that export serves as shard
// index of total (--shard, --total-shards).
func staticShard(t *testing.T, ns string, index, total int) []string {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	r := cluster.StartPlugin(t, "export", "--profile", "kube-state-metrics", "--resources", "configmaps", "--namespaces", ns,
		"--shard", strconv.Itoa(index), "--total-shards", strconv.Itoa(total), "--web.listen-address", addr)
	defer r.Stop(t)
	framework.WaitRunReady(t, r, "http://"+addr)
	return labelValues(framework.Scrape(t, "http://"+addr), "kube_configmap_info", ns, "configmap")
}

// TestAutoShard checks --pod and --pod-namespace: the shard is the pod's
// ordinal in the StatefulSet that controls it, of as many shards as it has
// replicas, and follows its replicas: the ConfigMaps served are those the
// static shard of the same numbers serves, before and after scaling from 2
// to 3.
func TestAutoShard(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "autoshard")
	// Going from 2 shards to 3, the jump hash moves each object of shard 1
	// to shard 2 with a chance of 1/3 (see exporter.Shard), so shard 1 of
	// 2 and of 3 are the same set with a chance of (5/6)^n for n objects:
	// about one run in eighty with 24, one in 500,000 with 72.
	createConfigMaps(t, ns, 72)
	labels := map[string]string{"app": "ksm"}
	ss := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ksm"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](2), ServiceName: "ksm",
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "ksm", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
	ss, err := cluster.Client.AppsV1().StatefulSets(ns).Create(ctx, ss, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ksm-1", Labels: labels, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "StatefulSet", Name: ss.Name, UID: ss.UID, Controller: ptr.To(true),
		}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ksm", Image: "registry.k8s.io/pause:3.10"}}},
	}
	if _, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	of2, of3 := staticShard(t, ns, 1, 2), staticShard(t, ns, 1, 3)
	if slices.Equal(of2, of3) || len(of2) == 0 || len(of3) == 0 {
		t.Fatalf("shard 1 of 2 (%v) and of 3 (%v) must differ and hold objects for this test to tell them apart", of2, of3)
	}

	p := startKSM(t, nil, "--pod=ksm-1", "--pod-namespace="+ns, "--resources=configmaps", "--namespaces="+ns,
		"--shard=0", "--total-shards=1")
	p.waitServed(t, p.url, "kube_configmap_info", ns, "configmap", of2)

	ss, err = cluster.Client.AppsV1().StatefulSets(ns).Get(ctx, ss.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ss.Spec.Replicas = ptr.To[int32](3)
	if _, err := cluster.Client.AppsV1().StatefulSets(ns).Update(ctx, ss, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.waitServed(t, p.url, "kube_configmap_info", ns, "configmap", of3)

	// A pod that no StatefulSet controls ends the command, naming why.
	if _, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "alone"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "registry.k8s.io/pause:3.10"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	alone := startKSM(t, nil, "--pod=alone", "--pod-namespace="+ns, "--resources=configmaps", "--namespaces="+ns)
	err = <-alone.done
	alone.done <- err
	if code := alone.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(alone.stderr.String(), "controlled by no StatefulSet") {
		t.Errorf("a pod of no StatefulSet: exit %d, want 1 and an error naming it\n%s", code, alone.stderr)
	}
}

// TestNodeSelection checks --node and --track-unscheduled-pods: the pods
// served are those of the node, or of no node, by spec.nodeName.
func TestNodeSelection(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "node")
	for name, node := range map[string]string{"a-on-n1": "n1", "b-on-n1": "n1", "c-on-n2": "n2", "d-nowhere": ""} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "a", Image: "registry.k8s.io/pause:3.10"}}},
		}
		if _, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	onN1 := startKSM(t, nil, "--node=n1", "--resources=pods", "--namespaces="+ns)
	unscheduled := startKSM(t, nil, "--track-unscheduled-pods", "--resources=pods", "--namespaces="+ns)
	onN1.waitServed(t, onN1.url, "kube_pod_info", ns, "pod", []string{"a-on-n1", "b-on-n1"})
	unscheduled.waitServed(t, unscheduled.url, "kube_pod_info", ns, "pod", []string{"d-nowhere"})
	// A pod scheduled later arrives through the watch of its node's pods.
	cluster.CreatePod(t, ns, "e-later", nil)
	unscheduled.waitServed(t, unscheduled.url, "kube_pod_info", ns, "pod", []string{"d-nowhere", "e-later"})
}

// klogLine matches a line klog writes: severity, date, time.
var klogLine = regexp.MustCompile(`(?m)^[IWE]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ .*config loaded`)

// TestOptionsFile checks --config: the file's keys override the flags; a
// change of the file restarts with it; and with --continue-without-config
// a missing file is picked up once it appears. The logs are klog's.
func TestOptionsFile(t *testing.T) {
	ns1, ns2 := cluster.NewNamespace(t, "options"), cluster.NewNamespace(t, "options")
	in1, in2 := createConfigMaps(t, ns1, 2), createConfigMaps(t, ns2, 3)
	dir := t.TempDir()
	path := filepath.Join(dir, "options.yaml")
	filePort := freePort(t)
	write := func(path, content string) {
		t.Helper()
		// Written whole, then renamed into place, as a ConfigMap's file
		// changes.
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write(path, fmt.Sprintf("port: %d\nresources:\n  configmaps: {}\nnamespaces: [%s]\n", filePort, ns1))
	telemetryPort := freePort(t)
	p := startKSM(t, nil, "--config", path, "--port", strconv.Itoa(freePort(t)), "--telemetry-port", strconv.Itoa(telemetryPort), "--resources=secrets", "--namespaces="+ns2)
	fileURL := "http://127.0.0.1:" + strconv.Itoa(filePort)
	p.waitServed(t, fileURL, "kube_configmap_info", ns1, "configmap", in1)
	// The options file's hash and load are reported as kube-state-metrics
	// reports them, on the telemetry port.
	telemetryURL := "http://127.0.0.1:" + strconv.Itoa(telemetryPort)
	configSeries := func(family string) (float64, bool) {
		for _, m := range p.scrape(t, telemetryURL)[family].GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["type"] == "config" && labels["filename"] == path {
				return m.GetGauge().GetValue(), true
			}
		}
		return 0, false
	}
	var firstHash float64
	p.waitFor(t, func() bool {
		ok, found := configSeries("kube_state_metrics_last_config_reload_successful")
		hash, hashed := configSeries("kube_state_metrics_config_hash")
		firstHash = hash
		return found && ok == 1 && hashed && hash != 0
	}, func() string {
		return "no kube_state_metrics_config_hash and _last_config_reload_successful 1 for the options file"
	})
	if !klogLine.MatchString(p.stderr.String()) {
		t.Errorf("no klog line saying the config loaded:\n%s", p.stderr)
	}

	write(path, fmt.Sprintf("port: %d\nresources: [configmaps]\nnamespaces: [%s]\n", filePort, ns2))
	p.waitServed(t, fileURL, "kube_configmap_info", ns2, "configmap", in2)
	p.waitFor(t, func() bool {
		hash, hashed := configSeries("kube_state_metrics_config_hash")
		return hashed && hash != firstHash
	}, func() string { return "kube_state_metrics_config_hash did not change with the options file" })

	// A file that does not load leaves the running exporter as it is.
	write(path, "port: [\n")
	framework.Eventually(t, "the invalid options file logged", func() bool {
		return strings.Contains(p.stderr.String(), "the changed options do not load")
	})
	p.waitServed(t, fileURL, "kube_configmap_info", ns2, "configmap", in2)

	// --continue-without-config: the flags until the file appears.
	later := filepath.Join(dir, "later.yaml")
	laterPort := freePort(t)
	flagPort := freePort(t)
	q := startKSM(t, nil, "--config", later, "--continue-without-config", "--port", strconv.Itoa(flagPort), "--resources=configmaps", "--namespaces="+ns1)
	q.waitServed(t, "http://127.0.0.1:"+strconv.Itoa(flagPort), "kube_configmap_info", ns1, "configmap", in1)
	write(later, fmt.Sprintf("port: %d\nnamespaces: [%s]\n", laterPort, ns2))
	q.waitServed(t, "http://127.0.0.1:"+strconv.Itoa(laterPort), "kube_configmap_info", ns2, "configmap", in2)
}

// recordingProxy forwards every request to the cluster's API server as
// its admin and records the list requests of ConfigMaps in ns; the first
// watch of them fails with 500, which makes the informer list again.
type recordingProxy struct {
	mu      sync.Mutex // guards lists and watched
	lists   []url.Values
	watched bool
}

func (r *recordingProxy) listQueries() []url.Values {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lists)
}

func startProxy(t *testing.T, ns string) (*recordingProxy, string) {
	t.Helper()
	target, err := url.Parse(cluster.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = rt
	proxy.FlushInterval = -1
	rec := &recordingProxy{}
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == path {
			q := req.URL.Query()
			rec.mu.Lock()
			fail := false
			if q.Get("watch") == "true" || q.Get("watch") == "1" {
				fail, rec.watched = !rec.watched, true
			} else {
				rec.lists = append(rec.lists, q)
			}
			rec.mu.Unlock()
			if fail {
				http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the proxy fails the first watch","code":500}`, http.StatusInternalServerError)
				return
			}
		}
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: srv.URL}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	cfg.CurrentContext = "proxy"
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	return rec, kubeconfig
}

// TestListRequests checks --object-limit and --use-apiserver-cache in the
// requests the exporter sends, through a proxy that records them: lists
// ask for the limit and the exporter serves that many objects, and logs
// the cut; the list
// after a failed watch asks for resourceVersion=0 with
// --use-apiserver-cache, and for the version it had without.
func TestListRequests(t *testing.T) {
	ns := cluster.NewNamespace(t, "lists")
	createConfigMaps(t, ns, 10)
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("use-apiserver-cache=%v", cached), func(t *testing.T) {
			rec, kubeconfig := startProxy(t, ns)
			args := []string{"--kubeconfig", kubeconfig, "--object-limit=3", "--resources=configmaps", "--namespaces=" + ns}
			if cached {
				args = append(args, "--use-apiserver-cache")
			}
			p := startKSM(t, nil, args...)
			framework.Eventually(t, "two lists of configmaps (the second after the failed watch)", func() bool {
				return len(rec.listQueries()) >= 2
			})
			lists := rec.listQueries()
			for i, q := range lists {
				if q.Get("limit") != "3" {
					t.Errorf("list %d asked for limit %q, want 3: %v", i, q.Get("limit"), q)
				}
			}
			second := lists[1].Get("resourceVersion")
			switch {
			case cached && second != "0":
				t.Errorf("the list after the failed watch asked for resourceVersion %q, want 0 with --use-apiserver-cache", second)
			case !cached && (second == "0" || second == ""):
				t.Errorf("the list after the failed watch asked for resourceVersion %q, want the version listed last without --use-apiserver-cache", second)
			}
			framework.Eventually(t, "3 configmaps served", func() bool {
				mfs := p.scrape(t, p.url)
				return mfs != nil && len(labelValues(mfs, "kube_configmap_info", ns, "configmap")) == 3
			})
			// The cut is said once.
			framework.Eventually(t, "the cut logged", func() bool {
				return strings.Contains(p.stderr.String(), "cut at the object limit")
			})
		})
	}
}

// TestAutoGomemlimit checks --auto-gomemlimit: the process's soft memory
// limit, as its Go runtime reports it (go_gc_gomemlimit_bytes), is the
// ratio of the cgroup's memory limit or the system's memory; without the
// flag it is unset once the caches have synced, and an environment's
// GOMEMLIMIT stays.
func TestAutoGomemlimit(t *testing.T) {
	total := memoryLimit(t)
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want float64
	}{
		{"ratio 0.5", nil, []string{"--auto-gomemlimit", "--auto-gomemlimit-ratio=0.5"}, math.Floor(float64(total) * 0.5)},
		{"off", nil, nil, math.MaxInt64},
		{"GOMEMLIMIT wins", []string{"GOMEMLIMIT=123MiB"}, []string{"--auto-gomemlimit"}, 123 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The Go runtime's metrics are served on the telemetry port.
			telemetryPort := freePort(t)
			p := startKSM(t, tc.env, append(tc.args, "--resources=configmaps", "--namespaces=default", "--telemetry-port="+strconv.Itoa(telemetryPort))...)
			telemetryURL := "http://127.0.0.1:" + strconv.Itoa(telemetryPort)
			// Until the caches have synced, the exporter paces the
			// collector with a limit of its own when none is set; it
			// restores the limit then.
			got := math.NaN()
			p.waitFor(t, func() bool {
				mfs := p.scrape(t, telemetryURL)
				if mfs == nil || mfs["go_gc_gomemlimit_bytes"] == nil {
					return false
				}
				got = mfs["go_gc_gomemlimit_bytes"].GetMetric()[0].GetGauge().GetValue()
				return got == tc.want
			}, func() string {
				return fmt.Sprintf("go_gc_gomemlimit_bytes %v, want %v (of %d bytes)", got, tc.want, total)
			})
		})
	}
}

// memoryLimit is the memory limit of the test's cgroup (v2, then v1), or
// else the system's memory (MemTotal), in bytes: the processes it starts
// share them.
func memoryLimit(t *testing.T) uint64 {
	t.Helper()
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v < 1<<60 {
			return v
		}
		break
	}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb * 1024
		}
	}
	t.Fatal("no MemTotal in /proc/meminfo")
	return 0
}

// TestCustomResourceStateFileLater checks
// --continue-without-custom-resource-state-config-file: without the file
// the exporter serves the profile; once the file appears it restarts and
// serves its metrics too.
func TestCustomResourceStateFileLater(t *testing.T) {
	ns := cluster.NewNamespace(t, "crs")
	names := createConfigMaps(t, ns, 3)
	crs := filepath.Join(t.TempDir(), "crs.yaml")
	p := startKSM(t, nil, "--resources=configmaps", "--namespaces="+ns,
		"--custom-resource-state-config-file="+crs, "--continue-without-custom-resource-state-config-file")
	p.waitServed(t, p.url, "kube_configmap_info", ns, "configmap", names)
	if err := os.WriteFile(crs, []byte(`kind: CustomResourceStateMetrics
spec:
  resources:
    - groupVersionKind: {group: "", version: v1, kind: ConfigMap}
      metricNamePrefix: e2e_configmap
      labelsFromPath: {name: [metadata, name], namespace: [metadata, namespace]}
      metrics:
        - name: generation
          help: the generation of a ConfigMap
          each:
            type: Gauge
            gauge: {path: [metadata], valueFrom: [generation], nilIsZero: true}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	p.waitServed(t, p.url, "e2e_configmap_generation", ns, "name", names)
	p.waitServed(t, p.url, "kube_configmap_info", ns, "configmap", names)
}
