package exporter

import (
	"bufio"
	"bytes"
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"
)

// sample is one computed series of an object: its label values (in the
// family's LabelNames order) and its value.
type sample struct {
	labels []string
	// absent, when not nil, is true at the labels the series leaves out
	// (an expression that gave an empty optional); their values are "".
	absent []bool
	// extra are the labels of a labelsFrom map, written after the others.
	extra []extraLabel
	value float64
}

// familyState holds what one family currently exposes. Series are rendered
// when objects change; a scrape only copies bytes.
type familyState struct {
	f *Family
	// order is the rendering order of the labels, computed once; its
	// first identity labels are the object's namespace, name or UID.
	order    []labelSlot
	identity int
	// heads, when not nil, keep the rendered identity labels of each
	// object, shared by the families of its resource whose identity
	// labels are the same: the family's rows then store a line that
	// begins with them as headLine and the rest of the line. Set by the
	// engine before any object is computed.
	heads *objectSlots
	// maxSeries caps the series of the family; 0: no cap.
	maxSeries int

	// mu guards every field below.
	mu sync.Mutex
	// rows locate each object's rendered sample lines (plain families)
	// at the object's slot (see objectSlots); the zero rowRef for a slot
	// whose object has no series. A scrape writes them in slot order.
	rows []rowRef
	// chunks are the memory the rows' lines are cut from, each line once:
	// a changed row's lines are written anew and the old ones become
	// garbage, so lines handed to a scrape stay valid after the lock is
	// released. A chunk's length is what is written of it; new lines are
	// written after the last chunk's length. compactLocked copies the
	// live lines into new blocks of at most maxBlock bytes, in row order,
	// so that a scrape reads them sequentially, and drops the old chunks.
	chunks [][]byte
	// scratch is where an object's lines are rendered before they are
	// kept in the chunks (see setPlainLocked).
	scratch  []byte
	maxBlock int
	// live is the length of the live rows' lines; held is the length of
	// every line in the chunks since the last compaction, live or not;
	// moved is the length of the lines written since the last compaction
	// that a scrape reads away from their neighbours': those of objects
	// that had lines already, and those of new objects in a slot before
	// the last (lines of new objects in the last slot follow those of
	// the slots before them).
	live, held, moved int
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
	// unserved is the number of series (plain families) or label sets
	// (aggregated ones) wanted now and not exposed because of maxSeries;
	// excess holds it per object (plain), refused per label set with the
	// number of members refused (aggregated).
	unserved int
	excess   map[string]int
	refused  map[string]int
	// claims maps the rendered label set of each series of a plain family
	// whose labels may not identify the object (see identifiesObject) to
	// the UID of the object whose series has it; nil when they do.
	claims map[string]string
	// duplicates counts series left out because another series of the
	// family has the same labels; lastDuplicate is the newest one's.
	duplicates    uint64
	lastDuplicate string
	// errors counts failed evaluations.
	errors uint64
	// lastError is the newest evaluation error message, for logs.
	lastError string
	// sorted caches the sorted keys of groups; nil after a group was
	// added or removed.
	sorted []string
}

// A line is written without the family's name, which a scrape writes
// before it: `{labels} value\n` (or ` value\n` without labels). The name
// would be a quarter of what the lines hold. The object's identity labels,
// another half, are stored once per object (see familyState.heads).

// chunkSize is the size of the chunks that lines are cut from; a larger
// rendering gets a chunk of its own.
const chunkSize = 64 << 10

// rowRef locates the lines of a row in its family's chunks: n bytes at off
// in chunks[chunk]; n is 0 for a slot without series. It holds no pointer:
// a family keeps one per object, and three 32-bit numbers take half the
// memory of a slice and give the garbage collector nothing to scan.
type rowRef struct{ chunk, off, n uint32 }

// maxBlock is the most a compacted block holds, so that offsets in it fit
// a rowRef.
const maxBlock = 1 << 30

// contribution is what one series of an object adds to a group; refused
// when the group was not created because of maxSeries.
type contribution struct {
	key     string
	value   float64
	refused bool
}

