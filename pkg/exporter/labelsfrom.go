package exporter

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/util/sets"
)

// KeyFilter selects the keys of a labelsFrom map: exact keys, and
// patterns with one '*' that stands for any characters. A filter whose
// first entry is "*" selects every key (a "*" elsewhere is ignored).
type KeyFilter struct {
	all      bool
	exact    sets.Set[string]
	patterns []*regexp.Regexp
}

// NewKeyFilter returns the filter of the keys in list, as
// kube-state-metrics reads an entry of --metric-labels-allowlist. An
// entry with more than one '*' is an error.
func NewKeyFilter(list []string) (*KeyFilter, error) {
	f := &KeyFilter{exact: sets.New[string]()}
	for i, k := range list {
		switch n := strings.Count(k, "*"); {
		case k == "*":
			if i == 0 {
				f.all = true
			}
		case n == 0:
			f.exact.Insert(k)
		case n == 1:
			before, after, _ := strings.Cut(k, "*")
			f.patterns = append(f.patterns, regexp.MustCompile("^"+regexp.QuoteMeta(before)+".*"+regexp.QuoteMeta(after)+"$"))
		default:
			return nil, fmt.Errorf("%q has %d wildcards; a key may have one '*'", k, n)
		}
	}
	return f, nil
}

// Allows reports whether the filter selects key.
func (f *KeyFilter) Allows(key string) bool {
	if f == nil || f.all || f.exact.Has(key) {
		return true
	}
	for _, re := range f.patterns {
		if re.MatchString(key) {
			return true
		}
	}
	return false
}

// ParseAllowlist reads an allowlist option in kube-state-metrics'
// syntax: RESOURCE=[KEY,KEY,…],… such as pods=[app,team],*=[*]. An empty
// string is an empty allowlist.
func ParseAllowlist(s string) (map[string][]string, error) {
	out := map[string][]string{}
	rest := strings.TrimSpace(s)
	for rest != "" {
		name, after, ok := strings.Cut(rest, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, "[],") || !strings.HasPrefix(after, "[") {
			return nil, fmt.Errorf("%q: write RESOURCE=[KEY,KEY,...],RESOURCE=[...], such as pods=[app,team] or *=[*]", s)
		}
		keys, tail, ok := strings.Cut(after[1:], "]")
		if !ok || strings.Contains(keys, "[") {
			return nil, fmt.Errorf("%q: a '[' of %s is not closed; write RESOURCE=[KEY,KEY,...]", s, name)
		}
		list := []string{}
		if strings.TrimSpace(keys) != "" {
			for _, k := range strings.Split(keys, ",") {
				k = strings.TrimSpace(k)
				if k == "" {
					return nil, fmt.Errorf("%q: %s has an empty key", s, name)
				}
				if n := strings.Count(k, "*"); n > 1 {
					return nil, fmt.Errorf("%q: key %q of %s has %d wildcards; a key may have one '*'", s, k, name, n)
				}
				list = append(list, k)
			}
		}
		if prev, ok := out[name]; ok {
			list = append(prev, list...)
		}
		out[name] = list
		tail = strings.TrimSpace(tail)
		if tail != "" && !strings.HasPrefix(tail, ",") {
			return nil, fmt.Errorf("%q: expected ',' after %s=[...]", s, name)
		}
		rest = strings.TrimSpace(strings.TrimPrefix(tail, ","))
		if strings.HasPrefix(tail, ",") && rest == "" {
			return nil, fmt.Errorf("%q ends with ','", s)
		}
	}
	return out, nil
}

// SetAllowlists selects the keys of the labelsFrom maps of c's families
// with an allowlist: labels for "labels", annotations for "annotations",
// each by the resource's name as its entry writes it, or by "*", which
// stands for every resource and takes precedence, as in
// kube-state-metrics. A family whose resource the allowlist does not name
// (or names with no key) has no series. Call it before the engine is made.
func (c *Compiled) SetAllowlists(labels, annotations map[string][]string) error {
	var errs []error
	for _, r := range c.Resources {
		for _, f := range r.Families {
			var lists map[string][]string
			switch f.LabelsAllowlist {
			case AllowlistLabels:
				lists = labels
			case AllowlistAnnotations:
				lists = annotations
			default:
				continue
			}
			keys, ok := lists["*"]
			if !ok {
				keys, ok = lists[r.Config.Resource]
			}
			f.NoLabelsSeries = !ok || len(keys) == 0
			f.LabelKeys = nil
			if f.NoLabelsSeries {
				continue
			}
			kf, err := NewKeyFilter(keys)
			if err != nil {
				errs = append(errs, fmt.Errorf("the %s allowlist of %s: %w", f.LabelsAllowlist, r.Config.Resource, err))
				continue
			}
			f.LabelKeys = kf
		}
	}
	return errors.Join(errs...)
}

