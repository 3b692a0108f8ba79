package profiles_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// oneContainer is the spec of a pod with one container: the API server
// holds no pod without one.
var oneContainer = []corev1.Container{{Name: "c", Image: "img"}}

func TestPodInfoPhaseRestarts(t *testing.T) {
	controller := true
	running := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "u1",
			OwnerReferences: []metav1.OwnerReference{
				{Kind: "Node", Name: "n0"},
				{Kind: "ReplicaSet", Name: "web-7d4", Controller: &controller},
			}},
		Spec: corev1.PodSpec{NodeName: "node-1", PriorityClassName: "high", HostNetwork: true, Containers: oneContainer},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.1", PodIP: "10.1.0.5",
			ContainerStatuses:     []corev1.ContainerStatus{{Name: "app", RestartCount: 3}, {Name: "sidecar"}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", RestartCount: 9}}},
	}
	noPhase := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "bare", UID: "u2"}, Spec: corev1.PodSpec{Containers: oneContainer}}
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
		Spec: corev1.PodSpec{Containers: oneContainer},
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
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "b", UID: "u2"}, Spec: corev1.PodSpec{Containers: oneContainer},
		Status: corev1.PodStatus{Reason: "OutOfcpu", Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionUnknown}}}}
	ready := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "c", UID: "u3"}, Spec: corev1.PodSpec{Containers: oneContainer},
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
		Annotations: map[string]string{"note": "hi"}}, Spec: corev1.PodSpec{Containers: oneContainer}}
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

