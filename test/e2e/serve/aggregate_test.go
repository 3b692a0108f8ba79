package serve_test

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestServeAggregates: a query server computes --aggregate per
// --group-by group as the API server's pods add up, and prints what a
// local query prints.
func TestServeAggregates(t *testing.T) {
	s := startServer(t)
	args := []string{"pods", "-A", "--group-by", "object.metadata.namespace",
		"--aggregate", "restarts=sum(object.status.?containerStatuses.orValue([]).map(c, c.restartCount).sum())",
		"--aggregate", "n=count()", "-o", "json"}
	r := s.query(t, cluster.Kubeconfig, args...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.errOut)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	list, err := cluster.Client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	restarts, count := map[string]float64{}, map[string]float64{}
	for _, p := range list.Items {
		count[p.Namespace]++
		for _, c := range p.Status.ContainerStatuses {
			restarts[p.Namespace] += float64(c.RestartCount)
		}
	}
	var want []map[string]any
	for _, ns := range slices.Sorted(maps.Keys(count)) {
		want = append(want, map[string]any{"namespace": ns, "restarts": restarts[ns], "n": count[ns]})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the server answered %v, want %v", got, want)
	}
	if local := localQuery(t, args...); local.out != r.out || local.errOut != r.errOut {
		t.Errorf("the server printed\n%s%s\nwant, as locally:\n%s%s", r.out, r.errOut, local.out, local.errOut)
	}
}
