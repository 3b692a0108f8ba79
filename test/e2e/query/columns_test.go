package query_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// longAgo is the time of every timestamp the columns print as an age
// (RESTARTS' last restart, a job's start, a cron job's last schedule, a
// date column): so long ago that two commands run a moment apart print
// the same age.
var longAgo = metav1.NewTime(time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC))

func ptr[T any](v T) *T { return &v }

// check fails the test on an error of the API.
func check(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// createColumnObjects creates, in a new namespace, objects of every kind
// whose table has columns of its own, in the states that the API server
// prints differently (there are no kubelets or controllers: statuses are
// written through the status subresource), and returns the namespace; the
// cluster-scoped objects (nodes, namespaces) are labelled columns=NS.
func createColumnObjects(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "columns")
	lbl := map[string]string{"columns": ns}
	c := cluster.Client
	pods := c.CoreV1().Pods(ns)
	// The pods leave with the test (after their finalizers, below): other
	// tests count the nodes of every pod. Without kubelets, a bound pod
	// is gone only when deleted at once.
	t.Cleanup(func() {
		err := pods.DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}, metav1.ListOptions{})
		check(t, "deleting the pods", err)
	})

	// Pods, one per STATUS rule.
	pod := func(name string, edit func(*corev1.Pod), status func(*corev1.PodStatus)) {
		t.Helper()
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbl},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
		}
		if edit != nil {
			edit(p)
		}
		p, err := pods.Create(ctx, p, metav1.CreateOptions{})
		check(t, "creating pod "+name, err)
		if status != nil {
			status(&p.Status)
			_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
			check(t, "updating the status of pod "+name, err)
		}
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: longAgo}}
	terminated := func(code int32, reason string) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, StartedAt: longAgo, FinishedAt: longAgo}}
	}
	cond := func(t corev1.PodConditionType, s corev1.ConditionStatus) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: s, LastTransitionTime: longAgo}
	}
	never := func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }
	onNode := func(p *corev1.Pod) { p.Spec.NodeName = ns + "-cp" }

	pod("pending", nil, nil)
	pod("gated", func(p *corev1.Pod) {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}}
	}, func(s *corev1.PodStatus) {
		s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}
		s.NominatedNodeName = ns + "-w"
	})
	pod("running", func(p *corev1.Pod) {
		onNode(p)
		p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}, {ConditionType: "example.com/warm"}}
	}, func(s *corev1.PodStatus) {
		s.Phase = corev1.PodRunning
		s.PodIP, s.PodIPs = "10.1.0.5", []corev1.PodIP{{IP: "10.1.0.5"}}
		s.Conditions = []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue), cond("example.com/ready", corev1.ConditionTrue), cond("example.com/warm", corev1.ConditionFalse)}
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "registry.k8s.io/pause:3.10", Ready: true, Started: ptr(true), State: running,
			RestartCount: 3, LastTerminationState: terminated(1, "Error")}}
	})
	pod("crashloop", onNode, func(s *corev1.PodStatus) {
		s.Phase = corev1.PodRunning
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "registry.k8s.io/pause:3.10", RestartCount: 5,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: terminated(2, "Error")}}
	})
	pod("succeeded", func(p *corev1.Pod) { never(p); onNode(p) }, func(s *corev1.PodStatus) {
		s.Phase = corev1.PodSucceeded
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "registry.k8s.io/pause:3.10", State: terminated(0, "Completed")}}
	})
	pod("failed", func(p *corev1.Pod) { never(p); onNode(p) }, func(s *corev1.PodStatus) {
		s.Phase = corev1.PodFailed
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "registry.k8s.io/pause:3.10", State: terminated(137, "")}}
	})
	pod("evicted", func(p *corev1.Pod) { never(p); onNode(p) }, func(s *corev1.PodStatus) {
		s.Phase, s.Reason, s.Message = corev1.PodFailed, "Evicted", "The node was low on resource: memory."
	})
	initContainers := func(p *corev1.Pod) {
		onNode(p)
		p.Spec.InitContainers = []corev1.Container{{Name: "init-a", Image: "registry.k8s.io/pause:3.10"}, {Name: "init-b", Image: "registry.k8s.io/pause:3.10"}}
	}
	pod("init", initContainers, func(s *corev1.PodStatus) {
		s.InitContainerStatuses = []corev1.ContainerStatus{
			{Name: "init-a", Image: "registry.k8s.io/pause:3.10", State: terminated(0, "Completed")},
			{Name: "init-b", Image: "registry.k8s.io/pause:3.10", State: running, Started: ptr(true)},
		}
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "registry.k8s.io/pause:3.10",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}
	})
	pod("init-error", initContainers, func(s *corev1.PodStatus) {
		s.InitContainerStatuses = []corev1.ContainerStatus{
			{Name: "init-a", Image: "registry.k8s.io/pause:3.10", State: terminated(1, "Error"), RestartCount: 2, LastTerminationState: terminated(1, "Error")},
			{Name: "init-b", Image: "registry.k8s.io/pause:3.10", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}},
		}
	})
	pod("sidecar", func(p *corev1.Pod) {
		onNode(p)
		p.Spec.InitContainers = []corev1.Container{{Name: "proxy", Image: "registry.k8s.io/pause:3.10", RestartPolicy: ptr(corev1.ContainerRestartPolicyAlways)}}
	}, func(s *corev1.PodStatus) {
		s.Phase = corev1.PodRunning
		s.Conditions = []corev1.PodCondition{cond(corev1.PodInitialized, corev1.ConditionTrue), cond(corev1.PodReady, corev1.ConditionTrue)}
		s.InitContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", Image: "registry.k8s.io/pause:3.10", Ready: true, Started: ptr(true), State: running,
			RestartCount: 1, LastTerminationState: terminated(1, "Error")}}
		s.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "registry.k8s.io/pause:3.10", Ready: true, Started: ptr(true), State: running}}
	})
	// Deleted pods that a finalizer keeps: Terminating, and Unknown when
	// their node was lost.
	kept := func(p *corev1.Pod) { p.Finalizers = []string{"example.com/keep"} }
	pod("terminating", kept, nil)
	pod("nodelost", kept, func(s *corev1.PodStatus) { s.Phase, s.Reason = corev1.PodRunning, "NodeLost" })
	for _, name := range []string{"terminating", "nodelost"} {
		check(t, "deleting pod "+name, pods.Delete(ctx, name, metav1.DeleteOptions{}))
		t.Cleanup(func() {
			_, _ = pods.Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		})
	}

	// Workloads.
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Image: "registry.k8s.io/pause:3.10"}, {Name: "log", Image: "registry.k8s.io/busybox:1.36"}}},
	}
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Labels: lbl} }

	d, err := c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: meta("web"),
		Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(3)), Selector: selector, Template: template}}, metav1.CreateOptions{})
	check(t, "creating a deployment", err)
	d.Status = appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, UnavailableReplicas: 1}
	_, err = c.AppsV1().Deployments(ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	check(t, "updating a deployment's status", err)

	rs, err := c.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: meta("web-5d4f"),
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr(int32(2)), Selector: selector, Template: template}}, metav1.CreateOptions{})
	check(t, "creating a replica set", err)
	rs.Status = appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 1, FullyLabeledReplicas: 2}
	_, err = c.AppsV1().ReplicaSets(ns).UpdateStatus(ctx, rs, metav1.UpdateOptions{})
	check(t, "updating a replica set's status", err)

	ss, err := c.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: meta("db"),
		Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(3)), ServiceName: "db", Selector: selector, Template: template}}, metav1.CreateOptions{})
	check(t, "creating a stateful set", err)
	ss.Status = appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 1, CurrentReplicas: 3, UpdatedReplicas: 3, AvailableReplicas: 1}
	_, err = c.AppsV1().StatefulSets(ns).UpdateStatus(ctx, ss, metav1.UpdateOptions{})
	check(t, "updating a stateful set's status", err)

	dsTemplate := template.DeepCopy()
	dsTemplate.Spec.NodeSelector = map[string]string{"disk": "ssd", "zone": "a"}
	ds, err := c.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{ObjectMeta: meta("agent"),
		Spec: appsv1.DaemonSetSpec{Selector: selector, Template: *dsTemplate}}, metav1.CreateOptions{})
	check(t, "creating a daemon set", err)
	ds.Status = appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 3, NumberAvailable: 2, NumberUnavailable: 1}
	_, err = c.AppsV1().DaemonSets(ns).UpdateStatus(ctx, ds, metav1.UpdateOptions{})
	check(t, "updating a daemon set's status", err)

	jobTemplate := template.DeepCopy()
	jobTemplate.Labels = nil
	jobTemplate.Spec.RestartPolicy = corev1.RestartPolicyNever
	job := func(name string, completions, parallelism *int32, status func(*batchv1.JobStatus)) {
		t.Helper()
		j, err := c.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{ObjectMeta: meta(name),
			Spec: batchv1.JobSpec{Completions: completions, Parallelism: parallelism, Template: *jobTemplate}}, metav1.CreateOptions{})
		check(t, "creating job "+name, err)
		if status != nil {
			status(&j.Status)
			_, err = c.BatchV1().Jobs(ns).UpdateStatus(ctx, j, metav1.UpdateOptions{})
			check(t, "updating the status of job "+name, err)
		}
	}
	job("new", ptr(int32(3)), ptr(int32(2)), nil)
	job("parallel", nil, ptr(int32(4)), func(s *batchv1.JobStatus) { s.StartTime, s.Active = &longAgo, 4 })
	done := metav1.NewTime(longAgo.Add(90 * time.Second))
	job("done", ptr(int32(1)), ptr(int32(1)), func(s *batchv1.JobStatus) {
		s.StartTime, s.CompletionTime, s.Succeeded = &longAgo, &done, 1
		s.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: done},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: done},
		}
	})

	cj, err := c.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{ObjectMeta: meta("nightly"),
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", TimeZone: ptr("Etc/UTC"), Suspend: ptr(true),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: *jobTemplate}}}}, metav1.CreateOptions{})
	check(t, "creating a cron job", err)
	cj.Status.LastScheduleTime = &longAgo
	_, err = c.BatchV1().CronJobs(ns).UpdateStatus(ctx, cj, metav1.UpdateOptions{})
	check(t, "updating a cron job's status", err)
	_, err = c.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{ObjectMeta: meta("every-5m"),
		Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: *jobTemplate}}}}, metav1.CreateOptions{})
	check(t, "creating a cron job", err)

	// Services of every type.
	svc := func(name string, spec corev1.ServiceSpec, lb []corev1.LoadBalancerIngress) {
		t.Helper()
		s, err := c.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: meta(name), Spec: spec}, metav1.CreateOptions{})
		check(t, "creating service "+name, err)
		if lb != nil {
			s.Status.LoadBalancer.Ingress = lb
			_, err = c.CoreV1().Services(ns).UpdateStatus(ctx, s, metav1.UpdateOptions{})
			check(t, "updating the status of service "+name, err)
		}
	}
	web := map[string]string{"app": "web", "tier": "front"}
	svc("cluster", corev1.ServiceSpec{Selector: web, Ports: []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}}, nil)
	svc("headless", corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: web, Ports: []corev1.ServicePort{{Port: 5432}}}, nil)
	svc("external-ips", corev1.ServiceSpec{ExternalIPs: []string{"192.0.2.10", "192.0.2.11"}, Ports: []corev1.ServicePort{{Port: 8080}}}, nil)
	svc("node-port", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: web, Ports: []corev1.ServicePort{{Port: 8080}}}, nil)
	svc("balanced", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: web, Ports: []corev1.ServicePort{{Port: 443}}},
		[]corev1.LoadBalancerIngress{{IP: "203.0.113.7"}, {Hostname: "lb.example.com"}})
	svc("balancing", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 443}}}, nil)
	svc("alias", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}, nil)

	// Nodes and namespaces, cluster-scoped: selected by their label.
	node := func(name string, labels map[string]string, unschedulable bool, status corev1.NodeStatus) {
		t.Helper()
		for k, v := range lbl {
			labels[k] = v
		}
		n, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: corev1.NodeSpec{Unschedulable: unschedulable}}, metav1.CreateOptions{})
		check(t, "creating node "+name, err)
		n.Status = status
		_, err = c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		check(t, "updating the status of node "+name, err)
		t.Cleanup(func() { _ = c.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	node(ns+"-cp", map[string]string{"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/etcd": ""}, false, corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}, {Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}},
		Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeExternalIP, Address: "198.51.100.1"}},
		NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.36.3", OSImage: "Debian GNU/Linux 12 (bookworm)", KernelVersion: "6.1.0-18-amd64",
			Architecture: "amd64", ContainerRuntimeVersion: "containerd://1.7.13"},
	})
	node(ns+"-w", map[string]string{"kubernetes.io/role": "worker"}, true, corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}},
	})
	node(ns+"-new", map[string]string{}, false, corev1.NodeStatus{})
	for _, name := range []string{ns + "-active", ns + "-gone"} {
		_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbl}}, metav1.CreateOptions{})
		check(t, "creating namespace "+name, err)
	}
	// No namespace controller: a deleted namespace stays Terminating.
	check(t, "deleting a namespace", c.CoreV1().Namespaces().Delete(ctx, ns+"-gone", metav1.DeleteOptions{}))

	// Configuration and storage.
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: meta("settings"), Data: map[string]string{"mode": "fast", "level": "3"}},
		{ObjectMeta: meta("blob"), Data: map[string]string{"name": "x"}, BinaryData: map[string][]byte{"data.bin": {0, 1}}},
		{ObjectMeta: meta("nothing")},
	} {
		_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		check(t, "creating a config map", err)
	}
	for _, s := range []*corev1.Secret{
		{ObjectMeta: meta("opaque"), Data: map[string][]byte{"user": []byte("u"), "password": []byte("p")}},
		{ObjectMeta: meta("pull"), Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte("{}")}},
		{ObjectMeta: meta("custom"), Type: "example.com/custom"},
	} {
		_, err := c.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{})
		check(t, "creating a secret", err)
	}
	storage := corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}
	_, err = c.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: meta("claim"),
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Resources: storage,
			StorageClassName: ptr("fast")}}, metav1.CreateOptions{})
	check(t, "creating a claim", err)
	pvc, err := c.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: meta("bound"),
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce}, Resources: storage,
			VolumeName: "pv-" + ns, VolumeMode: ptr(corev1.PersistentVolumeBlock), StorageClassName: ptr("")}}, metav1.CreateOptions{})
	check(t, "creating a claim", err)
	pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: pvc.Spec.AccessModes,
		Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")}}
	_, err = c.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, pvc, metav1.UpdateOptions{})
	check(t, "updating a claim's status", err)

	// Cluster-scoped storage and ingress classes and volumes, named after
	// ns and removed at the end; and ingresses in ns.
	clusterMeta := func(name string, annotations map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: ns + "-" + name, Labels: lbl, Annotations: annotations}
	}
	source := corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv/" + ns}}
	for _, pv := range []*corev1.PersistentVolume{
		{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + ns, Labels: lbl}, Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("5Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce}, PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef: &corev1.ObjectReference{Namespace: ns, Name: "bound"}, VolumeMode: ptr(corev1.PersistentVolumeBlock), PersistentVolumeSource: source}},
		{ObjectMeta: clusterMeta("spare", map[string]string{corev1.BetaStorageClassAnnotation: "slow"}), Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("500Mi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}, PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName: "fast", PersistentVolumeSource: source}},
	} {
		created, err := c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
		check(t, "creating a volume", err)
		t.Cleanup(func() {
			_ = c.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{})
		})
		created.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}
		if created.Spec.ClaimRef == nil {
			created.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeFailed, Reason: "RecycleFailed"}
		}
		_, err = c.CoreV1().PersistentVolumes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		check(t, "updating a volume's status", err)
	}
	for _, sc := range []*storagev1.StorageClass{
		{ObjectMeta: clusterMeta("fast", map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}), Provisioner: "example.com/fast",
			ReclaimPolicy: ptr(corev1.PersistentVolumeReclaimRetain), VolumeBindingMode: ptr(storagev1.VolumeBindingWaitForFirstConsumer), AllowVolumeExpansion: ptr(true)},
		{ObjectMeta: clusterMeta("slow", nil), Provisioner: "example.com/slow"},
	} {
		_, err := c.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
		check(t, "creating a storage class", err)
		t.Cleanup(func() {
			_ = c.StorageV1().StorageClasses().Delete(context.Background(), sc.Name, metav1.DeleteOptions{})
		})
	}
	for _, ic := range []*networkingv1.IngressClass{
		{ObjectMeta: clusterMeta("external", map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}), Spec: networkingv1.IngressClassSpec{
			Controller: "example.com/ingress", Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptr("k8s.example.com"), Kind: "IngressParameters", Name: "external"}}},
		{ObjectMeta: clusterMeta("internal", nil), Spec: networkingv1.IngressClassSpec{Controller: "example.com/other"}},
	} {
		_, err := c.NetworkingV1().IngressClasses().Create(ctx, ic, metav1.CreateOptions{})
		check(t, "creating an ingress class", err)
		t.Cleanup(func() {
			_ = c.NetworkingV1().IngressClasses().Delete(context.Background(), ic.Name, metav1.DeleteOptions{})
		})
	}
	backend := &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}
	for _, in := range []*networkingv1.Ingress{
		{ObjectMeta: meta("many-hosts"), Spec: networkingv1.IngressSpec{IngressClassName: ptr(ns + "-external"),
			Rules: []networkingv1.IngressRule{{Host: "a.example.com"}, {}, {Host: "b.example.com"}, {Host: "c.example.com"}, {Host: "d.example.com"}},
			TLS:   []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}, SecretName: "tls"}}}},
		{ObjectMeta: meta("three-hosts"), Spec: networkingv1.IngressSpec{
			Rules: []networkingv1.IngressRule{{}, {Host: "a.example.com"}, {Host: "b.example.com"}, {Host: "c.example.com"}}}},
		{ObjectMeta: meta("default-backend"), Spec: networkingv1.IngressSpec{DefaultBackend: backend}},
	} {
		created, err := c.NetworkingV1().Ingresses(ns).Create(ctx, in, metav1.CreateOptions{})
		check(t, "creating an ingress", err)
		if in.Name == "many-hosts" {
			created.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{Hostname: "lb.example.com"}, {IP: "10.0.0.5"}, {IP: "10.0.0.5"}}
			_, err = c.NetworkingV1().Ingresses(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
			check(t, "updating an ingress's status", err)
		}
	}
	createKindObjects(t, ns)
	return ns
}

