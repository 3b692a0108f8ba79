// Package suggest finds, among known words, the one a misspelt word was
// likely meant to be: for "did you mean …?" messages.
package suggest

import (
	"strings"
	"unicode/utf8"
)

// MaxWord bounds the words Closest compares: a longer one is no likely
// misspelling of a name, and is given no suggestion.
const MaxWord = 256

// Closest returns the candidate closest to word when it is close enough to
// be a likely misspelling: within one edit for words of up to four
// characters, two otherwise, comparing without regard to case. Candidates
// equal to word are skipped; of equally close candidates the earliest wins,
// so callers order candidates by preference. Its work is bounded whatever
// word is: a word of more than MaxWord bytes is compared with none, and
// the distance to a candidate is computed only when their lengths differ
// by no more than the edits allowed.
func Closest(word string, candidates []string) (string, bool) {
	if len(word) > MaxWord {
		return "", false
	}
	n := utf8.RuneCountInString(word)
	limit := 2
	if n <= 4 {
		limit = 1
	}
	lw := strings.ToLower(word)
	best, bestDistance := "", limit+1
	for _, c := range candidates {
		if c == word {
			continue
		}
		// Each edit changes the length by one at most.
		if m := utf8.RuneCountInString(c); m < n-limit || m > n+limit {
			continue
		}
		if d := Distance(lw, strings.ToLower(c)); d < bestDistance {
			best, bestDistance = c, d
		}
	}
	return best, best != ""
}

// Distance is the number of single-character insertions, deletions,
// substitutions and transpositions of adjacent characters that turn a into
// b (the optimal string alignment distance).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j].
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
