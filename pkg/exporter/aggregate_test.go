package exporter

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
)

// TestAggregatesDoNotDrift adds, changes and removes the series of objects
// of sum, min, max and count families at random, with values of very
// different magnitudes (1e16 and 1 and 0.1, whose float sums depend on
// their order), and checks every write against the aggregates recomputed
// from scratch from the objects' current values: the sum exactly, with
// rational arithmetic, rounded once.
func TestAggregatesDoNotDrift(t *testing.T) {
	values := []float64{1e16, -1e16, 1, -1, 0.1, 0.2, -0.3, 1e-16, 3.14159, -2.5, 1e300, -1e300, 7e-300, 0, math.Copysign(0, -1), 123456789.123}
	for _, agg := range []string{AggregateSum, AggregateMin, AggregateMax, AggregateCount} {
		for _, seed := range []uint64{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/%d", agg, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 7)) //nolint:gosec // G404: seeded test data, not a secret
				s := newFamilyState(&Family{Name: "x", Help: "h", Type: TypeGauge, LabelNames: []string{"g"}, Aggregate: agg}, 0)
				model := map[string][]sample{} // uid → its series
				for step := range 20000 {
					uid := fmt.Sprintf("u%02d", rng.IntN(40))
					if rng.IntN(5) == 0 {
						s.set(&rowKey{uid: uid}, nil, 0, "")
						delete(model, uid)
					} else {
						var samples []sample
						for range 1 + rng.IntN(3) {
							samples = append(samples, sample{labels: []string{fmt.Sprint(rng.IntN(3))}, value: values[rng.IntN(len(values))]})
						}
						s.set(&rowKey{uid: uid}, samples, 0, "")
						model[uid] = samples
					}
					if step%500 != 499 {
						continue
					}
					if got, want := writeFamily(t, s), recomputed(agg, model); got != want {
						t.Fatalf("step %d: wrote\n%s\nrecomputed from scratch:\n%s", step, got, want)
					}
				}
			})
		}
	}
}

// writeFamily returns s written in the text format.
func writeFamily(t *testing.T, s *familyState) string {
	t.Helper()
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	s.write(w, writeStyle{}, true, &writeScratch{})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// recomputed is the exposition of family x aggregated by agg over the
// samples of model, computed from scratch.
func recomputed(agg string, model map[string][]sample) string {
	members := map[string][]float64{}
	for _, samples := range model {
		for _, smp := range samples {
			members[smp.labels[0]] = append(members[smp.labels[0]], smp.value)
		}
	}
	out := "# HELP x h\n# TYPE x gauge\n"
	for _, g := range slices.Sorted(maps.Keys(members)) {
		vs := members[g]
		var v float64
		switch agg {
		case AggregateCount:
			v = float64(len(vs))
		case AggregateSum:
			sum := new(big.Rat)
			for _, x := range vs {
				sum.Add(sum, new(big.Rat).SetFloat64(x))
			}
			v, _ = sum.Float64()
		case AggregateMin:
			v = slices.Min(vs)
		case AggregateMax:
			v = slices.Max(vs)
		}
		if v == 0 {
			v = 0 // the exposition does not tell -0 from 0
		}
		out += fmt.Sprintf("x{g=%q} %s\n", g, formatValue(v))
	}
	return out
}

// TestNonFiniteValuesAreErrors checks that a value of NaN or ±Inf, as CEL
// gives for a division by zero, is an evaluation error: counted, the series
// left out, and nothing of it kept, so that the aggregates are right again
// once the objects have finite values.
func TestNonFiniteValuesAreErrors(t *testing.T) {
	env, err := indexers.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	// value: the pod's first restart count divided by its second.
	const ratio = "double(object.status.containerStatuses[0].restartCount) / double(object.status.containerStatuses[1].restartCount)"
	byNode := map[string]string{"node": "object.spec.nodeName"}
	c := &Compiled{Resources: []*CompiledResource{{
		Config: ResourceConfig{Resource: "pods"},
		Families: []*Family{
			family(t, env, "ratio", TypeGauge, "Ratio.", map[string]string{"pod": "object.metadata.name"}, ratio, "", ""),
			family(t, env, "ratio_added", TypeGauge, "Sum of ratios.", byNode, ratio, "", AggregateSum),
			family(t, env, "ratio_min", TypeGauge, "Least ratio.", byNode, ratio, "", AggregateMin),
			family(t, env, "ratio_max", TypeGauge, "Largest ratio.", byNode, ratio, "", AggregateMax),
		},
	}}}
	e := NewEngine(c, EngineOptions{})
	t.Cleanup(e.Close)
	e.Update(0, pod("shop", "a", "u1", "n1", "Running", 1, 0)) // +Inf
	e.Update(0, pod("shop", "b", "u2", "n1", "Running", 0, 0)) // NaN
	e.Update(0, pod("shop", "c", "u3", "n1", "Running", 3, 2)) // 1.5
	want := `# HELP ratio Ratio.
# TYPE ratio gauge
ratio{pod="c"} 1.5
# HELP ratio_added Sum of ratios.
# TYPE ratio_added gauge
ratio_added{node="n1"} 1.5
# HELP ratio_min Least ratio.
# TYPE ratio_min gauge
ratio_min{node="n1"} 1.5
# HELP ratio_max Largest ratio.
# TYPE ratio_max gauge
ratio_max{node="n1"} 1.5
`
	if got := exposition(e, false); got != want {
		t.Errorf("with an infinite and a NaN value:\n%s\nwant:\n%s", got, want)
	}
	for i, fs := range e.resources[0].families {
		series, _, errs := fs.stats()
		if series != 1 || errs != 2 {
			t.Errorf("%s: %d series, %d errors; want 1 and 2", fs.f.Name, series, errs)
		}
		fs.mu.Lock()
		last := fs.lastError
		fs.mu.Unlock()
		if wantErr := fmt.Sprintf("metric %q: value is NaN; it must be a finite number (check for a division by zero)", fs.f.Name); last != wantErr {
			t.Errorf("family %d: last error %q, want %q", i, last, wantErr)
		}
	}

	// Once the pods have finite values, the aggregates are theirs.
	e.Update(0, pod("shop", "a", "u1", "n1", "Running", 1, 4))
	e.Update(0, pod("shop", "b", "u2", "n1", "Running", 1, 2))
	e.Delete(0, pod("shop", "c", "u3", "n1", "Running"))
	want = `# HELP ratio Ratio.
# TYPE ratio gauge
ratio{pod="a"} 0.25
ratio{pod="b"} 0.5
# HELP ratio_added Sum of ratios.
# TYPE ratio_added gauge
ratio_added{node="n1"} 0.75
# HELP ratio_min Least ratio.
# TYPE ratio_min gauge
ratio_min{node="n1"} 0.25
# HELP ratio_max Largest ratio.
# TYPE ratio_max gauge
ratio_max{node="n1"} 0.5
`
	if got := exposition(e, false); got != want {
		t.Errorf("once the values are finite:\n%s\nwant:\n%s", got, want)
	}
	lint(t, exposition(e, false))
}
