package query_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// treeObject is an object as the API lists it, for the expected trees.
type treeObject struct {
	kind  string
	meta  metav1.Object
	ready string // the status of its Ready condition, "" when none
}

// apiTree lists the objects of ns that a tree of the default resources
// searches (with configmaps too when withConfigMaps) and draws the tree
// of root as kubectl-tree does: KIND/NAME, each dependent (an object with
// an owner reference to it) under its owner with ├─ or └─, by kind and
// name. It returns the NAME column, line by line, and READY of each
// object that has a Ready condition, by KIND/NAME.
func apiTree(t *testing.T, ns string, root types.UID, withConfigMaps bool) ([]string, map[string]string) {
	t.Helper()
	ctx := context.Background()
	c := cluster.Client
	var objs []treeObject
	deps, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range deps.Items {
		objs = append(objs, treeObject{kind: "Deployment", meta: &deps.Items[i]})
	}
	rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rss.Items {
		objs = append(objs, treeObject{kind: "ReplicaSet", meta: &rss.Items[i]})
	}
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		o := treeObject{kind: "Pod", meta: &pods.Items[i]}
		for _, cond := range pods.Items[i].Status.Conditions {
			if cond.Type == corev1.PodReady {
				o.ready = string(cond.Status)
			}
		}
		objs = append(objs, o)
	}
	svcs, err := c.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range svcs.Items {
		objs = append(objs, treeObject{kind: "Service", meta: &svcs.Items[i]})
	}
	if withConfigMaps {
		cms, err := c.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range cms.Items {
			objs = append(objs, treeObject{kind: "ConfigMap", meta: &cms.Items[i]})
		}
	}
	dependents := func(uid types.UID) []treeObject {
		var out []treeObject
		for _, o := range objs {
			for _, ref := range o.meta.GetOwnerReferences() {
				if ref.UID == uid {
					out = append(out, o)
					break
				}
			}
		}
		sort.Slice(out, func(i, j int) bool {
			if out[i].kind != out[j].kind {
				return out[i].kind < out[j].kind
			}
			return out[i].meta.GetName() < out[j].meta.GetName()
		})
		return out
	}
	var lines []string
	ready := map[string]string{}
	var walk func(o treeObject, prefix, childPrefix string)
	walk = func(o treeObject, prefix, childPrefix string) {
		name := o.kind + "/" + o.meta.GetName()
		lines = append(lines, prefix+name)
		if o.ready != "" {
			ready[name] = o.ready
		}
		ds := dependents(o.meta.GetUID())
		for i, d := range ds {
			if i == len(ds)-1 {
				walk(d, childPrefix+"└─", childPrefix+"  ")
			} else {
				walk(d, childPrefix+"├─", childPrefix+"│ ")
			}
		}
	}
	for _, o := range objs {
		if o.meta.GetUID() == root {
			walk(o, "", "")
		}
	}
	return lines, ready
}

// treeRow is a line of the output of tree: NAME keeps its drawing.
type treeRow struct{ namespace, name, ready string }

// treeRows parses the output of tree by the positions of its header's
// columns (in runes: the drawing is aligned as one column per rune).
func treeRows(t *testing.T, out string) []treeRow {
	t.Helper()
	ls := lines(out)
	if len(ls) == 0 || strings.Join(strings.Fields(ls[0]), " ") != "NAMESPACE NAME READY REASON AGE" {
		t.Fatalf("no header:\n%s", out)
	}
	col := func(name string) int { return len([]rune(ls[0][:strings.Index(ls[0], name)])) }
	nameAt, readyAt, reasonAt := col("NAME "), col("READY"), col("REASON")
	var rows []treeRow
	for _, l := range ls[1:] {
		r := []rune(l)
		if len(r) < reasonAt {
			t.Fatalf("line %q is shorter than the header", l)
		}
		rows = append(rows, treeRow{
			namespace: strings.TrimSpace(string(r[:nameAt])),
			name:      strings.TrimRight(string(r[nameAt:readyAt]), " "),
			ready:     strings.TrimSpace(string(r[readyAt:reasonAt])),
		})
	}
	return rows
}

// treeColumns splits the output of tree into its NAME column and READY
// by KIND/NAME (without the drawing), checking NAMESPACE.
func treeColumns(t *testing.T, out, ns string) ([]string, map[string]string) {
	t.Helper()
	var names []string
	ready := map[string]string{}
	for _, r := range treeRows(t, out) {
		if r.namespace != ns {
			t.Errorf("%s: namespace %q, want %q", r.name, r.namespace, ns)
		}
		names = append(names, r.name)
		ready[strings.TrimLeft(r.name, "│├└─ ")] = r.ready
	}
	return names, ready
}

