package profiles_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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

func TestPodOwnerReadyReason(t *testing.T) {
	yes, no := true, false
	owned := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "a", UID: "u1",
			OwnerReferences: []metav1.OwnerReference{
				{Kind: "ReplicaSet", Name: "web-7d4", Controller: &yes},
				{Kind: "Node", Name: "n0", Controller: &no},
				{Kind: "ConfigMap", Name: "c"},
			}},
		Status: corev1.PodStatus{
			Reason: "Evicted",
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "NodeLost"},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Shutdown"}}},
			},
		},
	}
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "b", UID: "u2"},
		Status: corev1.PodStatus{Reason: "OutOfcpu", Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionUnknown}}}}
	ready := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "c", UID: "u3"},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	got := render(t, "pods", owned, bare, ready)
	expectFamilies(t, got, `
# HELP kube_pod_owner [STABLE] Information about the Pod's owner.
# TYPE kube_pod_owner gauge
kube_pod_owner{namespace="shop",pod="a",uid="u1",owner_kind="ReplicaSet",owner_name="web-7d4",owner_is_controller="true"} 1
kube_pod_owner{namespace="shop",pod="a",uid="u1",owner_kind="Node",owner_name="n0",owner_is_controller="false"} 1
kube_pod_owner{namespace="shop",pod="a",uid="u1",owner_kind="ConfigMap",owner_name="c",owner_is_controller="false"} 1
kube_pod_owner{namespace="shop",pod="b",uid="u2",owner_kind="",owner_name="",owner_is_controller=""} 1
kube_pod_owner{namespace="shop",pod="c",uid="u3",owner_kind="",owner_name="",owner_is_controller=""} 1
# HELP kube_pod_status_ready [STABLE] Describes whether the pod is ready to serve requests.
# TYPE kube_pod_status_ready gauge
kube_pod_status_ready{namespace="shop",pod="a",uid="u1",condition="true"} 0
kube_pod_status_ready{namespace="shop",pod="a",uid="u1",condition="false"} 1
kube_pod_status_ready{namespace="shop",pod="a",uid="u1",condition="unknown"} 0
kube_pod_status_ready{namespace="shop",pod="b",uid="u2",condition="true"} 0
kube_pod_status_ready{namespace="shop",pod="b",uid="u2",condition="false"} 0
kube_pod_status_ready{namespace="shop",pod="b",uid="u2",condition="unknown"} 1
kube_pod_status_ready{namespace="shop",pod="c",uid="u3",condition="true"} 1
kube_pod_status_ready{namespace="shop",pod="c",uid="u3",condition="false"} 0
kube_pod_status_ready{namespace="shop",pod="c",uid="u3",condition="unknown"} 0
# HELP kube_pod_status_reason The pod status reasons
# TYPE kube_pod_status_reason gauge
kube_pod_status_reason{namespace="shop",pod="a",uid="u1",reason="Evicted"} 1
kube_pod_status_reason{namespace="shop",pod="a",uid="u1",reason="NodeLost"} 1
kube_pod_status_reason{namespace="shop",pod="a",uid="u1",reason="Shutdown"} 1
kube_pod_status_reason{namespace="shop",pod="b",uid="u2",reason="Other"} 1
`)
}

