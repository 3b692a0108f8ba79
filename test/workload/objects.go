package workload

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// deploymentGroup is the set of pods that carry one deployment's labels.
type deploymentGroup struct {
	namespace, name string
	first, count    int // pod indexes [first, first+count)
}

// groups splits the pods into deployments, spread round-robin over namespaces.
func (s Spec) groups() []deploymentGroup {
	var gs []deploymentGroup
	for d, first := 0, 0; first < s.Pods; d++ {
		n := min(s.PodsPerDeployment, s.Pods-first)
		app := appNames[(d/s.Namespaces)%len(appNames)]
		if r := d / (s.Namespaces * len(appNames)); r > 0 {
			app = fmt.Sprintf("%s-%d", app, r+1)
		}
		gs = append(gs, deploymentGroup{namespace: s.NamespaceName(d % s.Namespaces), name: app, first: first, count: n})
		first += n
	}
	return gs
}

func (s Spec) rng(kind string, i int) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write([]byte(kind))
	return rand.New(rand.NewPCG(uint64(s.Seed), h.Sum64()+uint64(i)))
}

// Namespace returns the i-th namespace.
func (s Spec) namespace(i int) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   s.NamespaceName(i),
		Labels: map[string]string{"team": fmt.Sprintf("team-%d", i%5+1)},
	}}
}

// node returns the i-th node with its status.
func (s Spec) node(i int) *corev1.Node {
	zone := s.Zones[i%len(s.Zones)]
	ready := corev1.ConditionTrue
	reason := "KubeletReady"
	if s.Nodes >= 5 && i == s.Nodes-1 {
		ready, reason = corev1.ConditionFalse, "KubeletNotReady"
	}
	types := []string{"m5.xlarge", "m5.2xlarge", "c5.2xlarge"}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse([]string{"4", "8", "8"}[i%3]),
		corev1.ResourceMemory: resource.MustParse([]string{"16Gi", "32Gi", "16Gi"}[i%3]),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	alloc := capacity.DeepCopy()
	alloc[corev1.ResourceCPU] = resource.MustParse([]string{"3920m", "7910m", "7910m"}[i%3])
	name := s.NodeName(i)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"kubernetes.io/hostname":           name,
				"kubernetes.io/os":                 "linux",
				"topology.kubernetes.io/zone":      zone,
				"topology.kubernetes.io/region":    "local-1",
				"node.kubernetes.io/instance-type": types[i%3],
			},
		},
		Spec: corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.244.%d.0/24", i%256), Taints: s.NodeTaints},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: alloc,
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: ready, Reason: reason, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()},
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory"},
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", i/250, i%250+10)},
				{Type: corev1.NodeHostName, Address: name},
			},
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.36.3", OperatingSystem: "linux", Architecture: "amd64", ContainerRuntimeVersion: "containerd://2.1.0"},
		},
	}
}

func podTemplateHash(ns, name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(ns + "/" + name))
	return fmt.Sprintf("%08x", h.Sum32())[:8] + "c4"
}

// deployment returns the deployment of group g; readyPods is how many of its
// pods are ready.
func (s Spec) deployment(g deploymentGroup, readyPods int) *appsv1.Deployment {
	replicas := int32(g.count)
	labels := map[string]string{"app": g.name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: g.name, Namespace: g.namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Paused:   s.PausedDeployments,
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       podSpec(g.name, 1),
			},
		},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: 1,
			Replicas:           replicas,
			UpdatedReplicas:    replicas,
			ReadyReplicas:      int32(readyPods),
			AvailableReplicas:  int32(readyPods),
		},
	}
}

func podSpec(app string, minor int) corev1.PodSpec {
	return corev1.PodSpec{
		Containers: []corev1.Container{
			{
				Name:  "app",
				Image: fmt.Sprintf("registry.example.com/%s:1.%d.0", app, minor),
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
				},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}},
			},
			{
				Name:  "proxy",
				Image: "registry.example.com/envoy:1.30.2",
				Ports: []corev1.ContainerPort{{Name: "admin", ContainerPort: 9901, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				},
			},
		},
		TerminationGracePeriodSeconds: ptr(int64(30)),
	}
}

func ptr[T any](v T) *T { return &v }

const nameChars = "bcdfghjklmnpqrstvwxz2456789"

