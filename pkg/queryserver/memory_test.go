package queryserver

import (
	"context"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// currentLimit returns the soft memory limit without changing it.
func currentLimit() int64 { return debug.SetMemoryLimit(-1) }

// runBound runs a MemoryBound of headroom, setting its limit every hour
// (so only the calls a test makes change it), once it has set a limit;
// stop ends Run and returns once it has.
func runBound(t *testing.T, headroom uint64) (b *MemoryBound, stop func()) {
	t.Helper()
	b = NewMemoryBound(headroom)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Run(ctx, time.Hour)
	}()
	deadline := time.Now().Add(time.Minute) // a hang, not a measure
	for currentLimit() == math.MaxInt64 {
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("no memory limit was set")
		}
		time.Sleep(time.Millisecond)
	}
	return b, func() { cancel(); <-done }
}

// TestMemoryBound: the limit set is the live heap plus the runtime's
// memory outside the heap plus a quarter of the headroom while no query is
// answered, the whole headroom from the moment one is and until it is
// done, and it is lifted when Run's context ends; after that, answering
// sets no limit. The interval is an hour: every change the test sees is
// made by the calls it makes.
func TestMemoryBound(t *testing.T) {
	if currentLimit() != math.MaxInt64 {
		t.Skip("a memory limit is set already (GOMEMLIMIT)")
	}
	const headroom = 64 << 20
	runtime.GC()
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	b, stop := runBound(t, headroom)
	within := func(state string, room int64) {
		t.Helper()
		limit := currentLimit()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if low := int64(live[0].Value.Uint64()) + room; limit < low { //nolint:gosec // G115: a heap size
			t.Errorf("%s: limit %d, want at least the live heap and %d, %d", state, limit, room, low)
		}
		// Never more than all the runtime has obtained, and the room.
		if high := int64(ms.Sys) + room; limit > high { //nolint:gosec // G115: sizes
			t.Errorf("%s: limit %d, want at most what the runtime holds and %d, %d", state, limit, room, high)
		}
	}
	within("idle", headroom/4)
	answered := b.Answering()
	within("answering", headroom)
	second := b.Answering()
	answered()
	within("still answering one", headroom)
	second()
	within("idle again", headroom/4)
	stop()
	if l := currentLimit(); l != math.MaxInt64 {
		t.Errorf("limit %d once the context ended, want none", l)
	}
	b.Answering()()
	if l := currentLimit(); l != math.MaxInt64 {
		t.Errorf("limit %d set by an answer after Run ended, want none", l)
	}
}

// TestMemoryBoundLeavesGOMEMLIMIT: with GOMEMLIMIT set, or no headroom,
// there is no bound, and the runtime's limit stands.
func TestMemoryBoundLeavesGOMEMLIMIT(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1GiB")
	if MemoryBounded(1<<20) || NewMemoryBound(1<<20) != nil {
		t.Error("bounded with GOMEMLIMIT set")
	}
	_ = os.Unsetenv("GOMEMLIMIT") // t.Setenv restores it
	if MemoryBounded(0) || NewMemoryBound(0) != nil {
		t.Error("bounded with no headroom")
	}
	if !MemoryBounded(1<<20) || NewMemoryBound(1<<20) == nil {
		t.Error("not bounded with a headroom and no GOMEMLIMIT")
	}
}
