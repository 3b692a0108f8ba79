package exporter

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// configHead is the first two lines of every config in these tests.
const configHead = "apiVersion: kubectl-informer.io/v1alpha1\nkind: ExporterConfig\n"

// podMetric is a resource with one metric whose fields follow, at line 8.
const podMetric = configHead + `resources:
- resource: pods
  metrics:
  - name: pod_info
    help: Information about a pod.
`

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       string
	}{
		// The file as a whole.
		{"empty", "# nothing\n",
			`c.yaml: the config is empty; it needs apiVersion: kubectl-informer.io/v1alpha1, kind: ExporterConfig and resources`},
		{"syntax error", configHead + "resources: [\n",
			`c.yaml: yaml: line 3: did not find expected node content`},
		{"syntax error on the first line", "a: b: c\n",
			`c.yaml: yaml: mapping values are not allowed in this context`},
		{"not a mapping", "- a\n- b\n",
			`c.yaml:1: the config must be a mapping with apiVersion, kind and resources, not a list`},
		{"two documents", configHead + "resources: []\n---\nkind: ExporterConfig\n",
			`c.yaml:4: a second YAML document; the config is a single document: remove this one or the "---" before it`},

		// Structure.
		{"unknown field with a suggestion", configHead + "resource:\n- resource: pods\n",
			`c.yaml:1: resources is empty; list at least one resource with the metrics to compute from it` + "\n" +
				`c.yaml:3: unknown field "resource" (did you mean "resources"?)`},
		{"unknown field of a metric", podMetric + "    type: info\n    lables: {pod: object.metadata.name}\n",
			`c.yaml:9: metric "pod_info": unknown field "lables" (did you mean "labels"?)`},
		{"unknown field without a suggestion", podMetric + "    type: info\n    unit: seconds\n",
			`c.yaml:9: metric "pod_info": unknown field "unit"; the fields of a metric are name, help, type, labels, value, each, aggregate, labelsFrom`},
		{"unknown field of a resource", configHead + "resources:\n- resource: pods\n  namespace: shop\n",
			`c.yaml:5: resource "pods": unknown field "namespace" (did you mean "namespaces"?)`},
		{"a mapping for a list", configHead + "resources:\n  resource: pods\n",
			`c.yaml:4: resources must be a list, not a mapping`},
		{"a list for a string", configHead + "resources:\n- resource: [pods]\n",
			`c.yaml:4: resources[0]: resource must be a string, not a list`},
		{"a list for an expression", podMetric + "    type: info\n    labels:\n      images: [object.spec.containers]\n",
			`c.yaml:10: metric "pod_info": labels.images must be a string, not a list; quote an expression that starts with "{" or "[", or contains ": "`},
		{"a string for a mapping", podMetric + "    type: info\n    labels: object.metadata.name\n",
			`c.yaml:9: metric "pod_info": labels must be a mapping, not a string`},
		{"a tag", podMetric + "    type: gauge\n    value: !has(object.spec.nodeName)\n",
			`c.yaml:9: metric "pod_info": value: "!has(object.spec.nodeName)" was read as a YAML tag; quote a value that starts with "!", as in value: "!has(object.spec.nodeName)"`},
		{"a duplicate key", podMetric + "    type: info\n    help: Again.\n",
			`c.yaml:9: metric "pod_info": "help" is defined twice (first at line 7); keep one`},
		{"a duplicate label", podMetric + "    type: info\n    labels:\n      pod: object.metadata.name\n      pod: object.metadata.uid\n",
			`c.yaml:11: metric "pod_info": "pod" is defined twice (first at line 10); keep one`},

		// Top-level fields.
		{"no apiVersion", "kind: ExporterConfig\nresources:\n- resource: pods\n",
			`c.yaml:1: apiVersion is missing; set apiVersion: kubectl-informer.io/v1alpha1`},
		{"wrong apiVersion", "apiVersion: v1\nkind: ExporterConfig\nresources:\n- resource: pods\n",
			`c.yaml:1: apiVersion is "v1"; set apiVersion: kubectl-informer.io/v1alpha1`},
		{"wrong kind", "apiVersion: kubectl-informer.io/v1alpha1\nkind: QueryConfig\nresources:\n- resource: pods\n",
			`c.yaml:2: kind is "QueryConfig"; set kind: ExporterConfig`},
		{"no resources", configHead,
			`c.yaml:1: resources is empty; list at least one resource with the metrics to compute from it`},
		{"invalid prefix", configHead + "prefix: my-org_\nresources:\n- resource: pods\n",
			`c.yaml:3: prefix "my-org_" is not a valid metric name: use letters, digits and '_', not starting with a digit`},
		{"prefix with a colon", configHead + "prefix: 'job:'\nresources:\n- resource: pods\n",
			`c.yaml:3: prefix "job:" contains ':', which is reserved for recording rules; use '_'`},
		{"invalid common label", configHead + "commonLabels:\n  cluster-name: prod\nresources:\n- resource: pods\n",
			`c.yaml:4: commonLabels: label name "cluster-name" is not valid: use letters, digits and '_', not starting with a digit`},
		{"reserved common label", configHead + "commonLabels:\n  __name__: prod\nresources:\n- resource: pods\n",
			`c.yaml:4: commonLabels: label name "__name__" starts with "__", which is reserved for Prometheus' own labels; rename it`},

		// Resources.
		{"no resource", configHead + "resources:\n- namespaces: [shop]\n",
			`c.yaml:4: resources[0]: resource is missing; name the resource to watch as kubectl does, such as resource: pods`},
		{"resource twice", configHead + "resources:\n- resource: pods\n- resource: nodes\n- resource: pods\n",
			`c.yaml:6: resource "pods": listed twice (first at line 4); put its indexes and metrics in one entry`},
		{"invalid namespace", configHead + "resources:\n- resource: pods\n  namespaces:\n  - shop\n  - Shop_1\n",
			`c.yaml:7: resource "pods": namespace "Shop_1" is not a valid namespace name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		{"empty namespace", configHead + "resources:\n- resource: pods\n  namespaces: [shop, '']\n",
			`c.yaml:5: resource "pods": namespaces[1] is empty; name a namespace, or leave namespaces out for all of them`},
		{"namespace twice", configHead + "resources:\n- resource: pods\n  namespaces:\n  - shop\n  - shop\n",
			`c.yaml:7: resource "pods": namespace "shop" is listed twice; keep one`},
		{"invalid label selector", configHead + "resources:\n- resource: pods\n  labelSelector: app in (web\n",
			`c.yaml:5: resource "pods": labelSelector "app in (web": unable to parse requirement: found '', expected: ',' or ')'; write it as for kubectl get -l, such as app=web,tier!=cache`},
		{"invalid field selector", configHead + "resources:\n- resource: pods\n  fieldSelector: status.phase\n",
			`c.yaml:5: resource "pods": fieldSelector "status.phase": invalid selector: 'status.phase'; can't understand 'status.phase'; write it as a field selector of kubectl get, such as status.phase=Running`},
		{"namespace index", configHead + "resources:\n- resource: pods\n  indexes:\n    namespace: object.metadata.namespace\n",
			`c.yaml:6: resource "pods": index "namespace" is built in and cannot be redefined; choose another name`},
		{"empty index name", configHead + "resources:\n- resource: pods\n  indexes:\n    '': object.spec.nodeName\n",
			`c.yaml:6: resource "pods": invalid index name ""; use a name of letters, digits, '-' or '_', such as byNode`},
		{"index name with =", configHead + "resources:\n- resource: pods\n  indexes:\n    node=name: object.spec.nodeName\n",
			`c.yaml:6: resource "pods": invalid index name "node=name"; use a name of letters, digits, '-' or '_', such as byNode`},
		{"empty index expression", configHead + "resources:\n- resource: pods\n  indexes:\n    byNode: ''\n",
			`c.yaml:6: resource "pods": index "byNode" has no expression; give the CEL expression of its values, such as object.spec.nodeName`},

		// Metrics.
		{"no name", configHead + "resources:\n- resource: pods\n  metrics:\n  - help: Pods.\n    type: gauge\n",
			`c.yaml:6: resource "pods" metrics[0]: name is missing; name the metric, such as name: pod_info`},
		{"invalid name", configHead + "resources:\n- resource: pods\n  metrics:\n  - name: pod-info\n    help: Pods.\n    type: gauge\n",
			`c.yaml:6: metric "pod-info": name "pod-info" is not a valid metric name: use letters, digits and '_', not starting with a digit`},
		{"invalid name after the prefix", configHead + "prefix: kube_\nresources:\n- resource: pods\n  metrics:\n  - name: pod.info\n    help: Pods.\n    type: gauge\n",
			`c.yaml:7: metric "kube_pod.info": name "kube_pod.info" is not a valid metric name: use letters, digits and '_', not starting with a digit`},
		{"name with a colon", configHead + "resources:\n- resource: pods\n  metrics:\n  - name: pod:info\n    help: Pods.\n    type: gauge\n",
			`c.yaml:6: metric "pod:info": name "pod:info" contains ':', which is reserved for recording rules; use '_'`},
		{"name twice across resources", configHead + "prefix: x_\nresources:\n- resource: pods\n  metrics:\n  - name: objects\n    help: Pods.\n    type: gauge\n- resource: nodes\n  metrics:\n  - name: objects\n    help: Nodes.\n    type: gauge\n",
			`c.yaml:12: metric "x_objects": the name is already used at line 7; metric names must be unique in the config, prefix included`},
		{"no help", configHead + "resources:\n- resource: pods\n  metrics:\n  - name: pods\n    type: gauge\n",
			`c.yaml:6: metric "pods": help is missing; say in a sentence what the metric measures`},
		{"blank help", configHead + "resources:\n- resource: pods\n  metrics:\n  - name: pods\n    type: gauge\n    help: ' '\n",
			`c.yaml:8: metric "pods": help is missing; say in a sentence what the metric measures`},
		{"no type", podMetric,
			`c.yaml:6: metric "pod_info": type is missing; use gauge, counter or info`},
		{"unknown type", podMetric + "    type: histogram\n",
			`c.yaml:8: metric "pod_info": type "histogram" is not supported; use gauge, counter or info`},
		{"counter without _total", configHead + "resources:\n- resource: pods\n  metrics:\n  - name: pod_restarts\n    help: Restarts.\n    type: counter\n",
			`c.yaml:6: metric "pod_restarts": the name of a counter must end in _total; rename it "pod_restarts_total"`},
		{"gauge with _total", configHead + "resources:\n- resource: pods\n  metrics:\n  - name: pods_total\n    help: Pods.\n    type: gauge\n",
			`c.yaml:6: metric "pods_total": only the name of a counter may end in _total; rename it or use type counter`},
		{"info without _info", configHead + "resources:\n- resource: pods\n  metrics:\n  - name: pod\n    help: A pod.\n    type: info\n",
			`c.yaml:6: metric "pod": the name of an info metric must end in _info; rename it "pod_info"`},
		{"invalid label name", podMetric + "    type: info\n    labels:\n      pod-name: object.metadata.name\n",
			`c.yaml:10: metric "pod_info": label name "pod-name" is not valid: use letters, digits and '_', not starting with a digit`},
		{"reserved label name", podMetric + "    type: info\n    labels:\n      __pod: object.metadata.name\n",
			`c.yaml:10: metric "pod_info": label name "__pod" starts with "__", which is reserved for Prometheus' own labels; rename it`},
		{"label in commonLabels", configHead + "commonLabels: {cluster: prod}\nresources:\n- resource: pods\n  metrics:\n  - name: pod_info\n    help: A pod.\n    type: info\n    labels:\n      cluster: object.metadata.clusterName\n",
			`c.yaml:11: metric "pod_info": label "cluster" is also in commonLabels; rename one of them`},
		{"empty label expression", podMetric + "    type: info\n    labels:\n      pod: \"\"\n",
			`c.yaml:10: metric "pod_info": label "pod" has no expression; give the CEL expression of its value, such as object.metadata.name`},
		{"unknown aggregate", configHead + "resources:\n- resource: pods\n  metrics:\n  - name: pods\n    help: Pods.\n    type: gauge\n    aggregate: avg\n",
			`c.yaml:9: metric "pods": aggregate "avg" is not supported; use count, sum, min or max, or leave it out for one series per object`},
		{"aggregated info", podMetric + "    type: info\n    aggregate: count\n",
			`c.yaml:9: metric "pod_info": an info metric cannot be aggregated; remove aggregate, or use type gauge`},
		{"info with a value", podMetric + "    type: info\n    value: \"2\"\n",
			`c.yaml:9: metric "pod_info": the value of an info metric is always 1; remove value, or use type gauge`},
		{"count with a value", configHead + "resources:\n- resource: pods\n  metrics:\n  - name: pods\n    help: Pods.\n    type: gauge\n    aggregate: count\n    value: object.spec.replicas\n",
			`c.yaml:10: metric "pods": aggregate count counts series and ignores value; remove value, or use aggregate sum to add values up`},
		{"blank value", configHead + "resources:\n- resource: pods\n  metrics:\n  - name: pods\n    help: Pods.\n    type: gauge\n    value: ' '\n",
			`c.yaml:9: metric "pods": value is blank; give a CEL expression, or leave value out for 1`},
		{"blank each", configHead + "resources:\n- resource: pods\n  metrics:\n  - name: pods\n    help: Pods.\n    type: gauge\n    each: ' '\n",
			`c.yaml:9: metric "pods": each is blank; give a CEL expression yielding a list, or leave each out`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("c.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v; want error\n%s", cfg, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n%s\nwant:\n%s", err, tt.want)
			}
			var le *LineError
			if !errors.As(err, &le) || le.Path != "c.yaml" {
				t.Errorf("error %v is not a *LineError about c.yaml", err)
			}
		})
	}
}

