package indexers

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// Functions with the semantics of kube-state-metrics' custom resource state
// metrics (its CustomResourceStateMetrics config: path, labelsFromPath,
// valueFrom, labelFromKey, nilIsZero, and the gauge, info and stateSet
// metric types), in which configs in that format are translated:
//
//	crs.path(object, ["status", "conditions", "[type=Ready]", "status"])
//	crs.labels(object, {"name": ["metadata", "name"], "*": ["metadata", "labels"]})
//	crs.gauge(v, {"valueFrom": ["replicas"], "nilIsZero": false, "labelFromKey": "", "labelsFromPath": {}})
//	crs.info(v, {"labelFromKey": "", "labelsFromPath": {...}})
//	crs.stateSet(v, {"list": ["Ready", "Failed"], "labelName": "phase", "valueFrom": [], "labelsFromPath": {}})
//	crs.merge(common, crs.labels(object, {...}))   // the second map's entries win
//	crs.withBase(crs.gauge(...), base)   // base labels added where an element has none of the name
//	crs.value(each)                      // the series' value, or the element's error
//
// crs.path resolves a path as kube-state-metrics does: a map's key; a
// list's index (negative from the end); "[key=value]", the first map of a
// list whose key equals value (as a string, a number or a bool); "key=value"
// on a map, value when the map's key equals it. It is null where the path
// does not resolve.
//
// crs.gauge, crs.info and crs.stateSet return the series of a metric of
// that type for v, the value its path resolves to: a list of maps with
// "labels" (a map of label names, sanitized, to values) and "value" (a
// double). An element kube-state-metrics would log and skip (a value that is
// not a number, a state that is not a string) is a map with "labels" and
// "error" instead, so that crs.value fails on it and the exporter counts
// the failure.
const (
	crsPathOverload     = "crs_path_dyn_list"
	crsLabelsOverload   = "crs_labels_dyn_map"
	crsGaugeOverload    = "crs_gauge_dyn_map"
	crsInfoOverload     = "crs_info_dyn_map"
	crsStateSetOverload = "crs_state_set_dyn_map"
	crsMergeOverload    = "crs_merge_map_map"
	crsValueOverload    = "crs_value_dyn"
	crsWithBaseOverload = "crs_with_base_list_map"
)

// crsBinders bind the specification of a crs.* call, its second
// argument, to the function of its first: the paths are compiled once per
// specification. The functions' bindings bind at each call; crsDecorator
// binds a constant specification once, when a program is planned.
var crsBinders = map[string]func(spec ref.Val) func(ref.Val) ref.Val{
	crsPathOverload: func(spec ref.Val) func(ref.Val) ref.Val {
		p, err := jsonval.ToNative(spec)
		if err != nil {
			return crsFailure(err)
		}
		path, err := crsCompilePath(stringsOf(p))
		if err != nil {
			return crsFailure(fmt.Errorf("crs.path: %w", err))
		}
		return func(a ref.Val) ref.Val {
			got, err := path.resolve(a)
			if err != nil {
				return types.NewErr("crs.path: %v", err)
			}
			return types.DefaultTypeAdapter.NativeToValue(got)
		}
	},
	crsLabelsOverload: func(spec ref.Val) func(ref.Val) ref.Val {
		s, err := jsonval.ToNative(spec)
		if err != nil {
			return crsFailure(err)
		}
		paths, err := crsCompilePaths(mapOf(s))
		if err != nil {
			return crsFailure(fmt.Errorf("crs.labels: %w", err))
		}
		return func(a ref.Val) ref.Val {
			out := map[string]string{}
			var resolveErr error
			crsAddLabels(func(p crsPath) any {
				got, err := p.resolve(a)
				resolveErr = cmp.Or(resolveErr, err)
				return got
			}, paths, out)
			if resolveErr != nil {
				return types.NewErr("crs.labels: %v", resolveErr)
			}
			return types.DefaultTypeAdapter.NativeToValue(out)
		}
	},
	crsGaugeOverload: crsNative(func(spec map[string]any) (func(v any) ref.Val, error) {
		g, err := crsGaugeOf(spec)
		if err != nil {
			return nil, fmt.Errorf("crs.gauge: %w", err)
		}
		return func(v any) ref.Val { return crsSeriesValue(g.values(v)) }, nil
	}),
	crsInfoOverload: crsNative(func(spec map[string]any) (func(v any) ref.Val, error) {
		paths, err := crsCompilePaths(mapOf(spec["labelsFromPath"]))
		if err != nil {
			return nil, fmt.Errorf("crs.info: labelsFromPath: %w", err)
		}
		key, _ := spec["labelFromKey"].(string)
		return func(v any) ref.Val { return crsSeriesValue(crsInfoValues(v, key, paths)) }, nil
	}),
	crsStateSetOverload: crsNative(func(spec map[string]any) (func(v any) ref.Val, error) {
		st, err := crsStateSetOf(spec)
		if err != nil {
			return nil, fmt.Errorf("crs.stateSet: %w", err)
		}
		return func(v any) ref.Val { return crsSeriesValue(st.values(v)) }, nil
	}),
}

