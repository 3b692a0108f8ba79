package workload

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// controllerSet is what Load creates in one namespace when
// Spec.Controllers is set: workload controllers of every kind with the
// statuses their controllers would write, so that every metric family of
// those kinds has series. Nothing runs them (no controller manager), so
// they never change after Load.
type controllerSet struct {
	replicaSets            []*appsv1.ReplicaSet
	statefulSets           []*appsv1.StatefulSet
	daemonSets             []*appsv1.DaemonSet
	jobs                   []*batchv1.Job
	cronJobs               []*batchv1.CronJob
	hpas                   []*autoscalingv2.HorizontalPodAutoscaler
	pdbs                   []*policyv1.PodDisruptionBudget
	replicationControllers []*corev1.ReplicationController
	deployments            []*appsv1.Deployment
	// pods are pods with init containers, volumes, a runtime class, an
	// eviction: what the deployments' pods do not show.
	pods []*corev1.Pod
	// terminating names objects ("kind/name") created with a finalizer and
	// deleted after: they keep a deletion timestamp.
	terminating []string
}

// finalizer holds the objects of controllerSet.terminating, which nothing
// removes.
const finalizer = "workload.kubectl-informer.io/hold"

// RuntimeClassName is the runtime class that Spec.Controllers creates, with
// a pod overhead, and that some of its pods name.
const RuntimeClassName = "sandboxed"

