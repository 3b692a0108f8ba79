package query

import (
	"errors"
	"fmt"
	"math"
	goruntime "runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// ValueFunc computes a value from a cached object. Results are plain Go
// values: string, int64, float64, bool, nil, []any and map[string]any (other
// integer and float types, []string and map[string]string are accepted too).
// A ValueFunc must only read obj, which belongs to the cache.
type ValueFunc func(obj any) (any, error)

// PredicateFunc decides whether a cached object belongs to the result. It must
// only read obj, which belongs to the cache.
type PredicateFunc func(obj any) (bool, error)

// Selector restricts the query to the objects that an index maps Value to
// (--by INDEX=VALUE). Index is an index name registered on the indexer, Value
// an indexed value.
type Selector struct {
	Index string
	Value string
}

// Column is an extra column of the default table (--columns NAME=EXPR). Its
// header is Name in upper case.
type Column struct {
	Name  string
	Value ValueFunc
}

// Spec describes one query. The zero Spec lists every object of the indexer
// in namespace/name order.
type Spec struct {
	// Selectors restrict the candidates to the objects every selector's index
	// maps its value to (intersection). Empty: every object.
	Selectors []Selector

	// Where keeps the objects it returns true for. Nil keeps all. An object
	// on which Where fails is excluded and the failure is counted in a
	// "--where" warning.
	Where PredicateFunc

	// SortBy orders the result by its value, ascending (see [Compare] for the
	// order of values of different types); ties are broken by namespace, then
	// name. Nil: namespace, then name. An object on which SortBy fails sorts
	// as if its value were null and the failure is counted in a "--sort-by"
	// warning. Not allowed with Count.
	SortBy ValueFunc

	// Count replaces the objects by their number, or by the number per
	// GroupBy value.
	Count bool

	// GroupBy, with Count, counts the objects per distinct value (compared as
	// printed, see [FormatValue]). A list value counts the object once for
	// each distinct element; null, a missing value and an empty list count as
	// "<none>". An object on which GroupBy fails is not counted and the
	// failure is counted in a "--group-by" warning. Requires Count.
	GroupBy ValueFunc

	// Limit keeps the first Limit objects after sorting, or with Count and
	// GroupBy the first Limit groups. 0: no limit. It does not change a bare
	// count.
	Limit int

	// Aggregates, when not empty, replace the objects by one row per
	// distinct combination of the values of Keys (one row over every
	// object without Keys) holding these aggregates over the row's
	// objects (ModeAggregates). A list value of a key puts the object in
	// a row for each distinct element; null, a missing value and an empty
	// list are "<none>". An object on which a key fails is left out and
	// the failure counted in a "--group-by" warning; one on which an
	// aggregate fails, or has no value, is left out of that aggregate and
	// counted in an "--aggregate NAME" warning. Not allowed with Count,
	// SortBy or Columns.
	Aggregates []Aggregate
	// Keys are the keys of the rows of Aggregates.
	Keys []Key
	// OrderBy orders the rows of Aggregates by the key or aggregate of
	// this name, ascending (Descending: descending), ties by the keys;
	// "": by the keys, in order. Limit then keeps the first rows.
	OrderBy string

	// Columns are evaluated for the objects in the result only (after Limit).
	// A cell whose evaluation fails holds an *[EvalError] and the failure is
	// counted in a "--columns NAME" warning. Not allowed with Count.
	Columns []Column

	// Names are the words the warnings use for the parts of the query
	// (the sources above are those of the zero value, which names them by
	// their flags).
	Names Names

	// Namespace restricts the query to one namespace; "" means every
	// namespace the indexer holds (the informer may itself be scoped to one).
	Namespace string

	// Namespaces, when not nil, restricts the query to the objects of
	// these namespaces as well (a caller's permissions): cluster-scoped
	// objects are then excluded too. Nil: no restriction.
	Namespaces []string

	// Filter, when not nil, removes the candidates it returns false for
	// before Where sees them (selectors applied from the cache rather than
	// by the API server). It must only read obj.
	Filter func(obj any) bool

	// Stop, when not nil, reports whether an evaluation error ends the
	// query: Run then returns it instead of counting it in a warning (an
	// exhausted budget, a cancelled request).
	Stop func(err error) bool

	// Check, when not nil, returns the error that ends the query now (a
	// spent budget, an ended context: one Stop accepts), or nil. Work
	// that evaluates nothing for a while, such as adding one object to
	// many rows of aggregates, calls it now and then.
	Check func() error

	// Objects, when not nil, restricts the candidates to the objects of
	// these names (kubectl get NAME...), in Namespace, or cluster-scoped
	// when Namespace is ""; without SortBy they are listed in this order.
	// Result.Missing lists the names the indexer does not hold.
	Objects []string

	// Descending reverses the order: SortBy's values from the largest to
	// the smallest, ties still in namespace/name order; without SortBy,
	// the namespace/name order (or that of Objects) reversed.
	Descending bool

	// KubectlOrder orders by SortBy as kubectl get --sort-by orders a
	// list: the objects in namespace/name order are sorted by sort.Sort
	// (not stable) with kubectl's less, which puts an object without a
	// value before any other, even before another without one; equal
	// values keep the order that sort leaves them in. Descending then
	// reverses it, and Limit keeps the first objects.
	KubectlOrder bool
}

// Validate reports whether the Spec is consistent. It does not look at any
// indexer; [Run] calls it first.
func (s Spec) Validate() error {
	var errs []error
	if s.Limit < 0 {
		errs = append(errs, fmt.Errorf("limit must not be negative, got %d", s.Limit))
	}
	for _, sel := range s.Selectors {
		if sel.Index == "" {
			errs = append(errs, fmt.Errorf("selector %q has no index name; use INDEX=VALUE", "="+sel.Value))
		}
	}
	names := make(sets.Set[string], len(s.Columns))
	for i, c := range s.Columns {
		switch {
		case c.Name == "":
			errs = append(errs, fmt.Errorf("column %d has no name", i+1))
		case names.Has(c.Name):
			errs = append(errs, fmt.Errorf("column %q is defined twice", c.Name))
		case c.Value == nil:
			errs = append(errs, fmt.Errorf("column %q has no value function", c.Name))
		}
		names.Insert(c.Name)
	}
	if s.GroupBy != nil && !s.Count {
		errs = append(errs, errors.New("group-by requires count: it counts objects per value"))
	}
	if len(s.Keys) > 0 && len(s.Aggregates) == 0 {
		errs = append(errs, errors.New("keys are the keys of aggregates: give at least one aggregate"))
	}
	if len(s.Aggregates) > 0 && (s.Count || s.SortBy != nil || len(s.Columns) > 0) {
		errs = append(errs, errors.New("aggregates cannot be combined with count, sort-by or columns: order rows with OrderBy"))
	}
	seenAgg := make(sets.Set[string], len(s.Aggregates)+len(s.Keys))
	for _, k := range s.Keys {
		if k.Name == "" || seenAgg.Has(k.Name) || k.Value == nil {
			errs = append(errs, fmt.Errorf("key %q has no name, no value, or the name of another", k.Name))
		}
		seenAgg.Insert(k.Name)
	}
	for _, a := range s.Aggregates {
		switch {
		case a.Name == "" || seenAgg.Has(a.Name):
			errs = append(errs, fmt.Errorf("aggregate %q has no name, or the name of another aggregate or key", a.Name))
		case a.Func != FuncCount && a.Value == nil:
			errs = append(errs, fmt.Errorf("aggregate %q has no value function", a.Name))
		case a.Func == FuncQuantile && (a.Q < 0 || a.Q > 1 || math.IsNaN(a.Q)):
			errs = append(errs, fmt.Errorf("aggregate %q: the quantile must be between 0 and 1, got %v", a.Name, a.Q))
		}
		seenAgg.Insert(a.Name)
	}
	if s.Count && s.SortBy != nil {
		errs = append(errs, errors.New("sort-by cannot be used with count: groups are ordered by count"))
	}
	if s.Count && len(s.Columns) > 0 {
		errs = append(errs, errors.New("columns cannot be used with count"))
	}
	return errors.Join(errs...)
}

// Mode says what a [Result] holds.
type Mode int

const (
	// ModeObjects means Result.Items holds the selected objects.
	ModeObjects Mode = iota
	// ModeCount means Result.Matched is the answer (Spec.Count without GroupBy).
	ModeCount
	// ModeGroups means Result.Groups holds the counts per value (Spec.Count with
	// GroupBy).
	ModeGroups
	// ModeAggregates means Result.Rows holds the aggregates per group
	// (Spec.Aggregates).
	ModeAggregates
)

// Result is the answer to a query.
type Result struct {
	// Mode says which of Items, Matched or Groups is the answer.
	Mode Mode

	// Items are the selected objects in output order (ModeObjects).
	Items []Item

	// ColumnNames are the names of Spec.Columns, in order; Item.Values
	// follow it.
	ColumnNames []string

	// Matched is the number of objects that passed the selectors and Where,
	// before Limit.
	Matched int

	// Groups are the counts per GroupBy value, largest first, ties ordered by
	// value (ModeGroups).
	Groups []Group

	// Rows are the aggregates per group (ModeAggregates), KeyNames and
	// AggregateNames the names of their keys and aggregates.
	Rows                     []*Row
	KeyNames, AggregateNames []string
	// aggregateFlag names the flag of the aggregates in warnings.
	aggregateFlag string

	// Indexers are the index functions of the queried indexer; the tables
	// of PrintOptions.IndexNames show their values for each object.
	Indexers cache.Indexers

	// Warnings summarise per-object evaluation failures, one per expression
	// that failed at least once. The caller prints them on stderr.
	Warnings []Warning

	// Missing are the names of Spec.Objects that the indexer does not
	// hold, in the order given.
	Missing []string
}

// Item is one object of a Result.
type Item struct {
	// Object is the cached object itself: read-only.
	Object runtime.Object
	// Values are the values of Spec.Columns for Object, in order. A cell whose
	// evaluation failed holds an *EvalError.
	Values []any
	// Cluster is the name of the context Object was read from, in an
	// answer over several clusters (see PrintOptions.Clusters); empty
	// otherwise.
	Cluster string
	// key is the value of Spec.SortBy for Object (nil without SortBy or
	// when it failed): answers over several resources are ordered by it.
	key any
}

// Group is the number of objects sharing one GroupBy value.
type Group struct {
	// Value is the group value as printed (see [FormatValue]); "<none>" for
	// null, missing or empty values.
	Value string
	// Count is the number of objects in the group.
	Count int
}

// EvalError is the value of a column cell whose expression failed on the
// object; tables print it as "<error>".
type EvalError struct {
	Err error
}

// Error returns the message of the underlying error.
func (e *EvalError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *EvalError) Unwrap() error { return e.Err }

// Warning summarises the evaluation failures of one expression over the
// objects it was evaluated on.
type Warning struct {
	// Source names the expression by the flag that supplies it: "--where",
	// "--sort-by", "--group-by" or "--columns NAME".
	Source string
	// Failed is the number of objects the expression failed on.
	Failed int
	// Total is the number of objects the expression was evaluated on.
	Total int
	// Object is the namespace/name (or name) of the first object it failed on.
	Object string
	// Err is the first failure.
	Err error
	// OtherErrors is the number of distinct error messages besides Err's
	// (counted up to 100).
	OtherErrors int
	// Note, when not empty, is the whole warning after Source, which is
	// then about the answer rather than about objects that failed.
	Note string
}

// String formats the warning on one line, for example
//
//	--where: 3 of 120 objects failed: default/web-0: no such key: spec
func (w Warning) String() string {
	var b strings.Builder
	noun := "objects"
	if w.Total == 1 {
		noun = "object"
	}
	if w.Note != "" {
		return w.Source + ": " + w.Note
	}
	fmt.Fprintf(&b, "%s: %d of %d %s failed: ", w.Source, w.Failed, w.Total, noun)
	if w.Object != "" {
		b.WriteString(w.Object)
		b.WriteString(": ")
	}
	if w.Err != nil {
		// Errors that already name their expression's flag do not repeat it.
		b.WriteString(strings.TrimPrefix(w.Err.Error(), w.Source+": "))
	}
	switch {
	case w.OtherErrors == 1:
		b.WriteString(" (and 1 other error)")
	case w.OtherErrors > 1:
		fmt.Fprintf(&b, " (and %d other errors)", w.OtherErrors)
	}
	return b.String()
}

// maxDistinctErrors bounds the memory spent on counting distinct messages.
const maxDistinctErrors = 100

// Failures accumulates the evaluation failures of one expression. The
// example kept is the failure of the object with the smallest
// namespace/name, so that warnings do not depend on the cache's iteration
// order.
type Failures struct {
	w        Warning
	messages map[string]struct{}
}

// Add counts the failure err of the expression on obj.
func (f *Failures) Add(obj any, err error) {
	f.w.Failed++
	if f.messages == nil {
		f.messages = make(map[string]struct{})
	}
	if len(f.messages) <= maxDistinctErrors {
		f.messages[err.Error()] = struct{}{}
	}
	if key := indexers.ObjectName(obj); f.w.Err == nil || key < f.w.Object {
		f.w.Err, f.w.Object = err, key
	}
}

// merge adds the failures of o, counted over other objects, to f.
func (f *Failures) merge(o *Failures) {
	if o.w.Failed == 0 {
		return
	}
	f.w.Failed += o.w.Failed
	if f.messages == nil {
		f.messages = make(map[string]struct{})
	}
	for m := range o.messages {
		if len(f.messages) > maxDistinctErrors {
			break
		}
		f.messages[m] = struct{}{}
	}
	if f.w.Err == nil || o.w.Object < f.w.Object {
		f.w.Err, f.w.Object = o.w.Err, o.w.Object
	}
}

// Warning returns the summary of the failures counted, total being the
// number of objects the expression was evaluated on, and whether there
// were any.
func (f *Failures) Warning(total int) (Warning, bool) {
	f.w.Total = total
	f.w.OtherErrors = max(len(f.messages)-1, 0)
	return f.w, f.w.Failed > 0
}

// entry is a candidate object with the keys it sorts by.
type entry struct {
	obj       any
	namespace string
	name      string
	key       any
}

// Run answers spec from the objects of one resource's indexer.
//
// Candidates come from idx.ByIndex for a single selector, from the
// intersection of the selectors' index keys for several, or else from the
// namespace index (cache.NamespaceIndex) when spec.Namespace is set and the
// indexer has it, or from idx.List. A selector naming an index the indexer
// does not have is an error that lists the indexes it has. Then Where
// filters, SortBy (or namespace/name) orders, Limit truncates and Columns are
// evaluated; or, with Count, the matching objects are counted.
//
// Run only reads the objects; evaluation failures are handled as documented
// on [Spec] and reported in Result.Warnings. From 8,192 candidates on, it
// evaluates Where and GroupBy on GOMAXPROCS goroutines, each over a
// contiguous part of the candidates, so those functions and Stop must be
// safe for concurrent use; the result is the same as on one goroutine. It
// is safe to call concurrently with the informer updating idx and with
// other Runs, provided the ValueFuncs and PredicateFunc are.
func Run(idx cache.Indexer, spec Spec) (*Result, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	indexers := idx.GetIndexers()
	var candidates []any
	var err error
	// Named objects are read by key, unless selectors choose among them.
	if spec.Objects == nil || len(spec.Selectors) > 0 || spec.Namespaces != nil {
		if candidates, err = selectObjects(idx, indexers, spec); err != nil {
			return nil, err
		}
	}
	var position map[string]int
	var missing []string
	if spec.Objects != nil {
		candidates, missing, position = namedObjects(idx, spec, candidates)
	}

	if spec.Filter != nil {
		kept := make([]any, 0, len(candidates))
		for _, obj := range candidates {
			if spec.Filter(obj) {
				kept = append(kept, obj)
			}
		}
		candidates = kept
	}
	stop := func(err error) bool { return spec.Stop != nil && spec.Stop(err) }

	res := &Result{Indexers: indexers, Missing: missing}
	matched := candidates
	if spec.Where != nil {
		var fails Failures
		matched, fails, err = filterObjects(candidates, spec.Where, stop)
		if err != nil {
			return nil, err
		}
		fails.w.Source = spec.Names.Of(PartWhere)
		if w, ok := fails.Warning(len(candidates)); ok {
			res.Warnings = append(res.Warnings, w)
		}
	}
	res.Matched = len(matched)

	switch {
	case len(spec.Aggregates) > 0:
		res.Mode = ModeAggregates
		for _, k := range spec.Keys {
			res.KeyNames = append(res.KeyNames, k.Name)
		}
		for _, a := range spec.Aggregates {
			res.AggregateNames = append(res.AggregateNames, a.Name)
		}
		res.aggregateFlag = spec.Names.Of(PartAggregate)
		rows, warnings, err := aggregateObjects(matched, spec, stop)
		if err != nil {
			return nil, err
		}
		res.Rows = rows
		res.Warnings = append(res.Warnings, warnings...)
		if err := sortRows(res, spec.OrderBy, spec.Descending); err != nil {
			return nil, err
		}
		if spec.Limit > 0 && len(res.Rows) > spec.Limit {
			res.Rows = res.Rows[:spec.Limit]
		}
		return res, nil
	case spec.Count && spec.GroupBy != nil:
		res.Mode = ModeGroups
		groups, w, failed, err := groupObjects(matched, spec.GroupBy, spec.Names.Of(PartGroupBy), stop)
		if err != nil {
			return nil, err
		}
		if failed {
			res.Warnings = append(res.Warnings, w)
		}
		if spec.Limit > 0 && len(groups) > spec.Limit {
			groups = groups[:spec.Limit]
		}
		res.Groups = groups
		return res, nil
	case spec.Count:
		res.Mode = ModeCount
		return res, nil
	}

	entries := make([]entry, len(matched))
	var sortFails Failures
	for i, obj := range matched {
		e := entry{obj: obj}
		if m, err := meta.Accessor(obj); err == nil {
			e.namespace, e.name = m.GetNamespace(), m.GetName()
		}
		if spec.SortBy != nil {
			v, ok, err := evalOne(spec.SortBy, obj, stop, &sortFails)
			if err != nil {
				return nil, err
			}
			if ok {
				e.key = v
			}
		}
		entries[i] = e
	}
	sortFails.w.Source = spec.Names.Of(PartSortBy)
	if w, ok := sortFails.Warning(len(matched)); ok {
		res.Warnings = append(res.Warnings, w)
	}
	compare := func(i, j int32) int {
		a, b := &entries[i], &entries[j]
		if spec.SortBy != nil {
			if c := Compare(a.key, b.key); c != 0 {
				if spec.Descending {
					return -c
				}
				return c
			}
		}
		c := 0
		if position != nil && spec.SortBy == nil {
			c = position[a.name] - position[b.name]
		}
		if c == 0 {
			c = strings.Compare(a.namespace, b.namespace)
		}
		if c == 0 {
			c = strings.Compare(a.name, b.name)
		}
		if spec.Descending && spec.SortBy == nil {
			return -c
		}
		return c
	}
	var order []int32
	if spec.KubectlOrder && spec.SortBy != nil {
		order = kubectlOrder(entries, spec.Descending, spec.Limit)
	} else {
		order = sortedOrder(len(entries), spec.Limit, compare)
	}

	res.Items = make([]Item, len(order))
	for i, e := range order {
		obj, ok := entries[e].obj.(runtime.Object)
		if !ok {
			return nil, fmt.Errorf("the cache holds a %T, which is not a runtime.Object", entries[e].obj)
		}
		res.Items[i].Object, res.Items[i].key = obj, entries[e].key
	}
	if err := evalColumns(res, spec); err != nil {
		return nil, err
	}
	return res, nil
}

// evalColumns evaluates spec.Columns for the items of res, adding a
// warning per column that failed on some; an error that spec.Stop accepts
// ends it and is returned.
func evalColumns(res *Result, spec Spec) error {
	for c, col := range spec.Columns {
		res.ColumnNames = append(res.ColumnNames, col.Name)
		fails := Failures{w: Warning{Source: spec.Names.Of(PartColumns) + " " + col.Name}}
		for i := range res.Items {
			if c == 0 {
				res.Items[i].Values = make([]any, len(spec.Columns))
			}
			v, err := col.Value(res.Items[i].Object)
			if err != nil {
				if spec.Stop != nil && spec.Stop(err) {
					return err
				}
				fails.Add(res.Items[i].Object, err)
				v = &EvalError{Err: err}
			}
			res.Items[i].Values[c] = v
		}
		if w, ok := fails.Warning(len(res.Items)); ok {
			res.Warnings = append(res.Warnings, w)
		}
	}
	return nil
}

// kubectlOrder is the order of Spec.KubectlOrder.
func kubectlOrder(entries []entry, descending bool, limit int) []int32 {
	order := make([]int32, len(entries))
	for i := range order {
		order[i] = int32(i) //nolint:gosec // G115: the objects of one cache, far below 2^31
	}
	slices.SortFunc(order, func(i, j int32) int {
		a, b := &entries[i], &entries[j]
		if c := strings.Compare(a.namespace, b.namespace); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	sort.Sort(kubectlSort{order: order, entries: entries})
	if descending {
		slices.Reverse(order)
	}
	if limit > 0 && limit < len(order) {
		order = order[:limit]
	}
	return order
}

// kubectlSort is kubectl get's sort.Interface for --sort-by.
type kubectlSort struct {
	order   []int32
	entries []entry
}

func (s kubectlSort) Len() int      { return len(s.order) }
func (s kubectlSort) Swap(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] }
func (s kubectlSort) Less(i, j int) bool {
	a, b := s.entries[s.order[i]].key, s.entries[s.order[j]].key
	switch {
	case a == nil:
		return true
	case b == nil:
		return false
	}
	return Compare(a, b) < 0
}

// sortedOrder returns the indexes 0..n-1 ordered by compare, only the first
// limit of them when limit > 0. A small limit selects with a bounded heap,
// in O(n log limit), instead of sorting everything.
func sortedOrder(n, limit int, compare func(i, j int32) int) []int32 {
	if limit <= 0 || limit >= n {
		order := make([]int32, n)
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortFunc(order, compare)
		return order
	}
	// heap is a max-heap of the limit smallest indexes seen so far.
	heap := make([]int32, 0, limit)
	down := func(i int) {
		for {
			largest, l, r := i, 2*i+1, 2*i+2
			if l < len(heap) && compare(heap[l], heap[largest]) > 0 {
				largest = l
			}
			if r < len(heap) && compare(heap[r], heap[largest]) > 0 {
				largest = r
			}
			if largest == i {
				return
			}
			heap[i], heap[largest] = heap[largest], heap[i]
			i = largest
		}
	}
	for i := range int32(n) { //nolint:gosec // G115: n counts the objects of one cache, far below 2^31
		switch {
		case len(heap) < limit:
			heap = append(heap, i)
			for c := len(heap) - 1; c > 0; {
				parent := (c - 1) / 2
				if compare(heap[c], heap[parent]) <= 0 {
					break
				}
				heap[c], heap[parent] = heap[parent], heap[c]
				c = parent
			}
		case compare(i, heap[0]) < 0:
			heap[0] = i
			down(0)
		}
	}
	slices.SortFunc(heap, compare)
	return heap
}

// selectObjects returns the candidates of a query: the objects its selectors
// and namespace admit.
func selectObjects(idx cache.Indexer, indexers cache.Indexers, spec Spec) ([]any, error) {
	for _, sel := range spec.Selectors {
		if _, ok := indexers[sel.Index]; !ok {
			return nil, unknownIndexError(sel.Index, indexers)
		}
	}

	if spec.Namespaces != nil {
		return inNamespaces(idx, indexers, spec)
	}
	var objs []any
	switch len(spec.Selectors) {
	case 0:
		if spec.Namespace == "" {
			return idx.List(), nil
		}
		if _, ok := indexers[cache.NamespaceIndex]; ok {
			return idx.ByIndex(cache.NamespaceIndex, spec.Namespace)
		}
		objs = idx.List()
	case 1:
		var err error
		objs, err = idx.ByIndex(spec.Selectors[0].Index, spec.Selectors[0].Value)
		if err != nil {
			return nil, fmt.Errorf("index %q: %w", spec.Selectors[0].Index, err)
		}
	default:
		var err error
		objs, err = intersect(idx, spec.Selectors)
		if err != nil {
			return nil, err
		}
	}
	if spec.Namespace == "" {
		return objs, nil
	}
	kept := objs[:0:0]
	for _, obj := range objs {
		if m, err := meta.Accessor(obj); err == nil && m.GetNamespace() == spec.Namespace {
			kept = append(kept, obj)
		}
	}
	return kept, nil
}

// namedObjects returns the objects of spec.Objects that the indexer holds,
// in that order (of them, only those also in candidates when selectors
// chose the candidates), the names it does not hold, and the position of
// each name in spec.Objects.
func namedObjects(idx cache.Indexer, spec Spec, candidates []any) (named []any, missing []string, position map[string]int) {
	var admitted sets.Set[string]
	if len(spec.Selectors) > 0 || spec.Namespaces != nil {
		admitted = make(sets.Set[string], len(candidates))
		for _, obj := range candidates {
			admitted.Insert(indexers.ObjectName(obj))
		}
	}
	position = make(map[string]int, len(spec.Objects))
	for i, name := range spec.Objects {
		position[name] = i
		key := name
		if spec.Namespace != "" {
			key = spec.Namespace + "/" + name
		}
		obj, exists, err := idx.GetByKey(key)
		switch {
		case err != nil || !exists:
			missing = append(missing, name)
		case admitted == nil || admitted.Has(key):
			named = append(named, obj)
		}
	}
	return named, missing, position
}

// inNamespaces returns the candidates of a query restricted to
// spec.Namespaces: those its selectors and namespace admit, in one of
// them.
func inNamespaces(idx cache.Indexer, indexers cache.Indexers, spec Spec) ([]any, error) {
	allowed := make(sets.Set[string], len(spec.Namespaces))
	for _, ns := range spec.Namespaces {
		if ns != "" && (spec.Namespace == "" || ns == spec.Namespace) {
			allowed.Insert(ns)
		}
	}
	if _, ok := indexers[cache.NamespaceIndex]; ok && len(spec.Selectors) == 0 {
		var objs []any
		for _, ns := range sets.List(allowed) {
			in, err := idx.ByIndex(cache.NamespaceIndex, ns)
			if err != nil {
				return nil, err
			}
			objs = append(objs, in...)
		}
		return objs, nil
	}
	unrestricted := spec
	unrestricted.Namespaces = nil
	objs, err := selectObjects(idx, indexers, unrestricted)
	if err != nil {
		return nil, err
	}
	kept := objs[:0:0]
	for _, obj := range objs {
		if m, err := meta.Accessor(obj); err == nil && allowed.Has(m.GetNamespace()) && m.GetNamespace() != "" {
			kept = append(kept, obj)
		}
	}
	return kept, nil
}

// intersect returns the objects every selector admits, looked up by storage
// key so that the smallest key set bounds the work.
func intersect(idx cache.Indexer, selectors []Selector) ([]any, error) {
	sets := make([][]string, len(selectors))
	for i, sel := range selectors {
		keys, err := idx.IndexKeys(sel.Index, sel.Value)
		if err != nil {
			return nil, fmt.Errorf("index %q: %w", sel.Index, err)
		}
		if len(keys) == 0 {
			return nil, nil
		}
		sets[i] = keys
	}
	slices.SortFunc(sets, func(a, b []string) int { return len(a) - len(b) })
	// seen counts, for each key of the smallest set, the sets holding it;
	// only the smallest set is ever put in a map.
	seen := make(map[string]int, len(sets[0]))
	for _, k := range sets[0] {
		seen[k] = 1
	}
	for i, set := range sets[1:] {
		for _, k := range set {
			if n, ok := seen[k]; ok && n == i+1 {
				seen[k] = n + 1
			}
		}
	}
	keep := make([]string, 0, len(seen))
	for k, n := range seen {
		if n == len(sets) {
			keep = append(keep, k)
		}
	}
	objs := make([]any, 0, len(keep))
	for _, k := range keep {
		// An object deleted since the key lookup is simply not returned.
		if obj, exists, err := idx.GetByKey(k); err == nil && exists {
			objs = append(objs, obj)
		}
	}
	return objs, nil
}

func unknownIndexError(name string, indexers cache.Indexers) error {
	if len(indexers) == 0 {
		return fmt.Errorf("unknown index %q: this resource has no indexes", name)
	}
	known := make([]string, 0, len(indexers))
	for n := range indexers {
		known = append(known, n)
	}
	slices.Sort(known)
	return fmt.Errorf("unknown index %q; known indexes: %s", name, strings.Join(known, ", "))
}

// parallelMin is the fewest objects that Where and GroupBy are evaluated
// on by several goroutines: below it, starting them costs more than it
// saves. Above it, evaluation is bound by fetching scattered objects from
// memory, and each core adds its own fetches.
const parallelMin = 8192

// partsOf returns into how many parts n objects are split for evaluation:
// GOMAXPROCS from parallelMin objects on, else 1.
func partsOf(n int) int {
	if n < parallelMin {
		return 1
	}
	return min(goruntime.GOMAXPROCS(0), n/(parallelMin/2))
}

// forParts splits n objects into parts contiguous ranges and calls fn for
// each, with its part number, on a goroutine of its own (on the caller's
// when there is one part), and waits for them all.
func forParts(n, parts int, fn func(part, lo, hi int)) {
	if parts == 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() { fn(p, p*n/parts, (p+1)*n/parts) })
	}
	wg.Wait()
}

