package factory

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestPace: while paced, the collector has no target percentage and the
// memory limit is the floor, or the factor times the live heap when that
// is more, but never above the limit set before; once stopped (twice),
// the percentage and the limit are those before.
func TestPace(t *testing.T) {
	prevPercent := debug.SetGCPercent(150)
	prevLimit := debug.SetMemoryLimit(3 << 40)
	defer func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	}()
	runtime.GC() // a live heap to measure

	stop := Pace(FillPacing{Floor: 1 << 40, Factor: 3})
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("paced: GC percent %d, want -1 (off)", p)
	}
	if l := debug.SetMemoryLimit(-1); l != 1<<40 {
		t.Errorf("paced with a floor of 1 TiB: memory limit %d, want the floor", l)
	}
	stop()
	stop()
	if p := debug.SetGCPercent(150); p != 150 {
		t.Errorf("stopped: GC percent %d, want 150 again", p)
	}
	if l := debug.SetMemoryLimit(-1); l != 3<<40 {
		t.Errorf("stopped: memory limit %d, want 3 TiB again", l)
	}

	// A limit set before (GOMEMLIMIT) is a ceiling.
	debug.SetMemoryLimit(1 << 30)
	stop = Pace(FillPacing{Floor: 1 << 40, Factor: 3})
	if l := debug.SetMemoryLimit(-1); l != 1<<30 {
		t.Errorf("paced with a floor of 1 TiB under a limit of 1 GiB: memory limit %d, want the limit", l)
	}
	stop()
	if l := debug.SetMemoryLimit(3 << 40); l != 1<<30 {
		t.Errorf("stopped: memory limit %d, want 1 GiB again", l)
	}

	stop = Pace(FillPacing{Factor: 3})
	defer stop()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	l := debug.SetMemoryLimit(-1)
	// The live heap is at most what the heap holds now; the limit counts
	// three times it, plus the runtime's memory outside the heap.
	if l <= 0 || l == math.MaxInt64 || uint64(l) > 3*m.HeapAlloc+m.Sys {
		t.Errorf("paced without a floor: memory limit %d, want about 3× the live heap (heap %d, sys %d)", l, m.HeapAlloc, m.Sys)
	}
}

// TestFillPacingWithinCgroup: the default floor is 128 MiB, or half the
// memory limit of the cgroup when that is lower; "max" (v2) and v1's
// "unlimited" set no limit.
func TestFillPacingWithinCgroup(t *testing.T) {
	dir := t.TempDir()
	file := func(content string) string {
		f := filepath.Join(t.TempDir(), "memory.max")
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name  string
		files []string
		floor uint64
	}{
		{"no cgroup file", []string{filepath.Join(dir, "absent")}, 128 << 20},
		{"v2 without a limit", []string{file("max\n")}, 128 << 20},
		{"v2 limit of 128Mi", []string{file("134217728\n")}, 64 << 20},
		{"v2 limit of 4Gi", []string{file("4294967296\n")}, 128 << 20},
		{"v1 unlimited", []string{filepath.Join(dir, "absent"), file("9223372036854771712\n")}, 128 << 20},
		{"v1 limit of 200Mi", []string{filepath.Join(dir, "absent"), file("209715200")}, 100 << 20},
	} {
		if p := fillPacingWithin(tc.files); p.Floor != tc.floor || p.Factor != 1.5 {
			t.Errorf("%s: %+v, want floor %d and factor 1.5", tc.name, p, tc.floor)
		}
	}
}