func TestPodContainers(t *testing.T) {
	q := resource.MustParse
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "a", UID: "u1"},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{
			{Name: "app", Image: "web:1", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"cpu": q("100m"), "memory": q("1.5Gi"), "ephemeral-storage": q("1G"),
					"hugepages-2Mi": q("4Mi"), "nvidia.com/gpu": q("1"), "example.kubernetes.io/x": q("1"), "attachable-volumes-aws-ebs": q("3")},
				Limits: corev1.ResourceList{"cpu": q("2"), "memory": q("129e6")},
			}},
			{Name: "proxy", Image: "envoy:2", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("1500u")}}},
			{Name: "nostatus", Image: "x"},
		}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
			{Name: "proxy", Image: "docker.io/envoy:2", ImageID: "sha256:e", ContainerID: "containerd://p",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}},
			{Name: "app", Image: "docker.io/web:1", ImageID: "sha256:w", ContainerID: "containerd://a",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			{Name: "ghost", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}},
		}},
	}
	got := render(t, "pods", pod)
	expectFamilies(t, got, `
# HELP kube_pod_container_info [STABLE] Information about a container in a pod.
# TYPE kube_pod_container_info gauge
kube_pod_container_info{namespace="shop",pod="a",uid="u1",container="app",image_spec="web:1",image="docker.io/web:1",image_id="sha256:w",container_id="containerd://a"} 1
kube_pod_container_info{namespace="shop",pod="a",uid="u1",container="proxy",image_spec="envoy:2",image="docker.io/envoy:2",image_id="sha256:e",container_id="containerd://p"} 1
# HELP kube_pod_container_resource_requests [STABLE] The number of requested request resource by a container. It is recommended to use the kube_pod_resource_requests metric exposed by kube-scheduler instead, as it is more precise.
# TYPE kube_pod_container_resource_requests gauge
kube_pod_container_resource_requests{namespace="shop",pod="a",uid="u1",container="app",node="node-1",resource="cpu",unit="core"} 0.1
kube_pod_container_resource_requests{namespace="shop",pod="a",uid="u1",container="app",node="node-1",resource="memory",unit="byte"} 1.610612736e+09
kube_pod_container_resource_requests{namespace="shop",pod="a",uid="u1",container="app",node="node-1",resource="ephemeral_storage",unit="byte"} 1e+09
kube_pod_container_resource_requests{namespace="shop",pod="a",uid="u1",container="app",node="node-1",resource="hugepages_2Mi",unit="byte"} 4.194304e+06
kube_pod_container_resource_requests{namespace="shop",pod="a",uid="u1",container="app",node="node-1",resource="nvidia_com_gpu",unit="integer"} 1
kube_pod_container_resource_requests{namespace="shop",pod="a",uid="u1",container="app",node="node-1",resource="attachable_volumes_aws_ebs",unit="byte"} 3
kube_pod_container_resource_requests{namespace="shop",pod="a",uid="u1",container="proxy",node="node-1",resource="cpu",unit="core"} 0.002
# HELP kube_pod_container_resource_limits [STABLE] The number of requested limit resource by a container. It is recommended to use the kube_pod_resource_limits metric exposed by kube-scheduler instead, as it is more precise.
# TYPE kube_pod_container_resource_limits gauge
kube_pod_container_resource_limits{namespace="shop",pod="a",uid="u1",container="app",node="node-1",resource="cpu",unit="core"} 2
kube_pod_container_resource_limits{namespace="shop",pod="a",uid="u1",container="app",node="node-1",resource="memory",unit="byte"} 1.29e+08
# HELP kube_pod_container_status_waiting_reason [STABLE] Describes the reason the container is currently in waiting state.
# TYPE kube_pod_container_status_waiting_reason gauge
kube_pod_container_status_waiting_reason{namespace="shop",pod="a",uid="u1",container="proxy",reason="CrashLoopBackOff"} 1
kube_pod_container_status_waiting_reason{namespace="shop",pod="a",uid="u1",container="ghost",reason=""} 1
`)
}

func TestPodLabelsAnnotations(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "a", UID: "u1",
		Labels:      map[string]string{"app.kubernetes.io/name": "web", "team": "blue", "fooBar": "1", "foo_bar": "2"},
		Annotations: map[string]string{"note": "hi"}}}
	// Without allowlists, kube-state-metrics serves no series of either.
	expectFamilies(t, render(t, "pods", pod), `
# HELP kube_pod_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_pod_labels gauge
# HELP kube_pod_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_pod_annotations gauge
`)
	expectFamilies(t, renderWith(t, "pods", "pods=[*]", "*=[nothing]", pod), `
# HELP kube_pod_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_pod_labels gauge
kube_pod_labels{namespace="shop",pod="a",uid="u1",label_app_kubernetes_io_name="web",label_foo_bar_conflict1="1",label_foo_bar_conflict2="2",label_team="blue"} 1
# HELP kube_pod_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_pod_annotations gauge
kube_pod_annotations{namespace="shop",pod="a",uid="u1"} 1
`)
	expectFamilies(t, renderWith(t, "pods", "deployments=[*],pods=[team,app.kubernetes.io/*]", "pods=[note]", pod), `
# HELP kube_pod_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_pod_labels gauge
kube_pod_labels{namespace="shop",pod="a",uid="u1",label_app_kubernetes_io_name="web",label_team="blue"} 1
# HELP kube_pod_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_pod_annotations gauge
kube_pod_annotations{namespace="shop",pod="a",uid="u1",annotation_note="hi"} 1
`)
}
