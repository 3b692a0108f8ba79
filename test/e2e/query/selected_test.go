package query_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// createSelectors creates in ns pods of several labels, Deployments whose
// selectors are matchLabels, matchExpressions with In, and with NotIn or
// Exists only, one that selects no pod, and a Service. No controller runs:
// the Deployments create no pods.
func createSelectors(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	for i := range 12 {
		app := []string{"web", "api", "db"}[i%3]
		tier := []string{"front", "back"}[i%2]
		l := map[string]string{"app": app, "tier": tier}
		if i%4 == 0 {
			l["canary"] = "true"
		}
		cluster.CreatePod(t, ns, fmt.Sprintf("%s-%02d", app, i), l)
	}
	cluster.CreatePod(t, ns, "bare", nil)
	expr := func(key string, op metav1.LabelSelectorOperator, values ...string) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: values}
	}
	selectors := map[string]*metav1.LabelSelector{
		"match-labels": {MatchLabels: map[string]string{"app": "web", "tier": "front"}},
		"in":           {MatchExpressions: []metav1.LabelSelectorRequirement{expr("app", metav1.LabelSelectorOpIn, "web", "api"), expr("tier", metav1.LabelSelectorOpIn, "back")}},
		"in-notin":     {MatchLabels: map[string]string{"tier": "front"}, MatchExpressions: []metav1.LabelSelectorRequirement{expr("app", metav1.LabelSelectorOpNotIn, "db")}},
		"notin":        {MatchExpressions: []metav1.LabelSelectorRequirement{expr("app", metav1.LabelSelectorOpNotIn, "web")}},
		"exists":       {MatchExpressions: []metav1.LabelSelectorRequirement{expr("canary", metav1.LabelSelectorOpExists)}},
		"not-exists":   {MatchExpressions: []metav1.LabelSelectorRequirement{expr("canary", metav1.LabelSelectorOpDoesNotExist), expr("app", metav1.LabelSelectorOpNotIn, "api")}},
		"none":         {MatchLabels: map[string]string{"app": "none"}},
	}
	for name, sel := range selectors {
		// A template the selector selects, as the API requires.
		tl := map[string]string{}
		for k, v := range sel.MatchLabels {
			tl[k] = v
		}
		for _, r := range sel.MatchExpressions {
			switch r.Operator {
			case metav1.LabelSelectorOpIn:
				tl[r.Key] = r.Values[0]
			case metav1.LabelSelectorOpExists:
				tl[r.Key] = "true"
			}
		}
		zero := int32(0)
		if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
			// Labelled app as the workload's objects are, which other tests read.
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
			Spec: appsv1.DeploymentSpec{Replicas: &zero, Selector: sel, Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: tl},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
			}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("deployment %s: %v", name, err)
		}
	}
	if _, err := cluster.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "api-back", Labels: map[string]string{"app": "api"}},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "api", "tier": "back"}, Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// apiSelected returns, for each Deployment and Service of ns (as
// KIND/NAME), the names of the pods the API server lists with its
// selector, sorted and joined with ",", "-" for none.
func apiSelected(t *testing.T, ns string) map[string]string {
	t.Helper()
	ctx := context.Background()
	c := cluster.Client
	selected := func(sel labels.Selector) string {
		t.Helper()
		pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range pods.Items {
			names = append(names, p.Name)
		}
		sort.Strings(names)
		return orDash(names)
	}
	out := map[string]string{}
	deps, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps.Items {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			t.Fatal(err)
		}
		out["deployment.apps/"+d.Name] = selected(sel)
	}
	svcs, err := c.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range svcs.Items {
		out["service/"+s.Name] = selected(labels.SelectorFromSet(s.Spec.Selector))
	}
	return out
}

// TestRelationSelectedAsTheAPIServer: selected() of Deployments and a
// Service answers the pods the API server lists with their selectors, in a
// query, in the later queries of an interactive session, and in a watch,
// which answers again when a pod comes to be selected.
func TestRelationSelectedAsTheAPIServer(t *testing.T) {
	ns := cluster.NewNamespace(t, "selected")
	createSelectors(t, ns)
	want := apiSelected(t, ns)
	if len(want) != 8 || want["deployment.apps/none"] != "-" {
		t.Fatalf("the API lists %v: want 7 Deployments, one selecting nothing, and a Service", want)
	}

	out := query(t, "deploy,svc", "-n", ns, "--no-headers",
		"--columns", "pods="+dash(`selected(object, "pods").map(p, p.metadata.name)`)).ok(t)
	got := fieldsOf(out, 1)
	for kn, w := range want {
		if g := got[kn]; len(g) != 1 || g[0] != w {
			t.Errorf("%s: selected pods %v, the API server selects %s\n%s", kn, g, w, out)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d objects answered, the API lists %d\n%s", len(got), len(want), out)
	}

	// An interactive session: its caches have the label index.
	var some []string
	for kn, w := range want {
		if w != "-" {
			some = append(some, kn)
		}
	}
	sort.Strings(some)
	in := strings.NewReader("selected(object, \"pods\").size() > 0\n")
	code, iout, errOut := framework.RunPlugin(context.Background(), in, "query", "--kubeconfig", cluster.Kubeconfig, "deploy,svc,pods", "-n", ns, "-i", "--no-headers")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, iout, errOut)
	}
	var answered []string
	for _, l := range lines(iout) {
		if f := strings.Fields(l); len(f) > 0 {
			answered = append(answered, f[0])
		}
	}
	sort.Strings(answered)
	if strings.Join(answered, ",") != strings.Join(some, ",") {
		t.Errorf("interactive: answers %v, want %v\n%s\n%s", answered, some, iout, errOut)
	}

	// A watch of the count of objects selecting some pod: a pod labelled
	// app=none comes to be selected by the Deployment none.
	count := func(sel map[string]string) string {
		n := 0
		for _, w := range sel {
			if w != "-" {
				n++
			}
		}
		return fmt.Sprint(n)
	}
	run := cluster.StartPlugin(t, "query", "deploy,svc", "-n", ns, "--count", "-w", "--where", `selected(object, "pods").size() > 0`)
	run.WaitLines(t, 1)
	if l := framework.Lines(run.Out.String()); l[0] != count(want) {
		t.Fatalf("watch: first answer %q, the API server's selections give %s", l[0], count(want))
	}
	cluster.CreatePod(t, ns, "none-0", map[string]string{"app": "none"})
	want = apiSelected(t, ns)
	if want["deployment.apps/none"] == "-" {
		t.Fatalf("the API server selects no pod of deployment none: %v", want)
	}
	framework.Eventually(t, "the count once deployment none selects a pod", func() bool {
		l := framework.Lines(run.Out.String())
		return l[len(l)-1] == count(want)
	})
}