// evalParts calls eval for each part of n objects (see forParts), with the
// part's own failures and a flag that a part sets when an error ends the
// evaluation, and returns the parts' results in order with their Failures
// merged, or the first error that ended it.
func evalParts[T any](n int, eval func(lo, hi int, fails *Failures, stopped *atomic.Bool) (T, error)) ([]T, Failures, error) {
	parts := partsOf(n)
	results, fails, errs := make([]T, parts), make([]Failures, parts), make([]error, parts)
	var stopped atomic.Bool
	forParts(n, parts, func(i, lo, hi int) {
		results[i], errs[i] = eval(lo, hi, &fails[i], &stopped)
	})
	var merged Failures
	for i := range parts {
		if errs[i] != nil {
			return nil, Failures{}, errs[i]
		}
		merged.merge(&fails[i])
	}
	return results, merged, nil
}

// filterObjects returns the objects where keeps, in their order, and the
// failures it counted. An error that stop accepts ends it and is returned.
func filterObjects(objs []any, where PredicateFunc, stop func(error) bool) ([]any, Failures, error) {
	parts, fails, err := evalParts(len(objs), func(lo, hi int, fails *Failures, stopped *atomic.Bool) ([]any, error) {
		kept := make([]any, 0, hi-lo)
		for _, obj := range objs[lo:hi] {
			if stopped.Load() {
				return kept, nil
			}
			match, ok, err := evalOne(where, obj, stop, fails)
			if err != nil {
				stopped.Store(true)
				return nil, err
			}
			if ok && match {
				kept = append(kept, obj)
			}
		}
		return kept, nil
	})
	switch {
	case err != nil:
		return nil, Failures{}, err
	case len(parts) == 1:
		return parts[0], fails, nil
	}
	return slices.Concat(parts...), fails, nil
}

