package exporter

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFamilyRowsInOrder adds, changes and removes objects of a plain family
// at random, as the engine does (an object gets a slot when it is first
// computed and gives it up when it is deleted), writing the family between
// batches, and checks each write against a model: every object's lines
// once, in the order of the objects' slots, and as many rows as the
// highest slot with lines. The garbage of its chunks stays within its
// bound after every change; with minGarbage 0 and writes only every
// thirtieth batch, updates compact it too, and with a small maxBlock
// compaction cuts the lines into many blocks.
func TestFamilyRowsInOrder(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed)) //nolint:gosec // G404: seeded test data, not a secret
			s := newFamilyState(&Family{Name: "x", Help: "h", Type: TypeGauge, LabelNames: []string{"uid"}}, 0)
			if seed%2 == 0 {
				s.minGarbage = 0
			}
			if seed%3 == 0 {
				// Compaction fills blocks of a few rows each.
				s.maxBlock = 64
			}
			slots := newObjectSlots()
			model := map[string]float64{}
			var sc writeScratch
			for batch := range 200 {
				// Batches of every size, from a single change to many.
				for range rng.IntN(1 + batch%40) {
					uid := fmt.Sprintf("u%03d", rng.IntN(300))
					switch rng.IntN(4) {
					case 0:
						if slot, ok := slots.lookup(uid); ok {
							s.set(&rowKey{uid: uid, slot: slot}, nil, 0, "")
							slots.release(uid)
						}
						delete(model, uid)
					default:
						v := float64(rng.IntN(1000))
						s.set(&rowKey{uid: uid, slot: slots.assign(uid)}, []sample{{labels: []string{uid}, value: v}}, 0, "")
						model[uid] = v
					}
					if garbage := s.held - s.live; garbage > max(s.live, s.minGarbage) {
						t.Fatalf("batch %d: %d bytes of garbage for %d live", batch, garbage, s.live)
					}
				}
				if s.minGarbage == 0 && batch%30 != 29 {
					// Unscraped, garbage accrues until updates compact.
					continue
				}
				var buf bytes.Buffer
				w := bufio.NewWriter(&buf)
				s.write(w, writeStyle{}, true, &sc)
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				bySlot := slices.SortedFunc(maps.Keys(model), func(a, b string) int {
					sa, _ := slots.lookup(a)
					sb, _ := slots.lookup(b)
					return cmp.Compare(sa, sb)
				})
				want := "# HELP x h\n# TYPE x gauge\n"
				rows := 0
				for _, uid := range bySlot {
					want += fmt.Sprintf("x{uid=%q} %s\n", uid, formatValue(model[uid]))
					slot, _ := slots.lookup(uid)
					rows = int(slot) + 1
				}
				if got := buf.String(); got != want {
					t.Fatalf("batch %d: wrote\n%s\nwant\n%s", batch, got, want)
				}
				if len(s.rows) != rows || s.series != len(model) {
					t.Fatalf("batch %d: %d rows, %d series; want %d and %d", batch, len(s.rows), s.series, rows, len(model))
				}
			}
		})
	}
}

