package deploy_test

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

func newEnv(t *testing.T) *indexers.Env {
	t.Helper()
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// load loads and compiles a config file as the exporter does.
func load(t *testing.T, path string) *exporter.Compiled {
	t.Helper()
	c, err := exporter.Load(path, newEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// programs returns every compiled expression of r.
func programs(r *exporter.CompiledResource) []*indexers.Program {
	var out []*indexers.Program
	for _, p := range r.Indexes {
		out = append(out, p)
	}
	for _, f := range r.Families {
		out = append(out, f.Labels...)
		for _, p := range []*indexers.Program{f.Value, f.Each} {
			if p != nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// configResources returns the resources a config file watches: those it
// configures and those its expressions read with get() or byIndex(). They
// must be written as plural resource names, qualified with their group
// outside the core group, as the ClusterRole needs them.
func configResources(t *testing.T, path string) []string {
	t.Helper()
	set := map[string]bool{}
	for _, r := range load(t, path).Resources {
		set[r.Config.Resource] = true
		for _, p := range programs(r) {
			for _, ref := range p.References() {
				set[ref.Resource] = true
			}
		}
	}
	return keys(set)
}

// examples returns the example config files.
func examples(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(cluster.Root, "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("%d example configs, want at least 3", len(files))
	}
	return files
}

// TestExamplesAreValid loads every example config with the exporter's own
// loader, which checks the schema, the metric and label names and the
// expressions, and checks what the examples promise on top: a HELP text for
// every family, and a name that says the family's type.
func TestExamplesAreValid(t *testing.T) {
	for _, path := range examples(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			c := load(t, path)
			families := 0
			for _, r := range c.Resources {
				for _, f := range r.Families {
					families++
					if strings.TrimSpace(f.Help) == "" {
						t.Errorf("metric %s: no help", f.Name)
					}
					if f.Type == exporter.TypeCounter && !strings.HasSuffix(f.Name, "_total") ||
						f.Type == exporter.TypeInfo && !strings.HasSuffix(f.Name, "_info") {
						t.Errorf("%s %s: the name must end with _%s", f.Type, f.Name, map[string]string{"counter": "total", "info": "info"}[f.Type])
					}
				}
			}
			if families == 0 {
				t.Error("no metric families")
			}
		})
	}
}

// TestKubeStateMetricsPods serves examples/kube-state-metrics-pods.yaml with
// the real exporter over pods like those of kube-state-metrics' own tests
// (internal/store/pod_test.go), written to the kube-apiserver (container
// names with "-" where the API server refuses "_"), and compares
// the series of their namespace with what kube-state-metrics exposes for
// those pods there. A pod deleted while its node is lost cannot be written
// as such, and is left out.
func TestKubeStateMetricsPods(t *testing.T) {
	ns := cluster.NewNamespace(t, "ksm")
	yes, no := true, false
	owner := func(kind, name string, controller *bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: "v1", Kind: kind, Name: name, UID: "00000000-0000-0000-0000-000000000001", Controller: controller}
	}
	container := corev1.Container{Name: "c", Image: "example.invalid/c"}
	pods := []*corev1.Pod{
		// No controller, host network, priority class.
		{
			ObjectMeta: metav1.ObjectMeta{Name: "pod1"},
			Spec: corev1.PodSpec{
				NodeName: "node1", PriorityClassName: "system-node-critical", HostNetwork: true,
				Containers: []corev1.Container{container},
			},
			Status: corev1.PodStatus{HostIP: "1.1.1.1", PodIP: "1.2.3.4", Phase: corev1.PodRunning},
		},
		// Controlled by a ReplicaSet, with an owner that is not the
		// controller listed first; three containers.
		{
			ObjectMeta: metav1.ObjectMeta{Name: "pod2", OwnerReferences: []metav1.OwnerReference{
				owner("ConfigMap", "not-controller", &no), owner("ReplicaSet", "rs-name", &yes),
			}},
			Spec: corev1.PodSpec{NodeName: "node2", Containers: []corev1.Container{
				{Name: "container2-1", Image: "example.invalid/c"},
				{Name: "container2-2", Image: "example.invalid/c"},
				{Name: "container2-3", Image: "example.invalid/c"},
			}},
			Status: corev1.PodStatus{HostIP: "1.1.1.1", PodIP: "2.3.4.5", Phase: corev1.PodPending,
				ContainerStatuses: []corev1.ContainerStatus{
					{Name: "container2-1", RestartCount: 0},
					{Name: "container2-2", RestartCount: 1},
					{Name: "container2-3", RestartCount: 42},
				}},
		},
		// An owner that is not its controller only: no controller.
		{
			ObjectMeta: metav1.ObjectMeta{Name: "pod3", OwnerReferences: []metav1.OwnerReference{owner("Node", "node3", nil)}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{container}},
			Status:     corev1.PodStatus{Phase: corev1.PodUnknown},
		},
		// No phase: no kube_pod_status_phase series.
		{
			ObjectMeta: metav1.ObjectMeta{Name: "pod5"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{container}},
			Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "init", RestartCount: 3},
			}},
		},
	}
	ctx := context.Background()
	uid := map[string]string{}
	for _, p := range pods {
		p.Namespace = ns
		status := p.Status
		created, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uid[p.Name] = string(created.UID)
		created.Status = status
		if _, err := cluster.Client.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		zero := int64(0)
		for _, p := range pods {
			_ = cluster.Client.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
	})

	phases := func(pod, phase string) []string {
		var out []string
		for _, p := range []string{"Failed", "Pending", "Running", "Succeeded", "Unknown"} {
			v := "0"
			if p == phase {
				v = "1"
			}
			out = append(out, `kube_pod_status_phase{namespace="`+ns+`",phase="`+p+`",pod="`+pod+`",uid="`+uid[pod]+`"} `+v)
		}
		return out
	}
	// kube-state-metrics' expectations for these pods, in their namespace
	// and with the UIDs the API server gave them.
	want := []string{
		`kube_pod_info{created_by_kind="",created_by_name="",host_ip="1.1.1.1",host_network="true",namespace="` + ns + `",node="node1",pod="pod1",pod_ip="1.2.3.4",priority_class="system-node-critical",uid="` + uid["pod1"] + `"} 1`,
		`kube_pod_info{created_by_kind="ReplicaSet",created_by_name="rs-name",host_ip="1.1.1.1",host_network="false",namespace="` + ns + `",node="node2",pod="pod2",pod_ip="2.3.4.5",priority_class="",uid="` + uid["pod2"] + `"} 1`,
		`kube_pod_info{created_by_kind="",created_by_name="",host_ip="",host_network="false",namespace="` + ns + `",node="",pod="pod3",pod_ip="",priority_class="",uid="` + uid["pod3"] + `"} 1`,
		`kube_pod_info{created_by_kind="",created_by_name="",host_ip="",host_network="false",namespace="` + ns + `",node="",pod="pod5",pod_ip="",priority_class="",uid="` + uid["pod5"] + `"} 1`,
		`kube_pod_container_status_restarts_total{container="container2-1",namespace="` + ns + `",pod="pod2",uid="` + uid["pod2"] + `"} 0`,
		`kube_pod_container_status_restarts_total{container="container2-2",namespace="` + ns + `",pod="pod2",uid="` + uid["pod2"] + `"} 1`,
		`kube_pod_container_status_restarts_total{container="container2-3",namespace="` + ns + `",pod="pod2",uid="` + uid["pod2"] + `"} 42`,
	}
	want = append(want, phases("pod1", "Running")...)
	want = append(want, phases("pod2", "Pending")...)
	want = append(want, phases("pod3", "Unknown")...)
	slices.Sort(want)

	url := serveExample(t, filepath.Join(cluster.Root, exampleFile))
	var got []string
	for deadline := time.Now().Add(framework.HangTimeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = scrapeNamespace(t, url, ns); slices.Equal(got, want) {
			return
		}
	}
	compareLines(t, got, want)
}

