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
