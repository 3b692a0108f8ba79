package query

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Func is the function of an [Aggregate].
type Func int

// The aggregate functions.
const (
	// FuncCount is the number of objects of the group.
	FuncCount Func = iota + 1
	// FuncSum adds the values up: numbers as numbers (int while every
	// value is an int), quantities as quantities.
	FuncSum
	// FuncAvg is the mean of the values (a float; a quantity for
	// quantities).
	FuncAvg
	// FuncMin and FuncMax are the smallest and largest value, in the
	// order of [Compare] (quantities by their amount).
	FuncMin
	FuncMax
	// FuncQuantile is the Q-quantile of the values, interpolated
	// linearly between the two closest ranks as R's default (type 7) and
	// NumPy's do.
	FuncQuantile
	// FuncDistinct is the number of distinct values (compared as
	// printed, see [FormatValue]).
	FuncDistinct
)

var funcNames = map[string]Func{
	"count": FuncCount, "sum": FuncSum, "avg": FuncAvg, "min": FuncMin,
	"max": FuncMax, "quantile": FuncQuantile, "distinct": FuncDistinct,
}

// ParseFunc returns the function of a name (count, sum, avg, min, max,
// quantile, distinct).
func ParseFunc(name string) (Func, bool) {
	f, ok := funcNames[name]
	return f, ok
}

