package cmd

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// chdirDiffFixtures moves the test into automaton/testdata/diff, so that
// reports name the fixtures as old.json and new.json, and returns the
// absolute path of render/testdata/diff, where the writers' golden files
// are (go test ./render -update rewrites them).
func chdirDiffFixtures(t *testing.T) string {
	t.Helper()
	golden, err := filepath.Abs(filepath.Join("..", "render", "testdata", "diff"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join("..", "automaton", "testdata", "diff"))
	return golden
}

func TestDiffGolden(t *testing.T) {
	golden := chdirDiffFixtures(t)
	tests := []struct {
		name     string
		args     []string
		tty      bool
		noColor  string
		wantExit int
	}{
		{"text", []string{"diff", "old.json", "new.json"}, false, "", 1},
		{"text-color", []string{"diff", "old.json", "new.json"}, true, "", 1},
		{"text-no-color-env", []string{"diff", "old.json", "new.json"}, true, "1", 1},
		{"markdown", []string{"diff", "--format", "markdown", "old.json", "new.json"}, false, "", 1},
		{"json", []string{"diff", "--format", "json", "old.json", "new.json"}, false, "", 1},
		{"identical-text", []string{"diff", "old.json", "old.json"}, false, "", 0},
		{"identical-markdown", []string{"diff", "--format", "markdown", "old.json", "old.json"}, false, "", 0},
		{"identical-json", []string{"diff", "--format", "json", "old.json", "old.json"}, false, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tt.noColor)
			var out, errOut bytes.Buffer
			code := Run(context.Background(), tt.args, IO{Out: &out, Err: &errOut, IsTTY: tt.tty})
			if code != tt.wantExit {
				t.Errorf("exit = %d, want %d; stderr:\n%s", code, tt.wantExit, errOut.String())
			}
			if errOut.Len() > 0 {
				t.Errorf("stderr = %q, want nothing", errOut.String())
			}
			path := filepath.Join(golden, tt.name+".golden")
			if tt.name == "text-no-color-env" {
				path = filepath.Join(golden, "text.golden") // NO_COLOR wins over the terminal
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != string(want) {
				t.Errorf("output differs from %s:\n%s", path, out.String())
			}
		})
	}
}

func TestDiffColorOnlyOnTTY(t *testing.T) {
	chdirDiffFixtures(t)
	for _, tty := range []bool{false, true} {
		t.Setenv("NO_COLOR", "")
		var out bytes.Buffer
		Run(context.Background(), []string{"diff", "old.json", "new.json"}, IO{Out: &out, Err: &out, IsTTY: tty})
		if got := strings.Contains(out.String(), "\x1b["); got != tty {
			t.Errorf("IsTTY = %v: escape codes in output = %v, want %v", tty, got, tty)
		}
	}
}

func TestDiffDotFile(t *testing.T) {
	chdirDiffFixtures(t)
	dot := filepath.Join(t.TempDir(), "overlay.dot")
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"diff", "--dot", dot, "old.json", "new.json"}, IO{Out: &out, Err: &errOut})
	if code != 1 {
		t.Fatalf("exit = %d, want 1; stderr: %s", code, errOut.String())
	}
	got, err := os.ReadFile(dot)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "..", "render", "testdata", "diff", "overlay.dot"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("--dot wrote:\n%s\nwant render/testdata/diff/overlay.dot", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(dot))
	if len(entries) != 1 {
		t.Errorf("the DOT folder holds %d entries, want only overlay.dot (no temporary file left)", len(entries))
	}
}

func TestDiffErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, err := filepath.Abs(filepath.Join("..", "automaton", "testdata", "diff", "old.json"))
	if err != nil {
		t.Fatal(err)
	}
	notModel := write("list.json", `[1, 2, 3]`)
	otherSchema := write("other.json", `{"schema": "something/v1"}`)
	newer := write("v2.json", `{"schema": "fsmine.automaton/v2", "states": []}`)
	broken := write("broken.json", `{"schema": "fsmine.automaton/v1", "initial": "__start__", "states": []}`)
	missing := filepath.Join(dir, "missing.json")
	tests := []struct {
		name string
		args []string
		want []string // substrings of stderr
	}{
		{"missing file", []string{"diff", good, missing}, []string{"fsmine: ", "missing.json", "no such file"}},
		{"not a model", []string{"diff", notModel, good}, []string{"list.json", "not an fsmine model"}},
		{"other schema", []string{"diff", good, otherSchema}, []string{"other.json", "not an fsmine model", `"something/v1"`}},
		{"newer schema", []string{"diff", good, newer}, []string{"v2.json", "newer than this fsmine", `"fsmine.automaton/v2"`}},
		{"invalid model", []string{"diff", broken, good}, []string{"broken.json", "invalid model"}},
		{"one argument", []string{"diff", good}, []string{"two model files", "Usage:"}},
		{"bad format", []string{"diff", "--format", "yaml", good, good}, []string{`unknown --format "yaml"`, "Usage:"}},
		{"bad alpha", []string{"diff", "--alpha", "1.5", good, good}, []string{"--alpha must be between 0 and 1", "Usage:"}},
		{"dot to stdout", []string{"diff", "--dot", "-", good, good}, []string{"--dot needs a file name"}},
		{"dot folder missing", []string{"diff", "--dot", filepath.Join(dir, "no", "x.dot"), good, good}, []string{"no folder ", "x.dot"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Run(context.Background(), tt.args, IO{Out: &out, Err: &errOut})
			if code != 2 {
				t.Errorf("exit = %d, want 2", code)
			}
			if out.Len() > 0 {
				t.Errorf("stdout = %q, want nothing", out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr = %q, want it to contain %q", errOut.String(), w)
				}
			}
		})
	}
}

