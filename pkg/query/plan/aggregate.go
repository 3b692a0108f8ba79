package plan

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/query"
)

// aggregate is a compiled --aggregate.
type aggregate struct {
	name string
	fn   query.Func
	q    float64
	prog *indexers.Program // nil for count()
}

// key is a compiled --group-by key of aggregates.
type key struct {
	name string
	prog *indexers.Program
}

var (
	// namedKey is NAME=CEL (a single = : CEL has no assignment).
	namedKey = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*=([^=].*)$`)
	// keyPath is a path, possibly ending in .orValue(...), whose last
	// field names the key.
	keyPath = regexp.MustCompile(`^\s*[A-Za-z_]\w*(?:\.\??[A-Za-z_]\w*)*?(?:\.\??([A-Za-z_]\w*))?(?:\.orValue\(.*\))?\s*$`)
	// aggregateCall is FUNC(ARGS).
	aggregateCall = regexp.MustCompile(`(?s)^\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$`)
)

// splitKey returns the name and expression of a key written [NAME=]CEL:
// without NAME, the last field of a path (object.metadata.namespace:
// namespace, object.spec.?nodeName.orValue(""): nodeName), else keyN,
// N its position from 1.
func splitKey(s string, n int) (string, string) {
	if m := namedKey.FindStringSubmatch(s); m != nil {
		return m[1], m[2]
	}
	if m := keyPath.FindStringSubmatch(s); m != nil {
		if m[1] != "" {
			return m[1], s
		}
		return strings.TrimSpace(s), s
	}
	return fmt.Sprintf("key%d", n), s
}

// parseAggregate returns the function, quantile and expression of
// FUNC(ARGS).
func parseAggregate(text string) (query.Func, float64, string, error) {
	m := aggregateCall.FindStringSubmatch(text)
	if m == nil {
		return 0, 0, "", fmt.Errorf("%q is not FUNC(EXPR): use one of %s", text, strings.Join(query.FuncNames(), ", "))
	}
	fn, ok := query.ParseFunc(m[1])
	if !ok {
		return 0, 0, "", fmt.Errorf("unknown function %q: use one of %s", m[1], strings.Join(query.FuncNames(), ", "))
	}
	args := m[2]
	switch fn {
	case query.FuncCount:
		if strings.TrimSpace(args) != "" {
			return 0, 0, "", fmt.Errorf("count() takes no argument: it counts the objects of each group (use sum or distinct for values)")
		}
		return fn, 0, "", nil
	case query.FuncQuantile:
		comma := -1
		depth := 0
		indexers.OutsideStrings(args, func(i int) bool {
			switch args[i] {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth--
			case ',':
				if depth == 0 {
					comma = i
					return false
				}
			}
			return true
		})
		if comma < 0 {
			return 0, 0, "", fmt.Errorf("quantile takes two arguments: quantile(Q, EXPR), Q between 0 and 1")
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(args[:comma]), 64)
		if err != nil || !(q >= 0 && q <= 1) { // NaN is neither
			return 0, 0, "", fmt.Errorf("quantile(Q, EXPR): Q must be a number between 0 and 1, got %q", strings.TrimSpace(args[:comma]))
		}
		args = args[comma+1:]
		if strings.TrimSpace(args) == "" {
			return 0, 0, "", fmt.Errorf("quantile(Q, EXPR) has no EXPR")
		}
		return fn, q, strings.TrimSpace(args), nil
	}
	if strings.TrimSpace(args) == "" {
		return 0, 0, "", fmt.Errorf("%s(EXPR) has no EXPR", m[1])
	}
	return fn, 0, strings.TrimSpace(args), nil
}

// compileAggregates compiles the keys and aggregates of req into p,
// returning what is wrong.
func (p *Plan) compileAggregates(req Request, compile func(expr string, kind indexers.Kind, context string) *indexers.Program) []error {
	var errs []error
	name := req.Names.Of
	var keys []string
	if req.GroupBy != "" {
		keys = append(keys, req.GroupBy)
	}
	keys = append(keys, req.GroupByKeys...)
	aggs := req.Aggregates
	if len(aggs) == 0 {
		// Several keys without aggregates: the number per combination.
		aggs = []NamedExpr{{Name: "count", Expr: "count()"}}
	}
	seen := map[string]string{}
	for i, k := range keys {
		n, expr := splitKey(k, i+1)
		if prev, dup := seen[n]; dup {
			errs = append(errs, fmt.Errorf("%s %q and %q are both named %q: name them, %s NAME=CEL", name(query.PartGroupBy), prev, k, n, name(query.PartGroupBy)))
			continue
		}
		seen[n] = k
		ctx := name(query.PartGroupBy)
		if len(keys) > 1 {
			ctx += " " + n
		}
		p.keys = append(p.keys, key{name: n, prog: compile(expr, indexers.KindValue, ctx)})
	}
	for _, a := range aggs {
		if a.Name == "" || strings.ContainsAny(a.Name, " =,") {
			errs = append(errs, fmt.Errorf("invalid aggregate name %q in %s NAME=FUNC(EXPR): use a name of letters, digits, '-' or '_'", a.Name, name(query.PartAggregate)))
			continue
		}
		if prev, dup := seen[a.Name]; dup {
			errs = append(errs, fmt.Errorf("%s %s: the name %q is already that of %q", name(query.PartAggregate), a.Name, a.Name, prev))
			continue
		}
		seen[a.Name] = a.Name
		fn, q, expr, err := parseAggregate(a.Expr)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", name(query.PartAggregate), a.Name, err))
			continue
		}
		agg := aggregate{name: a.Name, fn: fn, q: q}
		if expr != "" {
			agg.prog = compile(expr, indexers.KindValue, name(query.PartAggregate)+" "+a.Name)
		}
		p.aggregates = append(p.aggregates, agg)
	}
	if req.SortBy != "" {
		sortName := strings.TrimPrefix(strings.TrimSpace(req.SortBy), "-")
		if _, ok := seen[sortName]; !ok {
			names := make([]string, 0, len(p.keys)+len(p.aggregates))
			for _, k := range p.keys {
				names = append(names, k.name)
			}
			for _, a := range p.aggregates {
				names = append(names, a.name)
			}
			errs = append(errs, fmt.Errorf("%s %q: with aggregates, sort by the name of a key or an aggregate (-NAME: descending): %s", name(query.PartSortBy), req.SortBy, strings.Join(names, ", ")))
		}
		p.orderBy = sortName
		p.descending = strings.HasPrefix(strings.TrimSpace(req.SortBy), "-") != req.Reverse
	} else {
		p.descending = req.Reverse
	}
	if len(req.Columns) > 0 {
		errs = append(errs, fmt.Errorf("%s cannot be combined with %s", name(query.PartColumns), name(query.PartAggregate)))
	}
	switch req.Output {
	case "", "wide", "json", "yaml":
	default:
		errs = append(errs, fmt.Errorf("%s prints a table, or -o json or yaml: %s %s cannot print it", name(query.PartAggregate), name(query.PartOutput), req.Output))
	}
	return errs
}

// aggregated reports whether the plan answers with aggregates.
func (p *Plan) aggregated() bool { return len(p.aggregates) > 0 }

// aggregateSpec sets the keys and aggregates of s.
func (p *Plan) aggregateSpec(s *query.Spec) {
	s.Count, s.GroupBy, s.SortBy = false, nil, nil
	s.OrderBy = p.orderBy
	for _, k := range p.keys {
		s.Keys = append(s.Keys, query.Key{Name: k.name, Value: p.valueFunc(k.prog)})
	}
	for _, a := range p.aggregates {
		agg := query.Aggregate{Name: a.name, Func: a.fn, Q: a.q}
		if a.prog != nil {
			agg.Value = p.quantityFunc(a.prog)
		}
		s.Aggregates = append(s.Aggregates, agg)
	}
}

// quantityFunc is prog's ValueKeepingQuantities, stopped as valueFunc
// stops.
func (p *Plan) quantityFunc(prog *indexers.Program) query.ValueFunc {
	if !p.stopAtCostLimit {
		return prog.ValueKeepingQuantities
	}
	return func(obj any) (any, error) {
		v, err := prog.ValueKeepingQuantities(obj)
		return v, costLimitStop(prog, obj, err)
	}
}
