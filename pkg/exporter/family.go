package exporter

import (
	"bufio"
	"bytes"
	"maps"
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
	// rows hold each object's rendered sample lines (plain families), and
	// index maps an object's UID to its row. Rows [0, ordered) are in UID
	// order; rows added since follow them, and a removed row stays empty
	// until the next write puts the rows back in order (orderLocked).
	rows    []row
	index   map[string]int32
	ordered int
	removed int
	// The rows' lines are cut from chunks of memory, each line once: a
	// changed row's lines are written anew and the old ones become
	// garbage, so lines handed to a scrape stay valid after the lock is
	// released. chunk is the current chunk's unused part. compactLocked
	// copies the live lines into one block, in row order, so that a
	// scrape reads them sequentially.
	chunk []byte
	// live is the length of the live rows' lines; held is the length of
	// every line in the chunks since the last compaction, live or not;
	// appended is the length written since the last compaction.
	live, held, appended int
	// minGarbage is the garbage below which the chunks are never
	// compacted by an update (compactIfWastefulLocked).
	minGarbage int
	// contributions maps an object's UID to what it adds to the groups
	// (aggregated families).
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
	// sorted caches the sorted keys of groups; nil after a group was
	// added or removed.
	sorted []string
}

// row is one object's rendered sample lines, by its UID; line is nil once
// the object was removed. line's capacity extends to its chunk's end.
type row struct {
	uid  string
	line []byte
}

// chunkSize is the size of the chunks that lines are cut from; a larger
// rendering gets a chunk of its own.
const chunkSize = 64 << 10

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
		minGarbage:    1 << 20,
		index:         map[string]int32{},
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
	i, had := s.index[uid]
	var old int
	if had {
		old = countLines(s.rows[i].line)
		s.live -= len(s.rows[i].line)
	}
	keep := len(samples)
	if s.maxSeries > 0 && s.series-old+keep > s.maxSeries {
		keep = max(s.maxSeries-(s.series-old), 0)
		s.dropped += uint64(len(samples) - keep)
	}
	s.series += keep - old
	if keep == 0 {
		if had {
			delete(s.index, uid)
			s.rows[i].line = nil
			s.removed++
		}
		s.compactIfWastefulLocked()
		return
	}
	size := 0
	for _, smp := range samples[:keep] {
		size += len(s.f.Name) + s.labelsSize(smp.labels) + 1 + len(formatValue(smp.value)) + 1
	}
	b := s.bufferLocked(size)
	for _, smp := range samples[:keep] {
		b = append(b, s.f.Name...)
		b = s.appendLabels(b, smp.labels)
		b = append(b, ' ')
		b = append(b, formatValue(smp.value)...)
		b = append(b, '\n')
	}
	s.keptLocked(b)
	if had {
		s.rows[i].line = b
	} else {
		s.index[uid] = int32(len(s.rows))
		s.rows = append(s.rows, row{uid: uid, line: b})
	}
	s.compactIfWastefulLocked()
}

// bufferLocked returns the current chunk's unused part, empty, for lines of
// about size bytes, starting a new chunk when they would not fit.
func (s *familyState) bufferLocked(size int) []byte {
	if size > cap(s.chunk) {
		s.chunk = make([]byte, 0, max(chunkSize, size))
	}
	return s.chunk
}

// keptLocked records lines b written into the buffer of bufferLocked, and
// takes them out of the chunk unless they outgrew it (and so were moved).
func (s *familyState) keptLocked(b []byte) {
	if len(b) <= cap(s.chunk) {
		s.chunk = s.chunk[len(b):len(b)]
	}
	s.live += len(b)
	s.held += len(b)
	s.appended += len(b)
}

// compactIfWastefulLocked compacts the lines once their garbage, the lines of
// changed and removed objects, outgrows both the live lines and minGarbage
// (1 MiB): what the family holds stays under twice what it exposes whether
// or not it is scraped, at an amortised cost of a copied byte per byte of
// garbage.
func (s *familyState) compactIfWastefulLocked() {
	if garbage := s.held - s.live; garbage > s.live && garbage > s.minGarbage {
		s.orderLocked()
		s.compactLocked()
	}
}

// compactLocked copies the live lines into one new block, in row order.
// The old chunks stay valid for the scrapes still writing from them.
func (s *familyState) compactLocked() {
	block := make([]byte, 0, s.live)
	for i, r := range s.rows {
		off := len(block)
		block = append(block, r.line...)
		s.rows[i].line = block[off:len(block):s.live]
	}
	s.chunk = nil
	s.held, s.appended = s.live, 0
}

// orderLocked puts the rows back in UID order after objects were added or
// removed: it drops removed rows, sorts the added ones and merges them into
// the ordered ones, then updates the index from the first row that moved.
// With k rows added among n, it costs O(n + k log k).
func (s *familyState) orderLocked() {
	if s.ordered == len(s.rows) && s.removed == 0 {
		return
	}
	from := len(s.rows) // the first row whose position changes
	head, live := 0, 0
	for i, r := range s.rows {
		if r.line == nil {
			from = min(from, i)
			continue
		}
		if i < s.ordered {
			head++
		}
		s.rows[live] = r
		live++
	}
	clear(s.rows[live:])
	s.rows = s.rows[:live]
	byUID := func(a, b row) int { return strings.Compare(a.uid, b.uid) }
	if tail := s.rows[head:]; len(tail) > 0 {
		slices.SortFunc(tail, byUID)
		if head > 0 && tail[0].uid < s.rows[head-1].uid {
			// Merge from the back into the rows' own array: each row
			// is moved once.
			added := slices.Clone(tail)
			i, j, k := head-1, len(added)-1, len(s.rows)-1
			for j >= 0 {
				if i >= 0 && s.rows[i].uid > added[j].uid {
					s.rows[k] = s.rows[i]
					i--
				} else {
					s.rows[k] = added[j]
					j--
				}
				k--
			}
			from = min(from, i+1)
		} else {
			from = min(from, head)
		}
	}
	for i := from; i < len(s.rows); i++ {
		s.index[s.rows[i].uid] = int32(i)
	}
	s.ordered, s.removed = len(s.rows), 0
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
		s.orderLocked()
		// Lines written since the last compaction are read out of
		// order; once they are a quarter of the lines, compact.
		if s.appended > s.live/4 {
			s.compactLocked()
		}
		// Rows whose lines are adjacent in a chunk are written as one.
		var run []byte
		for _, r := range s.rows {
			if n := len(run); n > 0 && n < cap(run) && &run[:n+1][n] == &r.line[0] {
				run = run[:n+len(r.line)]
				continue
			}
			if run != nil {
				refs = append(refs, run[:len(run):len(run)])
			}
			run = r.line
		}
		if run != nil {
			refs = append(refs, run[:len(run):len(run)])
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

// sortedKeysLocked returns the keys of groups in order, sorting only after
// groups were added or removed.
func (s *familyState) sortedKeysLocked() []string {
	if s.sorted == nil {
		s.sorted = slices.Sorted(maps.Keys(s.groups))
	}
	return s.sorted
}

// stats returns the family's counters.
func (s *familyState) stats() (series int, dropped, errors uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.series, s.dropped, s.errors
}
