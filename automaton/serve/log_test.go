package serve

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
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

// fullDisk is a writer that, while full, writes at most room more bytes and
// fails (a disk that fills up in the middle of a write), and writes
// everything once space is back.
type fullDisk struct {
	buf  bytes.Buffer
	full bool
	room int
}

func (w *fullDisk) Write(p []byte) (int, error) {
	if !w.full {
		return w.buf.Write(p)
	}
	n := min(w.room, len(p))
	w.room -= n
	w.buf.Write(p[:n])
	return n, errors.New("no space left on device")
}

// TestDecisionLogRecovers: after a failed write the log writes again once
// the writer works (a bufio.Writer's error used to stick, so nothing was
// written after the first ENOSPC); the line torn by the failure is ended
// before the next one, lost lines are counted, and the failure is reported
// once per stretch. The writer is driven without its goroutine, so that
// each flush is where the test says.
func TestDecisionLogRecovers(t *testing.T) {
	disk := &fullDisk{}
	var errs []string
	l := &decisionLog{w: disk, held: map[string]logMsg{}, maxHeld: maxHeldUnbounded,
		onErr: func(err error) { errs = append(errs, err.Error()) }}
	line := func(s string) {
		l.handle(logMsg{kind: logDecision, session: s, node: "__end__", ts: time.Unix(0, 0)})
		l.flush()
	}
	want := func(s string) string {
		return `{"session_id":"` + s + `","step":0,"node":"__end__","event":"","ts":"1970-01-01T00:00:00Z","verdict":{"allowed":false,"reason":"","state":""}}` + "\n"
	}
	line("a")
	disk.full, disk.room = true, 10
	line("b") // 10 bytes of it written, then the disk is full
	if failing, msg, lost := l.health(); !failing || msg != "no space left on device" || lost != 1 {
		t.Errorf("health() = %v, %q, %d; want failing with the error, 1 lost", failing, msg, lost)
	}
	line("c") // nothing written
	disk.full = false
	line("d")
	if failing, _, lost := l.health(); failing || lost != 2 {
		t.Errorf("health() after recovery = failing %v, %d lost; want false, 2", failing, lost)
	}
	if got, w := disk.buf.String(), want("a")+want("b")[:10]+"\n"+want("d"); got != w {
		t.Errorf("log:\n%s\nwant:\n%s", got, w)
	}
	if n := l.lines.Load(); n != 2 {
		t.Errorf("lines = %d, want 2", n)
	}
	disk.full, disk.room = true, 0
	line("e")
	if len(errs) != 2 {
		t.Errorf("onErr heard %q, want the first failure of each of the 2 stretches", errs)
	}
	// A failure that writes nothing leaves the log on a line boundary.
	disk.full = false
	line("f")
	if got := disk.buf.String(); !strings.HasSuffix(got, want("d")+want("f")) {
		t.Errorf("log ends %q, want d's line then f's", got[max(0, len(got)-300):])
	}
}

// TestOpenLogEndsTornLine: a log file whose last line was torn gets a
// newline before this run's first line; a whole one is left as it is.
func TestOpenLogEndsTornLine(t *testing.T) {
	for _, tt := range []struct{ name, before, want string }{
		{"torn", "{\"a\":1}\n{\"b\":", "{\"a\":1}\n{\"b\":\nnext\n"},
		{"whole", "{\"a\":1}\n", "{\"a\":1}\nnext\n"},
		{"empty", "", "next\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.jsonl")
			if err := os.WriteFile(path, []byte(tt.before), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := OpenLog(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("next\n"); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if got, _ := os.ReadFile(path); string(got) != tt.want {
				t.Errorf("log = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestHealthReportsLogFailures: /healthz answers 503 with the error while
// the decision log's last write failed and 200 again once it writes, and
// /metrics shows the lost lines and the failing gauge.
func TestHealthReportsLogFailures(t *testing.T) {
	m, p, err := LoadFiles(fixtureModel, fixturePolicy)
	if err != nil {
		t.Fatal(err)
	}
	disk := &fullDisk{}
	s, err := New(m, p, Config{Log: disk})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer func() { ts.Close(); s.Close() }()
	get := func(path string) (int, string) {
		resp, err := ts.Client().Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	// No step is sent, so the log's goroutine is idle and the test drives
	// the writer.
	write := func() { s.log.write(logMsg{session: "s", node: "__end__"}, ""); s.log.flush() }
	disk.full = true
	write()
	if code, body := get("/healthz"); code != 503 || body != `{"status":"log_failing","log_errors":1,"log_error":"no space left on device"}` {
		t.Errorf("/healthz while failing = %d %s", code, body)
	}
	if _, body := get("/metrics"); !strings.Contains(body+"\n", "\nfsmine_guard_log_errors_total 1\n") || !strings.Contains(body+"\n", "\nfsmine_guard_log_failing 1\n") {
		t.Errorf("/metrics while failing lacks the errors and the gauge:\n%s", body)
	}
	disk.full = false
	write()
	if code, body := get("/healthz"); code != 200 || body != `{"status":"ok","log_errors":1}` {
		t.Errorf("/healthz after recovery = %d %s", code, body)
	}
	if _, body := get("/metrics"); !strings.Contains(body+"\n", "\nfsmine_guard_log_failing 0\n") {
		t.Errorf("/metrics after recovery lacks fsmine_guard_log_failing 0")
	}
}