// widgetsGroup is the API group of the custom resources the column tests
// print.
const widgetsGroup = "columns.example.com"

// createWidgets installs two CustomResourceDefinitions, widgets with
// additionalPrinterColumns of every type (one of priority 1, shown by -o
// wide) and gadgets without, and creates custom resources of both in ns.
func createWidgets(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	client, err := apiextensionsclient.NewForConfig(cluster.Config)
	check(t, "making a client", err)
	schemaProps := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type:       "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", XPreserveUnknownFields: ptr(true)}},
	}}
	crd := func(plural, kind string, columns []apiextensionsv1.CustomResourceColumnDefinition) {
		t.Helper()
		def := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + "." + widgetsGroup},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: widgetsGroup,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"},
				Scope: apiextensionsv1.NamespaceScoped,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true, Schema: schemaProps,
					AdditionalPrinterColumns: columns}},
			},
		}
		_, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, def, metav1.CreateOptions{})
		check(t, "creating the "+plural+" CRD", err)
		t.Cleanup(func() {
			_ = client.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), def.Name, metav1.DeleteOptions{})
		})
		framework.Eventually(t, "kubectl lists "+plural, func() bool {
			out, err := cluster.Kubectl("api-resources", "--api-group="+widgetsGroup, "-o", "name")
			return err == nil && strings.Contains(out, plural+"."+widgetsGroup)
		})
	}
	crd("widgets", "Widget", []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Color", Type: "string", JSONPath: ".spec.color"},
		{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
		{Name: "Ratio", Type: "number", JSONPath: ".spec.ratio"},
		{Name: "On", Type: "boolean", JSONPath: ".spec.on"},
		{Name: "Tags", Type: "string", JSONPath: ".spec.tags"},
		{Name: "Since", Type: "date", JSONPath: ".spec.since"},
		{Name: "Owner", Type: "string", JSONPath: ".spec.owner.name", Priority: 1},
		{Name: "First", Type: "string", JSONPath: ".spec.parts[0].name", Priority: 2},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	})
	crd("gadgets", "Gadget", nil)

	dc, err := dynamic.NewForConfig(cluster.Config)
	check(t, "making a client", err)
	create := func(plural, kind, name string, spec map[string]any) {
		t.Helper()
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": widgetsGroup + "/v1", "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec,
		}}
		_, err := dc.Resource(schema.GroupVersionResource{Group: widgetsGroup, Version: "v1", Resource: plural}).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
		check(t, "creating "+plural+" "+name, err)
	}
	create("widgets", "Widget", "full", map[string]any{
		"color": "blue", "size": int64(3), "ratio": 1.5, "on": true, "tags": []any{"a", "b"}, "since": longAgo.UTC().Format(time.RFC3339),
		"owner": map[string]any{"name": "team-a"}, "parts": []any{map[string]any{"name": "bolt"}, map[string]any{"name": "nut"}},
	})
	// Values missing, or of another type than their column's: empty cells.
	create("widgets", "Widget", "sparse", map[string]any{"size": "big", "on": "yes", "ratio": int64(2), "since": "not a date"})
	create("gadgets", "Gadget", "plain", map[string]any{"x": int64(1)})
}