// extraLabel is a label a labelsFrom map adds.
type extraLabel struct{ name, value string }

// mapLabels turns a labelsFrom map into labels named prefix_KEY (see
// LabelsFromConfig), keeping the keys keys allows.
func mapLabels(v ref.Val, prefix string, verbatim bool, keys *KeyFilter) ([]extraLabel, error) {
	m, ok := v.(traits.Mapper)
	if !ok {
		return nil, fmt.Errorf("labelsFrom must be a map, got %s", v.Type().TypeName())
	}
	type entry struct{ key, value string }
	var entries []entry
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		key, ok := k.(types.String)
		if !ok {
			return nil, fmt.Errorf("labelsFrom's keys must be strings, got %s", k.Type().TypeName())
		}
		if !keys.Allows(string(key)) {
			continue
		}
		val := m.Get(k)
		if _, null := val.(types.Null); null {
			continue
		}
		value, absent := labelValue(val)
		if absent {
			continue
		}
		entries = append(entries, entry{string(key), value})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	out := make([]extraLabel, len(entries))
	// at maps a name given out to its label; conflicts counts the suffixes
	// given out per base name.
	at := make(map[string]int, len(entries))
	conflicts := map[string]int{}
	next := func(base string) string {
		for {
			conflicts[base]++
			name := base + "_conflict" + strconv.Itoa(conflicts[base])
			if _, taken := at[name]; !taken {
				return name
			}
		}
	}
	for i, e := range entries {
		base := prefix + "_" + labelKeyName(e.key)
		if verbatim {
			base = sanitizedLabelName(e.key)
		}
		name := base
		if _, seen := conflicts[base]; seen {
			name = next(base)
		} else if j, taken := at[base]; taken {
			// The first label of this name becomes NAME_conflict1.
			renamed := next(base)
			delete(at, base)
			out[j].name, at[renamed] = renamed, j
			name = next(base)
		}
		at[name] = i
		out[i] = extraLabel{name, e.value}
	}
	return out, nil
}

// labelKeyName is a map key as a label name's end: other characters than
// ASCII letters, digits and '_' become '_', "aB" becomes "a_b", all in
// lower case.
func labelKeyName(key string) string {
	b := make([]byte, 0, len(key)+4)
	var prev byte
	for i := 0; i < len(key); {
		c := key[i]
		if c >= 0x80 {
			// One '_' per character, as a regular expression over runes
			// replaces it.
			_, size := utf8.DecodeRuneInString(key[i:])
			b = append(b, '_')
			prev = '_'
			i += size
			continue
		}
		switch {
		case c >= 'A' && c <= 'Z':
			if (prev >= 'a' && prev <= 'z') || (prev >= '0' && prev <= '9') {
				b = append(b, '_')
			}
			b = append(b, c+('a'-'A'))
		case (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_':
			b = append(b, c)
		default:
			c = '_'
			b = append(b, c)
		}
		prev = c
		i++
	}
	return string(b)
}

// UnusedAllowlistEntries returns, for each resource that labels or
// annotations names (other than "*") and that no family of c with that
// allowlist reads, a message saying so: such an entry selects nothing,
// often a misspelled resource or one served by no config.
func (c *Compiled) UnusedAllowlistEntries(labels, annotations map[string][]string) []string {
	used := map[string]sets.Set[string]{AllowlistLabels: {}, AllowlistAnnotations: {}}
	for _, r := range c.Resources {
		for _, f := range r.Families {
			if m := used[f.LabelsAllowlist]; m != nil {
				m.Insert(r.Config.Resource)
			}
		}
	}
	var out []string
	for _, a := range []struct {
		kind, flag string
		list       map[string][]string
	}{{AllowlistLabels, "labels", labels}, {AllowlistAnnotations, "annotations", annotations}} {
		for _, name := range slices.Sorted(maps.Keys(a.list)) {
			if name == "*" || used[a.kind].Has(name) {
				continue
			}
			served := slices.Sorted(maps.Keys(used[a.kind]))
			msg := fmt.Sprintf("the %s allowlist names %q, which no served family reads", a.flag, name)
			if len(served) > 0 {
				msg += "; it applies to " + strings.Join(served, ", ")
			}
			out = append(out, msg)
		}
	}
	return out
}

// sanitizedLabelName is key as a whole label name, as kube-state-metrics
// names the labels of custom resource state metrics: each character other
// than ASCII letters, digits and '_' becomes '_', case kept.
func sanitizedLabelName(key string) string {
	b := []byte(key)
	out := b[:0:0]
	for i := 0; i < len(b); {
		c := b[i]
		if c >= 0x80 {
			_, size := utf8.DecodeRune(b[i:])
			out = append(out, '_')
			i += size
			continue
		}
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			out = append(out, c)
		} else {
			out = append(out, '_')
		}
		i++
	}
	return string(out)
}
