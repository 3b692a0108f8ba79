package crs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-informer/kubectl-informer/internal/seriesset"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/crs"
	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/internal/exportertest"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// object reads a testdata object.
func object(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file)) //nolint:gosec // G304: the test's own files
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// render translates the custom resource state config, compiles the
// result with the exporter, and returns the exposition of objs.
func render(t *testing.T, config string, objs ...any) string {
	t.Helper()
	out, err := crs.Convert("crs.yaml", []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	c, err := exporter.Compile("crs.yaml (translated)", out, env)
	if err != nil {
		t.Fatalf("compiling the translation: %v\n%s", err, out)
	}
	return exportertest.Exposition(t, c, objs...)
}

// expect checks that got has exactly the families and series of want, as
// Prometheus reads them.
func expect(t *testing.T, got, want string) {
	t.Helper()
	g, err := seriesset.Parse(strings.NewReader(got))
	if err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	w, err := seriesset.Parse(strings.NewReader(want))
	if err != nil {
		t.Fatalf("want: %v", err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("families differ (-want +got):\n%s", diff)
	}
}

const gvk = `customresource_group="myteam.io",customresource_kind="Foo",customresource_version="v1"`

// The examples of kube-state-metrics' docs/metrics/extend/customresourcestate-metrics.md,
// their configs as they are there, and the series kube-state-metrics'
// code (pkg/customresourcestate) makes of the docs' objects. Where the
// docs' sample output differs from what that code does, the code wins
// and the test says so.

func TestSingleValues(t *testing.T) {
	got := render(t, `
kind: CustomResourceStateMetrics
spec:
  resources:
    - groupVersionKind:
        group: myteam.io
        kind: "Foo"
        version: "v1"
      metrics:
        - name: "uptime"
          help: "Foo uptime"
          each:
            type: Gauge
            gauge:
              path: [status, uptime]
`, object(t, "foo.yaml"))
	expect(t, got, `# HELP kube_customresource_uptime Foo uptime
# TYPE kube_customresource_uptime gauge
kube_customresource_uptime{`+gvk+`} 43.21
`)
}

// TestKitchenSink: the "*" label copies the labels; "**" (a trailing '*'
// after "*") prefixes the annotations' keys with "*", which becomes "_";
// the resource's commonLabels are there too (the docs' sample output
// leaves out crd_type and shows "**" as if it were "*").
func TestKitchenSink(t *testing.T) {
	got := render(t, `
kind: CustomResourceStateMetrics
spec:
  resources:
    - groupVersionKind:
        group: myteam.io
        kind: "Foo"
        version: "v1"
      # labels can be added to all metrics from a resource
      commonLabels:
        crd_type: "foo"
      labelsFromPath:
        name: [metadata, name]
      metrics:
        - name: "ready_count"
          help: "Number Foo Bars ready"
          each:
            type: Gauge
            gauge:
              # targeting an object or array will produce a metric for each element
              # labelsFromPath and value are relative to this path
              path: [status, sub]

              # if path targets an object, the object key will be used as label value
              # This is not supported for StateSet type as all values will be truthy, which is redundant.
              labelFromKey: type
              # label values can be resolved specific to this path 
              labelsFromPath:
                active: [active]
              # The actual field to use as metric value. Should be a number, boolean or RFC3339 timestamp string.
              valueFrom: [ready]
          commonLabels:
            custom_metric: "yes"
          labelsFromPath:
            # whole objects may be copied into labels by prefixing with "*"
            # *anything will be copied into labels, with the highest sorted * strings first
            "*": [metadata, labels]
            # a prefix before the asterisk will be used as a label prefix
            "lorem_*": [metadata, annotations]
            "**": [metadata, annotations]
            
            # or specific fields may be copied. these fields will always override values from *s
            name: [metadata, name]
            foo: [metadata, labels, foo]
`, object(t, "foo.yaml"))
	common := gvk + `,crd_type="foo",custom_metric="yes",foo="bar",name="foo",lorem_bar="baz",lorem_qux="quxx",_bar="baz",_qux="quxx"`
	expect(t, got, `# HELP kube_customresource_ready_count Number Foo Bars ready
# TYPE kube_customresource_ready_count gauge
kube_customresource_ready_count{`+common+`,active="1",type="type-a"} 2
kube_customresource_ready_count{`+common+`,active="3",type="type-b"} 4
`)
}

func TestNonMapArrays(t *testing.T) {
	got := render(t, `
kind: CustomResourceStateMetrics
spec:
  resources:
    - groupVersionKind:
        group: myteam.io
        kind: "Foo"
        version: "v1"
      labelsFromPath:
        name: [metadata, name]
      metrics:
        - name: "ref_info"
          help: "Reference to other Foo"
          each:
            type: Info
            info:
              # targeting an array will produce a metric for each element
              # labelsFromPath and value are relative to this path
              path: [spec, refs]

              # if path targets a list of values (e.g. strings or numbers, not objects or maps), individual values can
              # referenced by a label using this syntax
              labelsFromPath:
                ref: []
`, object(t, "foo.yaml"))
	expect(t, got, `# HELP kube_customresource_ref_info Reference to other Foo
# TYPE kube_customresource_ref_info gauge
kube_customresource_ref_info{`+gvk+`,name="foo",ref="my_other_foo"} 1
kube_customresource_ref_info{`+gvk+`,name="foo",ref="foo_2"} 1
kube_customresource_ref_info{`+gvk+`,name="foo",ref="foo_with_extensions"} 1
`)
}

// TestSameMetricsWithDifferentLabels: two metrics of one name are one
// family, with the first's HELP (kube-state-metrics writes the family
// twice, which a Prometheus exposition must not). target_api_version is
// the object's apiVersion and the memory the quantity's value (the docs'
// sample output shows apps/v1 and 123456).
func TestSameMetricsWithDifferentLabels(t *testing.T) {
	got := render(t, `
kind: CustomResourceStateMetrics
spec:
  resources:
    - groupVersionKind:
        group: autoscaling.k8s.io
        kind: "VerticalPodAutoscaler"
        version: "v1"
      labelsFromPath:
        verticalpodautoscaler: [metadata, name]
        namespace: [metadata, namespace]
        target_api_version: [apiVersion]
        target_kind: [spec, targetRef, kind]
        target_name: [spec, targetRef, name]
      metrics:
        # for memory
        - name: "verticalpodautoscaler_status_recommendation_containerrecommendations_lowerbound"
          help: "Minimum memory resources the container can use before the VerticalPodAutoscaler updater evicts it."
          commonLabels:
            unit: "byte"
            resource: "memory"
          each:
            type: Gauge
            gauge:
              path: [status, recommendation, containerRecommendations]
              labelsFromPath:
                container: [containerName]
              valueFrom: [lowerBound, memory]
        # for CPU
        - name: "verticalpodautoscaler_status_recommendation_containerrecommendations_lowerbound"
          help: "Minimum cpu resources the container can use before the VerticalPodAutoscaler updater evicts it."
          commonLabels:
            unit: "core"
            resource: "cpu"
          each:
            type: Gauge
            gauge:
              path: [status, recommendation, containerRecommendations]
              labelsFromPath:
                container: [containerName]
              valueFrom: [lowerBound, cpu]
`, object(t, "vpa.yaml"))
	labels := `container="consumer",customresource_group="autoscaling.k8s.io",customresource_kind="VerticalPodAutoscaler",customresource_version="v1",namespace="namespace-example",target_api_version="autoscaling.k8s.io/v1",target_kind="Deployment",target_name="target-name-example",verticalpodautoscaler="vpa-example"`
	expect(t, got, `# HELP kube_customresource_verticalpodautoscaler_status_recommendation_containerrecommendations_lowerbound Minimum memory resources the container can use before the VerticalPodAutoscaler updater evicts it.
# TYPE kube_customresource_verticalpodautoscaler_status_recommendation_containerrecommendations_lowerbound gauge
kube_customresource_verticalpodautoscaler_status_recommendation_containerrecommendations_lowerbound{`+labels+`,resource="memory",unit="byte"} 2.62144e+08
kube_customresource_verticalpodautoscaler_status_recommendation_containerrecommendations_lowerbound{`+labels+`,resource="cpu",unit="core"} 0.1
`)
}

func TestStatusConditions(t *testing.T) {
	got := render(t, `
kind: CustomResourceStateMetrics
spec:
  resources:
  - groupVersionKind:
      group: myteam.io
      kind: "Foo"
      version: "v1"
    labelsFromPath:
      name:
      - metadata
      - name
      namespace:
      - metadata
      - namespace
    metrics:
    - name: "foo_status"
      help: "status condition "
      each:
        type: Gauge
        gauge:
          path: [status, conditions]
          labelsFromPath:
            type: ["type"]
          valueFrom: ["status"]
`, object(t, "foo.yaml"))
	// The conditions without a status are skipped.
	expect(t, got, `# HELP kube_customresource_foo_status status condition 
# TYPE kube_customresource_foo_status gauge
kube_customresource_foo_status{`+gvk+`,name="foo",namespace="ns",type="Ready"} 1
`)
}

func TestStateSet(t *testing.T) {
	got := render(t, `
kind: CustomResourceStateMetrics
spec:
  resources:
    - groupVersionKind:
        group: myteam.io
        kind: "Foo"
        version: "v1"
      metrics:
        - name: "status_phase"
          help: "Foo status_phase"
          each:
            type: StateSet
            stateSet:
              labelName: phase
              path: [status, phase]
              list: [Pending, Bar, Baz]
`, object(t, "foo.yaml"))
	expect(t, got, `# HELP kube_customresource_status_phase Foo status_phase
# TYPE kube_customresource_status_phase gauge
kube_customresource_status_phase{`+gvk+`,phase="Pending"} 1
kube_customresource_status_phase{`+gvk+`,phase="Bar"} 0
kube_customresource_status_phase{`+gvk+`,phase="Baz"} 0
`)
}

func TestInfo(t *testing.T) {
	got := render(t, `
kind: CustomResourceStateMetrics
spec:
  resources:
    - groupVersionKind:
        group: myteam.io
        kind: "Foo"
        version: "v1"
      metrics:
        - name: "version"
          help: "Foo version"
          each:
            type: Info
            info:
              labelsFromPath:
                version: [spec, version]
`, object(t, "foo.yaml"))
	expect(t, got, `# HELP kube_customresource_version Foo version
# TYPE kube_customresource_version gauge
kube_customresource_version{`+gvk+`,version="v1.2.3"} 1
`)
}

func TestNaming(t *testing.T) {
	got := render(t, `
kind: CustomResourceStateMetrics
spec:
  resources:
    - groupVersionKind:
        group: myteam.io
        kind: "Foo"
        version: "v1"
      metricNamePrefix: myteam_foos
      metrics:
        - name: uptime
          help: Foo uptime
          each:
            type: Gauge
            gauge:
              path: [status, uptime]
`, object(t, "foo.yaml"))
	expect(t, got, `# HELP myteam_foos_uptime Foo uptime
# TYPE myteam_foos_uptime gauge
myteam_foos_uptime{`+gvk+`} 43.21
`)
}
