package profiles_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestServiceAccounts(t *testing.T) {
	off := false
	sa := &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "s1", CreationTimestamp: t0, DeletionTimestamp: &t0,
			Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"owner": "ops"}},
		AutomountServiceAccountToken: &off,
		Secrets:                      []corev1.ObjectReference{{Name: "web-token"}},
		ImagePullSecrets:             []corev1.LocalObjectReference{{Name: "registry"}, {Name: "mirror"}},
	}
	bare := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "default", UID: "s2"}}
	got := renderWith(t, "serviceaccounts", "serviceaccounts=[app]", "serviceaccounts=[owner]", sa, bare)
	expectWhole(t, got, `
# HELP kube_serviceaccount_info Information about a service account
# TYPE kube_serviceaccount_info gauge
kube_serviceaccount_info{namespace="shop",serviceaccount="web",uid="s1",automount_token="false"} 1
kube_serviceaccount_info{namespace="shop",serviceaccount="default",uid="s2",automount_token=""} 1
# HELP kube_serviceaccount_created Unix creation timestamp
# TYPE kube_serviceaccount_created gauge
kube_serviceaccount_created{namespace="shop",serviceaccount="web",uid="s1"} 1.7956008e+09
# HELP kube_serviceaccount_deleted Unix deletion timestamp
# TYPE kube_serviceaccount_deleted gauge
kube_serviceaccount_deleted{namespace="shop",serviceaccount="web",uid="s1"} 1.7956008e+09
# HELP kube_serviceaccount_secret Secret being referenced by a service account
# TYPE kube_serviceaccount_secret gauge
kube_serviceaccount_secret{namespace="shop",serviceaccount="web",uid="s1",name="web-token"} 1
# HELP kube_serviceaccount_image_pull_secret Secret being referenced by a service account for the purpose of pulling images
# TYPE kube_serviceaccount_image_pull_secret gauge
kube_serviceaccount_image_pull_secret{namespace="shop",serviceaccount="web",uid="s1",name="registry"} 1
kube_serviceaccount_image_pull_secret{namespace="shop",serviceaccount="web",uid="s1",name="mirror"} 1
# HELP kube_serviceaccount_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_serviceaccount_annotations gauge
kube_serviceaccount_annotations{namespace="shop",serviceaccount="web",uid="s1",annotation_owner="ops"} 1
kube_serviceaccount_annotations{namespace="shop",serviceaccount="default",uid="s2"} 1
# HELP kube_serviceaccount_labels Kubernetes labels converted to Prometheus labels.
# TYPE kube_serviceaccount_labels gauge
kube_serviceaccount_labels{namespace="shop",serviceaccount="web",uid="s1",label_app="web"} 1
kube_serviceaccount_labels{namespace="shop",serviceaccount="default",uid="s2"} 1
`)
}

