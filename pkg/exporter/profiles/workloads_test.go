package profiles_test

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// t0 is 2026-11-25T10:00:00Z, 1795600800 in unix seconds.
var t0 = metav1.NewTime(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))

func ptr[T any](v T) *T { return &v }

func TestDeployments(t *testing.T) {
	full := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "d1", Generation: 4, CreationTimestamp: t0,
			DeletionTimestamp: &t0, OwnerReferences: []metav1.OwnerReference{{Kind: "App", Name: "shop"}},
			Labels: map[string]string{"app": "web"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(10)), Paused: true, Strategy: appsv1.DeploymentStrategy{
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr(intstr.FromString("25%")), MaxSurge: ptr(intstr.FromString("25%"))}}},
		Status: appsv1.DeploymentStatus{Replicas: 9, ReadyReplicas: 8, AvailableReplicas: 7, UnavailableReplicas: 2, UpdatedReplicas: 6,
			TerminatingReplicas: ptr(int32(1)), ObservedGeneration: 3,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "SomethingElse"},
			}},
	}
	bare := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "bare", UID: "d2"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(3)), Strategy: appsv1.DeploymentStrategy{
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr(intstr.FromInt32(1)), MaxSurge: ptr(intstr.FromString("x"))}}},
	}
	got := renderWith(t, "deployments", "deployments=[app]", "", full, bare)
	expectFamilies(t, got, `
# HELP kube_deployment_owner Information about the Deployment's owner.
# TYPE kube_deployment_owner gauge
kube_deployment_owner{namespace="shop",deployment="web",owner_kind="App",owner_name="shop"} 1
kube_deployment_owner{namespace="shop",deployment="bare",owner_kind="",owner_name=""} 1
# HELP kube_deployment_created [STABLE] Unix creation timestamp
# TYPE kube_deployment_created gauge
kube_deployment_created{namespace="shop",deployment="web"} 1.7956008e+09
# HELP kube_deployment_status_replicas [STABLE] The number of replicas per deployment.
# TYPE kube_deployment_status_replicas gauge
kube_deployment_status_replicas{namespace="shop",deployment="web"} 9
kube_deployment_status_replicas{namespace="shop",deployment="bare"} 0
# HELP kube_deployment_status_replicas_ready [STABLE] The number of ready replicas per deployment.
# TYPE kube_deployment_status_replicas_ready gauge
kube_deployment_status_replicas_ready{namespace="shop",deployment="web"} 8
kube_deployment_status_replicas_ready{namespace="shop",deployment="bare"} 0
# HELP kube_deployment_status_replicas_available [STABLE] The number of available replicas per deployment.
# TYPE kube_deployment_status_replicas_available gauge
kube_deployment_status_replicas_available{namespace="shop",deployment="web"} 7
kube_deployment_status_replicas_available{namespace="shop",deployment="bare"} 0
# HELP kube_deployment_status_replicas_unavailable [STABLE] The number of unavailable replicas per deployment.
# TYPE kube_deployment_status_replicas_unavailable gauge
kube_deployment_status_replicas_unavailable{namespace="shop",deployment="web"} 2
kube_deployment_status_replicas_unavailable{namespace="shop",deployment="bare"} 0
# HELP kube_deployment_status_replicas_updated [STABLE] The number of updated replicas per deployment.
# TYPE kube_deployment_status_replicas_updated gauge
kube_deployment_status_replicas_updated{namespace="shop",deployment="web"} 6
kube_deployment_status_replicas_updated{namespace="shop",deployment="bare"} 0
# HELP kube_deployment_status_terminating_replicas The number of terminating replicas per deployment.
# TYPE kube_deployment_status_terminating_replicas gauge
kube_deployment_status_terminating_replicas{namespace="shop",deployment="web"} 1
# HELP kube_deployment_status_observed_generation [STABLE] The generation observed by the deployment controller.
# TYPE kube_deployment_status_observed_generation gauge
kube_deployment_status_observed_generation{namespace="shop",deployment="web"} 3
kube_deployment_status_observed_generation{namespace="shop",deployment="bare"} 0
# HELP kube_deployment_status_condition [STABLE] The current status conditions of a deployment.
# TYPE kube_deployment_status_condition gauge
kube_deployment_status_condition{namespace="shop",deployment="web",reason="MinimumReplicasAvailable",condition="Available",status="true"} 1
kube_deployment_status_condition{namespace="shop",deployment="web",reason="MinimumReplicasAvailable",condition="Available",status="false"} 0
kube_deployment_status_condition{namespace="shop",deployment="web",reason="MinimumReplicasAvailable",condition="Available",status="unknown"} 0
kube_deployment_status_condition{namespace="shop",deployment="web",reason="unknown",condition="Progressing",status="true"} 0
kube_deployment_status_condition{namespace="shop",deployment="web",reason="unknown",condition="Progressing",status="false"} 1
kube_deployment_status_condition{namespace="shop",deployment="web",reason="unknown",condition="Progressing",status="unknown"} 0
# HELP kube_deployment_spec_replicas [STABLE] Number of desired pods for a deployment.
# TYPE kube_deployment_spec_replicas gauge
kube_deployment_spec_replicas{namespace="shop",deployment="web"} 10
kube_deployment_spec_replicas{namespace="shop",deployment="bare"} 3
# HELP kube_deployment_spec_paused [STABLE] Whether the deployment is paused and will not be processed by the deployment controller.
# TYPE kube_deployment_spec_paused gauge
kube_deployment_spec_paused{namespace="shop",deployment="web"} 1
kube_deployment_spec_paused{namespace="shop",deployment="bare"} 0
# HELP kube_deployment_spec_strategy_rollingupdate_max_unavailable [STABLE] Maximum number of unavailable replicas during a rolling update of a deployment.
# TYPE kube_deployment_spec_strategy_rollingupdate_max_unavailable gauge
kube_deployment_spec_strategy_rollingupdate_max_unavailable{namespace="shop",deployment="web"} 2
kube_deployment_spec_strategy_rollingupdate_max_unavailable{namespace="shop",deployment="bare"} 1
# HELP kube_deployment_spec_strategy_rollingupdate_max_surge [STABLE] Maximum number of replicas that can be scheduled above the desired number of replicas during a rolling update of a deployment.
# TYPE kube_deployment_spec_strategy_rollingupdate_max_surge gauge
kube_deployment_spec_strategy_rollingupdate_max_surge{namespace="shop",deployment="web"} 3
# HELP kube_deployment_metadata_generation [STABLE] Sequence number representing a specific generation of the desired state.
# TYPE kube_deployment_metadata_generation gauge
kube_deployment_metadata_generation{namespace="shop",deployment="web"} 4
kube_deployment_metadata_generation{namespace="shop",deployment="bare"} 0
# HELP kube_deployment_deletion_timestamp Unix deletion timestamp
# TYPE kube_deployment_deletion_timestamp gauge
kube_deployment_deletion_timestamp{namespace="shop",deployment="web"} 1.7956008e+09
# HELP kube_deployment_labels [STABLE] Kubernetes labels converted to Prometheus labels.
# TYPE kube_deployment_labels gauge
kube_deployment_labels{namespace="shop",deployment="web",label_app="web"} 1
kube_deployment_labels{namespace="shop",deployment="bare"} 1
# HELP kube_deployment_annotations Kubernetes annotations converted to Prometheus labels.
# TYPE kube_deployment_annotations gauge
`)
}

