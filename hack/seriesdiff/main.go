// Command seriesdiff compares two Prometheus expositions family by family:
// HELP, TYPE and the set of series (label sets, in any label order, and
// values), as Prometheus would see them. It is how the exporter's
// kube-state-metrics profile is checked against kube-state-metrics itself
// on the same cluster.
//
//	seriesdiff [-families REGEX] [-ignore-families REGEX] [-show N] A B
//
// A and B are files or http(s) URLs of /metrics. Families present on one
// side only are reported too. The exit code is 0 when every compared family
// is the same, 1 when one differs, 2 on bad input.
package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-informer/kubectl-informer/internal/seriesset"
)

func main() {
	families := flag.String("families", "", "compare only the families whose names match this regular expression (anchored)")
	ignore := flag.String("ignore-families", "", "leave out the families whose names match this regular expression (anchored)")
	show := flag.Int("show", 5, "differing series to show per family and side")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: seriesdiff [-families REGEX] [-ignore-families REGEX] [-show N] A B")
		os.Exit(2)
	}
	match := func(expr string) *regexp.Regexp {
		if expr == "" {
			return nil
		}
		re, err := regexp.Compile("^(?:" + expr + ")$")
		if err != nil {
			fmt.Fprintln(os.Stderr, "seriesdiff:", err)
			os.Exit(2)
		}
		return re
	}
	only, skip := match(*families), match(*ignore)
	a, err := load(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "seriesdiff:", err)
		os.Exit(2)
	}
	b, err := load(flag.Arg(1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "seriesdiff:", err)
		os.Exit(2)
	}
	names := sets.New[string]()
	for n := range a {
		names.Insert(n)
	}
	for n := range b {
		names.Insert(n)
	}
	differ, same, series := 0, 0, 0
	for _, n := range slices.Sorted(maps.Keys(names)) {
		if (only != nil && !only.MatchString(n)) || (skip != nil && skip.MatchString(n)) {
			continue
		}
		fa, inA := a[n]
		fb, inB := b[n]
		var problems []string
		switch {
		case !inA && len(fb.Series) == 0, !inB && len(fa.Series) == 0:
			// A family without series is the same as none to Prometheus.
		case !inA:
			problems = append(problems, fmt.Sprintf("only in B (%d series)", len(fb.Series)))
		case !inB:
			problems = append(problems, fmt.Sprintf("only in A (%d series)", len(fa.Series)))
		default:
			if fa.Help != fb.Help {
				problems = append(problems, fmt.Sprintf("HELP %q vs %q", fa.Help, fb.Help))
			}
			if fa.Type != fb.Type {
				problems = append(problems, fmt.Sprintf("TYPE %s vs %s", fa.Type, fb.Type))
			}
			onlyA, onlyB := seriesset.Minus(fa.Series, fb.Series), seriesset.Minus(fb.Series, fa.Series)
			if len(onlyA)+len(onlyB) > 0 {
				problems = append(problems, fmt.Sprintf("%d series only in A, %d only in B (of %d and %d)", len(onlyA), len(onlyB), len(fa.Series), len(fb.Series)))
				for _, s := range onlyA[:min(*show, len(onlyA))] {
					problems = append(problems, "  A: "+s)
				}
				for _, s := range onlyB[:min(*show, len(onlyB))] {
					problems = append(problems, "  B: "+s)
				}
			}
		}
		if len(problems) == 0 {
			same++
			series += len(fa.Series)
			continue
		}
		differ++
		fmt.Printf("%s: %s\n", n, strings.Join(problems, "\n"))
	}
	fmt.Printf("%d families the same (%d series), %d differ\n", same, series, differ)
	if differ > 0 {
		os.Exit(1)
	}
}

func load(src string) (map[string]seriesset.Family, error) {
	var r io.Reader
	if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
		resp, err := http.Get(src) //nolint:gosec,noctx // G107: the URL the user names
		if err != nil {
			return nil, err
		}
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %s", src, resp.Status)
		}
		r = resp.Body
	} else {
		f, err := os.Open(src) //nolint:gosec // G304: the file the user names
		if err != nil {
			return nil, err
		}
		defer func() { _ = f.Close() }()
		r = f
	}
	fams, err := seriesset.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	return fams, nil
}