func TestRolesAndBindings(t *testing.T) {
	meta := func(ns, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("u-" + name), CreationTimestamp: t0, ResourceVersion: "42",
			Labels: map[string]string{"team": "sec"}, Annotations: map[string]string{"owner": "ops"}}
	}
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}
	for _, c := range []struct {
		resource string
		obj      any
		want     string
	}{
		{"roles", &rbacv1.Role{ObjectMeta: meta("shop", "reader")}, `
# HELP kube_role_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_role_annotations gauge
kube_role_annotations{namespace="shop",role="reader",annotation_owner="ops"} 1
# HELP kube_role_labels Kubernetes labels converted to Prometheus labels.
# TYPE kube_role_labels gauge
kube_role_labels{namespace="shop",role="reader",label_team="sec"} 1
# HELP kube_role_info Information about role.
# TYPE kube_role_info gauge
kube_role_info{namespace="shop",role="reader"} 1
# HELP kube_role_created Unix creation timestamp
# TYPE kube_role_created gauge
kube_role_created{namespace="shop",role="reader"} 1.7956008e+09
# HELP kube_role_metadata_resource_version Resource version representing a specific version of the role.
# TYPE kube_role_metadata_resource_version gauge
kube_role_metadata_resource_version{namespace="shop",role="reader"} 42
`},
		{"clusterroles", &rbacv1.ClusterRole{ObjectMeta: meta("", "view")}, `
# HELP kube_clusterrole_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_clusterrole_annotations gauge
kube_clusterrole_annotations{clusterrole="view",annotation_owner="ops"} 1
# HELP kube_clusterrole_labels Kubernetes labels converted to Prometheus labels.
# TYPE kube_clusterrole_labels gauge
kube_clusterrole_labels{clusterrole="view",label_team="sec"} 1
# HELP kube_clusterrole_info Information about cluster role.
# TYPE kube_clusterrole_info gauge
kube_clusterrole_info{clusterrole="view"} 1
# HELP kube_clusterrole_created Unix creation timestamp
# TYPE kube_clusterrole_created gauge
kube_clusterrole_created{clusterrole="view"} 1.7956008e+09
# HELP kube_clusterrole_metadata_resource_version Resource version representing a specific version of the cluster role.
# TYPE kube_clusterrole_metadata_resource_version gauge
kube_clusterrole_metadata_resource_version{clusterrole="view"} 42
`},
		{"rolebindings", &rbacv1.RoleBinding{ObjectMeta: meta("shop", "readers"), RoleRef: ref}, `
# HELP kube_rolebinding_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_rolebinding_annotations gauge
kube_rolebinding_annotations{namespace="shop",rolebinding="readers",annotation_owner="ops"} 1
# HELP kube_rolebinding_labels Kubernetes labels converted to Prometheus labels.
# TYPE kube_rolebinding_labels gauge
kube_rolebinding_labels{namespace="shop",rolebinding="readers",label_team="sec"} 1
# HELP kube_rolebinding_info Information about rolebinding.
# TYPE kube_rolebinding_info gauge
kube_rolebinding_info{namespace="shop",rolebinding="readers",roleref_kind="ClusterRole",roleref_name="view"} 1
# HELP kube_rolebinding_created Unix creation timestamp
# TYPE kube_rolebinding_created gauge
kube_rolebinding_created{namespace="shop",rolebinding="readers"} 1.7956008e+09
# HELP kube_rolebinding_metadata_resource_version Resource version representing a specific version of the rolebinding.
# TYPE kube_rolebinding_metadata_resource_version gauge
kube_rolebinding_metadata_resource_version{namespace="shop",rolebinding="readers"} 42
`},
		{"clusterrolebindings", &rbacv1.ClusterRoleBinding{ObjectMeta: meta("", "viewers"), RoleRef: ref}, `
# HELP kube_clusterrolebinding_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_clusterrolebinding_annotations gauge
kube_clusterrolebinding_annotations{clusterrolebinding="viewers",annotation_owner="ops"} 1
# HELP kube_clusterrolebinding_labels Kubernetes labels converted to Prometheus labels.
# TYPE kube_clusterrolebinding_labels gauge
kube_clusterrolebinding_labels{clusterrolebinding="viewers",label_team="sec"} 1
# HELP kube_clusterrolebinding_info Information about clusterrolebinding.
# TYPE kube_clusterrolebinding_info gauge
kube_clusterrolebinding_info{clusterrolebinding="viewers",roleref_kind="ClusterRole",roleref_name="view"} 1
# HELP kube_clusterrolebinding_created Unix creation timestamp
# TYPE kube_clusterrolebinding_created gauge
kube_clusterrolebinding_created{clusterrolebinding="viewers"} 1.7956008e+09
# HELP kube_clusterrolebinding_metadata_resource_version Resource version representing a specific version of the clusterrolebinding.
# TYPE kube_clusterrolebinding_metadata_resource_version gauge
kube_clusterrolebinding_metadata_resource_version{clusterrolebinding="viewers"} 42
`},
	} {
		t.Run(c.resource, func(t *testing.T) {
			expectWhole(t, renderWith(t, c.resource, c.resource+"=[team]", c.resource+"=[owner]", c.obj), c.want)
		})
	}
}
