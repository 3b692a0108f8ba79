package factory_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
	"github.com/kubectl-informer/kubectl-informer/test/workload"
)

func resolver(t *testing.T, kubeconfig string) *factory.Resolver {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &kubeconfig
	cacheDir := t.TempDir()
	flags.CacheDir = &cacheDir
	r, err := factory.NewResolverFor(flags)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResolve(t *testing.T) {
	r := resolver(t, cluster.Kubeconfig)
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	deploys := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	nodes := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	tests := []struct {
		args []string
		want []schema.GroupVersionResource
	}{
		{[]string{"pods"}, []schema.GroupVersionResource{pods}},
		{[]string{"pod"}, []schema.GroupVersionResource{pods}},
		{[]string{"po"}, []schema.GroupVersionResource{pods}},
		{[]string{"Pod"}, []schema.GroupVersionResource{pods}},
		{[]string{"deploy"}, []schema.GroupVersionResource{deploys}},
		{[]string{"deployments.apps"}, []schema.GroupVersionResource{deploys}},
		{[]string{"deployments.v1.apps"}, []schema.GroupVersionResource{deploys}},
		{[]string{"db"}, []schema.GroupVersionResource{workload.DatabaseResource}},
		{[]string{"databases.demo.kubectl-informer.io"}, []schema.GroupVersionResource{workload.DatabaseResource}},
		{[]string{"demo"}, []schema.GroupVersionResource{workload.DatabaseResource}},
		{[]string{"pods,nodes"}, []schema.GroupVersionResource{pods, nodes}},
		{[]string{"po,pods", "no"}, []schema.GroupVersionResource{pods, nodes}},
	}
	for _, tt := range tests {
		got, err := r.Resolve(tt.args)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tt.args, err)
			continue
		}
		var gvrs []schema.GroupVersionResource
		for _, res := range got {
			gvrs = append(gvrs, res.GVR)
		}
		if len(gvrs) != len(tt.want) {
			t.Errorf("Resolve(%q) = %v, want %v", tt.args, gvrs, tt.want)
			continue
		}
		for i := range gvrs {
			if gvrs[i] != tt.want[i] {
				t.Errorf("Resolve(%q) = %v, want %v", tt.args, gvrs, tt.want)
			}
		}
	}
	if res, _ := r.Resolve([]string{"nodes"}); len(res) != 1 || res[0].Namespaced || res[0].GVK.Kind != "Node" {
		t.Errorf("nodes resolved to %+v; want cluster-scoped kind Node", res)
	}

	errs := []struct{ arg, want string }{
		{"podz", `the server doesn't have a resource type "podz"; did you mean "pods"?`},
		{"deploymnt", `did you mean "deployment"?`},
		{"widgets.example.com", `the server doesn't have a resource type "widgets" in group "example.com"`},
		{"zzzzzzzzzz", `the server doesn't have a resource type "zzzzzzzzzz" (kubectl api-resources`},
	}
	for _, e := range errs {
		_, err := r.Resolve([]string{e.arg})
		if err == nil || !strings.Contains(err.Error(), e.want) || !factory.IsUnknownResource(err) {
			t.Errorf("Resolve(%q) error %v; want one containing %q", e.arg, err, e.want)
		}
	}
}

