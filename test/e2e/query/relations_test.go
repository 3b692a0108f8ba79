package query_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// createChain creates in ns what controllers would: a Deployment web, a
// ReplicaSet it controls, pods the ReplicaSet controls; besides, an
// orphan ReplicaSet, a pod nothing controls, a Service and a
// PodDisruptionBudget selecting app=web, and Events about a pod and the
// Deployment. No controller runs, so the owner references are written
// here, with the owners' UIDs.
func createChain(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	c := cluster.Client
	web := map[string]string{"app": "web"}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: web},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
	}
	two := int32(2)
	d, err := c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: web}, Template: template},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	controller := func(apiVersion, kind, name string, uid types.UID) []metav1.OwnerReference {
		yes := true
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &yes}}
	}
	rsSpec := appsv1.ReplicaSetSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: web}, Template: template}
	rs, err := c.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-6d4b", Labels: web, OwnerReferences: controller("apps/v1", "Deployment", d.Name, d.UID)},
		Spec:       rsSpec,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan", Labels: web},
		Spec:       rsSpec,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var first *corev1.Pod
	for _, name := range []string{"web-6d4b-x2k", "web-6d4b-a9z"} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: web, OwnerReferences: controller("apps/v1", "ReplicaSet", rs.Name, rs.UID)},
			Spec:       template.Spec,
		}
		if p, err = c.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = p
		}
	}
	cluster.CreatePod(t, ns, "lone", map[string]string{"app": "db"})
	if _, err := c.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.ServiceSpec{Selector: web, Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	one := intstr.FromInt32(1)
	if _, err := c.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: web}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	event := func(name, reason string, ref corev1.ObjectReference) {
		t.Helper()
		if _, err := c.CoreV1().Events(ns).Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: name},
			InvolvedObject: ref, Reason: reason, Message: reason, Type: corev1.EventTypeNormal,
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	podRef := corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: first.Name, UID: first.UID, APIVersion: "v1"}
	event(first.Name+".1", "Scheduled", podRef)
	event(first.Name+".2", "Pulled", podRef)
	event("web.1", "ScalingReplicaSet", corev1.ObjectReference{Kind: "Deployment", Namespace: ns, Name: d.Name, UID: d.UID, APIVersion: "apps/v1"})
}

// apiObjects are the objects of a namespace as the API lists them, by UID.
type apiObjects struct {
	byUID map[types.UID]metav1.Object
	kinds map[types.UID]string
	pods  []corev1.Pod
	rss   []appsv1.ReplicaSet
	deps  []appsv1.Deployment
	svcs  []corev1.Service
	pdbs  []policyv1.PodDisruptionBudget
	evs   []corev1.Event
}

func listChain(t *testing.T, ns string) *apiObjects {
	t.Helper()
	ctx := context.Background()
	c := cluster.Client
	a := &apiObjects{byUID: map[types.UID]metav1.Object{}, kinds: map[types.UID]string{}}
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deps, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := c.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdbs, err := c.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.pods, a.rss, a.deps, a.svcs, a.pdbs, a.evs = pods.Items, rss.Items, deps.Items, svcs.Items, pdbs.Items, evs.Items
	for i := range a.pods {
		a.byUID[a.pods[i].UID], a.kinds[a.pods[i].UID] = &a.pods[i], "Pod"
	}
	for i := range a.rss {
		a.byUID[a.rss[i].UID], a.kinds[a.rss[i].UID] = &a.rss[i], "ReplicaSet"
	}
	for i := range a.deps {
		a.byUID[a.deps[i].UID], a.kinds[a.deps[i].UID] = &a.deps[i], "Deployment"
	}
	return a
}

// owner is the object that controls o, by the UID of its controller
// reference; nil when none of the listed objects does.
func (a *apiObjects) owner(o metav1.Object) metav1.Object {
	if ref := metav1.GetControllerOf(o); ref != nil {
		return a.byUID[ref.UID]
	}
	return nil
}

// chain is owner, owner of owner, … as KIND/NAME.
func (a *apiObjects) chain(o metav1.Object) string {
	var out []string
	for p := a.owner(o); p != nil; p = a.owner(p) {
		out = append(out, a.kinds[p.GetUID()]+"/"+p.GetName())
	}
	return orDash(out)
}

