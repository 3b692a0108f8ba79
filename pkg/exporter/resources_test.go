package exporter

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// podSchema is a part of the Pod schema as the API server publishes it.
func podSchema() *spec.Schema {
	str, integer := spec.StringProperty, spec.Int64Property
	object := func(props map[string]spec.Schema) *spec.Schema {
		return &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: props}}
	}
	return object(map[string]spec.Schema{
		"apiVersion": *str(),
		"kind":       *str(),
		"spec": *object(map[string]spec.Schema{
			"nodeName": *str(),
			"containers": *spec.ArrayProperty(object(map[string]spec.Schema{
				"name":  *str(),
				"image": *str(),
			})),
		}),
		"status": *object(map[string]spec.Schema{
			"phase": *str(),
			"containerStatuses": *spec.ArrayProperty(object(map[string]spec.Schema{
				"name":         *str(),
				"restartCount": *integer(),
			})),
		}),
	})
}

var (
	podsResource  = factory.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespaced: true}
	nodesResource = factory.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Node"}}
)

func checkResources(t *testing.T, text string, infos ...ResourceInfo) ([]string, error) {
	t.Helper()
	c, err := Compile("c.yaml", []byte(text), testConfigEnv(t))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return c.CheckResources(testConfigEnv(t), infos)
}

// TestCheckResourcesSchema checks that every kind of expression is checked
// against the schema of its resource, with the line, the caret and the
// suggestion of a misspelled field.
func TestCheckResourcesSchema(t *testing.T) {
	pods := ResourceInfo{Resource: podsResource, Schema: podSchema()}
	head := configHead + `resources:
- resource: pods
  metrics:
  - name: pod_info
    help: Pods.
    type: info
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
`
	tests := []struct{ name, yaml, want string }{
		{"label", head + "      node: object.spec.nodeNme\n",
			`c.yaml:12: metric "pod_info" label "node": invalid expression: undefined field 'nodeNme' (did you mean "nodeName"?)
 | object.spec.nodeNme
 |             ^`},
		{"value of the wrong type", strings.Replace(head, "type: info", "type: gauge", 1) + "    value: object.status.phase\n",
			`c.yaml:12: metric "pod_info" value: invalid expression: must evaluate to a number or bool (or null, or an optional of one) but got string`},
		{"misspelled in a value", strings.Replace(head, "type: info", "type: gauge", 1) + "    value: object.status.phse == \"Running\"\n",
			`c.yaml:12: metric "pod_info" value: invalid expression: undefined field 'phse' (did you mean "phase"?)
 | object.status.phse == "Running"
 |               ^`},
		{"index", configHead + "resources:\n- resource: pods\n  indexes:\n    byNode: object.spec.nodName\n",
			`c.yaml:6: index "byNode" of pods: invalid expression: undefined field 'nodName' (did you mean "nodeName"?)
 | object.spec.nodName
 |             ^`},
		{"each", configHead + `resources:
- resource: pods
  metrics:
  - name: restarts_total
    help: Restarts.
    type: counter
    each: object.status.containerStatus
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
      container: each.name
    value: each.restartCount
`, `c.yaml:9: metric "restarts_total" each: invalid expression: undefined field 'containerStatus' (did you mean "containerStatuses"?)
 | object.status.containerStatus
 |               ^`},
		{"label of a metric with each", configHead + `resources:
- resource: pods
  metrics:
  - name: restarts_total
    help: Restarts.
    type: counter
    each: object.status.containerStatuses
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.nam
      container: each.name
    value: each.restartCount
`, `c.yaml:12: metric "restarts_total" label "pod": invalid expression: undefined field 'nam' (did you mean "name"?)
 | object.metadata.nam
 |                 ^`},
		{"aggregate key", configHead + `resources:
- resource: pods
  metrics:
  - name: pods
    help: Pods per phase.
    type: gauge
    aggregate: count
    labels:
      phase: object.status.phas
`, `c.yaml:11: metric "pods" label "phase": invalid expression: undefined field 'phas' (did you mean "phase"?)
 | object.status.phas
 |               ^`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := checkResources(t, tt.yaml, pods)
			if err == nil {
				t.Fatalf("CheckResources succeeded, want:\n%s", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("CheckResources error:\n%s\nwant:\n%s", err, tt.want)
			}
			var le *LineError
			if !errors.As(err, &le) {
				t.Errorf("error %T is not a *LineError", err)
			}
		})
	}
}

