package exporter

import (
	"bufio"
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// sample is one computed series of an object: its label values (in the
// family's LabelNames order) and its value.
type sample struct {
	labels []string
	value  float64
}

// familyState holds what one family currently exposes. Series are rendered
// when objects change; a scrape only copies bytes.
type familyState struct {
	f *Family
	// order is the rendering order of the labels, computed once.
	order []labelSlot
	// maxSeries caps the series of the family; 0: no cap.
	maxSeries int

	// mu guards every field below.
	mu sync.Mutex
	// objects maps an object's UID to its rendered sample lines (plain
	// families) or to its contributions (aggregated families).
	lines         map[string][]byte
	contributions map[string][]contribution
	// groups are the aggregated series by rendered label set.
	groups map[string]*group
	// series is the number of series exposed.
	series int
	// dropped counts series not exposed because of maxSeries.
	dropped uint64
	// errors counts failed evaluations.
	errors uint64
	// lastError is the newest evaluation error message, for logs.
	lastError string
	// sorted caches the sorted keys of lines or groups; nil after a key
	// was added or removed.
	sorted []string
}

// contribution is what one series of an object adds to a group.
type contribution struct {
	key   string
	value float64
}

// group is an aggregated series.
type group struct {
	labels []byte // rendered {…} part
	count  int
	sum    float64
	// values counts the members' values, for min and max.
	values map[float64]int
}

func newFamilyState(f *Family, maxSeries int) *familyState {
	return &familyState{
		f:             f,
		order:         labelOrder(f),
		maxSeries:     maxSeries,
		lines:         map[string][]byte{},
		contributions: map[string][]contribution{},
		groups:        map[string]*group{},
	}
}

// set replaces the series of object uid by samples (nil or empty removes
// them) and counts evalErrors failed evaluations, the last with message
// lastErr.
func (s *familyState) set(uid string, samples []sample, evalErrors int, lastErr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if evalErrors > 0 {
		s.errors += uint64(evalErrors)
		s.lastError = lastErr
	}
	if s.f.Aggregate == AggregateNone {
		s.setPlainLocked(uid, samples)
		return
	}
	s.setAggregateLocked(uid, samples)
}

func (s *familyState) setPlainLocked(uid string, samples []sample) {
	prev, had := s.lines[uid]
	old := countLines(prev)
	if len(samples) == 0 {
		if had {
			delete(s.lines, uid)
			s.sorted = nil
		}
		s.series -= old
		return
	}
	keep := len(samples)
	if s.maxSeries > 0 && s.series-old+keep > s.maxSeries {
		keep = max(s.maxSeries-(s.series-old), 0)
		s.dropped += uint64(len(samples) - keep)
	}
	if keep == 0 {
		if had {
			delete(s.lines, uid)
			s.sorted = nil
		}
		s.series -= old
		return
	}
	if !had {
		s.sorted = nil
	}
	// One allocation of the exact size per object: these lines are most of
	// what the exporter keeps.
	size := 0
	for _, smp := range samples[:keep] {
		size += len(s.f.Name) + s.labelsSize(smp.labels) + 1 + len(formatValue(smp.value)) + 1
	}
	b := make([]byte, 0, size)
	for _, smp := range samples[:keep] {
		b = append(b, s.f.Name...)
		b = s.appendLabels(b, smp.labels)
		b = append(b, ' ')
		b = append(b, formatValue(smp.value)...)
		b = append(b, '\n')
	}
	s.lines[uid] = b
	s.series += keep - old
}

func countLines(b []byte) int { return bytes.Count(b, []byte{'\n'}) }

func (s *familyState) setAggregateLocked(uid string, samples []sample) {
	for _, c := range s.contributions[uid] {
		g := s.groups[c.key]
		g.count--
		g.sum -= c.value
		if g.values[c.value]--; g.values[c.value] == 0 {
			delete(g.values, c.value)
		}
		if g.count == 0 {
			delete(s.groups, c.key)
			s.series--
			s.sorted = nil
		}
	}
	delete(s.contributions, uid)
	if len(samples) == 0 {
		return
	}
	cs := make([]contribution, 0, len(samples))
	for _, smp := range samples {
		labels := s.appendLabels(make([]byte, 0, s.labelsSize(smp.labels)), smp.labels)
		key := string(labels)
		g, ok := s.groups[key]
		if !ok {
			if s.maxSeries > 0 && s.series >= s.maxSeries {
				s.dropped++
				continue
			}
			g = &group{labels: labels, values: map[float64]int{}}
			s.groups[key] = g
			s.series++
			s.sorted = nil
		}
		g.count++
		g.sum += smp.value
		g.values[smp.value]++
		cs = append(cs, contribution{key: key, value: smp.value})
	}
	s.contributions[uid] = cs
}

// appendLabels appends {name="value",…} with the const labels, in sorted
// order of names, to b; labelsSize returns its length.
func (s *familyState) appendLabels(b []byte, values []string) []byte {
	if len(s.order) == 0 {
		return b
	}
	b = append(b, '{')
	for i, o := range s.order {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, o.name...)
		b = append(b, `="`...)
		if o.value >= 0 {
			b = append(b, escapeLabelValue(values[o.value])...)
		} else {
			b = append(b, escapeLabelValue(o.constant)...)
		}
		b = append(b, '"')
	}
	return append(b, '}')
}

