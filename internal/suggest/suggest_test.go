package suggest

import "testing"

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