func newFamilyState(f *Family, maxSeries int) *familyState {
	order, identity := labelOrder(f)
	s := &familyState{
		f:             f,
		order:         order,
		identity:      identity,
		maxSeries:     maxSeries,
		minGarbage:    1 << 20,
		maxBlock:      maxBlock,
		contributions: map[string][]contribution{},
		groups:        map[string]*group{},
		excess:        map[string]int{},
		refused:       map[string]int{},
	}
	if f.Aggregate == AggregateNone && !identifiesObject(f) {
		s.claims = map[string]string{}
	}
	return s
}

// identifiesObject reports whether the labels of f certainly tell the
// objects apart: one is the object's UID, or two are its namespace and
// name. Then the series of two objects never have the same labels, and
// only an object's own series (with each) are checked against each other.
// Otherwise every series is checked against the others of the family.
func identifiesObject(f *Family) bool {
	exprs := sets.New[string]()
	for _, p := range f.Labels {
		if p != nil {
			exprs.Insert(compactExpr(p.Expr()))
		}
	}
	return exprs.Has("object.metadata.uid") || (exprs.Has("object.metadata.namespace") && exprs.Has("object.metadata.name"))
}

// rowKey names an object to the families of its resource: its UID, its
// slot (see objectSlots) and its identity labels as rendered, nil until a
// family renders them (see familyState.heads).
type rowKey struct {
	uid  string
	slot int32
	head []byte
}

// set replaces the series of object k by samples (nil or empty removes
// them) and counts evalErrors failed evaluations, the last with message
// lastErr. It reports whether it counted series left out as duplicates.
func (s *familyState) set(k *rowKey, samples []sample, evalErrors int, lastErr string) (duplicates bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if evalErrors > 0 {
		s.errors += uint64(evalErrors)
		s.lastError = lastErr
	}
	if s.f.Aggregate == AggregateNone {
		before := s.duplicates
		s.setPlainLocked(k, samples)
		return s.duplicates != before
	}
	s.setAggregateLocked(k.uid, samples)
	return false
}

// settled reports whether the series of object uid are all those it
// computed last time: none was left out because of the cap, so that the
// same samples would change nothing.
func (s *familyState) settled(uid string) bool {
	if s.maxSeries == 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f.Aggregate == AggregateNone {
		return s.excess[uid] == 0
	}
	return !slices.ContainsFunc(s.contributions[uid], func(c contribution) bool { return c.refused })
}

