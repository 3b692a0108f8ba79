package deploy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
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

// testLookup serves get() and byIndex() from fixed objects, as the
// exporter's informer caches do.
type testLookup struct {
	objects map[string][]any                        // by resource
	indexes map[string]map[string]*indexers.Program // by resource, then name
}

func (l *testLookup) Get(resource, namespace, name string) (any, bool, error) {
	for _, o := range l.objects[resource] {
		md, _ := o.(map[string]any)["metadata"].(map[string]any)
		ns, _ := md["namespace"].(string)
		if md["name"] == name && ns == namespace {
			return o, true, nil
		}
	}
	return nil, false, nil
}

func (l *testLookup) ByIndex(resource, index, value string) ([]any, error) {
	p := l.indexes[resource][index]
	var out []any
	for _, o := range l.objects[resource] {
		values, err := p.IndexValues(o)
		if err != nil {
			return nil, err
		}
		if slices.Contains(values, value) {
			out = append(out, o)
		}
	}
	return out, nil
}

// exposition computes the series of every family of the config at path
// over objects (by resource), as sorted exposition lines name{labels} value
// with labels in alphabetical order. It follows the exporter's rules: one
// series per object, or per element of each; null labels are ""; a bool
// value is 1 or 0; aggregate groups the series by label set.
func exposition(t *testing.T, path string, objects map[string][]any) []string {
	t.Helper()
	c := load(t, path)
	lookup := &testLookup{objects: objects, indexes: map[string]map[string]*indexers.Program{}}
	for _, r := range c.Resources {
		lookup.indexes[r.Config.Resource] = r.Indexes
	}
	var lines []string
	for _, r := range c.Resources {
		for _, f := range r.Families {
			type group struct {
				count    int
				sum      float64
				min, max float64
			}
			groups := map[string]*group{}
			for _, obj := range objects[r.Config.Resource] {
				for _, s := range samples(t, f, obj, lookup) {
					labels := renderLabels(f.LabelNames, s.labels, f.ConstLabels)
					if f.Aggregate == exporter.AggregateNone {
						lines = append(lines, f.Name+labels+" "+formatValue(s.value))
						continue
					}
					g, ok := groups[labels]
					if !ok {
						g = &group{min: s.value, max: s.value}
						groups[labels] = g
					}
					g.count++
					g.sum += s.value
					g.min, g.max = min(g.min, s.value), max(g.max, s.value)
				}
			}
			for labels, g := range groups {
				v := map[string]float64{
					exporter.AggregateCount: float64(g.count), exporter.AggregateSum: g.sum,
					exporter.AggregateMin: g.min, exporter.AggregateMax: g.max,
				}[f.Aggregate]
				lines = append(lines, f.Name+labels+" "+formatValue(v))
			}
		}
	}
	slices.Sort(lines)
	return lines
}

type testSample struct {
	labels []string
	value  float64
}

func samples(t *testing.T, f *exporter.Family, obj any, lookup indexers.Lookup) []testSample {
	t.Helper()
	bind := func(p *indexers.Program) *indexers.Program {
		if len(p.References()) > 0 {
			return p.WithLookup(lookup)
		}
		return p
	}
	eval := func(p *indexers.Program, each ref.Val) ref.Val {
		var v ref.Val
		var err error
		if f.Each != nil {
			v, err = bind(p).EvalEach(context.Background(), obj, each)
		} else {
			v, err = bind(p).Eval(context.Background(), obj)
		}
		if err != nil {
			t.Fatalf("metric %s: %v", f.Name, err)
		}
		return v
	}
	one := func(each ref.Val) testSample {
		s := testSample{value: 1}
		for _, p := range f.Labels {
			s.labels = append(s.labels, labelValue(t, eval(p, each)))
		}
		if f.Value != nil {
			switch v := eval(f.Value, each).(type) {
			case types.Bool:
				s.value = map[bool]float64{true: 1, false: 0}[bool(v)]
			case types.Int:
				s.value = float64(v)
			case types.Uint:
				s.value = float64(v)
			case types.Double:
				s.value = float64(v)
			default:
				t.Fatalf("metric %s: value of type %s", f.Name, v.Type().TypeName())
			}
		}
		return s
	}
	if f.Each == nil {
		return []testSample{one(nil)}
	}
	v, err := bind(f.Each).Eval(context.Background(), obj)
	if err != nil {
		t.Fatalf("metric %s: each: %v", f.Name, err)
	}
	list, ok := v.(traits.Lister)
	if !ok {
		t.Fatalf("metric %s: each is a %s, want a list", f.Name, v.Type().TypeName())
	}
	var out []testSample
	for it := list.Iterator(); it.HasNext() == types.True; {
		out = append(out, one(it.Next()))
	}
	return out
}