// checkUnreadableCRD checks a ServiceAccount that may list the widgets
// and gadgets of ns (made by createWidgets) but not read their
// CustomResourceDefinitions: its tables are those kubectl get prints for
// it, the CRD's printer columns, which the API server gives.
func checkUnreadableCRD(t *testing.T, ns string) {
	t.Helper()
	kubeconfig, _ := cluster.ServiceAccountKubeconfig(t, ns, "columns-reader",
		rbacv1.PolicyRule{APIGroups: []string{widgetsGroup}, Resources: []string{"widgets", "gadgets"}, Verbs: []string{"get", "list", "watch"}})
	if out, err := cluster.Kubectl("auth", "can-i", "get", "customresourcedefinitions", "--as", "system:serviceaccount:"+ns+":columns-reader"); err == nil {
		t.Fatalf("the ServiceAccount may read CRDs: %s", out)
	}
	for _, args := range [][]string{
		{"widgets", "-n", ns},
		{"widgets", "-n", ns, "-o", "wide"},
		{"widgets." + widgetsGroup, "-n", ns, "--show-labels"},
		{"widgets,gadgets", "-n", ns},
	} {
		got := run(t, append([]string{"query", "--kubeconfig", kubeconfig}, args...)...)
		want := kubectlWith(t, kubeconfig, append([]string{"get"}, args...)...)
		if got.code != 0 || want.code != 0 || got.errOut != want.errOut {
			t.Fatalf("query %s\nexit code %d, stderr %q\nkubectl: exit code %d, stderr %q", strings.Join(args, " "), got.code, got.errOut, want.code, want.errOut)
		}
		sameTable(t, args, got, want, -1)
	}
}
