package exporter

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestEmptyOptionalLeavesLabelOut checks that a label whose expression
// gives an empty optional is not written in that series, while one that
// gives "" or null is written empty, in plain families (with and without
// each, the label computed per object or per element) and aggregated ones.
func TestEmptyOptionalLeavesLabelOut(t *testing.T) {
	const config = `apiVersion: kubectl-informer.io/v1alpha1
kind: ExporterConfig
resources:
- resource: pods
  metrics:
  - name: pod_team
    help: The pod's team, when it has one.
    type: gauge
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
      team: object.metadata.?labels.?team
      tier: object.metadata.?labels.?tier.orValue("")
      zone: object.metadata.?labels.?zone.orValue(null)
  - name: pod_port
    help: The pod's ports, named or not.
    type: gauge
    each: object.spec.?ports.orValue([])
    labels:
      namespace: object.metadata.namespace
      pod: object.metadata.name
      team: object.metadata.?labels.?team
      port_name: each.?name
      port: each.number
  - name: pods_by_team
    help: Pods per team.
    type: gauge
    aggregate: count
    labels:
      team: object.metadata.?labels.?team
`
	c, err := Compile("c.yaml", []byte(config), testConfigEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(c, EngineOptions{})
	t.Cleanup(e.Close)
	obj := func(name string, labels map[string]any, ports ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"namespace": "shop", "name": name, "uid": name, "labels": labels},
			"spec":     map[string]any{"ports": ports},
		}}
	}
	e.Update(0, obj("a", map[string]any{"team": "web", "tier": "front", "zone": "z1"}, map[string]any{"name": "http", "number": int64(80)}, map[string]any{"number": int64(81)}))
	e.Update(0, obj("b", map[string]any{}, map[string]any{"number": int64(82)}))
	e.Update(0, obj("c", map[string]any{"team": "web"}))
	for name, msg := range e.EvaluationErrors() {
		t.Errorf("%s: %s", name, msg)
	}
	got := exposition(e, false)
	for _, want := range []string{
		`pod_team{namespace="shop",pod="a",team="web",tier="front",zone="z1"} 1`,
		`pod_team{namespace="shop",pod="b",tier="",zone=""} 1`,
		`pod_team{namespace="shop",pod="c",team="web",tier="",zone=""} 1`,
		`pod_port{namespace="shop",pod="a",team="web",port="80",port_name="http"} 1`,
		`pod_port{namespace="shop",pod="a",team="web",port="81"} 1`,
		`pod_port{namespace="shop",pod="b",port="82"} 1`,
		`pods_by_team{team="web"} 2`,
		`pods_by_team 1`,
	} {
		if !strings.Contains(got, "\n"+want+"\n") {
			t.Errorf("missing %s in\n%s", want, got)
		}
	}
	lint(t, got)
	// A label the object gains and loses again.
	e.Update(0, obj("b", map[string]any{"team": "db"}, map[string]any{"number": int64(82)}))
	e.Update(0, obj("b", map[string]any{}, map[string]any{"number": int64(82)}))
	if got2 := exposition(e, false); got2 != got {
		t.Errorf("after the label came and went the exposition changed:\n%s\nwas\n%s", got2, got)
	}
}
