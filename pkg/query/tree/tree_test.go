package tree_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/query/tree"
)

func TestPrint(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	trees := []*tree.Node{{
		Kind: "Deployment", Namespace: "shop", Name: "web", Ready: "True", Created: ago(2 * time.Hour),
		Children: []*tree.Node{
			{Kind: "ReplicaSet", Namespace: "shop", Name: "web-1", Ready: "False", Reason: "1/2 ready", Created: ago(time.Hour),
				Children: []*tree.Node{
					{Kind: "Pod", Namespace: "shop", Name: "web-1-a", Ready: "True", Created: ago(time.Minute)},
					{Kind: "Pod", Namespace: "shop", Name: "web-1-b", Ready: "False", Reason: "ContainersNotReady", Created: ago(time.Minute)},
				}},
			{Kind: "ReplicaSet", Namespace: "shop", Name: "web-0", Ready: "-", Created: ago(3 * time.Hour),
				Children: []*tree.Node{{Kind: "Pod", Namespace: "shop", Name: "web-0-a", Ready: "-"}}},
		},
	}, {Kind: "Deployment", Namespace: "shop", Name: "db", Ready: "-", Created: ago(30 * time.Second)}}
	var b bytes.Buffer
	if err := tree.Print(&b, trees, now); err != nil {
		t.Fatal(err)
	}
	want := `NAMESPACE   NAME                 READY   REASON               AGE
shop        Deployment/web       True                         120m
shop        ├─ReplicaSet/web-1   False   1/2 ready            60m
shop        │ ├─Pod/web-1-a      True                         60s
shop        │ └─Pod/web-1-b      False   ContainersNotReady   60s
shop        └─ReplicaSet/web-0   -                            3h
shop          └─Pod/web-0-a      -                            <unknown>
shop        Deployment/db        -                            30s
`
	if b.String() != want {
		t.Errorf("Print:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestReadiness(t *testing.T) {
	cond := func(typ, status, reason string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason}
	}
	tests := []struct {
		obj           map[string]any
		ready, reason string
	}{
		{map[string]any{"status": map[string]any{"conditions": []any{cond("PodScheduled", "True", ""), cond("Ready", "False", "ContainersNotReady")}}}, "False", "ContainersNotReady"},
		{map[string]any{"spec": map[string]any{"replicas": int64(3)}, "status": map[string]any{"readyReplicas": int64(3)}}, "True", ""},
		{map[string]any{"spec": map[string]any{"replicas": int64(2)}}, "False", "0/2 ready"},
		{map[string]any{"spec": map[string]any{"replicas": int64(0)}}, "True", ""},
		{map[string]any{"spec": map[string]any{"ports": []any{}}}, "-", ""},
	}
	for _, tt := range tests {
		if r, why := tree.Readiness(tt.obj); r != tt.ready || why != tt.reason {
			t.Errorf("Readiness(%v) = %q, %q; want %q, %q", tt.obj, r, why, tt.ready, tt.reason)
		}
	}
}
