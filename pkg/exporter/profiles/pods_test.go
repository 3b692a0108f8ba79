package profiles_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodInfoPhaseRestarts(t *testing.T) {
	controller := true
	running := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "u1",
			OwnerReferences: []metav1.OwnerReference{
				{Kind: "Node", Name: "n0"},
				{Kind: "ReplicaSet", Name: "web-7d4", Controller: &controller},
			}},
		Spec: corev1.PodSpec{NodeName: "node-1", PriorityClassName: "high", HostNetwork: true},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.1", PodIP: "10.1.0.5",
			ContainerStatuses:     []corev1.ContainerStatus{{Name: "app", RestartCount: 3}, {Name: "sidecar"}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", RestartCount: 9}}},
	}
	noPhase := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "bare", UID: "u2"}}
	got := render(t, "pods", running, noPhase)
	expectFamilies(t, got, `
# HELP kube_pod_info [STABLE] Information about pod.
# TYPE kube_pod_info gauge
kube_pod_info{namespace="shop",pod="web-1",uid="u1",host_ip="10.0.0.1",pod_ip="10.1.0.5",node="node-1",created_by_kind="ReplicaSet",created_by_name="web-7d4",priority_class="high",host_network="true"} 1
kube_pod_info{namespace="shop",pod="bare",uid="u2",host_ip="",pod_ip="",node="",created_by_kind="",created_by_name="",priority_class="",host_network="false"} 1
# HELP kube_pod_status_phase [STABLE] The pods current phase.
# TYPE kube_pod_status_phase gauge
kube_pod_status_phase{namespace="shop",pod="web-1",uid="u1",phase="Pending"} 0
kube_pod_status_phase{namespace="shop",pod="web-1",uid="u1",phase="Succeeded"} 0
kube_pod_status_phase{namespace="shop",pod="web-1",uid="u1",phase="Failed"} 0
kube_pod_status_phase{namespace="shop",pod="web-1",uid="u1",phase="Unknown"} 0
kube_pod_status_phase{namespace="shop",pod="web-1",uid="u1",phase="Running"} 1
# HELP kube_pod_container_status_restarts_total [STABLE] The number of container restarts per container.
# TYPE kube_pod_container_status_restarts_total counter
kube_pod_container_status_restarts_total{namespace="shop",pod="web-1",uid="u1",container="app"} 3
kube_pod_container_status_restarts_total{namespace="shop",pod="web-1",uid="u1",container="sidecar"} 0
`)
}
