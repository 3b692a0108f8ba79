// Package helm_test installs, upgrades and uninstalls charts/kubectl-informer
// with Helm's Go SDK against a real kube-apiserver: every object the chart
// renders is created as rendered, changed by an upgrade and deleted by an
// uninstall, and its RBAC grants what the exporter reads. No node runs
// pods there: the tests check objects, not pods.
package helm_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	release "helm.sh/helm/v4/pkg/release/v1"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

var cluster *framework.Cluster

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, &cluster, installServiceMonitorCRD))
}

// installServiceMonitorCRD installs a minimal CustomResourceDefinition for
// the Prometheus Operator's monitoring.coreos.com/v1 ServiceMonitor, which
// accepts any spec: the chart renders one with prometheus.monitor.enabled.
func installServiceMonitorCRD(c *framework.Cluster) error {
	ctx, cancel := context.WithTimeout(context.Background(), framework.HangTimeout)
	defer cancel()
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "servicemonitors.monitoring.coreos.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "monitoring.coreos.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "servicemonitors", Singular: "servicemonitor", Kind: "ServiceMonitor", ListKind: "ServiceMonitorList",
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", XPreserveUnknownFields: &preserve}},
				}},
			}},
		},
	}
	if err := c.InstallCRD(ctx, crd); err != nil {
		return fmt.Errorf("installing the ServiceMonitor CRD: %w", err)
	}
	return nil
}

// chartDir is the chart in the module.
// manifestObjects returns the objects of a release's manifest.
func manifestObjects(t *testing.T, rel *release.Release) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(rel.Manifest), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("the release's manifest: %v", err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	if len(objs) == 0 {
		t.Fatal("the release has no objects")
	}
	return objs
}

// mapper maps kinds to resources through the API server's discovery, made
// once, after TestMain installed the CRD.
var (
	mapperOnce sync.Once
	mapper     meta.RESTMapper
)

// resourceFor returns the dynamic client of u's resource.
func resourceFor(t *testing.T, u *unstructured.Unstructured) dynamic.ResourceInterface {
	t.Helper()
	mapperOnce.Do(func() {
		dc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
		if err != nil {
			t.Fatal(err)
		}
		mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	})
	gvk := u.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("%s: %v", gvk, err)
	}
	client := dynamic.NewForConfigOrDie(cluster.Config).Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return client.Namespace(u.GetNamespace())
	}
	return client
}

