package plan

import (
	"testing"
	"time"
)

// TestBurstEndsWhileEventsGoOn checks that a burst whose events never
// pause for its debounce is over all the same: the test ends only once
// Over has received while events kept coming every millisecond.
func TestBurstEndsWhileEventsGoOn(t *testing.T) {
	b := NewBurst(20 * time.Millisecond)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	b.Event()
	events := 1
	for {
		select {
		case <-tick.C:
			b.Event()
			events++
		case <-b.Over():
			b.Done()
			if b.Over() != nil {
				t.Error("a burst answered is still there")
			}
			t.Logf("over after %d events", events)
			return
		}
	}
}

// TestBurstOverOnceQuiet checks that a burst is over once its events
// paused, and that there is none before its first event.
func TestBurstOverOnceQuiet(t *testing.T) {
	b := NewBurst(time.Millisecond)
	if b.Over() != nil {
		t.Fatal("a burst is there before any event")
	}
	b.Event()
	<-b.Over()
}
