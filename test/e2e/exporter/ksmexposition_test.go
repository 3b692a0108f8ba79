package exporter_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// prometheus3Accept is the Accept header of Prometheus 3's scrapes with
// its default scrape_protocols.
const prometheus3Accept = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6," +
	"application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4," +
	"text/plain;version=0.0.4;q=0.3,*/*;q=0.2"

// scrapeAs fetches url with the Accept header accept (none when empty) and
// returns the type of the format of its answer, its Content-Type and its
// body.
func scrapeAs(t *testing.T, url, accept string) (format expfmt.FormatType, contentType, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, body := framework.Fetch(t, req)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s with Accept %q: %d %s", url, accept, resp.StatusCode, body)
	}
	contentType = resp.Header.Get("Content-Type")
	return expfmt.Format(contentType).FormatType(), contentType, body
}

// TestKubeStateMetricsExposition scrapes the drop-in (kube-state-metrics'
// mode, on two listeners) with the Accept headers of the text format,
// OpenMetrics and Prometheus 3, serving the pods and deployments of a
// namespace with one pod and no deployment, and checks what
// kube-state-metrics v2.20 writes there: the main listener answers in the
// format asked for, with the HELP and TYPE lines of every family of pods,
// those without series included, and none of deployments; the restart
// counter is named kube_pod_container_status_restarts_total in both
// formats; the telemetry listener answers in the text format to each
// Accept. Once the pod is deleted, the main listener writes nothing but
// OpenMetrics' # EOF.
func TestKubeStateMetricsExposition(t *testing.T) {
	ctx := context.Background()
	ns := cluster.NewNamespace(t, "ksm-exposition")
	p := cluster.CreatePod(t, ns, "web", nil)
	p.Status.Phase = corev1.PodRunning
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "registry.k8s.io/pause:3.10", RestartCount: 3, Ready: true}}
	if _, err := cluster.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	opts := exporter.Options{Sources: ksmProfile(), KubeStateMetrics: true, Namespaces: []string{ns}}
	s := serveKSM(t, nil, opts, exporter.ServeConfig{})
	framework.WaitReady(t, s.main)

	// The pod's restarts, as the series of a line of its own.
	restarts := func(body string) bool {
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "kube_pod_container_status_restarts_total{") && strings.Contains(line, `pod="web"`) &&
				strings.Contains(line, `container="app"`) && strings.HasSuffix(line, "} 3") {
				return true
			}
		}
		return false
	}
	framework.Eventually(t, "the pod's restarts served", func() bool {
		_, _, body := scrapeAs(t, s.main+"/metrics", "")
		return restarts(body)
	})

	for _, tc := range []struct {
		accept      string
		openMetrics bool
	}{
		{"", false},
		{"text/plain;version=0.0.4", false},
		{"application/openmetrics-text;version=1.0.0", true},
		{prometheus3Accept, true},
	} {
		t.Run("Accept "+tc.accept, func(t *testing.T) {
			format, ct, body := scrapeAs(t, s.main+"/metrics", tc.accept)
			if got := format == expfmt.TypeOpenMetrics; got != tc.openMetrics {
				t.Fatalf("main /metrics answered %s, want OpenMetrics %v", ct, tc.openMetrics)
			}
			if tc.openMetrics != strings.HasSuffix(body, "\n# EOF\n") {
				t.Errorf("ends with # EOF: %v, want %v", !tc.openMetrics, tc.openMetrics)
			}
			if !tc.openMetrics {
				framework.ParseText(t, body)
			}
			// A family of pods without series (the pod has no init
			// container) has its headers all the same.
			if strings.Contains(body, "\nkube_pod_init_container_status_restarts_total{") {
				t.Error("kube_pod_init_container_status_restarts_total has series")
			}
			for _, want := range []string{
				"# HELP kube_pod_container_status_restarts_total [STABLE] The number of container restarts per container.\n" +
					"# TYPE kube_pod_container_status_restarts_total counter\n",
				"\n# TYPE kube_pod_init_container_status_restarts_total counter\n",
			} {
				if !strings.Contains(body, want) {
					t.Errorf("no %q", want)
				}
			}
			if !restarts(body) {
				t.Error("no series of the pod's restarts")
			}
			for _, line := range strings.Split(body, "\n") {
				if strings.HasPrefix(line, "# ") && !strings.HasPrefix(line, "# HELP kube_pod_") && !strings.HasPrefix(line, "# TYPE kube_pod_") && line != "# EOF" {
					t.Errorf("a line of a family of no pod: %s", line)
				}
			}

			format, ct, body = scrapeAs(t, s.telemetry+"/metrics", tc.accept)
			if format != expfmt.TypeTextPlain || strings.Contains(body, "# EOF") || !strings.Contains(body, "# TYPE kube_state_metrics_watch_total counter\n") {
				t.Errorf("telemetry /metrics answered %s, want the text format with kube_state_metrics_watch_total:\n%s", ct, body)
			}
			framework.ParseText(t, body)
		})
	}

	zero := int64(0)
	if err := cluster.Client.CoreV1().Pods(ns).Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, "nothing served once the pod is gone", func() bool {
		_, _, body := scrapeAs(t, s.main+"/metrics", "")
		return body == ""
	})
	if format, ct, body := scrapeAs(t, s.main+"/metrics", prometheus3Accept); format != expfmt.TypeOpenMetrics || body != "# EOF\n" {
		t.Errorf("OpenMetrics without objects: %s %q, want # EOF alone", ct, body)
	}
}
