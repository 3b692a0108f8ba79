package plan

import (
	"strings"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

func TestSplitKey(t *testing.T) {
	for _, c := range []struct{ in, name, expr string }{
		{"object.metadata.namespace", "namespace", "object.metadata.namespace"},
		{`object.spec.?nodeName.orValue("")`, "nodeName", `object.spec.?nodeName.orValue("")`},
		{"cluster", "cluster", "cluster"},
		{"node=object.spec.nodeName", "node", "object.spec.nodeName"},
		{`object.status.phase == "Running"`, "key2", `object.status.phase == "Running"`},
		{`cluster + "/" + object.status.phase`, "key2", `cluster + "/" + object.status.phase`},
	} {
		if name, expr := splitKey(c.in, 2); name != c.name || expr != c.expr {
			t.Errorf("splitKey(%q) = %q, %q; want %q, %q", c.in, name, expr, c.name, c.expr)
		}
	}
}

func TestParseAggregate(t *testing.T) {
	for _, c := range []struct {
		in   string
		fn   query.Func
		q    float64
		expr string
		err  string
	}{
		{in: "count()", fn: query.FuncCount},
		{in: "sum(object.spec.containers.map(c, c.name).size())", fn: query.FuncSum, expr: "object.spec.containers.map(c, c.name).size()"},
		{in: `quantile(0.9, object.spec.containers.map(c, quantity(c.resources.requests["cpu"])))`, fn: query.FuncQuantile, q: 0.9,
			expr: `object.spec.containers.map(c, quantity(c.resources.requests["cpu"]))`},
		{in: `distinct(",".join(["a", "b"]))`, fn: query.FuncDistinct, expr: `",".join(["a", "b"])`},
		{in: "count(object)", err: "count() takes no argument"},
		{in: "quantile(object.spec.priority)", err: "quantile takes two arguments"},
		{in: "quantile(1.5, object.spec.priority)", err: "Q must be a number between 0 and 1"},
		{in: "quantile(NaN, object.spec.priority)", err: "Q must be a number between 0 and 1"},
		{in: "quantile(nan, object.spec.priority)", err: "Q must be a number between 0 and 1"},
		{in: "avg()", err: "avg(EXPR) has no EXPR"},
		{in: "median(object.spec.priority)", err: `unknown function "median"`},
		{in: "object.spec.priority", err: "is not FUNC(EXPR)"},
	} {
		fn, q, expr, err := parseAggregate(c.in)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseAggregate(%q): error %v, want one saying %q", c.in, err, c.err)
			}
		case err != nil || fn != c.fn || q != c.q || expr != c.expr:
			t.Errorf("parseAggregate(%q) = %v, %v, %q, %v; want %v, %v, %q", c.in, fn, q, expr, err, c.fn, c.q, c.expr)
		}
	}
}