// TestFamilyUnchangedUpdateMakesNoGarbage: an update that renders the
// object's lines as they were keeps them, and takes no memory; one that
// changes them writes new ones.
func TestFamilyUnchangedUpdateMakesNoGarbage(t *testing.T) {
	s := newFamilyState(&Family{Name: "x", Help: "h", Type: TypeGauge, LabelNames: []string{"uid"}}, 0)
	one := []sample{{labels: []string{"a"}, value: 1}, {labels: []string{"a2"}, value: 2}}
	s.set(&rowKey{uid: "a"}, one, 0, "")
	s.set(&rowKey{uid: "b", slot: 1}, []sample{{labels: []string{"b"}, value: 1}}, 0, "")
	held, live := s.held, s.live
	first := s.rows[0]
	for range 100 {
		s.set(&rowKey{uid: "a"}, slices.Clone(one), 0, "")
	}
	if s.held != held || s.live != live || s.rows[0] != first {
		t.Fatalf("unchanged updates: held %d, live %d, want %d and %d, and the same lines", s.held, s.live, held, live)
	}
	s.set(&rowKey{uid: "a"}, []sample{{labels: []string{"a"}, value: 3}, {labels: []string{"a2"}, value: 2}}, 0, "")
	if s.held <= held || s.live != live {
		t.Fatalf("changed update: held %d (was %d), live %d (was %d): want more held, the same live", s.held, held, s.live, live)
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	s.write(w, writeStyle{}, true, &writeScratch{})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "# HELP x h\n# TYPE x gauge\nx{uid=\"a\"} 3\nx{uid=\"a2\"} 2\nx{uid=\"b\"} 1\n"
	if buf.String() != want {
		t.Fatalf("wrote\n%s\nwant\n%s", buf.String(), want)
	}
}

// TestShareHead stores rows of lines that begin alike, at random, and
// checks that writing them out gives the lines back byte for byte, and
// that the stored row is shorter whenever its second line begins with 4 or
// more bytes of the first.
func TestShareHead(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7)) //nolint:gosec // G404: seeded test data, not a secret
	alphabet := []byte(`{}",=ab` + "\x01\x80\xff ")
	word := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	for round := range 2000 {
		common := word(rng.IntN(40))
		var row []byte
		lines := 1 + rng.IntN(6)
		for k := range lines {
			line := append([]byte{'{'}, common[:rng.IntN(len(common)+1)]...)
			line = append(line, word(rng.IntN(8))...)
			line = append(line, fmt.Sprintf("} %d\n", k)...)
			row = append(row, line...)
		}
		want := string(row)
		if round == 0 {
			// A common part longer than a continued line can refer to.
			long := bytes.Repeat([]byte{'a'}, maxHead+10)
			row = fmt.Appendf(nil, "{%s} 0\n{%s} 1\n", long, long)
			want = string(row)
		}
		stored := shareHead(row)
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		writeLines(w, "m", stored, nil)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		var expanded strings.Builder
		for _, l := range strings.SplitAfter(want, "\n") {
			if l != "" {
				expanded.WriteString("m" + l)
			}
		}
		if buf.String() != expanded.String() {
			t.Fatalf("round %d: wrote\n%q\nwant\n%q", round, buf.String(), expanded.String())
		}
		if countLines(stored) != strings.Count(want, "\n") {
			t.Fatalf("round %d: %d lines stored, want %d", round, countLines(stored), strings.Count(want, "\n"))
		}
		// The second line is compared with the first.
		wantLines := strings.SplitAfter(want, "\n")
		shares := false
		if len(wantLines) > 2 {
			p := 0
			for p < len(wantLines[1]) && p < len(wantLines[0]) && wantLines[1][p] == wantLines[0][p] {
				p++
			}
			shares = p >= 4
		}
		if shares && len(stored) >= len(want) {
			t.Fatalf("round %d: stored %d bytes for %d", round, len(stored), len(want))
		}
	}
}

// TestAppendValue checks the formatting of sample values against what the
// exposition formats write (client_golang's expfmt): strconv's shortest
// 'g' form, and +Inf, -Inf and NaN.
func TestAppendValue(t *testing.T) {
	want := func(v float64) string {
		switch {
		case math.IsInf(v, 1):
			return "+Inf"
		case math.IsInf(v, -1):
			return "-Inf"
		case math.IsNaN(v):
			return "NaN"
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	values := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-5, 42, 999999, -999999, 1e6, -1e6, 1000001, 1.5e6,
		1764201600, 1.610612736e+09, 1e21, math.MaxInt64, math.MinInt64, math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.Inf(1), math.Inf(-1), math.NaN()}
	r := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // G404: seeded test data, not a secret
	for range 100000 {
		values = append(values, float64(r.IntN(4_000_000)-2_000_000), math.Float64frombits(r.Uint64()), r.NormFloat64()*1e6)
	}
	for _, v := range values {
		got := string(appendValue([]byte("x "), v))
		if got != "x "+want(v) {
			t.Fatalf("appendValue(%v) = %q, want %q", v, got, "x "+want(v))
		}
	}
}

// TestNeedsEscape checks every byte: only a backslash, a newline and a
// double quote are escaped in label values.
func TestNeedsEscape(t *testing.T) {
	for c := range 256 {
		v := "a" + string([]byte{byte(c)}) + "b"
		if want := c == '\\' || c == '\n' || c == '"'; needsEscape(v) != want {
			t.Errorf("needsEscape(%q) = %t, want %t", v, !want, want)
		}
	}
}
