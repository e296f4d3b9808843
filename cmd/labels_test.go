package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine/stages"
)

// TestLabelsSuggestRealLogs runs labels suggest on each real log in
// ../shared/data/jsonl (skipped when absent, or with -short) and builds a
// model with the rules as written, without edits: its states carry 5 to 12
// labels (alergia may give a stage more than one state, by context), and a
// second run to standard output gives the same bytes as the file.
func TestLabelsSuggestRealLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	files, _ := filepath.Glob(filepath.Join(realDataDir, "*.jsonl*"))
	if len(files) == 0 {
		t.Skip("no ../shared/data/jsonl")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			dir := t.TempDir()
			rules, model := filepath.Join(dir, "rules.json"), filepath.Join(dir, "model.json")
			var stderr bytes.Buffer
			io := IO{Out: &bytes.Buffer{}, Err: &stderr}
			if code := Run(context.Background(), []string{"labels", "suggest", "-o", rules, path}, io); code != exitOK {
				t.Fatalf("labels suggest: exit %d: %s", code, stderr.String())
			}
			if code := Run(context.Background(), []string{"build", "-q", "--labels", rules, "-o", model, path}, io); code != exitOK {
				t.Fatalf("build --labels: exit %d: %s", code, stderr.String())
			}
			m, err := automaton.Load(model)
			if err != nil {
				t.Fatal(err)
			}
			labels := map[string]bool{}
			for _, s := range m.States[1 : len(m.States)-1] {
				labels[s.Label] = true
			}
			if n := len(labels); n < stages.MinStages || n > stages.MaxStages {
				t.Errorf("the model has %d labels, want %d to %d", n, stages.MinStages, stages.MaxStages)
			}
			if !bytes.Contains(stderr.Bytes(), []byte(" stages, by position in the sessions:\n")) {
				t.Errorf("no stage list on stderr: %s", stderr.String())
			}
			data, err := os.ReadFile(rules)
			if err != nil {
				t.Fatal(err)
			}
			var again bytes.Buffer
			if code := Run(context.Background(), []string{"labels", "suggest", "-q", path}, IO{Out: &again, Err: &stderr}); code != exitOK || !bytes.Equal(again.Bytes(), data) {
				t.Errorf("a second run to standard output (exit %d) differs from the file", code)
			}
		})
	}
}
