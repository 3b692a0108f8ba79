package exporter

import (
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

func TestLabelKeyName(t *testing.T) {
	for key, want := range map[string]string{
		"app":                    "app",
		"app.kubernetes.io/name": "app_kubernetes_io_name",
		"fooBar":                 "foo_bar",
		"FooBar":                 "foo_bar",
		"aBC":                    "a_bc",
		"a1B":                    "a1_b",
		"a.B":                    "a_b",
		"HTTPServer":             "httpserver",
		"x-y_z":                  "x_y_z",
		"größe":                  "gr__e",
		"":                       "",
	} {
		if got := labelKeyName(key); got != want {
			t.Errorf("labelKeyName(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestMapLabelsConflicts(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]string
		want []extraLabel
	}{
		{"none", map[string]string{}, []extraLabel{}},
		{"sorted by key", map[string]string{"b": "2", "a": "1"}, []extraLabel{{"label_a", "1"}, {"label_b", "2"}}},
		{"two keys, one name", map[string]string{"fooBar": "x", "foo_bar": "y"},
			[]extraLabel{{"label_foo_bar_conflict1", "x"}, {"label_foo_bar_conflict2", "y"}}},
		{"three keys, one name", map[string]string{"a.b": "1", "a/b": "2", "a_b": "3"},
			[]extraLabel{{"label_a_b_conflict1", "1"}, {"label_a_b_conflict2", "2"}, {"label_a_b_conflict3", "3"}}},
		// A key that sanitizes to a name a suffix would take keeps it; the
		// suffix skips to the next free one.
		{"suffix taken", map[string]string{"a.b": "1", "a_b": "2", "A_b_conflict1": "3"},
			[]extraLabel{{"label_a_b_conflict1", "3"}, {"label_a_b_conflict2", "1"}, {"label_a_b_conflict3", "2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mapLabels(types.DefaultTypeAdapter.NativeToValue(tc.in), "label", false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(extraLabel{})); diff != "" {
				t.Errorf("mapLabels (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := mapLabels(types.String("x"), "label", false, nil); err == nil || !strings.Contains(err.Error(), "must be a map") {
		t.Errorf("a string: %v, want an error saying labelsFrom must be a map", err)
	}
}

func TestKeyFilter(t *testing.T) {
	for _, tc := range []struct {
		list     []string
		allowed  []string
		rejected []string
	}{
		{[]string{"*"}, []string{"app", "x.y/z"}, nil},
		{[]string{"app", "*"}, []string{"app"}, []string{"team"}},
		{[]string{"app", "team"}, []string{"app", "team"}, []string{"apps", "tea"}},
		{[]string{"app.kubernetes.io/*"}, []string{"app.kubernetes.io/name", "app.kubernetes.io/"}, []string{"appXkubernetes.io/name", "x.app.kubernetes.io/name"}},
		{[]string{"*-team"}, []string{"a-team", "-team"}, []string{"a-teams"}},
		{[]string{}, nil, []string{"app"}},
	} {
		f, err := NewKeyFilter(tc.list)
		if err != nil {
			t.Fatalf("%q: %v", tc.list, err)
		}
		for _, k := range tc.allowed {
			if !f.Allows(k) {
				t.Errorf("%q rejects %q", tc.list, k)
			}
		}
		for _, k := range tc.rejected {
			if f.Allows(k) {
				t.Errorf("%q allows %q", tc.list, k)
			}
		}
	}
	if _, err := NewKeyFilter([]string{"a*b*"}); err == nil {
		t.Error("a key with two wildcards is accepted")
	}
}

func TestParseAllowlist(t *testing.T) {
	for in, want := range map[string]map[string][]string{
		"":                                 {},
		"pods=[app,team]":                  {"pods": {"app", "team"}},
		"pods=[app, team], *=[*]":          {"pods": {"app", "team"}, "*": {"*"}},
		"pods=[],deployments=[app.k8s/x*]": {"pods": {}, "deployments": {"app.k8s/x*"}},
	} {
		got, err := ParseAllowlist(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", in, diff)
		}
	}
	for _, in := range []string{"pods", "pods=app", "pods=[app", "=[app]", "pods=[app]x", "pods=[app],", "pods=[a,,b]", "pods=[a*b*]"} {
		if _, err := ParseAllowlist(in); err == nil {
			t.Errorf("%q is accepted", in)
		} else if !strings.Contains(err.Error(), in) {
			t.Errorf("%q: the error does not quote the option: %v", in, err)
		}
	}
}

// labelsConfig has a family with every key of the pods' labels, and two
// that follow the allowlists.
const labelsConfig = `
apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  metrics:
  - name: pod_labels_all
    help: Every label.
    type: gauge
    labels:
      pod: object.metadata.name
    labelsFrom:
      map: object.metadata.?labels.orValue({})
      prefix: label
  - name: pod_labels
    help: Allowed labels.
    type: gauge
    labels:
      pod: object.metadata.name
    labelsFrom:
      map: object.metadata.?labels.orValue({})
      prefix: label
      allowlist: labels
  - name: pod_annotations
    help: Allowed annotations.
    type: gauge
    labels:
      pod: object.metadata.name
    labelsFrom:
      map: object.metadata.?annotations.orValue({})
      prefix: annotation
      allowlist: annotations
  - name: pod_container_env
    help: A label per env variable of a container.
    type: gauge
    each: object.spec.containers
    labels:
      pod: object.metadata.name
      container: each.name
    labelsFrom:
      map: 'each.?env.orValue([]).size() > 0 ? {"first": each.env[0].name} : {}' 
      prefix: env
`

func TestLabelsFromThroughTheEngine(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	pod := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{
			"namespace": "shop", "name": "web-1", "uid": "u1",
			"labels":      map[string]any{"app.kubernetes.io/name": "web", "team": "blue", "fooBar": "1", "foo_bar": "2"},
			"annotations": map[string]any{"note": "hi"},
		},
		"spec": map[string]any{"containers": []any{
			map[string]any{"name": "app", "env": []any{map[string]any{"name": "MODE"}}},
			map[string]any{"name": "proxy"},
		}},
	}}
	render := func(labels, annotations string) string {
		t.Helper()
		c, err := Compile("l.yaml", []byte(labelsConfig), env)
		if err != nil {
			t.Fatal(err)
		}
		l, err := ParseAllowlist(labels)
		if err != nil {
			t.Fatal(err)
		}
		a, err := ParseAllowlist(annotations)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.SetAllowlists(l, a); err != nil {
			t.Fatal(err)
		}
		e := NewEngine(c, EngineOptions{})
		t.Cleanup(e.Close)
		e.Update(0, pod)
		waitIdle(t, e)
		out := exposition(e, false)
		lint(t, out)
		return out
	}

	all := `pod_labels_all{pod="web-1",label_app_kubernetes_io_name="web",label_foo_bar_conflict1="1",label_foo_bar_conflict2="2",label_team="blue"} 1`
	env1 := `pod_container_env{pod="web-1",container="app",env_first="MODE"} 1`
	env2 := `pod_container_env{pod="web-1",container="proxy"} 1`
	for _, tc := range []struct {
		labels, annotations string
		want, absent        []string
	}{
		// No allowlist: the allowlisted families have no series, as in
		// kube-state-metrics; the others have every key.
		{"", "", []string{all, env1, env2}, []string{"pod_labels{", "pod_annotations{"}},
		{"pods=[team,app.kubernetes.io/*]", "", []string{
			`pod_labels{pod="web-1",label_app_kubernetes_io_name="web",label_team="blue"} 1`, all,
		}, []string{"pod_annotations{"}},
		{"pods=[]", "*=[*]", []string{`pod_annotations{pod="web-1",annotation_note="hi"} 1`}, []string{"pod_labels{"}},
		// "*" stands for every resource and wins over the resource's own
		// entry.
		{"pods=[team],*=[fooBar]", "nodes=[*]", []string{`pod_labels{pod="web-1",label_foo_bar="1"} 1`}, []string{"pod_annotations{"}},
		{"nodes=[team]", "", nil, []string{"pod_labels{"}},
	} {
		out := render(tc.labels, tc.annotations)
		for _, w := range tc.want {
			if !strings.Contains(out, w+"\n") {
				t.Errorf("labels %q, annotations %q: no line\n%s\nin\n%s", tc.labels, tc.annotations, w, out)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(out, a) {
				t.Errorf("labels %q, annotations %q: %s has series:\n%s", tc.labels, tc.annotations, a, out)
			}
		}
	}
}

func TestLabelsFromConfigErrors(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ metric, want string }{
		{"labelsFrom:\n      prefix: label", "labelsFrom.map is missing"},
		{"labelsFrom:\n      map: object.metadata.labels", "labelsFrom.prefix is missing"},
		{"labelsFrom:\n      map: object.metadata.labels\n      prefix: 1x", `labelsFrom.prefix "1x" does not start valid label names`},
		{"labelsFrom:\n      map: object.metadata.labels\n      prefix: pod", `label "pod_x" starts with labelsFrom's prefix "pod_"`},
		{"labelsFrom:\n      map: object.metadata.labels\n      prefix: label\n      allowlist: tags", `labelsFrom.allowlist "tags" is not known`},
		{"labelsFrom:\n      map: object.metadata.labels\n      prefix: label\n      color: red", "color"},
		{"labelsFrom:\n      map: object.metadata.labels.\n      prefix: label", "labelsFrom"},
	} {
		cfg := "apiVersion: kubectl-informer.io/v1alpha1\nkind: ExporterConfig\nresources:\n- resource: pods\n  metrics:\n  - name: m\n    help: h\n    type: gauge\n    labels:\n      pod_x: object.metadata.name\n    " + tc.metric + "\n"
		_, err := Compile("e.yaml", []byte(cfg), env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n%v\nwant an error with %q", tc.metric, err, tc.want)
		}
	}
}

// TestValueAbsent: a value that is null or an empty optional leaves the
// series out, without an evaluation error; an optional with a value is
// that value.
func TestValueAbsent(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	cfg := `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: deployments
  metrics:
  - name: spec_replicas
    help: h
    type: gauge
    labels:
      name: object.metadata.name
    value: object.spec.?replicas
  - name: nulls
    help: h
    type: gauge
    labels:
      name: object.metadata.name
    value: 'object.metadata.name == "a" ? dyn(7) : dyn(null)'
`
	c, err := Compile("v.yaml", []byte(cfg), env)
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(c, EngineOptions{})
	t.Cleanup(e.Close)
	obj := func(name string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": name, "uid": name}, "spec": spec}}
	}
	e.Update(0, obj("a", map[string]any{"replicas": int64(3)}))
	e.Update(0, obj("b", map[string]any{}))
	waitIdle(t, e)
	out := exposition(e, false)
	for _, want := range []string{`spec_replicas{name="a"} 3`, `nulls{name="a"} 7`} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("no line %s in\n%s", want, out)
		}
	}
	for _, absent := range []string{`spec_replicas{name="b"}`, `nulls{name="b"}`, "evaluation"} {
		if strings.Contains(out, absent) {
			t.Errorf("%s in\n%s", absent, out)
		}
	}
}

func TestUnusedAllowlistEntries(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile("l.yaml", []byte(labelsConfig), env)
	if err != nil {
		t.Fatal(err)
	}
	got := c.UnusedAllowlistEntries(map[string][]string{"pods": {"a"}, "pod": {"a"}, "*": {"b"}}, map[string][]string{"nodes": {"*"}})
	want := []string{
		`the labels allowlist names "pod", which no served family reads; it applies to pods`,
		`the annotations allowlist names "nodes", which no served family reads; it applies to pods`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
