package cmd

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgressEndsAtSize checks that the line shows the last report before
// it is cleared, even when that report came too soon after the one before
// to be drawn: a read's last report is the input's size.
func TestProgressEndsAtSize(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	p.update("log.xes", 1_000_000)
	p.last = time.Now().Add(time.Hour) // the next report comes too soon to be drawn
	p.update("log.xes", 2_300_000)
	if strings.Contains(buf.String(), "2.3 MB") {
		t.Fatalf("drawn before done: %q", buf.String())
	}
	p.done()
	got := buf.String()
	last := strings.LastIndex(got, "reading log.xes: ")
	if last < 0 || !strings.HasPrefix(got[last:], "reading log.xes: 2.3 MB") {
		t.Errorf("progress %q, want its last frame at 2.3 MB", got)
	}
	if !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("progress %q, want the line cleared at the end", got)
	}
}

// TestProgressEscapesInputName: the progress line writes its own terminal
// codes, so the file name in it must not carry any.
func TestProgressEscapesInputName(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	p.update("x\x1b]0;owned\a.jsonl", 1_000_000)
	p.done()
	if got := buf.String(); strings.Contains(got, "\x1b]") || !strings.Contains(got, `x\x1b]0;owned\x07.jsonl`) {
		t.Errorf("progress %q, want the name's escape written as text", got)
	}
}
