package plan

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// TestSortPathStopsWithItsBudget checks that a JSONPath --sort-by charged
// to a budget reads no object once the budget's context has ended, with
// the error that stops a query, and reads them before.
func TestSortPathStopsWithItsBudget(t *testing.T) {
	sp, err := compileSortPath(".metadata.name")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Plan{sortPath: sp}
	p.ChargeTo(indexers.NewBudget(ctx, 0))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	if v, err := p.sortPath.Value(pod); err != nil || v == nil {
		t.Fatalf("Value before the end = %v, %v; want the name", v, err)
	}
	cancel()
	if v, err := p.sortPath.Value(pod); !indexers.IsBudgetStop(err) {
		t.Fatalf("Value after the end = %v, %v; want a budget stop", v, err)
	}
}
