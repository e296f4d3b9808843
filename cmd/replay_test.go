package cmd

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
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

// TestReplayReadsOneSession reads logs as replay does and wants the log to
// hold the session asked for alone, from files and from standard input.
// Files are read again should it not be there, every session held, for the
// error to say what the logs hold; standard input, read once, gives an
// error that counts its records.
func TestReplayReadsOneSession(t *testing.T) {
	dir := checkFixture(t)
	model := filepath.Join(dir, "m.json")
	newLog := filepath.Join(dir, "new.jsonl")
	data, err := os.ReadFile(newLog)
	if err != nil {
		t.Fatal(err)
	}
	m, err := loadDiffModel(model)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, session, log string
		want               []string
	}{
		{"file", "b-skip", newLog, []string{"b-skip"}},
		{"file, not there", "nope", newLog, []string{"a-fit", "b-skip", "c-unknown", "d-retry", "e-trunc"}},
		{"stdin", "b-skip", "-", []string{"b-skip"}}, // a stream of the whole log held no more than a file
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			streams := IO{In: bytes.NewReader(data), Out: io.Discard, Err: io.Discard}
			lg, _, ropt, err := readLogs(m, model, []string{tt.log}, &logFlags{}, streams.In, streams, nil, tt.session)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range lg.Sessions {
				got = append(got, s.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("sessions %q, want %q", got, tt.want)
			}
			if ropt.Session != "" {
				t.Errorf("options returned with Session %q, want none", ropt.Session)
			}
		})
	}
	streams := IO{In: bytes.NewReader(data), Out: io.Discard, Err: io.Discard}
	_, _, _, err = readLogs(m, model, []string{"-"}, &logFlags{}, streams.In, streams, nil, "nope")
	want := `session "nope" not found in - (` + strconv.Itoa(bytes.Count(data, []byte("\n"))) + ` records read; a stream is read once`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("stdin, not there: error %v, want it to contain %q", err, want)
	}
}
