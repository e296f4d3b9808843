package serve

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

func TestDecisionLogPairing(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var buf bytes.Buffer
	l := newDecisionLog(&buf, nil, nil, 0)
	d := func(session string, step int, node, event string, sec int) {
		l.decision(logMsg{session: session, step: step, node: node, event: event, ts: at(sec), allowed: true, state: node})
	}
	d("a", 0, "agent_msg", "", 0)
	d("b", 0, "agent_msg", "", 1)
	d("a", 1, "find", "agent", 2) // completes a/0 with "agent"
	d("a", 2, "__end__", "ok", 3) // completes a/1 with "ok" and writes itself
	d("b", 1, "find", "agent", 4) // completes b/0
	d("b", 0, "agent_msg", "", 5) // b started afresh: b/1's outcome never came
	d("c", 0, "agent_msg", "", 6)
	d("d", 0, "agent_msg", "", 7)
	l.end("c")     // deleted: c/0 goes out with no event
	l.sweep(at(7)) // b/0 (at 5) is idle past the cutoff; d/0 (at 7) is not
	d("e", 0, "x\"y", "", 8)
	if err := l.close(); err != nil { // d/0 and e/0 at close, in session order
		t.Fatal(err)
	}
	want := []string{
		`{"session_id":"a","step":0,"node":"agent_msg","event":"agent","ts":"2025-01-01T10:00:00Z","verdict":{"allowed":true,"reason":"","state":"agent_msg"}}`,
		`{"session_id":"a","step":1,"node":"find","event":"ok","ts":"2025-01-01T10:00:02Z","verdict":{"allowed":true,"reason":"","state":"find"}}`,
		`{"session_id":"a","step":2,"node":"__end__","event":"","ts":"2025-01-01T10:00:03Z","verdict":{"allowed":true,"reason":"","state":"__end__"}}`,
		`{"session_id":"b","step":0,"node":"agent_msg","event":"agent","ts":"2025-01-01T10:00:01Z","verdict":{"allowed":true,"reason":"","state":"agent_msg"}}`,
		`{"session_id":"b","step":1,"node":"find","event":"","ts":"2025-01-01T10:00:04Z","verdict":{"allowed":true,"reason":"","state":"find"}}`,
		`{"session_id":"c","step":0,"node":"agent_msg","event":"","ts":"2025-01-01T10:00:06Z","verdict":{"allowed":true,"reason":"","state":"agent_msg"}}`,
		`{"session_id":"b","step":0,"node":"agent_msg","event":"","ts":"2025-01-01T10:00:05Z","verdict":{"allowed":true,"reason":"","state":"agent_msg"}}`,
		`{"session_id":"d","step":0,"node":"agent_msg","event":"","ts":"2025-01-01T10:00:07Z","verdict":{"allowed":true,"reason":"","state":"agent_msg"}}`,
		`{"session_id":"e","step":0,"node":"x\"y","event":"","ts":"2025-01-01T10:00:08Z","verdict":{"allowed":true,"reason":"","state":"x\"y"}}`,
	}
	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := l.lines.Load(); n != int64(len(want)) {
		t.Errorf("lines = %d, want %d", n, len(want))
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestDecisionLogWriteError(t *testing.T) {
	var errs []error // written by the log's goroutine, read after close
	l := newDecisionLog(failWriter{}, nil, func(err error) { errs = append(errs, err) }, 0)
	for i := 0; i < 3; i++ {
		l.decision(logMsg{session: fmt.Sprint(i), node: "__end__"})
	}
	err := l.close()
	if err == nil || !strings.Contains(err.Error(), "could not be written") {
		t.Errorf("close() = %v, want an error", err)
	}
	if len(errs) != 1 || errs[0].Error() != "decision log: disk full" {
		t.Errorf("LogError got %v, want the first failure once", errs)
	}
}

// FuzzAppendString checks the log's string encoder against encoding/json
// with HTML escaping off (encoding/json is the reference for what JSON
// is), and the answers' against json.Marshal (go-json, which the service's
// other answers use).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\x00\xff", "\u2028", "日本\n", "<a&b>\b\f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := stdjson.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		got := appendLogString(nil, s)
		if string(got) != strings.TrimSuffix(want.String(), "\n") {
			t.Fatalf("appendLogString(%q) = %s, want %s", s, got, want.String())
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("round trip of %q gave %q", s, back)
		}
		wantAnswer, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendAnswerString(nil, s); !bytes.Equal(got, wantAnswer) {
			t.Fatalf("appendAnswerString(%q) = %s, want %s (json.Marshal)", s, got, wantAnswer)
		}
	})
}