func compareLines(t *testing.T, got, want []string) {
	t.Helper()
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("unexpected: %s", l)
		}
	}
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("missing:    %s", l)
		}
	}
}

// TestTopologyExample serves examples/topology.yaml with the real exporter
// over nodes and pods the test creates, and checks the series of its own
// nodes, zones and namespace against counts and sums written out from
// those objects. Series of zone "" or node "" are cluster-wide (other
// tests' pods and nodes fall in them) and are not compared, but the
// unzoned node's own series are.
func TestTopologyExample(t *testing.T) {
	ns := cluster.NewNamespace(t, "topology")
	ctx := context.Background()
	zoneA, zoneB := ns+"-a", ns+"-b"
	n1, n2, n3, n4 := ns+"-n1", ns+"-n2", ns+"-n3", ns+"-n4"
	nodes := []struct {
		name, zone  string
		ready       corev1.ConditionStatus
		cpu, memory string
	}{
		{n1, zoneA, corev1.ConditionTrue, "4", "16Gi"},
		{n2, zoneA, corev1.ConditionFalse, "3500m", "8Gi"},
		{n3, "", corev1.ConditionTrue, "2", "4Gi"},
		{n4, zoneB, corev1.ConditionTrue, "1", "2Gi"},
	}
	for _, n := range nodes {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name}}
		if n.zone != "" {
			node.Labels = map[string]string{"topology.kubernetes.io/zone": n.zone}
		}
		created, err := cluster.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cluster.Client.CoreV1().Nodes().Delete(ctx, n.name, metav1.DeleteOptions{}) })
		created.Status = corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: n.ready}},
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse(n.cpu),
				corev1.ResourceMemory: resource.MustParse(n.memory),
			},
		}
		if _, err := cluster.Client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pods := []struct {
		name, node string
		phase      corev1.PodPhase
	}{
		{"a", n1, corev1.PodRunning},
		{"b", n1, corev1.PodRunning},
		{"c", n2, corev1.PodFailed},
		{"d", n3, corev1.PodRunning},
		{"e", "", corev1.PodPending},
		{"f", n4, corev1.PodSucceeded},
	}
	for _, p := range pods {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: ns},
			Spec: corev1.PodSpec{NodeName: p.node,
				Containers: []corev1.Container{{Name: "c", Image: "example.invalid/c"}}},
		}
		created, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		zero := int64(0)
		t.Cleanup(func() {
			_ = cluster.Client.CoreV1().Pods(ns).Delete(ctx, p.name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		})
		created.Status.Phase = p.phase
		if _, err := cluster.Client.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// Zone A: n1 (ready, 4 CPUs, 16Gi, pods a and b running) and n2 (not
	// ready, 3.5 CPUs, 8Gi, pod c failed). Zone B: n4 (ready, 1 CPU, 2Gi,
	// pod f succeeded). No zone: n3 (pod d running). Pod e is unscheduled.
	want := []string{
		`informer_nodes{ready="true",zone="` + zoneA + `"} 1`,
		`informer_nodes{ready="false",zone="` + zoneA + `"} 1`,
		`informer_nodes{ready="true",zone="` + zoneB + `"} 1`,
		`informer_node_allocatable_cpu_cores{zone="` + zoneA + `"} 7.5`,
		`informer_node_allocatable_cpu_cores{zone="` + zoneB + `"} 1`,
		`informer_node_allocatable_memory_bytes{zone="` + zoneA + `"} ` + framework.FormatValue(24<<30),
		`informer_node_allocatable_memory_bytes{zone="` + zoneB + `"} ` + framework.FormatValue(2<<30),
		`informer_node_pods{node="` + n1 + `",zone="` + zoneA + `"} 2`,
		`informer_node_pods{node="` + n2 + `",zone="` + zoneA + `"} 1`,
		`informer_node_pods{node="` + n3 + `",zone=""} 1`,
		`informer_node_pods{node="` + n4 + `",zone="` + zoneB + `"} 1`,
		`informer_pods{node="` + n1 + `",phase="Running"} 2`,
		`informer_pods{node="` + n2 + `",phase="Failed"} 1`,
		`informer_pods{node="` + n3 + `",phase="Running"} 1`,
		`informer_pods{node="` + n4 + `",phase="Succeeded"} 1`,
		`informer_pods_per_zone{phase="Running",zone="` + zoneA + `"} 2`,
		`informer_pods_per_zone{phase="Failed",zone="` + zoneA + `"} 1`,
		`informer_pods_per_zone{phase="Succeeded",zone="` + zoneB + `"} 1`,
		`informer_pod_zone_info{namespace="` + ns + `",node="` + n1 + `",pod="a",zone="` + zoneA + `"} 1`,
		`informer_pod_zone_info{namespace="` + ns + `",node="` + n1 + `",pod="b",zone="` + zoneA + `"} 1`,
		`informer_pod_zone_info{namespace="` + ns + `",node="` + n2 + `",pod="c",zone="` + zoneA + `"} 1`,
		`informer_pod_zone_info{namespace="` + ns + `",node="` + n3 + `",pod="d",zone=""} 1`,
		`informer_pod_zone_info{namespace="` + ns + `",node="",pod="e",zone=""} 1`,
		`informer_pod_zone_info{namespace="` + ns + `",node="` + n4 + `",pod="f",zone="` + zoneB + `"} 1`,
	}
	ours := func(labels map[string]string) bool {
		return labels["namespace"] == ns || strings.HasPrefix(labels["node"], ns+"-") || strings.HasPrefix(labels["zone"], ns+"-")
	}
	url := serveExample(t, filepath.Join(cluster.Root, "examples/topology.yaml"))
	waitForSeries(t, url, ours, want)
}

