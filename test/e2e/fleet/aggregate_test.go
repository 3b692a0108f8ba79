package fleet_test

import (
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestAggregates: groups of the same namespace in several clusters merge
// exactly: counts, sums, maximums and distinct values combine, averages
// and quantiles are those of every cluster's pods together, as the API
// servers list them.
func TestAggregates(t *testing.T) {
	const restarts = `object.status.?containerStatuses.orValue([]).map(c, c.restartCount).sum()`
	code, out, errOut := run(t, "query", "pods", "-A", "--context", "east,west,north",
		"--group-by", "object.metadata.namespace",
		"--aggregate", "n=count()",
		"--aggregate", "restarts=sum("+restarts+")",
		"--aggregate", "mean=avg("+restarts+")",
		"--aggregate", "median=quantile(0.5, "+restarts+")",
		"--aggregate", "most=max("+restarts+")",
		"--aggregate", `nodes=distinct(cluster + "/" + object.spec.?nodeName.orValue(""))`,
		"-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	values := map[string][]float64{}
	nodes := map[string]map[string]bool{}
	for i, name := range names {
		for _, p := range pods(t, i) {
			values[p.Namespace] = append(values[p.Namespace], float64(restartsOf(&p)))
			if nodes[p.Namespace] == nil {
				nodes[p.Namespace] = map[string]bool{}
			}
			nodes[p.Namespace][name+"/"+p.Spec.NodeName] = true
		}
	}
	var want []map[string]any
	for _, ns := range slices.Sorted(maps.Keys(values)) {
		v := values[ns]
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		s := slices.Sorted(slices.Values(v))
		h := float64(len(s)-1) * 0.5
		lo, hi := int(math.Floor(h)), int(math.Ceil(h))
		want = append(want, map[string]any{
			"namespace": ns, "n": float64(len(v)), "restarts": sum, "mean": sum / float64(len(v)),
			"median": s[lo] + (h-math.Floor(h))*(s[hi]-s[lo]), "most": slices.Max(v), "nodes": float64(len(nodes[ns])),
		})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged over the clusters:\n%v\nwant\n%v", got, want)
	}
	// Some namespace is in more than one cluster, with restarts: the
	// merge is exercised.
	shared := 0
	for ns := range values {
		in := 0
		for i := range names {
			if slices.ContainsFunc(pods(t, i), func(p corev1.Pod) bool { return p.Namespace == ns }) {
				in++
			}
		}
		if in > 1 {
			shared++
		}
	}
	if shared == 0 {
		t.Fatal("no namespace has pods in several clusters")
	}
}

// restartsOf is the restarts of a pod's containers.
func restartsOf(p *corev1.Pod) int64 {
	var n int64
	for _, c := range p.Status.ContainerStatuses {
		n += int64(c.RestartCount)
	}
	return n
}
