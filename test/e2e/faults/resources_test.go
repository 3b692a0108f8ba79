package faults_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var widgets = schema.GroupVersionResource{Group: "faults.kubectl-informer.io", Version: "v1", Resource: "widgets"}

// TestExporterCRDDeleted deletes the CRD of a resource a running exporter
// exports, beside pods. The custom objects' series go away with them; the
// resource is reported failing (not found) in the logs, in
// kubectl_informer_resource_healthy and in the body of /readyz, which stays
// 200: the pods' series keep following the pods. Once the CRD and custom
// objects are created again, the resource recovers and their series come
// back.
func TestExporterCRDDeleted(t *testing.T) {
	ext, err := apiextensionsclient.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	createCRD(t, ext)
	t.Cleanup(func() {
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), widgets.GroupResource().String(), metav1.DeleteOptions{})
	})
	ns := cluster.NewNamespace(t, "crd")
	cluster.CreatePod(t, ns, "p1", nil)
	createWidget(t, dyn, ns, "w1")
	createWidget(t, dyn, ns, "w2")
	x, url := startExporter(t, `- resource: pods
  namespaces: [`+ns+`]
  metrics:
  - name: test_pod_info
    help: One series per pod.
    type: gauge
    labels:
      pod: object.metadata.name
- resource: widgets.faults.kubectl-informer.io
  namespaces: [`+ns+`]
  metrics:
  - name: test_widget_info
    help: One series per widget.
    type: gauge
    labels:
      widget: object.metadata.name
`)
	waitSeries(t, x, url, "test_pod_info", `{pod="p1"}`)
	waitSeries(t, x, url, "test_widget_info", `{widget="w1"}`, `{widget="w2"}`)

	if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), widgets.GroupResource().String(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSeries(t, x, url, "test_widget_info")
	name := "widgets.faults.kubectl-informer.io in " + ns
	failing := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `: (list|watch) failing for \d+s: .*the resource type is no longer served`)
	widgetLabels := fmt.Sprintf(`namespace=%q,resource="widgets.faults.kubectl-informer.io"`, ns)
	podLabels := fmt.Sprintf(`namespace=%q,resource="pods"`, ns)
	waitFor(t, x, "/readyz to answer 200 naming the widgets", func() bool {
		code, body := get(url + "/readyz")
		return code == http.StatusOK && strings.HasPrefix(body, "ok") && failing.MatchString(body)
	})
	_, readyz := get(url + "/readyz")
	t.Logf("/readyz with the CRD deleted:\n%s", readyz)
	if v := telemetry(url, "resource_healthy", widgetLabels); v != 0 {
		t.Errorf("kubectl_informer_resource_healthy{%s} = %v with the CRD deleted, want 0", widgetLabels, v)
	}
	if v := telemetry(url, "resource_healthy", podLabels); v != 1 {
		t.Errorf("kubectl_informer_resource_healthy{%s} = %v, want 1", podLabels, v)
	}
	waitFor(t, x, "the failing widgets to be logged", func() bool {
		return strings.Contains(x.ErrOut.String(), `resource="`+name+`"`)
	})

	// The pods' series follow the pods.
	cluster.CreatePod(t, ns, "p2", nil)
	waitSeries(t, x, url, "test_pod_info", `{pod="p1"}`, `{pod="p2"}`)

	createCRD(t, ext)
	retry(t, "creating a widget", func(ctx context.Context) error { return created(postWidget(ctx, dyn, ns, "w3")) })
	// The reflector retries with a backoff of up to 30 s.
	waitSeries(t, x, url, "test_widget_info", `{widget="w3"}`)
	waitFor(t, x, "/readyz to answer 200 ok", func() bool {
		code, body := get(url + "/readyz")
		return code == http.StatusOK && body == "ok\n"
	})
	if v := telemetry(url, "resource_healthy", widgetLabels); v != 1 {
		t.Errorf("kubectl_informer_resource_healthy{%s} = %v once the CRD is back, want 1", widgetLabels, v)
	}
	if code := x.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, x.ErrOut)
	}
}

