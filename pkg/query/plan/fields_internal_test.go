package plan

import (
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/internal/fixture"
)

// TestFieldsGoIntoElements checks that the fields a plan caches go into
// the elements of the lists its expressions iterate over, and keep a list
// whole where an element is read whole.
func TestFieldsGoIntoElements(t *testing.T) {
	restarts := NamedExpr{Name: "restarts", Expr: "sum(object.status.?containerStatuses.orValue([]).map(c, c.restartCount).sum())"}
	cpu := NamedExpr{Name: "cpu", Expr: `sum(object.spec.containers.map(c, quantity(c.resources.?requests.cpu.orValue("0"))))`}
	cases := []struct {
		name string
		req  Request
		// kept are paths the fields must keep whole, cut those they
		// must not.
		kept, cut [][]string
	}{{
		name: "aggregates over container fields",
		req:  Request{Resources: []string{"pods"}, GroupBy: "object.spec.nodeName", Aggregates: []NamedExpr{restarts, cpu}},
		kept: [][]string{
			{"spec", "nodeName"},
			{"status", "containerStatuses", jsonval.Elements, "restartCount"},
			{"spec", "containers", jsonval.Elements, "resources", "requests", "cpu"},
		},
		cut: [][]string{
			{"status", "containerStatuses"},
			{"spec", "containers"},
			{"spec", "containers", jsonval.Elements, "image"},
			{"status", "containerStatuses", jsonval.Elements, "state"},
		},
	}, {
		name: "an element read whole",
		req:  Request{Resources: []string{"pods"}, Count: true, Where: `object.spec.containers.exists(c, c == {"name": "a"})`},
		kept: [][]string{{"spec", "containers"}},
	}, {
		name: "a list indexed",
		req:  Request{Resources: []string{"pods"}, Count: true, Where: `object.spec.containers[0].image == "a"`},
		kept: [][]string{{"spec", "containers"}},
	}, {
		name: "a list's length",
		req:  Request{Resources: []string{"pods"}, Count: true, Where: `object.spec.containers.size() > 1`},
		kept: [][]string{{"spec", "containers", jsonval.Elements, ""}},
		cut:  [][]string{{"spec", "containers", jsonval.Elements, "name"}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Compile(fixture.Env(t), c.req)
			if err != nil {
				t.Fatal(err)
			}
			fields := p.fields(nil)
			if fields == nil {
				t.Fatal("fields = everything")
			}
			for _, k := range c.kept {
				if !fields.Covers(jsonval.NewPaths(k)) {
					t.Errorf("fields %s do not keep %v", fields, k)
				}
			}
			for _, k := range c.cut {
				if fields.Covers(jsonval.NewPaths(k)) {
					t.Errorf("fields %s keep %v", fields, k)
				}
			}
		})
	}
}
