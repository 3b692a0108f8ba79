package profiles_test

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The tests below give the profile objects of kube-state-metrics' own
// tests (internal/store/*_test.go of kube-state-metrics v2.20) and expect
// the text those tests expect, for the families whose series leave a label
// out on some objects and write it empty on others: a label written empty
// and one not written are told apart (see expectFamilies).

// TestKubeStateMetricsTextJobStatusFailed: without failed pods, no reason
// label; with failed pods and no known reason, reason="" (job_test.go:
// RunningJob1, FailedJob1, FailedJobWithNoConditions).
func TestKubeStateMetricsTextJobStatusFailed(t *testing.T) {
	running := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "RunningJob1", Namespace: "ns1", Generation: 1},
		Status:     batchv1.JobStatus{Active: 1},
	}
	failed := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "FailedJob1", Namespace: "ns1", Generation: 1},
		Status: batchv1.JobStatus{Failed: 1, Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}},
	}
	noConditions := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "FailedJobWithNoConditions", Namespace: "ns1"},
		Status:     batchv1.JobStatus{Failed: 1},
	}
	expectFamilies(t, render(t, "jobs", running, failed, noConditions), `
# HELP kube_job_status_failed [STABLE] The number of pods which reached Phase Failed and the reason for failure.
# TYPE kube_job_status_failed gauge
kube_job_status_failed{job_name="RunningJob1",namespace="ns1"} 0
kube_job_status_failed{job_name="FailedJob1",namespace="ns1",reason="BackoffLimitExceeded"} 1
kube_job_status_failed{job_name="FailedJob1",namespace="ns1",reason="DeadlineExceeded"} 0
kube_job_status_failed{job_name="FailedJob1",namespace="ns1",reason="Evicted"} 0
kube_job_status_failed{job_name="FailedJobWithNoConditions",namespace="ns1",reason=""} 1
`)
}

// TestKubeStateMetricsTextAutoscalerInfo: scaletargetref_api_version only
// when the reference has one (horizontalpodautoscaler_test.go: hpa1, hpa2).
func TestKubeStateMetricsTextAutoscalerInfo(t *testing.T) {
	hpa1 := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "hpa1", Namespace: "ns1", Generation: 2},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 4, MinReplicas: ptr(int32(2)),
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "deployment1"}},
	}
	hpa2 := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "hpa2", Namespace: "ns1", Generation: 2},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 4, MinReplicas: ptr(int32(2)),
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "deployment1"}},
	}
	expectFamilies(t, render(t, "horizontalpodautoscalers", hpa1, hpa2), `
# HELP kube_horizontalpodautoscaler_info Information about this autoscaler.
# TYPE kube_horizontalpodautoscaler_info gauge
kube_horizontalpodautoscaler_info{horizontalpodautoscaler="hpa1",namespace="ns1",scaletargetref_api_version="apps/v1",scaletargetref_kind="Deployment",scaletargetref_name="deployment1"} 1
kube_horizontalpodautoscaler_info{horizontalpodautoscaler="hpa2",namespace="ns1",scaletargetref_kind="Deployment",scaletargetref_name="deployment1"} 1
`)
}

// TestKubeStateMetricsTextIngressPath: a path to a service has the service
// labels and not the resource labels, a path to a resource without an API
// group the resource labels (resource_api_group="") and not the service
// labels (ingress_test.go: ingress4).
func TestKubeStateMetricsTextIngressPath(t *testing.T) {
	ingress4 := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "ingress4", Namespace: "ns4", CreationTimestamp: metav1.Unix(1501569018, 0),
			Labels: map[string]string{"test-4": "test-4"}, ResourceVersion: "abcdef"},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{
			{Host: "somehost", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
				{Path: "/somepath", PathType: ptr(networkingv1.PathTypeExact), Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: "someservice", Port: networkingv1.ServiceBackendPort{Number: 1234}}}},
				{Path: "/somepath2", Backend: networkingv1.IngressBackend{
					Resource: &corev1.TypedLocalObjectReference{Kind: "somekind", Name: "somename"}}},
			}}}},
			{Host: "somehost2"},
		}},
	}
	expectFamilies(t, render(t, "ingresses", ingress4), `
# HELP kube_ingress_info [STABLE] Information about ingress.
# TYPE kube_ingress_info gauge
kube_ingress_info{namespace="ns4",ingress="ingress4",ingressclass="_default"} 1
# HELP kube_ingress_created [STABLE] Unix creation timestamp
# TYPE kube_ingress_created gauge
kube_ingress_created{namespace="ns4",ingress="ingress4"} 1.501569018e+09
# HELP kube_ingress_path [STABLE] Ingress host, paths and backend service information.
# TYPE kube_ingress_path gauge
kube_ingress_path{namespace="ns4",ingress="ingress4",host="somehost",path="/somepath",path_type="Exact",service_name="someservice",service_port="1234"} 1
kube_ingress_path{namespace="ns4",ingress="ingress4",host="somehost",path="/somepath2",path_type="",resource_api_group="",resource_kind="somekind",resource_name="somename"} 1
`)
}