// TestDiffAlphaFlag checks that --alpha reaches the tests: at 0.5 the
// timeout edge's 4.5% -> 13.3% (p = .032) becomes a share change.
func TestDiffAlphaFlag(t *testing.T) {
	chdirDiffFixtures(t)
	for _, tt := range []struct {
		alpha string
		want  bool
	}{{"0.01", false}, {"0.5", true}} {
		var out bytes.Buffer
		Run(context.Background(), []string{"diff", "--format", "json", "--alpha", tt.alpha, "old.json", "new.json"}, IO{Out: &out, Err: &out})
		var got struct {
			Alpha        float64                 `json:"alpha"`
			ShareChanges []automaton.ShareChange `json:"share_changes"`
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, c := range got.ShareChanges {
			found = found || c.Event == "timeout"
		}
		if found != tt.want {
			t.Errorf("--alpha %s: timeout share change reported = %v, want %v", tt.alpha, found, tt.want)
		}
	}
}

// TestDiffHelpdeskHalves runs build and diff on the real help-desk log
// (skipped when ../shared/data is absent): two halves split by session
// must show no significant share or outflow change, while the earlier and
// the later half of the sessions by start time must show the process
// drift that is there (Wait is followed by Resolve ticket 19.5% of the
// time before, 79.7% after).
func TestDiffHelpdeskHalves(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four models from real data")
	}
	src := filepath.Join("..", "..", "shared", "data", "jsonl", "helpdesk.jsonl.gz")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("no real data: %v", err)
	}
	type rec struct {
		Session string `json:"session_id"`
		Step    int    `json:"step"`
		TS      string `json:"ts"`
	}
	var lines [][]byte
	var recs []rec
	start := map[string]string{}
	for _, line := range readLines(t, src) {
		var r rec
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, []byte(line))
		recs = append(recs, r)
		if r.Step == 0 {
			start[r.Session] = r.TS
		}
	}
	sessions := make([]string, 0, len(start))
	for s := range start {
		sessions = append(sessions, s)
	}
	slices.SortFunc(sessions, func(a, b string) int {
		return cmp.Or(strings.Compare(start[a], start[b]), strings.Compare(a, b))
	})
	early := map[string]bool{}
	for _, s := range sessions[:len(sessions)/2] {
		early[s] = true
	}
	dir := t.TempDir()
	split := func(name string, inA func(session string) bool) (a, b string) {
		var ba, bb bytes.Buffer
		for i, l := range lines {
			w := &bb
			if inA(recs[i].Session) {
				w = &ba
			}
			w.Write(l)
			w.WriteByte('\n')
		}
		a, b = filepath.Join(dir, name+"-a.jsonl"), filepath.Join(dir, name+"-b.jsonl")
		if err := os.WriteFile(a, ba.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(b, bb.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return a, b
	}
	build := func(log string) string {
		out := strings.TrimSuffix(log, ".jsonl") + ".json"
		var errOut bytes.Buffer
		if code := Run(context.Background(), []string{"build", "-q", "--merge", "label", log, "-o", out}, IO{Out: &errOut, Err: &errOut}); code != 0 {
			t.Fatalf("build %s: exit %d: %s", log, code, errOut.String())
		}
		return out
	}
	diff := func(a, b string) (d struct {
		ShareChanges  []automaton.ShareChange  `json:"share_changes"`
		OutflowShifts []automaton.OutflowShift `json:"outflow_shifts"`
	}) {
		var out, errOut bytes.Buffer
		Run(context.Background(), []string{"diff", "--format", "json", a, b}, IO{Out: &out, Err: &errOut})
		if err := json.Unmarshal(out.Bytes(), &d); err != nil {
			t.Fatalf("diff %s %s: %v; stderr: %s", a, b, err, errOut.String())
		}
		return d
	}

	// By a hash of the session id: two samples of one process.
	a, b := split("halves", func(s string) bool { return sha256.Sum256([]byte(s))[0]&1 == 0 })
	if d := diff(build(a), build(b)); len(d.ShareChanges) != 0 || len(d.OutflowShifts) != 0 {
		t.Errorf("halves: share changes %+v, outflow shifts %+v, want none", d.ShareChanges, d.OutflowShifts)
	}

	// By start time: 2010-01 to 2011-11 against 2011-11 to 2013-11.
	a, b = split("time", func(s string) bool { return early[s] })
	d := diff(build(a), build(b))
	found := false
	for _, c := range d.ShareChanges {
		if c.From == "Wait" && c.To == "Resolve ticket" {
			found = c.NewShare > c.OldShare
		}
	}
	if !found {
		t.Errorf("early vs late: no rise of Wait -> Resolve ticket among %+v", d.ShareChanges)
	}
}
