package suggest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"pods", "pods", 0}, {"podz", "pods", 1}, {"staus", "status", 1},
		{"stauts", "status", 1}, {"deploymnt", "deployment", 1}, {"abc", "", 3}, {"ñandú", "nandu", 2},
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	for _, tt := range []struct {
		word       string
		candidates []string
		want       string
		ok         bool
	}{
		{"staus", []string{"spec", "status", "metadata"}, "status", true},
		{"podz", []string{"pods", "pod"}, "pods", true}, // the earlier of equally close ones
		{"podz", []string{"pod", "pods"}, "pod", true},
		{"Status", []string{"status"}, "status", true},
		{"xyz", []string{"status"}, "", false},
		{"pods", []string{"pods"}, "", false},
		{"abcd", []string{"abxy"}, "", false}, // short words allow one edit
	} {
		got, ok := Closest(tt.word, tt.candidates)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Closest(%q, %q) = %q, %v; want %q, %v", tt.word, tt.candidates, got, ok, tt.want, tt.ok)
		}
	}
}

// TestClosestBoundedWork: the memory Closest allocates does not grow with
// the word it is given (each distance computed allocates a table of the
// two lengths' product): a word of 100,000 bytes, and one just within
// MaxWord among a thousand short candidates, cost a few kilobytes.
func TestClosestBoundedWork(t *testing.T) {
	candidates := make([]string, 1000)
	for i := range candidates {
		candidates[i] = fmt.Sprintf("kind%03d", i)
	}
	for _, word := range []string{strings.Repeat("a", 100_000), strings.Repeat("kind", MaxWord/4)} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, ok := Closest(word, candidates)
		runtime.ReadMemStats(&after)
		if ok {
			t.Errorf("Closest(a word of %d bytes) = %q, want none", len(word), got)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<10 {
			t.Errorf("Closest(a word of %d bytes, %d candidates) allocated %d bytes, want at most 64 KiB", len(word), len(candidates), alloc)
		}
	}
	// Still found: candidates within the edits allowed.
	if got, ok := Closest("kind00", candidates); !ok || got != "kind000" {
		t.Errorf("Closest(kind00) = %q, %v; want kind000", got, ok)
	}
}
