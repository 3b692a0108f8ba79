package query

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

func TestQuantile(t *testing.T) {
	// Expected values are NumPy's numpy.quantile (linear, the default).
	for _, c := range []struct {
		q      float64
		values []float64
		want   float64
	}{
		{0.5, []float64{1, 2, 3, 4}, 2.5},
		{0.25, []float64{4, 1, 3, 2}, 1.75},
		{0, []float64{3, 1, 2}, 1},
		{1, []float64{3, 1, 2}, 3},
		{0.9, []float64{10, 20, 30, 40, 50}, 46},
		{0.5, []float64{7}, 7},
	} {
		if got := Quantile(c.q, append([]float64(nil), c.values...)); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Quantile(%v, %v) = %v, want %v", c.q, c.values, got, c.want)
		}
	}
	if got := Quantile(0.5, nil); !math.IsNaN(got) {
		t.Errorf("Quantile of none = %v, want NaN", got)
	}
}

// aggregateSpec groups by the team label and aggregates the rank label.
func aggregateSpec() Spec {
	return Spec{
		Keys: []Key{{Name: "team", Value: teamLabel}},
		Aggregates: []Aggregate{
			{Name: "n", Func: FuncCount},
			{Name: "sum", Func: FuncSum, Value: rankLabel},
			{Name: "avg", Func: FuncAvg, Value: rankLabel},
			{Name: "min", Func: FuncMin, Value: rankLabel},
			{Name: "max", Func: FuncMax, Value: rankLabel},
			{Name: "p90", Func: FuncQuantile, Q: 0.9, Value: rankLabel},
			{Name: "distinct", Func: FuncDistinct, Value: rankLabel},
		},
	}
}

// rowValues are the keys and values of the rows of res.
func rowValues(res *Result) [][]any {
	var out [][]any
	for _, r := range res.Rows {
		out = append(out, append(append([]any(nil), r.Keys...), r.Values()...))
	}
	return out
}