// TestDatabasesExample installs the demo workload's Database CRD
// (test/workload), creates Databases like those of the demo in a namespace
// of the test's own, serves examples/databases.yaml with the real exporter
// and checks its series against values written out from those Databases.
// No other test creates Databases, so the per-engine series are this
// test's alone.
func TestDatabasesExample(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), framework.HangTimeout)
	defer cancel()
	if err := cluster.InstallCRDForKubectl(ctx, workload.DatabaseCRD()); err != nil {
		t.Fatal(err)
	}
	ns := cluster.NewNamespace(t, "databases")
	client, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	dbs := client.Resource(workload.DatabaseResource).Namespace(ns)
	create := func(name, engine string, replicas, ready int64, phase, storage string) {
		spec := map[string]any{"engine": engine, "version": "1.0"}
		if replicas > 0 {
			spec["replicas"] = replicas
		}
		if storage != "" {
			spec["storage"] = storage
		}
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": workload.DatabaseResource.GroupVersion().String(),
			"kind":       "Database",
			"metadata":   map[string]any{"name": name, "namespace": ns},
			"spec":       spec,
		}}
		created, err := dbs.Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		status := map[string]any{"readyReplicas": ready}
		if phase != "" {
			status["phase"] = phase
		}
		created.Object["status"] = status
		if _, err := dbs.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("orders", "postgres", 3, 3, "Ready", "50Gi")
	create("carts", "redis", 2, 1, "Degraded", "10Gi")
	create("users", "postgres", 1, 0, "Provisioning", "200Gi")
	create("new", "mysql", 0, 0, "", "") // no spec.replicas, storage or phase
	t.Cleanup(func() { _ = dbs.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}) })

	in := func(db string) string { return `database="` + db + `",namespace="` + ns + `"` }
	want := []string{
		`informer_database_info{database="orders",engine="postgres",namespace="` + ns + `",phase="Ready",version="1.0"} 1`,
		`informer_database_info{database="carts",engine="redis",namespace="` + ns + `",phase="Degraded",version="1.0"} 1`,
		`informer_database_info{database="users",engine="postgres",namespace="` + ns + `",phase="Provisioning",version="1.0"} 1`,
		`informer_database_info{database="new",engine="mysql",namespace="` + ns + `",phase="",version="1.0"} 1`,
		`informer_database_spec_replicas{` + in("orders") + `} 3`,
		`informer_database_spec_replicas{` + in("carts") + `} 2`,
		`informer_database_spec_replicas{` + in("users") + `} 1`,
		`informer_database_status_ready_replicas{` + in("orders") + `} 3`,
		`informer_database_status_ready_replicas{` + in("carts") + `} 1`,
		`informer_database_status_ready_replicas{` + in("users") + `} 0`,
		`informer_database_status_ready_replicas{` + in("new") + `} 0`,
		`informer_database_spec_storage_bytes{` + in("orders") + `} ` + framework.FormatValue(50<<30),
		`informer_database_spec_storage_bytes{` + in("carts") + `} ` + framework.FormatValue(10<<30),
		`informer_database_spec_storage_bytes{` + in("users") + `} ` + framework.FormatValue(200<<30),
		// Per engine: postgres orders and users, redis carts, mysql new.
		`informer_databases{engine="postgres",phase="Ready"} 1`,
		`informer_databases{engine="postgres",phase="Provisioning"} 1`,
		`informer_databases{engine="redis",phase="Degraded"} 1`,
		`informer_databases{engine="mysql",phase=""} 1`,
		`informer_database_replicas_missing{engine="postgres"} 1`, // orders 3-3, users 1-0
		`informer_database_replicas_missing{engine="redis"} 1`,    // carts 2-1
		`informer_database_replicas_missing{engine="mysql"} 0`,    // new: no spec.replicas
		`informer_database_storage_bytes_max{engine="postgres"} ` + framework.FormatValue(200<<30),
		`informer_database_storage_bytes_max{engine="redis"} ` + framework.FormatValue(10<<30),
	}
	ours := func(labels map[string]string) bool {
		_, ns2 := labels["namespace"]
		return labels["namespace"] == ns || !ns2 && labels["engine"] != ""
	}
	url := serveExample(t, filepath.Join(cluster.Root, "examples/databases.yaml"))
	waitForSeries(t, url, ours, want)
}

