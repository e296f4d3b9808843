package cmd

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress draws a one-line progress report on a terminal: what is being
// read and how much, at most ten times a second. Callers create it only
// when standard error is a terminal and --quiet is off.
type progress struct {
	w     io.Writer
	start time.Time
	mu    sync.Mutex
	last  time.Time
	drawn bool
}

func newProgress(w io.Writer) *progress { return &progress{w: w, start: time.Now()} }

func (p *progress) update(input string, bytes int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	secs := now.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "\r\033[Kreading %s: %.1f MB in %.1fs (%.0f MB/s)", input, float64(bytes)/1e6, secs, float64(bytes)/1e6/max(secs, 1e-3))
	p.drawn = true
}

// done clears the line.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// startProgress returns the progress callback for reading logs and a
// function that clears the line; both do nothing unless standard error is a
// terminal and quiet is off.
func startProgress(streams IO, quiet bool) (func(input string, bytes int64), func()) {
	if !streams.ErrTTY || quiet {
		return nil, func() {}
	}
	p := newProgress(streams.Err)
	return p.update, p.done
}