func (s *familyState) setPlainLocked(k *rowKey, samples []sample) {
	uid, slot := k.uid, k.slot
	var cur []byte
	if int(slot) < len(s.rows) && s.rows[slot].n > 0 {
		cur = s.lineLocked(s.rows[slot])
	}
	had := cur != nil
	var old int
	if had {
		old = countLines(cur)
		s.live -= len(cur)
		s.releaseLocked(uid, cur)
	}
	if n := s.excess[uid]; n > 0 {
		s.unserved -= n
		delete(s.excess, uid)
	}
	if s.maxSeries > 0 && s.series-old >= s.maxSeries && len(samples) > 0 {
		// The cap is reached: nothing of the object can be served.
		s.dropped += uint64(len(samples))
		s.unserved += len(samples)
		s.excess[uid] = len(samples)
		samples = nil
	}
	// The lines are rendered in scratch, and copied to the chunks once
	// shortened (see shareHead and elideHead), unless they are those the
	// object has.
	b := s.scratch[:0]
	defer func() {
		if cap(b) <= maxScratch {
			s.scratch = b[:0]
		}
	}()
	// ends[k] is where the k-th line kept ends in b; labels[k] is its
	// label set, to find duplicates among the object's own series.
	var endsBuf [16]int
	var labelsBuf [16][]byte
	ends, labels := endsBuf[:0], labelsBuf[:0] // on the stack for most objects
	var seen map[string]bool                   // beyond a few series, instead of comparing each pair
	for _, smp := range samples {
		start := len(b)
		b = s.appendSeriesLabels(b, smp.labels, smp.absent, smp.extra, false)
		set := b[start:]
		if s.duplicateLocked(uid, set, labels, &seen) {
			s.duplicates++
			s.lastDuplicate = s.f.Name + string(set)
			b = b[:start]
			continue
		}
		labels = append(labels, set)
		b = append(b, ' ')
		b = appendValue(b, smp.value)
		b = append(b, '\n')
		ends = append(ends, len(b))
	}
	keep := len(ends)
	if s.maxSeries > 0 && s.series-old+keep > s.maxSeries {
		keep = max(s.maxSeries-(s.series-old), 0)
		over := len(ends) - keep
		s.dropped += uint64(over) //nolint:gosec // G115: over = len(ends) - keep >= 0
		s.unserved += over
		s.excess[uid] = over
		if s.claims != nil {
			for _, set := range labels[keep:] {
				delete(s.claims, string(set))
			}
		}
		if keep == 0 {
			b = b[:0]
		} else {
			b = b[:ends[keep-1]]
		}
	}
	s.series += keep - old
	if keep > 1 && s.claims == nil {
		b = shareHead(b)
	}
	if keep > 0 && s.heads != nil {
		b = s.elideHead(k, b, samples[0].labels, samples[0].absent)
	}
	if keep == 0 {
		if had {
			s.rows[slot] = rowRef{}
			for n := len(s.rows); n > 0 && s.rows[n-1].n == 0; n-- {
				s.rows = s.rows[:n-1]
			}
		}
		s.compactIfWastefulLocked()
		return
	}
	if had && bytes.Equal(b, cur) {
		// Nothing changed (the usual case for most families of an
		// updated object): the row keeps its lines, and nothing is
		// written to the chunks, so that an update makes no garbage.
		s.live += len(b)
		return
	}
	ref := s.keptLocked(append(s.bufferLocked(len(b)), b...))
	for len(s.rows) <= int(slot) {
		s.rows = append(s.rows, rowRef{})
	}
	if had || int(slot) < len(s.rows)-1 {
		s.moved += len(b)
	}
	s.rows[slot] = ref
	s.compactIfWastefulLocked()
}

// maxScratch is the largest scratch a family keeps for the next object.
const maxScratch = 64 << 10

// duplicateLocked reports whether the label set of a series of object uid
// is that of another series: one of the object's own (before, and seen
// when there are many) or, unless the family's labels identify the
// object, one of another object. A label set that is not a duplicate is
// claimed for uid.
func (s *familyState) duplicateLocked(uid string, set []byte, before [][]byte, seen *map[string]bool) bool {
	const pairwise = 16
	switch {
	case len(before) < pairwise:
		for _, b := range before {
			if bytes.Equal(b, set) {
				return true
			}
		}
	default:
		if *seen == nil {
			*seen = make(map[string]bool, 2*len(before))
			for _, b := range before {
				(*seen)[string(b)] = true
			}
		}
		if (*seen)[string(set)] {
			return true
		}
		(*seen)[string(set)] = true
	}
	if s.claims == nil {
		return false
	}
	if owner, ok := s.claims[string(set)]; ok && owner != uid {
		return true
	}
	s.claims[string(set)] = uid
	return false
}

// releaseLocked gives up the label sets of lines, the series of object
// uid, for other objects to claim.
func (s *familyState) releaseLocked(uid string, lines []byte) {
	if s.claims == nil {
		return
	}
	for len(lines) > 0 {
		end := bytes.IndexByte(lines, '\n')
		line := lines[:end]
		lines = lines[end+1:]
		set := line[:bytes.LastIndexByte(line, ' ')]
		if s.claims[string(set)] == uid {
			delete(s.claims, string(set))
		}
	}
}

// lineLocked returns the lines that r locates, with no capacity beyond
// them.
func (s *familyState) lineLocked(r rowRef) []byte {
	end := r.off + r.n
	return s.chunks[r.chunk][r.off:end:end]
}

// bufferLocked returns the last chunk's unused part, empty, for lines of
// size bytes, starting a new chunk when they would not fit.
func (s *familyState) bufferLocked(size int) []byte {
	if n := len(s.chunks); n > 0 {
		if c := s.chunks[n-1]; cap(c)-len(c) >= size {
			return c[len(c):]
		}
	}
	if size == 0 {
		return nil
	}
	s.chunks = append(s.chunks, make([]byte, 0, max(chunkSize, size)))
	return s.chunks[len(s.chunks)-1]
}

