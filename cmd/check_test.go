package cmd

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/check"
	"github.com/fsmine/fsmine/mine/gen"
)

// checkFixture writes the train and new logs and a model mined (label
// merge) from the train log into a temporary folder, and returns its path.
func checkFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	// The small flow of testdata/check (see its README): three sessions to
	// mine, and one session of each verdict.
	for name, src := range map[string]string{"train.jsonl": "tiny-train.jsonl", "new.jsonl": "tiny-new.jsonl"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "check", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var errb bytes.Buffer
	code := Run(context.Background(), []string{"build", "-q", "--merge", "label", "--generalize", "none", "-o", filepath.Join(dir, "m.json"), filepath.Join(dir, "train.jsonl")},
		IO{In: strings.NewReader(""), Out: io.Discard, Err: &errb})
	if code != 0 {
		t.Fatalf("build: exit %d: %s", code, errb.String())
	}
	return dir
}

func checkRun(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

func TestCheckExitCodes(t *testing.T) {
	dir := checkFixture(t)
	model := filepath.Join(dir, "m.json")
	newLog := filepath.Join(dir, "new.jsonl")
	train := filepath.Join(dir, "train.jsonl")
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"all fit", []string{"check", "--model", model, "--min-fit", "1", train}, 0, ""},
		{"no bar", []string{"check", "--model", model, newLog}, 0, ""},
		{"at the bar", []string{"check", "--model", model, "--min-fit", "0.2", newLog}, 0, ""},
		{"below the bar", []string{"check", "--model", model, "--min-fit", "0.5", newLog}, 1, ""},
		{"below the bar, jsonl", []string{"check", "--model", model, "--min-fit", "0.5", "--format", "jsonl", newLog}, 1, "below --min-fit 0.5"},
		{"no model", []string{"check", newLog}, 2, "fsmine: check needs --model M.json"},
		{"no logs", []string{"check", "--model", model}, 2, "fsmine: check needs at least one LOG"},
		{"bad min-fit", []string{"check", "--model", model, "--min-fit", "2", newLog}, 2, "fsmine: --min-fit must be between 0 and 1, got 2"},
		{"bad format", []string{"check", "--model", model, "--format", "yaml", newLog}, 2, `fsmine: unknown --format "yaml": want text, json or jsonl`},
		{"missing model", []string{"check", "--model", filepath.Join(dir, "nope.json"), newLog}, 2, "no such file"},
		{"not a model", []string{"check", "--model", newLog, newLog}, 2, "not an fsmine model"},
		{"missing log", []string{"check", "--model", model, filepath.Join(dir, "nope.jsonl")}, 2, "no such file"},
		{"no sessions", []string{"check", "--model", model, empty}, 2, "no sessions in the input"},
		{"bad labels", []string{"check", "--model", model, "--labels", newLog, newLog}, 2, "label rules: json: unknown field"},
		{"bad from", []string{"check", "--model", model, "--from", "nope", newLog}, 2, `unknown --from "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := checkRun(tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %s)", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr, tt.stderr)
			}
		})
	}
}

// TestCheckJSONL: one line per session, in session id order, each a verdict.
func TestCheckJSONL(t *testing.T) {
	dir := checkFixture(t)
	code, out, stderr := checkRun("check", "--model", filepath.Join(dir, "m.json"), "--format", "jsonl", filepath.Join(dir, "new.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	wantIDs := []string{"a-fit", "b-skip", "c-unknown", "d-retry", "e-trunc"}
	if len(lines) != len(wantIDs) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(wantIDs), out)
	}
	for i, l := range lines {
		var v check.Verdict
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		if v.SessionID != wantIDs[i] {
			t.Errorf("line %d: session %s, want %s", i, v.SessionID, wantIDs[i])
		}
		if v.Fits != (v.Deviation == nil) || v.Fits != (i == 0) {
			t.Errorf("line %d: fits %v with deviation %v", i, v.Fits, v.Deviation)
		}
	}
}

// TestCheckReadsLikeTheModel: the label rules stored in the model apply to
// the logs checked; --labels overrides them.
func TestCheckReadsLikeTheModel(t *testing.T) {
	dir := t.TempDir()
	rules := `{"rules":[{"match":{"node":"^find_"},"state":"identify","fold":true},{"match":{"node":"^chat$"},"drop":true}]}`
	train := `{"session_id":"a","step":0,"node":"find_by_email","event":"fail"}
{"session_id":"a","step":1,"node":"find_by_name","event":"ok"}
{"session_id":"a","step":2,"node":"chat","event":"said"}
{"session_id":"a","step":3,"node":"refund","event":"done"}
`
	fresh := `{"session_id":"b","step":0,"node":"find_by_zip","event":"ok"}
{"session_id":"b","step":1,"node":"chat","event":"said"}
{"session_id":"b","step":2,"node":"refund","event":"done"}
`
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rulesPath, trainPath, freshPath := write("rules.json", rules), write("train.jsonl", train), write("fresh.jsonl", fresh)
	model := filepath.Join(dir, "m.json")
	if code, _, stderr := checkRun("build", "-q", "--labels", rulesPath, "-o", model, trainPath); code != 0 {
		t.Fatal(stderr)
	}
	code, out, _ := checkRun("check", "--model", model, "--format", "json", freshPath)
	var sum check.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	if sum.Fit != 1 {
		t.Errorf("with the model's rules: fit %d of %d, want 1", sum.Fit, sum.Sessions)
	}
	empty := write("norules.json", `{"rules":[]}`)
	_, out, _ = checkRun("check", "--model", model, "--format", "json", "--labels", empty, freshPath)
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Fit != 0 || sum.ByKind[conform.KindUnknownState] != 1 {
		t.Errorf("without rules: fit %d, by kind %v; want an unknown state", sum.Fit, sum.ByKind)
	}
}

// checkGenLog samples n sessions from the built-in truth with drift and reads
// them with the bundled label rules; it also returns the log's bytes.
func checkGenLog(tb testing.TB, n int, seed uint64) (*mine.Log, []byte) {
	tb.Helper()
	truth, err := loadGenModel("", "returns")
	if err != nil {
		tb.Fatal(err)
	}
	rulesData, err := os.ReadFile("../testdata/returns.labels.json")
	if err != nil {
		tb.Fatal(err)
	}
	rules, err := mine.ParseRules(rulesData)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := gen.New(truth, gen.Options{Seed: seed, Drift: 0.05, Start: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)})
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if err := g.Write(context.Background(), &buf, n); err != nil {
		tb.Fatal(err)
	}
	data := buf.Bytes()
	lg, err := mine.Read([]mine.Input{{Name: "gen", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}}, mine.ReadOptions{Rules: rules, Strict: true})
	if err != nil {
		tb.Fatal(err)
	}
	return lg, data
}

// BenchmarkCheck measures the conformance part of fsmine check (the log is
// read outside the loop): a model mined from 2,000 sessions checks 20,000
// others. SetBytes is the size of the checked log, so MB/s reads as the
// input rate the checker sustains; events/s counts visits.
func BenchmarkCheck(b *testing.B) {
	train, _ := checkGenLog(b, 2000, 1)
	m, err := mine.Build(train, mine.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	lg, data := checkGenLog(b, 20000, 2)
	events := 0
	for i := range lg.Sessions {
		events += len(lg.Sessions[i].Visits)
	}
	for _, format := range []string{"json", "jsonl"} {
		b.Run("format="+format, func(b *testing.B) {
			c := conform.New(m, conform.Options{})
			var emit func(*check.Verdict) error
			if format == "jsonl" {
				enc := json.NewEncoder(io.Discard)
				emit = func(v *check.Verdict) error { return enc.Encode(v) }
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for b.Loop() {
				if _, err := check.Log(lg, c, check.Options{Deviations: format == "json"}, emit); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func writeTemp(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckStreamSameReport checks logs streaming (sessions checked as the
// read finishes them), streaming with a window so small that the read
// starts over, and holding every session, and wants the same bytes in
// every format: on the interleaved returns sample and on the help-desk log
// (sessions one after another), each against a model of its first lines.
func TestCheckStreamSameReport(t *testing.T) {
	dir := t.TempDir()
	logs := []string{"../testdata/returns.jsonl"}
	if help := filepath.Join(realDataDir, "helpdesk.jsonl.gz"); fileExists(help) {
		logs = append(logs, help)
	}
	for i, log := range logs {
		lines := readLines(t, log)
		train := writeTemp(t, dir, fmt.Sprint(i, ".jsonl"), strings.Join(lines[:len(lines)/5], "\n")+"\n")
		model := filepath.Join(dir, fmt.Sprint(i, ".json"))
		if code, _, stderr := checkRun("build", "-q", "-o", model, train); code != 0 {
			t.Fatalf("build: %s", stderr)
		}
		for _, format := range []string{"json", "jsonl", "text"} {
			var want string
			for _, window := range []int{0, 100000, 1} {
				code, out, stderr := checkRun("check", "--model", model, "--format", format, "--list", "0", "--window", fmt.Sprint(window), log)
				if code > 1 {
					t.Fatalf("%s window %d: exit %d: %s", log, window, code, stderr)
				}
				if window == 0 {
					want = out
				} else if out != want {
					t.Errorf("%s --format %s: window %d gives another report", log, format, window)
				}
			}
			if format == "json" {
				var sum check.Summary
				if err := json.Unmarshal([]byte(want), &sum); err != nil {
					t.Fatal(err)
				}
				if len(sum.Deviations) == 0 || sum.Fit == 0 {
					t.Errorf("%s: %d deviations, %d fit: want both", log, len(sum.Deviations), sum.Fit)
				}
			}
		}
	}
}

// readLines returns the lines of a JSONL file, gunzipped when it ends in .gz.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return strings.Split(strings.TrimRight(string(data), "\n"), "\n")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
