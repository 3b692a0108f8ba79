package exporter

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// TestWriteFamiliesSlowClient checks that a scrape stalled by its client
// holds no lock: objects keep being updated meanwhile, and the response,
// once read, is whole and parses.
func TestWriteFamiliesSlowClient(t *testing.T) {
	e := testEngine(t, EngineOptions{})
	for i := range 2000 {
		e.Update(0, pod("shop", fmt.Sprintf("web-%d", i), fmt.Sprintf("u%d", i), "n1", "Running", 1))
	}
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		bw := bufio.NewWriterSize(w, 4<<10)
		err := e.WriteFamilies(bw, false)
		if err == nil {
			err = bw.Flush()
		}
		w.CloseWithError(err)
		done <- err
	}()
	// Read the first bytes only: the scrape is then blocked writing.
	first := make([]byte, 8<<10)
	if _, err := io.ReadFull(r, first); err != nil {
		t.Fatal(err)
	}
	updated := make(chan struct{})
	go func() {
		e.Update(0, pod("shop", "late", "u-late", "n2", "Pending"))
		e.Delete(0, pod("shop", "web-1", "u1", "n1", "Running", 1))
		close(updated)
	}()
	select {
	case <-updated:
	case <-time.After(3 * time.Minute): // only a hang takes this long
		t.Fatal("an update waited for a stalled scrape")
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	body := string(first) + string(rest)
	if n := strings.Count(body, "\npod_info{"); n < 1999 {
		t.Errorf("the stalled scrape wrote %d pod_info series, want every one present when it started", n)
	}
	if got := exposition(e, false); !strings.Contains(got, `pod="late"`) || strings.Contains(got, `uid="u1"`) {
		t.Errorf("the next scrape does not show the updates made during the stalled one")
	}
}