// controllers returns the controller objects of namespace ns (the i-th),
// each with the status to write after creating it.
func (s Spec) controllers(i int) controllerSet {
	ns := s.NamespaceName(i)
	r := s.rng("controllers", i)
	at := func(ago time.Duration) metav1.Time { return metav1.NewTime(s.Now.Add(-ago)) }
	template := func(app string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}, Spec: podSpec(app, 2)}
	}
	selector := func(app string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": name, "team": fmt.Sprintf("team-%d", i%5+1)},
			Annotations: map[string]string{"owner.example.com/contact": "oncall@example.com"}}
	}
	var set controllerSet
	hold := func(m metav1.ObjectMeta) metav1.ObjectMeta {
		m.Finalizers = []string{finalizer}
		return m
	}

	// A replica set of a rollout in progress and an old one scaled to zero.
	for k, replicas := range []int32{3, 0} {
		name := fmt.Sprintf("frontend-%d", k+1)
		rs := &appsv1.ReplicaSet{ObjectMeta: meta(name),
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr(replicas), Selector: selector(name), Template: template(name)}}
		rs.Labels["app"] = name
		rs.Status = appsv1.ReplicaSetStatus{Replicas: replicas, FullyLabeledReplicas: replicas, ReadyReplicas: max(replicas-1, 0),
			AvailableReplicas: max(replicas-1, 0), ObservedGeneration: 1}
		set.replicaSets = append(set.replicaSets, rs)
	}

	// A stateful set mid-update, and one with a PVC template and a retention policy.
	for k := range 2 {
		name := fmt.Sprintf("store-%d", k+1)
		m := meta(name)
		if k == 1 {
			m = hold(m)
		}
		ss := &appsv1.StatefulSet{ObjectMeta: m, Spec: appsv1.StatefulSetSpec{
			Replicas: ptr(int32(3)), Selector: selector(name), Template: template(name), ServiceName: name}}
		if k == 1 {
			ss.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}
			ss.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType}
			ss.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 1}
		}
		ss.Status = appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 3, ReadyReplicas: int32(2 + k), CurrentReplicas: int32(1 + k),
			UpdatedReplicas: int32(2 - k), AvailableReplicas: int32(2 + k), CurrentRevision: name + "-6f8c9", UpdateRevision: name + "-7d4b2"}
		set.statefulSets = append(set.statefulSets, ss)
	}

	// A daemon set on every node, one of them misscheduled.
	ds := &appsv1.DaemonSet{ObjectMeta: hold(meta("node-agent")), Spec: appsv1.DaemonSetSpec{Selector: selector("node-agent"), Template: template("node-agent")}}
	nodes := int32(s.Nodes)
	ds.Status = appsv1.DaemonSetStatus{CurrentNumberScheduled: nodes, DesiredNumberScheduled: nodes, NumberMisscheduled: 1,
		NumberReady: nodes - 1, UpdatedNumberScheduled: nodes, NumberAvailable: nodes - 1, NumberUnavailable: 1, ObservedGeneration: 1}
	set.daemonSets = append(set.daemonSets, ds)

	// Cron jobs, one suspended; jobs that completed, failed and still run,
	// the first owned by the cron job.
	for k, suspend := range []bool{false, true} {
		name := fmt.Sprintf("report-%d", k+1)
		cj := &batchv1.CronJob{ObjectMeta: meta(name), Spec: batchv1.CronJobSpec{
			Schedule: []string{"*/15 * * * *", "0 3 * * *"}[k], Suspend: ptr(suspend), ConcurrencyPolicy: batchv1.ForbidConcurrent,
			StartingDeadlineSeconds: ptr(int64(120)), SuccessfulJobsHistoryLimit: ptr(int32(3)), FailedJobsHistoryLimit: ptr(int32(1)),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobTemplate(name)}}}}
		last, success := at(time.Duration(20+r.IntN(60))*time.Minute), at(time.Duration(80+r.IntN(60))*time.Minute)
		cj.Status = batchv1.CronJobStatus{LastScheduleTime: &last, LastSuccessfulTime: &success}
		set.cronJobs = append(set.cronJobs, cj)
	}
	for k, state := range []string{"complete", "failed", "active"} {
		name := fmt.Sprintf("migrate-%d", k+1)
		job := &batchv1.Job{ObjectMeta: meta(name), Spec: batchv1.JobSpec{Parallelism: ptr(int32(2)), Completions: ptr(int32(2)),
			BackoffLimit: ptr(int32(3)), ActiveDeadlineSeconds: ptr(int64(3600)), Template: jobTemplate(name)}}
		started := at(time.Duration(2+k) * time.Hour)
		job.Status.StartTime = &started
		switch state {
		case "complete":
			done := at(time.Hour)
			job.Status.Succeeded, job.Status.CompletionTime = 2, &done
			job.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: done, LastProbeTime: done},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: done, LastProbeTime: done}}
		case "failed":
			done := at(90 * time.Minute)
			job.Status.Failed = 4
			job.Status.Conditions = []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", LastTransitionTime: done, LastProbeTime: done},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: done, LastProbeTime: done}}
		case "active":
			job.Status.Active, job.Status.Ready, job.Status.Succeeded = 1, ptr(int32(1)), 1
		}
		set.jobs = append(set.jobs, job)
	}

	// Autoscalers on the replica sets: one with CPU and memory targets and
	// current metrics, one scaled by a pods metric and unable to scale.
	hpa := func(name, target string) *autoscalingv2.HorizontalPodAutoscaler {
		return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta(name), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: target},
			MinReplicas:    ptr(int32(2)), MaxReplicas: 10}}
	}
	cpu := hpa("frontend-cpu", "frontend-1")
	cpu.Spec.Metrics = []autoscalingv2.MetricSpec{
		{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(70))}}},
		{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr(resource.MustParse("256Mi"))}}}}
	cpu.Status = autoscalingv2.HorizontalPodAutoscalerStatus{ObservedGeneration: ptr(int64(1)), CurrentReplicas: 3, DesiredReplicas: 4,
		CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
			Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr(int32(85)), AverageValue: ptr(resource.MustParse("85m"))}}}},
		Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
			{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "SucceededRescale", LastTransitionTime: at(time.Hour)},
			{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionTrue, Reason: "ValidMetricFound", LastTransitionTime: at(time.Hour)},
			{Type: autoscalingv2.ScalingLimited, Status: corev1.ConditionFalse, Reason: "DesiredWithinRange", LastTransitionTime: at(time.Hour)}}}
	pods := hpa("frontend-queue", "frontend-2")
	pods.ObjectMeta = hold(pods.ObjectMeta)
	pods.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "queue_depth"},
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr(resource.MustParse("30"))}}}}
	pods.Status = autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 0, DesiredReplicas: 0,
		Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
			{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionFalse, Reason: "FailedGetScale", LastTransitionTime: at(time.Hour)},
			{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionUnknown, Reason: "FailedGetPodsMetric", LastTransitionTime: at(time.Hour)}}}
	set.hpas = append(set.hpas, cpu, pods)

	// Disruption budgets by minAvailable and by maxUnavailable percentage.
	minAvail := &policyv1.PodDisruptionBudget{ObjectMeta: meta("frontend-pdb"), Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: ptr(intstr.FromInt32(2)), Selector: selector("frontend-1")}}
	minAvail.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 3, DisruptionsAllowed: 0,
		Conditions: []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse, Reason: policyv1.InsufficientPodsReason,
			ObservedGeneration: 1, LastTransitionTime: at(time.Hour)}}}
	maxUnavail := &policyv1.PodDisruptionBudget{ObjectMeta: hold(meta("store-pdb")), Spec: policyv1.PodDisruptionBudgetSpec{
		MaxUnavailable: ptr(intstr.FromString("34%")), Selector: selector("store-1")}}
	maxUnavail.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3, DisruptionsAllowed: 1,
		Conditions: []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionTrue, Reason: policyv1.SufficientPodsReason,
			ObservedGeneration: 1, LastTransitionTime: at(time.Hour)}}}
	set.pdbs = append(set.pdbs, minAvail, maxUnavail)

	// A deployment whose rollout stalled, and one being deleted.
	for _, name := range []string{"rollout", "retired"} {
		m := meta(name)
		if name == "retired" {
			m = hold(m)
		}
		d := &appsv1.Deployment{ObjectMeta: m, Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(4)), Selector: selector(name), Template: template(name),
			Paused: name == "retired", Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr(intstr.FromString("25%")), MaxSurge: ptr(intstr.FromInt32(2))}}}}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 4, UpdatedReplicas: 2, ReadyReplicas: 3, AvailableReplicas: 3, UnavailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable", LastUpdateTime: at(time.Hour), LastTransitionTime: at(time.Hour)},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", LastUpdateTime: at(time.Hour), LastTransitionTime: at(time.Hour)}}}
		set.deployments = append(set.deployments, d)
	}
	set.terminating = append(set.terminating, "deployments/retired", "statefulsets/store-2", "daemonsets/node-agent",
		"horizontalpodautoscalers/frontend-queue", "poddisruptionbudgets/store-pdb", "pods/batch-doomed")

	// A suspended job.
	suspended := &batchv1.Job{ObjectMeta: meta("migrate-suspended"), Spec: batchv1.JobSpec{Suspend: ptr(true), Template: jobTemplate("migrate-suspended")}}
	suspended.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, Reason: "JobSuspended", LastTransitionTime: at(time.Hour), LastProbeTime: at(time.Hour)}}
	set.jobs = append(set.jobs, suspended)

	set.pods = s.controllerPods(ns, at)

	rc := &corev1.ReplicationController{ObjectMeta: meta("legacy"), Spec: corev1.ReplicationControllerSpec{
		Replicas: ptr(int32(2)), Selector: map[string]string{"app": "legacy"}, Template: ptr(template("legacy"))}}
	rc.Status = corev1.ReplicationControllerStatus{Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1, ObservedGeneration: 1}
	set.replicationControllers = append(set.replicationControllers, rc)
	return set
}

