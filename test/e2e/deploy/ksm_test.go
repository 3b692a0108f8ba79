package deploy_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// ksmArgs are the arguments of the exporter in deploy/kube-state-metrics.
var ksmArgs = []string{"export", "--profile=" + profiles.KubeStateMetrics, "--web.listen-address=:10149"}

// profileResources returns the profile's resources as the API server
// names them, resource.group (the resource alone in the core group),
// sorted.
func profileResources(t *testing.T) []string {
	t.Helper()
	files, err := profiles.Files(profiles.KubeStateMetrics)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cluster.Kubectl("api-resources", "-o", "name")
	if err != nil {
		t.Fatalf("kubectl api-resources: %v\n%s", err, out)
	}
	byName := map[string]string{}
	for _, l := range strings.Fields(out) {
		name, _, _ := strings.Cut(l, ".")
		byName[name] = l
	}
	var want []string
	for _, f := range files {
		if !f.Default {
			continue
		}
		q, ok := byName[f.Resource]
		if !ok {
			t.Fatalf("the API server has no resource %q of the profile", f.Resource)
		}
		want = append(want, q)
	}
	slices.Sort(want)
	return want
}

// checkKubeStateMetricsRendering checks the overlay that replaces
// kube-state-metrics, on the objects as the server admitted them: the
// base's pod with the profile's arguments and no config, and a ClusterRole
// that grants list and watch, nothing else, on every resource of the
// profile.
func checkKubeStateMetricsRendering(t *testing.T, r rendering) {
	t.Helper()
	for _, u := range r.admitted {
		switch u.GetKind() {
		case "ClusterRole":
			var cr rbacv1.ClusterRole
			fromUnstructured(t, u, &cr)
			granted := map[string]bool{}
			for _, rule := range cr.Rules {
				if !slices.Equal(slices.Sorted(slices.Values(rule.Verbs)), []string{"list", "watch"}) || len(rule.NonResourceURLs)+len(rule.ResourceNames) > 0 {
					t.Errorf("ClusterRole %s has rule %+v, want list and watch on plain resources", cr.Name, rule)
				}
				for _, g := range rule.APIGroups {
					for _, res := range rule.Resources {
						granted[qualified(res, g)] = true
					}
				}
			}
			if got, want := keys(granted), profileResources(t); !slices.Equal(got, want) {
				t.Errorf("ClusterRole %s grants list and watch on %v; the profile reads %v", cr.Name, got, want)
			}
		case "Deployment":
			var d appsv1.Deployment
			fromUnstructured(t, u, &d)
			pod := exporterPod
			pod.noConfig = true
			checkPodTemplate(t, "Deployment "+d.Name, &d.Spec.Template, pod)
			if args := d.Spec.Template.Spec.Containers[0].Args; !slices.Equal(args, ksmArgs) {
				t.Errorf("Deployment %s: args %q, want %q", d.Name, args, ksmArgs)
			}
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.ConfigMap != nil {
					t.Errorf("Deployment %s mounts ConfigMap %s; the profile needs no config", d.Name, v.ConfigMap.Name)
				}
			}
		case "Service":
			var s corev1.Service
			fromUnstructured(t, u, &s)
			checkMetricsService(t, &s)
		case "ServiceMonitor":
			checkServiceMonitor(t, u, r)
		case "Namespace":
			if got := u.GetLabels()["pod-security.kubernetes.io/enforce"]; got != "restricted" {
				t.Errorf("Namespace %s enforces the Pod Security Standard %q, want restricted", u.GetName(), got)
			}
		}
	}
}

// TestDeployKubeStateMetricsServes grants a ServiceAccount exactly the
// rules of deploy/kube-state-metrics' ClusterRole, runs the exporter with
// the Deployment's arguments as that ServiceAccount, and checks that it
// gets ready with every resource of the profile synced: the RBAC the
// overlay ships covers all that the profile watches.
func TestDeployKubeStateMetricsServes(t *testing.T) {
	r := renderAndDryRun(t, cluster.Root+"/deploy/kube-state-metrics")
	var role *rbacv1.ClusterRole
	var args []string
	for _, u := range r.admitted {
		switch u.GetKind() {
		case "ClusterRole":
			role = &rbacv1.ClusterRole{}
			fromUnstructured(t, u, role)
		case "Deployment":
			var d appsv1.Deployment
			fromUnstructured(t, u, &d)
			args = d.Spec.Template.Spec.Containers[0].Args
		}
	}
	if role == nil || args == nil {
		t.Fatal("deploy/kube-state-metrics renders no ClusterRole or no Deployment")
	}
	// The rendered rules, under names of the test's own, so that no
	// other test sees them.
	ctx := context.Background()
	const name = "ksm-replacement"
	client := cluster.Client
	if _, err := client.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: role.Rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	addr := framework.ClosedPort(t)
	var run []string
	for _, a := range args {
		if strings.HasPrefix(a, "--web.listen-address=") {
			a = "--web.listen-address=" + addr
		}
		run = append(run, a)
	}
	x := cluster.StartPlugin(t, append(run, "--as", serviceAccountUser(namespace, name))...)
	url := "http://" + addr
	framework.WaitReady(t, url)
	mfs := framework.Scrape(t, url)
	synced := map[string]bool{}
	for _, m := range mfs["kubectl_informer_resource_synced"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "resource" && framework.SampleValue(m) == 1 {
				synced[l.GetValue()] = true
			}
		}
	}
	for _, res := range profileResources(t) {
		if !synced[res] {
			t.Errorf("%s is not synced as %s; synced: %v", res, name, keys(synced))
		}
	}
	if code := x.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, x.ErrOut)
	}
	if strings.Contains(x.ErrOut.String(), "forbidden") {
		t.Errorf("the exporter logged a forbidden request:\n%s", x.ErrOut)
	}
}