// keptLocked records lines b, not empty, written into the buffer of
// bufferLocked, and returns where they are: in the last chunk, unless
// they outgrew its unused part (and so were moved), then in a chunk of
// their own.
func (s *familyState) keptLocked(b []byte) rowRef {
	s.live += len(b)
	s.held += len(b)
	if n := len(s.chunks); n > 0 {
		if c := s.chunks[n-1]; len(b) <= cap(c)-len(c) {
			s.chunks[n-1] = c[:len(c)+len(b)]
			//nolint:gosec // G115: chunks are fewer than 2^32, and no larger than maxBlock or one row's lines
			return rowRef{chunk: uint32(n - 1), off: uint32(len(c)), n: uint32(len(b))}
		}
	}
	s.chunks = append(s.chunks, b[:len(b):len(b)])
	return rowRef{chunk: uint32(len(s.chunks) - 1), n: uint32(len(b))} //nolint:gosec // G115: as above
}

// compactIfWastefulLocked compacts the lines once their garbage, the lines of
// changed and removed objects, outgrows both the live lines and minGarbage
// (1 MiB): what the family holds stays under twice what it exposes whether
// or not it is scraped, at an amortised cost of a copied byte per byte of
// garbage.
func (s *familyState) compactIfWastefulLocked() {
	if garbage := s.held - s.live; garbage > s.live && garbage > s.minGarbage {
		s.compactLocked()
	}
}

// compactLocked copies the live lines into new blocks, in row order, one
// unless they are more than maxBlock bytes. The old chunks stay valid for
// the scrapes still writing from them.
func (s *familyState) compactLocked() {
	var chunks [][]byte
	var block []byte
	left := s.live
	for i, r := range s.rows {
		if r.n == 0 {
			continue
		}
		line := s.lineLocked(r)
		if len(line) > cap(block)-len(block) {
			if block != nil {
				chunks = append(chunks, block)
			}
			block = make([]byte, 0, max(min(left, s.maxBlock), len(line)))
		}
		off := len(block)
		block = append(block, line...)
		left -= len(line)
		s.rows[i] = rowRef{chunk: uint32(len(chunks)), off: uint32(off), n: r.n} //nolint:gosec // G115: as in keptLocked
	}
	if block != nil {
		chunks = append(chunks, block)
	}
	s.chunks = chunks
	s.held, s.moved = s.live, 0
}

func countLines(b []byte) int { return bytes.Count(b, []byte{'\n'}) }

// A row's lines after its first are stored without the bytes they begin
// with in common with the last line stored whole before them, the row's
// first as a rule (the object's own labels, written before those computed
// per element, see labelOrder), when that saves bytes: such a line is continuedLine,
// the length of the common part in two bytes, and the rest of the line.
// No line written out starts with continuedLine (they start with '{' or
// ' '), and neither it nor the length's bytes are '\n', so lines are
// still found by their ends. A row starts with a whole line, so a scrape
// expands them reading each run of rows in order.
const (
	continuedLine = 0x01
	// headLine begins a row's first line stored without the object's
	// identity labels (see elideHead).
	headLine = 0x02
	// maxHead is the longest common part a continued line can refer to.
	maxHead = 1<<14 - 1
)

// shareHead rewrites the lines of one row, b, in place, storing each line
// after the first as a continued line when it begins with 4 or more bytes
// of the last line stored whole; it returns the shortened b.
func shareHead(b []byte) []byte {
	end := bytes.IndexByte(b, '\n') + 1
	head := b[:end]
	w := end
	for r := end; r < len(b); {
		n := bytes.IndexByte(b[r:], '\n') + 1
		line := b[r : r+n]
		p := 0
		for p < len(line) && p < len(head) && p < maxHead && line[p] == head[p] {
			p++
		}
		if p < 4 {
			copy(b[w:], line)
			head = b[w : w+n]
			w += n
		} else {
			// The rest is moved first: the marker's bytes may lie
			// over the common part, which is no longer needed.
			copy(b[w+3:], line[p:])
			b[w], b[w+1], b[w+2] = continuedLine, 0x80|byte(p&0x7f), 0x80|byte(p>>7)
			w += 3 + n - p
		}
		r += n
	}
	return b[:w]
}

