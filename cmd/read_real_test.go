package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawDataDir holds the original exports of ../shared/data/raw, when
// present.
var rawDataDir = filepath.Join("..", "..", "shared", "data", "raw")

// TestImportParamsReal: a model of BPI 2012's complete events, checked
// against the same XES log with no flag, reads it as the model's log was
// read (params.import) and fits every case; read with every lifecycle
// event, most cases fall outside.
func TestImportParamsReal(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	xes := filepath.Join(rawDataDir, "xes", "bpic2012.xes.gz")
	if _, err := os.Stat(xes); err != nil {
		t.Skipf("%s not present", xes)
	}
	model := filepath.Join(t.TempDir(), "m.json")
	if code, _, errOut := runCmd(t, "build", "-q", "--lifecycle", "complete", "-o", model, xes); code != exitOK {
		t.Fatalf("build: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCmd(t, "check", "--model", model, "--min-fit", "1", xes)
	if code != exitOK || !strings.Contains(out, "fit         13087 of 13087 sessions (100.0%)") {
		t.Errorf("check with the model's import options: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runCmd(t, "check", "--model", model, "--lifecycle", "all", "--min-fit", "1", xes); code != exitFound {
		t.Errorf("check with every lifecycle event: exit %d, want %d\n%s", code, exitFound, out)
	}
}

// TestInputLinesReal: checked against a map of the other agent's run, the
// deviations of a raw tau2 retail export are named at the line where the
// message of the deviating step starts (a line "{" followed by its role).
func TestInputLinesReal(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	dir := filepath.Join(rawDataDir, "tau2")
	train := filepath.Join(dir, "ft-gpt-4.1_retail_default_gpt-4.1_1trials.json")
	log := filepath.Join(dir, "gpt-4.1_retail_default_gpt-4.1_1trials.json")
	if _, err := os.Stat(log); err != nil {
		t.Skipf("%s not present", log)
	}
	model := filepath.Join(t.TempDir(), "m.json")
	if code, _, errOut := runCmd(t, "build", "-q", "-o", model, train); code != exitOK {
		t.Fatalf("build: exit %d: %s", code, errOut)
	}
	_, out, errOut := runCmd(t, "check", "--model", model, "--format", "json", log)
	var rep struct {
		Deviations []struct {
			SessionID string `json:"session_id"`
			File      string `json:"file"`
			Line      int    `json:"line"`
		} `json:"deviations"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("check: %v\n%s", err, errOut)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	if len(rep.Deviations) == 0 {
		t.Fatal("no deviations to name")
	}
	for _, d := range rep.Deviations {
		if d.File != log || d.Line < 1 || d.Line >= len(lines) ||
			strings.TrimSpace(lines[d.Line-1]) != "{" || !strings.Contains(lines[d.Line], `"role"`) {
			t.Errorf("session %s: named at %s:%d, which starts no message", d.SessionID, d.File, d.Line)
		}
	}
	t.Logf("%d deviations, each at its message's line", len(rep.Deviations))
}

// TestDiffEnforcedReal: a model of the tau2 retail export whose one state's
// run cap was lowered by hand (and sealed) judges sessions otherwise, and
// diff says so (it read "no differences", exit 0); the model against a
// fresh build of the same log reads none.
func TestDiffEnforcedReal(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	log := filepath.Join(rawDataDir, "..", "jsonl", "tau2_retail.jsonl")
	if _, err := os.Stat(log); err != nil {
		t.Skipf("%s not present", log)
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, out := range []string{a, b} {
		if code, _, errOut := runCmd(t, "build", "-q", "-o", out, log); code != exitOK {
			t.Fatalf("build: exit %d: %s", code, errOut)
		}
	}
	if code, out, _ := runCmd(t, "diff", a, b); code != exitOK || !strings.Contains(out, "no differences") {
		t.Fatalf("a model against a build of the same log: exit %d\n%s", code, out)
	}
	raw, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var label string
	for _, s := range m["states"].([]any) {
		st := s.(map[string]any)
		if n, ok := st["max_run"].(float64); ok && n > 1 {
			st["max_run"], label = 1.0, st["label"].(string)
			break
		}
	}
	if label == "" {
		t.Fatal("no state of the model repeats")
	}
	if raw, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCmd(t, "seal", b); code != exitOK {
		t.Fatalf("seal: exit %d: %s", code, errOut)
	}
	code, out, _ := runCmd(t, "diff", a, b)
	if code != exitFound || !strings.Contains(out, "1 state's run cap or slot fields changed") || !strings.Contains(out, " -> 1") {
		t.Errorf("a run cap lowered on %s: exit %d\n%s", label, code, out)
	}
}