// TestMergeRowsExact: the rows of objects split over several indexers
// (resources, clusters) merge into the rows of all the objects in one:
// averages and quantiles from the merged values, not from the parts'.
func TestMergeRowsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // G404: a fixed seed, for repeatable cases
	var specs []string
	for i := range 200 {
		rank := ""
		if i%7 != 0 {
			rank = fmt.Sprint(rng.IntN(50))
		}
		specs = append(specs, fmt.Sprintf("o%d:%s:%s", i, rank, []string{"a", "b", "c"}[rng.IntN(3)]))
	}
	whole := twoResources(t, specs, nil)[0]
	parts := []cache.Indexer{
		twoResources(t, specs[:37], nil)[0],
		twoResources(t, specs[37:150], nil)[0],
		twoResources(t, specs[150:], nil)[0],
	}
	want, err := Run(whole, aggregateSpec())
	if err != nil {
		t.Fatal(err)
	}
	var results []*Result
	for _, idx := range parts {
		r, err := Run(idx, aggregateSpec())
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	merged, err := MergeRows(results, "", false, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rowValues(merged), rowValues(want); !reflect.DeepEqual(got, want) {
		t.Errorf("merged rows %v, want those of all the objects %v", got, want)
	}
	// The failures of the objects without a rank are counted, once per
	// aggregate that reads it.
	if len(want.Warnings) != 6 || want.Warnings[0].Failed != 29 {
		t.Errorf("warnings %v, want 6 of 29 failures each", want.Warnings)
	}
	// Sorted by an aggregate, descending, and cut.
	top, err := MergeRows(results, "sum", true, 1)
	if err != nil {
		t.Fatal(err)
	}
	best := want.Rows[0]
	for _, r := range want.Rows {
		if r.Values()[1].(int64) > best.Values()[1].(int64) {
			best = r
		}
	}
	if len(top.Rows) != 1 || top.Rows[0].KeyText[0] != best.KeyText[0] {
		t.Errorf("--sort-by -sum --limit 1: %v, want the team %s", rowValues(top), best.KeyText[0])
	}
	if _, err := MergeRows(results, "nope", false, 0); err == nil {
		t.Error("sorting by an unknown name: no error")
	}
}

// TestAggregateQuantities: quantities add up in their unit and print as
// kubectl prints them; a number among quantities is refused, and counted.
func TestAggregateQuantities(t *testing.T) {
	objs := twoResources(t, []string{"a:1:x", "b:2:x", "c:3:x"}, nil)[0]
	cpu := map[string]string{"a-0": "100m", "b-0": "1", "c-0": "250m"}
	value := func(obj any) (any, error) {
		return resource.MustParse(cpu[indexersName(obj)]), nil
	}
	res, err := Run(objs, Spec{Aggregates: []Aggregate{
		{Name: "sum", Func: FuncSum, Value: value},
		{Name: "max", Func: FuncMax, Value: value},
		{Name: "avg", Func: FuncAvg, Value: value},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, 0, 3)
	for _, v := range res.Rows[0].Values() {
		got = append(got, formatAggregate(v))
	}
	if want := []string{"1350m", "1", "450m"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sum, max, avg of 100m, 1, 250m: %v, want %v", got, want)
	}
	mixed := func(obj any) (any, error) {
		if indexersName(obj) == "b-0" {
			return int64(2), nil
		}
		return value(obj)
	}
	res, err = Run(objs, Spec{Aggregates: []Aggregate{{Name: "sum", Func: FuncSum, Value: mixed}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Rows[0].Values()[0]; got != nil || len(res.Warnings) != 0 || len(res.MixedWarnings()) != 1 {
		t.Errorf("sum of 100m, 2, 250m: %v, warnings %v, %v; want no value and one warning of the mix", got, res.Warnings, res.MixedWarnings())
	}
}

// TestAggregateMixedSplit: objects whose values mix quantities and plain
// numbers, and objects whose values fail, give the same rows and warnings
// whether aggregated together or split over several indexers and merged:
// the merge does not fail, a row that mixes has no value, and an object
// that fails is counted once, however many rows it is in.
func TestAggregateMixedSplit(t *testing.T) {
	var specs []string
	failing := 0
	for i := range 120 {
		// Team a mixes quantities and numbers, b only within lists, c has
		// numbers only.
		team := []string{"a", "b", "c"}[i%3]
		specs = append(specs, fmt.Sprintf("o%d:%d:%s", i, i, team))
		if i%7 == 0 {
			failing++
		}
	}
	value := func(obj any) (any, error) {
		var i int64
		if _, err := fmt.Sscanf(indexersName(obj), "o%d-0", &i); err != nil {
			return nil, err
		}
		team, _ := teamLabel(obj)
		switch {
		case i%7 == 0:
			// A string in a list: the whole list is left out.
			return []any{i, "x"}, nil
		case team == "a" && i%2 == 0:
			return resource.MustParse(fmt.Sprintf("%dm", i)), nil
		case team == "b":
			return []any{i, resource.MustParse("2Mi")}, nil
		}
		return i, nil
	}
	// A list key with a repeated element: two rows per object.
	zone := func(any) (any, error) { return []any{"x", "y", "x"}, nil }
	spec := func() Spec {
		s := Spec{Keys: []Key{{Name: "team", Value: teamLabel}, {Name: "zone", Value: zone}}}
		for _, f := range []Func{FuncSum, FuncAvg, FuncMin, FuncMax, FuncQuantile, FuncDistinct} {
			s.Aggregates = append(s.Aggregates, Aggregate{Name: f.String(), Func: f, Q: 0.5, Value: value})
		}
		return s
	}
	whole, err := Run(twoResources(t, specs, nil)[0], spec())
	if err != nil {
		t.Fatal(err)
	}
	var results []*Result
	for _, part := range [][]string{specs[:1], specs[1:50], specs[50:51], specs[51:]} {
		r, err := Run(twoResources(t, part, nil)[0], spec())
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	merged, err := MergeRows(results, "", false, 0)
	if err != nil {
		t.Fatalf("merging: %v", err)
	}
	if got, want := rowValues(merged), rowValues(whole); !reflect.DeepEqual(got, want) {
		t.Errorf("merged rows %v, want those of all the objects %v", got, want)
	}
	if got, want := fmt.Sprint(merged.MixedWarnings()), fmt.Sprint(whole.MixedWarnings()); got != want {
		t.Errorf("merged: warnings %s, want those of all the objects %s", got, want)
	}
	// sum, avg, min, max and quantile mix in teams a and b (each in
	// zones x and y), not in c.
	if n := len(whole.MixedWarnings()); n != 5 {
		t.Errorf("warnings of the mix %v, want one for each of the 5 aggregates but distinct", whole.MixedWarnings())
	}
	for _, r := range whole.Rows {
		for i, v := range r.Values()[:5] {
			if mixes := r.KeyText[0] != "c"; (v == nil) != mixes {
				t.Errorf("row %v: %s is %v; want no value just when the row mixes (%v)", r.KeyText, whole.AggregateNames[i], v, mixes)
			}
		}
	}
	failed := func(rs ...*Result) map[string]int {
		out := map[string]int{}
		for _, r := range rs {
			for _, w := range r.Warnings {
				out[w.Source] += w.Failed
			}
		}
		return out
	}
	want := map[string]int{}
	for _, f := range []string{"sum", "avg", "quantile"} {
		want["--aggregate "+f] = failing
	}
	if got := failed(whole); !reflect.DeepEqual(got, want) {
		t.Errorf("failures %v, want each object with a string counted once %v", got, want)
	}
	if got := failed(results...); !reflect.DeepEqual(got, want) {
		t.Errorf("failures of the parts %v, want %v", got, want)
	}
}

// TestAggregateKeyCombinations: an object whose keys' values make more
// than MaxKeyCombinations rows fails, counted in the keys' warning; one
// at the bound is in each of its rows.
func TestAggregateKeyCombinations(t *testing.T) {
	list := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = int64(i)
		}
		return out
	}
	wide := func(obj any) (any, error) {
		if indexersName(obj) == "big-0" {
			return list(41), nil // 41³ combinations
		}
		return list(8), nil // 8³ = 512 with the repeated elements
	}
	repeated := func(obj any) (any, error) {
		v, _ := wide(obj)
		return append(v.([]any), v.([]any)...), nil
	}
	spec := Spec{
		Keys:       []Key{{Name: "a", Value: wide}, {Name: "b", Value: repeated}, {Name: "c", Value: wide}},
		Aggregates: []Aggregate{{Name: "n", Func: FuncCount}},
	}
	res, err := Run(twoResources(t, []string{"big:1:x", "small:1:x"}, nil)[0], spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 8*8*8 {
		t.Errorf("%d rows, want those of the small object only, 512", len(res.Rows))
	}
	want := fmt.Sprintf("--group-by c: 1 of 2 objects failed: default/big-0: it has %d combinations of key values, more than %d", 41*41*41, MaxKeyCombinations)
	if len(res.Warnings) != 1 || res.Warnings[0].String() != want {
		t.Errorf("warnings %v, want %q", res.Warnings, want)
	}
	// The rows of one object stop when the query must.
	stopped := errors.New("stopped")
	checks := 0
	spec.Check = func() error {
		if checks++; checks > 2 {
			return stopped
		}
		return nil
	}
	spec.Stop = func(err error) bool { return errors.Is(err, stopped) }
	if _, err := Run(twoResources(t, []string{"small:1:x"}, nil)[0], spec); !errors.Is(err, stopped) {
		t.Errorf("a query stopped while adding an object to its rows: %v, want %v", err, stopped)
	}
}

// TestAggregateQuantileValues: an object adds at most 1024 values to a
// quantile; one with more is left out of it and counted.
func TestAggregateQuantileValues(t *testing.T) {
	value := func(obj any) (any, error) {
		n := 3
		if indexersName(obj) == "big-0" {
			n = maxQuantileValues + 1
		}
		out := make([]any, n)
		for i := range out {
			out[i] = int64(i)
		}
		return out, nil
	}
	res, err := Run(twoResources(t, []string{"big:1:x", "small:1:x"}, nil)[0], Spec{
		Aggregates: []Aggregate{{Name: "p", Func: FuncQuantile, Q: 1, Value: value}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Rows[0].Values()[0]; got != float64(2) || len(res.Warnings) != 1 || res.Warnings[0].Failed != 1 {
		t.Errorf("max of the small object's values: %v, warnings %v; want 2 and the big object counted", got, res.Warnings)
	}
}

// indexersName is the name of obj.
func indexersName(obj any) string {
	return indexers.ObjectName(obj)[len("default/"):]
}

// TestAggregateMixedInParts: over enough objects to be aggregated in
// parts on several goroutines, quantities and numbers of one row merge
// into the rows and warnings that one part gives.
func TestAggregateMixedInParts(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const n = 3 * parallelMin
	if partsOf(n) < 2 {
		t.Fatalf("%d objects are aggregated in %d part", n, partsOf(n))
	}
	specs := make([]string, n)
	for i := range specs {
		specs[i] = fmt.Sprintf("o%05d:%d:%s", i, i, []string{"a", "b"}[i%2])
	}
	idx := twoResources(t, specs, nil)[0]
	// Team a: the first objects give quantities, the others numbers.
	value := func(obj any) (any, error) {
		i, err := rankLabel(obj)
		if err != nil {
			return nil, err
		}
		if team, _ := teamLabel(obj); team == "a" && i.(int64) < n/4 {
			return resource.MustParse(fmt.Sprintf("%dm", i)), nil
		}
		return i, nil
	}
	spec := Spec{Keys: []Key{{Name: "team", Value: teamLabel}}}
	for _, f := range []Func{FuncSum, FuncAvg, FuncMin, FuncMax, FuncQuantile} {
		spec.Aggregates = append(spec.Aggregates, Aggregate{Name: f.String(), Func: f, Q: 0.5, Value: value})
	}
	parts, err := Run(idx, spec)
	if err != nil {
		t.Fatalf("in %d parts: %v", partsOf(n), err)
	}
	runtime.GOMAXPROCS(1)
	one, err := Run(idx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rowValues(parts), rowValues(one); !reflect.DeepEqual(got, want) {
		t.Errorf("rows in parts %v, want those of one part %v", got, want)
	}
	if got, want := fmt.Sprint(parts.Warnings, parts.MixedWarnings()), fmt.Sprint(one.Warnings, one.MixedWarnings()); got != want {
		t.Errorf("warnings in parts %s, want those of one part %s", got, want)
	}
	if len(one.MixedWarnings()) != len(spec.Aggregates) {
		t.Errorf("warnings %v, want one for each aggregate of team a", one.MixedWarnings())
	}
}