// checkCreated checks that each object of the release exists, owned by the
// release.
func checkCreated(t *testing.T, rel *release.Release) []*unstructured.Unstructured {
	t.Helper()
	objs := manifestObjects(t, rel)
	for _, u := range objs {
		got, err := resourceFor(t, u).Get(context.Background(), u.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Errorf("%s %s/%s of the release: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
			continue
		}
		if got.GetAnnotations()["meta.helm.sh/release-name"] != rel.Name {
			t.Errorf("%s %s is not the release's: annotations %v", u.GetKind(), u.GetName(), got.GetAnnotations())
		}
	}
	return objs
}

// waitGone waits until none of objs exists any more.
func waitGone(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, u := range objs {
		r := resourceFor(t, u)
		framework.Eventually(t, fmt.Sprintf("%s %s/%s is deleted", u.GetKind(), u.GetNamespace(), u.GetName()), func() bool {
			_, err := r.Get(context.Background(), u.GetName(), metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	}
}

// checkGrants checks, with SubjectAccessReviews that the API server's RBAC
// authorizer answers, that the ServiceAccount of each ClusterRoleBinding of
// the release may list and watch each resource its ClusterRole names, and
// that each of those resources is served by the API server.
func checkGrants(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	resources, err := cluster.Client.Discovery().ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	served := map[schema.GroupResource]bool{}
	for _, list := range resources {
		gv, _ := schema.ParseGroupVersion(list.GroupVersion)
		for _, r := range list.APIResources {
			served[schema.GroupResource{Group: gv.Group, Resource: r.Name}] = true
		}
	}
	n := 0
	for _, u := range objs {
		if u.GetKind() != "ClusterRoleBinding" {
			continue
		}
		binding, err := cluster.Client.RbacV1().ClusterRoleBindings().Get(ctx, u.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		role, err := cluster.Client.RbacV1().ClusterRoles().Get(ctx, binding.RoleRef.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sa := binding.Subjects[0]
		user := "system:serviceaccount:" + sa.Namespace + ":" + sa.Name
		for _, rule := range role.Rules {
			if !slices.Contains(rule.Verbs, "watch") {
				continue
			}
			for _, group := range rule.APIGroups {
				for _, resource := range rule.Resources {
					gr := schema.GroupResource{Group: group, Resource: resource}
					if !served[gr] {
						// A resource of a newer Kubernetes may be missing;
						// one served in another group is granted wrong.
						var elsewhere []string
						for s := range served {
							if s.Resource == resource {
								elsewhere = append(elsewhere, s.String())
							}
						}
						if len(elsewhere) > 0 {
							t.Errorf("ClusterRole %s grants %s, which the API server serves as %v", role.Name, gr, elsewhere)
						} else {
							t.Logf("ClusterRole %s grants %s, which this API server does not serve", role.Name, gr)
						}
					}
					for _, verb := range []string{"list", "watch"} {
						review, err := cluster.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
							Spec: authorizationv1.SubjectAccessReviewSpec{
								User:               user,
								Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.Namespace},
								ResourceAttributes: &authorizationv1.ResourceAttributes{Group: group, Resource: resource, Verb: verb},
							},
						}, metav1.CreateOptions{})
						if err != nil {
							t.Fatal(err)
						}
						if !review.Status.Allowed {
							t.Errorf("%s may not %s %s: %s", user, verb, gr, review.Status.Reason)
						}
						n++
					}
				}
			}
		}
	}
	if n == 0 {
		t.Error("the release grants no ServiceAccount list and watch on anything")
	}
}

// ksmDefaultResources returns the resources the drop-in serves by
// default: those of the kube-state-metrics profile's files, which are
// kube-state-metrics' default --resources.
func ksmDefaultResources(t *testing.T) []string {
	t.Helper()
	files, err := profiles.Files(profiles.KubeStateMetrics)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		out = append(out, f.Resource)
	}
	if len(out) < 30 {
		t.Fatalf("the profile has %d resources: %v", len(out), out)
	}
	return out
}

func getDeployment(t *testing.T, namespace, name string) *appsv1.Deployment {
	t.Helper()
	d, err := cluster.Client.AppsV1().Deployments(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDefaultValues installs the chart's defaults, the drop-in for
// kube-state-metrics, upgrades it with other replicas and a metric denylist,
// and uninstalls it.
func TestDefaultValues(t *testing.T) {
	const name, namespace = "kube-state-metrics", "kube-system"
	rel := cluster.HelmInstall(t, name, namespace, nil)
	objs := checkCreated(t, rel)
	checkGrants(t, objs)
	d := getDeployment(t, namespace, name)
	if d.Labels["app.kubernetes.io/name"] != "kube-state-metrics" || *d.Spec.Replicas != 1 {
		t.Errorf("Deployment labels %v, replicas %d", d.Labels, *d.Spec.Replicas)
	}
	if _, err := cluster.Client.CoreV1().Services(namespace).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
		t.Errorf("the Service: %v", err)
	}

	// Every resource kube-state-metrics serves by default.
	resources := ksmDefaultResources(t)
	var collectors []any
	for _, r := range resources {
		collectors = append(collectors, r)
	}
	rel = cluster.HelmUpgrade(t, name, namespace, map[string]any{"replicas": 2, "metricDenylist": []any{"kube_secret_.*"}, "collectors": collectors})
	if rel.Version != 2 {
		t.Errorf("release version %d after the upgrade, want 2", rel.Version)
	}
	framework.Eventually(t, "the Deployment has 2 replicas, --metric-denylist and every default resource", func() bool {
		d := getDeployment(t, namespace, name)
		args := d.Spec.Template.Spec.Containers[0].Args
		return *d.Spec.Replicas == 2 && slices.Contains(args, "--metric-denylist=kube_secret_.*") &&
			slices.Contains(args, "--resources="+strings.Join(resources, ","))
	})
	checkGrants(t, manifestObjects(t, rel))

	cluster.HelmUninstall(t, name, namespace)
	waitGone(t, objs)
}

// TestKubePrometheusStackValues installs the values kube-prometheus-stack
// gives its kube-state-metrics subchart with a user's image swap, upgrades
// it to another image with the self-metrics scraped, and uninstalls it.
func TestKubePrometheusStackValues(t *testing.T) {
	const name, namespace = "kube-prometheus-stack", "monitoring"
	const fullname = name + "-kube-state-metrics"
	vals := cluster.ChartValuesFile(t, "02-kube-prometheus-stack-values.yaml")
	rel := cluster.HelmInstall(t, name, namespace, vals)
	objs := checkCreated(t, rel)
	checkGrants(t, objs)
	sm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor"}}
	sm.SetNamespace(namespace)
	smClient := resourceFor(t, sm)
	got, err := smClient.Get(context.Background(), fullname, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the ServiceMonitor: %v", err)
	}
	if got.GetLabels()["release"] != name {
		t.Errorf("ServiceMonitor labels %v lack release: %s", got.GetLabels(), name)
	}

	rel = cluster.HelmUpgrade(t, name, namespace, framework.MergeValues(vals, map[string]any{
		"image":       map[string]any{"tag": "v0.1.1"},
		"selfMonitor": map[string]any{"enabled": true},
	}))
	framework.Eventually(t, "the Deployment runs v0.1.1", func() bool {
		return getDeployment(t, namespace, fullname).Spec.Template.Spec.Containers[0].Image == "ghcr.io/kubectl-informer/kubectl-informer:v0.1.1"
	})
	framework.Eventually(t, "the ServiceMonitor scrapes the telemetry port too", func() bool {
		got, err := smClient.Get(context.Background(), fullname, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		eps, _, _ := unstructured.NestedSlice(got.Object, "spec", "endpoints")
		return len(eps) == 2
	})
	svc, err := cluster.Client.CoreV1().Services(namespace).Get(context.Background(), fullname, metav1.GetOptions{})
	if err != nil || len(svc.Spec.Ports) != 2 {
		t.Errorf("the Service after the upgrade: %v, ports %v", err, svc.Spec.Ports)
	}
	objs = append(objs, checkCreated(t, rel)...)

	cluster.HelmUninstall(t, name, namespace)
	waitGone(t, objs)
}

// TestValuesFiles installs and uninstalls the other values files of ci/:
// the export mode with the query server, and shards behind kube-rbac-proxy.
func TestValuesFiles(t *testing.T) {
	for i, file := range []string{"03-export-serve-values.yaml", "04-autosharding-kube-rbac-proxy-values.yaml"} {
		t.Run(file, func(t *testing.T) {
			name, namespace := fmt.Sprintf("release%d", i), fmt.Sprintf("values%d", i)
			rel := cluster.HelmInstall(t, name, namespace, cluster.ChartValuesFile(t, file))
			objs := checkCreated(t, rel)
			checkGrants(t, objs)
			for _, u := range objs {
				if u.GetKind() == "RoleBinding" && u.GetNamespace() == "kube-system" {
					rb, err := cluster.Client.RbacV1().RoleBindings("kube-system").Get(context.Background(), u.GetName(), metav1.GetOptions{})
					if err != nil || rb.RoleRef != (rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "extension-apiserver-authentication-reader"}) {
						t.Errorf("the query server's RoleBinding in kube-system: %v %+v", err, rb)
					}
				}
			}
			cluster.HelmUninstall(t, name, namespace)
			waitGone(t, objs)
		})
	}
}