// serveExample runs the real exporter on the test cluster with the example
// config at path and returns the URL of its handler.
func serveExample(t *testing.T, path string) string {
	t.Helper()
	_, url := cluster.ServeExporter(t, nil, exporter.Options{Sources: exporter.Sources{ConfigPath: path}})
	return url
}

// scrapeNamespace returns the series of /metrics at url whose namespace
// label is ns, as framework.SeriesLines writes them.
func scrapeNamespace(t *testing.T, url, ns string) []string {
	t.Helper()
	return scrape(t, url, func(labels map[string]string) bool { return labels["namespace"] == ns })
}

// scrape returns the series of /metrics at url whose labels keep accepts,
// as framework.SeriesLines writes them.
func scrape(t *testing.T, url string, keep func(labels map[string]string) bool) []string {
	t.Helper()
	return framework.SeriesLines(framework.Scrape(t, url), keep)
}

// waitForSeries scrapes url until the series keep accepts are want, and
// fails with the difference if they are not within a deadline that only
// catches a hang.
func waitForSeries(t *testing.T, url string, keep func(labels map[string]string) bool, want []string) {
	t.Helper()
	slices.Sort(want)
	var got []string
	for deadline := time.Now().Add(framework.HangTimeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = scrape(t, url, keep); slices.Equal(got, want) {
			return
		}
	}
	compareLines(t, got, want)
}

