package factory

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progress rewrites one status line on a terminal while caches fill.
type progress struct {
	w       io.Writer
	written bool
}

func newProgress(w io.Writer) *progress { return &progress{w: w} }

func (p *progress) report(infs []*Informer, final bool) {
	if p.w == nil || (final && !p.written) {
		return
	}
	parts := make([]string, 0, len(infs))
	for _, inf := range infs {
		state := "syncing"
		if inf.Informer != nil && inf.Informer.HasSynced() {
			state = "synced"
		}
		parts = append(parts, fmt.Sprintf("%s %d objects, %s %.1fs", inf.Resource, inf.Objects(), state, time.Since(inf.started).Seconds()))
	}
	// \r and "erase line" keep the report on one line.
	_, _ = fmt.Fprintf(p.w, "\r\033[K%s", strings.Join(parts, "; "))
	p.written = true
}

func (p *progress) done() {
	if p.w != nil && p.written {
		_, _ = fmt.Fprint(p.w, "\r\033[K")
	}
}
