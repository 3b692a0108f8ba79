package query

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func TestCompareOrder(t *testing.T) {
	// In ascending order; each value is strictly less than the next.
	ordered := []any{
		nil,
		false,
		true,
		math.NaN(),
		math.Inf(-1),
		int64(-3),
		int32(-2),
		-1.5,
		int64(0),
		int64(2),
		2.5,
		int64(10),
		uint64(math.MaxUint64),
		"",
		"10",
		"2",
		"B",
		"a",
		[]any{},
		[]any{int64(1)},
		[]any{int64(1), "x"},
		[]string{"a"},
		map[string]any{},
		map[string]any{"a": int64(1)},
		map[string]string{"b": ""},
		struct{}{},
	}
	for i, a := range ordered {
		for j, b := range ordered {
			got := Compare(a, b)
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got != want {
				t.Errorf("Compare(%#v, %#v) = %d, want %d", a, b, got, want)
			}
		}
	}
	shuffled := slices.Clone(ordered)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] }) //nolint:gosec // G404: seeded test data, not a secret
	slices.SortStableFunc(shuffled, Compare)
	// NaN != NaN, so compare the formatted forms.
	var got, want []string
	for i := range ordered {
		got = append(got, FormatValue(shuffled[i]))
		want = append(want, FormatValue(ordered[i]))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sorted = %q, want %q", got, want)
	}
}

func TestCompareEqualNumbers(t *testing.T) {
	for _, pair := range [][2]any{{int64(3), int(3)}, {int32(7), uint8(7)}, {1.5, float32(1.5)}} {
		if c := Compare(pair[0], pair[1]); c != 0 {
			t.Errorf("Compare(%#v, %#v) = %d, want 0", pair[0], pair[1], c)
		}
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{nil, "<none>"},
		{"", ""},
		{"x y", "x y"},
		{true, "true"},
		{int64(-7), "-7"},
		{int(7), "7"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{3.0, "3"},
		{0.25, "0.25"},
		{1e21, "1e+21"},
		{1e-7, "1e-07"},
		{123456789.0, "123456789"},
		{float32(0.1), "0.1"},
		{[]any{"a", int64(1), nil, []any{"b", "c"}}, "a,1,<none>,b,c"},
		{[]any{}, "<none>"},
		{[]string{"a", "b"}, "a,b"},
		{[]int{1, 2}, "1,2"},
		{map[string]any{"z": "1", "a": map[string]any{}}, `{"a":{},"z":"1"}`},
		{map[string]string{"k": "v"}, `{"k":"v"}`},
		{map[string]int{"k": 1}, `{"k":1}`},
		{&EvalError{Err: errTest}, "<error>"},
		{struct{ A int }{1}, "{1}"},
	}
	for _, tt := range tests {
		if got := FormatValue(tt.v); got != tt.want {
			t.Errorf("FormatValue(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

var errTest = errors.New("test")
