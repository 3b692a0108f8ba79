package serve_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/queryserver"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// A query server answers children() and events(): its caches have their
// indexes. The answers are those of a local query, and of the API's
// objects.
func TestServedRelationFunctions(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client
	ns := cluster.NewNamespace(t, "relations")
	yes := true
	one := int32(1)
	web := map[string]string{"app": "web"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: web}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}}
	rs, err := c.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: web}, Template: tmpl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "idle"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: web}, Template: tmpl}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1-a", Labels: web,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}}, Spec: tmpl.Spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Labelled, as the workload's objects are: the package's other tests
	// read the label app of every pod and deployment.
	cluster.CreatePod(t, ns, "lone", map[string]string{"app": "lone"})
	if _, err := c.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web-1-a.1"}, Reason: "Scheduled",
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod.Name, UID: pod.UID, APIVersion: "v1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// From the API: the ReplicaSets some pod names as its controller, and
	// the pods some Event is about.
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events, err := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	controllers := map[string]bool{}
	for _, p := range pods.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil {
			controllers[string(ref.UID)] = true
		}
	}
	rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wantRS, wantPods []string
	for _, r := range rss.Items {
		if controllers[string(r.UID)] {
			wantRS = append(wantRS, "replicaset.apps/"+r.Name)
		}
	}
	for _, p := range pods.Items {
		for _, e := range events.Items {
			if e.InvolvedObject.UID == p.UID {
				wantPods = append(wantPods, "pod/"+p.Name)
				break
			}
		}
	}
	sort.Strings(wantRS)
	sort.Strings(wantPods)

	addr := framework.ClosedPort(t)
	certDir := t.TempDir()
	s := &server{
		run: cluster.StartPlugin(t, "serve", "pods,replicasets,events", "-A",
			"--listen-address", addr, "--cert-dir", certDir, "--config", configFile),
		url: "https://" + addr,
		ca:  filepath.Join(certDir, queryserver.SelfSignedCertFile),
	}
	s.waitReady(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"replicasets", "-n", ns, "--where", `children(object, "pods").size() > 0`, "-o", "name"}, wantRS},
		{[]string{"pods", "-n", ns, "--where", `events(object).size() > 0`, "-o", "name"}, wantPods},
	} {
		r := s.query(t, cluster.Kubeconfig, tc.args...)
		local := localQuery(t, tc.args...)
		if r.code != 0 || local.code != 0 {
			t.Fatalf("query %v: exit %d (local %d)\n%s\n%s", tc.args, r.code, local.code, r.errOut, local.errOut)
		}
		if got := strings.Fields(r.out); strings.Join(got, ",") != strings.Join(tc.want, ",") || len(tc.want) == 0 {
			t.Errorf("served query %v: %v, want %v", tc.args, got, tc.want)
		}
		if r.out != local.out {
			t.Errorf("served query %v: %q, local %q", tc.args, r.out, local.out)
		}
	}
}

