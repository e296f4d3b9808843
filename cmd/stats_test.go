package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// statsSampleModel mines the bundled sample with its label rules.
func statsSampleModel(t *testing.T) (dir, model, log string) {
	t.Helper()
	dir = t.TempDir()
	model = filepath.Join(dir, "m.json")
	log = "../testdata/returns.jsonl"
	if code, _, stderr := checkRun("build", "-q", "--labels", "../testdata/returns.labels.json", "-o", model, log); code != 0 {
		t.Fatal(stderr)
	}
	return dir, model, log
}

func TestStatsExitCodes(t *testing.T) {
	dir, model, log := statsSampleModel(t)
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"model only", []string{model}, 0, ""},
		{"with logs", []string{model, log}, 0, ""},
		{"no args", nil, 2, "fsmine: stats needs a model file"},
		{"bad format", []string{"--format", "csv", model}, 2, `unknown --format "csv"`},
		{"bad top", []string{"--top", "-1", model}, 2, "--top must be 0 or more"},
		{"bad measure", []string{"--measure", "a..b", model, log}, 2, `--measure "a..b"`},
		{"missing model", []string{filepath.Join(dir, "nope.json")}, 2, "no such file"},
		{"log as model", []string{log}, 2, "not an fsmine model"},
		{"no sessions", []string{model, empty}, 2, "no sessions in the input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := checkRun(append([]string{"stats"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.stderr)
			}
		})
	}
}
