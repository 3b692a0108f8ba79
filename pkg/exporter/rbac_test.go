package exporter

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// testResources are resources as discovery resolves them, by the names the
// test configs give them.
var testResources = map[string]factory.Resource{
	"pods":                               {GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true},
	"po":                                 {GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true},
	"nodes":                              {GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}},
	"configmaps":                         {GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true},
	"secrets":                            {GVR: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, Namespaced: true},
	"deploy":                             {GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespaced: true},
	"replicasets.apps":                   {GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, Namespaced: true},
	"databases.demo.kubectl-informer.io": {GVR: schema.GroupVersionResource{Group: "demo.kubectl-informer.io", Version: "v1", Resource: "databases"}, Namespaced: true},
}

func compileRBACConfig(t *testing.T, resources string) *Compiled {
	t.Helper()
	data := "apiVersion: kubectl-informer.io/v1alpha1\nkind: ExporterConfig\nresources:\n" + resources
	c, err := Compile("rbac.yaml", []byte(data), testConfigEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func rule(group string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: []string{"list", "watch"}}
}

var testRBACOptions = RBACOptions{Name: "exporter", Namespace: "monitoring"}

// TestRBACClusterWide: resources watched in every namespace, cluster-scoped
// ones and those read with get() and byIndex() (also from an index
// expression), a CRD and a name kubectl resolves to a resource named
// otherwise elsewhere: one ClusterRole, one rule per group, no Role.
func TestRBACClusterWide(t *testing.T) {
	c := compileRBACConfig(t, `- resource: po
  indexes:
    byNode: object.spec.?nodeName.orValue(null)
  metrics:
  - name: pod_zone_info
    help: The zone of a pod.
    type: info
    labels:
      pod: object.metadata.name
      zone: 'has(object.spec.nodeName) ? get("nodes", object.spec.nodeName).metadata.name : ""'
- resource: deploy
  indexes:
    byConfig: 'get("configmaps", object.metadata.namespace, object.metadata.name) != null ? [object.metadata.name] : []'
- resource: databases.demo.kubectl-informer.io
  metrics:
  - name: database_pods
    help: Pods of a database.
    type: gauge
    labels:
      database: object.metadata.name
    value: size(byIndex("pods", "byNode", object.metadata.name)) + size(byIndex("replicasets.apps", "namespace", object.metadata.namespace))
`)
	if got, want := RBACResourceNames(c), []string{"configmaps", "databases.demo.kubectl-informer.io", "deploy", "nodes", "po", "pods", "replicasets.apps"}; !reflect.DeepEqual(got, want) {
		t.Errorf("RBACResourceNames: %q, want %q", got, want)
	}
	got, err := RBAC(c, testResources, testRBACOptions)
	if err != nil {
		t.Fatal(err)
	}
	if got.ClusterRole == nil || got.ClusterRoleBinding == nil {
		t.Fatalf("no ClusterRole or ClusterRoleBinding: %+v", got)
	}
	want := []rbacv1.PolicyRule{
		rule("", "configmaps", "nodes", "pods"),
		rule("apps", "deployments", "replicasets"),
		rule("demo.kubectl-informer.io", "databases"),
	}
	if diff := cmp.Diff(want, got.ClusterRole.Rules); diff != "" {
		t.Errorf("ClusterRole rules (-want +got):\n%s", diff)
	}
	if len(got.Roles) != 0 || len(got.RoleBindings) != 0 {
		t.Errorf("Roles %+v and RoleBindings %+v, want none", got.Roles, got.RoleBindings)
	}
	if b := got.ClusterRoleBinding; b.RoleRef != (rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "exporter"}) ||
		!reflect.DeepEqual(b.Subjects, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "exporter", Namespace: "monitoring"}}) {
		t.Errorf("ClusterRoleBinding %+v", b)
	}
	if sa := got.ServiceAccount; sa.Name != "exporter" || sa.Namespace != "monitoring" {
		t.Errorf("ServiceAccount %s/%s, want monitoring/exporter", sa.Namespace, sa.Name)
	}
}

