package profiles_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNamespaces(t *testing.T) {
	shop := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", UID: "n1", CreationTimestamp: t0,
			Labels:      map[string]string{"team": "payments", "kubernetes.io/metadata.name": "shop"},
			Annotations: map[string]string{"owner": "ops", "note": "not allowed"}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
	leaving := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "leaving", UID: "n2", CreationTimestamp: t0},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating, Conditions: []corev1.NamespaceCondition{
			{Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionTrue},
			{Type: corev1.NamespaceFinalizersRemaining, Status: corev1.ConditionUnknown},
		}},
	}
	// No creation time and no phase, as an object written by hand may be.
	bare := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bare", UID: "n3"}}
	got := renderWith(t, "namespaces", "namespaces=[team]", "namespaces=[owner]", shop, leaving, bare)
	expectFamilies(t, got, `
# HELP kube_namespace_created [STABLE] Unix creation timestamp
# TYPE kube_namespace_created gauge
kube_namespace_created{namespace="shop"} 1.7956008e+09
kube_namespace_created{namespace="leaving"} 1.7956008e+09
# HELP kube_namespace_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_namespace_annotations gauge
kube_namespace_annotations{namespace="shop",annotation_owner="ops"} 1
kube_namespace_annotations{namespace="leaving"} 1
kube_namespace_annotations{namespace="bare"} 1
# HELP kube_namespace_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_namespace_labels gauge
kube_namespace_labels{namespace="shop",label_team="payments"} 1
kube_namespace_labels{namespace="leaving"} 1
kube_namespace_labels{namespace="bare"} 1
# HELP kube_namespace_status_phase [STABLE] kubernetes namespace status phase.
# TYPE kube_namespace_status_phase gauge
kube_namespace_status_phase{namespace="shop",phase="Active"} 1
kube_namespace_status_phase{namespace="shop",phase="Terminating"} 0
kube_namespace_status_phase{namespace="leaving",phase="Active"} 0
kube_namespace_status_phase{namespace="leaving",phase="Terminating"} 1
kube_namespace_status_phase{namespace="bare",phase="Active"} 0
kube_namespace_status_phase{namespace="bare",phase="Terminating"} 0
# HELP kube_namespace_status_condition The condition of a namespace.
# TYPE kube_namespace_status_condition gauge
kube_namespace_status_condition{namespace="leaving",condition="NamespaceDeletionContentFailure",status="true"} 1
kube_namespace_status_condition{namespace="leaving",condition="NamespaceDeletionContentFailure",status="false"} 0
kube_namespace_status_condition{namespace="leaving",condition="NamespaceDeletionContentFailure",status="unknown"} 0
kube_namespace_status_condition{namespace="leaving",condition="NamespaceFinalizersRemaining",status="true"} 0
kube_namespace_status_condition{namespace="leaving",condition="NamespaceFinalizersRemaining",status="false"} 0
kube_namespace_status_condition{namespace="leaving",condition="NamespaceFinalizersRemaining",status="unknown"} 1
`)

	// Without allowlists, the labels and annotations families have no
	// series, as kube-state-metrics' have none.
	expectFamilies(t, render(t, "namespaces", shop), `
# HELP kube_namespace_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_namespace_annotations gauge
# HELP kube_namespace_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_namespace_labels gauge
`)
}