func TestTree(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "tree")
	createChain(t, ns)
	a := listChain(t, ns)
	// The pods' Ready conditions, as a kubelet would write them.
	for i, p := range a.pods {
		status := corev1.ConditionTrue
		if i%2 == 1 {
			status = corev1.ConditionFalse
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, Reason: "Test" + string(status)}}
		if _, err := cluster.Client.CoreV1().Pods(ns).UpdateStatus(ctx, &p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A ConfigMap the Deployment owns, found only with --include configmaps.
	d := a.deps[0]
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config", OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID}}}}
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	check := func(args []string, withConfigMaps bool) {
		t.Helper()
		want, wantReady := apiTree(t, ns, d.UID, withConfigMaps)
		out := run(t, append([]string{"tree", "--kubeconfig", cluster.Kubeconfig}, args...)...).ok(t)
		got, gotReady := treeColumns(t, out, ns)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("tree %v: NAME column\n%s\nwant\n%s", args, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for name, r := range wantReady {
			if gotReady[name] != r {
				t.Errorf("tree %v: %s READY %q, want %q", args, name, gotReady[name], r)
			}
		}
		if len(wantReady) == 0 || len(want) < 4 {
			t.Errorf("the tree of %s has %d objects, %d with a Ready condition: the test checks too little", d.Name, len(want), len(wantReady))
		}
	}
	check([]string{"deployment", d.Name, "-n", ns}, false)
	check([]string{"deploy", d.Name, "-n", ns, "--include", "configmaps"}, true)

	// -A: every Deployment of every namespace is a root.
	all, err := cluster.Client.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantTree, _ := apiTree(t, ns, d.UID, false)
	out := run(t, "tree", "--kubeconfig", cluster.Kubeconfig, "deployments", "-A").ok(t)
	rows := treeRows(t, out)
	roots := 0
	block := false
	for i, r := range rows {
		if strings.HasPrefix(r.name, "Deployment/") {
			roots++
		}
		if r.namespace == ns && r.name == wantTree[0] && i+len(wantTree) <= len(rows) {
			var got []string
			for _, r := range rows[i : i+len(wantTree)] {
				got = append(got, r.name)
			}
			block = strings.Join(got, "\n") == strings.Join(wantTree, "\n")
		}
	}
	if roots != len(all.Items) {
		t.Errorf("tree deployments -A: %d roots, the API lists %d deployments", roots, len(all.Items))
	}
	if !block {
		t.Errorf("tree deployments -A does not hold the tree of %s/%s:\n%s", ns, d.Name, out)
	}

	// A name that does not exist: kubectl get's words, exit 1.
	r := run(t, "tree", "--kubeconfig", cluster.Kubeconfig, "deploy", "nope", "-n", ns)
	kubectl, _ := cluster.Kubectl("get", "deploy", "nope", "-n", ns)
	if r.code != 1 || strings.TrimSpace(r.errOut) != strings.TrimSpace(kubectl) {
		t.Errorf("tree of a missing deployment: exit %d, stderr %q; kubectl says %q", r.code, r.errOut, kubectl)
	}

	// -A with a name: refused in kubectl get's words (kubectl exits 1),
	// with the exit code of a usage error, printing no tree.
	r = run(t, "tree", "--kubeconfig", cluster.Kubeconfig, "deploy", d.Name, "-A")
	kubectl, kerr := cluster.Kubectl("get", "deploy", d.Name, "-A")
	if kerr == nil {
		t.Fatalf("kubectl get deploy %s -A succeeded: %s", d.Name, kubectl)
	}
	if r.code != 2 || r.out != "" || strings.TrimSpace(r.errOut) != strings.TrimSpace(kubectl) {
		t.Errorf("tree deploy %s -A: exit %d, stdout %q, stderr %q; kubectl says %q", d.Name, r.code, r.out, r.errOut, kubectl)
	}
}

// tree -w prints the tree again when an object of it changes.
func TestTreeWatch(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "tree-watch")
	createChain(t, ns)
	a := listChain(t, ns)
	d := a.deps[0]
	w := cluster.StartPlugin(t, "tree", "deploy", d.Name, "-n", ns, "-w")
	want, _ := apiTree(t, ns, d.UID, false)
	w.WaitLines(t, len(want)+1)
	var gone string
	for _, p := range a.pods {
		if a.owner(&p) != nil {
			gone = p.Name
			break
		}
	}
	zero := int64(0)
	if err := cluster.Client.CoreV1().Pods(ns).Delete(ctx, gone, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, "the tree printed again without pod "+gone, func() bool {
		want, _ := apiTree(t, ns, d.UID, false)
		tables := strings.Split(w.Out.String(), "\n\n")
		got, _ := treeColumns(t, tables[len(tables)-1], ns)
		return len(tables) > 1 && strings.Join(got, "\n") == strings.Join(want, "\n") && !strings.Contains(tables[len(tables)-1], gone)
	})
}
