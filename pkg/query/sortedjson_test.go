package query

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// shuffled writes v as compact JSON with the members of every object in
// a random order, as a struct's encoding may order them.
func shuffled(b *strings.Builder, v any, r *rand.Rand) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			key, _ := json.Marshal(k)
			b.Write(key)
			b.WriteByte(':')
			shuffled(b, v[k], r)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			shuffled(b, e, r)
		}
		b.WriteByte(']')
	default:
		out, _ := json.Marshal(v)
		b.Write(out)
	}
}

// randomValue returns a JSON value of maps, lists, strings (with quotes,
// escapes, HTML characters, unicode, keys that sort differently escaped
// and unescaped), numbers, booleans and nulls.
func randomValue(r *rand.Rand, depth int) any {
	words := []string{"a", "b", "B", "aa", "a/b", "a.b", "z", "", "é", "<x>", "x&y", `q"uote`, `back\slash`, "tab\t", "line\nfeed", "\u2028", "~", "A", "0", "10", "9"}
	switch n := r.IntN(8); {
	case depth > 3 || n < 3:
		switch r.IntN(5) {
		case 0:
			return words[r.IntN(len(words))]
		case 1:
			return r.Float64() * 1e6
		case 2:
			return int64(r.Int64N(1 << 60))
		case 3:
			return r.IntN(2) == 0
		default:
			return nil
		}
	case n < 6:
		m := map[string]any{}
		for range r.IntN(6) {
			m[words[r.IntN(len(words))]+words[r.IntN(len(words))]] = randomValue(r, depth+1)
		}
		return m
	default:
		l := []any{}
		for range r.IntN(4) {
			l = append(l, randomValue(r, depth+1))
		}
		return l
	}
}

// TestSortMembers: JSON whose objects' members come in any order comes
// out as encoding/json encodes the same maps.
func TestSortMembers(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // G404: a fixed seed, for repeatable cases
	for i := range 2000 {
		v := map[string]any{"root": randomValue(r, 0), fmt.Sprint(i): randomValue(r, 1)}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var in strings.Builder
		shuffled(&in, v, r)
		var got bytes.Buffer
		if err := sortMembers(&got, []byte(in.String()), nil); err != nil {
			t.Fatalf("%s: %v", in.String(), err)
		}
		if got.String() != string(want) {
			t.Fatalf("sorted\n%s\ninto\n%s\nwant\n%s", in.String(), got.String(), want)
		}
		// Sorted and indented in one pass: json.Indent's indentation of
		// the sorted JSON, with the prefix and unit of a List's items and
		// others.
		for _, ind := range []indent{{prefix: itemIndent, unit: jsonIndent}, {unit: "\t"}, {prefix: ">", unit: ""}} {
			var wantIndented, gotIndented bytes.Buffer
			if err := json.Indent(&wantIndented, want, ind.prefix, ind.unit); err != nil {
				t.Fatal(err)
			}
			if err := sortMembers(&gotIndented, []byte(in.String()), &ind); err != nil {
				t.Fatalf("%s: %v", in.String(), err)
			}
			if gotIndented.String() != wantIndented.String() {
				t.Fatalf("sorted and indented (%q, %q)\n%s\ninto\n%s\nwant\n%s", ind.prefix, ind.unit, in.String(), gotIndented.String(), wantIndented.String())
			}
		}
	}
}

// TestSortMembersRefusesBrokenJSON: what is not JSON is an error, never a
// panic.
func TestSortMembersRefusesBrokenJSON(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,}`, `[1,`, `["x]`, `{"a":1}x`, `{1:2}`, `[`, `{"a":[}`} {
		var out, indented bytes.Buffer
		if err := sortMembers(&out, []byte(in), nil); err == nil {
			t.Errorf("%q: no error, wrote %q", in, out.String())
		}
		if err := sortMembers(&indented, []byte(in), &indent{unit: "  "}); err == nil {
			t.Errorf("%q: no error, indented %q", in, indented.String())
		}
	}
}