func TestReplicaSetsAndControllers(t *testing.T) {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-7d4", UID: "r1", Generation: 2, CreationTimestamp: t0,
			OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: "web", Controller: ptr(true)}}},
		Spec:   appsv1.ReplicaSetSpec{Replicas: ptr(int32(3))},
		Status: appsv1.ReplicaSetStatus{Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 2, ObservedGeneration: 2},
	}
	orphan := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orphan", UID: "r2"}}
	expectFamilies(t, render(t, "replicasets", rs, orphan), `
# HELP kube_replicaset_created [STABLE] Unix creation timestamp
# TYPE kube_replicaset_created gauge
kube_replicaset_created{namespace="shop",replicaset="web-7d4"} 1.7956008e+09
# HELP kube_replicaset_status_replicas [STABLE] The number of replicas per ReplicaSet.
# TYPE kube_replicaset_status_replicas gauge
kube_replicaset_status_replicas{namespace="shop",replicaset="web-7d4"} 3
kube_replicaset_status_replicas{namespace="shop",replicaset="orphan"} 0
# HELP kube_replicaset_status_ready_replicas [STABLE] The number of ready replicas per ReplicaSet.
# TYPE kube_replicaset_status_ready_replicas gauge
kube_replicaset_status_ready_replicas{namespace="shop",replicaset="web-7d4"} 2
kube_replicaset_status_ready_replicas{namespace="shop",replicaset="orphan"} 0
# HELP kube_replicaset_status_terminating_replicas The number of terminating replicas per ReplicaSet.
# TYPE kube_replicaset_status_terminating_replicas gauge
# HELP kube_replicaset_spec_replicas [STABLE] Number of desired pods for a ReplicaSet.
# TYPE kube_replicaset_spec_replicas gauge
kube_replicaset_spec_replicas{namespace="shop",replicaset="web-7d4"} 3
# HELP kube_replicaset_owner [STABLE] Information about the ReplicaSet's owner.
# TYPE kube_replicaset_owner gauge
kube_replicaset_owner{namespace="shop",replicaset="web-7d4",owner_kind="Deployment",owner_name="web",owner_is_controller="true"} 1
kube_replicaset_owner{namespace="shop",replicaset="orphan",owner_kind="",owner_name="",owner_is_controller=""} 1
`)
	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Namespace: "old", Name: "legacy", UID: "c1", Generation: 1,
			OwnerReferences: []metav1.OwnerReference{{Kind: "Thing", Name: "t"}}},
		Spec:   corev1.ReplicationControllerSpec{Replicas: ptr(int32(2))},
		Status: corev1.ReplicationControllerStatus{Replicas: 2, AvailableReplicas: 1},
	}
	expectFamilies(t, render(t, "replicationcontrollers", rc), `
# HELP kube_replicationcontroller_spec_replicas [STABLE] Number of desired pods for a ReplicationController.
# TYPE kube_replicationcontroller_spec_replicas gauge
kube_replicationcontroller_spec_replicas{namespace="old",replicationcontroller="legacy"} 2
# HELP kube_replicationcontroller_status_available_replicas [STABLE] The number of available replicas per ReplicationController.
# TYPE kube_replicationcontroller_status_available_replicas gauge
kube_replicationcontroller_status_available_replicas{namespace="old",replicationcontroller="legacy"} 1
# HELP kube_replicationcontroller_created [STABLE] Unix creation timestamp
# TYPE kube_replicationcontroller_created gauge
# HELP kube_replicationcontroller_owner Information about the ReplicationController's owner.
# TYPE kube_replicationcontroller_owner gauge
kube_replicationcontroller_owner{namespace="old",replicationcontroller="legacy",owner_kind="Thing",owner_name="t",owner_is_controller="false"} 1
`)
}

func TestStatefulSetsAndDaemonSets(t *testing.T) {
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "pg", UID: "s1", Generation: 5},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(3)), Ordinals: &appsv1.StatefulSetOrdinals{Start: 1},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: "Retain", WhenScaled: "Delete"}},
		Status: appsv1.StatefulSetStatus{Replicas: 3, AvailableReplicas: 2, CurrentReplicas: 3, ReadyReplicas: 2, UpdatedReplicas: 1,
			ObservedGeneration: 5, CurrentRevision: "pg-1", UpdateRevision: "pg-2"},
	}
	bare := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "bare", UID: "s2"}}
	expectFamilies(t, render(t, "statefulsets", sts, bare), `
# HELP kube_statefulset_replicas [STABLE] Number of desired pods for a StatefulSet.
# TYPE kube_statefulset_replicas gauge
kube_statefulset_replicas{namespace="db",statefulset="pg"} 3
# HELP kube_statefulset_ordinals_start [STABLE] Start ordinal of the StatefulSet.
# TYPE kube_statefulset_ordinals_start gauge
kube_statefulset_ordinals_start{namespace="db",statefulset="pg"} 1
# HELP kube_statefulset_status_replicas_ready [STABLE] The number of ready replicas per StatefulSet.
# TYPE kube_statefulset_status_replicas_ready gauge
kube_statefulset_status_replicas_ready{namespace="db",statefulset="pg"} 2
kube_statefulset_status_replicas_ready{namespace="db",statefulset="bare"} 0
# HELP kube_statefulset_status_replicas_updated [STABLE] The number of updated replicas per StatefulSet.
# TYPE kube_statefulset_status_replicas_updated gauge
kube_statefulset_status_replicas_updated{namespace="db",statefulset="pg"} 1
kube_statefulset_status_replicas_updated{namespace="db",statefulset="bare"} 0
# HELP kube_statefulset_metadata_generation [STABLE] Sequence number representing a specific generation of the desired state for the StatefulSet.
# TYPE kube_statefulset_metadata_generation gauge
kube_statefulset_metadata_generation{namespace="db",statefulset="pg"} 5
kube_statefulset_metadata_generation{namespace="db",statefulset="bare"} 0
# HELP kube_statefulset_persistentvolumeclaim_retention_policy [STABLE] Count of retention policy for StatefulSet template PVCs
# TYPE kube_statefulset_persistentvolumeclaim_retention_policy gauge
kube_statefulset_persistentvolumeclaim_retention_policy{namespace="db",statefulset="pg",when_deleted="Retain",when_scaled="Delete"} 1
# HELP kube_statefulset_status_current_revision [STABLE] Indicates the version of the StatefulSet used to generate Pods in the sequence [0,currentReplicas).
# TYPE kube_statefulset_status_current_revision gauge
kube_statefulset_status_current_revision{namespace="db",statefulset="pg",revision="pg-1"} 1
kube_statefulset_status_current_revision{namespace="db",statefulset="bare",revision=""} 1
# HELP kube_statefulset_status_update_revision [STABLE] Indicates the version of the StatefulSet used to generate Pods in the sequence [replicas-updatedReplicas,replicas)
# TYPE kube_statefulset_status_update_revision gauge
kube_statefulset_status_update_revision{namespace="db",statefulset="pg",revision="pg-2"} 1
kube_statefulset_status_update_revision{namespace="db",statefulset="bare",revision=""} 1
`)
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "agent", UID: "a1", Generation: 2},
		Status: appsv1.DaemonSetStatus{CurrentNumberScheduled: 5, DesiredNumberScheduled: 6, NumberAvailable: 4, NumberMisscheduled: 1,
			NumberReady: 4, NumberUnavailable: 2, ObservedGeneration: 2, UpdatedNumberScheduled: 3},
	}
	expectFamilies(t, render(t, "daemonsets", ds), `
# HELP kube_daemonset_status_current_number_scheduled [STABLE] The number of nodes running at least one daemon pod and are supposed to.
# TYPE kube_daemonset_status_current_number_scheduled gauge
kube_daemonset_status_current_number_scheduled{namespace="kube-system",daemonset="agent"} 5
# HELP kube_daemonset_status_desired_number_scheduled [STABLE] The number of nodes that should be running the daemon pod.
# TYPE kube_daemonset_status_desired_number_scheduled gauge
kube_daemonset_status_desired_number_scheduled{namespace="kube-system",daemonset="agent"} 6
# HELP kube_daemonset_status_number_available [STABLE] The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available
# TYPE kube_daemonset_status_number_available gauge
kube_daemonset_status_number_available{namespace="kube-system",daemonset="agent"} 4
# HELP kube_daemonset_status_number_misscheduled [STABLE] The number of nodes running a daemon pod but are not supposed to.
# TYPE kube_daemonset_status_number_misscheduled gauge
kube_daemonset_status_number_misscheduled{namespace="kube-system",daemonset="agent"} 1
# HELP kube_daemonset_status_number_unavailable [STABLE] The number of nodes that should be running the daemon pod and have none of the daemon pod running and available
# TYPE kube_daemonset_status_number_unavailable gauge
kube_daemonset_status_number_unavailable{namespace="kube-system",daemonset="agent"} 2
# HELP kube_daemonset_status_updated_number_scheduled [STABLE] The total number of nodes that are running updated daemon pod
# TYPE kube_daemonset_status_updated_number_scheduled gauge
kube_daemonset_status_updated_number_scheduled{namespace="kube-system",daemonset="agent"} 3
# HELP kube_daemonset_metadata_generation [STABLE] Sequence number representing a specific generation of the desired state.
# TYPE kube_daemonset_metadata_generation gauge
kube_daemonset_metadata_generation{namespace="kube-system",daemonset="agent"} 2
`)
}

func TestJobsAndCronJobs(t *testing.T) {
	failed := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "nightly-1", UID: "j1",
			OwnerReferences: []metav1.OwnerReference{{Kind: "CronJob", Name: "nightly", Controller: ptr(true)}}},
		Spec: batchv1.JobSpec{Parallelism: ptr(int32(2)), Completions: ptr(int32(4)), ActiveDeadlineSeconds: ptr(int64(600))},
		Status: batchv1.JobStatus{Failed: 3, Succeeded: 1, Active: 1, Ready: ptr(int32(1)), StartTime: &t0,
			Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}},
	}
	odd := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "odd", UID: "j2"},
		Status: batchv1.JobStatus{Failed: 2, CompletionTime: &t0,
			Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}, {Type: "Suspended", Status: corev1.ConditionFalse}}},
	}
	ok := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "ok", UID: "j3"}}
	expectFamilies(t, render(t, "jobs", failed, odd, ok), `
# HELP kube_job_info [STABLE] Information about job.
# TYPE kube_job_info gauge
kube_job_info{namespace="batch",job_name="nightly-1"} 1
kube_job_info{namespace="batch",job_name="odd"} 1
kube_job_info{namespace="batch",job_name="ok"} 1
# HELP kube_job_spec_parallelism [STABLE] The maximum desired number of pods the job should run at any given time.
# TYPE kube_job_spec_parallelism gauge
kube_job_spec_parallelism{namespace="batch",job_name="nightly-1"} 2
# HELP kube_job_spec_active_deadline_seconds [STABLE] The duration in seconds relative to the startTime that the job may be active before the system tries to terminate it.
# TYPE kube_job_spec_active_deadline_seconds gauge
kube_job_spec_active_deadline_seconds{namespace="batch",job_name="nightly-1"} 600
# HELP kube_job_status_failed [STABLE] The number of pods which reached Phase Failed and the reason for failure.
# TYPE kube_job_status_failed gauge
kube_job_status_failed{job_name="nightly-1",namespace="batch",reason="BackoffLimitExceeded"} 1
kube_job_status_failed{job_name="nightly-1",namespace="batch",reason="DeadlineExceeded"} 0
kube_job_status_failed{job_name="nightly-1",namespace="batch",reason="Evicted"} 0
kube_job_status_failed{job_name="odd",namespace="batch",reason=""} 2
kube_job_status_failed{job_name="ok",namespace="batch"} 0
# HELP kube_job_status_active [STABLE] The number of actively running pods.
# TYPE kube_job_status_active gauge
kube_job_status_active{namespace="batch",job_name="nightly-1"} 1
kube_job_status_active{namespace="batch",job_name="odd"} 0
kube_job_status_active{namespace="batch",job_name="ok"} 0
# HELP kube_job_status_ready The number of ready pods that belong to this Job.
# TYPE kube_job_status_ready gauge
kube_job_status_ready{namespace="batch",job_name="nightly-1"} 1
kube_job_status_ready{namespace="batch",job_name="odd"} 0
kube_job_status_ready{namespace="batch",job_name="ok"} 0
# HELP kube_job_complete [STABLE] The job has completed its execution.
# TYPE kube_job_complete gauge
kube_job_complete{namespace="batch",job_name="odd",condition="true"} 1
kube_job_complete{namespace="batch",job_name="odd",condition="false"} 0
kube_job_complete{namespace="batch",job_name="odd",condition="unknown"} 0
# HELP kube_job_failed [STABLE] The job has failed its execution.
# TYPE kube_job_failed gauge
kube_job_failed{namespace="batch",job_name="nightly-1",condition="true"} 1
kube_job_failed{namespace="batch",job_name="nightly-1",condition="false"} 0
kube_job_failed{namespace="batch",job_name="nightly-1",condition="unknown"} 0
# HELP kube_job_status_start_time [STABLE] StartTime represents time when the job was acknowledged by the Job Manager.
# TYPE kube_job_status_start_time gauge
kube_job_status_start_time{namespace="batch",job_name="nightly-1"} 1.7956008e+09
# HELP kube_job_status_completion_time [STABLE] CompletionTime represents time when the job was completed.
# TYPE kube_job_status_completion_time gauge
kube_job_status_completion_time{namespace="batch",job_name="odd"} 1.7956008e+09
# HELP kube_job_status_suspended The number of pods which reached Phase Suspended.
# TYPE kube_job_status_suspended gauge
kube_job_status_suspended{namespace="batch",job_name="odd"} 0
# HELP kube_job_owner [STABLE] Information about the Job's owner.
# TYPE kube_job_owner gauge
kube_job_owner{namespace="batch",job_name="nightly-1",owner_kind="CronJob",owner_name="nightly",owner_is_controller="true"} 1
kube_job_owner{namespace="batch",job_name="odd",owner_kind="",owner_name="",owner_is_controller=""} 1
kube_job_owner{namespace="batch",job_name="ok",owner_kind="",owner_name="",owner_is_controller=""} 1
`)
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "nightly", UID: "c1", ResourceVersion: "12345"},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", ConcurrencyPolicy: batchv1.ForbidConcurrent, TimeZone: ptr("Europe/Paris"),
			Suspend: ptr(true), StartingDeadlineSeconds: ptr(int64(30)), SuccessfulJobsHistoryLimit: ptr(int32(3))},
		Status: batchv1.CronJobStatus{Active: []corev1.ObjectReference{{Name: "a"}, {Name: "b"}}, LastScheduleTime: &t0},
	}
	plain := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "plain", UID: "c2", ResourceVersion: "x"},
		Spec: batchv1.CronJobSpec{Schedule: "@hourly"}}
	expectFamilies(t, render(t, "cronjobs", cj, plain), `
# HELP kube_cronjob_info [STABLE] Info about cronjob.
# TYPE kube_cronjob_info gauge
kube_cronjob_info{namespace="batch",cronjob="nightly",schedule="0 3 * * *",concurrency_policy="Forbid",timezone="Europe/Paris"} 1
kube_cronjob_info{namespace="batch",cronjob="plain",schedule="@hourly",concurrency_policy="",timezone="local"} 1
# HELP kube_cronjob_status_active [STABLE] Active holds pointers to currently running jobs.
# TYPE kube_cronjob_status_active gauge
kube_cronjob_status_active{namespace="batch",cronjob="nightly"} 2
kube_cronjob_status_active{namespace="batch",cronjob="plain"} 0
# HELP kube_cronjob_status_last_schedule_time [STABLE] LastScheduleTime keeps information of when was the last time the job was successfully scheduled.
# TYPE kube_cronjob_status_last_schedule_time gauge
kube_cronjob_status_last_schedule_time{namespace="batch",cronjob="nightly"} 1.7956008e+09
# HELP kube_cronjob_spec_suspend [STABLE] Suspend flag tells the controller to suspend subsequent executions.
# TYPE kube_cronjob_spec_suspend gauge
kube_cronjob_spec_suspend{namespace="batch",cronjob="nightly"} 1
kube_cronjob_spec_suspend{namespace="batch",cronjob="plain"} 0
# HELP kube_cronjob_spec_starting_deadline_seconds [STABLE] Deadline in seconds for starting the job if it misses scheduled time for any reason.
# TYPE kube_cronjob_spec_starting_deadline_seconds gauge
kube_cronjob_spec_starting_deadline_seconds{namespace="batch",cronjob="nightly"} 30
# HELP kube_cronjob_metadata_resource_version [STABLE] Resource version representing a specific version of the cronjob.
# TYPE kube_cronjob_metadata_resource_version gauge
kube_cronjob_metadata_resource_version{namespace="batch",cronjob="nightly"} 12345
# HELP kube_cronjob_spec_successful_job_history_limit Successful job history limit tells the controller how many completed jobs should be preserved.
# TYPE kube_cronjob_spec_successful_job_history_limit gauge
kube_cronjob_spec_successful_job_history_limit{namespace="batch",cronjob="nightly"} 3
`)
}

func TestAutoscalersAndDisruptionBudgets(t *testing.T) {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "h1", Generation: 2},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 10, MinReplicas: ptr(int32(2)),
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, DesiredReplicas: 4,
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionTrue}}},
	}
	dflt := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api", UID: "h2"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 5,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "api"}},
	}
	expectFamilies(t, render(t, "horizontalpodautoscalers", hpa, dflt), `
# HELP kube_horizontalpodautoscaler_info Information about this autoscaler.
# TYPE kube_horizontalpodautoscaler_info gauge
kube_horizontalpodautoscaler_info{namespace="shop",horizontalpodautoscaler="web",scaletargetref_api_version="apps/v1",scaletargetref_kind="Deployment",scaletargetref_name="web"} 1
kube_horizontalpodautoscaler_info{namespace="shop",horizontalpodautoscaler="api",scaletargetref_kind="Deployment",scaletargetref_name="api"} 1
# HELP kube_horizontalpodautoscaler_spec_max_replicas [STABLE] Upper limit for the number of pods that can be set by the autoscaler; cannot be smaller than MinReplicas.
# TYPE kube_horizontalpodautoscaler_spec_max_replicas gauge
kube_horizontalpodautoscaler_spec_max_replicas{namespace="shop",horizontalpodautoscaler="web"} 10
kube_horizontalpodautoscaler_spec_max_replicas{namespace="shop",horizontalpodautoscaler="api"} 5
# HELP kube_horizontalpodautoscaler_spec_min_replicas [STABLE] Lower limit for the number of pods that can be set by the autoscaler, default 1.
# TYPE kube_horizontalpodautoscaler_spec_min_replicas gauge
kube_horizontalpodautoscaler_spec_min_replicas{namespace="shop",horizontalpodautoscaler="web"} 2
kube_horizontalpodautoscaler_spec_min_replicas{namespace="shop",horizontalpodautoscaler="api"} 1
# HELP kube_horizontalpodautoscaler_status_current_replicas [STABLE] Current number of replicas of pods managed by this autoscaler.
# TYPE kube_horizontalpodautoscaler_status_current_replicas gauge
kube_horizontalpodautoscaler_status_current_replicas{namespace="shop",horizontalpodautoscaler="web"} 3
kube_horizontalpodautoscaler_status_current_replicas{namespace="shop",horizontalpodautoscaler="api"} 0
# HELP kube_horizontalpodautoscaler_status_desired_replicas [STABLE] Desired number of replicas of pods managed by this autoscaler.
# TYPE kube_horizontalpodautoscaler_status_desired_replicas gauge
kube_horizontalpodautoscaler_status_desired_replicas{namespace="shop",horizontalpodautoscaler="web"} 4
kube_horizontalpodautoscaler_status_desired_replicas{namespace="shop",horizontalpodautoscaler="api"} 0
# HELP kube_horizontalpodautoscaler_status_condition [STABLE] The condition of this autoscaler.
# TYPE kube_horizontalpodautoscaler_status_condition gauge
kube_horizontalpodautoscaler_status_condition{namespace="shop",horizontalpodautoscaler="web",condition="ScalingActive",status="true"} 1
kube_horizontalpodautoscaler_status_condition{namespace="shop",horizontalpodautoscaler="web",condition="ScalingActive",status="false"} 0
kube_horizontalpodautoscaler_status_condition{namespace="shop",horizontalpodautoscaler="web",condition="ScalingActive",status="unknown"} 0
`)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "p1", CreationTimestamp: t0},
		Status:     policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1, ExpectedPods: 3, ObservedGeneration: 1},
	}
	expectFamilies(t, render(t, "poddisruptionbudgets", pdb), `
# HELP kube_poddisruptionbudget_created [STABLE] Unix creation timestamp
# TYPE kube_poddisruptionbudget_created gauge
kube_poddisruptionbudget_created{namespace="shop",poddisruptionbudget="web"} 1.7956008e+09
# HELP kube_poddisruptionbudget_status_current_healthy [STABLE] Current number of healthy pods
# TYPE kube_poddisruptionbudget_status_current_healthy gauge
kube_poddisruptionbudget_status_current_healthy{namespace="shop",poddisruptionbudget="web"} 3
# HELP kube_poddisruptionbudget_status_desired_healthy [STABLE] Minimum desired number of healthy pods
# TYPE kube_poddisruptionbudget_status_desired_healthy gauge
kube_poddisruptionbudget_status_desired_healthy{namespace="shop",poddisruptionbudget="web"} 2
# HELP kube_poddisruptionbudget_status_pod_disruptions_allowed [STABLE] Number of pod disruptions that are currently allowed
# TYPE kube_poddisruptionbudget_status_pod_disruptions_allowed gauge
kube_poddisruptionbudget_status_pod_disruptions_allowed{namespace="shop",poddisruptionbudget="web"} 1
# HELP kube_poddisruptionbudget_status_expected_pods [STABLE] Total number of pods counted by this disruption budget
# TYPE kube_poddisruptionbudget_status_expected_pods gauge
kube_poddisruptionbudget_status_expected_pods{namespace="shop",poddisruptionbudget="web"} 3
`)
}

func TestAutoscalerTargetMetrics(t *testing.T) {
	q := resource.MustParse
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "h1"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 10,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
			Behavior:       &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{Tolerance: ptr(q("50m"))}},
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: "cpu",
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(80))}}},
				{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: "memory", Container: "app",
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr(q("256Mi"))}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "rps"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr(q("1500m"))}}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr(q("30")), Value: ptr(q("100"))}}},
			}},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentMetrics: []autoscalingv2.MetricStatus{
			{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: "cpu",
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr(int32(85)), AverageValue: ptr(q("85m"))}}},
			{Type: autoscalingv2.PodsMetricSourceType},
		}},
	}
	// No current metrics: the API server writes currentMetrics: null.
	idle := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "idle", UID: "h2"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 2, ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "idle"},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{Tolerance: ptr(q("0.1"))}}},
	}
	expectFamilies(t, render(t, "horizontalpodautoscalers", hpa, idle), `
# HELP kube_horizontalpodautoscaler_spec_target_metric The metric specifications used by this autoscaler when calculating the desired replica count.
# TYPE kube_horizontalpodautoscaler_spec_target_metric gauge
kube_horizontalpodautoscaler_spec_target_metric{namespace="shop",horizontalpodautoscaler="web",metric_name="cpu",metric_target_type="utilization",container=""} 80
kube_horizontalpodautoscaler_spec_target_metric{namespace="shop",horizontalpodautoscaler="web",metric_name="memory",metric_target_type="average",container="app"} 2.68435456e+08
kube_horizontalpodautoscaler_spec_target_metric{namespace="shop",horizontalpodautoscaler="web",metric_name="rps",metric_target_type="value",container=""} 1.5
kube_horizontalpodautoscaler_spec_target_metric{namespace="shop",horizontalpodautoscaler="web",metric_name="queue",metric_target_type="value",container=""} 100
kube_horizontalpodautoscaler_spec_target_metric{namespace="shop",horizontalpodautoscaler="web",metric_name="queue",metric_target_type="average",container=""} 30
# HELP kube_horizontalpodautoscaler_status_target_metric [STABLE] The current metric status used by this autoscaler when calculating the desired replica count.
# TYPE kube_horizontalpodautoscaler_status_target_metric gauge
kube_horizontalpodautoscaler_status_target_metric{namespace="shop",horizontalpodautoscaler="web",metric_name="cpu",metric_target_type="utilization",container=""} 85
kube_horizontalpodautoscaler_status_target_metric{namespace="shop",horizontalpodautoscaler="web",metric_name="cpu",metric_target_type="average",container=""} 0.085
# HELP kube_horizontalpodautoscaler_spec_behavior_scale_up_tolerance The tolerance on the ratio between the current and desired metric value below which no scale up occurs.
# TYPE kube_horizontalpodautoscaler_spec_behavior_scale_up_tolerance gauge
kube_horizontalpodautoscaler_spec_behavior_scale_up_tolerance{namespace="shop",horizontalpodautoscaler="web"} 0.05
# HELP kube_horizontalpodautoscaler_spec_behavior_scale_down_tolerance The tolerance on the ratio between the current and desired metric value below which no scale down occurs.
# TYPE kube_horizontalpodautoscaler_spec_behavior_scale_down_tolerance gauge
kube_horizontalpodautoscaler_spec_behavior_scale_down_tolerance{namespace="shop",horizontalpodautoscaler="idle"} 0.1
`)
}

func TestCronJobSchedules(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	last := metav1.NewTime(time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC))
	nightly := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "nightly", UID: "c1", CreationTimestamp: created},
		Spec:   batchv1.CronJobSpec{Schedule: "0 3 * * *", TimeZone: ptr("Europe/Paris")},
		Status: batchv1.CronJobStatus{LastScheduleTime: &last}}
	fresh := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "fresh", UID: "c2", CreationTimestamp: created},
		Spec: batchv1.CronJobSpec{Schedule: "*/15 * * * *"}}
	paused := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "paused", UID: "c3", CreationTimestamp: created},
		Spec: batchv1.CronJobSpec{Schedule: "@hourly", Suspend: ptr(true)}}
	broken := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "batch", Name: "broken", UID: "c4", CreationTimestamp: created},
		Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", TimeZone: ptr("Mars/Olympus")}}
	expectFamilies(t, render(t, "cronjobs", nightly, fresh, paused, broken), `
# HELP kube_cronjob_next_schedule_time [STABLE] Next time the cronjob should be scheduled. The time after lastScheduleTime, or after the cron job's creation time if it's never been scheduled. Use this to determine if the job is delayed.
# TYPE kube_cronjob_next_schedule_time gauge
kube_cronjob_next_schedule_time{namespace="batch",cronjob="nightly"} 1.7956584e+09
kube_cronjob_next_schedule_time{namespace="batch",cronjob="fresh"} 1.7956017e+09
# HELP kube_cronjob_schedule_invalid Emitted with value 1 for cronjobs whose schedule, in its configured timezone, cannot be parsed.
# TYPE kube_cronjob_schedule_invalid gauge
kube_cronjob_schedule_invalid{namespace="batch",cronjob="broken"} 1
`)
}
