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

// objectShared is what the families of an object share, computed once
// per object: the values of the label expressions that do not read each
// (by slot, see Family.LabelSlots) and the lists of the each expressions
// (by slot, see Family.EachSlot). absent[slot] is true for a label that
// the object's series leave out (see labelValue).
type objectShared struct {
	values []string
	absent []bool
	done   []bool
	each   []sharedEach
}

// sharedEach is the list of an each expression for an object, once
// evaluated.
type sharedEach struct {
	list ref.Val
	done bool
}

// reset empties s for an object of a resource with n label slots and
// eachs each slots.
func (s *objectShared) reset(n, eachs int) {
	s.values = slices.Grow(s.values[:0], n)[:n]
	s.absent = slices.Grow(s.absent[:0], n)[:n]
	s.done = slices.Grow(s.done[:0], n)[:n]
	s.each = slices.Grow(s.each[:0], eachs)[:eachs]
	clear(s.values)
	clear(s.absent)
	clear(s.done)
	clear(s.each)
}

// eachOf returns the value of f.Each for obj: evaluated once per object
// for the families that share its slot, when it evaluates. One that fails
// is evaluated by each family, whose error then names its own metric.
func (ev *evaluator) eachOf(f *Family, obj any, shared *objectShared) (ref.Val, error) {
	if shared == nil || f.EachSlot < 0 || f.EachSlot >= len(shared.each) {
		return eval(ev.bind(f.Each), obj, nil, false)
	}
	e := &shared.each[f.EachSlot]
	if e.done {
		return e.list, nil
	}
	list, err := eval(ev.bind(f.Each), obj, nil, false)
	if err == nil {
		e.list, e.done = list, true
	}
	return list, err
}

// evaluator computes the samples of families, one at a time, reusing its
// buffers: the samples evaluate returns, their labels included, are valid
// until its next call. One evaluator serves one goroutine.
type evaluator struct {
	// shared is what the families of the object being computed share.
	shared  objectShared
	samples []sample
	// values holds the label values of the samples, and absent whether
	// each is left out (see labelValue).
	values []string
	absent []bool
	// labels are the values of the labels that do not read each;
	// labelsAbsent says which of them are left out.
	labels       []string
	labelsAbsent []bool

	// sums and sumScratch are scratch space for inputs.changes.
	sums       []uint64
	sumScratch jsonval.SumScratch

	f       *Family
	obj     any
	lookup  indexers.Lookup
	errs    int
	lastErr string
}

// evaluate computes the samples of family f for obj. Failed evaluations
// are counted and skip the series they concern. Label values found in
// shared are reused; those computed are added to it.
func (ev *evaluator) evaluate(f *Family, obj any, lookup indexers.Lookup, shared *objectShared) (samples []sample, errs int, lastErr string) {
	clear(ev.samples)
	ev.samples, ev.values, ev.absent = ev.samples[:0], ev.values[:0], ev.absent[:0]
	ev.f, ev.obj, ev.lookup, ev.errs, ev.lastErr = f, obj, lookup, 0, ""
	defer func() { ev.f, ev.obj, ev.lookup = nil, nil, nil }()
	if f.NoLabelsSeries {
		return nil, 0, ""
	}
	// Labels from a map that does not read each: once per object.
	var extra []extraLabel
	if f.LabelsFrom != nil && !ev.extraPerElement() {
		var err error
		if extra, err = ev.mapExtra(nil, f.Each != nil); err != nil {
			ev.fail(fmt.Errorf("metric %q: %w", f.Name, err))
			return nil, ev.errs, ev.lastErr
		}
	}
	// Labels that do not read each have one value per object: computed
	// once, not once per element.
	ev.labels = slices.Grow(ev.labels[:0], len(f.Labels))[:len(f.Labels)]
	ev.labelsAbsent = slices.Grow(ev.labelsAbsent[:0], len(f.Labels))[:len(f.Labels)]
	clear(ev.labelsAbsent)
	for i, p := range f.Labels {
		if f.Each != nil && p.UsesEach() {
			continue
		}
		slot := -1
		if shared != nil && i < len(f.LabelSlots) {
			slot = f.LabelSlots[i]
		}
		if slot >= 0 && shared.done[slot] {
			ev.labels[i], ev.labelsAbsent[i] = shared.values[slot], shared.absent[slot]
			continue
		}
		v, err := eval(ev.bind(p), obj, nil, f.Each != nil)
		if err != nil {
			ev.fail(err)
			return nil, ev.errs, ev.lastErr
		}
		ev.labels[i], ev.labelsAbsent[i] = labelValue(v)
		if slot >= 0 {
			shared.values[slot], shared.absent[slot], shared.done[slot] = ev.labels[i], ev.labelsAbsent[i], true
		}
	}
	if f.Each == nil {
		ev.one(nil, false, extra)
		return ev.samples, ev.errs, ev.lastErr
	}
	list, err := ev.eachOf(f, obj, shared)
	if err != nil {
		ev.fail(err)
		return nil, ev.errs, ev.lastErr
	}
	lister, ok := list.(traits.Lister)
	if !ok {
		ev.fail(fmt.Errorf("metric %q: each must be a list, got %s", f.Name, list.Type().TypeName()))
		return nil, ev.errs, ev.lastErr
	}
	if n, isInt := lister.Size().(types.Int); isInt && list.Type() == types.ListType {
		// A list's elements in order, as its iterator gives them, without
		// allocating one.
		for i := types.Int(0); i < n; i++ {
			ev.one(lister.Get(i), true, extra)
		}
		return ev.samples, ev.errs, ev.lastErr
	}
	for it := lister.Iterator(); it.HasNext() == types.True; {
		ev.one(it.Next(), true, extra)
	}
	return ev.samples, ev.errs, ev.lastErr
}

