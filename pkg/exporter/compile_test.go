package exporter

import (
	"context"
	"errors"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/exporter/profiles"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

func TestCompileErrors(t *testing.T) {
	env := testConfigEnv(t)
	gauge := configHead + `resources:
- resource: pods
  metrics:
  - name: pods
    help: Pods.
    type: gauge
`
	tests := []struct {
		name, yaml string
		want       string
	}{
		{"label", gauge + "    labels:\n      node: object.spec.nodeName +\n",
			`c.yaml:10: metric "pods" label "node": invalid expression: syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}
 | object.spec.nodeName +
 |                       ^`},
		{"literal block", gauge + "    value: |\n      object.spec.containers\n        .filter(c, c.image.startsWith(\"nginx:\"))\n        .size() + obect.x\n",
			`c.yaml:12: metric "pods" value: invalid expression at line 3: undeclared reference to 'obect' (did you mean "object"?)
 |   .size() + obect.x
 |             ^`},
		{"folded block", gauge + "    value: >\n      object.spec.containers.size()\n      + obect.x\n",
			`c.yaml:11: metric "pods" value: invalid expression: undeclared reference to 'obect' (did you mean "object"?)
 | object.spec.containers.size() + obect.x
 |                                 ^`},
		{"plain scalar on two lines", gauge + "    value: object.spec.containers.size()\n      + obect.x\n",
			`c.yaml:10: metric "pods" value: invalid expression: undeclared reference to 'obect' (did you mean "object"?)
 | object.spec.containers.size() + obect.x
 |                                 ^`},
		{"double-quoted on two lines", gauge + "    value: \"object.metadata.name == \\\"web\\\"\n      && obect.x\"\n",
			`c.yaml:10: metric "pods" value: invalid expression: undeclared reference to 'obect' (did you mean "object"?)
 | object.metadata.name == "web" && obect.x
 |                                  ^`},
		{"each without each", gauge + "    labels:\n      container: each.name\n",
			`c.yaml:10: metric "pods" label "container": invalid expression: undeclared reference to 'each'; each is declared only in the labels and value of a metric that sets each
 | each.name
 | ^`},
		{"each", gauge + "    each: object.spec.containers.map(c,\n",
			`c.yaml:9: metric "pods" each: invalid expression: syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}
 | object.spec.containers.map(c,
 |                              ^`},
		{"value of the wrong type", gauge + "    value: object.metadata.name + \"x\"\n",
			`c.yaml:9: metric "pods" value: invalid expression: must evaluate to a number or bool (or null, or an optional of one) but got string`},
		{"each value of the wrong type", gauge + "    each: object.spec.containers\n    value: '[each.name]'\n",
			`c.yaml:10: metric "pods" value: invalid expression: must evaluate to a number or bool (or null, or an optional of one) but got list(dyn)`},
		{"index of the wrong type", configHead + "resources:\n- resource: pods\n  indexes:\n    byCount: size(object.spec.containers)\n",
			`c.yaml:6: index "byCount" of pods: invalid expression: must evaluate to string, list(string) or null but got int`},
		{"byIndex of an unknown index", configHead + `resources:
- resource: pods
  indexes:
    byNode: object.spec.nodeName
- resource: nodes
  metrics:
  - name: node_pods
    help: Pods on a node.
    type: gauge
    value: size(byIndex("pods", "byNod", object.metadata.name))
`, `c.yaml:12: metric "node_pods" value: byIndex("pods", "byNod", …) reads index "byNod", which no resource of the config defines (did you mean "byNode"?)`},
		{"byIndex of an undefined index", configHead + `resources:
- resource: nodes
  metrics:
  - name: node_pods
    help: Pods on a node.
    type: gauge
    value: size(byIndex("pods", "byNode", object.metadata.name))
`, `c.yaml:9: metric "node_pods" value: byIndex("pods", "byNode", …) reads index "byNode", which no resource of the config defines; define it under indexes of the entry for pods`},
		{"byIndex with a computed index", gauge + "    value: size(byIndex(\"pods\", \"by\" + \"Node\", object.metadata.name))\n",
			`c.yaml:9: metric "pods" value: invalid expression: the second argument of byIndex() must be a string literal naming an index, such as "byNode"
 | size(byIndex("pods", "by" + "Node", object.metadata.name))
 |                      ^`},
		{"errors sorted by line", configHead + `resources:
- resource: pods
  indexes:
    byNode: object.spec.nodeNam +
  metrics:
  - name: pods
    help: Pods.
    type: gauge
    value: 1 +
    labels:
      b: obj
      a: object.
`, `c.yaml:6: index "byNode" of pods: invalid expression: syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}
 | object.spec.nodeNam +
 |                      ^
c.yaml:11: metric "pods" value: invalid expression: syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}
 | 1 +
 |    ^
c.yaml:13: metric "pods" label "b": invalid expression: undeclared reference to 'obj'
 | obj
 | ^
c.yaml:14: metric "pods" label "a": invalid expression: syntax error: no viable alternative at input '.'
 | object.
 |        ^`},
		{"with validation errors", gauge + "    aggregate: avg\n    value: obect.x\n",
			`c.yaml:9: metric "pods": aggregate "avg" is not supported; use count, sum, min or max, or leave it out for one series per object
c.yaml:10: metric "pods" value: invalid expression: undeclared reference to 'obect' (did you mean "object"?)
 | obect.x
 | ^`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Compile("c.yaml", []byte(tt.yaml), env)
			if err == nil {
				t.Fatalf("Compile succeeded: %+v; want error\n%s", c, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n%s\nwant:\n%s", err, tt.want)
			}
		})
	}
}

// TestCompileExprError checks that a CEL error can be told apart and keeps
// its position in the expression.
func TestCompileExprError(t *testing.T) {
	data := configHead + "resources:\n- resource: pods\n  metrics:\n  - name: pods\n    help: Pods.\n    type: gauge\n    value: |\n      1 +\n        obect.x\n"
	_, err := Compile("c.yaml", []byte(data), testConfigEnv(t))
	var le *LineError
	var ee *indexers.ExprError
	if !errors.As(err, &le) || !errors.As(err, &ee) {
		t.Fatalf("error %v: want a *LineError wrapping an *indexers.ExprError", err)
	}
	if le.Line != 11 || le.Context != `metric "pods" value` {
		t.Errorf("LineError at line %d, context %q; want 11, %q", le.Line, le.Context, `metric "pods" value`)
	}
	if ee.Line != 2 || ee.Column != 3 || ee.Context != "" {
		t.Errorf("ExprError at %d:%d with context %q; want 2:3 and none", ee.Line, ee.Column, ee.Context)
	}
}

// testConfig is a valid config with two resources, a prefix, common labels,
// each, aggregates and a byIndex() lookup.
const testConfig = configHead + `prefix: kube_
commonLabels:
  region: eu
  cluster: prod
resources:
- resource: pods
  namespaces: [shop]
  indexes:
    byNode: object.spec.?nodeName.orValue(null)
  metrics:
  - name: pod_info
    help: Information about a pod.
    type: info
    labels:
      pod: object.metadata.name
      namespace: object.metadata.namespace
      node: object.spec.nodeName
  - name: pod_container_restarts_total
    help: |
      Restarts of a container.
    type: counter
    each: object.status.containerStatuses
    labels:
      pod: object.metadata.name
      container: each.name
    value: each.restartCount
  - name: pods_by_phase
    help: Pods by phase.
    type: gauge
    aggregate: count
    labels:
      phase: object.status.phase
  - name: pod_restarts_max
    help: The most restarts of a container of the pods of a namespace.
    type: gauge
    aggregate: max
    labels:
      namespace: object.metadata.namespace
    value: object.status.containerStatuses.map(s, s.restartCount).max()
- resource: nodes
  metrics:
  - name: node_pods
    help: Pods scheduled on a node.
    type: gauge
    labels:
      node: object.metadata.name
    value: size(byIndex("pods", "byNode", object.metadata.name))
`

func testPod() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"namespace": "shop", "name": "web-1"},
		"spec": map[string]any{
			"nodeName":   "node-1",
			"containers": []any{map[string]any{"name": "app"}, map[string]any{"name": "proxy"}},
		},
		"status": map[string]any{
			"phase": "Running",
			"containerStatuses": []any{
				map[string]any{"name": "app", "restartCount": int64(3)},
				map[string]any{"name": "proxy", "restartCount": int64(0)},
			},
		},
	}}
}