// evalOne evaluates fn on obj. A failure that stop accepts ends the
// evaluation: it is returned. Any other is counted in fails, and ok is
// false.
func evalOne[T any](fn func(any) (T, error), obj any, stop func(error) bool, fails *Failures) (v T, ok bool, err error) {
	v, err = fn(obj)
	switch {
	case err == nil:
		return v, true, nil
	case stop(err):
		return v, false, err
	}
	fails.Add(obj, err)
	var zero T
	return zero, false, nil
}

// group is the objects counted under one formatted GroupBy value.
type group struct {
	value any // a representative value, for ordering ties
	count int
}

// groupObjects counts objs per formatted GroupBy value and orders the groups.
// An error that stop accepts ends it and is returned.
func groupObjects(objs []any, groupBy ValueFunc, source string, stop func(error) bool) ([]Group, Warning, bool, error) {
	parts, fails, err := evalParts(len(objs), func(lo, hi int, fails *Failures, stopped *atomic.Bool) (map[string]*group, error) {
		return countGroups(objs[lo:hi], groupBy, stop, fails, stopped)
	})
	if err != nil {
		return nil, Warning{}, false, err
	}
	fails.w.Source = source
	counts := parts[0]
	for _, part := range parts[1:] {
		for k, g := range part {
			if c, ok := counts[k]; ok {
				c.count += g.count
			} else {
				counts[k] = g
			}
		}
	}
	groups := make([]Group, 0, len(counts))
	for k, g := range counts {
		groups = append(groups, Group{Value: k, Count: g.count})
	}
	slices.SortFunc(groups, func(a, b Group) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		if c := Compare(counts[a.Value].value, counts[b.Value].value); c != 0 {
			return c
		}
		return strings.Compare(a.Value, b.Value)
	})
	w, failed := fails.Warning(len(objs))
	return groups, w, failed, nil
}

