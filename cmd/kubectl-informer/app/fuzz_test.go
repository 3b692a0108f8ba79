package app

import (
	"strings"
	"testing"
)

// FuzzFlagParsing feeds arbitrary --index, --columns and --by values to
// their parsers: each value is either parsed into a name and an
// expression (or value) or refused with an error naming the flag, and
// nothing panics.
func FuzzFlagParsing(f *testing.F) {
	for _, seed := range []string{
		"byNode=object.spec.nodeName", "=x", "name=", "noequals", "a=b=c",
		`phase=object.status.phase,node=object.spec.?nodeName.orValue("")`,
		`img=object.spec.containers.map(c, c.image).join(",")`, ",,,", "a=1,=2", "ü=ö", "a\x00=b",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		idx, errs := parseIndexes([]string{s})
		if len(idx)+len(errs) != 1 {
			t.Fatalf("--index %q: %d indexes and %d errors, want one of them", s, len(idx), len(errs))
		}
		for _, err := range errs {
			if !strings.Contains(err.Error(), "--index") {
				t.Errorf("--index %q: error %q does not name the flag", s, err)
			}
		}
		for _, e := range idx {
			if e.Name == "" || e.Expr == "" {
				t.Errorf("--index %q parsed into %+v", s, e)
			}
		}
		cols, errs := parseColumns([]string{s})
		for _, err := range errs {
			if !strings.Contains(err.Error(), "--columns") {
				t.Errorf("--columns %q: error %q does not name the flag", s, err)
			}
		}
		for _, c := range cols {
			if c.Name == "" || c.Expr == "" {
				t.Errorf("--columns %q parsed into %+v", s, c)
			}
		}
		if _, _, err := splitNamed(s, "--by", "INDEX=VALUE"); err != nil && !strings.Contains(err.Error(), "--by") {
			t.Errorf("--by %q: error %q does not name the flag", s, err)
		}
	})
}
