package query_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestIndexesJSON checks indexes -o json against the objects the API
// lists: the number of distinct values of an index.
func TestIndexesJSON(t *testing.T) {
	list, err := cluster.Client.CoreV1().Pods("shop").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, p := range list.Items {
		if p.Spec.NodeName != "" {
			nodes[p.Spec.NodeName] = true
		}
	}
	r := run(t, "indexes", "--kubeconfig", cluster.Kubeconfig, "pods", "-n", "shop", "--index", "byNode=object.spec.nodeName", "-o", "json")
	var rows []struct {
		Resource   string `json:"resource"`
		Index      string `json:"index"`
		Expression string `json:"expression"`
		BuiltIn    bool   `json:"builtIn"`
		Values     *int   `json:"values"`
	}
	if err := json.Unmarshal([]byte(r.ok(t)), &rows); err != nil {
		t.Fatalf("indexes -o json printed %q: %v", r.out, err)
	}
	found := false
	for _, row := range rows {
		if row.Index == "byNode" {
			found = true
			if row.Resource != "pods" || row.Expression != "object.spec.nodeName" || row.Values == nil || *row.Values != len(nodes) {
				t.Errorf("byNode: %+v, want pods, object.spec.nodeName and %d values", row, len(nodes))
			}
		}
		if row.Index == "namespace" && (!row.BuiltIn || row.Values == nil || *row.Values != 1) {
			t.Errorf("namespace: %+v, want the built-in index with 1 value", row)
		}
	}
	if !found {
		t.Errorf("indexes -o json printed no byNode index: %s", r.out)
	}
	yml := run(t, "indexes", "--kubeconfig", cluster.Kubeconfig, "pods", "-n", "shop", "--index", "byNode=object.spec.nodeName", "-o", "yaml").ok(t)
	if !strings.Contains(yml, "- builtIn: true\n  index: namespace\n") || !strings.Contains(yml, fmt.Sprintf("  index: byNode\n  resource: pods\n  values: %d\n", len(nodes))) {
		t.Errorf("indexes -o yaml printed\n%s", yml)
	}
}