// startOne requests one resource (resolved with the admin's kubeconfig)
// from a factory reaching the cluster through cfg, and starts the factory
// until the test ends.
func startOne(t *testing.T, cfg *rest.Config, arg string, mode factory.Mode, scope factory.Scope) (*factory.Factory, *factory.Informer, context.Context) {
	t.Helper()
	res, err := resolver(t, cluster.Kubeconfig).Resolve([]string{arg})
	if err != nil {
		t.Fatal(err)
	}
	f, err := factory.New(cfg, factory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	inf, err := f.Request(res[0], scope, factory.Needs{Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return f, inf, ctx
}

// syncOne starts one resource (see startOne) and waits for the sync.
func syncOne(t *testing.T, cfg *rest.Config, arg string, mode factory.Mode, scope factory.Scope) *factory.Informer {
	t.Helper()
	f, inf, ctx := startOne(t, cfg, arg, mode, scope)
	if err := f.WaitForSync(ctx, time.Minute, true, nil); err != nil {
		t.Fatalf("sync of %s: %v", arg, err)
	}
	return inf
}

func TestTypedInformer(t *testing.T) {
	inf := syncOne(t, cluster.Config, "pods", factory.ModeFull, factory.Scope{})
	objs := inf.Informer.GetStore().List()
	if len(objs) != spec.Pods {
		t.Fatalf("cached %d pods, want %d", len(objs), spec.Pods)
	}
	for _, o := range objs {
		p, ok := o.(*corev1.Pod)
		if !ok {
			t.Fatalf("cached %T, want *v1.Pod", o)
		}
		if p.Kind != "Pod" || p.APIVersion != "v1" {
			t.Fatalf("pod %s has apiVersion %q kind %q; the transform must set them", p.Name, p.APIVersion, p.Kind)
		}
		if p.ManagedFields != nil {
			t.Fatalf("pod %s kept managedFields", p.Name)
		}
		if len(p.Spec.Containers) != 2 {
			t.Fatalf("pod %s has %d containers; want the whole object", p.Name, len(p.Spec.Containers))
		}
	}
	if n := inf.Objects(); n != int64(spec.Pods) {
		t.Errorf("Objects() = %d, want %d", n, spec.Pods)
	}
}

func TestMetadataInformer(t *testing.T) {
	inf := syncOne(t, cluster.Config, "pods", factory.ModeMetadata, factory.Scope{Namespace: workload.NamespaceName(0)})
	objs := inf.Informer.GetStore().List()
	want := 0
	pods, err := cluster.Client.CoreV1().Pods(workload.NamespaceName(0)).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want = len(pods.Items)
	if len(objs) != want || want == 0 {
		t.Fatalf("cached %d pods of namespace %s, want %d", len(objs), workload.NamespaceName(0), want)
	}
	for _, o := range objs {
		m, ok := o.(*metav1.PartialObjectMetadata)
		if !ok {
			t.Fatalf("cached %T, want *v1.PartialObjectMetadata", o)
		}
		if m.Kind != "Pod" || m.APIVersion != "v1" || m.Namespace != workload.NamespaceName(0) {
			t.Fatalf("cached %s/%s as %s %s; want v1 Pod", m.Namespace, m.Name, m.APIVersion, m.Kind)
		}
	}
}

func TestDynamicInformerAndSelectors(t *testing.T) {
	inf := syncOne(t, cluster.Config, "db", factory.ModeFull, factory.Scope{})
	objs := inf.Informer.GetStore().List()
	if len(objs) != spec.Default().CustomResources {
		t.Fatalf("cached %d databases, want %d", len(objs), spec.Default().CustomResources)
	}
	if u, ok := objs[0].(*unstructured.Unstructured); !ok || u.GetKind() != "Database" {
		t.Fatalf("cached %T, want an unstructured Database", objs[0])
	}

	ctx := context.Background()
	onNode, err := cluster.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-001", LabelSelector: "tier=frontend"})
	if err != nil {
		t.Fatal(err)
	}
	sel := syncOne(t, cluster.Config, "pods", factory.ModeFull, factory.Scope{FieldSelector: "spec.nodeName=node-001", LabelSelector: "tier=frontend"})
	if got := len(sel.Informer.GetStore().List()); got != len(onNode.Items) || got == 0 {
		t.Fatalf("selectors cached %d pods, the API lists %d", got, len(onNode.Items))
	}
}

func TestForbidden(t *testing.T) {
	f, _, ctx := startOne(t, cluster.UnprivilegedConfig, "pods", factory.ModeFull, factory.Scope{Namespace: "shop"})
	// Were the error not reported at the first failed list, the wait would
	// end at its timeout, with a SyncError.
	err := f.WaitForSync(ctx, framework.HangTimeout, true, nil)
	var fe *factory.ForbiddenError
	if !errors.As(err, &fe) {
		t.Fatalf("sync as the unprivileged user: %v; want a ForbiddenError", err)
	}
	for _, want := range []string{`cannot list resource "pods" in API group "" in the namespace "shop"`, `pods in namespace "shop"`, "kubectl auth can-i list pods"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

// TestSyncTimeout points a factory at a server that accepts connections and
// never answers: the wait ends at the timeout and names the resource.
func TestSyncTimeout(t *testing.T) {
	addr := framework.SilentServer(t)
	f, _, ctx := startOne(t, &rest.Config{Host: "http://" + addr}, "pods", factory.ModeFull, factory.Scope{Namespace: "shop"})
	start := time.Now()
	var progress bytes.Buffer
	err := f.WaitForSync(ctx, 1500*time.Millisecond, true, &progress)
	if !strings.Contains(progress.String(), "\r\x1b[Kpods 0 objects, syncing") || !strings.HasSuffix(progress.String(), "\r\x1b[K") {
		t.Errorf("progress %q: want rewritten 'pods 0 objects, syncing' lines, erased at the end", progress.String())
	}
	var se *factory.SyncError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "timed out after 1.5s waiting for the cache of pods to sync") {
		t.Fatalf("got %v; want a sync timeout naming pods", err)
	}
	if d := time.Since(start); d < 1500*time.Millisecond {
		t.Errorf("the wait took %s; want at least its timeout, 1.5s", d)
	}
}

func TestUnreachable(t *testing.T) {
	server := "https://" + framework.ClosedPort(t)
	flags := genericclioptions.NewConfigFlags(true)
	flags.APIServer = &server
	insecure := true
	flags.Insecure = &insecure
	cacheDir := t.TempDir()
	flags.CacheDir = &cacheDir
	r, err := factory.NewResolverFor(flags)
	if err == nil {
		_, err = r.Resolve([]string{"pods"})
	}
	var se *factory.ServerError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "the API server could not be reached") {
		t.Fatalf("resolving against a closed port: %v; want a ServerError naming the fix", err)
	}
}

// podsAndFactory resolves pods and returns them with a new Factory of the
// test cluster, not started.
func podsAndFactory(t *testing.T) (factory.Resource, *factory.Factory) {
	t.Helper()
	res, err := resolver(t, cluster.Kubeconfig).Resolve([]string{"pods"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := factory.New(cluster.Config, factory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return res[0], f
}

// TestPrunedInformer checks that objects are pruned to the requested fields
// (and metadata) as they arrive, and that consumers' fields are unioned.
func TestPrunedInformer(t *testing.T) {
	pods, f := podsAndFactory(t)
	inf, err := f.Request(pods, factory.Scope{}, factory.Needs{Mode: factory.ModeFull, Fields: jsonval.NewPaths([]string{"status", "phase"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Request(pods, factory.Scope{}, factory.Needs{Mode: factory.ModeFull, Fields: jsonval.NewPaths([]string{"spec", "nodeName"})}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.WaitForSync(ctx, time.Minute, true, nil); err != nil {
		t.Fatal(err)
	}
	full, err := cluster.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]corev1.Pod{}
	for _, p := range full.Items {
		byKey[p.Namespace+"/"+p.Name] = p
	}
	objs := inf.Informer.GetStore().List()
	if len(objs) != len(full.Items) {
		t.Fatalf("cached %d pods, the API lists %d", len(objs), len(full.Items))
	}
	for _, o := range objs {
		p := o.(*corev1.Pod)
		want := byKey[p.Namespace+"/"+p.Name]
		if p.Status.Phase != want.Status.Phase || p.Spec.NodeName != want.Spec.NodeName || p.UID != want.UID || p.Labels["app"] != want.Labels["app"] {
			t.Fatalf("pod %s lost a kept field: phase %q/%q node %q/%q", p.Name, p.Status.Phase, want.Status.Phase, p.Spec.NodeName, want.Spec.NodeName)
		}
		if len(p.Spec.Containers) != 0 || len(p.Status.ContainerStatuses) != 0 || p.Status.PodIP != "" {
			t.Fatalf("pod %s kept fields nobody asked for: %d containers, %d statuses, IP %q", p.Name, len(p.Spec.Containers), len(p.Status.ContainerStatuses), p.Status.PodIP)
		}
	}
	// A consumer that needs more after the start is refused, not served wrong data.
	if _, err := f.Request(pods, factory.Scope{}, factory.Needs{Mode: factory.ModeFull}); err == nil || !strings.Contains(err.Error(), "pruned") {
		t.Errorf("requesting whole objects from a pruned, started informer: %v", err)
	}
}

// TestShutdown: Shutdown stops every informer, a detached one too, and
// returns once their goroutines have; none starts after it.
func TestShutdown(t *testing.T) {
	before := goleak.IgnoreCurrent()
	pods, f := podsAndFactory(t)
	if _, err := f.Request(pods, factory.Scope{}, factory.Needs{Mode: factory.ModeMetadata}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.WaitForSync(ctx, time.Minute, true, nil); err != nil {
		t.Fatal(err)
	}
	// Detached, it runs on beside the one a new request starts.
	f.Detach(pods, factory.Scope{})
	if _, err := f.Request(pods, factory.Scope{}, factory.Needs{Mode: factory.ModeMetadata}); err != nil {
		t.Fatal(err)
	}
	f.Shutdown()
	// Connections the transports keep for reuse are theirs, not the
	// informers': HTTP/2's and HTTP/1.1's, whichever a watch was on.
	pooled := []goleak.Option{
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	}
	if err := goleak.Find(append(pooled, before)...); err != nil {
		t.Errorf("goroutines left after Shutdown, with the context still running: %v", err)
	}
	if _, err := f.Request(pods, factory.Scope{Namespace: "default"}, factory.Needs{Mode: factory.ModeMetadata}); err == nil {
		t.Error("an informer started after Shutdown")
	}
	f.Shutdown() // again: nothing to do
}