// TestRBACNamespaces: a namespaced resource watched only in some namespaces
// is granted by a Role in each, and so is one read with get() from entries
// watched there only (whatever namespace the call names: get() reads the
// namespaces of its readers); a cluster-scoped one stays in the
// ClusterRole.
func TestRBACNamespaces(t *testing.T) {
	c := compileRBACConfig(t, `- resource: configmaps
  namespaces: [shop, batch]
  metrics:
  - name: configmap_info
    help: A configmap.
    type: info
    labels:
      namespace: object.metadata.namespace
      configmap: object.metadata.name
- resource: secrets
  namespaces: [shop, payments]
  metrics:
  - name: secret_info
    help: A secret.
    type: info
    labels:
      namespace: object.metadata.namespace
      secret: object.metadata.name
      type: object.type
- resource: deploy
  namespaces: [shop]
  metrics:
  - name: deployment_pod_info
    help: A deployment and the pod of its name.
    type: info
    labels:
      deployment: object.metadata.name
      pod: 'get("pods", "other", object.metadata.name) != null ? "yes" : "no"'
- resource: pods
  namespaces: [shop]
- resource: nodes
  namespaces: [shop]
  metrics:
  - name: node_info
    help: A node.
    type: info
    labels:
      node: object.metadata.name
`)
	got, err := RBAC(c, testResources, testRBACOptions)
	if err != nil {
		t.Fatal(err)
	}
	if got.ClusterRole == nil {
		t.Fatal("no ClusterRole")
	}
	if diff := cmp.Diff([]rbacv1.PolicyRule{rule("", "nodes")}, got.ClusterRole.Rules); diff != "" {
		t.Errorf("ClusterRole rules (-want +got):\n%s", diff)
	}
	wantRoles := map[string][]rbacv1.PolicyRule{
		"batch":    {rule("", "configmaps")},
		"payments": {rule("", "secrets")},
		"shop":     {rule("", "configmaps", "pods", "secrets"), rule("apps", "deployments")},
	}
	var namespaces []string
	for i, r := range got.Roles {
		namespaces = append(namespaces, r.Namespace)
		if r.Name != "exporter" {
			t.Errorf("Role %s/%s, want the name exporter", r.Namespace, r.Name)
		}
		if diff := cmp.Diff(wantRoles[r.Namespace], r.Rules); diff != "" {
			t.Errorf("Role in %s: rules (-want +got):\n%s", r.Namespace, diff)
		}
		b := got.RoleBindings[i]
		if b.Namespace != r.Namespace || b.Name != "exporter" ||
			b.RoleRef != (rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "exporter"}) ||
			!reflect.DeepEqual(b.Subjects, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "exporter", Namespace: "monitoring"}}) {
			t.Errorf("RoleBinding %+v for the Role in %s", b, r.Namespace)
		}
	}
	if want := []string{"batch", "payments", "shop"}; !reflect.DeepEqual(namespaces, want) || len(got.RoleBindings) != len(want) {
		t.Errorf("Roles in %q and %d RoleBindings, want one of each in %q", namespaces, len(got.RoleBindings), want)
	}
}