// FuncNames are the names of the aggregate functions, sorted.
func FuncNames() []string {
	names := make([]string, 0, len(funcNames))
	for n := range funcNames {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Aggregate is one value computed over the objects of each group
// (--aggregate NAME=FUNC(EXPR)).
type Aggregate struct {
	// Name names the column (its header is Name in upper case) and the
	// field of -o json and yaml.
	Name string
	Func Func
	// Q is the quantile of FuncQuantile, in [0, 1].
	Q float64
	// Value computes the values aggregated; nil for FuncCount. Null is no
	// value: the object is skipped and counted in a warning, as a failure
	// is. A list contributes each of its elements. A
	// resource.Quantity (see [ValueFunc]'s other types) is summed and
	// compared as a quantity.
	Value ValueFunc
}

// Key is one key of Spec.Keys.
type Key struct {
	// Name names the column (its header is Name in upper case) and the
	// field of -o json and yaml.
	Name  string
	Value ValueFunc
}

// Row is one group of an aggregated answer (ModeAggregates): the values
// of its keys and the state of its aggregates, which rows of other
// resources or clusters merge into exactly (see [MergeRows]).
type Row struct {
	// Keys are the values of Spec.Keys (a representative of those printed
	// the same).
	Keys []any
	// KeyText are the Keys as printed.
	KeyText []string
	states  []aggState
}

// Values are the aggregates of the row, in the order of Spec.Aggregates:
// int64, float64, a resource.Quantity, any value for min and max, or nil
// when the group had no value to aggregate (avg, min, max, quantile).
func (r *Row) Values() []any {
	out := make([]any, len(r.states))
	for i := range r.states {
		out[i] = r.states[i].value()
	}
	return out
}

// value returns the value of column col: a key (col < keys), else an
// aggregate.
func (r *Row) value(col int, keys int) any {
	if col < keys {
		return r.Keys[col]
	}
	return r.states[col-keys].value()
}

// numKind is the kind of the numbers a sum or avg has added.
type numKind int

const (
	numNone numKind = iota
	numInt
	numFloat
	numQuantity
)

// aggState is the state of one aggregate over one group.
type aggState struct {
	fn Func
	q  float64
	// n is the number of values (objects for count) seen.
	n    int64
	kind numKind
	i    int64
	f    float64
	qty  resource.Quantity
	// best is min's or max's value so far.
	best any
	// samples are quantile's values; quantity: they were quantities, the
	// format is that of the first.
	samples []float64
	format  resource.Format
	// seen are distinct's values as printed.
	seen sets.Set[string]
	// mixed: the group's values mix quantities and plain numbers, which
	// sum, avg, min, max and quantile cannot combine: the value is none,
	// and a warning says so (see [Result.MixedWarnings]). It does not
	// depend on the order in which values are added or states merged.
	mixed bool
}

// add adds one value (not a list) to s.
func (s *aggState) add(v any) error {
	switch s.fn {
	case FuncCount:
		s.n++
	case FuncDistinct:
		if s.seen == nil {
			s.seen = sets.New[string]()
		}
		s.seen.Insert(formatAggregate(v))
		s.n++
	case FuncSum, FuncAvg:
		return s.addNumber(v)
	case FuncMin, FuncMax:
		q, isQty := v.(resource.Quantity)
		if s.n > 0 {
			if _, bestQty := s.best.(resource.Quantity); bestQty != isQty {
				s.mixed = true
			}
		}
		if s.mixed {
			s.n++
			return nil
		}
		better := s.n == 0
		if !better {
			c := compareAgg(v, s.best)
			better = s.fn == FuncMin && c < 0 || s.fn == FuncMax && c > 0
		}
		if better {
			if isQty {
				v = q.DeepCopy()
			}
			s.best = v
		}
		s.n++
	case FuncQuantile:
		var f float64
		switch x := v.(type) {
		case resource.Quantity:
			if s.n > 0 && s.format == "" {
				s.mixed = true
			}
			if s.n == 0 {
				s.format = x.Format
			}
			f = x.AsApproximateFloat64()
		default:
			n, ok := asFloat(v)
			if !ok {
				return fmt.Errorf("quantile needs numbers or quantities, got %s", typeWord(v, nil))
			}
			if s.format != "" {
				s.mixed = true
			}
			f = n
		}
		s.n++
		if s.mixed {
			s.samples = nil
			return nil
		}
		s.samples = append(s.samples, f)
	}
	return nil
}

// typeWord names the type of v for messages (other, when given, is the
// value already aggregated).
func typeWord(v, other any) string {
	if _, ok := v.(resource.Quantity); ok && other != nil {
		return typeWord(other, nil)
	}
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case resource.Quantity:
		return "quantity"
	case map[string]any:
		return "map"
	}
	if classOf(v) == classNumber {
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// asFloat returns v as a float64 when it is a number.
func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	if classOf(v) == classNumber {
		n := toNumber(v)
		if n.kind == 1 {
			return float64(n.u), true
		}
		return float64(n.i), true
	}
	return 0, false
}

// addNumber adds v to a sum or avg.
func (s *aggState) addNumber(v any) error {
	if q, ok := v.(resource.Quantity); ok {
		switch s.kind {
		case numNone:
			s.kind, s.qty = numQuantity, q.DeepCopy()
		case numQuantity:
			s.qty.Add(q)
		default:
			s.mixed = true
		}
		s.n++
		return nil
	}
	if s.kind == numQuantity {
		if _, ok := asFloat(v); !ok {
			return fmt.Errorf("%s needs numbers or quantities, got %s", s.fn, typeWord(v, nil))
		}
		s.mixed = true
		s.n++
		return nil
	}
	if i, ok := v.(int64); ok && s.kind != numFloat {
		s.kind = numInt
		s.i += i
		s.n++
		return nil
	}
	f, ok := asFloat(v)
	if !ok {
		return fmt.Errorf("%s needs numbers or quantities, got %s", s.fn, typeWord(v, nil))
	}
	if s.kind == numInt {
		s.f = float64(s.i)
	}
	s.kind = numFloat
	s.f += f
	s.n++
	return nil
}

// merge adds the state o, of the same aggregate over other objects, to s.
// Quantities and plain numbers merge into a mixed state.
func (s *aggState) merge(o *aggState) {
	if o.n == 0 {
		return
	}
	if s.n == 0 {
		*s = o.clone()
		return
	}
	if s.mixed || o.mixed {
		s.setMixed(o.n)
		return
	}
	switch s.fn {
	case FuncCount:
		s.n += o.n
	case FuncDistinct:
		s.seen = s.seen.Union(o.seen)
		s.n += o.n
	case FuncSum, FuncAvg:
		switch {
		case s.kind == numQuantity && o.kind == numQuantity:
			s.qty.Add(o.qty)
		case s.kind == numQuantity || o.kind == numQuantity:
			s.setMixed(o.n)
			return
		case s.kind == numInt && o.kind == numInt:
			s.i += o.i
		default:
			s.f = s.float() + o.float()
			s.kind = numFloat
		}
		s.n += o.n
	case FuncMin, FuncMax:
		n := s.n
		_ = s.add(o.best) // o.best was added to o once
		s.n = n + o.n
	case FuncQuantile:
		if (s.format == "") != (o.format == "") {
			s.setMixed(o.n)
			return
		}
		s.samples = append(s.samples, o.samples...)
		s.n += o.n
	}
}

// setMixed makes s mixed (see aggState.mixed), with n more values.
func (s *aggState) setMixed(n int64) {
	s.mixed, s.n, s.samples, s.best = true, s.n+n, nil, nil
}

// clone is a copy of s that shares nothing with it.
func (s *aggState) clone() aggState {
	c := *s
	c.qty = s.qty.DeepCopy()
	c.samples = slices.Clone(s.samples)
	if s.seen != nil {
		c.seen = s.seen.Clone()
	}
	return c
}

func (s *aggState) float() float64 {
	if s.kind == numInt {
		return float64(s.i)
	}
	return s.f
}

// value is the aggregate's value.
func (s *aggState) value() any {
	if s.mixed {
		return nil
	}
	switch s.fn {
	case FuncCount:
		return s.n
	case FuncDistinct:
		return int64(s.seen.Len())
	case FuncSum:
		switch s.kind {
		case numQuantity:
			return s.qty
		case numFloat:
			return s.f
		}
		return s.i
	case FuncAvg:
		switch {
		case s.n == 0:
			return nil
		case s.kind == numQuantity:
			return *resource.NewMilliQuantity(int64(math.Round(float64(s.qty.MilliValue())/float64(s.n))), s.qty.Format)
		}
		return s.float() / float64(s.n)
	case FuncMin, FuncMax:
		return s.best
	case FuncQuantile:
		if len(s.samples) == 0 {
			return nil
		}
		v := Quantile(s.q, slices.Clone(s.samples))
		if s.format != "" {
			return *resource.NewMilliQuantity(int64(math.Round(v*1000)), s.format)
		}
		return v
	}
	return nil
}

// String names the function.
func (f Func) String() string {
	for n, g := range funcNames {
		if g == f {
			return n
		}
	}
	return fmt.Sprintf("Func(%d)", int(f))
}

// Quantile returns the q-quantile of values (0 ≤ q ≤ 1), interpolated
// linearly between the closest ranks (R's type 7, NumPy's default): with
// the values sorted, the value at rank h = (n-1)·q, between those at
// ⌊h⌋ and ⌈h⌉. It sorts values; it is NaN for none.
func Quantile(q float64, values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	slices.Sort(values)
	h := float64(len(values)-1) * q
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(values) {
		return values[len(values)-1]
	}
	return values[i] + (h-lo)*(values[i+1]-values[i])
}

// compareAgg orders aggregate values and keys: quantities by amount,
// others as [Compare] does.
func compareAgg(a, b any) int {
	qa, oka := a.(resource.Quantity)
	qb, okb := b.(resource.Quantity)
	if oka && okb {
		return qa.Cmp(qb)
	}
	return Compare(aggComparable(a), aggComparable(b))
}

// aggComparable is v as Compare orders it: a quantity as its amount.
func aggComparable(v any) any {
	if q, ok := v.(resource.Quantity); ok {
		return q.AsApproximateFloat64()
	}
	return v
}

// formatAggregate prints an aggregate value: a quantity as kubectl prints
// quantities, others as FormatValue does.
func formatAggregate(v any) string {
	if q, ok := v.(resource.Quantity); ok {
		return q.String()
	}
	return FormatValue(v)
}

// MixedWarnings are the warnings of the aggregates of res (ModeAggregates)
// whose values mix quantities and plain numbers in some rows, one per
// aggregate: those rows have no value for it. The caller prints them on
// stderr, once for the answer it prints (res, or the rows MergeRows
// merged): they do not depend on how the objects were split.
func (res *Result) MixedWarnings() []Warning {
	var out []Warning
	for a, name := range res.AggregateNames {
		mixed := 0
		for _, r := range res.Rows {
			if a < len(r.states) && r.states[a].mixed {
				mixed++
			}
		}
		if mixed == 0 {
			continue
		}
		flag := res.aggregateFlag
		if flag == "" {
			flag = "--aggregate"
		}
		rows := "rows mix"
		if len(res.Rows) == 1 {
			rows = "row mixes"
		}
		out = append(out, Warning{Source: flag + " " + name, Note: fmt.Sprintf(
			"%d of %d %s quantities and plain numbers, which %s cannot combine: no value there; make every value a quantity, or a number with .asApproximateFloat()",
			mixed, len(res.Rows), rows, res.Rows[0].states[a].fn)})
	}
	return out
}

// rowsPart is the rows of some objects, by their keys as printed.
type rowsPart map[string]*Row

// aggregateObjects computes the rows of objs. Failures are reported one
// warning per key and aggregate that failed. An error that stop accepts
// ends it and is returned.
func aggregateObjects(objs []any, spec Spec, stop func(error) bool) ([]*Row, []Warning, error) {
	type partOut struct {
		rows  rowsPart
		fails []Failures
	}
	nf := len(spec.Keys) + len(spec.Aggregates)
	parts, _, err := evalParts(len(objs), func(lo, hi int, _ *Failures, stopped *atomic.Bool) (partOut, error) {
		out := partOut{rows: rowsPart{}, fails: make([]Failures, nf)}
		err := aggregatePart(objs[lo:hi], spec, stop, out.rows, out.fails, stopped)
		return out, err
	})
	if err != nil {
		return nil, nil, err
	}
	rows := parts[0].rows
	fails := parts[0].fails
	for _, p := range parts[1:] {
		for i := range fails {
			fails[i].merge(&p.fails[i])
		}
		for k, r := range p.rows {
			if have, ok := rows[k]; ok {
				for i := range have.states {
					have.states[i].merge(&r.states[i])
				}
			} else {
				rows[k] = r
			}
		}
	}
	var warnings []Warning
	for i := range fails {
		if i < len(spec.Keys) {
			fails[i].w.Source = spec.Names.Of(PartGroupBy)
			if len(spec.Keys) > 1 {
				fails[i].w.Source += " " + spec.Keys[i].Name
			}
		} else {
			fails[i].w.Source = spec.Names.Of(PartAggregate) + " " + spec.Aggregates[i-len(spec.Keys)].Name
		}
		if w, ok := fails[i].Warning(len(objs)); ok {
			warnings = append(warnings, w)
		}
	}
	out := make([]*Row, 0, len(rows))
	for _, r := range rows {
		out = append(out, r)
	}
	if len(spec.Keys) == 0 && len(out) == 0 {
		// The whole answer is one row, even when no object matched.
		out = append(out, newRow(spec, nil, nil))
	}
	return out, warnings, nil
}

// errNoValue is the failure of an aggregate's expression that has no value.
var errNoValue = errors.New("no value (null)")

func newRow(spec Spec, keys []any, text []string) *Row {
	r := &Row{Keys: keys, KeyText: text, states: make([]aggState, len(spec.Aggregates))}
	for i, a := range spec.Aggregates {
		r.states[i] = aggState{fn: a.Func, q: a.Q}
	}
	return r
}

// MaxKeyCombinations bounds the rows one object is added to: the
// product of the numbers of distinct elements of its keys' values. An
// object beyond it is in no row, counted in the warning of the keys.
const MaxKeyCombinations = 1024

// maxQuantileValues bounds the values one object adds to a quantile (the
// elements of a list) in each of its rows: beyond it, the object is left
// out of that aggregate and counted in its warning.
const maxQuantileValues = 1024

// checkEvery is how many rows of one object are added between two calls
// of Spec.Check.
const checkEvery = 64

// aggregatePart adds objs to rows.
func aggregatePart(objs []any, spec Spec, stop func(error) bool, rows rowsPart, fails []Failures, stopped *atomic.Bool) error {
	nk := len(spec.Keys)
	keyVals := make([][]any, nk)
	keyText := make([][]string, nk)
	values := make([]any, len(spec.Aggregates))
	has := make([]bool, len(spec.Aggregates))
	idx := make([]int, nk)
	seen := map[string]struct{}{}
	var key []byte
	for _, obj := range objs {
		if stopped.Load() {
			return nil
		}
		skip := false
		for k, key := range spec.Keys {
			v, ok, err := evalOne(key.Value, obj, stop, &fails[k])
			if err != nil {
				stopped.Store(true)
				return err
			}
			if !ok {
				skip = true
				break
			}
			keyVals[k], keyText[k] = keyElements(v, keyVals[k][:0], keyText[k][:0], seen)
		}
		if skip {
			continue
		}
		if err := checkCombinations(keyText); err != nil {
			fails[nk-1].Add(obj, err)
			continue
		}
		for a, agg := range spec.Aggregates {
			has[a] = false
			if agg.Value == nil {
				has[a] = true
				continue
			}
			v, ok, err := evalOne(agg.Value, obj, stop, &fails[nk+a])
			if err != nil {
				stopped.Store(true)
				return err
			}
			if !ok {
				continue
			}
			if v == nil {
				fails[nk+a].Add(obj, errNoValue)
				continue
			}
			// A value is checked whole, once, before any row has it: an
			// object fails once, and adds all of its value or none.
			if err := checkValue(agg.Func, v); err != nil {
				fails[nk+a].Add(obj, err)
				continue
			}
			values[a], has[a] = v, true
		}
		// The object counts once in each combination of its keys' values.
		clear(idx)
		for added := 1; ; added++ {
			if added%checkEvery == 0 && spec.Check != nil {
				if err := spec.Check(); err != nil {
					stopped.Store(true)
					return err
				}
			}
			key = key[:0]
			for k := range nk {
				key = append(key, keyText[k][idx[k]]...)
				key = append(key, 0)
			}
			r, ok := rows[string(key)]
			if !ok {
				kv, kt := make([]any, nk), make([]string, nk)
				for k := range nk {
					kv[k], kt[k] = keyVals[k][idx[k]], keyText[k][idx[k]]
				}
				r = newRow(spec, kv, kt)
				rows[string(key)] = r
			}
			for a := range spec.Aggregates {
				if has[a] {
					addValue(&r.states[a], values[a])
				}
			}
			k := nk - 1
			for ; k >= 0; k-- {
				if idx[k]++; idx[k] < len(keyVals[k]) {
					break
				}
				idx[k] = 0
			}
			if k < 0 {
				break
			}
		}
	}
	return nil
}

// checkCombinations returns the failure of an object whose keys' values
// (keyText, each key's distinct elements) make more than
// MaxKeyCombinations rows.
func checkCombinations(keyText [][]string) error {
	n := 1
	for _, t := range keyText {
		if n *= len(t); n > MaxKeyCombinations {
			product := big.NewInt(1)
			for _, t := range keyText {
				product.Mul(product, big.NewInt(int64(len(t))))
			}
			return fmt.Errorf("it has %s combinations of key values, more than %d", product, MaxKeyCombinations)
		}
	}
	return nil
}

// checkValue returns why fn cannot take v (each element of a list), or
// nil. Quantities and plain numbers together are not a failure of the
// object: the row they meet in is mixed (see aggState.mixed).
func checkValue(fn Func, v any) error {
	switch fn {
	case FuncSum, FuncAvg, FuncQuantile:
	default:
		return nil
	}
	elems, isList := listElements(v)
	if !isList {
		elems = []any{v}
	}
	if fn == FuncQuantile && len(elems) > maxQuantileValues {
		return fmt.Errorf("quantile takes at most %d values of one object, got a list of %d", maxQuantileValues, len(elems))
	}
	for _, e := range elems {
		if e == nil {
			continue
		}
		if _, ok := e.(resource.Quantity); ok {
			continue
		}
		if _, ok := asFloat(e); !ok {
			return fmt.Errorf("%s needs numbers or quantities, got %s", fn, typeWord(e, nil))
		}
	}
	return nil
}

// addValue adds v, checked by checkValue, to s: each element of a list
// (distinct elements for distinct), a value otherwise.
func addValue(s *aggState, v any) {
	if s.fn == FuncCount {
		_ = s.add(nil)
		return
	}
	elems, isList := listElements(v)
	if !isList {
		_ = s.add(v)
		return
	}
	for _, e := range elems {
		if e != nil {
			_ = s.add(e)
		}
	}
}

// keyElements appends to vals and text the distinct values of a key
// under which an object is grouped, and their text: the elements of a
// list, none for null and an empty list, as GroupBy counts. seen is
// scratch space.
func keyElements(v any, vals []any, text []string, seen map[string]struct{}) ([]any, []string) {
	elems, isList := listElements(v)
	switch {
	case !isList:
		return append(vals, v), append(text, FormatValue(v))
	case len(elems) == 0:
		return append(vals, nil), append(text, None)
	}
	clear(seen)
	for _, e := range elems {
		t := FormatValue(e)
		if _, dup := seen[t]; !dup {
			seen[t] = struct{}{}
			vals, text = append(vals, e), append(text, t)
		}
	}
	return vals, text
}

// MergeRows merges the rows of results (answers of the same aggregated
// query over several resources or clusters) into one answer: rows of the
// same keys merge exactly (counts, sums, minimums, maximums and distinct
// values combine; averages and quantiles are computed from the merged
// values), ordered and cut as Run orders and cuts them (see
// Spec.OrderBy). The aggregates' names come from the first result.
func MergeRows(results []*Result, orderBy string, descending bool, limit int) (*Result, error) {
	merged := &Result{Mode: ModeAggregates}
	if len(results) == 0 {
		return merged, nil
	}
	merged.KeyNames, merged.AggregateNames = results[0].KeyNames, results[0].AggregateNames
	merged.aggregateFlag = results[0].aggregateFlag
	byKey := map[string]*Row{}
	var order []string
	for _, r := range results {
		merged.Matched += r.Matched
		for _, row := range r.Rows {
			k := strings.Join(row.KeyText, "\x00")
			have, ok := byKey[k]
			if !ok {
				c := &Row{Keys: row.Keys, KeyText: row.KeyText, states: make([]aggState, len(row.states))}
				for i := range row.states {
					c.states[i] = row.states[i].clone()
				}
				byKey[k] = c
				order = append(order, k)
				continue
			}
			for i := range have.states {
				have.states[i].merge(&row.states[i])
			}
		}
	}
	for _, k := range order {
		merged.Rows = append(merged.Rows, byKey[k])
	}
	if err := sortRows(merged, orderBy, descending); err != nil {
		return nil, err
	}
	if limit > 0 && len(merged.Rows) > limit {
		merged.Rows = merged.Rows[:limit]
	}
	return merged, nil
}

// sortRows orders the rows of res by the column orderBy (a key or
// aggregate name; "" orders by the keys), ties by the keys in order.
func sortRows(res *Result, orderBy string, descending bool) error {
	col := -1
	if orderBy != "" {
		cols := slices.Concat(res.KeyNames, res.AggregateNames)
		if col = slices.Index(cols, orderBy); col < 0 {
			return fmt.Errorf("cannot sort by %q: it is neither a group-by key nor an aggregate; use one of %s", orderBy, strings.Join(cols, ", "))
		}
	}
	nk := len(res.KeyNames)
	values := make(map[*Row]any, len(res.Rows))
	if col >= 0 {
		for _, r := range res.Rows {
			values[r] = r.value(col, nk)
		}
	}
	byKeys := func(a, b *Row) int {
		for k := range nk {
			if c := compareAgg(a.Keys[k], b.Keys[k]); c != 0 {
				return c
			}
			if c := strings.Compare(a.KeyText[k], b.KeyText[k]); c != 0 {
				return c
			}
		}
		return 0
	}
	slices.SortStableFunc(res.Rows, func(a, b *Row) int {
		if col >= 0 {
			if c := compareAgg(values[a], values[b]); c != 0 {
				if descending {
					return -c
				}
				return c
			}
		} else if c := byKeys(a, b); c != 0 {
			if descending {
				return -c
			}
			return c
		}
		return byKeys(a, b)
	})
	return nil
}