// countGroups counts objs per formatted GroupBy value, adding failures to
// fails, until stopped is set. An error that stop accepts sets stopped and
// is returned.
func countGroups(objs []any, groupBy ValueFunc, stop func(error) bool, fails *Failures, stopped *atomic.Bool) (map[string]*group, error) {
	counts := make(map[string]*group)
	bump := func(key string, v any) {
		if g, ok := counts[key]; ok {
			g.count++
			return
		}
		counts[key] = &group{value: v, count: 1}
	}
	var seen sets.Set[string]
	for _, obj := range objs {
		if stopped.Load() {
			return counts, nil
		}
		v, ok, err := evalOne(groupBy, obj, stop, fails)
		if err != nil {
			stopped.Store(true)
			return nil, err
		}
		if !ok {
			continue
		}
		elems, isList := listElements(v)
		switch {
		case !isList:
			bump(FormatValue(v), v)
		case len(elems) == 0:
			bump(None, nil)
		case len(elems) == 1:
			bump(FormatValue(elems[0]), elems[0])
		default:
			if seen == nil {
				seen = make(sets.Set[string], len(elems))
			}
			clear(seen)
			for _, e := range elems {
				k := FormatValue(e)
				if !seen.Has(k) {
					seen.Insert(k)
					bump(k, e)
				}
			}
		}
	}
	return counts, nil
}

// NewFailures returns the Failures of the expression that source names
// (a flag and its argument, as Warning.Source).
func NewFailures(source string) Failures { return Failures{w: Warning{Source: source}} }