func (s *familyState) labelsSize(values []string) int {
	if len(s.order) == 0 {
		return 0
	}
	n := 1 // {
	for _, o := range s.order {
		v := o.constant
		if o.value >= 0 {
			v = values[o.value]
		}
		n += len(o.name) + 2 + len(v) + 2 // name="value",  (the last comma is the closing brace)
		if needsEscape(v) {
			n += len(escapeLabelValue(v)) - len(v)
		}
	}
	return n
}

// labelSlot is one label in rendering order: a computed value (its index in
// the family's LabelNames) or a constant.
type labelSlot struct {
	name     string
	value    int // -1 for a constant
	constant string
}

// labelOrder merges the computed and constant labels of f by name.
func labelOrder(f *Family) []labelSlot {
	var out []labelSlot
	for i, n := range f.LabelNames {
		out = append(out, labelSlot{name: n, value: i})
	}
	for _, c := range f.ConstLabels {
		out = append(out, labelSlot{name: c[0], value: -1, constant: c[1]})
	}
	slices.SortFunc(out, func(a, b labelSlot) int { return strings.Compare(a.name, b.name) })
	return out
}

var labelValueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

func escapeLabelValue(v string) string {
	if !needsEscape(v) {
		return v
	}
	return labelValueEscaper.Replace(v)
}

// needsEscape reports whether a label value has a character the exposition
// formats escape: a backslash, a newline or a double quote.
func needsEscape(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c == '\\' || c == '\n' || c == '"' {
			return true
		}
	}
	return false
}

var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

// formatValue formats a sample value as the exposition formats do.
func formatValue(v float64) string {
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

// aggregateValue is the value of a group under the family's aggregation.
func (s *familyState) aggregateValue(g *group) float64 {
	switch s.f.Aggregate {
	case AggregateCount:
		return float64(g.count)
	case AggregateSum:
		return g.sum
	case AggregateMin, AggregateMax:
		first := true
		var out float64
		for v := range g.values {
			if first || (s.f.Aggregate == AggregateMin && v < out) || (s.f.Aggregate == AggregateMax && v > out) {
				out, first = v, false
			}
		}
		return out
	}
	return 0
}

// write writes the family to w in the given format: headers, then every
// series, sorted for stable output. The lines of plain families are never
// modified once rendered (an update renders new ones), so write copies only
// references to them under the lock, into refs (returned for reuse), and
// writes them after releasing it: a slow client never holds the lock, and a
// scrape needs no buffer the size of the response.
func (s *familyState) write(w *bufio.Writer, openMetrics bool, refs [][]byte) [][]byte {
	name, typ := s.f.Name, s.f.Type
	if openMetrics {
		switch typ {
		case TypeCounter:
			name = strings.TrimSuffix(name, "_total")
		case TypeInfo:
			name = strings.TrimSuffix(name, "_info")
		}
	} else if typ == TypeInfo {
		typ = TypeGauge // the text format has no info type
	}
	w.WriteString("# HELP ")
	w.WriteString(name)
	w.WriteByte(' ')
	w.WriteString(helpEscaper.Replace(s.f.Help))
	w.WriteString("\n# TYPE ")
	w.WriteString(name)
	w.WriteByte(' ')
	w.WriteString(typ)
	w.WriteByte('\n')

	refs = refs[:0]
	s.mu.Lock()
	if s.f.Aggregate == AggregateNone {
		for _, k := range s.sortedKeysLocked() {
			refs = append(refs, s.lines[k])
		}
	} else {
		// Aggregated series change in place: render them under the lock.
		// There are as many as groups, few next to the objects.
		var b []byte
		for _, k := range s.sortedKeysLocked() {
			g := s.groups[k]
			b = append(b, s.f.Name...)
			b = append(b, g.labels...)
			b = append(b, ' ')
			b = append(b, formatValue(s.aggregateValue(g))...)
			b = append(b, '\n')
		}
		refs = append(refs, b)
	}
	s.mu.Unlock()
	for _, l := range refs {
		w.Write(l)
	}
	return refs
}

// sortedKeysLocked returns the keys of lines or groups in order, sorting
// only after keys were added or removed.
func (s *familyState) sortedKeysLocked() []string {
	if s.sorted != nil {
		return s.sorted
	}
	var keys []string
	if s.f.Aggregate == AggregateNone {
		keys = make([]string, 0, len(s.lines))
		for k := range s.lines {
			keys = append(keys, k)
		}
	} else {
		keys = make([]string, 0, len(s.groups))
		for k := range s.groups {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	s.sorted = keys
	return keys
}

// stats returns the family's counters.
func (s *familyState) stats() (series int, dropped, errors uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.series, s.dropped, s.errors
}