// elideHead stores the first line of b, an object's row, as headLine and
// what follows the object's identity labels, when the line begins with
// them: rendered from values, the labels of one of its samples, and
// recorded for the object's other families, the first time. It returns the
// shortened b.
func (s *familyState) elideHead(k *rowKey, b []byte, values []string, absent []bool) []byte {
	if k.head == nil {
		for _, o := range s.order[:s.identity] {
			if absent != nil && absent[o.value] {
				return b // not the identity labels of the object's other series
			}
		}
		h := s.appendIdentity(nil, values)
		if len(h) == 0 {
			return b
		}
		k.head = s.heads.setHead(k.slot, h)
	}
	if len(k.head) < 2 || !bytes.HasPrefix(b, k.head) {
		return b
	}
	n := copy(b[1:], b[len(k.head):])
	b[0] = headLine
	return b[:1+n]
}

// appendIdentity appends the family's identity labels, as appendLabels
// begins, to b: `{name="value",…` without the closing brace.
func (s *familyState) appendIdentity(b []byte, values []string) []byte {
	if s.identity == 0 {
		return b
	}
	b = append(b, '{')
	for i, o := range s.order[:s.identity] {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, o.name...)
		b = append(b, `="`...)
		b = append(b, escapeLabelValue(values[o.value])...)
		b = append(b, '"')
	}
	return b
}

// writeLines writes lines, whole rows, each with the metric's name before
// it, expanding continued lines (see shareHead) and lines stored without
// their object's identity labels (see elideHead), which it takes from
// heads, in order, and returns those left.
func writeLines(w *bufio.Writer, name string, lines []byte, heads [][]byte) [][]byte {
	// The last line stored whole is h1 followed by h2.
	var h1, h2 []byte
	for len(lines) > 0 {
		end := bytes.IndexByte(lines, '\n') + 1
		line := lines[:end]
		_, _ = w.WriteString(name)
		switch line[0] {
		case continuedLine:
			p := int(line[1]&0x7f) | int(line[2]&0x7f)<<7
			if p <= len(h1) {
				_, _ = w.Write(h1[:p])
			} else {
				_, _ = w.Write(h1)
				_, _ = w.Write(h2[:p-len(h1)])
			}
			_, _ = w.Write(line[3:])
		case headLine:
			h1, h2, heads = heads[0], line[1:], heads[1:]
			_, _ = w.Write(h1)
			_, _ = w.Write(h2)
		default:
			h1, h2 = nil, line
			_, _ = w.Write(line)
		}
		lines = lines[end:]
	}
	return heads
}

func (s *familyState) setAggregateLocked(uid string, samples []sample) {
	agg := s.f.Aggregate
	for _, c := range s.contributions[uid] {
		if c.refused {
			if s.refused[c.key]--; s.refused[c.key] == 0 {
				delete(s.refused, c.key)
				if s.groups[c.key] == nil {
					s.unserved--
				}
			}
			continue
		}
		g := s.groups[c.key]
		g.remove(agg, c.value)
		if g.count == 0 {
			delete(s.groups, c.key)
			s.series--
			s.sorted = nil
			if s.refused[c.key] > 0 {
				s.unserved++
			}
		}
	}
	delete(s.contributions, uid)
	if len(samples) == 0 {
		return
	}
	cs := make([]contribution, 0, len(samples))
	for _, smp := range samples {
		n, plain := s.seriesLabelsSize(smp.labels, smp.absent, smp.extra)
		labels := s.appendSeriesLabels(make([]byte, 0, n), smp.labels, smp.absent, smp.extra, plain)
		key := string(labels)
		g, ok := s.groups[key]
		if !ok {
			if s.maxSeries > 0 && s.series >= s.maxSeries {
				s.dropped++
				if s.refused[key]++; s.refused[key] == 1 {
					s.unserved++
				}
				cs = append(cs, contribution{key: key, refused: true})
				continue
			}
			if s.refused[key] > 0 {
				s.unserved--
			}
			g = &group{labels: labels}
			s.groups[key] = g
			s.series++
			s.sorted = nil
		}
		g.add(agg, smp.value)
		cs = append(cs, contribution{key: key, value: smp.value})
	}
	s.contributions[uid] = cs
}