// TestCheckResourcesDuplicateSeries checks which metrics without aggregate
// are refused for labels that do not tell objects apart.
func TestCheckResourcesDuplicateSeries(t *testing.T) {
	metric := func(resource, extra string, labels ...string) string {
		s := configHead + "resources:\n- resource: " + resource + "\n" + extra + "  metrics:\n  - name: things\n    help: Things.\n    type: gauge\n    labels:\n"
		for _, l := range labels {
			s += "      " + l + "\n"
		}
		return s
	}
	pods := ResourceInfo{Resource: podsResource}
	nodes := ResourceInfo{Resource: nodesResource}
	refused := `c.yaml:9: metric "things": the labels (phase) do not tell the objects of pods apart: objects with the same label values would serve the same series; set aggregate: count to count them, or add labels that identify each object, such as namespace: object.metadata.namespace and name: object.metadata.name`
	tests := []struct {
		name, yaml string
		info       ResourceInfo
		wantErr    string
		wantWarn   string
	}{
		{"phase only", metric("pods", "", "phase: object.status.phase"), pods, refused, ""},
		{"name without namespace", metric("pods", "", "pod: object.metadata.name"), pods,
			`c.yaml:9: metric "things": the labels (pod) do not tell the objects of pods apart: objects with the same label values would serve the same series; set aggregate: count to count them, or add labels that identify each object, such as namespace: object.metadata.namespace and name: object.metadata.name`, ""},
		{"namespace and name", metric("pods", "", "namespace: object.metadata.namespace", "pod: object.metadata.name"), pods, "", ""},
		{"uid", metric("pods", "", "uid: object.metadata.uid"), pods, "", ""},
		{"name in one namespace", metric("pods", "  namespaces: [shop]\n", "pod: object.metadata.name"), pods, "", ""},
		{"name fixed by the field selector", metric("pods", "  fieldSelector: metadata.namespace=shop,metadata.name=web\n", "phase: object.status.phase"), pods, "", ""},
		{"name in a lookup key", metric("pods", "", `key: 'object.metadata.namespace + "/" + object.metadata.name'`), pods, "", ""},
		{"whole metadata", metric("pods", "", "meta: string(object.metadata)"), pods, "", ""},
		{"whole object", metric("pods", "", "size: size(object)"), pods, "", ""},
		{"cluster-scoped with a name", metric("nodes", "", "node: object.metadata.name"), nodes, "", ""},
		{"cluster-scoped without a name", metric("nodes", "", "ready: object.spec.?unschedulable.orValue(false)"), nodes, "",
			`c.yaml:9: metric "things": the labels (ready) read neither object.metadata.name nor object.metadata.uid: unless nodes has a single object, objects with the same label values serve the same series; set aggregate: count to count them, or add a label such as name: object.metadata.name`},
		{"aggregate", strings.Replace(metric("pods", "", "phase: object.status.phase"), "type: gauge", "type: gauge\n    aggregate: count", 1), pods, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warnings, err := checkResources(t, tt.yaml, tt.info)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.wantErr {
				t.Errorf("error:\n%s\nwant:\n%s", gotErr, tt.wantErr)
			}
			if got := strings.Join(warnings, "\n"); got != tt.wantWarn {
				t.Errorf("warnings:\n%s\nwant:\n%s", got, tt.wantWarn)
			}
		})
	}
}

// TestDuplicateSeriesWithoutCluster checks the warnings of a check without
// a cluster: a metric whose labels read neither name nor UID.
func TestDuplicateSeriesWithoutCluster(t *testing.T) {
	c, err := Compile("c.yaml", []byte(configHead+`resources:
- resource: pods
  metrics:
  - name: pods_by_phase
    help: Pods.
    type: gauge
    labels:
      phase: object.status.phase
  - name: pod_phase
    help: Pods.
    type: gauge
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
      phase: object.status.phase
`), testConfigEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	want := `c.yaml:9: metric "pods_by_phase": the labels (phase) read neither object.metadata.name nor object.metadata.uid: unless pods has a single object, objects with the same label values serve the same series; set aggregate: count to count them, or add a label such as name: object.metadata.name`
	if got := strings.Join(c.DuplicateSeries(), "\n"); got != want {
		t.Errorf("DuplicateSeries:\n%s\nwant:\n%s", got, want)
	}
}

// TestExamplesIdentifyObjects checks that the shipped examples pass the
// checks of a cluster's resources, schemas aside: none of their metrics is
// refused or warned about for duplicate series.
func TestExamplesIdentifyObjects(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	files = append(files, "../../deploy/base/config.yaml")
	for _, path := range files {
		c, err := Load(path, testConfigEnv(t))
		if err != nil {
			t.Fatal(err)
		}
		if w := c.DuplicateSeries(); len(w) > 0 {
			t.Errorf("%s: %s", path, strings.Join(w, "\n"))
		}
		infos := make([]ResourceInfo, len(c.Resources))
		for i, r := range c.Resources {
			// Every resource of the examples is namespaced but nodes.
			infos[i] = ResourceInfo{Resource: factory.Resource{Namespaced: r.Config.Resource != "nodes"}}
		}
		warnings, err := c.CheckResources(testConfigEnv(t), infos)
		if err != nil || len(warnings) > 0 {
			t.Errorf("%s: CheckResources: %v %v", path, err, warnings)
		}
	}
}
