package query

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
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
	// The values of the kind met first are summed, the others left out
	// and counted: the objects come in the indexer's order.
	got = []string{formatAggregate(res.Rows[0].Values()[0])}
	if len(res.Warnings) == 1 {
		got = append(got, strconv.Itoa(res.Warnings[0].Failed))
	}
	if !slices.Equal(got, []string{"350m", "1"}) && !slices.Equal(got, []string{"2", "2"}) {
		t.Errorf("sum of 100m, 2, 250m: %v, warnings %v; want 350m with the number left out, or 2 with the quantities left out", got, res.Warnings)
	}
}

// indexersName is the name of obj.
func indexersName(obj any) string {
	return indexers.ObjectName(obj)[len("default/"):]
}