func (ev *evaluator) fail(err error) {
	ev.errs++
	ev.lastErr = err.Error()
}

// bind gives p the lookup when it reads other objects.
func (ev *evaluator) bind(p *indexers.Program) *indexers.Program {
	if p != nil && ev.lookup != nil && p.ReadsOthers() {
		return p.WithLookup(ev.lookup)
	}
	return p
}

// extraPerElement reports whether the labelsFrom map reads each.
func (ev *evaluator) extraPerElement() bool {
	f := ev.f
	return f.LabelsFrom != nil && f.Each != nil && f.LabelsFrom.UsesEach()
}

// mapExtra evaluates the labelsFrom map into labels.
func (ev *evaluator) mapExtra(each any, withEach bool) ([]extraLabel, error) {
	f := ev.f
	v, err := eval(ev.bind(f.LabelsFrom), ev.obj, each, withEach)
	if err != nil {
		return nil, err
	}
	return mapLabels(v, f.LabelsPrefix, f.LabelsVerbatim, f.LabelKeys)
}

// one adds the sample of an element of each (withEach), or of the object.
func (ev *evaluator) one(each any, withEach bool, extra []extraLabel) {
	f := ev.f
	values, absent := ev.labels, ev.labelsAbsent
	if withEach {
		start := len(ev.values)
		ev.values = append(ev.values, ev.labels...)
		ev.absent = append(ev.absent, ev.labelsAbsent...)
		values = ev.values[start:len(ev.values):len(ev.values)]
		absent = ev.absent[start:len(ev.absent):len(ev.absent)]
		for i, p := range f.Labels {
			if !p.UsesEach() {
				continue
			}
			v, err := eval(ev.bind(p), ev.obj, each, true)
			if err != nil {
				ev.fail(err)
				ev.values, ev.absent = ev.values[:start], ev.absent[:start]
				return
			}
			values[i], absent[i] = labelValue(v)
		}
	}
	if !slices.Contains(absent, true) {
		absent = nil
	}
	if ev.extraPerElement() {
		var err error
		if extra, err = ev.mapExtra(each, true); err != nil {
			ev.fail(fmt.Errorf("metric %q: %w", f.Name, err))
			return
		}
	}
	value := 1.0
	if f.Value != nil {
		v, err := eval(ev.bind(f.Value), ev.obj, each, withEach)
		if err != nil {
			ev.fail(err)
			return
		}
		v, present := presentValue(v)
		if !present {
			return // null or an empty optional: no sample
		}
		n, ok := numberValue(v)
		if !ok {
			ev.fail(fmt.Errorf("metric %q: value must be a number or a bool, got %s", f.Name, v.Type().TypeName()))
			return
		}
		if math.IsNaN(n) || math.IsInf(n, 0) {
			ev.fail(fmt.Errorf("metric %q: value is %s; it must be a finite number (check for a division by zero)", f.Name, formatValue(n)))
			return
		}
		if f.Aggregate == AggregateSum && math.Abs(n) > maxSummand {
			ev.fail(fmt.Errorf("metric %q: value %s is too large to add up; the values of aggregate: sum must be within ±1e300", f.Name, formatValue(n)))
			return
		}
		value = n
	}
	ev.samples = append(ev.samples, sample{labels: values, absent: absent, extra: extra, value: value})
}

func eval(p *indexers.Program, obj, each any, withEach bool) (ref.Val, error) {
	if withEach {
		return p.EvalEach(context.Background(), obj, each)
	}
	return p.Eval(context.Background(), obj)
}

// labelValue formats a CEL value as a label value: strings as they are,
// null as "", numbers and bools as in JSON, lists and maps as compact JSON;
// an optional as its value. An empty optional (optional.none(), or
// object.spec.?field for an object without the field) reports absent:
// the series has no such label.
func labelValue(v ref.Val) (value string, absent bool) {
	switch v := v.(type) {
	case types.String:
		return string(v), false
	case types.Null:
		return "", false
	case types.Bool:
		return strconv.FormatBool(bool(v)), false
	case types.Int:
		return strconv.FormatInt(int64(v), 10), false
	case types.Uint:
		return strconv.FormatUint(uint64(v), 10), false
	case types.Double:
		return strconv.FormatFloat(float64(v), 'g', -1, 64), false
	case *types.Optional:
		if !v.HasValue() {
			return "", true
		}
		return labelValue(v.GetValue())
	}
	native, err := jsonval.ToNative(v)
	if err != nil {
		return "", false
	}
	if s, ok := native.(string); ok {
		return s, false
	}
	b, err := json.Marshal(native)
	if err != nil {
		return "", false
	}
	return string(b), false
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
