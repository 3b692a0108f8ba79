package exporter

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kubectl-informer/kubectl-informer/pkg/indexers"
	"github.com/kubectl-informer/kubectl-informer/pkg/indexers/jsonval"
)

// inputs tell which families of a resource have to compute an object's
// series again when it changes: those whose expressions read a part of it
// that changed. The parts are the fields the expressions read, cut two
// members deep (metadata.labels), or one member into the elements of the
// lists they iterate over (the restartCount of each of
// status.containerStatuses), grouped by the families that read them; an
// object's parts are summed (jsonval.Fingerprint) when its series are
// computed, and kept, a few words per object, for its next change. A pod's
// update that raises a container's restart count then computes the
// families that read the containers' restart counts, not the others, whose
// series stay as they are.
//
// A family is always computed when its expressions may read anything of
// the object or other objects (get(), byIndex()), when its series may
// collide with another object's (see familyState.claims), and when it
// left series out because of its cap (see familyState.settled). So is
// every family of an object after any evaluation of it failed, or left
// series out as duplicates, so that both are counted at each change as
// they would be.
type inputs struct {
	sums *jsonval.Fingerprint
	// reads are, by family, the bits of the sums its expressions read;
	// all bits for a family always computed.
	reads []uint64
	// n is the number of sums per object.
	n int

	// mu guards every field below.
	mu sync.Mutex
	// held are the sums of the objects by slot, n per slot, when known
	// is set at the slot: those of the object as its series were last
	// computed, all evaluations successful.
	held  []uint64
	known []bool
}

// maxSums bounds the sums per object; parts beyond it share the last.
const maxSums = jsonval.MaxGroups

// depth is how deep the parts are cut.
const depth = 2

// always reads every sum, and more.
const always = ^uint64(0)

// newInputs returns the inputs of the families of cr, or nil when none can
// be told unchanged.
func newInputs(cr *CompiledResource, families []*familyState) *inputs {
	conv := converter(cr)
	if conv == nil || !conv.ObjectIsJSON() {
		return nil
	}
	// The paths each family reads; nil for one always computed.
	paths := make([][][]string, len(families))
	parts := &jsonval.Paths{}
	for i, fs := range families {
		read, ok := familyPaths(cr.Families[i])
		if !ok || fs.claims != nil {
			continue
		}
		list := read.List()
		for j, p := range list {
			list[j] = cut(p)
			parts.Add(list[j])
		}
		paths[i] = list
		if paths[i] == nil {
			paths[i] = [][]string{} // reads nothing of the object
		}
	}
	units := parts.List()
	// readers[u] are the families that read the u-th part.
	readers := make([][]int, len(units))
	for i, list := range paths {
		for _, p := range list {
			u := slices.IndexFunc(units, func(unit []string) bool { return isPrefix(unit, p) })
			if u >= 0 && !slices.Contains(readers[u], i) {
				readers[u] = append(readers[u], i)
			}
		}
	}
	// Parts read by the same families are summed together.
	var groups [][][]string
	groupOf := map[string]int{}
	in := &inputs{reads: make([]uint64, len(families))}
	for u, unit := range units {
		var key strings.Builder
		for _, i := range readers[u] {
			key.WriteString(strconv.Itoa(i))
			key.WriteByte(',')
		}
		g, ok := groupOf[key.String()]
		if !ok {
			g = min(len(groups), maxSums-1)
			groupOf[key.String()] = g
			if g == len(groups) {
				groups = append(groups, nil)
			}
		}
		groups[g] = append(groups[g], unit)
		for _, i := range readers[u] {
			in.reads[i] |= 1 << g
		}
	}
	for i, list := range paths {
		if list == nil {
			in.reads[i] = always
		}
	}
	if !slices.ContainsFunc(in.reads, func(r uint64) bool { return r != always }) {
		return nil
	}
	in.sums, in.n = jsonval.NewFingerprint(groups), len(groups)
	return in
}

// familyPaths returns the paths of the object that f's expressions read,
// into the elements of the lists they iterate over (see indexers.Reads),
// and false when they may read anything or other objects. The values of
// each, when f's each is a list of the object, are its elements: each.name
// reads the name of every element, and the family reads the list's length
// (a sample per element).
func familyPaths(f *Family) (*jsonval.Paths, bool) {
	out := &jsonval.Paths{}
	var elems []string
	if f.Each != nil {
		if list, ok := f.Each.ListPath(); ok {
			elems = append(slices.Clip(list), jsonval.Elements)
			out.Add(append(slices.Clip(elems), "")) // its length
		}
	}
	for _, p := range append([]*indexers.Program{f.Each, f.Value, f.LabelsFrom}, f.Labels...) {
		if p == nil {
			continue
		}
		r, ok := p.Reads()
		if p.ReadsOthers() || !ok || r.Object == nil {
			return nil, false
		}
		if p == f.Each && elems != nil {
			continue // the list, read element by element by the others
		}
		out.Union(r.Object)
		if p == f.Each || elems == nil || !p.UsesEach() {
			continue // each is a value computed by f.Each, from what it reads
		}
		if r.Each == nil {
			out.Add(elems) // the elements whole
			continue
		}
		for _, q := range r.Each.List() {
			out.Add(append(slices.Clip(elems), q...))
		}
	}
	return out, true
}

// cut returns the part of path that is summed: its first depth members, and
// one more after each jsonval.Elements (the name of each container).
func cut(path []string) []string {
	n, members, limit := 0, 0, depth
	for ; n < len(path); n++ {
		if path[n] == jsonval.Elements {
			limit++
			continue
		}
		if members == limit {
			break
		}
		members++
	}
	return path[:n]
}

// isPrefix reports whether prefix is a prefix of path.
func isPrefix(prefix, path []string) bool {
	return len(prefix) <= len(path) && slices.Equal(prefix, path[:len(prefix)])
}

// changes sums obj, the object at slot, into sums (grown to the number of
// sums) with scratch, and returns the bits of the sums that differ from those held,
// always for an object whose sums are not known.
func (in *inputs) changes(slot int32, obj any, sums []uint64, scratch *jsonval.SumScratch) (changed uint64, grown []uint64) {
	sums = slices.Grow(sums[:0], in.n)[:in.n]
	if !in.sums.Sum(obj, sums, scratch) {
		return always, sums[:0]
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if int(slot) >= len(in.known) || !in.known[slot] {
		return always, sums
	}
	held := in.held[int(slot)*in.n:][:in.n]
	for i, s := range sums {
		if s != held[i] {
			changed |= 1 << i
		}
	}
	return changed, sums
}

// computes reports whether family i is computed for a change of bits
// changed: every family is for an object whose sums were not known
// (changed is always), a family reading nothing of the object included; a
// family added since the inputs were made always is.
func (in *inputs) computes(i int, changed uint64) bool {
	return changed == always || i >= len(in.reads) || in.reads[i]&changed != 0 || in.reads[i] == always
}

// keep holds sums (none: unknown) as those of the object at slot.
func (in *inputs) keep(slot int32, sums []uint64) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(sums) == 0 {
		if int(slot) < len(in.known) {
			in.known[slot] = false
		}
		return
	}
	for len(in.known) <= int(slot) {
		in.known = append(in.known, false)
	}
	if n := (int(slot) + 1) * in.n; len(in.held) < n {
		in.held = slices.Grow(in.held, n-len(in.held))[:n]
	}
	copy(in.held[int(slot)*in.n:], sums)
	in.known[slot] = true
}

// forget drops what is held of the object at slot, whose slot goes to
// another object.
func (in *inputs) forget(slot int32) { in.keep(slot, nil) }
