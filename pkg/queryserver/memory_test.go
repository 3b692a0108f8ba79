package queryserver

import (
	"context"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// currentLimit returns the soft memory limit without changing it.
func currentLimit() int64 { return debug.SetMemoryLimit(-1) }

// TestBoundMemory: the limit set is the live heap plus the headroom and
// the runtime's memory outside the heap, and it is lifted when the context
// ends.
func TestBoundMemory(t *testing.T) {
	if currentLimit() != math.MaxInt64 {
		t.Skip("a memory limit is set already (GOMEMLIMIT)")
	}
	const headroom = 64 << 20
	runtime.GC()
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		BoundMemory(ctx, headroom, 10*time.Millisecond)
	}()
	deadline := time.Now().Add(time.Minute) // a hang, not a measure
	for currentLimit() == math.MaxInt64 {
		if time.Now().After(deadline) {
			t.Fatal("no memory limit was set")
		}
		time.Sleep(time.Millisecond)
	}
	limit := currentLimit()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if low := int64(live[0].Value.Uint64()) + headroom; limit < low { //nolint:gosec // G115: a heap size
		t.Errorf("limit %d, want at least the live heap and the headroom, %d", limit, low)
	}
	// Never more than all the runtime has obtained, and the headroom.
	if high := int64(ms.Sys) + headroom; limit > high { //nolint:gosec // G115: sizes
		t.Errorf("limit %d, want at most what the runtime holds and the headroom, %d", limit, high)
	}
	cancel()
	<-done
	if l := currentLimit(); l != math.MaxInt64 {
		t.Errorf("limit %d once the context ended, want none", l)
	}
}

// TestBoundMemoryLeavesGOMEMLIMIT: with GOMEMLIMIT set, or no headroom,
// the runtime's limit stands.
func TestBoundMemoryLeavesGOMEMLIMIT(t *testing.T) {
	before := currentLimit()
	t.Setenv("GOMEMLIMIT", "1GiB")
	if MemoryBounded(1 << 20) {
		t.Error("bounded with GOMEMLIMIT set")
	}
	BoundMemory(context.Background(), 1<<20, time.Millisecond) // returns at once
	if l := currentLimit(); l != before {
		t.Errorf("limit %d, want %d as before", l, before)
	}
	if MemoryBounded(0) {
		t.Error("bounded with no headroom")
	}
}