func TestCompileFamilies(t *testing.T) {
	c, err := Compile("c.yaml", []byte(testConfig), testConfigEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != "c.yaml" || c.Config.Prefix != "kube_" || len(c.Resources) != 2 {
		t.Fatalf("Compile: path %q, prefix %q, %d resources", c.Path, c.Config.Prefix, len(c.Resources))
	}
	constLabels := [][2]string{{"cluster", "prod"}, {"region", "eu"}}

	// What a family is made of, programs told by their expression.
	type family struct {
		Name, Help, Type string
		LabelNames       []string
		Labels           []string
		ConstLabels      [][2]string
		Value, Each      string
		Aggregate        string
		Line             int
	}
	expr := func(p *indexers.Program) string {
		if p == nil {
			return "<nil>"
		}
		return p.Expr()
	}
	var got [][]family
	for _, r := range c.Resources {
		var fs []family
		for _, f := range r.Families {
			g := family{Name: f.Name, Help: f.Help, Type: f.Type, LabelNames: f.LabelNames, ConstLabels: f.ConstLabels,
				Value: expr(f.Value), Each: expr(f.Each), Aggregate: f.Aggregate, Line: f.Line}
			for _, p := range f.Labels {
				g.Labels = append(g.Labels, expr(p))
			}
			fs = append(fs, g)
		}
		got = append(got, fs)
	}
	want := [][]family{{
		{Name: "kube_pod_info", Help: "Information about a pod.", Type: TypeInfo,
			LabelNames:  []string{"namespace", "node", "pod"},
			Labels:      []string{"object.metadata.namespace", "object.spec.nodeName", "object.metadata.name"},
			ConstLabels: constLabels, Value: "<nil>", Each: "<nil>", Line: 13},
		{Name: "kube_pod_container_restarts_total", Help: "Restarts of a container.", Type: TypeCounter,
			LabelNames: []string{"container", "pod"}, Labels: []string{"each.name", "object.metadata.name"},
			ConstLabels: constLabels, Value: "each.restartCount", Each: "object.status.containerStatuses", Line: 20},
		{Name: "kube_pods_by_phase", Help: "Pods by phase.", Type: TypeGauge,
			LabelNames: []string{"phase"}, Labels: []string{"object.status.phase"},
			ConstLabels: constLabels, Value: "<nil>", Each: "<nil>", Aggregate: AggregateCount, Line: 29},
		{Name: "kube_pod_restarts_max", Help: "The most restarts of a container of the pods of a namespace.", Type: TypeGauge,
			LabelNames: []string{"namespace"}, Labels: []string{"object.metadata.namespace"},
			ConstLabels: constLabels, Value: "object.status.containerStatuses.map(s, s.restartCount).max()", Each: "<nil>",
			Aggregate: AggregateMax, Line: 35},
	}, {
		{Name: "kube_node_pods", Help: "Pods scheduled on a node.", Type: TypeGauge,
			LabelNames: []string{"node"}, Labels: []string{"object.metadata.name"},
			ConstLabels: constLabels, Value: `size(byIndex("pods", "byNode", object.metadata.name))`, Each: "<nil>", Line: 44},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("families (-want +got):\n%s", diff)
	}

	pods, nodes := c.Resources[0], c.Resources[1]
	if !reflect.DeepEqual(pods.Config, c.Config.Resources[0]) || pods.Config.Namespaces[0] != "shop" {
		t.Errorf("resource config %+v", pods.Config)
	}
	if len(pods.Indexes) != 1 || pods.Indexes["byNode"] == nil || len(nodes.Indexes) != 0 {
		t.Fatalf("indexes %v and %v; want byNode for pods only", pods.Indexes, nodes.Indexes)
	}
	if got, want := nodes.Families[0].Value.References(), []indexers.Reference{{Resource: "pods", Indexes: []string{"byNode"}, Calls: []string{`byIndex("pods", "byNode", …)`}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("references %v, want %v", got, want)
	}
	// Families are distinct values: one may not change another's labels.
	if &pods.Families[0].ConstLabels[0] == &pods.Families[1].ConstLabels[0] {
		t.Error("families share their const labels")
	}
}

// TestCompiledPrograms evaluates the compiled programs on a pod, as the
// engine does.
func TestCompiledPrograms(t *testing.T) {
	c, err := Compile("c.yaml", []byte(testConfig), testConfigEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	pod := testPod()
	ctx := context.Background()
	pods := c.Resources[0]

	if got, err := pods.Indexes["byNode"].IndexValues(pod); err != nil || !reflect.DeepEqual(got, []string{"node-1"}) {
		t.Errorf("byNode: %v, %v; want [node-1]", got, err)
	}

	values := func(f *Family, each any, withEach bool) []any {
		t.Helper()
		var out []any
		for _, p := range f.Labels {
			var v ref.Val
			var err error
			if withEach {
				v, err = p.EvalEach(ctx, pod, each)
			} else {
				v, err = p.Eval(ctx, pod)
			}
			if err != nil {
				t.Fatalf("%s: %v", p.Context(), err)
			}
			out = append(out, v.Value())
		}
		return out
	}

	info := pods.Families[0]
	if got, want := values(info, nil, false), []any{"shop", "node-1", "web-1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("%s labels %v, want %v", info.Name, got, want)
	}

	restarts := pods.Families[1]
	list, err := restarts.Each.Value(pod)
	if err != nil {
		t.Fatal(err)
	}
	elems, ok := list.([]any)
	if !ok || len(elems) != 2 {
		t.Fatalf("each: %#v, want a list of 2", list)
	}
	var series []any
	for _, e := range elems {
		v, err := restarts.Value.EvalEach(ctx, pod, e)
		if err != nil {
			t.Fatal(err)
		}
		series = append(series, append(values(restarts, e, true), v.Value()))
	}
	if want := []any{[]any{"app", "web-1", int64(3)}, []any{"proxy", "web-1", int64(0)}}; !reflect.DeepEqual(series, want) {
		t.Errorf("%s series %v, want %v", restarts.Name, series, want)
	}
	if p := restarts.Labels[0].Context(); p != `metric "kube_pod_container_restarts_total" label "container"` {
		t.Errorf("context %q", p)
	}

	mostRestarts := pods.Families[3]
	if v, err := mostRestarts.Value.Value(pod); err != nil || v != int64(3) {
		t.Errorf("%s value %v, %v; want 3", mostRestarts.Name, v, err)
	}

	// The lookup of another resource, bound as the engine binds it.
	nodePods := c.Resources[1].Families[0]
	node := map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "node-1"}}
	v, err := nodePods.Value.WithLookup(fakeLookup{"pods/byNode/node-1": {pod, pod}}).Eval(ctx, node)
	if err != nil || v != types.Int(2) {
		t.Errorf("%s value %v, %v; want 2", nodePods.Name, v, err)
	}
}

// fakeLookup answers byIndex() from a map keyed by resource/index/value.
type fakeLookup map[string][]any

func (l fakeLookup) Get(_, _, _ string) (any, bool, error) {
	return nil, false, nil
}

func (l fakeLookup) ByIndex(resource, index, value string) ([]any, error) {
	return l[resource+"/"+index+"/"+value], nil
}

// TestDocExamples compiles every complete config in
// docs/exporter-config.md, so that the reference stays true.
func TestDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/exporter-config.md")
	if err != nil {
		t.Fatal(err)
	}
	env := testConfigEnv(t)
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	n := 0
	for _, b := range blocks {
		if !strings.HasPrefix(b[1], "apiVersion: "+ConfigAPIVersion) {
			continue
		}
		n++
		if _, err := Compile("docs/exporter-config.md example", []byte(b[1]), env); err != nil {
			t.Errorf("example %d:\n%s\n%v", n, b[1], err)
		}
	}
	if n == 0 {
		t.Error("no complete example in docs/exporter-config.md")
	}
}

// TestSecretData checks that a config reading the data of Secrets is
// refused unless it says allowSecretData: true, and that reading only
// their metadata is not.
func TestSecretData(t *testing.T) {
	env := testConfigEnv(t)
	secrets := func(resource, label string) string {
		return configHead + "resources:\n- resource: " + resource + "\n  metrics:\n  - name: secret_info\n    help: Secrets.\n    type: gauge\n    labels:\n      x: " + label + "\n"
	}
	for _, tt := range []struct {
		name, yaml, want string
	}{
		{"data", secrets("secrets", `object.data.password`), `c.yaml:10: metric "secret_info" label "x": reads the data of Secrets (data, stringData or the whole object); set allowSecretData: true`},
		{"optional data", secrets("Secret", `object.?data.?token.orValue("")`), "reads the data of Secrets"},
		{"whole object", secrets("secret.v1.", `string(object)`), "reads the data of Secrets"},
		{"stringData", secrets("secrets", `object.?stringData.orValue({}).size()`), "reads the data of Secrets"},
		{"lookup", configHead + "resources:\n- resource: pods\n  metrics:\n  - name: pod_secret\n    help: Pods.\n    type: gauge\n    labels:\n      x: get(\"secrets\", object.metadata.namespace + \"/x\").?type.orValue(\"\")\n",
			`c.yaml:10: metric "pod_secret" label "x": reads Secrets with get() or byIndex()`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile("c.yaml", []byte(tt.yaml), env)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if _, err := Compile("c.yaml", []byte("allowSecretData: true\n"+tt.yaml), env); err != nil {
				t.Errorf("with allowSecretData: true: %v", err)
			}
		})
	}
	for _, label := range []string{`object.metadata.name`, `object.type`, `object.metadata.?labels.?app.orValue("")`} {
		if _, err := Compile("c.yaml", []byte(secrets("secrets", label)), env); err != nil {
			t.Errorf("%s: %v", label, err)
		}
	}
	// Other resources may have a data field.
	if _, err := Compile("c.yaml", []byte(secrets("configmaps", `object.data.key`)), env); err != nil {
		t.Errorf("configmaps: %v", err)
	}
}

