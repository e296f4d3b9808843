package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/internal/goldenfile"

	"github.com/fsmine/fsmine/automaton"
)

// returnsFlags are the documented flags that made testdata/returns.jsonl.
var returnsFlags = []string{"gen", "-n", "400", "--seed", "7", "--drift", "0.05"}

const returnsSample = "../testdata/returns.jsonl"

// runCmd runs fsmine with args in memory and returns its exit status,
// stdout and stderr.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return code, out.String(), errOut.String()
}

// TestReturnsSampleIsCurrent keeps the bundled sample in step with the
// generator: regenerating it with the documented flags gives its bytes.
func TestReturnsSampleIsCurrent(t *testing.T) {
	code, out, errOut := runCmd(t, returnsFlags...)
	if code != exitOK {
		t.Fatalf("fsmine %s: exit %d: %s", strings.Join(returnsFlags, " "), code, errOut)
	}
	if goldenfile.Update() {
		if err := os.WriteFile(returnsSample, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(returnsSample)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("%s is not what fsmine %s writes; regenerate it with\n\tgo run . %s -o testdata/returns.jsonl",
			returnsSample, strings.Join(returnsFlags, " "), strings.Join(returnsFlags, " "))
	}
	if len(want) > 1500_000 {
		t.Errorf("%s is %d bytes, want it under 1.5 MB", returnsSample, len(want))
	}
}

// writeModel writes a validated model with the given transitions, every
// state labelled by its id.
func writeModel(t *testing.T, path string, ts []automaton.Transition) {
	t.Helper()
	m := &automaton.Model{Schema: automaton.Schema, Version: 1, Initial: automaton.StartID, Transitions: ts}
	ids := map[string]bool{automaton.StartID: true, automaton.EndID: true}
	for _, tr := range ts {
		ids[tr.From], ids[tr.To] = true, true
	}
	for id := range ids {
		m.States = append(m.States, automaton.State{ID: id, Label: id})
	}
	m.Sort()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	m.Digest = m.ComputeDigest()
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGenErrors(t *testing.T) {
	dir := t.TempDir()
	notModel := filepath.Join(dir, "notmodel.json")
	if err := os.WriteFile(notModel, []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	deadEnd := filepath.Join(dir, "deadend.json")
	writeModel(t, deadEnd, []automaton.Transition{
		{From: automaton.StartID, To: "a", Prob: 1},
		{From: "a", Event: "ok", To: "stuck", Prob: 1},
	})
	empty := filepath.Join(dir, "empty.json")
	writeModel(t, empty, nil)
	tests := []struct {
		name string
		args []string
		want string // in stderr, after "fsmine: "
	}{
		{"missing model", []string{"--model", filepath.Join(dir, "nope.json")}, "nope.json"},
		{"not a model", []string{"--model", notModel}, notModel + ": not an fsmine model"},
		{"dead end", []string{"--model", deadEnd}, deadEnd + `: state "stuck" has no transition out`},
		{"nothing to sample", []string{"--model", empty}, empty + ": model has no transition out of __start__"},
		{"negative n", []string{"-n", "-1"}, "-n must be 0 or more"},
		{"drift above 1", []string{"--drift", "1.5"}, "--drift must be a probability"},
		{"drift NaN", []string{"--drift", "NaN"}, "--drift must be a probability"},
		{"bad start", []string{"--start", "yesterday"}, `--start: "yesterday" is not an RFC 3339 time`},
		{"argument", []string{"extra"}, "unknown command"},
		{"unwritable output", []string{"-o", filepath.Join(dir, "no", "such", "dir", "x.jsonl")}, "--output " + filepath.Join(dir, "no")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, append([]string{"gen"}, tt.args...)...)
			if code != exitError {
				t.Errorf("exit %d, want %d", code, exitError)
			}
			if !strings.HasPrefix(errOut, "fsmine: ") || !strings.Contains(strings.SplitN(errOut, "\n", 2)[0], tt.want) {
				t.Errorf("stderr = %q, want a first line \"fsmine: ...%s...\"", errOut, tt.want)
			}
			if out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
		})
	}
}

func TestGenOutputFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	_, want, _ := runCmd(t, "gen", "-n", "20")
	code, out, errOut := runCmd(t, "gen", "-n", "20", "-o", path)
	if code != exitOK || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("-o wrote other bytes than stdout gets")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries after -o, want just the output (no temporary file)", len(entries))
	}
}