// crsFailure is the function of a specification that does not compile:
// every call fails with err.
func crsFailure(err error) func(ref.Val) ref.Val {
	return func(ref.Val) ref.Val { return types.NewErr("%v", err) }
}

// crsNative binds a specification given as a native map to a function of
// a native value: the metric functions' form.
func crsNative(bind func(spec map[string]any) (func(v any) ref.Val, error)) func(ref.Val) func(ref.Val) ref.Val {
	return func(spec ref.Val) func(ref.Val) ref.Val {
		s, err := jsonval.ToNative(spec)
		if err != nil {
			return crsFailure(err)
		}
		m, _ := s.(map[string]any)
		fn, err := bind(m)
		if err != nil {
			return crsFailure(err)
		}
		return func(a ref.Val) ref.Val {
			v, err := jsonval.ToNative(a)
			if err != nil {
				return types.NewErr("%v", err)
			}
			return fn(v)
		}
	}
}

// crsBinding is the binding of a crs.* function with a specification:
// bound anew at each call.
func crsBinding(overload string) cel.OverloadOpt {
	bind := crsBinders[overload]
	return cel.BinaryBinding(func(a, spec ref.Val) ref.Val { return bind(spec)(a) })
}

// crsDecorator binds the specification of a crs.* call once, when the
// program is planned, when it is a constant, as the configs translated from
// kube-state-metrics' have it: evaluations then reuse its compiled paths.
// A specification that is not constant is bound at each call.
func crsDecorator(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	call, ok := i.(interpreter.InterpretableCall)
	if !ok {
		return i, nil
	}
	bind, ok := crsBinders[call.OverloadID()]
	args := call.Args()
	if !ok || len(args) != 2 {
		return i, nil
	}
	spec, ok := constantValue(args[1])
	if !ok {
		return i, nil
	}
	fn := bind(spec)
	return interpreter.NewCall(call.ID(), call.Function(), call.OverloadID(), args, func(vals ...ref.Val) ref.Val {
		return fn(vals[0])
	}), nil
}

// constantValue returns the value of i when it is a constant: a literal, or
// a list or map built of literals, conversions (dyn(), as the translated
// configs wrap a specification's values) and other constants, which an
// evaluation without variables answers. An expression that reads a
// variable is not one: without variables it fails.
func constantValue(i interpreter.InterpretableV2) (ref.Val, bool) {
	switch c := i.(type) {
	case interpreter.InterpretableConst:
		return c.Value(), true
	case interpreter.InterpretableConstructor:
		v := i.Eval(interpreter.EmptyActivation())
		if types.IsUnknownOrError(v) {
			return nil, false
		}
		return v, true
	}
	return nil, false
}