// events are the reasons of the Events about o, oldest first.
func (a *apiObjects) events(o metav1.Object) string {
	evs := append([]corev1.Event(nil), a.evs...)
	sort.SliceStable(evs, func(i, j int) bool {
		if !evs[i].CreationTimestamp.Equal(&evs[j].CreationTimestamp) {
			return evs[i].CreationTimestamp.Before(&evs[j].CreationTimestamp)
		}
		return evs[i].Name < evs[j].Name
	})
	var out []string
	for _, e := range evs {
		if e.InvolvedObject.UID == o.GetUID() {
			out = append(out, e.Reason)
		}
	}
	return orDash(out)
}

// selectedPods are the names of the pods sel selects.
func (a *apiObjects) selectedPods(sel labels.Selector) string {
	var out []string
	for _, p := range a.pods {
		if sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return orDash(out)
}

// childPods are the names of the pods o controls.
func (a *apiObjects) childPods(o metav1.Object) string {
	var out []string
	for i := range a.pods {
		if p := a.owner(&a.pods[i]); p != nil && p.GetUID() == o.GetUID() {
			out = append(out, a.pods[i].Name)
		}
	}
	sort.Strings(out)
	return orDash(out)
}

func orDash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

// dash is a column expression that joins the list of strings expr with
// ",", "-" when it is empty, so that every column is one field.
func dash(expr string) string {
	return fmt.Sprintf(`%s.size() == 0 ? "-" : %s.join(",")`, expr, expr)
}

// fieldsOf splits the tables of out, without headers, into NAME → its
// last n fields: the --columns. NAME is KIND/NAME when several resources
// are queried.
func fieldsOf(out string, n int) map[string][]string {
	got := map[string][]string{}
	for _, l := range lines(out) {
		f := strings.Fields(l)
		if len(f) > n {
			got[f[0]] = f[len(f)-n:]
		}
	}
	return got
}

func TestRelationFunctions(t *testing.T) {
	ns := cluster.NewNamespace(t, "relations")
	createChain(t, ns)
	a := listChain(t, ns)

	// owner(), owners() and events() of every pod, in columns.
	out := query(t, "pods", "-n", ns, "--no-headers",
		"--columns", `owner=owner(object) == null ? "-" : owner(object).metadata.name`,
		"--columns", "chain="+dash(`owners(object).map(o, o.kind + "/" + o.metadata.name)`),
		"--columns", "events="+dash(`events(object).map(e, e.reason)`)).ok(t)
	got := fieldsOf(out, 3)
	if len(got) != len(a.pods) {
		t.Fatalf("%d pods answered, the API lists %d:\n%s", len(got), len(a.pods), out)
	}
	for i := range a.pods {
		p := &a.pods[i]
		owner := "-"
		if o := a.owner(p); o != nil {
			owner = o.GetName()
		}
		want := []string{owner, a.chain(p), a.events(p)}
		if strings.Join(got[p.Name], " ") != strings.Join(want, " ") {
			t.Errorf("pod %s: owner, owners, events = %v, want %v", p.Name, got[p.Name], want)
		}
	}

	// children() of the ReplicaSets and the Deployment.
	out = query(t, "replicasets,deployments", "-n", ns, "--no-headers",
		"--columns", "pods="+dash(`children(object, "pods").map(p, p.metadata.name)`),
		"--columns", "rs="+dash(`children(object, "replicasets").map(p, p.metadata.name)`)).ok(t)
	got = fieldsOf(out, 2)
	for _, o := range []metav1.Object{&a.rss[0], &a.rss[1], &a.deps[0]} {
		key := strings.ToLower(a.kinds[o.GetUID()]) + ".apps/" + o.GetName()
		var rss []string
		for i := range a.rss {
			if p := a.owner(&a.rss[i]); p != nil && p.GetUID() == o.GetUID() {
				rss = append(rss, a.rss[i].Name)
			}
		}
		want := []string{a.childPods(o), orDash(rss)}
		if strings.Join(got[key], " ") != strings.Join(want, " ") {
			t.Errorf("%s: children pods, replicasets = %v, want %v\n%s", key, got[key], want, out)
		}
	}

	// selected() of the Service, the PDB and the Deployment.
	want := map[string]string{}
	for _, s := range a.svcs {
		want["service/"+s.Name] = a.selectedPods(labels.SelectorFromSet(s.Spec.Selector))
	}
	for _, p := range a.pdbs {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil {
			t.Fatal(err)
		}
		want["poddisruptionbudget.policy/"+p.Name] = a.selectedPods(sel)
	}
	for _, d := range a.deps {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			t.Fatal(err)
		}
		want["deployment.apps/"+d.Name] = a.selectedPods(sel)
	}
	out = query(t, "svc,pdb,deploy", "-n", ns, "--no-headers",
		"--columns", "pods="+dash(`selected(object, "pods").map(p, p.metadata.name)`)).ok(t)
	got = fieldsOf(out, 1)
	for kn, w := range want {
		if g := got[kn]; len(g) != 1 || g[0] != w {
			t.Errorf("%s: selected pods %v, want %s\n%s", kn, g, w, out)
		}
		if w == "-" {
			t.Errorf("%s selects no pod: the test checks nothing", kn)
		}
	}

	// --where with owners(): the pods under the Deployment.
	var under []string
	for i := range a.pods {
		if strings.Contains(a.chain(&a.pods[i]), "Deployment/web") {
			under = append(under, a.pods[i].Name)
		}
	}
	sort.Strings(under)
	out = query(t, "pods", "-n", ns, "-o", "name",
		"--where", `owners(object).exists(o, o.kind == "Deployment" && o.metadata.name == "web")`).ok(t)
	if g := strings.Join(lines(strings.ReplaceAll(out, "pod/", "")), ","); g != strings.Join(under, ",") || len(under) == 0 {
		t.Errorf("pods under deployment web: %q, want %q", g, strings.Join(under, ","))
	}

	// The resource of children() must be a literal.
	r := query(t, "pods", "-n", ns, "--where", `children(object, object.kind).size() > 0`)
	if r.code != 2 || !strings.Contains(r.errOut, "the second argument of children() must be a string literal naming a resource") {
		t.Errorf("children() with a computed resource: exit %d, stderr %q", r.code, r.errOut)
	}
}

