package exporter

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// converter returns a program of cr whose Prepare converts an object once
// for all the programs of cr (they share an Env), or nil when cr has none.
func converter(cr *CompiledResource) *indexers.Program {
	for _, f := range cr.Families {
		for _, p := range append([]*indexers.Program{f.Each, f.Value}, f.Labels...) {
			if p != nil {
				return p
			}
		}
	}
	return nil
}

// sharedLabels are the values of the label expressions that do not read
// each, computed once per object for all its families (by slot, see
// Family.LabelSlots).
type sharedLabels struct {
	values []string
	done   []bool
}

// evaluate computes the samples of one family for obj. Failed evaluations
// are counted and skip the series they concern. Label values found in
// shared are reused; those computed are added to it.
func evaluate(f *Family, obj any, lookup indexers.Lookup, shared *sharedLabels) (samples []sample, errs int, lastErr string) {
	fail := func(err error) {
		errs++
		lastErr = err.Error()
	}
	bind := func(p *indexers.Program) *indexers.Program {
		if p != nil && lookup != nil && p.ReadsOthers() {
			return p.WithLookup(lookup)
		}
		return p
	}
	if f.NoLabelsSeries {
		return nil, 0, ""
	}
	// mapExtra evaluates the labelsFrom map into labels.
	mapExtra := func(each any, withEach bool) ([]extraLabel, error) {
		v, err := eval(bind(f.LabelsFrom), obj, each, withEach)
		if err == nil {
			return mapLabels(v, f.LabelsPrefix, f.LabelsVerbatim, f.LabelKeys)
		}
		return nil, err
	}
	// Labels from a map that does not read each: once per object.
	var extra []extraLabel
	extraPerElement := f.LabelsFrom != nil && f.Each != nil && f.LabelsFrom.UsesEach()
	if f.LabelsFrom != nil && !extraPerElement {
		var err error
		if extra, err = mapExtra(nil, f.Each != nil); err != nil {
			fail(fmt.Errorf("metric %q: %w", f.Name, err))
			return nil, errs, lastErr
		}
	}
	// Labels that do not read each have one value per object: computed
	// once, not once per element.
	labels := make([]string, len(f.Labels))
	perElement := make([]bool, len(f.Labels))
	for i, p := range f.Labels {
		if f.Each != nil && p.UsesEach() {
			perElement[i] = true
			continue
		}
		slot := -1
		if shared != nil && i < len(f.LabelSlots) {
			slot = f.LabelSlots[i]
		}
		if slot >= 0 && shared.done[slot] {
			labels[i] = shared.values[slot]
			continue
		}
		v, err := eval(bind(p), obj, nil, f.Each != nil)
		if err != nil {
			fail(err)
			return nil, errs, lastErr
		}
		labels[i] = labelValue(v)
		if slot >= 0 {
			shared.values[slot], shared.done[slot] = labels[i], true
		}
	}
	one := func(each any, withEach bool) {
		values := labels
		if withEach {
			values = slices.Clone(labels)
			for i, p := range f.Labels {
				if !perElement[i] {
					continue
				}
				v, err := eval(bind(p), obj, each, true)
				if err != nil {
					fail(err)
					return
				}
				values[i] = labelValue(v)
			}
		}
		extra := extra
		if extraPerElement {
			var err error
			if extra, err = mapExtra(each, true); err != nil {
				fail(fmt.Errorf("metric %q: %w", f.Name, err))
				return
			}
		}
		value := 1.0
		if f.Value != nil {
			v, err := eval(bind(f.Value), obj, each, withEach)
			if err != nil {
				fail(err)
				return
			}
			v, present := presentValue(v)
			if !present {
				return // null or an empty optional: no sample
			}
			n, ok := numberValue(v)
			if !ok {
				fail(fmt.Errorf("metric %q: value must be a number or a bool, got %s", f.Name, v.Type().TypeName()))
				return
			}
			if math.IsNaN(n) || math.IsInf(n, 0) {
				fail(fmt.Errorf("metric %q: value is %s; it must be a finite number (check for a division by zero)", f.Name, formatValue(n)))
				return
			}
			if f.Aggregate == AggregateSum && math.Abs(n) > maxSummand {
				fail(fmt.Errorf("metric %q: value %s is too large to add up; the values of aggregate: sum must be within ±1e300", f.Name, formatValue(n)))
				return
			}
			value = n
		}
		samples = append(samples, sample{labels: values, extra: extra, value: value})
	}
	if f.Each == nil {
		one(nil, false)
		return samples, errs, lastErr
	}
	list, err := eval(bind(f.Each), obj, nil, false)
	if err != nil {
		fail(err)
		return nil, errs, lastErr
	}
	lister, ok := list.(traits.Lister)
	if !ok {
		fail(fmt.Errorf("metric %q: each must be a list, got %s", f.Name, list.Type().TypeName()))
		return nil, errs, lastErr
	}
	for it := lister.Iterator(); it.HasNext() == types.True; {
		one(it.Next(), true)
	}
	return samples, errs, lastErr
}

func eval(p *indexers.Program, obj, each any, withEach bool) (ref.Val, error) {
	if withEach {
		return p.EvalEach(context.Background(), obj, each)
	}
	return p.Eval(context.Background(), obj)
}

// labelValue formats a CEL value as a label value: strings as they are,
// null as "", numbers and bools as in JSON, lists and maps as compact JSON.
func labelValue(v ref.Val) string {
	switch v := v.(type) {
	case types.String:
		return string(v)
	case types.Null:
		return ""
	case types.Bool:
		return strconv.FormatBool(bool(v))
	case types.Int:
		return strconv.FormatInt(int64(v), 10)
	case types.Uint:
		return strconv.FormatUint(uint64(v), 10)
	case types.Double:
		return strconv.FormatFloat(float64(v), 'g', -1, 64)
	}
	native, err := jsonval.ToNative(v)
	if err != nil {
		return ""
	}
	if s, ok := native.(string); ok {
		return s
	}
	b, err := json.Marshal(native)
	if err != nil {
		return ""
	}
	return string(b)
}

// presentValue unwraps an optional value. It reports false for null and
// for an empty optional, which leave a series out.
func presentValue(v ref.Val) (ref.Val, bool) {
	switch o := v.(type) {
	case types.Null:
		return v, false
	case *types.Optional:
		if !o.HasValue() {
			return v, false
		}
		return presentValue(o.GetValue())
	}
	return v, true
}

// numberValue converts a CEL number or bool to a sample value.
func numberValue(v ref.Val) (float64, bool) {
	switch v := v.(type) {
	case types.Int:
		return float64(v), true
	case types.Uint:
		return float64(v), true
	case types.Double:
		return float64(v), true
	case types.Bool:
		if v {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}