// appendLabels appends {name="value",…} with the const labels, in sorted
// order of names, to b; labelsSize returns its length, and whether the
// values are plain: none needs escaping, which appendLabels then does not
// look for.
func (s *familyState) appendLabels(b []byte, values []string, extra []extraLabel, plain bool) []byte {
	return s.appendSeriesLabels(b, values, nil, extra, plain)
}

// appendSeriesLabels is appendLabels leaving out the computed labels
// that absent (nil: none) marks.
func (s *familyState) appendSeriesLabels(b []byte, values []string, absent []bool, extra []extraLabel, plain bool) []byte {
	start := len(b)
	b = append(b, '{')
	for _, o := range s.order {
		if o.value >= 0 && absent != nil && absent[o.value] {
			continue
		}
		if len(b) > start+1 {
			b = append(b, ',')
		}
		b = append(b, o.name...)
		b = append(b, `="`...)
		if o.value >= 0 {
			b = appendLabelValue(b, values[o.value], plain)
		} else {
			b = appendLabelValue(b, o.constant, plain)
		}
		b = append(b, '"')
	}
	for _, l := range extra {
		if len(b) > start+1 {
			b = append(b, ',')
		}
		b = append(b, l.name...)
		b = append(b, `="`...)
		b = appendLabelValue(b, l.value, plain)
		b = append(b, '"')
	}
	if len(b) == start+1 {
		return b[:start] // no label
	}
	return append(b, '}')
}

func (s *familyState) labelsSize(values []string, extra []extraLabel) (n int, plain bool) {
	return s.seriesLabelsSize(values, nil, extra)
}

// seriesLabelsSize is labelsSize leaving out the labels absent marks.
func (s *familyState) seriesLabelsSize(values []string, absent []bool, extra []extraLabel) (n int, plain bool) {
	n, plain = 1, true // {
	add := func(name, v string) {
		n += len(name) + 2 + len(v) + 2 // name="value",  (the last comma is the closing brace)
		if needsEscape(v) {
			n += len(escapeLabelValue(v)) - len(v)
			plain = false
		}
	}
	labels := 0
	for _, o := range s.order {
		v := o.constant
		if o.value >= 0 {
			if absent != nil && absent[o.value] {
				continue
			}
			v = values[o.value]
		}
		add(o.name, v)
		labels++
	}
	for _, l := range extra {
		add(l.name, l.value)
		labels++
	}
	if labels == 0 {
		return 0, true
	}
	return n, plain
}

// labelSlot is one label in rendering order: a computed value (its index in
// the family's LabelNames) or a constant.
type labelSlot struct {
	name     string
	value    int // -1 for a constant
	constant string
}

