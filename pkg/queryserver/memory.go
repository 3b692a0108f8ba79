package queryserver

import (
	"context"
	"math"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// MemoryBound holds the process's memory to a headroom above what its
// caches need: it sets the Go runtime's soft memory limit
// (debug.SetMemoryLimit) to the live heap the last garbage collection
// found, plus the memory the runtime holds outside the heap, plus the
// headroom while a query is being answered (see Answering), and a quarter
// of it otherwise. The answers a server writes are garbage once written:
// as they pile up toward the limit, the collector runs sooner rather than
// letting the heap double. Once the last answer is written, the limit is
// lowered to what the live heap was before the answers began (the last
// collection, during them, counted answers being written as live), until a
// collection has run since: the runtime then collects the answers and
// returns the pages to the operating system itself, without being forced
// to. The limit follows the caches as they grow or shrink; a limit below
// them only makes the collector run, which measures them again.
type MemoryBound struct {
	headroom uint64
	// mu serialises setting the limit; running is whether Run is.
	mu        sync.Mutex
	running   bool
	answering int
	// before is the live heap when the first of the answers being written
	// began; idleFrom, the collections completed when the last ended.
	before, idleFrom uint64
}

// NewMemoryBound returns the bound of headroom bytes, or nil when
// MemoryBounded says there is none: with GOMEMLIMIT set in the
// environment, or a headroom of 0, the runtime's own limit stands.
func NewMemoryBound(headroom uint64) *MemoryBound {
	if !MemoryBounded(headroom) {
		return nil
	}
	return &MemoryBound{headroom: headroom}
}

// Run sets the limit, again every interval, until ctx ends; then it lifts
// it. Start it once the caches have synced: while they fill, the heap
// grows faster than any interval.
func (b *MemoryBound) Run(ctx context.Context, interval time.Duration) {
	b.mu.Lock()
	b.running = true
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.running = false
		debug.SetMemoryLimit(math.MaxInt64)
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		b.set(0)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Answering counts a query being answered until the returned done is
// called, and raises the limit to the whole headroom at once if it was
// lower.
func (b *MemoryBound) Answering() (done func()) {
	b.set(1)
	return func() { b.set(-1) }
}

// set adds delta to the queries being answered and sets the limit, if Run
// is running.
func (b *MemoryBound) set(delta int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := factory.ReadRuntimeMemory()
	switch b.answering += delta; {
	case delta > 0 && b.answering == 1:
		b.before = m.Live
	case delta < 0 && b.answering == 0:
		b.idleFrom = m.Cycles
	}
	if !b.running {
		return
	}
	headroom := b.headroom
	if b.answering == 0 {
		headroom /= 4
		if m.Cycles == b.idleFrom && b.before > 0 {
			m.Live = min(m.Live, b.before)
		}
	}
	debug.SetMemoryLimit(memoryLimit(m, headroom))
}

// MemoryBounded reports whether a MemoryBound bounds the process's memory
// with headroom: not with a headroom of 0, nor when GOMEMLIMIT is set.
func MemoryBounded(headroom uint64) bool {
	_, set := os.LookupEnv("GOMEMLIMIT")
	return headroom > 0 && !set
}

// memoryLimit is the live heap of m, plus the runtime's memory outside the
// heap (stacks, its own structures), plus headroom.
func memoryLimit(m factory.RuntimeMemory, headroom uint64) int64 {
	limit := m.Live + m.Outside + headroom
	if limit > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(limit)
}