func labelValue(t *testing.T, v ref.Val) string {
	t.Helper()
	switch v := v.(type) {
	case types.String:
		return string(v)
	case types.Null:
		return ""
	case types.Bool:
		return strconv.FormatBool(bool(v))
	case types.Int:
		return strconv.FormatInt(int64(v), 10)
	}
	t.Fatalf("label value of type %s", v.Type().TypeName())
	return ""
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

func renderLabels(names, values []string, common [][2]string) string {
	pairs := map[string]string{}
	for i, n := range names {
		pairs[n] = values[i]
	}
	for _, c := range common {
		pairs[c[0]] = c[1]
	}
	if len(pairs) == 0 {
		return ""
	}
	var b strings.Builder
	for i, n := range keys(pairs) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n + `="` + labelEscaper.Replace(pairs[n]) + `"`)
	}
	return "{" + b.String() + "}"
}

func formatValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// toObject turns a typed API object into the JSON map the exporter's
// expressions see.
func toObject(t *testing.T, obj runtime.Object) any {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m
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
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
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

// TestTopologyExample computes examples/topology.yaml over three nodes and
// five pods.
func TestTopologyExample(t *testing.T) {
	node := func(name, zone string, ready corev1.ConditionStatus, cpu, memory string) any {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if zone != "" {
			n.Labels = map[string]string{"topology.kubernetes.io/zone": zone}
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}
		n.Status.Allocatable = corev1.ResourceList{
			corev1.ResourceCPU:    mustParse(t, cpu),
			corev1.ResourceMemory: mustParse(t, memory),
		}
		return toObject(t, n)
	}
	pod := func(name, node string, phase corev1.PodPhase) any {
		return toObject(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
			Spec:       corev1.PodSpec{NodeName: node},
			Status:     corev1.PodStatus{Phase: phase},
		})
	}
	objects := map[string][]any{
		"nodes": {
			node("n1", "zone-a", corev1.ConditionTrue, "4", "16Gi"),
			node("n2", "zone-a", corev1.ConditionFalse, "3500m", "8Gi"),
			node("n3", "", corev1.ConditionTrue, "2", "4Gi"),
		},
		"pods": {
			pod("a", "n1", corev1.PodRunning),
			pod("b", "n1", corev1.PodRunning),
			pod("c", "n2", corev1.PodFailed),
			pod("d", "n3", corev1.PodRunning),
			pod("e", "", corev1.PodPending),
		},
	}
	got := exposition(t, filepath.Join(cluster.Root, "examples/topology.yaml"), objects)
	want := []string{
		`informer_node_allocatable_cpu_cores{zone=""} 2`,
		`informer_node_allocatable_cpu_cores{zone="zone-a"} 7.5`,
		`informer_node_allocatable_memory_bytes{zone=""} 4.294967296e+09`,
		`informer_node_allocatable_memory_bytes{zone="zone-a"} 2.5769803776e+10`,
		`informer_node_pods{node="n1",zone="zone-a"} 2`,
		`informer_node_pods{node="n2",zone="zone-a"} 1`,
		`informer_node_pods{node="n3",zone=""} 1`,
		`informer_nodes{ready="false",zone="zone-a"} 1`,
		`informer_nodes{ready="true",zone=""} 1`,
		`informer_nodes{ready="true",zone="zone-a"} 1`,
		`informer_pod_zone_info{namespace="shop",node="",pod="e",zone=""} 1`,
		`informer_pod_zone_info{namespace="shop",node="n1",pod="a",zone="zone-a"} 1`,
		`informer_pod_zone_info{namespace="shop",node="n1",pod="b",zone="zone-a"} 1`,
		`informer_pod_zone_info{namespace="shop",node="n2",pod="c",zone="zone-a"} 1`,
		`informer_pod_zone_info{namespace="shop",node="n3",pod="d",zone=""} 1`,
		`informer_pods_per_zone{phase="Failed",zone="zone-a"} 1`,
		`informer_pods_per_zone{phase="Pending",zone=""} 1`,
		`informer_pods_per_zone{phase="Running",zone=""} 1`,
		`informer_pods_per_zone{phase="Running",zone="zone-a"} 2`,
		`informer_pods{node="",phase="Pending"} 1`,
		`informer_pods{node="n1",phase="Running"} 2`,
		`informer_pods{node="n2",phase="Failed"} 1`,
		`informer_pods{node="n3",phase="Running"} 1`,
	}
	compareLines(t, got, want)
}