// controllerPods returns the pods of Spec.Controllers in namespace ns, with
// their statuses: one initialising, one running after its init
// containers, one evicted, one being deleted.
func (s Spec) controllerPods(ns string, at func(time.Duration) metav1.Time) []*corev1.Pod {
	started := at(2 * time.Hour)
	spec := func() corev1.PodSpec {
		sp := podSpec("batch", 3)
		sp.RuntimeClassName = ptr(RuntimeClassName)
		sp.InitContainers = []corev1.Container{
			{Name: "migrate", Image: "registry.example.com/migrate:2.1.0", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("1Gi"), "example.com/gpu": resource.MustParse("1")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"), "example.com/gpu": resource.MustParse("1")}}},
			{Name: "log-shipper", Image: "registry.example.com/shipper:0.9.1", RestartPolicy: ptr(corev1.ContainerRestartPolicyAlways)},
		}
		sp.Volumes = []corev1.Volume{
			{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-store-2-1"}}},
			{Name: "seed", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "seed", ReadOnly: true}}},
		}
		sp.ResourceClaims = []corev1.PodResourceClaim{{Name: "accelerator", ResourceClaimName: ptr("gpu-claim")}}
		sp.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "batch", Effect: corev1.TaintEffectNoSchedule},
			{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))}}
		sp.NodeSelector = map[string]string{"topology.kubernetes.io/zone": s.Zones[0]}
		sp.NodeName = s.NodeName(0)
		return sp
	}
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "batch"}}, Spec: spec()}
	}
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started}
	completed := corev1.ContainerStatus{Name: "migrate", Image: "registry.example.com/migrate:2.1.0", ImageID: "registry.example.com/migrate@sha256:" + fmt.Sprintf("%064x", 7),
		RestartCount: 1, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: started}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error", StartedAt: started, FinishedAt: started}}}
	shipper := corev1.ContainerStatus{Name: "log-shipper", Image: "registry.example.com/shipper:0.9.1", ImageID: "registry.example.com/shipper@sha256:" + fmt.Sprintf("%064x", 8),
		Ready: true, Started: ptr(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}

	initializing := pod("batch-initializing")
	initializing.Status = corev1.PodStatus{Phase: corev1.PodPending, HostIP: "10.0.0.9", StartTime: &started, QOSClass: corev1.PodQOSBurstable,
		Conditions: []corev1.PodCondition{scheduled, {Type: corev1.PodInitialized, Status: corev1.ConditionFalse, Reason: "ContainersNotInitialized", LastTransitionTime: started}},
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", Image: "registry.example.com/migrate:2.1.0", RestartCount: 4,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", StartedAt: started, FinishedAt: started}}},
			{Name: "log-shipper", Image: "registry.example.com/shipper:0.9.1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "app", Image: "registry.example.com/batch:1.3.0", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}},
			{Name: "proxy", Image: "registry.example.com/envoy:1.30.2", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}}}

	running := pod("batch-running")
	running.Status = corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "10.0.0.9", PodIP: "10.244.9.9", PodIPs: []corev1.PodIP{{IP: "10.244.9.9"}, {IP: "fd00::9"}},
		StartTime: &started, QOSClass: corev1.PodQOSBurstable,
		Conditions: []corev1.PodCondition{scheduled, {Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: started}, {Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started}},
		InitContainerStatuses: []corev1.ContainerStatus{completed, shipper}}
	for _, c := range running.Spec.Containers {
		running.Status.ContainerStatuses = append(running.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			ImageID: c.Image + "@sha256:" + fmt.Sprintf("%064x", 9), Ready: true, Started: ptr(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}})
	}

	evicted := pod("batch-evicted")
	evicted.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory.", HostIP: "10.0.0.9", StartTime: &started,
		Conditions: []corev1.PodCondition{scheduled, {Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet", LastTransitionTime: at(time.Hour)}}}

	doomed := pod("batch-doomed")
	doomed.Finalizers = []string{finalizer}
	doomed.Status = corev1.PodStatus{Phase: corev1.PodRunning, Reason: "NodeLost", HostIP: "10.0.0.9", PodIP: "10.244.9.10", StartTime: &started,
		Conditions: []corev1.PodCondition{scheduled}, InitContainerStatuses: []corev1.ContainerStatus{completed, shipper}}
	return []*corev1.Pod{initializing, running, evicted, doomed}
}

func jobTemplate(name string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "task", Image: "registry.example.com/" + name + ":1.0.0"}}}}
}