// pod returns pod i of group g, with the status to write after creating it,
// and whether it is ready.
func (s Spec) pod(g deploymentGroup, i int) (*corev1.Pod, corev1.PodStatus, bool) {
	r := s.rng("pod", i)
	suffix := make([]byte, 5)
	for k := range suffix {
		suffix[k] = nameChars[r.IntN(len(nameChars))]
	}
	hash := podTemplateHash(g.namespace, g.name)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s-%s-%s", g.name, hash, suffix),
			Namespace: g.namespace,
			Labels:    map[string]string{"app": g.name, "pod-template-hash": hash, "tier": []string{"frontend", "backend", "backend"}[i%3]},
		},
		Spec: podSpec(g.name, 1),
	}
	pod.Spec.SchedulerName = s.SchedulerName
	node := s.NodeName(r.IntN(s.Nodes))
	started := metav1.NewTime(s.Now.Add(-time.Duration(r.IntN(30*24*60)) * time.Minute))
	status := corev1.PodStatus{QOSClass: corev1.PodQOSBurstable}
	ready := false

	running := func(restarts [2]int32, waiting string) {
		status.Phase = corev1.PodRunning
		status.StartTime = &started
		status.HostIP = fmt.Sprintf("10.0.0.%d", r.IntN(250)+1)
		status.PodIP = fmt.Sprintf("10.244.%d.%d", r.IntN(250), r.IntN(250)+2)
		ready = waiting == ""
		cond := corev1.ConditionTrue
		if !ready {
			cond = corev1.ConditionFalse
		}
		status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.ContainersReady, Status: cond, LastTransitionTime: started},
			{Type: corev1.PodReady, Status: cond, LastTransitionTime: started},
		}
		for k, c := range pod.Spec.Containers {
			cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image + "@sha256:" + fmt.Sprintf("%064x", k+1),
				RestartCount: restarts[k], Ready: true, Started: ptr(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}
			if k == 0 && waiting != "" {
				cs.Ready, cs.Started = false, ptr(false)
				cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting, Message: "back-off restarting failed container"}}
				cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: started, FinishedAt: started}}
			}
			status.ContainerStatuses = append(status.ContainerStatuses, cs)
		}
	}
	terminated := func(phase corev1.PodPhase, exit int32, reason string) {
		status.Phase = phase
		status.StartTime = &started
		status.HostIP = fmt.Sprintf("10.0.0.%d", r.IntN(250)+1)
		for _, c := range pod.Spec.Containers {
			status.ContainerStatuses = append(status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Reason: reason, StartedAt: started, FinishedAt: started}}})
		}
		status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started}}
	}

	switch p := r.Float64(); {
	case p < 0.80:
		var restarts [2]int32
		switch q := r.Float64(); {
		case q < 0.70:
		case q < 0.95:
			restarts[0] = int32(r.IntN(3) + 1)
		default:
			restarts[0] = int32(r.IntN(6) + 4)
		}
		pod.Spec.NodeName = node
		running(restarts, "")
	case p < 0.84:
		pod.Spec.NodeName = node
		running([2]int32{int32(r.IntN(40) + 10), 0}, "CrashLoopBackOff")
	case p < 0.88:
		status.Phase = corev1.PodPending
		status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
			Message: "0/" + fmt.Sprint(s.Nodes) + " nodes are available: insufficient cpu.", LastTransitionTime: started}}
	case p < 0.92:
		pod.Spec.NodeName = node
		status.Phase = corev1.PodPending
		status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started}}
		for _, c := range pod.Spec.Containers {
			status.ContainerStatuses = append(status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}})
		}
	case p < 0.96:
		pod.Spec.NodeName = node
		terminated(corev1.PodSucceeded, 0, "Completed")
	default:
		pod.Spec.NodeName = node
		terminated(corev1.PodFailed, 137, "OOMKilled")
	}
	return pod, status, ready
}

// database returns the i-th Database custom resource.
func (s Spec) database(i int) *unstructured.Unstructured {
	r := s.rng("database", i)
	engines := []string{"postgres", "mysql", "redis"}
	versions := map[string][]string{"postgres": {"15.6", "16.2", "17.0"}, "mysql": {"8.0.36", "8.4.0"}, "redis": {"7.2.4"}}
	engine := engines[r.IntN(len(engines))]
	replicas := int64(r.IntN(3) + 1)
	phase := "Ready"
	ready := replicas
	switch p := r.Float64(); {
	case p < 0.1:
		phase, ready = "Provisioning", 0
	case p < 0.15:
		phase, ready = "Degraded", replicas-1
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": DatabaseGroup + "/v1",
		"kind":       "Database",
		"metadata": map[string]any{
			"name":      fmt.Sprintf("%s-%d", engine, i+1),
			"namespace": s.NamespaceName(i % s.Namespaces),
			"labels":    map[string]any{"engine": engine},
		},
		"spec": map[string]any{
			"engine":   engine,
			"version":  versions[engine][r.IntN(len(versions[engine]))],
			"replicas": replicas,
			"storage":  []string{"10Gi", "50Gi", "200Gi"}[r.IntN(3)],
			"backup":   map[string]any{"enabled": r.IntN(4) != 0, "schedule": "0 3 * * *"},
		},
		"status": map[string]any{"phase": phase, "readyReplicas": ready},
	}}
}
