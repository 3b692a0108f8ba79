package jsonval

import (
	"time"

	"gopkg.in/inf.v0"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Realistic objects, shaped like what typed informers hold. Each call returns
// a fresh object.

var (
	created = metav1.NewTime(time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC))
	started = metav1.NewTime(time.Date(2025, 3, 14, 15, 9, 31, 250000000, time.FixedZone("CET", 3600)))
)

func ptr[T any](v T) *T { return &v }

func fixtures() []struct {
	name string
	obj  any
} {
	return []struct {
		name string
		obj  any
	}{
		{"pod", fullPod()},
		{"node", node()},
		{"deployment", deployment()},
		{"service", service()},
		{"configmap", configMap()},
		{"secret", secret()},
		{"empty pod", emptyPod()},
		{"zero pod", &corev1.Pod{}},
		{"partial metadata", partialMetadata()},
		{"event", event()},
		{"lease", lease()},
		{"crd", crd()},
		{"controller revision", controllerRevision()},
		{"pod list", &corev1.PodList{Items: []corev1.Pod{*fullPod(), *emptyPod()}}},
	}
}

func fullPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:              "web-7d4b9c8f6d-x2x9k",
			GenerateName:      "web-7d4b9c8f6d-",
			Namespace:         "shop",
			UID:               "6f1a1c62-3e0b-4a4e-9b4c-2f8f8d1d9c11",
			ResourceVersion:   "123456",
			Generation:        1,
			CreationTimestamp: created,
			Labels:            map[string]string{"app": "web", "tier": "frontend", "pod-template-hash": "7d4b9c8f6d"},
			Annotations: map[string]string{
				"example.com/owner":                 "team-a",
				"kubectl.kubernetes.io/restartedAt": "2025-03-14T15:00:00Z",
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         "apps/v1",
				Kind:               "ReplicaSet",
				Name:               "web-7d4b9c8f6d",
				UID:                "0e5b1f5c-8a61-4d43-a0a5-8f9a3f2f4c55",
				Controller:         ptr(true),
				BlockOwnerDeletion: ptr(true),
			}},
			Finalizers: []string{"example.com/cleanup"},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager:    "kube-controller-manager",
				Operation:  metav1.ManagedFieldsOperationUpdate,
				APIVersion: "v1",
				Time:       &created,
				FieldsType: "FieldsV1",
				FieldsV1:   metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`),
			}},
		},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{
				Name:    "init",
				Image:   "busybox:1.36",
				Command: []string{"sh", "-c", "echo hi"},
			}},
			Containers: []corev1.Container{
				{
					Name:  "app",
					Image: "registry.example.com/web:1.2.3",
					Args:  []string{"--port=8080", "--log-level=info"},
					Ports: []corev1.ContainerPort{
						{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP},
						{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP},
					},
					Env: []corev1.EnvVar{
						{Name: "MODE", Value: "production"},
						{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
							FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"},
						}},
					},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{
							corev1.ResourceCPU:    resource.MustParse("100m"),
							corev1.ResourceMemory: resource.MustParse("128Mi"),
						},
						Limits: corev1.ResourceList{
							corev1.ResourceCPU:    resource.MustParse("1"),
							corev1.ResourceMemory: resource.MustParse("0.5Gi"),
						},
					},
					VolumeMounts: []corev1.VolumeMount{{Name: "cache", MountPath: "/cache", ReadOnly: true}},
					LivenessProbe: &corev1.Probe{
						ProbeHandler: corev1.ProbeHandler{
							HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080), Scheme: corev1.URISchemeHTTP},
						},
						InitialDelaySeconds: 5,
						PeriodSeconds:       10,
						FailureThreshold:    3,
					},
					ReadinessProbe: &corev1.Probe{
						ProbeHandler: corev1.ProbeHandler{
							HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")},
						},
					},
					SecurityContext: &corev1.SecurityContext{
						RunAsNonRoot:             ptr(true),
						RunAsUser:                ptr(int64(1000)),
						AllowPrivilegeEscalation: ptr(false),
						Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					},
					ImagePullPolicy:          corev1.PullIfNotPresent,
					TerminationMessagePath:   "/dev/termination-log",
					TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				},
				{
					Name:  "sidecar",
					Image: "registry.example.com/proxy:2.0",
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")},
					},
				},
			},
			Volumes: []corev1.Volume{
				{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr(resource.MustParse("1Gi"))}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"},
					DefaultMode:          ptr(int32(0o644)),
				}}},
			},
			NodeName:                      "worker-1",
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr(int64(30)),
			DNSPolicy:                     corev1.DNSClusterFirst,
			NodeSelector:                  map[string]string{"kubernetes.io/os": "linux"},
			ServiceAccountName:            "web",
			SecurityContext:               &corev1.PodSecurityContext{},
			SchedulerName:                 "default-scheduler",
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule},
			},
			Priority:           ptr(int32(0)),
			EnableServiceLinks: ptr(true),
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodPending,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: created},
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [app]", LastTransitionTime: started},
			},
			HostIP:    "10.0.0.12",
			PodIP:     "10.244.1.17",
			PodIPs:    []corev1.PodIP{{IP: "10.244.1.17"}, {IP: "fd00::17"}},
			StartTime: &started,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name:         "app",
				Ready:        false,
				RestartCount: 3,
				Image:        "registry.example.com/web:1.2.3",
				ImageID:      "registry.example.com/web@sha256:0123",
				ContainerID:  "containerd://abc",
				Started:      ptr(true),
				State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 137, Reason: "OOMKilled", StartedAt: created, FinishedAt: started,
				}},
			}},
			QOSClass: corev1.PodQOSBurstable,
		},
	}
}

func emptyPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "empty",
			Labels:      map[string]string{},
			Annotations: nil,
			Finalizers:  []string{},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{},
			Volumes:    []corev1.Volume{},
			Tolerations: []corev1.Toleration{{
				Key: "", Operator: corev1.TolerationOpExists,
			}},
			NodeSelector: map[string]string{},
		},
	}
}

func node() *corev1.Node {
	return &corev1.Node{
		TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              "worker-1",
			CreationTimestamp: created,
			Labels: map[string]string{
				"kubernetes.io/hostname":           "worker-1",
				"node-role.kubernetes.io/worker":   "",
				"topology.kubernetes.io/zone":      "eu-west-1a",
				"node.kubernetes.io/instance-type": "m5.large",
			},
		},
		Spec: corev1.NodeSpec{
			PodCIDR:  "10.244.1.0/24",
			PodCIDRs: []string{"10.244.1.0/24"},
			Taints: []corev1.Taint{
				{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &created},
				{Key: "maintenance", Effect: corev1.TaintEffectPreferNoSchedule},
			},
		},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU:              resource.MustParse("2"),
				corev1.ResourceMemory:           resource.MustParse("8047736Ki"),
				corev1.ResourcePods:             resource.MustParse("110"),
				corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
			},
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("1930m"),
				corev1.ResourceMemory: *resource.NewQuantity(7*1024*1024*1024, resource.BinarySI),
				corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
				"example.com/huge":    *resource.NewDecimalQuantity(*inf.NewDec(123456789, -20), resource.DecimalSI),
				"example.com/milli":   *resource.NewMilliQuantity(1500, resource.DecimalSI),
			},
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: started, LastTransitionTime: created, Reason: "KubeletReady"},
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "10.0.0.12"},
				{Type: corev1.NodeHostName, Address: "worker-1"},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion:          "v1.36.3",
				OperatingSystem:         "linux",
				Architecture:            "amd64",
				ContainerRuntimeVersion: "containerd://2.1.0",
			},
			Images: []corev1.ContainerImage{{Names: []string{"registry.example.com/web:1.2.3"}, SizeBytes: 123456789}},
		},
	}
}

func deployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:              "web",
			Namespace:         "shop",
			Generation:        4,
			CreationTimestamp: created,
			Labels:            map[string]string{"app": "web"},
			Annotations:       map[string]string{"deployment.kubernetes.io/revision": "4"},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(3)),
			Selector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"app": "web"},
				MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"frontend", "edge"}},
				},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       fullPod().Spec,
			},
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxUnavailable: ptr(intstr.FromInt32(1)),
					MaxSurge:       ptr(intstr.FromString("25%")),
				},
			},
			RevisionHistoryLimit:    ptr(int32(10)),
			ProgressDeadlineSeconds: ptr(int32(600)),
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 4,
			Replicas:           3,
			UpdatedReplicas:    3,
			ReadyReplicas:      2,
			AvailableReplicas:  2,
			Conditions: []appsv1.DeploymentCondition{{
				Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
				LastUpdateTime: created, LastTransitionTime: created, Reason: "MinimumReplicasAvailable",
			}},
		},
	}
}

func service() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", CreationTimestamp: created},
		Spec: corev1.ServiceSpec{
			Type:       corev1.ServiceTypeClusterIP,
			Selector:   map[string]string{"app": "web"},
			ClusterIP:  "10.96.12.34",
			ClusterIPs: []string{"10.96.12.34"},
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP},
				{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9090), Protocol: corev1.ProtocolTCP},
			},
			IPFamilies:      []corev1.IPFamily{corev1.IPv4Protocol},
			IPFamilyPolicy:  ptr(corev1.IPFamilyPolicySingleStack),
			SessionAffinity: corev1.ServiceAffinityNone,
		},
	}
}

func configMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "web-config", Namespace: "shop"},
		Data:       map[string]string{"config.yaml": "port: 8080\n", "mode": "production"},
		BinaryData: map[string][]byte{"blob": {0, 1, 2, 0xfe, 0xff}, "empty": {}},
		Immutable:  ptr(false),
	}
}

func secret() *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "web-tls", Namespace: "shop", Labels: map[string]string{"app": "web"}},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			"tls.crt": []byte("-----BEGIN CERTIFICATE-----\n"),
			"tls.key": []byte("-----BEGIN PRIVATE KEY-----\n"),
		},
		StringData: map[string]string{"password": "s3cr3t"},
	}
}

func partialMetadata() *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-7d4b9c8f6d-x2x9k", Namespace: "shop", CreationTimestamp: created,
			Labels:            map[string]string{"app": "web"},
			DeletionTimestamp: &started,
		},
	}
}

func event() *eventsv1.Event {
	return &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "web.17c", Namespace: "shop"},
		EventTime:  metav1.NewMicroTime(time.Date(2025, 3, 14, 15, 9, 26, 123456789, time.UTC)),
		Series: &eventsv1.EventSeries{
			Count:            2,
			LastObservedTime: metav1.NewMicroTime(time.Date(2025, 3, 14, 15, 10, 0, 500000000, time.UTC)),
		},
		ReportingController: "kubelet",
		ReportingInstance:   "worker-1",
		Action:              "Pulling",
		Reason:              "Pulling",
		Regarding:           corev1.ObjectReference{Kind: "Pod", Name: "web-7d4b9c8f6d-x2x9k", Namespace: "shop"},
		Type:                corev1.EventTypeNormal,
	}
}

func lease() *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "worker-1", Namespace: "kube-node-lease"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr("worker-1"),
			LeaseDurationSeconds: ptr(int32(40)),
			RenewTime:            ptr(metav1.NewMicroTime(time.Date(2025, 3, 14, 15, 9, 26, 42000, time.UTC))),
		},
	}
}

func crd() *apiextensionsv1.CustomResourceDefinition {
	replicas := apiextensionsv1.JSONSchemaProps{
		Type:    "integer",
		Default: &apiextensionsv1.JSON{Raw: []byte(`3`)},
		Minimum: ptr(1.0),
		Maximum: ptr(99.5),
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget", ShortNames: []string{"wd"}},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {
							Type: "object",
							Properties: map[string]apiextensionsv1.JSONSchemaProps{
								"replicas": replicas,
								"mode":     {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"fast"`)}, {Raw: []byte(`"safe"`)}}},
								"port":     {XIntOrString: true, AnyOf: []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}},
								"extra": {
									Type:                   "object",
									XPreserveUnknownFields: ptr(true),
									Default:                &apiextensionsv1.JSON{Raw: []byte(`{"a": [1, 2.5, "x", null, true], "b": {}}`)},
								},
							},
							Required: []string{"replicas"},
						},
					},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

func controllerRevision() *appsv1.ControllerRevision {
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: "web-5d8f", Namespace: "shop"},
		Data:       runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"web:1"}]}}},"ratio":0.25,"n":7}`)},
		Revision:   2,
	}
}
