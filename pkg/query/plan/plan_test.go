package plan

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/query"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/internal/fixture"
)

func TestCompilePlan(t *testing.T) {
	env := fixture.Env(t)
	tests := []struct {
		name     string
		req      Request
		metadata bool
		err      string
	}{
		{name: "bare count", req: Request{Count: true}, metadata: true},
		{name: "label where", req: Request{Where: `object.metadata.labels["app"] == "web"`}, metadata: true},
		{name: "status where", req: Request{Where: `object.status.phase == "Running"`}},
		{name: "json needs objects", req: Request{Output: "json"}},
		{name: "name output", req: Request{Output: "name", SortBy: "object.metadata.name"}, metadata: true},
		{name: "index on spec", req: Request{Indexes: []NamedExpr{{"byNode", "object.spec.nodeName"}}, By: []query.Selector{{Index: "byNode", Value: "n1"}}}},
		{name: "column on metadata", req: Request{Columns: []NamedExpr{{"app", `object.metadata.labels["app"]`}}}, metadata: true},
		{name: "lookup keeps metadata", req: Request{Where: `get("nodes", object.metadata.name) != null`}, metadata: true},
		{name: "unknown index", req: Request{By: []query.Selector{{Index: "byNode", Value: "n1"}}}, err: `unknown index "byNode": known indexes are namespace`},
		{name: "index named namespace", req: Request{Indexes: []NamedExpr{{"namespace", "object.metadata.namespace"}}}, err: "built in"},
		{name: "duplicate index", req: Request{Indexes: []NamedExpr{{"a", "object.kind"}, {"a", "object.kind"}}}, err: `index "a" is defined twice`},
		{name: "index type", req: Request{Indexes: []NamedExpr{{"a", "1"}}}, err: `index "a"`},
		{name: "errors joined", req: Request{Where: "1", SortBy: "(("}, err: "--sort-by"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(env, tt.req)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				if _, ok := err.(*query.UsageError); !ok {
					t.Fatalf("error is %T, want *UsageError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.MetadataOnly() != tt.metadata {
				t.Errorf("MetadataOnly() = %v, want %v", p.MetadataOnly(), tt.metadata)
			}
		})
	}
}

func TestSplitColumns(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"node=object.spec.nodeName", []string{"node=object.spec.nodeName"}},
		{"a=x,b=y", []string{"a=x", "b=y"}},
		{`zone=get("nodes", object.spec.nodeName).metadata.labels["z"],n=1`, []string{`zone=get("nodes", object.spec.nodeName).metadata.labels["z"]`, "n=1"}},
		{`s=object.metadata.name.split(",").size()`, []string{`s=object.metadata.name.split(",").size()`}},
		{`l=[1, 2],m={"a": 1, "b": 2}`, []string{`l=[1, 2]`, `m={"a": 1, "b": 2}`}},
		{`eq=x == 1, y=2`, []string{`eq=x == 1`, ` y=2`}},
		{`c=a,b == c`, []string{`c=a,b == c`}},
		{`q='it\'s, x=1'`, []string{`q='it\'s, x=1'`}},
	}
	for _, tt := range tests {
		if got := SplitColumns(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitColumns(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
