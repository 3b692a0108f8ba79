package exporter

import "math"

// maxSummand bounds the magnitude of the values of an `aggregate: sum`
// family: a group of fewer than 2^25 members then never sums beyond the
// float64 range, whatever the order its members come and go in.
const maxSummand = 1e300

// exactSum is a sum of float64 values kept exactly, as non-overlapping
// partials of increasing magnitude (Shewchuk's algorithm, as Python's
// math.fsum): removing a value (adding its negation) leaves the sum of the
// others, exactly, whatever was added and removed in between. A running sum
// therefore does not drift, and value is the sum of the current members
// rounded once, as a recomputation from scratch would give. Its values
// must be finite and at most maxSummand in magnitude.
type exactSum struct {
	partials []float64
}

// add adds x exactly.
func (s *exactSum) add(x float64) {
	p := s.partials
	i := 0
	for _, y := range p {
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		lo := y - (hi - x)
		if lo != 0 {
			p[i] = lo
			i++
		}
		x = hi
	}
	p = p[:i]
	if x != 0 {
		p = append(p, x)
	}
	s.partials = p
}

// value returns the sum correctly rounded to a float64.
func (s *exactSum) value() float64 {
	p := s.partials
	n := len(p)
	if n == 0 {
		return 0
	}
	n--
	hi, lo := p[n], 0.0
	for n > 0 {
		x := hi
		n--
		y := p[n]
		hi = x + y
		lo = y - (hi - x)
		if lo != 0 {
			break
		}
	}
	// Round half to even across the partials: the next partial tells
	// which way a tie between hi and its neighbour goes.
	if n > 0 && ((lo < 0 && p[n-1] < 0) || (lo > 0 && p[n-1] > 0)) {
		y := lo * 2
		x := hi + y
		if x-hi == y {
			hi = x
		}
	}
	return hi
}

// group is an aggregated series.
type group struct {
	labels []byte // rendered {…} part
	count  int
	// sum is the members' values added up (aggregate: sum).
	sum exactSum
	// values counts the members' values, and extreme is the smallest
	// (aggregate: min) or largest (aggregate: max) of them.
	values  map[float64]int
	extreme float64
}

// add makes value a member of g under aggregation agg.
func (g *group) add(agg string, value float64) {
	g.count++
	switch agg {
	case AggregateSum:
		g.sum.add(value)
	case AggregateMin, AggregateMax:
		if value == 0 {
			value = 0 // -0 and 0 are one key; keep one of them
		}
		if g.values == nil {
			g.values = map[float64]int{}
		}
		g.values[value]++
		if g.count == 1 || better(agg, value, g.extreme) {
			g.extreme = value
		}
	}
}

// remove takes a member of value out of g.
func (g *group) remove(agg string, value float64) {
	g.count--
	switch agg {
	case AggregateSum:
		g.sum.add(-value)
	case AggregateMin, AggregateMax:
		if value == 0 {
			value = 0
		}
		if g.values[value]--; g.values[value] > 0 {
			return
		}
		delete(g.values, value)
		if value != g.extreme || g.count == 0 {
			return
		}
		// The extreme left: look for the next one among the values left.
		first := true
		for v := range g.values {
			if first || better(agg, v, g.extreme) {
				g.extreme, first = v, false
			}
		}
	}
}

// better reports whether v should replace current as the extreme of agg.
func better(agg string, v, current float64) bool {
	if agg == AggregateMin {
		return v < current
	}
	return v > current
}

// value is g's series value under aggregation agg.
func (g *group) value(agg string) float64 {
	switch agg {
	case AggregateCount:
		return float64(g.count)
	case AggregateSum:
		return g.sum.value()
	case AggregateMin, AggregateMax:
		return g.extreme
	}
	return 0
}