// labelOrder orders the computed and constant labels of f: first its
// identity labels, the object's namespace, name or UID (returned as
// identity, their number), then the others with one value per object,
// then those computed per element of each, each group by name. The series
// of one object then begin alike: its row stores what they have in common
// once (see shareHead), and the identity labels, the same in the object's
// other families, are stored once per object (see elideHead). Prometheus
// does not read the order of labels.
func labelOrder(f *Family) (order []labelSlot, identity int) {
	rank := map[string]int{}
	for i, n := range f.LabelNames {
		order = append(order, labelSlot{name: n, value: i})
		switch {
		case i >= len(f.Labels) || f.Labels[i] == nil:
			rank[n] = 1
		case f.Each != nil && f.Labels[i].UsesEach():
			rank[n] = 2
		case identityExprs.Has(compactExpr(f.Labels[i].Expr())):
			rank[n] = 0
			identity++
		default:
			rank[n] = 1
		}
	}
	for _, c := range f.ConstLabels {
		order = append(order, labelSlot{name: c[0], value: -1, constant: c[1]})
		rank[c[0]] = 1
	}
	slices.SortFunc(order, func(a, b labelSlot) int {
		if c := cmp.Compare(rank[a.name], rank[b.name]); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return order, identity
}

// identityExprs are the expressions of an object's identity labels: never
// changed while the object exists.
var identityExprs = sets.New("object.metadata.namespace", "object.metadata.name", "object.metadata.uid")

// compactExpr is expr without white space, to compare expressions.
func compactExpr(expr string) string { return strings.Join(strings.Fields(expr), "") }

// identityKey is what the identity labels of f are, by name and
// expression: families with the same key render the same identity labels
// for an object. Empty when f has none.
func (s *familyState) identityKey() string {
	var b strings.Builder
	for _, o := range s.order[:s.identity] {
		b.WriteString(o.name)
		b.WriteByte('=')
		b.WriteString(compactExpr(s.f.Labels[o.value].Expr()))
		b.WriteByte(';')
	}
	return b.String()
}

var labelValueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

// appendLabelValue appends v to b, escaped unless plain says it needs no
// escaping.
func appendLabelValue(b []byte, v string, plain bool) []byte {
	if plain {
		return append(b, v...)
	}
	return append(b, escapeLabelValue(v)...)
}

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
		if escaped[v[i]] {
			return true
		}
	}
	return false
}

// escaped marks the bytes needsEscape looks for.
var escaped = [256]bool{'\\': true, '\n': true, '"': true}

// helpEscaper escapes HELP text in the text format: a backslash and a
// newline. OpenMetrics escapes a double quote too (labelValueEscaper), as
// github.com/prometheus/common/expfmt does.
var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

// formatValue formats a sample value as the exposition formats do.
func formatValue(v float64) string { return string(appendValue(nil, v)) }

