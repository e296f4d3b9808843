// Package servetest holds what tests of the guard's HTTP service share:
// a buffer the service's log writer and a test can both use, and a reader
// of the decision log.
package servetest

import (
	"bufio"
	"bytes"
	"sort"
	"strings"
	"sync"
	"testing"

	"encoding/json"
)

// Buffer is a bytes.Buffer safe for the service's log writer goroutine and
// a test to share.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// DecisionLine is a line of the decision log: a record in fsmine's form
// with the guard's verdict.
type DecisionLine struct {
	SessionID string `json:"session_id"`
	Step      int    `json:"step"`
	Node      string `json:"node"`
	Event     string `json:"event"`
	TS        string `json:"ts"`
	Verdict   struct {
		Allowed bool   `json:"allowed"`
		Reason  string `json:"reason"`
		State   string `json:"state"`
	} `json:"verdict"`
}

// ParseDecisionLog reads a decision log, failing t on a line that is not
// a DecisionLine with nothing else, and returns its lines by session and
// step.
func ParseDecisionLog(t testing.TB, text string) []DecisionLine {
	t.Helper()
	var lines []DecisionLine
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l DecisionLine
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	sort.Slice(lines, func(i, j int) bool {
		if lines[i].SessionID != lines[j].SessionID {
			return lines[i].SessionID < lines[j].SessionID
		}
		return lines[i].Step < lines[j].Step
	})
	return lines
}