// TestDeploymentsExample serves examples/deployments.yaml with the real
// exporter over deployments created in a namespace of the test's own, and
// checks the series of that namespace against what the test computes from
// the deployments it wrote.
func TestDeploymentsExample(t *testing.T) {
	ns := cluster.NewNamespace(t, "examples")
	type want struct {
		name                string
		replicas, available int32
		condStatus, reason  string
	}
	deployments := []want{
		{"api", 3, 3, "True", "MinimumReplicasAvailable"},
		{"web", 2, 1, "False", "MinimumReplicasUnavailable"},
		{"batch", 4, 0, "", ""}, // no condition yet
	}
	ctx := context.Background()
	for _, w := range deployments {
		labels := map[string]string{"app": w.name}
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: w.name, Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Replicas: &w.replicas,
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.invalid/c"}}},
				},
			},
		}
		created, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status = appsv1.DeploymentStatus{
			Replicas: w.replicas, ReadyReplicas: w.available, AvailableReplicas: w.available,
			UnavailableReplicas: w.replicas - w.available,
		}
		if w.condStatus != "" {
			created.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionStatus(w.condStatus), Reason: w.reason}}
		}
		if _, err := cluster.Client.AppsV1().Deployments(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// What the example promises, computed from the deployments above.
	var expected []string
	degraded := 0
	for _, w := range deployments {
		labels := `deployment="` + w.name + `",namespace="` + ns + `"`
		expected = append(expected,
			`informer_deployment_spec_replicas{`+labels+`} `+strconv.Itoa(int(w.replicas)),
			`informer_deployment_status_replicas_available{`+labels+`} `+strconv.Itoa(int(w.available)),
			`informer_deployment_status_replicas_ready{`+labels+`} `+strconv.Itoa(int(w.available)),
			`informer_deployment_status_replicas_unavailable{`+labels+`} `+strconv.Itoa(int(w.replicas-w.available)))
		if w.condStatus != "" {
			for _, s := range []string{"true", "false", "unknown"} {
				v := "0"
				if strings.EqualFold(s, w.condStatus) {
					v = "1"
				}
				expected = append(expected, `informer_deployment_status_condition{condition="Available",deployment="`+w.name+`",namespace="`+ns+`",reason="`+w.reason+`",status="`+s+`"} `+v)
			}
		}
		if w.available < w.replicas {
			degraded++
		}
	}
	expected = append(expected, `informer_deployments_degraded{namespace="`+ns+`"} `+strconv.Itoa(degraded))
	slices.Sort(expected)

	url := serveExample(t, filepath.Join(cluster.Root, "examples/deployments.yaml"))
	var got []string
	for deadline := time.Now().Add(framework.HangTimeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = scrapeNamespace(t, url, ns); slices.Equal(got, expected) {
			return
		}
	}
	compareLines(t, got, expected)
}