// TestRBACLookupNamespaces: a resource read only with get() and byIndex()
// is granted where the entries that read it are watched, with the
// namespaces of its own entry: by Roles when every one of them is watched
// in some namespaces only (theirs, or those DefaultNamespace gives the
// entries without any), by the ClusterRole when one watches every
// namespace or is cluster-scoped.
func TestRBACLookupNamespaces(t *testing.T) {
	const config = `- resource: pods
  namespaces: [shop, batch]
  metrics:
  - name: pod_config_info
    help: A pod and whether a configmap of its name exists.
    type: info
    labels:
      pod: object.metadata.name
      config: 'get("configmaps", object.metadata.namespace, object.metadata.name) != null ? "yes" : "no"'
- resource: deploy
  namespaces: [shop]
  metrics:
  - name: deployment_replicasets
    help: Replicasets of a deployment's namespace.
    type: gauge
    labels:
      deployment: object.metadata.name
      config: 'get("configmaps", object.metadata.namespace, "settings") != null ? "yes" : "no"'
    value: size(byIndex("replicasets.apps", "namespace", object.metadata.namespace))
- resource: replicasets.apps
  namespaces: [payments]
- resource: secrets
  metrics:
  - name: secret_info
    help: A secret and the database of its name.
    type: info
    labels:
      secret: object.metadata.name
      database: 'get("databases.demo.kubectl-informer.io", "shop", object.metadata.name) != null ? "yes" : "no"'
`
	for _, tc := range []struct {
		name      string
		namespace string
		cluster   []rbacv1.PolicyRule
		roles     map[string][]rbacv1.PolicyRule
	}{
		{
			name: "every namespace for secrets",
			// Secrets are watched everywhere, so are the databases they read.
			cluster: []rbacv1.PolicyRule{rule("", "secrets"), rule("demo.kubectl-informer.io", "databases")},
			roles: map[string][]rbacv1.PolicyRule{
				"batch":    {rule("", "configmaps", "pods")},
				"payments": {rule("apps", "replicasets")},
				"shop":     {rule("", "configmaps", "pods"), rule("apps", "deployments", "replicasets")},
			},
		},
		{
			name:      "-n audit",
			namespace: "audit",
			roles: map[string][]rbacv1.PolicyRule{
				"audit":    {rule("", "secrets"), rule("demo.kubectl-informer.io", "databases")},
				"batch":    {rule("", "configmaps", "pods")},
				"payments": {rule("apps", "replicasets")},
				"shop":     {rule("", "configmaps", "pods"), rule("apps", "deployments", "replicasets")},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := compileRBACConfig(t, config)
			DefaultNamespace(c, tc.namespace)
			got, err := RBAC(c, testResources, testRBACOptions)
			if err != nil {
				t.Fatal(err)
			}
			var cluster []rbacv1.PolicyRule
			if got.ClusterRole != nil {
				cluster = got.ClusterRole.Rules
			}
			if diff := cmp.Diff(tc.cluster, cluster); diff != "" {
				t.Errorf("ClusterRole rules (-want +got):\n%s", diff)
			}
			roles := map[string][]rbacv1.PolicyRule{}
			for _, r := range got.Roles {
				roles[r.Namespace] = r.Rules
			}
			if diff := cmp.Diff(tc.roles, roles); diff != "" {
				t.Errorf("Roles (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRBACOnlyRoles: without anything cluster-wide there is no ClusterRole,
// and the YAML is what kubectl apply -f reads, in the order of Objects.
func TestRBACOnlyRoles(t *testing.T) {
	c := compileRBACConfig(t, `- resource: pods
  namespaces: [shop]
  metrics:
  - name: pod_info
    help: A pod.
    type: info
    labels:
      pod: object.metadata.name
`)
	got, err := RBAC(c, testResources, testRBACOptions)
	if err != nil {
		t.Fatal(err)
	}
	if got.ClusterRole != nil || got.ClusterRoleBinding != nil {
		t.Errorf("ClusterRole %+v and binding %+v, want none", got.ClusterRole, got.ClusterRoleBinding)
	}
	var b bytes.Buffer
	if err := got.WriteYAML(&b); err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: v1
kind: ServiceAccount
metadata:
  labels:
    app.kubernetes.io/name: kubectl-informer
  name: exporter
  namespace: monitoring
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  labels:
    app.kubernetes.io/name: kubectl-informer
  name: exporter
  namespace: shop
rules:
- apiGroups:
  - ""
  resources:
  - pods
  verbs:
  - list
  - watch
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  labels:
    app.kubernetes.io/name: kubectl-informer
  name: exporter
  namespace: shop
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: exporter
subjects:
- kind: ServiceAccount
  name: exporter
  namespace: monitoring
`
	if b.String() != want {
		t.Errorf("YAML:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestRBACYAMLClusterRole checks the YAML of a ClusterRole and its binding.
func TestRBACYAMLClusterRole(t *testing.T) {
	c := compileRBACConfig(t, `- resource: nodes
  metrics:
  - name: node_info
    help: A node.
    type: info
    labels:
      node: object.metadata.name
`)
	got, err := RBAC(c, testResources, RBACOptions{Name: "kubectl-informer-exporter", Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := got.WriteYAML(&b); err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: v1
kind: ServiceAccount
metadata:
  labels:
    app.kubernetes.io/name: kubectl-informer
  name: kubectl-informer-exporter
  namespace: default
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  labels:
    app.kubernetes.io/name: kubectl-informer
  name: kubectl-informer-exporter
rules:
- apiGroups:
  - ""
  resources:
  - nodes
  verbs:
  - list
  - watch
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  labels:
    app.kubernetes.io/name: kubectl-informer
  name: kubectl-informer-exporter
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: kubectl-informer-exporter
subjects:
- kind: ServiceAccount
  name: kubectl-informer-exporter
  namespace: default
`
	if b.String() != want {
		t.Errorf("YAML:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestRBACErrors(t *testing.T) {
	c := compileRBACConfig(t, `- resource: pods
  metrics:
  - name: pod_node_info
    help: The node of a pod.
    type: info
    labels:
      pod: object.metadata.name
      node: 'has(object.spec.nodeName) ? get("nodes", object.spec.nodeName).metadata.name : ""'
`)
	for _, tc := range []struct {
		name     string
		resolved map[string]factory.Resource
		opts     RBACOptions
		want     string
	}{
		{"no name", testResources, RBACOptions{Namespace: "default"}, "no name"},
		{"invalid name", testResources, RBACOptions{Name: "Exporter", Namespace: "default"}, `name "Exporter"`},
		{"no namespace", testResources, RBACOptions{Name: "exporter"}, "no namespace"},
		{"invalid namespace", testResources, RBACOptions{Name: "exporter", Namespace: "a.b"}, `namespace "a.b"`},
		{"unresolved lookup", map[string]factory.Resource{"pods": testResources["pods"]}, testRBACOptions, `resource "nodes" was not resolved`},
		{"unresolved entry", map[string]factory.Resource{"nodes": testResources["nodes"]}, testRBACOptions, `resource "pods" was not resolved`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RBAC(c, tc.resolved, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("RBAC: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// fakeResolver resolves the names of testResources; "all" names two.
type fakeResolver struct{}

func (fakeResolver) Resolve(args []string) ([]factory.Resource, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("%d arguments", len(args))
	}
	if args[0] == "all" {
		return []factory.Resource{testResources["pods"], testResources["deploy"]}, nil
	}
	res, ok := testResources[args[0]]
	if !ok {
		return nil, errors.New(`the server doesn't have a resource type "` + args[0] + `"`)
	}
	return []factory.Resource{res}, nil
}

func TestResolveRBACResources(t *testing.T) {
	c := compileRBACConfig(t, `- resource: po
  metrics:
  - name: pod_node_info
    help: The node of a pod.
    type: info
    labels:
      pod: object.metadata.name
      node: 'has(object.spec.nodeName) ? get("nodes", object.spec.nodeName).metadata.name : ""'
`)
	got, err := ResolveRBACResources(c, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]factory.Resource{"po": testResources["po"], "nodes": testResources["nodes"]}; !reflect.DeepEqual(got, want) {
		t.Errorf("resolved %+v, want %+v", got, want)
	}

	c = compileRBACConfig(t, `- resource: all
- resource: podz
- resource: nodes
`)
	_, err = ResolveRBACResources(c, fakeResolver{})
	for _, want := range []string{`rbac.yaml: resource "all": names 2 resource types; name one`, `rbac.yaml: resource "podz": the server doesn't have a resource type "podz"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ResolveRBACResources: %v, want an error with %q", err, want)
		}
	}
}