func TestPodContainerStates(t *testing.T) {
	t1 := metav1.NewTime(t0.Add(time.Minute))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "a", UID: "u1", CreationTimestamp: t0, DeletionTimestamp: &t1},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "setup", Image: "setup:1", RestartPolicy: ptr(corev1.ContainerRestartPolicyAlways),
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("250m")}}}},
			Containers: []corev1.Container{{Name: "app"}, {Name: "log"}, {Name: "sidecar"}},
		},
		Status: corev1.PodStatus{
			StartTime: &t0,
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "setup", Image: "docker.io/setup:1", ImageID: "sha256:s", ContainerID: "c://s", Ready: true, RestartCount: 2,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: t0, FinishedAt: t1}}}},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t1}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137, FinishedAt: t0}}},
				{Name: "log", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, FinishedAt: t1}}},
				{Name: "sidecar", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}},
			},
		},
	}
	expectFamilies(t, render(t, "pods", pod), `
# HELP kube_pod_completion_time [STABLE] Completion time in unix timestamp for a pod.
# TYPE kube_pod_completion_time gauge
kube_pod_completion_time{namespace="shop",pod="a",uid="u1"} 1.79560086e+09
# HELP kube_pod_created [STABLE] Unix creation timestamp
# TYPE kube_pod_created gauge
kube_pod_created{namespace="shop",pod="a",uid="u1"} 1.7956008e+09
# HELP kube_pod_deletion_timestamp Unix deletion timestamp
# TYPE kube_pod_deletion_timestamp gauge
kube_pod_deletion_timestamp{namespace="shop",pod="a",uid="u1"} 1.79560086e+09
# HELP kube_pod_start_time [STABLE] Start time in unix timestamp for a pod.
# TYPE kube_pod_start_time gauge
kube_pod_start_time{namespace="shop",pod="a",uid="u1"} 1.7956008e+09
# HELP kube_pod_container_state_started [STABLE] Start time in unix timestamp for a pod container.
# TYPE kube_pod_container_state_started gauge
kube_pod_container_state_started{namespace="shop",pod="a",uid="u1",container="app"} 1.79560086e+09
kube_pod_container_state_started{namespace="shop",pod="a",uid="u1",container="log"} -6.21355968e+10
# HELP kube_pod_container_status_last_terminated_reason Describes the last reason the container was in terminated state.
# TYPE kube_pod_container_status_last_terminated_reason gauge
kube_pod_container_status_last_terminated_reason{namespace="shop",pod="a",uid="u1",container="app",reason="OOMKilled"} 1
# HELP kube_pod_container_status_last_terminated_exitcode Describes the exit code for the last container in terminated state.
# TYPE kube_pod_container_status_last_terminated_exitcode gauge
kube_pod_container_status_last_terminated_exitcode{namespace="shop",pod="a",uid="u1",container="app"} 137
# HELP kube_pod_container_status_last_terminated_timestamp Last terminated time for a pod container in unix timestamp.
# TYPE kube_pod_container_status_last_terminated_timestamp gauge
kube_pod_container_status_last_terminated_timestamp{namespace="shop",pod="a",uid="u1",container="app"} 1.7956008e+09
# HELP kube_pod_container_status_ready [STABLE] Describes whether the containers readiness check succeeded.
# TYPE kube_pod_container_status_ready gauge
kube_pod_container_status_ready{namespace="shop",pod="a",uid="u1",container="app"} 1
kube_pod_container_status_ready{namespace="shop",pod="a",uid="u1",container="log"} 0
kube_pod_container_status_ready{namespace="shop",pod="a",uid="u1",container="sidecar"} 0
# HELP kube_pod_container_status_running [STABLE] Describes whether the container is currently in running state.
# TYPE kube_pod_container_status_running gauge
kube_pod_container_status_running{namespace="shop",pod="a",uid="u1",container="app"} 1
kube_pod_container_status_running{namespace="shop",pod="a",uid="u1",container="log"} 0
kube_pod_container_status_running{namespace="shop",pod="a",uid="u1",container="sidecar"} 0
# HELP kube_pod_container_status_terminated [STABLE] Describes whether the container is currently in terminated state.
# TYPE kube_pod_container_status_terminated gauge
kube_pod_container_status_terminated{namespace="shop",pod="a",uid="u1",container="app"} 0
kube_pod_container_status_terminated{namespace="shop",pod="a",uid="u1",container="log"} 1
kube_pod_container_status_terminated{namespace="shop",pod="a",uid="u1",container="sidecar"} 0
# HELP kube_pod_container_status_terminated_reason Describes the reason the container is currently in terminated state.
# TYPE kube_pod_container_status_terminated_reason gauge
kube_pod_container_status_terminated_reason{namespace="shop",pod="a",uid="u1",container="log",reason="Error"} 1
# HELP kube_pod_container_status_waiting [STABLE] Describes whether the container is currently in waiting state.
# TYPE kube_pod_container_status_waiting gauge
kube_pod_container_status_waiting{namespace="shop",pod="a",uid="u1",container="app"} 0
kube_pod_container_status_waiting{namespace="shop",pod="a",uid="u1",container="log"} 0
kube_pod_container_status_waiting{namespace="shop",pod="a",uid="u1",container="sidecar"} 1
# HELP kube_pod_init_container_info [STABLE] Information about an init container in a pod.
# TYPE kube_pod_init_container_info gauge
kube_pod_init_container_info{namespace="shop",pod="a",uid="u1",container="setup",image_spec="setup:1",image="docker.io/setup:1",image_id="sha256:s",container_id="c://s",restart_policy="Always"} 1
# HELP kube_pod_init_container_resource_requests The number of requested request resource by an init container.
# TYPE kube_pod_init_container_resource_requests gauge
kube_pod_init_container_resource_requests{namespace="shop",pod="a",uid="u1",container="setup",node="",resource="cpu",unit="core"} 0.25
# HELP kube_pod_init_container_state_started Start time in unix timestamp for a pod init container.
# TYPE kube_pod_init_container_state_started gauge
kube_pod_init_container_state_started{namespace="shop",pod="a",uid="u1",container="setup"} 1.7956008e+09
# HELP kube_pod_init_container_status_ready [STABLE] Describes whether the init containers readiness check succeeded.
# TYPE kube_pod_init_container_status_ready gauge
kube_pod_init_container_status_ready{namespace="shop",pod="a",uid="u1",container="setup"} 1
# HELP kube_pod_init_container_status_restarts_total [STABLE] The number of restarts for the init container.
# TYPE kube_pod_init_container_status_restarts_total counter
kube_pod_init_container_status_restarts_total{namespace="shop",pod="a",uid="u1",container="setup"} 2
# HELP kube_pod_init_container_status_terminated_reason Describes the reason the init container is currently in terminated state.
# TYPE kube_pod_init_container_status_terminated_reason gauge
kube_pod_init_container_status_terminated_reason{namespace="shop",pod="a",uid="u1",container="setup",reason="Completed"} 1
# HELP kube_pod_init_container_status_waiting_reason Describes the reason the init container is currently in waiting state.
# TYPE kube_pod_init_container_status_waiting_reason gauge
`)
}

