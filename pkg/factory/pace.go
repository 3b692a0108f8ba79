package factory

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FillPacing paces Go's garbage collector while caches fill for the first
// time. Decoding the initial lists allocates fast, from a heap that starts
// small: a collector paced by a percentage of the live heap (GOGC) runs
// many times while that heap is still small, each time for little, and
// slows everything else while it marks. Paced by FillPacing, the collector
// runs when the memory the process holds reaches Floor or Factor times
// the live heap the last collection found (plus the runtime's own memory
// outside the heap), whichever is larger: as GOGC=(Factor-1)×100 once the
// heap is large, and not at all before it reaches Floor.
type FillPacing struct {
	// Floor is the memory below which the collector does not run, in
	// bytes.
	Floor uint64
	// Factor is the memory the process may hold as a multiple of the live
	// heap; at least 1.
	Factor float64
}

// DefaultFillPacing is the pacing of the exporter while its caches fill:
// as GOGC=50 (Factor 1.5), and no collection below 128 MiB, or below half
// the memory limit of the process's cgroup (its container's) when that is
// lower. The exporter computes the objects of its first lists as they
// arrive and keeps none of them, so its live heap while they fill is what
// it keeps afterwards: its series. Once synced, it runs as GOGC=25, and
// holds about 1.25 times that heap: Factor 1.5 keeps the peak of the fill
// within a fifth of that, and the floor spares the collections of a heap
// too small to matter (at 10,000 pods with the kube-state-metrics profile,
// as much CPU until ready as without any collection below 384 MiB, for a
// peak of 172 MiB instead of 400).
func DefaultFillPacing() FillPacing { return fillPacingWithin(cgroupMemoryFiles) }

// cgroupMemoryFiles hold the memory limit of the process's cgroup: v2,
// then v1.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// fillPacingWithin is DefaultFillPacing with the cgroup's limit read from
// the first of files that exists.
func fillPacingWithin(files []string) FillPacing {
	floor := uint64(128 << 20)
	if limit, ok := cgroupMemoryLimit(files); ok {
		floor = min(floor, limit/2)
	}
	return FillPacing{Floor: floor, Factor: 1.5}
}

// MemoryLimit returns the memory limit of the process's cgroup (its
// container's), if it sets one.
func MemoryLimit() (uint64, bool) { return cgroupMemoryLimit(cgroupMemoryFiles) }

// cgroupMemoryLimit returns the memory limit in the first of files that
// exists, if it sets one.
func cgroupMemoryLimit(files []string) (uint64, bool) {
	for _, f := range files {
		b, err := os.ReadFile(f) //nolint:gosec // G304: the cgroup files of cgroupMemoryFiles
		if err != nil {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v >= 1<<60 { // "max", or v1's "unlimited"
			return 0, false
		}
		return v, true
	}
	return 0, false
}

// Paced reports whether the environment leaves the collector's pacing to
// the program: GOGC is not set. When it is, it should stand, and Pace
// should not be called. A memory limit (GOMEMLIMIT, or one the program
// set) leaves the pacing to the program: Pace keeps below it.
func Paced() bool {
	_, gogc := os.LookupEnv("GOGC")
	return !gogc
}

// Pace turns off the collector's percentage pacing (debug.SetGCPercent(-1))
// and sets the runtime's soft memory limit (debug.SetMemoryLimit) as p
// says, again every few milliseconds as the live heap grows, until the
// returned stop is called; stop restores the percentage and the limit
// there were before, and may be called more than once. The limit there
// was before (GOMEMLIMIT's) is a ceiling: Pace never sets one above it.
func Pace(p FillPacing) (stop func()) {
	ceiling := debug.SetMemoryLimit(-1) // reads it
	limit := func() int64 { return min(ceiling, p.limit(ReadRuntimeMemory())) }
	prevLimit := debug.SetMemoryLimit(limit())
	prevPercent := debug.SetGCPercent(-1)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				debug.SetMemoryLimit(limit())
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			debug.SetGCPercent(prevPercent)
			debug.SetMemoryLimit(prevLimit)
		})
	}
}

// limit is the memory limit p sets for the runtime's memory m.
func (p FillPacing) limit(m RuntimeMemory) int64 {
	limit := max(p.Floor, uint64(max(p.Factor, 1)*float64(m.Live))+m.Outside)
	if limit > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(limit)
}

// RuntimeMemory is what the Go runtime says of the process's memory.
type RuntimeMemory struct {
	// Live is the heap the last garbage collection found live.
	Live uint64
	// Outside is the memory the runtime holds outside the heap: stacks
	// and its own structures.
	Outside uint64
	// Cycles counts the garbage collections completed so far.
	Cycles uint64
}

// ReadRuntimeMemory reads the process's RuntimeMemory now.
func ReadRuntimeMemory() RuntimeMemory {
	samples := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	metrics.Read(samples)
	v := make([]uint64, len(samples))
	for i, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	live, total, released, objects, unused, free := v[0], v[1], v[2], v[3], v[4], v[5]
	m := RuntimeMemory{Live: live, Cycles: v[6]}
	if heap := released + objects + unused + free; total > heap {
		m.Outside = total - heap
	}
	return m
}