// owner() and owners() through a server that serves only some owner
// kinds, and for a caller who may list only some of those: an owner of
// another kind reads as null, and the query is answered. The answers are
// the controller chains of the API's objects, through the kinds each
// caller may read.
func TestServedRelationOwnerKinds(t *testing.T) {
	ctx := context.Background()
	c := cluster.Client
	ns := cluster.NewNamespace(t, "owners")
	yes := true
	one := int32(1)
	web := map[string]string{"app": "web"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: web}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}}
	d, err := c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: web},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: web}, Template: tmpl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := c.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Labels: web,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: web}, Template: tmpl}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1-a", Labels: web,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}}, Spec: tmpl.Spec}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Labelled, as the workload's objects are: the package's other tests
	// read the label app of every pod and deployment.
	cluster.CreatePod(t, ns, "lone", map[string]string{"app": "lone"})
	kubeconfig, user := cluster.ServiceAccountKubeconfig(t, ns, "pods-and-replicasets",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch", "get"}},
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"replicasets"}, Verbs: []string{"list", "watch", "get"}})
	waitAllowed(t, authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "list", Group: "apps", Resource: "replicasets"}})

	// From the API: the objects of the kinds the server serves, by kind
	// and name.
	objs := map[string]map[string]metav1.Object{"Pod": {}, "ReplicaSet": {}, "Deployment": {}}
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		objs["Pod"][pods.Items[i].Name] = &pods.Items[i]
	}
	rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rss.Items {
		objs["ReplicaSet"][rss.Items[i].Name] = &rss.Items[i]
	}
	deps, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range deps.Items {
		objs["Deployment"][deps.Items[i].Name] = &deps.Items[i]
	}
	// chain is KIND/NAME of each controller up from o, through the kinds
	// readable, as far as an owner is one of those.
	chain := func(o metav1.Object, readable ...string) []string {
		var out []string
		for {
			ref := metav1.GetControllerOfNoCopy(o)
			if ref == nil || !slices.Contains(readable, ref.Kind) {
				return out
			}
			owner, ok := objs[ref.Kind][ref.Name]
			if !ok || owner.GetUID() != ref.UID {
				return out
			}
			out = append(out, ref.Kind+"/"+ref.Name)
			o = owner
		}
	}

	// A server of three of the owner kinds, and one of them all: the
	// service account may list none of the others.
	checked := 0
	for _, served := range []string{"pods,replicasets,deployments",
		"pods,replicasets,deployments,statefulsets,daemonsets,jobs,cronjobs,replicationcontrollers"} {
		checked += checkOwners(t, served, ns, pods.Items, chain, kubeconfig)
	}
	if checked < 4 {
		t.Errorf("%d pods have an owner the callers may read: the test checks too little", checked)
	}
}

// checkOwners starts a server of served and queries owner() and owners()
// of each pod as the admin, who may read every kind, and as the service
// account of kubeconfig, who may read ReplicaSets only, expecting the
// chains chain computes through those kinds. It returns how many of the
// answers name an owner.
func checkOwners(t *testing.T, served, ns string, pods []corev1.Pod, chain func(metav1.Object, ...string) []string, kubeconfig string) int {
	t.Helper()
	addr := framework.ClosedPort(t)
	certDir := t.TempDir()
	s := &server{
		run: cluster.StartPlugin(t, "serve", served, "-A",
			"--listen-address", addr, "--cert-dir", certDir, "--config", configFile),
		url: "https://" + addr,
		ca:  filepath.Join(certDir, queryserver.SelfSignedCertFile),
	}
	s.waitReady(t)
	checked := 0
	for _, caller := range []struct {
		kubeconfig string
		readable   []string
	}{
		{cluster.Kubeconfig, []string{"ReplicaSet", "Deployment"}},
		{kubeconfig, []string{"ReplicaSet"}},
	} {
		for _, p := range pods {
			want := chain(&p, caller.readable...)
			wantOwner := ""
			if len(want) > 0 {
				wantOwner = want[0][strings.Index(want[0], "/")+1:]
				checked++
			}
			for _, where := range []string{
				fmt.Sprintf(`owner(object).?metadata.?name.orValue("") == %q`, wantOwner),
				fmt.Sprintf(`owners(object).map(o, o.kind + "/" + o.metadata.name).join(" ") == %q`, strings.Join(want, " ")),
			} {
				r := s.query(t, caller.kubeconfig, "pods", "-n", ns, "--field-selector", "metadata.name="+p.Name, "--where", where, "-o", "name")
				if r.code != 0 || r.out != "pod/"+p.Name+"\n" {
					t.Errorf("server of %s: query of pod %s as %v, --where %s: exit %d, stdout %q, stderr %q", served, p.Name, caller.readable, where, r.code, r.out, r.errOut)
				}
			}
		}
	}
	return checked
}