func TestPodSpecAndConditions(t *testing.T) {
	t1 := metav1.NewTime(t0.Add(time.Minute))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "a", UID: "u1"},
		Spec: corev1.PodSpec{
			Containers:    oneContainer,
			RestartPolicy: corev1.RestartPolicyAlways, RuntimeClassName: ptr("gvisor"), ServiceAccountName: "web", SchedulerName: "default-scheduler",
			Overhead: corev1.ResourceList{"cpu": resource.MustParse("120m"), "memory": resource.MustParse("1Ki")},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "pvc-1", ReadOnly: true}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
				{Name: "cfg", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
			Tolerations: []corev1.Toleration{
				{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
				{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
			},
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr("gpu-claim")}, {Name: "tmpl", ResourceClaimTemplateName: ptr("t")}},
		},
		Status: corev1.PodStatus{
			QOSClass: corev1.PodQOSBurstable,
			PodIPs:   []corev1.PodIP{{IP: "10.0.0.5"}, {IP: "fd00::5"}, {IP: "bogus"}},
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: t0},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: t1},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue},
				{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, LastTransitionTime: t0},
				{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"},
				{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "Custom"},
			},
		},
	}
	expectFamilies(t, render(t, "pods", pod), `
# HELP kube_pod_restart_policy [STABLE] Describes the restart policy in use by this pod.
# TYPE kube_pod_restart_policy gauge
kube_pod_restart_policy{namespace="shop",pod="a",uid="u1",type="Always"} 1
# HELP kube_pod_runtimeclass_name_info The runtimeclass associated with the pod.
# TYPE kube_pod_runtimeclass_name_info gauge
kube_pod_runtimeclass_name_info{namespace="shop",pod="a",uid="u1",runtimeclass_name="gvisor"} 1
# HELP kube_pod_service_account The service account for a pod.
# TYPE kube_pod_service_account gauge
kube_pod_service_account{namespace="shop",pod="a",uid="u1",service_account="web"} 1
# HELP kube_pod_scheduler The scheduler for a pod.
# TYPE kube_pod_scheduler gauge
kube_pod_scheduler{namespace="shop",pod="a",uid="u1",name="default-scheduler"} 1
# HELP kube_pod_overhead_cpu_cores The pod overhead in regards to cpu cores associated with running a pod.
# TYPE kube_pod_overhead_cpu_cores gauge
kube_pod_overhead_cpu_cores{namespace="shop",pod="a",uid="u1"} 0.12
# HELP kube_pod_overhead_memory_bytes The pod overhead in regards to memory associated with running a pod.
# TYPE kube_pod_overhead_memory_bytes gauge
kube_pod_overhead_memory_bytes{namespace="shop",pod="a",uid="u1"} 1024
# HELP kube_pod_spec_volumes_persistentvolumeclaims_info [STABLE] Information about persistentvolumeclaim and ephemeral volumes in a pod.
# TYPE kube_pod_spec_volumes_persistentvolumeclaims_info gauge
kube_pod_spec_volumes_persistentvolumeclaims_info{namespace="shop",pod="a",uid="u1",volume="data",persistentvolumeclaim="pvc-1",ephemeral="false"} 1
kube_pod_spec_volumes_persistentvolumeclaims_info{namespace="shop",pod="a",uid="u1",volume="scratch",persistentvolumeclaim="a-scratch",ephemeral="true"} 1
# HELP kube_pod_spec_volumes_persistentvolumeclaims_readonly [STABLE] Describes whether a persistentvolumeclaim is mounted read only. Ephemeral volumes always report 0 since the ephemeral volume source does not support a read-only flag.
# TYPE kube_pod_spec_volumes_persistentvolumeclaims_readonly gauge
kube_pod_spec_volumes_persistentvolumeclaims_readonly{namespace="shop",pod="a",uid="u1",volume="data",persistentvolumeclaim="pvc-1",ephemeral="false"} 1
kube_pod_spec_volumes_persistentvolumeclaims_readonly{namespace="shop",pod="a",uid="u1",volume="scratch",persistentvolumeclaim="a-scratch",ephemeral="true"} 0
# HELP kube_pod_tolerations Information about the pod tolerations
# TYPE kube_pod_tolerations gauge
kube_pod_tolerations{namespace="shop",pod="a",uid="u1",key="gpu",operator="Exists",value="",effect="NoSchedule",toleration_seconds=""} 1
kube_pod_tolerations{namespace="shop",pod="a",uid="u1",key="node.kubernetes.io/not-ready",operator="Exists",value="",effect="NoExecute",toleration_seconds="300"} 1
# HELP kube_pod_resourceclaim_info Information about a DRA ResourceClaim referenced by a pod, one series per pod.spec.resourceClaims entry; claim_name is the pod-local reference and resourceclaim_name is the resolved ResourceClaim object name.
# TYPE kube_pod_resourceclaim_info gauge
kube_pod_resourceclaim_info{namespace="shop",pod="a",uid="u1",claim_name="gpu",resourceclaim_name="gpu-claim",resourceclaim_template_name=""} 1
kube_pod_resourceclaim_info{namespace="shop",pod="a",uid="u1",claim_name="tmpl",resourceclaim_name="",resourceclaim_template_name="t"} 1
# HELP kube_pod_ips Pod IP addresses
# TYPE kube_pod_ips gauge
kube_pod_ips{namespace="shop",pod="a",uid="u1",ip="10.0.0.5",ip_family="4"} 1
kube_pod_ips{namespace="shop",pod="a",uid="u1",ip="fd00::5",ip_family="6"} 1
# HELP kube_pod_status_qos_class The pods current qosClass.
# TYPE kube_pod_status_qos_class gauge
kube_pod_status_qos_class{namespace="shop",pod="a",uid="u1",qos_class="BestEffort"} 0
kube_pod_status_qos_class{namespace="shop",pod="a",uid="u1",qos_class="Burstable"} 1
kube_pod_status_qos_class{namespace="shop",pod="a",uid="u1",qos_class="Guaranteed"} 0
# HELP kube_pod_status_initialized_time Initialized time in unix timestamp for a pod.
# TYPE kube_pod_status_initialized_time gauge
kube_pod_status_initialized_time{namespace="shop",pod="a",uid="u1"} 1.7956008e+09
# HELP kube_pod_status_container_ready_time Readiness achieved time in unix timestamp for a pod containers.
# TYPE kube_pod_status_container_ready_time gauge
kube_pod_status_container_ready_time{namespace="shop",pod="a",uid="u1"} 1.79560086e+09
# HELP kube_pod_status_ready_time Readiness achieved time in unix timestamp for a pod.
# TYPE kube_pod_status_ready_time gauge
kube_pod_status_ready_time{namespace="shop",pod="a",uid="u1"} -6.21355968e+10
# HELP kube_pod_status_scheduled [STABLE] Describes the status of the scheduling process for the pod.
# TYPE kube_pod_status_scheduled gauge
kube_pod_status_scheduled{namespace="shop",pod="a",uid="u1",condition="true"} 0
kube_pod_status_scheduled{namespace="shop",pod="a",uid="u1",condition="false"} 1
kube_pod_status_scheduled{namespace="shop",pod="a",uid="u1",condition="unknown"} 0
# HELP kube_pod_status_scheduled_time [STABLE] Unix timestamp when pod moved into scheduled status
# TYPE kube_pod_status_scheduled_time gauge
# HELP kube_pod_status_unschedulable [STABLE] Describes the unschedulable status for the pod.
# TYPE kube_pod_status_unschedulable gauge
kube_pod_status_unschedulable{namespace="shop",pod="a",uid="u1"} 1
# HELP kube_pod_status_unscheduled_time Unix timestamp when pod moved into unscheduled status
# TYPE kube_pod_status_unscheduled_time gauge
kube_pod_status_unscheduled_time{namespace="shop",pod="a",uid="u1"} 1.7956008e+09
# HELP kube_pod_status_disruption_reason The pod disruption condition reason
# TYPE kube_pod_status_disruption_reason gauge
kube_pod_status_disruption_reason{namespace="shop",pod="a",uid="u1",reason="EvictionByEvictionAPI"} 1
kube_pod_status_disruption_reason{namespace="shop",pod="a",uid="u1",reason="Other"} 1
`)
}
