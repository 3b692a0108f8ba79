package seriesset

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseIgnoresOrder(t *testing.T) {
	a, err := Parse(strings.NewReader(`# HELP m A metric.
# TYPE m gauge
m{b="2",a="1"} 1
m{a="3",b="4"} 2.5
# TYPE c counter
c_total 7
`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(strings.NewReader(`# TYPE c counter
c_total 7
# HELP m A metric.
# TYPE m gauge
m{a="3",b="4"} 2.5
m{a="1",b="2"} 1
`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("the same series in another order differ:\n%s", diff)
	}
	want := Family{Help: "A metric.", Type: "gauge", Series: []string{`m{a="1",b="2"} 1`, `m{a="3",b="4"} 2.5`}}
	if diff := cmp.Diff(want, a["m"]); diff != "" {
		t.Fatalf("family m (-want +got):\n%s", diff)
	}
	if got := Minus([]string{"a", "b", "c"}, []string{"b"}); !cmp.Equal(got, []string{"a", "c"}) {
		t.Fatalf("Minus = %q", got)
	}
}

// TestParseExactKeepsEmptyLabels: Parse reads a label written empty as no
// label, as Prometheus stores it; ParseExact keeps it, as a diff of the
// text sees it.
func TestParseExactKeepsEmptyLabels(t *testing.T) {
	const empty, none = "m{a=\"1\",b=\"\"} 1\n", "m{a=\"1\"} 1\n"
	for _, tt := range []struct {
		parse func(r *strings.Reader) (map[string]Family, error)
		equal bool
	}{
		{func(r *strings.Reader) (map[string]Family, error) { return Parse(r) }, true},
		{func(r *strings.Reader) (map[string]Family, error) { return ParseExact(r) }, false},
	} {
		a, err := tt.parse(strings.NewReader(empty))
		if err != nil {
			t.Fatal(err)
		}
		b, err := tt.parse(strings.NewReader(none))
		if err != nil {
			t.Fatal(err)
		}
		if got := cmp.Equal(a, b); got != tt.equal {
			t.Errorf("%q and %q read alike: %v, want %v (%q, %q)", empty, none, got, tt.equal, a["m"].Series, b["m"].Series)
		}
	}
}
