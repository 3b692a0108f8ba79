package serve_test

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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
	cluster.CreatePod(t, ns, "lone", nil)
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