// TestParseErrorsTogether checks that the errors of a file are reported
// together, sorted by line, each with its own.
func TestParseErrorsTogether(t *testing.T) {
	data := configHead + `prefix: kube_
resources:
- resource: pods
  metrics:
  - name: pod_restarts
    help: Restarts.
    type: counter
  - name: pods
    type: gauge
    lables: {}
- resource: nodes
  namespaces: [Default]
`
	_, err := Parse("c.yaml", []byte(data))
	want := []string{
		`c.yaml:7: metric "kube_pod_restarts": the name of a counter must end in _total; rename it "kube_pod_restarts_total"`,
		`c.yaml:10: metric "kube_pods": help is missing; say in a sentence what the metric measures`,
		`c.yaml:12: metric "kube_pods": unknown field "lables" (did you mean "labels"?)`,
		`c.yaml:14: resource "nodes": namespace "Default" is not a valid namespace name: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("error:\n%v\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %T does not join errors", err)
	}
	var lines []int
	for _, e := range joined.Unwrap() {
		le, ok := e.(*LineError)
		if !ok {
			t.Fatalf("error %T is not a *LineError", e)
		}
		lines = append(lines, le.Line)
	}
	if !reflect.DeepEqual(lines, []int{7, 10, 12, 14}) {
		t.Errorf("lines %v, want [7 10 12 14]", lines)
	}
}

func TestParseValid(t *testing.T) {
	data := configHead + `prefix: kube_
commonLabels:
  cluster: prod
resources:
- resource: pods
  namespaces: [shop, default]
  labelSelector: app=web
  fieldSelector: status.phase=Running
  indexes:
    byNode: object.spec.nodeName
  metrics:
  - &info
    name: pod_info
    help: Information about a pod.
    type: info
    labels:
      pod: object.metadata.name
  - <<: *info
    name: pod_2_info
- resource: nodes
  metrics:
  - name: node_pods
    help: |
      Pods scheduled on a node.
    type: gauge
    value: 1
`
	got, err := Parse("c.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	info := MetricConfig{Name: "pod_info", Help: "Information about a pod.", Type: "info", Labels: map[string]string{"pod": "object.metadata.name"}}
	info2 := info
	info2.Name = "pod_2_info"
	want := &Config{
		APIVersion:   ConfigAPIVersion,
		Kind:         ConfigKind,
		Prefix:       "kube_",
		CommonLabels: map[string]string{"cluster": "prod"},
		Resources: []ResourceConfig{{
			Resource:      "pods",
			Namespaces:    []string{"shop", "default"},
			LabelSelector: "app=web",
			FieldSelector: "status.phase=Running",
			Indexes:       map[string]string{"byNode": "object.spec.nodeName"},
			Metrics:       []MetricConfig{info, info2},
		}, {
			Resource: "nodes",
			Metrics:  []MetricConfig{{Name: "node_pods", Help: "Pods scheduled on a node.\n", Type: "gauge", Value: "1"}},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse:\n%+v\nwant:\n%+v", got, want)
	}
}

// TestParseNameAfterPrefix checks that names are checked with the prefix:
// a name may start with a digit when the prefix does not.
func TestParseNameAfterPrefix(t *testing.T) {
	data := configHead + "prefix: kube_\nresources:\n- resource: pods\n  metrics:\n  - name: 2xx_info\n    help: x.\n    type: info\n"
	if _, err := Parse("c.yaml", []byte(data)); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	env := testConfigEnv(t)
	path := filepath.Join(t.TempDir(), "exporter.yaml")
	data := []byte(podMetric + "    type: info\n")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, env)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if c.Path != path || c.Hash != hex.EncodeToString(sum[:]) || len(c.Hash) != 64 {
		t.Errorf("Path %q, Hash %q; want %q, %x", c.Path, c.Hash, path, sum)
	}

	_, err = Load(filepath.Join(t.TempDir(), "missing.yaml"), env)
	if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "reading the exporter config: ") {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func testConfigEnv(t *testing.T) *indexers.Env {
	t.Helper()
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestParseAliasBomb checks that aliases that expand into a huge document
// are refused before anything walks through them.
func TestParseAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString(configHead + "x0: &x0 {a: b}\n")
	for i := 1; i < 30; i++ {
		fmt.Fprintf(&b, "x%d: &x%d {<<: [*x%d, *x%d, *x%d, *x%d]}\n", i, i, i-1, i-1, i-1, i-1)
	}
	b.WriteString("commonLabels: *x29\nresources: [{resource: pods}]\n")
	_, err := Parse("c.yaml", []byte(b.String()))
	if want := "c.yaml: yaml: document contains excessive aliasing"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}
