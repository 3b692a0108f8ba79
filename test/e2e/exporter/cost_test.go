package exporter_test

import (
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/test/e2e/framework"
)

// TestCostLimitFlag checks export --cost-limit: a limit lower than an
// expression needs makes every evaluation of it an error, counted per
// metric and logged with the message that names the flag, instead of a
// series; the default limit lets the same expression through.
func TestCostLimitFlag(t *testing.T) {
	ns := cluster.NewNamespace(t, "costlimit")
	cluster.CreatePod(t, ns, "p1", nil)
	// About 30 cost units per container.
	path := writeConfig(t, `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  namespaces: [`+ns+`]
  metrics:
  - name: test_pod_checked
    help: Whether every container passes a check.
    type: gauge
    labels:
      pod: object.metadata.name
    value: object.spec.containers.all(c, [1,2,3,4,5,6,7,8,9,10].all(x, x > 0))
`)
	start := func(flags ...string) (*framework.Run, string) {
		addr := framework.ClosedPort(t)
		run := cluster.StartPlugin(t, append([]string{"export", "--config", path, "--web.listen-address", addr}, flags...)...)
		url := "http://" + addr
		framework.WaitRunReady(t, run, url)
		return run, url
	}

	_, url := start()
	framework.Eventually(t, "the default limit gives test_pod_checked a series", func() bool {
		return series(t, url, "test_pod_checked")["pod=p1"] == 1
	})

	const msg = "cost limit exceeded: evaluation stopped after 10 cost units; simplify the expression or raise --cost-limit (0: no limit)"
	run, url := start("--cost-limit", "10")
	framework.Eventually(t, "--cost-limit 10 counts an evaluation error of test_pod_checked", func() bool {
		return series(t, url, "kubectl_informer_metric_evaluation_errors_total")["metric=test_pod_checked"] >= 1
	})
	if got := series(t, url, "test_pod_checked"); len(got) != 0 {
		t.Errorf("test_pod_checked has series %v under --cost-limit 10, want none", got)
	}
	// Evaluation errors are logged every 30 s at most, with the last message.
	framework.Eventually(t, "the log names the metric and --cost-limit", func() bool {
		for _, l := range framework.Lines(run.ErrOut.String()) {
			if strings.Contains(l, msg) && strings.Contains(l, "test_pod_checked") {
				return true
			}
		}
		return false
	})
}