func mustParse(t *testing.T, q string) resource.Quantity {
	t.Helper()
	v, err := resource.ParseQuantity(q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDatabasesExample computes examples/databases.yaml over Databases like
// those of the demo workload (test/workload).
func TestDatabasesExample(t *testing.T) {
	db := func(name, engine string, replicas, ready int64, phase, storage string) any {
		spec := map[string]any{"engine": engine, "version": "1.0"}
		if replicas > 0 {
			spec["replicas"] = replicas
		}
		if storage != "" {
			spec["storage"] = storage
		}
		status := map[string]any{"readyReplicas": ready}
		if phase != "" {
			status["phase"] = phase
		}
		return map[string]any{
			"apiVersion": "demo.kubectl-informer.io/v1",
			"kind":       "Database",
			"metadata":   map[string]any{"name": name, "namespace": "shop"},
			"spec":       spec,
			"status":     status,
		}
	}
	objects := map[string][]any{"databases.demo.kubectl-informer.io": {
		db("orders", "postgres", 3, 3, "Ready", "50Gi"),
		db("carts", "redis", 2, 1, "Degraded", "10Gi"),
		db("users", "postgres", 1, 0, "Provisioning", "200Gi"),
		db("new", "mysql", 0, 0, "", ""),
	}}
	got := exposition(t, filepath.Join(cluster.Root, "examples/databases.yaml"), objects)
	want := []string{
		`informer_database_info{database="carts",engine="redis",namespace="shop",phase="Degraded",version="1.0"} 1`,
		`informer_database_info{database="new",engine="mysql",namespace="shop",phase="",version="1.0"} 1`,
		`informer_database_info{database="orders",engine="postgres",namespace="shop",phase="Ready",version="1.0"} 1`,
		`informer_database_info{database="users",engine="postgres",namespace="shop",phase="Provisioning",version="1.0"} 1`,
		`informer_database_replicas_missing{engine="mysql"} 0`,
		`informer_database_replicas_missing{engine="postgres"} 1`,
		`informer_database_replicas_missing{engine="redis"} 1`,
		`informer_database_spec_replicas{database="carts",namespace="shop"} 2`,
		`informer_database_spec_replicas{database="orders",namespace="shop"} 3`,
		`informer_database_spec_replicas{database="users",namespace="shop"} 1`,
		`informer_database_spec_storage_bytes{database="carts",namespace="shop"} 1.073741824e+10`,
		`informer_database_spec_storage_bytes{database="orders",namespace="shop"} 5.36870912e+10`,
		`informer_database_spec_storage_bytes{database="users",namespace="shop"} 2.147483648e+11`,
		`informer_database_status_ready_replicas{database="carts",namespace="shop"} 1`,
		`informer_database_status_ready_replicas{database="new",namespace="shop"} 0`,
		`informer_database_status_ready_replicas{database="orders",namespace="shop"} 3`,
		`informer_database_status_ready_replicas{database="users",namespace="shop"} 0`,
		`informer_database_storage_bytes_max{engine="postgres"} 2.147483648e+11`,
		`informer_database_storage_bytes_max{engine="redis"} 1.073741824e+10`,
		`informer_databases{engine="mysql",phase=""} 1`,
		`informer_databases{engine="postgres",phase="Provisioning"} 1`,
		`informer_databases{engine="postgres",phase="Ready"} 1`,
		`informer_databases{engine="redis",phase="Degraded"} 1`,
	}
	compareLines(t, got, want)
}

// serveExample runs the real exporter on the test cluster with the example
// config at path and returns the URL of its handler once it is ready.
func serveExample(t *testing.T, path string) string {
	t.Helper()
	kubeconfig, cacheDir := cluster.Kubeconfig, t.TempDir()
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig, flags.CacheDir = &kubeconfig, &cacheDir
	resolver, err := factory.NewResolverFor(flags)
	if err != nil {
		t.Fatal(err)
	}
	x, err := exporter.New(cluster.Config, resolver, exporter.Options{ConfigPath: path})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := x.Start(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := x.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// scrapeNamespace returns the series of /metrics at url whose namespace
// label is ns, as sorted lines name{labels} value, labels in alphabetical
// order as the text format writes them.
func scrapeNamespace(t *testing.T, url, ns string) []string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	var lines []string
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			in := false
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
				in = in || (l.GetName() == "namespace" && l.GetValue() == ns)
			}
			if !in {
				continue
			}
			v := m.GetGauge().GetValue()
			if m.GetCounter() != nil {
				v = m.GetCounter().GetValue()
			}
			slices.Sort(labels)
			lines = append(lines, name+"{"+strings.Join(labels, ",")+"} "+formatValue(v))
		}
	}
	slices.Sort(lines)
	return lines
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
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = scrapeNamespace(t, url, ns); slices.Equal(got, expected) {
			return
		}
	}
	compareLines(t, got, expected)
}
