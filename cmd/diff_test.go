package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// diffGoldenUpdate reports whether -update was given. The flag is
// registered only if no other test file of the package registered it first.
func diffGoldenUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

// chdirDiffFixtures moves the test into automaton/testdata/diff, so that
// reports name the fixtures as old.json and new.json, and returns the
// absolute path of cmd/testdata/diff for the golden files.
func chdirDiffFixtures(t *testing.T) string {
	t.Helper()
	golden, err := filepath.Abs(filepath.Join("testdata", "diff"))
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
			if diffGoldenUpdate() && tt.name != "text-no-color-env" {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if out.String() != string(want) {
				t.Errorf("output differs from %s (run go test -update and review it):\n%s", path, out.String())
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

// TestDiffJSONFields pins the documented field names of --format json.
func TestDiffJSONFields(t *testing.T) {
	chdirDiffFixtures(t)
	var out bytes.Buffer
	Run(context.Background(), []string{"diff", "--format", "json", "old.json", "new.json"}, IO{Out: &out, Err: &out})
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &obj); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out.String())
	}
	want := []string{"old_file", "new_file", "empty", "differences", "old", "new", "same_digest", "alpha", "correction",
		"transition_tests", "transition_threshold", "state_tests", "state_threshold", "states_added", "states_removed",
		"states_relabeled", "transitions_added", "transitions_removed", "share_changes", "outflow_shifts",
		"rare_flips", "loops", "trunk"}
	for _, k := range want {
		if _, ok := obj[k]; !ok {
			t.Errorf("JSON lacks field %q", k)
		}
	}
	if len(obj) != len(want) {
		t.Errorf("JSON has %d fields, want %d: %s", len(obj), len(want), out.String())
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
		{"dot folder missing", []string{"diff", "--dot", filepath.Join(dir, "no", "x.dot"), good, good}, []string{"writing ", "x.dot"}},
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

func TestDiffMarkdownEscapes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "`plain`"},
		{"a|b", "`a\\|b`"},
		{"tick`in", "``tick`in``"},
		{"`edge", "`` `edge ``"},
		{"two\nlines", "`two lines`"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := diffMDCode(tt.in); got != tt.want {
			t.Errorf("diffMDCode(%q) = %q, want %q", tt.in, got, tt.want)
		}
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