// crsFunctions declares the crs.* functions.
func crsFunctions() []cel.EnvOption {
	strList := cel.ListType(cel.StringType)
	spec := cel.MapType(cel.StringType, cel.DynType)
	labels := cel.MapType(cel.StringType, cel.StringType)
	series := cel.ListType(cel.MapType(cel.StringType, cel.DynType))
	return []cel.EnvOption{
		cel.Function("crs.path",
			cel.Overload(crsPathOverload, []*cel.Type{cel.DynType, strList}, cel.DynType, crsBinding(crsPathOverload))),
		cel.Function("crs.labels",
			cel.Overload(crsLabelsOverload, []*cel.Type{cel.DynType, cel.MapType(cel.StringType, strList)}, labels, crsBinding(crsLabelsOverload))),
		cel.Function("crs.gauge",
			cel.Overload(crsGaugeOverload, []*cel.Type{cel.DynType, spec}, series, crsBinding(crsGaugeOverload))),
		cel.Function("crs.info",
			cel.Overload(crsInfoOverload, []*cel.Type{cel.DynType, spec}, series, crsBinding(crsInfoOverload))),
		cel.Function("crs.stateSet",
			cel.Overload(crsStateSetOverload, []*cel.Type{cel.DynType, spec}, series, crsBinding(crsStateSetOverload))),
		cel.Function("crs.merge",
			cel.Overload(crsMergeOverload, []*cel.Type{labels, labels}, labels,
				cel.BinaryBinding(func(a, b ref.Val) ref.Val {
					out := map[string]string{}
					for _, m := range []ref.Val{a, b} {
						mapper, ok := m.(traits.Mapper)
						if !ok {
							return types.MaybeNoSuchOverloadErr(m)
						}
						for it := mapper.Iterator(); it.HasNext() == types.True; {
							k := it.Next()
							out[fmt.Sprint(k.Value())] = fmt.Sprint(mapper.Get(k).Value())
						}
					}
					return types.DefaultTypeAdapter.NativeToValue(out)
				}))),
		cel.Function("crs.withBase",
			cel.Overload(crsWithBaseOverload, []*cel.Type{series, labels}, series,
				cel.BinaryBinding(func(l, base ref.Val) ref.Val {
					list, err := jsonval.ToNative(l)
					if err != nil {
						return types.NewErr("%v", err)
					}
					b, err := jsonval.ToNative(base)
					if err != nil {
						return types.NewErr("%v", err)
					}
					elems, _ := list.([]any)
					for _, e := range elems {
						m := mapOf(e)
						labels := mapOf(m["labels"])
						if labels == nil {
							labels = map[string]any{}
							m["labels"] = labels
						}
						for k, v := range mapOf(b) {
							if _, ok := labels[k]; !ok {
								labels[k] = v
							}
						}
					}
					return types.DefaultTypeAdapter.NativeToValue(elems)
				}))),
		cel.Function("crs.value",
			cel.Overload(crsValueOverload, []*cel.Type{cel.DynType}, cel.DoubleType,
				cel.UnaryBinding(func(e ref.Val) ref.Val {
					m, ok := e.(traits.Mapper)
					if !ok {
						return types.MaybeNoSuchOverloadErr(e)
					}
					if msg, found := m.Find(types.String("error")); found {
						return types.NewErr("%v", msg.Value())
					}
					v, found := m.Find(types.String("value"))
					if !found {
						return types.NewErr("crs.value: the element has no value")
					}
					return v
				}))),
	}
}

// crsSeries is one series of a custom resource state metric, or the
// reason an element has none (err).
type crsSeries struct {
	labels map[string]string
	value  float64
	err    error
}

// crsSeriesValue is series as the CEL list the crs.* metric functions
// return.
func crsSeriesValue(series []crsSeries) ref.Val {
	out := make([]any, 0, len(series))
	for _, s := range series {
		if s.err != nil {
			out = append(out, map[string]any{"labels": map[string]string{}, "error": s.err.Error()})
			continue
		}
		out = append(out, map[string]any{"labels": s.labels, "value": s.value})
	}
	return types.DefaultTypeAdapter.NativeToValue(out)
}

