package queryserver

import (
	"context"
	"math"
	"os"
	"runtime/debug"
	"time"

	"github.com/kubectl-informer/kubectl-informer/pkg/factory"
)

// BoundMemory holds the process's memory to headroom bytes above what its
// caches need, until ctx ends: every interval it sets the Go runtime's
// soft memory limit (debug.SetMemoryLimit) to the live heap the last
// garbage collection found, plus the memory the runtime holds outside the
// heap, plus headroom. The answers a server writes are garbage once
// written: as they pile up toward the limit, the collector runs sooner
// rather than letting the heap double, and the runtime returns the pages
// freed to the operating system, without forcing it to. The limit follows
// the caches as they grow or shrink.
//
// Start it once the caches have synced: while they fill, the heap grows
// faster than any interval. With GOMEMLIMIT set in the environment, or a
// headroom of 0, it does nothing: the runtime's own limit stands. When ctx
// ends the limit is lifted.
func BoundMemory(ctx context.Context, headroom uint64, interval time.Duration) {
	if !MemoryBounded(headroom) {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	defer debug.SetMemoryLimit(math.MaxInt64)
	for {
		debug.SetMemoryLimit(memoryLimit(factory.ReadRuntimeMemory(), headroom))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// MemoryBounded reports whether BoundMemory bounds the process's memory
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
