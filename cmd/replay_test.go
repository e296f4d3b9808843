package cmd

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/mine/check"
)

func TestReplayExitCodes(t *testing.T) {
	dir := checkFixture(t)
	model := filepath.Join(dir, "m.json")
	newLog := filepath.Join(dir, "new.jsonl")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"fits", []string{"--session", "a-fit"}, 0, "verdict  fits", ""},
		{"deviates", []string{"--session", "b-skip"}, 1, "verdict  deviates at step 1", ""},
		{"loop cap", []string{"--session", "d-retry"}, 1, "loop_cap (3/2)", ""},
		{"not found", []string{"--session", "nope"}, 2, "", `fsmine: session "nope" not found in ` + newLog + ` (5 sessions; e.g. a-fit, b-skip, c-unknown, d-retry, e-trunc)`},
		{"not found, similar", []string{"--session", "skip"}, 2, "", `(5 sessions; similar: b-skip)`},
		{"no session flag", nil, 2, "", "fsmine: replay needs --session ID"},
		{"bad format", []string{"--session", "a-fit", "--format", "jsonl"}, 2, "", `fsmine: unknown --format "jsonl": want text or json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"replay", "--model", model}, tt.args...)
			args = append(args, newLog)
			code, stdout, stderr := checkRun(args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %s)", code, tt.code, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout\n%s\nwant it to contain %q", stdout, tt.stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr, tt.stderr)
			}
		})
	}
	if code, _, stderr := checkRun("replay", "--session", "a-fit", newLog); code != 2 || !strings.Contains(stderr, "replay needs --model") {
		t.Errorf("without --model: exit %d, %s", code, stderr)
	}
	if code, _, stderr := checkRun("replay", "--model", model, "--session", "a-fit"); code != 2 || !strings.Contains(stderr, "at least one LOG") {
		t.Errorf("without logs: exit %d, %s", code, stderr)
	}
}

func TestReplaySteps(t *testing.T) {
	dir := checkFixture(t)
	model := filepath.Join(dir, "m.json")
	newLog := filepath.Join(dir, "new.jsonl")
	tests := []struct {
		session  string
		verdicts []string // per step: "state>next verdict"
		kind     string
		expected []string // the model's moves from the deviation's state
	}{
		{"a-fit", []string{"__start__>greet ok", "greet>lookup ok", "lookup>refund ok", "refund>__end__ ok"}, "", nil},
		// greet -ok-> refund is illegal; refund is one state: resync there.
		{"b-skip", []string{"__start__>greet ok", "greet>refund illegal", "refund>__end__ ok"}, "illegal_transition", []string{"ok>lookup"}},
		// frobnicate is unknown: lost, then lookup resyncs.
		{"c-unknown", []string{"__start__>greet ok", "greet> unknown", ">lookup lost", "lookup>refund ok", "refund>__end__ ok"}, "unknown_state", []string{"ok>lookup"}},
		{"e-trunc", []string{"__start__>greet ok", "greet>lookup ok", "lookup>__end__ incomplete"}, "incomplete", []string{"not_found>lookup", "found>refund", "none>close"}},
	}
	for _, tt := range tests {
		t.Run(tt.session, func(t *testing.T) {
			code, out, stderr := checkRun("replay", "--model", model, "--session", tt.session, "--format", "json", newLog)
			if code == 2 {
				t.Fatal(stderr)
			}
			var r check.ReplayReport
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range r.Steps {
				got = append(got, s.State+">"+s.Next+" "+s.Verdict)
			}
			if !reflect.DeepEqual(got, tt.verdicts) {
				t.Errorf("steps %q, want %q", got, tt.verdicts)
			}
			if (r.Deviation == nil) != (tt.kind == "") || (r.Deviation != nil && r.Deviation.Kind != tt.kind) {
				t.Errorf("deviation %+v, want kind %q", r.Deviation, tt.kind)
			}
			var exp []string
			for _, e := range r.Expected {
				exp = append(exp, e.Event+">"+e.To)
			}
			if !reflect.DeepEqual(exp, tt.expected) {
				t.Errorf("expected moves %q, want %q", exp, tt.expected)
			}
			if r.Fits != (code == 0) {
				t.Errorf("fits %v, exit %d", r.Fits, code)
			}
			if r.Fits && r.Cost != 0 {
				t.Errorf("fits with cost %d", r.Cost)
			}
			if !r.Fits && tt.kind != "loop_cap" && len(r.Alignment) == 0 {
				t.Error("no alignment for a deviating session")
			}
		})
	}
}

// TestReplayDwell: a step's dwell is the time spent in the state it leaves.
func TestReplayDwell(t *testing.T) {
	dir := t.TempDir()
	log := `{"session_id":"s","step":0,"ts":"2026-01-01T00:00:00Z","node":"a","event":"ok"}
{"session_id":"s","step":1,"ts":"2026-01-01T00:00:02.5Z","node":"b","event":"ok","duration_ms":300}
`
	p := writeTemp(t, dir, "log.jsonl", log)
	model := filepath.Join(dir, "m.json")
	if code, _, stderr := checkRun("build", "-q", "-o", model, p); code != 0 {
		t.Fatal(stderr)
	}
	_, out, _ := checkRun("replay", "--model", model, "--session", "s", "--format", "json", p)
	var r check.ReplayReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	var dwell []any
	for _, s := range r.Steps {
		if s.DwellMS == nil {
			dwell = append(dwell, nil)
		} else {
			dwell = append(dwell, *s.DwellMS)
		}
	}
	if want := []any{nil, 2500.0, 300.0}; !reflect.DeepEqual(dwell, want) {
		t.Errorf("dwell %v, want %v", dwell, want)
	}
	_, text, _ := checkRun("replay", "--model", model, "--session", "s", p)
	if !strings.Contains(text, "2.5 s") || !strings.Contains(text, "300 ms") {
		t.Errorf("text lacks the dwell times:\n%s", text)
	}
}
