package exporter

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// ksmStyleEngine returns an engine of two resources: pods, with a gauge,
// an info, a counter and a counter that the test's pods give no series
// (restarts of init containers); and deployments, which get no objects.
// The gauge's help has the characters that the formats escape.
func ksmStyleEngine(t *testing.T, opts EngineOptions) *Engine {
	t.Helper()
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	nsPod := map[string]string{"namespace": "object.metadata.namespace", "pod": "object.metadata.name"}
	container := map[string]string{"namespace": "object.metadata.namespace", "pod": "object.metadata.name", "container": "each.name"}
	c := &Compiled{Resources: []*CompiledResource{
		{Config: ResourceConfig{Resource: "pods"}, Families: []*Family{
			family(t, env, "kube_pod_created", TypeGauge, `[STABLE] Unix "creation" time, back\slash.`, nsPod, "1", "", ""),
			family(t, env, "kube_pod_owner_info", TypeInfo, "The pod's owner.", nsPod, "", "", ""),
			family(t, env, "kube_pod_container_status_restarts_total", TypeCounter, "[STABLE] The number of container restarts per container.",
				container, "each.restartCount", "object.status.containerStatuses", ""),
			family(t, env, "kube_pod_init_container_status_restarts_total", TypeCounter, "The number of restarts for the init container.",
				container, "each.restartCount", "object.status.?initContainerStatuses.orValue([])", ""),
		}},
		{Config: ResourceConfig{Resource: "deployments.apps"}, Families: []*Family{
			family(t, env, "kube_deployment_created", TypeGauge, "[STABLE] Unix creation timestamp", nsPod, "1", "", ""),
		}},
	}}
	e := NewEngine(c, opts)
	t.Cleanup(e.Close)
	return e
}

