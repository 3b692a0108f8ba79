package query_test

import (
	"reflect"
	"strings"
	"testing"
)

// TestPrunedCachesAnswerAsWhole: a query's caches keep only what its
// expressions read, into the elements of the lists they iterate over
// (each container's name and image), yet a list whose element an
// expression reads whole (c == object.spec.containers[0]) is kept whole,
// and a map whose entries it counts (the labels). The answers are
// computed from the pods as the API server lists them.
func TestPrunedCachesAnswerAsWhole(t *testing.T) {
	ns := cluster.NewNamespace(t, "pruned")
	created := createAggregatePods(t, ns)
	rows := decodeRows(t, query(t, "pods", "-n", ns,
		"--group-by", "name=object.metadata.name",
		"--group-by", "labels=object.metadata.labels.map(k, 1).size()",
		"--group-by", `containers=object.spec.containers.map(c, c.name + "=" + c.image).join(",")`,
		"--aggregate", "n=count()", "-o", "json").ok(t))
	whole := decodeRows(t, query(t, "pods", "-n", ns,
		"--group-by", "name=object.metadata.name",
		"--group-by", "first=object.spec.containers.exists(c, c == object.spec.containers[0])",
		"--aggregate", "n=count()", "-o", "json").ok(t))
	var want, wantWhole []map[string]any
	for i := range created {
		p := &created[i]
		var parts []string
		for _, c := range p.Spec.Containers {
			parts = append(parts, c.Name+"="+c.Image)
		}
		want = append(want, map[string]any{
			"name": p.Name, "labels": float64(len(p.Labels)),
			"containers": strings.Join(parts, ","), "n": float64(1),
		})
		wantWhole = append(wantWhole, map[string]any{"name": p.Name, "first": true, "n": float64(1)})
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("pods:\n%v\nwant\n%v", rows, want)
	}
	if !reflect.DeepEqual(whole, wantWhole) {
		t.Errorf("pods, an element read whole:\n%v\nwant\n%v", whole, wantWhole)
	}

}