// statusClient is what a typed client offers for a kind with a status.
type statusClient[T metav1.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	UpdateStatus(context.Context, T, metav1.UpdateOptions) (T, error)
}

// statusConflicts is how often createWithStatus reads an object again
// after a conflict.
var statusConflicts = wait.Backoff{Steps: 10, Duration: 10 * time.Millisecond, Factor: 2, Jitter: 0.1}

// createWithStatus creates obj with c and writes the status setStatus
// copies from obj onto the created object, as the controller of its kind
// would. On a cluster that runs controllers, one may have written the
// object since it was created (the node lifecycle controller taints a new
// node, the deployment controller writes a new deployment's status): then
// it reads the object again, sets the status anew, and writes that.
func createWithStatus[T metav1.Object](ctx context.Context, c statusClient[T], obj T, setStatus func(got, want T)) error {
	got, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	setStatus(got, obj)
	return retry.RetryOnConflict(statusConflicts, func() error {
		_, err := c.UpdateStatus(ctx, got, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			fresh, gerr := c.Get(ctx, obj.GetName(), metav1.GetOptions{})
			if gerr != nil {
				return gerr
			}
			setStatus(fresh, obj)
			got = fresh
		}
		return err
	})
}

// loadControllers creates the controller set of namespace i; count counts
// each object created or existing.
func (s Spec) loadControllers(ctx context.Context, cs kubernetes.Interface, i int, count func(error) error) error {
	set := s.controllers(i)
	ns := s.NamespaceName(i)
	each := func(n int, create func(k int) error) error {
		for k := range n {
			if err := count(create(k)); err != nil {
				return err
			}
		}
		return nil
	}
	apps, batch, core := cs.AppsV1(), cs.BatchV1(), cs.CoreV1()
	steps := []func() error{
		func() error {
			return each(len(set.replicaSets), func(k int) error {
				return createWithStatus(ctx, apps.ReplicaSets(ns), set.replicaSets[k],
					func(got, want *appsv1.ReplicaSet) { got.Status = want.Status })
			})
		},
		func() error {
			return each(len(set.statefulSets), func(k int) error {
				return createWithStatus(ctx, apps.StatefulSets(ns), set.statefulSets[k],
					func(got, want *appsv1.StatefulSet) { got.Status = want.Status })
			})
		},
		func() error {
			return each(len(set.daemonSets), func(k int) error {
				return createWithStatus(ctx, apps.DaemonSets(ns), set.daemonSets[k],
					func(got, want *appsv1.DaemonSet) { got.Status = want.Status })
			})
		},
		func() error {
			return each(len(set.cronJobs), func(k int) error {
				return createWithStatus(ctx, batch.CronJobs(ns), set.cronJobs[k],
					func(got, want *batchv1.CronJob) { got.Status = want.Status })
			})
		},
		func() error {
			return each(len(set.jobs), func(k int) error {
				if k == 0 {
					// The first job is one its cron job started.
					owner, err := batch.CronJobs(ns).Get(ctx, set.cronJobs[0].Name, metav1.GetOptions{})
					if err != nil {
						return err
					}
					set.jobs[k].OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob",
						Name: owner.Name, UID: owner.UID, Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
				}
				return createWithStatus(ctx, batch.Jobs(ns), set.jobs[k],
					func(got, want *batchv1.Job) { got.Status = want.Status })
			})
		},
		func() error {
			hpas := cs.AutoscalingV2().HorizontalPodAutoscalers(ns)
			return each(len(set.hpas), func(k int) error {
				return createWithStatus(ctx, hpas, set.hpas[k],
					func(got, want *autoscalingv2.HorizontalPodAutoscaler) { got.Status = want.Status })
			})
		},
		func() error {
			pdbs := cs.PolicyV1().PodDisruptionBudgets(ns)
			return each(len(set.pdbs), func(k int) error {
				return createWithStatus(ctx, pdbs, set.pdbs[k],
					func(got, want *policyv1.PodDisruptionBudget) { got.Status = want.Status })
			})
		},
		func() error {
			return each(len(set.replicationControllers), func(k int) error {
				return createWithStatus(ctx, core.ReplicationControllers(ns), set.replicationControllers[k],
					func(got, want *corev1.ReplicationController) { got.Status = want.Status })
			})
		},
	}
	steps = append(steps,
		func() error {
			return each(len(set.deployments), func(k int) error {
				return createWithStatus(ctx, apps.Deployments(ns), set.deployments[k],
					func(got, want *appsv1.Deployment) { got.Status = want.Status })
			})
		},
		func() error {
			return each(len(set.pods), func(k int) error {
				return createWithStatus(ctx, core.Pods(ns), set.pods[k],
					func(got, want *corev1.Pod) { got.Status = want.Status })
			})
		})
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	// Deleted objects keep their finalizer, and so a deletion timestamp.
	for _, t := range set.terminating {
		kind, name, _ := strings.Cut(t, "/")
		var err error
		switch kind {
		case "deployments":
			err = apps.Deployments(ns).Delete(ctx, name, metav1.DeleteOptions{})
		case "statefulsets":
			err = apps.StatefulSets(ns).Delete(ctx, name, metav1.DeleteOptions{})
		case "daemonsets":
			err = apps.DaemonSets(ns).Delete(ctx, name, metav1.DeleteOptions{})
		case "horizontalpodautoscalers":
			err = cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Delete(ctx, name, metav1.DeleteOptions{})
		case "poddisruptionbudgets":
			err = cs.PolicyV1().PodDisruptionBudgets(ns).Delete(ctx, name, metav1.DeleteOptions{})
		case "pods":
			err = core.Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s in %s: %w", t, ns, err)
		}
	}
	return nil
}

// ensureRuntimeClass creates the runtime class of Spec.Controllers' pods,
// with a pod overhead, unless it exists.
func ensureRuntimeClass(ctx context.Context, cs kubernetes.Interface) error {
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: RuntimeClassName}, Handler: "runsc",
		Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("120Mi")}}}
	_, err := cs.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