// styled writes e's families as x says.
func styled(t *testing.T, e *Engine, x writeStyle) string {
	t.Helper()
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	e.writeFamiliesOf(w, x, nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestKubeStateMetricsStyle checks the HELP and TYPE lines written in
// kube-state-metrics' mode against what kube-state-metrics v2.20 writes
// (pkg/metric_generator's generateHeader, pkg/metrics_store's WriteAll and
// SanitizeHeaders): the headers of every family of a resource that has
// objects, series or not, and none of a resource without; in both formats
// a family named by its metric name, _total and _info included, and HELP
// escaping a backslash and a newline; TYPE info written as gauge in the
// text format. Without the mode, the families are written as expfmt writes
// them: every family's headers, and in OpenMetrics a counter and an info
// named without their suffix and a double quote escaped in HELP.
func TestKubeStateMetricsStyle(t *testing.T) {
	e := ksmStyleEngine(t, EngineOptions{})
	e.Update(0, pod("shop", "web-1", "u1", "n1", "Running", 2))

	const series = `kube_pod_created{namespace="shop",pod="web-1"} 1
`
	ksm := func(typ string) string {
		return `# HELP kube_pod_created [STABLE] Unix "creation" time, back\\slash.
# TYPE kube_pod_created gauge
` + series + `# HELP kube_pod_owner_info The pod's owner.
# TYPE kube_pod_owner_info ` + typ + `
kube_pod_owner_info{namespace="shop",pod="web-1"} 1
# HELP kube_pod_container_status_restarts_total [STABLE] The number of container restarts per container.
# TYPE kube_pod_container_status_restarts_total counter
kube_pod_container_status_restarts_total{namespace="shop",pod="web-1",container="c0"} 2
# HELP kube_pod_init_container_status_restarts_total The number of restarts for the init container.
# TYPE kube_pod_init_container_status_restarts_total counter
`
	}
	for _, tc := range []struct {
		name string
		x    writeStyle
		want string
	}{
		{"kube-state-metrics text", writeStyle{ksm: true}, ksm("gauge")},
		{"kube-state-metrics OpenMetrics", writeStyle{ksm: true, openMetrics: true}, ksm("info")},
		{"text", writeStyle{}, ksm("gauge") + `# HELP kube_deployment_created [STABLE] Unix creation timestamp
# TYPE kube_deployment_created gauge
`},
		{"OpenMetrics", writeStyle{openMetrics: true}, `# HELP kube_pod_created [STABLE] Unix \"creation\" time, back\\slash.
# TYPE kube_pod_created gauge
` + series + `# HELP kube_pod_owner The pod's owner.
# TYPE kube_pod_owner info
kube_pod_owner_info{namespace="shop",pod="web-1"} 1
# HELP kube_pod_container_status_restarts [STABLE] The number of container restarts per container.
# TYPE kube_pod_container_status_restarts counter
kube_pod_container_status_restarts_total{namespace="shop",pod="web-1",container="c0"} 2
# HELP kube_pod_init_container_status_restarts The number of restarts for the init container.
# TYPE kube_pod_init_container_status_restarts counter
# HELP kube_deployment_created [STABLE] Unix creation timestamp
# TYPE kube_deployment_created gauge
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := styled(t, e, tc.x)
			if got != tc.want {
				t.Errorf("wrote\n%s\nwant\n%s", got, tc.want)
			}
			if !tc.x.openMetrics {
				lint(t, got)
			}
		})
	}

	// Once the resource has no objects, its families have no headers in
	// kube-state-metrics' mode; they are back with an object.
	e.Delete(0, pod("shop", "web-1", "u1", "n1", "Running"))
	for _, om := range []bool{false, true} {
		if got := styled(t, e, writeStyle{ksm: true, openMetrics: om}); got != "" {
			t.Errorf("OpenMetrics %t, no objects: wrote\n%s", om, got)
		}
	}
	if got := styled(t, e, writeStyle{}); strings.Count(got, "# HELP ") != 5 {
		t.Errorf("without the mode, no objects: wrote\n%s\nwant the headers of all 5 families", got)
	}
	e.Update(0, pod("shop", "web-2", "u2", "n1", "Running"))
	if got := styled(t, e, writeStyle{ksm: true}); strings.Count(got, "# HELP ") != 4 || strings.Contains(got, "kube_deployment_") {
		t.Errorf("a pod again: wrote\n%s\nwant the headers of the 4 families of pods", got)
	}
}

// TestKubeStateMetricsStyleShard: the objects of a resource that count are
// the shard's, as kube-state-metrics' stores hold the shard's objects
// only.
func TestKubeStateMetricsStyleShard(t *testing.T) {
	e := ksmStyleEngine(t, EngineOptions{Shard: Shard{Index: 0, Total: 2}})
	var other *unstructured.Unstructured
	for i := 0; other == nil; i++ {
		if uid := fmt.Sprintf("u%d", i); !e.shard.owns(uid) {
			other = pod("shop", "web", uid, "n1", "Running", 1)
		}
	}
	e.Update(0, other)
	if got := styled(t, e, writeStyle{ksm: true}); got != "" {
		t.Errorf("a pod of another shard: wrote\n%s", got)
	}
}

// TestHeadersWithSeries: a family asked to leave its headers out writes
// them when it has series after all (an object added since its resource
// was found without), so that no series is written untyped.
func TestHeadersWithSeries(t *testing.T) {
	e := ksmStyleEngine(t, EngineOptions{})
	write := func() string {
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		e.resources[0].families[0].write(w, writeStyle{ksm: true}, false, &writeScratch{})
		_ = w.Flush() // a bytes.Buffer never fails a write
		return b.String()
	}
	if got := write(); got != "" {
		t.Errorf("no series: wrote %q", got)
	}
	e.Update(0, pod("shop", "web-1", "u1", "n1", "Running"))
	want := `# HELP kube_pod_created [STABLE] Unix "creation" time, back\\slash.
# TYPE kube_pod_created gauge
kube_pod_created{namespace="shop",pod="web-1"} 1
`
	if got := write(); got != want {
		t.Errorf("with series: wrote\n%s\nwant\n%s", got, want)
	}
}
