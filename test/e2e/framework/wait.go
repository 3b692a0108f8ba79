package framework

import (
	"testing"
	"time"
)

// HangTimeout is how long a test waits for something that must happen
// before it gives up: long enough that only a hang reaches it, on a busy
// machine running the race detector. Tests wait on observable state (a
// line printed, a metric, an object), never for a fixed time.
const HangTimeout = 3 * time.Minute

// pollInterval is how often Eventually checks its condition.
const pollInterval = 20 * time.Millisecond

// Eventually waits until cond holds, checking it every few milliseconds,
// and fails the test, naming what, if it does not within HangTimeout.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(HangTimeout); !cond(); time.Sleep(pollInterval) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting until %s", HangTimeout, what)
		}
	}
}