// appendValue appends v formatted as the exposition formats do: as
// strconv.FormatFloat(v, 'g', -1, 64) but for the infinities and NaN.
// Integers below a million in magnitude, which 'g' writes in full, are
// written as such without it.
func appendValue(b []byte, v float64) []byte {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e6 && (v != 0 || !math.Signbit(v)):
		return strconv.AppendInt(b, int64(v), 10)
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// writeStyle is how a scrape writes families: in which format, and by
// whose conventions.
type writeStyle struct {
	// openMetrics writes OpenMetrics 1.0.0; otherwise the text format
	// 0.0.4.
	openMetrics bool
	// ksm writes as kube-state-metrics v2.20's main listener does (its
	// drop-in mode, Options.KubeStateMetrics); otherwise as client_golang's
	// expfmt does. It changes the HELP and TYPE lines only:
	//
	//   - a resource's families have them only while the resource has an
	//     object (of the shard): none at all for a resource without
	//     objects, and all of them, series or not, for one with objects;
	//     expfmt's way writes them for every family;
	//   - in OpenMetrics they name the family by its metric name, _total
	//     and _info included, where expfmt's way drops those suffixes;
	//   - in OpenMetrics the HELP text escapes a backslash and a newline
	//     only, as in the text format, where expfmt's way escapes a double
	//     quote too.
	ksm bool
}

// writeHeader writes the HELP and TYPE lines of the family name of type
// typ (TypeGauge, TypeCounter or TypeInfo) in the format and by the
// conventions of x: in OpenMetrics by expfmt's, a counter's family is
// named without _total and an info's without _info; by kube-state-metrics'
// it keeps its name. The text format has no info type, which it writes as
// a gauge.
func writeHeader(w *bufio.Writer, name, typ, help string, x writeStyle) {
	if x.openMetrics && !x.ksm {
		switch typ {
		case TypeCounter:
			name = strings.TrimSuffix(name, "_total")
		case TypeInfo:
			name = strings.TrimSuffix(name, "_info")
		}
	} else if !x.openMetrics && typ == TypeInfo {
		typ = TypeGauge
	}
	// A bufio.Writer keeps its first error: WriteFamilies returns it
	// from Flush.
	_, _ = w.WriteString("# HELP ")
	_, _ = w.WriteString(name)
	_ = w.WriteByte(' ')
	if x.openMetrics && !x.ksm {
		_, _ = w.WriteString(labelValueEscaper.Replace(help))
	} else {
		_, _ = w.WriteString(helpEscaper.Replace(help))
	}
	_, _ = w.WriteString("\n# TYPE ")
	_, _ = w.WriteString(name)
	_ = w.WriteByte(' ')
	_, _ = w.WriteString(typ)
	_ = w.WriteByte('\n')
}

// writeScratch holds what a scrape collects of a family under its lock,
// reused from family to family.
type writeScratch struct {
	// runs are the rows' lines, adjacent rows' as one.
	runs [][]byte
	// heads are the identity labels of the rows stored without them, in
	// row order.
	heads [][]byte
}

// write writes the family to w as x says: headers, then every series,
// sorted for stable output. headers false leaves the headers out unless
// the family has series (so that no series is written untyped). The lines of plain families are never
// modified once rendered (an update renders new ones), so write copies only
// references to them under the lock, into sc, and writes them after
// releasing it: a slow client never holds the lock, and a scrape needs no
// buffer the size of the response.
func (s *familyState) write(w *bufio.Writer, x writeStyle, headers bool, sc *writeScratch) {
	refs, heads := sc.runs[:0], sc.heads[:0]
	s.mu.Lock()
	if s.f.Aggregate == AggregateNone {
		// Lines written since the last compaction out of row order are
		// read away from their neighbours'; once they are a quarter of
		// the lines, compact.
		if s.moved > s.live/4 {
			s.compactLocked()
		}
		if s.heads != nil {
			s.heads.mu.Lock()
		}
		// Rows whose lines are adjacent in a chunk are written as one.
		var run rowRef
		for slot, r := range s.rows {
			if r.n == 0 {
				continue // a slot without series
			}
			if s.chunks[r.chunk][r.off] == headLine {
				heads = append(heads, s.heads.headLocked(int32(slot))) //nolint:gosec // G115: slots are int32
			}
			if run.n > 0 && r.chunk == run.chunk && r.off == run.off+run.n {
				run.n += r.n
				continue
			}
			if run.n > 0 {
				refs = append(refs, s.lineLocked(run))
			}
			run = r
		}
		if run.n > 0 {
			refs = append(refs, s.lineLocked(run))
		}
		if s.heads != nil {
			s.heads.mu.Unlock()
		}
	} else {
		// Aggregated series change in place: render them under the lock.
		// There are as many as groups, few next to the objects.
		var b []byte
		for _, k := range s.sortedKeysLocked() {
			g := s.groups[k]
			b = append(b, g.labels...)
			b = append(b, ' ')
			b = appendValue(b, g.value(s.f.Aggregate))
			b = append(b, '\n')
		}
		refs = append(refs, b)
	}
	s.mu.Unlock()
	if headers || slices.ContainsFunc(refs, func(l []byte) bool { return len(l) > 0 }) {
		writeHeader(w, s.f.Name, s.f.Type, s.f.Help, x)
	}
	rest := heads
	for _, l := range refs {
		rest = writeLines(w, s.f.Name, l, rest)
	}
	clear(refs)
	clear(heads)
	sc.runs, sc.heads = refs, heads
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

// lastErrorMessage returns the newest evaluation error, "" if none.
func (s *familyState) lastErrorMessage() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastError
}

// health is what a family serves and leaves out.
type health struct {
	// series is the number of series served; unserved, of those wanted
	// and not served because of the cap.
	series, unserved int
	// dropped counts the series left out by the cap over time, and
	// duplicates those left out for having the labels of another.
	dropped, duplicates uint64
	// lastDuplicate is the newest series left out as a duplicate.
	lastDuplicate string
}

func (s *familyState) health() health {
	s.mu.Lock()
	defer s.mu.Unlock()
	return health{series: s.series, unserved: s.unserved, dropped: s.dropped, duplicates: s.duplicates, lastDuplicate: s.lastDuplicate}
}
