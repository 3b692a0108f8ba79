package profile_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/internal/seriesset"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestOptionalFieldsAsServed creates, through the API server, objects that
// leave optional fields unset (an ingress path to a resource without an API
// group beside one to a service, a job without failed pods) and checks the profile's series for
// them as kube-state-metrics writes them: every path has its series, and
// the labels kube-state-metrics leaves out are not written, not even empty.
func TestOptionalFieldsAsServed(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "optional")
	cs := cluster.Client
	prefix, specific := networkingv1.PathTypePrefix, networkingv1.PathTypeImplementationSpecific
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "shop.example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
				{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}},
				{Path: "/static", PathType: &specific, Backend: networkingv1.IngressBackend{
					Resource: &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "assets"}}},
			}}}}}},
	}
	if _, err := cs.NetworkingV1().Ingresses(ns).Create(ctx, ing, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.NetworkingV1().Ingresses(ns).Delete(ctx, ing.Name, metav1.DeleteOptions{}) })
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox"}}}}},
	}
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.BatchV1().Jobs(ns).Delete(ctx, job.Name, metav1.DeleteOptions{}) })

	_, url := cluster.ServeExporter(t, nil, exporter.Options{Sources: exporter.Sources{
		Profile:   profiles.KubeStateMetrics,
		Selection: exporter.Selection{Resources: []string{"ingresses", "jobs"}},
	}})
	framework.WaitReady(t, url)
	fams, err := seriesset.ParseExact(strings.NewReader(scrapeText(t, url)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"kube_ingress_path": {
			fmt.Sprintf(`kube_ingress_path{host="shop.example.com",ingress="web",namespace=%q,path="/",path_type="Prefix",service_name="web",service_port="80"} 1`, ns),
			fmt.Sprintf(`kube_ingress_path{host="shop.example.com",ingress="web",namespace=%q,path="/static",path_type="ImplementationSpecific",resource_api_group="",resource_kind="Bucket",resource_name="assets"} 1`, ns),
		},
		"kube_job_status_failed": {
			fmt.Sprintf(`kube_job_status_failed{job_name="nightly",namespace=%q} 0`, ns),
		},
	}
	for name, w := range want {
		var got []string
		for _, s := range fams[name].Series {
			if strings.Contains(s, fmt.Sprintf("namespace=%q", ns)) {
				got = append(got, s)
			}
		}
		slices.Sort(w)
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}