// TestSharedPrograms: an expression written in several places is compiled
// once; each place's program still names its own place in its errors.
func TestSharedPrograms(t *testing.T) {
	const data = `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  metrics:
  - name: a
    help: A.
    type: gauge
    labels:
      team: object.metadata.labels["team"]
  - name: b
    help: B.
    type: gauge
    labels:
      team: object.metadata.labels["team"]
`
	c, err := Compile("c.yaml", []byte(data), testConfigEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	fams := c.Resources[0].Families
	a, b := fams[0].Labels[0], fams[1].Labels[0]
	if a == b || a.Context() == b.Context() {
		t.Fatalf("the two labels' programs: the same %v, contexts %q and %q; want two, each with its own context", a == b, a.Context(), b.Context())
	}
	pod := testPod() // without the label team
	for _, p := range []*indexers.Program{a, b} {
		_, err := p.Eval(context.Background(), pod)
		if err == nil || !strings.HasPrefix(err.Error(), p.Context()+": ") {
			t.Errorf("error %v, want one that starts with %q", err, p.Context())
		}
	}
}

// TestProfilesPlan compiles every file of every built-in profile with its
// programs planned, as a user's config is: Sources.Load defers the
// planning of the profiles' programs to their first evaluation that needs
// the interpreter, which would find an error of planning (a constant that
// fails to evaluate, a regular expression literal that does not compile)
// only then.
func TestProfilesPlan(t *testing.T) {
	for _, name := range profiles.Names() {
		files, err := profiles.Files(name)
		if err != nil {
			t.Fatal(err)
		}
		env := testConfigEnv(t)
		for _, f := range files {
			c, err := Compile(f.Path, f.Data, env)
			if err != nil {
				t.Errorf("profile %s: %v", name, err)
				continue
			}
			if len(c.Resources) == 0 {
				t.Errorf("profile %s: %s compiled into no resource", name, f.Path)
			}
		}
	}
}

// TestProfileSizeBoundsKnown: the kube-state-metrics profile holds the size
// bounds of all its expressions that track their cost, so that a load
// reads no schema of the API server (TestProfileChecks in
// test/e2e/profile checks them against its schemas).
func TestProfileSizeBoundsKnown(t *testing.T) {
	files, err := profiles.Files(profiles.KubeStateMetrics)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, f := range files {
		all = append(all, f.Resource)
	}
	c, err := Sources{Profile: profiles.KubeStateMetrics, Selection: Selection{Resources: all}}.Load(testConfigEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.SizeBounds()) == 0 {
		t.Fatal("no expression of the profile tracks its cost")
	}
	for i, wanted := range c.schemaWanted() {
		if wanted {
			t.Errorf("the schema of %s is read: the profile lacks the size bounds of some of its expressions", c.Resources[i].Config.Resource)
		}
	}
}