func stringsOf(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// crsPath is a compiled path.
type crsPath []crsStep

type crsStep struct {
	part string
	get  func(any) any
	// plain: the step is a key of a map or an index of a list, nothing
	// else (see resolve).
	plain bool
}

func (p crsPath) get(v any) any {
	for _, s := range p {
		if v == nil {
			return nil
		}
		v = s.get(v)
	}
	return v
}

// resolve is get of a CEL value: it walks the plain steps on the value as
// CEL sees it, and converts to Go only what they lead to, so that a path
// into an object converts none of the rest of it.
func (p crsPath) resolve(v ref.Val) (any, error) {
	for i, s := range p {
		if _, null := v.(types.Null); null || v == nil {
			return nil, nil
		}
		if !s.plain {
			n, err := jsonval.ToNative(v)
			if err != nil {
				return nil, err
			}
			return p[i:].get(n), nil
		}
		switch c := v.(type) {
		case traits.Mapper:
			got, found := c.Find(types.String(s.part))
			if !found {
				return nil, nil
			}
			v = got
		case traits.Lister:
			n, err := strconv.Atoi(s.part)
			size, _ := c.Size().(types.Int)
			if n < 0 {
				n += int(size)
			}
			if err != nil || n < 0 || n >= int(size) {
				return nil, nil
			}
			v = c.Get(types.Int(n))
		default:
			return nil, nil
		}
	}
	if _, null := v.(types.Null); null || v == nil {
		return nil, nil
	}
	return jsonval.ToNative(v)
}

func (p crsPath) String() string {
	parts := make([]string, len(p))
	for i, s := range p {
		parts[i] = s.part
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func crsCompilePaths(spec map[string]any) (map[string]crsPath, error) {
	out := make(map[string]crsPath, len(spec))
	for k, v := range spec {
		p, err := crsCompilePath(stringsOf(v))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = p
	}
	return out, nil
}

func crsCompilePath(parts []string) (crsPath, error) {
	var out crsPath
	for _, part := range parts {
		if strings.HasPrefix(part, "[") && strings.HasSuffix(part, "]") {
			key, val, ok := strings.Cut(part[1:len(part)-1], "=")
			if !ok {
				return nil, fmt.Errorf("invalid list lookup: %s", part)
			}
			num, numErr := crsFloat(val, false)
			b, boolErr := strconv.ParseBool(val)
			out = append(out, crsStep{part: part, get: func(v any) any {
				l, ok := v.([]any)
				if !ok {
					return nil
				}
				for _, e := range l {
					m, ok := e.(map[string]any)
					if !ok {
						continue
					}
					c, set := m[key]
					if !set {
						continue
					}
					if s, ok := c.(string); ok && s == val {
						return m
					}
					if numErr == nil {
						if f, err := crsFloat(c, false); err == nil && f == num {
							return m
						}
					}
					if boolErr == nil {
						if cb, ok := c.(bool); ok && cb == b {
							return m
						}
					}
				}
				return nil
			}})
			continue
		}
		out = append(out, crsStep{part: part, plain: strings.Count(part, "=") != 1, get: func(v any) any {
			switch c := v.(type) {
			case map[string]any:
				if kv := strings.Split(part, "="); len(kv) == 2 {
					if got, ok := c[kv[0]]; ok {
						if s, ok := got.(string); ok && s == kv[1] {
							return got
						}
					}
				}
				return c[part]
			case []any:
				i, err := strconv.Atoi(part)
				if err != nil {
					return nil
				}
				if i < 0 {
					i += len(c)
				}
				if i < 0 || i >= len(c) {
					return nil
				}
				return c[i]
			}
			return nil
		}})
	}
	return out, nil
}

// invalidLabelChar is what kube-state-metrics replaces by '_' in the label
// names of custom resource state metrics.
var invalidLabelChar = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// crsAddPathLabels adds to out the labels of paths read from v: first
// those named with a leading or trailing '*', which copy a map (a
// trailing one prefixing its keys with the name before it), then the
// others, whose value is skipped when the path does not resolve.
func crsAddPathLabels(v any, paths map[string]crsPath, out map[string]string) {
	crsAddLabels(func(p crsPath) any { return p.get(v) }, paths, out)
}

// crsAddLabels is crsAddPathLabels with get resolving a path from the
// value.
func crsAddLabels(get func(crsPath) any, paths map[string]crsPath, out map[string]string) {
	stars := slices.Sorted(func(yield func(string) bool) {
		for k := range paths {
			if strings.HasPrefix(k, "*") || strings.HasSuffix(k, "*") {
				if !yield(k) {
					return
				}
			}
		}
	})
	for _, star := range stars {
		m, ok := get(paths[star]).(map[string]any)
		if !ok {
			continue
		}
		for k, val := range m {
			if strings.HasSuffix(star, "*") {
				k = star[:len(star)-1] + k
			}
			out[invalidLabelChar.ReplaceAllString(k, "_")] = crsFormat(val)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(paths)) {
		if strings.HasPrefix(k, "*") || strings.HasSuffix(k, "*") {
			continue
		}
		val := get(paths[k])
		if val == nil {
			continue
		}
		out[invalidLabelChar.ReplaceAllString(k, "_")] = crsFormat(val)
	}
}

// crsFormat formats a label value as Go's %v formats decoded JSON.
func crsFormat(v any) string {
	return fmt.Sprintf("%v", v)
}

// crsFloat converts a value to a sample value as kube-state-metrics does:
// numbers; bools; "true", "yes", "false", "no" and "unknown" in any case;
// RFC 3339 times in Unix seconds; quantities; percentages as fractions;
// other numeric strings. nil is 0 with nilIsZero, and an error otherwise.
func crsFloat(v any, nilIsZero bool) (float64, error) {
	switch c := v.(type) {
	case nil:
		if nilIsZero {
			return 0, nil
		}
		return 0, fmt.Errorf("expected number but found nil value")
	case bool:
		if c {
			return 1, nil
		}
		return 0, nil
	case string:
		switch strings.ToLower(c) {
		case "true", "yes":
			return 1, nil
		case "false", "no", "unknown":
			return 0, nil
		}
		if t, err := time.Parse(time.RFC3339, c); err == nil {
			return float64(t.Unix()), nil
		}
		if q, err := resource.ParseQuantity(c); err == nil {
			return q.AsApproximateFloat64(), nil
		}
		if len(validation.IsValidPercent(c)) == 0 {
			f, err := strconv.ParseFloat(strings.TrimRight(c, "%"), 64)
			return f / 100, err
		}
		return strconv.ParseFloat(c, 64)
	case int64:
		return float64(c), nil
	case int:
		return float64(c), nil
	case uint64:
		return float64(c), nil
	case float64:
		return c, nil
	}
	return 0, fmt.Errorf("expected number but was %v", v)
}

// crsGauge is a gauge's settings.
type crsGauge struct {
	valueFrom      crsPath
	nilIsZero      bool
	labelFromKey   string
	labelsFromPath map[string]crsPath
}

// crsValuePaths compiles the valueFrom and labelsFromPath settings of a
// gauge or a state set.
func crsValuePaths(spec map[string]any) (crsPath, map[string]crsPath, error) {
	valueFrom, err := crsCompilePath(stringsOf(spec["valueFrom"]))
	if err != nil {
		return nil, nil, fmt.Errorf("valueFrom: %w", err)
	}
	paths, err := crsCompilePaths(mapOf(spec["labelsFromPath"]))
	if err != nil {
		return nil, nil, fmt.Errorf("labelsFromPath: %w", err)
	}
	return valueFrom, paths, nil
}

func crsGaugeOf(spec map[string]any) (*crsGauge, error) {
	valueFrom, paths, err := crsValuePaths(spec)
	if err != nil {
		return nil, err
	}
	g := &crsGauge{valueFrom: valueFrom, labelsFromPath: paths}
	g.nilIsZero, _ = spec["nilIsZero"].(bool)
	g.labelFromKey, _ = spec["labelFromKey"].(string)
	return g, nil
}

// value is the sample of one element: ok false when there is none.
func (g *crsGauge) value(it any) (s crsSeries, ok bool) {
	got := g.valueFrom.get(it)
	if got == nil {
		if g.nilIsZero {
			return crsSeries{labels: map[string]string{}}, true
		}
		if it == nil {
			return crsSeries{err: fmt.Errorf("got nil while resolving path")}, true
		}
		return crsSeries{}, false
	}
	f, err := crsFloat(got, g.nilIsZero)
	if err != nil {
		return crsSeries{err: fmt.Errorf("%s: %w", g.valueFrom, err)}, true
	}
	return crsSeries{labels: map[string]string{}, value: f}, true
}

func (g *crsGauge) values(v any) []crsSeries {
	var out []crsSeries
	switch c := v.(type) {
	case map[string]any:
		for _, key := range slices.Sorted(maps.Keys(c)) {
			it := c[key]
			var s crsSeries
			if len(g.valueFrom) == 1 && g.valueFrom[0].part == key {
				f, err := crsFloat(it, g.nilIsZero)
				if err != nil {
					out = append(out, crsSeries{err: fmt.Errorf("[%s]: %w", key, err)})
					continue
				}
				s = crsSeries{labels: map[string]string{}, value: f}
			} else {
				var ok bool
				if s, ok = g.value(it); !ok || s.err != nil {
					continue // as kube-state-metrics: an element without a value is skipped
				}
			}
			if key != "" && g.labelFromKey != "" {
				s.labels[g.labelFromKey] = key
			}
			crsAddPathLabels(it, g.labelsFromPath, s.labels)
			crsAddPathLabels(v, g.labelsFromPath, s.labels)
			out = append(out, s)
		}
	case []any:
		for i, it := range c {
			s, ok := g.value(it)
			if !ok {
				continue
			}
			if s.err != nil {
				out = append(out, crsSeries{err: fmt.Errorf("[%d]: %w", i, s.err)})
				continue
			}
			crsAddPathLabels(it, g.labelsFromPath, s.labels)
			out = append(out, s)
		}
	default:
		s, ok := g.value(v)
		if !ok {
			break
		}
		if s.err == nil {
			crsAddPathLabels(v, g.labelsFromPath, s.labels)
		}
		out = append(out, s)
	}
	return out
}

// crsInfoValues are the series of an info metric for v.
func crsInfoValues(v any, labelFromKey string, paths map[string]crsPath) []crsSeries {
	one := func(v any) []crsSeries {
		if v == nil {
			return nil
		}
		labels := map[string]string{}
		crsAddPathLabels(v, paths, labels)
		if len(labels) == 0 {
			return nil
		}
		return []crsSeries{{labels: labels, value: 1}}
	}
	switch c := v.(type) {
	case []any:
		var out []crsSeries
		for _, e := range c {
			out = append(out, one(e)...)
		}
		return out
	case map[string]any:
		var out []crsSeries
		for _, key := range slices.Sorted(maps.Keys(c)) {
			labels := map[string]string{}
			if key != "" && labelFromKey != "" {
				labels[labelFromKey] = key
			}
			crsAddPathLabels(c[key], paths, labels)
			if len(labels) > 0 {
				out = append(out, crsSeries{labels: labels, value: 1})
			}
		}
		return append(out, one(v)...)
	}
	return one(v)
}

// crsStateSet is a state set's settings.
type crsStateSet struct {
	list           []string
	labelName      string
	valueFrom      crsPath
	labelsFromPath map[string]crsPath
}

func crsStateSetOf(spec map[string]any) (*crsStateSet, error) {
	valueFrom, paths, err := crsValuePaths(spec)
	if err != nil {
		return nil, err
	}
	s := &crsStateSet{list: stringsOf(spec["list"]), valueFrom: valueFrom, labelsFromPath: paths}
	s.labelName, _ = spec["labelName"].(string)
	return s, nil
}

func (s *crsStateSet) values(v any) []crsSeries {
	if l, ok := v.([]any); ok {
		var out []crsSeries
		for _, e := range l {
			out = append(out, s.one(e)...)
		}
		return out
	}
	return s.one(v)
}

func (s *crsStateSet) one(v any) []crsSeries {
	got := s.valueFrom.get(v)
	if got == nil {
		return nil
	}
	state, ok := got.(string)
	if !ok {
		return []crsSeries{{err: fmt.Errorf("%s: expected value for path to be string, got %T", s.valueFrom, got)}}
	}
	out := make([]crsSeries, 0, len(s.list))
	for _, entry := range s.list {
		labels := map[string]string{s.labelName: entry}
		crsAddPathLabels(v, s.labelsFromPath, labels)
		value := 0.0
		if state == entry {
			value = 1
		}
		out = append(out, crsSeries{labels: labels, value: value})
	}
	return out
}