// A watch re-evaluates the objects when an object they read changes: the
// pods whose owner is labelled stage=live appear when the ReplicaSet is.
func TestRelationFunctionsWatch(t *testing.T) {
	ns := cluster.NewNamespace(t, "relations-watch")
	createChain(t, ns)
	a := listChain(t, ns)
	run := cluster.StartPlugin(t, "query", "pods", "-n", ns, "--count", "-w",
		"--where", `owner(object) != null && owner(object).metadata.?labels.?stage.orValue("") == "live"`)
	run.WaitLines(t, 1)
	if l := framework.Lines(run.Out.String()); l[0] != "0" {
		t.Fatalf("first answer %q, want 0", l[0])
	}
	rs := a.rss[0]
	if rs.Name == "orphan" {
		rs = a.rss[1]
	}
	patch := []byte(`{"metadata":{"labels":{"stage":"live"}}}`)
	if _, err := cluster.Client.AppsV1().ReplicaSets(ns).Patch(context.Background(), rs.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(strings.Count(a.childPods(&rs), ",") + 1)
	framework.Eventually(t, "the count of pods whose owner is live", func() bool {
		l := framework.Lines(run.Out.String())
		return l[len(l)-1] == want
	})
}

// The later queries of an interactive session may call children() and
// events(): the session's caches have their indexes.
func TestRelationFunctionsInteractive(t *testing.T) {
	ns := cluster.NewNamespace(t, "relations-i")
	createChain(t, ns)
	a := listChain(t, ns)
	var want []string
	for i := range a.rss {
		if a.childPods(&a.rss[i]) != "-" {
			want = append(want, a.rss[i].Name)
		}
	}
	for i := range a.pods {
		if a.events(&a.pods[i]) != "-" {
			want = append(want, a.pods[i].Name)
		}
	}
	in := strings.NewReader("children(object, \"pods\").size() > 0\nevents(object).size() > 0\n")
	code, out, errOut := framework.RunPlugin(context.Background(), in, "query", "--kubeconfig", cluster.Kubeconfig, "replicasets,pods,events", "-n", ns, "-i", "--no-headers")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var got []string
	for _, l := range lines(out) {
		got = append(got, strings.Fields(l)[0])
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || len(want) < 2 {
		t.Errorf("answers %v, want %v\n%s", got, want, errOut)
	}
}