// TestExporterForbidden runs the exporter as a user that RBAC lets list and
// watch pods and configmaps, then takes configmaps away. Open watches
// outlive RBAC changes: a restart of the API server makes the informers
// list and watch again. Configmaps are then reported forbidden (in
// /readyz, which stays 200, in kubectl_informer_resource_healthy and
// kubectl_informer_list_request_errors_total) while the pods' series keep
// following the pods. Once the rule is back, the configmaps' series catch
// up with what changed meanwhile.
func TestExporterForbidden(t *testing.T) {
	ctx := context.Background()
	kubeconfig, _ := cluster.AddUserAllowed(t, "faults-exporter",
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}})
	rbac := cluster.Client.RbacV1()
	role, err := rbac.ClusterRoles().Get(ctx, "faults-exporter", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	ns := cluster.NewNamespace(t, "forbidden")
	cluster.CreatePod(t, ns, "p1", nil)
	createConfigMap(t, ns, "c1")
	x, url := startExporter(t, `- resource: pods
  namespaces: [`+ns+`]
  metrics:
  - name: test_pod_info
    help: One series per pod.
    type: gauge
    labels:
      pod: object.metadata.name
- resource: configmaps
  namespaces: [`+ns+`]
  metrics:
  - name: test_configmap_info
    help: One series per configmap.
    type: gauge
    labels:
      configmap: object.metadata.name
`, "--kubeconfig", kubeconfig)
	waitSeries(t, x, url, "test_pod_info", `{pod="p1"}`)
	waitSeries(t, x, url, "test_configmap_info", `{configmap="c1"}`)
	cmLabels := fmt.Sprintf(`namespace=%q,resource="configmaps"`, ns)
	podLabels := fmt.Sprintf(`namespace=%q,resource="pods"`, ns)

	role.Rules = role.Rules[:1]
	if role, err = rbac.ClusterRoles().Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.RestartAPIServer(nil); err != nil {
		t.Fatal(err)
	}
	failing := regexp.MustCompile(`(?m)^configmaps in ` + ns + `: (list|watch) failing for \d+s: configmaps is forbidden: User "faults-exporter" cannot (list|watch) resource "configmaps"`)
	waitFor(t, x, "/readyz to answer 200 naming configmaps, forbidden, and only them", func() bool {
		code, body := get(url + "/readyz")
		return code == http.StatusOK && failing.MatchString(body) && !strings.Contains(body, "pods in")
	})
	_, readyz := get(url + "/readyz")
	t.Logf("/readyz with configmaps forbidden:\n%s", readyz)
	if v := telemetry(url, "resource_healthy", cmLabels); v != 0 {
		t.Errorf("kubectl_informer_resource_healthy{%s} = %v with configmaps forbidden, want 0", cmLabels, v)
	}
	waitFor(t, x, "a failed list of configmaps to be counted", func() bool {
		return telemetry(url, "list_request_errors_total", cmLabels) > 0
	})
	if v := telemetry(url, "resource_healthy", podLabels); v != 1 {
		t.Errorf("kubectl_informer_resource_healthy{%s} = %v, want 1", podLabels, v)
	}
	waitFor(t, x, "the forbidden configmaps to be logged", func() bool {
		return strings.Contains(x.ErrOut.String(), `resource="configmaps in `+ns+`"`) && strings.Contains(x.ErrOut.String(), "forbidden")
	})

	// The pods' series follow the pods; the configmaps' stay as last seen.
	cluster.CreatePod(t, ns, "p2", nil)
	createConfigMap(t, ns, "c2")
	waitSeries(t, x, url, "test_pod_info", `{pod="p1"}`, `{pod="p2"}`)
	waitSeries(t, x, url, "test_configmap_info", `{configmap="c1"}`)

	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}})
	if _, err := rbac.ClusterRoles().Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The reflector retries with a backoff of up to 30 s.
	waitSeries(t, x, url, "test_configmap_info", `{configmap="c1"}`, `{configmap="c2"}`)
	waitFor(t, x, "/readyz to answer 200 ok", func() bool {
		code, body := get(url + "/readyz")
		return code == http.StatusOK && body == "ok\n"
	})
	if v := telemetry(url, "resource_healthy", cmLabels); v != 1 {
		t.Errorf("kubectl_informer_resource_healthy{%s} = %v once allowed again, want 1", cmLabels, v)
	}
	if code := x.Stop(t); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, x.ErrOut)
	}
}

// createCRD creates the CRD of widgets and waits until it is established.
func createCRD(t *testing.T, ext apiextensionsclient.Interface) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: widgets.GroupResource().String()},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: widgets.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: widgets.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", XPreserveUnknownFields: ptr(true)},
					},
				}},
			}},
		},
	}
	// Creating it again just after a deletion may find the old one still
	// there, terminating.
	retry(t, "creating the CRD", func(ctx context.Context) error {
		_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
		return err
	})
	retry(t, "waiting for the CRD to be established", func(ctx context.Context) error {
		got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("not established: %v", got.Status.Conditions)
	})
}

func createWidget(t *testing.T, dyn dynamic.Interface, ns, name string) {
	t.Helper()
	retry(t, "creating widget "+name, func(ctx context.Context) error { return created(postWidget(ctx, dyn, ns, name)) })
}

func postWidget(ctx context.Context, dyn dynamic.Interface, ns, name string) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": widgets.GroupVersion().String(),
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       map[string]any{"size": int64(1)},
	}}
	_, err := dyn.Resource(widgets).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
	return err
}

func createConfigMap(t *testing.T, ns, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"k": "v"}}
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }
