package node

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// localClass is the StorageClass of the claims of testdata/workloads.yaml.
const localClass = "kubectl-informer-local"

// TestWorkloads runs the workloads of testdata/workloads.yaml on the node
// with the exporter installed by the chart in kube-state-metrics mode,
// scraped by the project's Prometheus evaluating kube-prometheus'
// kubernetes-apps alerts. For each workload, the families report what the
// kubelet and the controllers did, with the values of the objects as read
// back from the API, and the alerts that must fire for it are pending or
// firing while the healthy workloads raise none.
func TestWorkloads(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "workloads")
	t.Cleanup(func() {
		if err := cluster.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
	})
	pv := localVolume(t, ns, "data-store-0")
	if out, err := cluster.Kubectl("apply", "-n", ns, "-f", filepath.Join("testdata", "workloads.yaml")); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	// The exporter watches the namespace only: other tests on the node
	// may run thousands of pods elsewhere. Cluster-scoped objects, the
	// PersistentVolume among them, are reported all the same.
	rel := cluster.HelmInstall(t, ns, ns, framework.MergeValues(dropInValues(), map[string]any{"namespaces": ns}))
	t.Cleanup(func() { cluster.HelmUninstall(t, rel.Name, ns) })
	// KubeDeploymentReplicasMismatch holds only while the updated replicas
	// have not changed for 10 minutes: Prometheus starts once every
	// Deployment's pods are of its current template.
	framework.Eventually(t, "every Deployment's pods are of its template", func() bool {
		ds, err := cluster.Client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(ds.Items) == 0 {
			return false
		}
		for _, d := range ds.Items {
			if d.Status.ObservedGeneration != d.Generation || d.Status.UpdatedReplicas != *d.Spec.Replicas {
				return false
			}
		}
		return true
	})
	rules, err := filepath.Abs(filepath.Join("testdata", "kubernetes-apps-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	w := &workloads{ns: ns, prom: scrapePrometheus(t, ns, "kube-state-metrics", []string{"http"}, rules)}

	t.Run("Deployment web rolls out", w.web)
	t.Run("crasher is in CrashLoopBackOff", w.crasher)
	t.Run("hog is OOM-killed", w.hog)
	t.Run("unready runs and is not ready", w.unready)
	t.Run("missing-image waits for its image", w.missingImage)
	t.Run("Jobs complete and fail", w.jobs)
	t.Run("CronJob tick fires", w.cronJob)
	t.Run("DaemonSet agent is ready on the node", w.daemonSet)
	t.Run("StatefulSet store's claim is bound to the local volume", func(t *testing.T) { w.statefulSet(t, pv) })
}

// workloads are the workloads of testdata/workloads.yaml in namespace ns,
// as Prometheus scrapes the exporter reporting them.
type workloads struct {
	ns   string
	prom *framework.Prometheus
}

// localVolume makes the StorageClass localClass if it is missing (it is
// left for other namespaces' claims) and a local PersistentVolume on the
// node, named after namespace, of a directory of the test, reserved for
// the claim of namespace: other tests' claims of the class do not take it,
// nor does the claim take theirs. The volume is deleted when the test ends.
func localVolume(t *testing.T, namespace, claim string) string {
	t.Helper()
	ctx := context.Background()
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	class := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: localClass},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: &mode,
	}
	if _, err := cluster.Client.StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: namespace},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              localClass,
			ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: namespace, Name: claim},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: t.TempDir()}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{framework.NodeName}}},
			}}}},
		},
	}
	if _, err := cluster.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.Client.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting PersistentVolume %s: %v", pv.Name, err)
		}
	})
	return pv.Name
}

// series selects family's series scraped from the exporter with the
// given label values (name, value pairs).
func series(family string, labels ...string) string {
	sel := []string{`job="kube-state-metrics"`}
	for i := 0; i+1 < len(labels); i += 2 {
		sel = append(sel, fmt.Sprintf("%s=%q", labels[i], labels[i+1]))
	}
	return family + "{" + strings.Join(sel, ",") + "}"
}

// waitValue waits until q answers one sample whose value is the one want
// reads at the same time, from the objects of the API.
func (w *workloads) waitValue(t *testing.T, q string, want func() (float64, error)) {
	t.Helper()
	w.prom.WaitFor(t, q, func(v model.Vector) error {
		x, err := want()
		if err != nil {
			return err
		}
		if len(v) != 1 || float64(v[0].Value) != x {
			return fmt.Errorf("%s answered %v, want one sample of %s", q, v, framework.FormatValue(x))
		}
		t.Logf("%s = %s", q, framework.FormatValue(x))
		return nil
	})
}

// is is a value that the object's spec or status implies.
func is(x float64) func() (float64, error) { return func() (float64, error) { return x, nil } }

// waitAlert waits until the alert is pending or firing in the namespace
// for an object whose label by is want and, at that same evaluation, for
// none whose label by is one of healthy.
func (w *workloads) waitAlert(t *testing.T, alert, by, want string, healthy ...string) {
	t.Helper()
	q := fmt.Sprintf(`ALERTS{alertname=%q,alertstate=~"pending|firing",namespace=%q}`, alert, w.ns)
	w.prom.WaitFor(t, q, func(v model.Vector) error {
		var got []string
		for _, s := range v {
			got = append(got, string(s.Metric[model.LabelName(by)]))
		}
		if !slices.Contains(got, want) {
			return fmt.Errorf("%s holds for %s %v, want %s among them", alert, by, got, want)
		}
		for _, h := range healthy {
			if slices.Contains(got, h) {
				return fmt.Errorf("%s holds for %s %v, among them the healthy %s", alert, by, got, h)
			}
		}
		t.Logf("%s holds for %s %v, not for %v", alert, by, got, healthy)
		return nil
	})
}

// pod waits until the workload's pods, of label app=app, are one, and
// returns it.
func (w *workloads) pod(t *testing.T, app string) *corev1.Pod {
	t.Helper()
	var pods *corev1.PodList
	framework.Eventually(t, "the pods of "+app+" are one", func() bool {
		var err error
		pods, err = cluster.Client.CoreV1().Pods(w.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
		return err == nil && len(pods.Items) == 1
	})
	return &pods.Items[0]
}

// podNames are the names of the pods of label app=app.
func (w *workloads) podNames(t *testing.T, app string) []string {
	t.Helper()
	pods, err := cluster.Client.CoreV1().Pods(w.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	return names
}

// containerStatus reads the status of the pod's only container from the
// API.
func (w *workloads) containerStatus(name string) (corev1.ContainerStatus, error) {
	p, err := cluster.Client.CoreV1().Pods(w.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return corev1.ContainerStatus{}, err
	}
	if len(p.Status.ContainerStatuses) != 1 {
		return corev1.ContainerStatus{}, fmt.Errorf("pod %s has container statuses %v", name, p.Status.ContainerStatuses)
	}
	return p.Status.ContainerStatuses[0], nil
}

// waitRestarted waits until the container of pod has been restarted by the
// kubelet after it terminated for reason, and the exporter reports its
// restart count as the pod's status says at the same time, and the reason
// and exit code of its last termination as the status says.
func (w *workloads) waitRestarted(t *testing.T, pod *corev1.Pod, reason string) {
	t.Helper()
	container := pod.Spec.Containers[0].Name
	var last *corev1.ContainerStateTerminated
	framework.Eventually(t, "pod "+pod.Name+" was restarted after "+reason, func() bool {
		s, err := w.containerStatus(pod.Name)
		last = s.LastTerminationState.Terminated
		return err == nil && s.RestartCount >= 1 && last != nil && last.Reason == reason
	})
	labels := []string{"namespace", w.ns, "pod", pod.Name, "container", container}
	w.waitValue(t, series("kube_pod_container_status_restarts_total", labels...), func() (float64, error) {
		s, err := w.containerStatus(pod.Name)
		return float64(s.RestartCount), err
	})
	w.waitValue(t, series("kube_pod_container_status_last_terminated_reason", append(labels, "reason", last.Reason)...), is(1))
	w.waitValue(t, series("kube_pod_container_status_last_terminated_exitcode", labels...), is(float64(last.ExitCode)))
}

func (w *workloads) web(t *testing.T) {
	ctx := context.Background()
	deployments := cluster.Client.AppsV1().Deployments(w.ns)
	d, err := deployments.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.waitRolledOut(t, d)

	// A new template: a second ReplicaSet, whose pods replace the first's.
	patch := `{"spec":{"template":{"metadata":{"annotations":{"kubectl-informer.test/rollout":"2"}}}}}`
	d, err = deployments.Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.waitValue(t, series("kube_deployment_metadata_generation", "namespace", w.ns, "deployment", "web"), is(float64(d.Generation)))
	framework.Eventually(t, "web has rolled out its new template", func() bool {
		d, err = deployments.Get(ctx, "web", metav1.GetOptions{})
		return err == nil && d.Status.ObservedGeneration == d.Generation && d.Status.Replicas == *d.Spec.Replicas &&
			d.Status.UpdatedReplicas == *d.Spec.Replicas && d.Status.AvailableReplicas == *d.Spec.Replicas
	})
	w.waitValue(t, series("kube_deployment_status_observed_generation", "namespace", w.ns, "deployment", "web"), is(float64(d.Generation)))
	w.waitRolledOut(t, d)
	rs := newReplicaSet(t, d)
	w.waitValue(t, series("kube_replicaset_status_ready_replicas", "namespace", w.ns, "replicaset", rs), is(float64(*d.Spec.Replicas)))
	ready := fmt.Sprintf(`count(%s and on(namespace, pod) %s)`,
		series("kube_pod_status_ready", "namespace", w.ns, "condition", "true")+" == 1",
		series("kube_pod_owner", "namespace", w.ns, "owner_kind", "ReplicaSet", "owner_name", rs))
	w.waitValue(t, ready, is(float64(*d.Spec.Replicas)))

	// Rolled out, web raises none of the alerts of unready and crasher.
	w.waitAlert(t, "KubeDeploymentReplicasMismatch", "deployment", "unready", "web")
	pods := w.podNames(t, "web")
	w.waitAlert(t, "KubePodNotReady", "pod", w.pod(t, "unready").Name, pods...)
	w.waitAlert(t, "KubePodCrashLooping", "pod", w.pod(t, "crasher").Name, pods...)
}

// waitRolledOut waits until the exporter reports all of d's replicas
// available and of its current template.
func (w *workloads) waitRolledOut(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	replicas := float64(*d.Spec.Replicas)
	w.waitValue(t, series("kube_deployment_spec_replicas", "namespace", w.ns, "deployment", d.Name), is(replicas))
	w.waitValue(t, series("kube_deployment_status_replicas_available", "namespace", w.ns, "deployment", d.Name), is(replicas))
	w.waitValue(t, series("kube_deployment_status_replicas_updated", "namespace", w.ns, "deployment", d.Name), is(replicas))
}

// newReplicaSet is the name of the ReplicaSet of d's current revision.
func newReplicaSet(t *testing.T, d *appsv1.Deployment) string {
	t.Helper()
	const revision = "deployment.kubernetes.io/revision"
	sets, err := cluster.Client.AppsV1().ReplicaSets(d.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range sets.Items {
		if metav1.IsControlledBy(&rs, d) && rs.Annotations[revision] == d.Annotations[revision] {
			return rs.Name
		}
	}
	t.Fatalf("no ReplicaSet of %s has revision %s", d.Name, d.Annotations[revision])
	return ""
}

func (w *workloads) crasher(t *testing.T) {
	pod := w.pod(t, "crasher")
	w.waitValue(t, series("kube_pod_container_status_waiting_reason", "namespace", w.ns, "pod", pod.Name, "reason", "CrashLoopBackOff"), is(1))
	w.waitRestarted(t, pod, "Error")
	w.waitAlert(t, "KubePodCrashLooping", "pod", pod.Name)
}

func (w *workloads) hog(t *testing.T) {
	pod := w.pod(t, "hog")
	w.waitRestarted(t, pod, "OOMKilled")
	limit := pod.Spec.Containers[0].Resources.Limits.Memory().Value()
	q := series("kube_pod_container_resource_limits", "namespace", w.ns, "pod", pod.Name, "resource", "memory", "unit", "byte")
	w.waitValue(t, q, is(float64(limit)))
}

func (w *workloads) unready(t *testing.T) {
	pod := w.pod(t, "unready")
	framework.Eventually(t, "unready's pod runs and is not ready", func() bool {
		var err error
		pod, err = cluster.Client.CoreV1().Pods(w.ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
		return err == nil && pod.Status.Phase == corev1.PodRunning && podCondition(pod, corev1.PodReady) == corev1.ConditionFalse
	})
	w.waitValue(t, series("kube_pod_status_phase", "namespace", w.ns, "pod", pod.Name, "phase", string(pod.Status.Phase)), is(1))
	w.waitValue(t, series("kube_pod_status_ready", "namespace", w.ns, "pod", pod.Name, "condition", "false"), is(1))
	w.waitAlert(t, "KubePodNotReady", "pod", pod.Name)
	w.waitAlert(t, "KubeDeploymentReplicasMismatch", "deployment", "unready")
}

func podCondition(p *corev1.Pod, c corev1.PodConditionType) corev1.ConditionStatus {
	for _, pc := range p.Status.Conditions {
		if pc.Type == c {
			return pc.Status
		}
	}
	return corev1.ConditionUnknown
}

func (w *workloads) missingImage(t *testing.T) {
	pod := w.pod(t, "missing-image")
	var waiting *corev1.ContainerStateWaiting
	framework.Eventually(t, "missing-image's container waits", func() bool {
		s, err := w.containerStatus(pod.Name)
		waiting = s.State.Waiting
		return err == nil && waiting != nil && waiting.Reason != "" && waiting.Reason != "ContainerCreating"
	})
	if waiting.Reason != "ErrImageNeverPull" {
		t.Errorf("missing-image's container waits for %s, want ErrImageNeverPull", waiting.Reason)
	}
	w.waitValue(t, series("kube_pod_status_phase", "namespace", w.ns, "pod", pod.Name, "phase", string(corev1.PodPending)), is(1))
	w.waitValue(t, series("kube_pod_container_status_waiting_reason", "namespace", w.ns, "pod", pod.Name, "reason", waiting.Reason), is(1))
	w.waitAlert(t, "KubePodNotReady", "pod", pod.Name, w.podNames(t, "agent")...)
	w.waitAlert(t, "KubeContainerWaiting", "pod", pod.Name, w.pod(t, "crasher").Name)
}

func (w *workloads) jobs(t *testing.T) {
	complete := w.waitJob(t, "complete", batchv1.JobComplete)
	w.waitValue(t, series("kube_job_status_succeeded", "namespace", w.ns, "job_name", "complete"), is(float64(complete.Status.Succeeded)))
	w.waitValue(t, series("kube_job_complete", "namespace", w.ns, "job_name", "complete", "condition", "true"), is(1))

	fail := w.waitJob(t, "fail", batchv1.JobFailed)
	w.waitValue(t, series("kube_job_failed", "namespace", w.ns, "job_name", "fail", "condition", "true"), is(1))
	// With a Failed condition of a known reason, the series of that reason
	// is 1 (not the number of failed pods), as in kube-state-metrics.
	reason := jobCondition(fail, batchv1.JobFailed).Reason
	w.waitValue(t, series("kube_job_status_failed", "namespace", w.ns, "job_name", "fail", "reason", reason), is(1))
	w.waitValue(t, fmt.Sprintf(`sum(%s)`, series("kube_pod_status_phase", "namespace", w.ns, "phase", "Failed")+
		" and on(namespace, pod) "+series("kube_pod_owner", "namespace", w.ns, "owner_kind", "Job", "owner_name", "fail")), is(float64(fail.Status.Failed)))
	w.waitAlert(t, "KubeJobFailed", "job_name", "fail", "complete")
}

// waitJob waits until the Job's condition c is true, and returns it.
func (w *workloads) waitJob(t *testing.T, name string, c batchv1.JobConditionType) *batchv1.Job {
	t.Helper()
	var j *batchv1.Job
	framework.Eventually(t, "Job "+name+" is "+string(c), func() bool {
		var err error
		j, err = cluster.Client.BatchV1().Jobs(w.ns).Get(context.Background(), name, metav1.GetOptions{})
		return err == nil && jobCondition(j, c).Status == corev1.ConditionTrue
	})
	return j
}

func jobCondition(j *batchv1.Job, c batchv1.JobConditionType) batchv1.JobCondition {
	for _, jc := range j.Status.Conditions {
		if jc.Type == c {
			return jc
		}
	}
	return batchv1.JobCondition{}
}

func (w *workloads) cronJob(t *testing.T) {
	ctx := context.Background()
	cronJobs := cluster.Client.BatchV1().CronJobs(w.ns)
	framework.Eventually(t, "CronJob tick has fired", func() bool {
		cj, err := cronJobs.Get(ctx, "tick", metav1.GetOptions{})
		return err == nil && cj.Status.LastScheduleTime != nil
	})
	w.waitValue(t, series("kube_cronjob_status_last_schedule_time", "namespace", w.ns, "cronjob", "tick"), func() (float64, error) {
		cj, err := cronJobs.Get(ctx, "tick", metav1.GetOptions{})
		if err != nil {
			return 0, err
		}
		return float64(cj.Status.LastScheduleTime.Unix()), nil
	})
	w.prom.WaitFor(t, series("kube_job_owner", "namespace", w.ns, "owner_kind", "CronJob", "owner_name", "tick"), func(v model.Vector) error {
		jobs, err := cluster.Client.BatchV1().Jobs(w.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, s := range v {
			for _, j := range jobs.Items {
				if string(s.Metric["job_name"]) == j.Name && len(j.OwnerReferences) == 1 && j.OwnerReferences[0].Kind == "CronJob" && j.OwnerReferences[0].Name == "tick" {
					return nil
				}
			}
		}
		return fmt.Errorf("kube_job_owner of tick answered %v: none is a Job of tick", v)
	})
}

func (w *workloads) daemonSet(t *testing.T) {
	ctx := context.Background()
	framework.Eventually(t, "DaemonSet agent is ready", func() bool {
		ds, err := cluster.Client.AppsV1().DaemonSets(w.ns).Get(ctx, "agent", metav1.GetOptions{})
		return err == nil && ds.Status.DesiredNumberScheduled >= 1 && ds.Status.NumberReady == ds.Status.DesiredNumberScheduled
	})
	status := func(f func(appsv1.DaemonSetStatus) int32) func() (float64, error) {
		return func() (float64, error) {
			ds, err := cluster.Client.AppsV1().DaemonSets(w.ns).Get(ctx, "agent", metav1.GetOptions{})
			if err != nil {
				return 0, err
			}
			return float64(f(ds.Status)), nil
		}
	}
	w.waitValue(t, series("kube_daemonset_status_desired_number_scheduled", "namespace", w.ns, "daemonset", "agent"),
		status(func(s appsv1.DaemonSetStatus) int32 { return s.DesiredNumberScheduled }))
	w.waitValue(t, series("kube_daemonset_status_number_ready", "namespace", w.ns, "daemonset", "agent"),
		status(func(s appsv1.DaemonSetStatus) int32 { return s.NumberReady }))
	w.waitValue(t, series("kube_daemonset_status_number_available", "namespace", w.ns, "daemonset", "agent"),
		status(func(s appsv1.DaemonSetStatus) int32 { return s.NumberAvailable }))
}

func (w *workloads) statefulSet(t *testing.T, pv string) {
	ctx := context.Background()
	var sts *appsv1.StatefulSet
	framework.Eventually(t, "StatefulSet store is ready", func() bool {
		var err error
		sts, err = cluster.Client.AppsV1().StatefulSets(w.ns).Get(ctx, "store", metav1.GetOptions{})
		return err == nil && sts.Status.ReadyReplicas == *sts.Spec.Replicas
	})
	w.waitValue(t, series("kube_statefulset_replicas", "namespace", w.ns, "statefulset", "store"), is(float64(*sts.Spec.Replicas)))
	w.waitValue(t, series("kube_statefulset_status_replicas_ready", "namespace", w.ns, "statefulset", "store"), is(float64(sts.Status.ReadyReplicas)))

	claim := sts.Spec.VolumeClaimTemplates[0].Name + "-store-0"
	pvc, err := cluster.Client.CoreV1().PersistentVolumeClaims(w.ns).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName != pv {
		t.Fatalf("claim %s is %s to volume %q, want Bound to %s", claim, pvc.Status.Phase, pvc.Spec.VolumeName, pv)
	}
	w.waitValue(t, series("kube_persistentvolumeclaim_status_phase", "namespace", w.ns, "persistentvolumeclaim", claim, "phase", string(pvc.Status.Phase)), is(1))
	w.waitValue(t, series("kube_persistentvolumeclaim_info", "namespace", w.ns, "persistentvolumeclaim", claim, "volumename", pvc.Spec.VolumeName, "storageclass", localClass), is(1))
	w.waitValue(t, series("kube_persistentvolume_status_phase", "persistentvolume", pv, "phase", string(corev1.VolumeBound)), is(1))
	w.waitValue(t, series("kube_persistentvolume_claim_ref", "persistentvolume", pv, "claim_namespace", w.ns, "name", claim), is(1))
	// Ready, store raises no KubeStatefulSetReplicasMismatch, and its pod
	// no KubePodNotReady.
	w.waitAlert(t, "KubePodNotReady", "pod", w.pod(t, "unready").Name, w.podNames(t, "store")...)
	w.prom.WaitFor(t, fmt.Sprintf(`ALERTS{alertname="KubeStatefulSetReplicasMismatch",namespace=%q}`, w.ns), func(v model.Vector) error {
		if len(v) != 0 {
			return fmt.Errorf("KubeStatefulSetReplicasMismatch holds for the ready store: %v", v)
		}
		return nil
	})
}
