package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestByArgs: build --by --args on a log where only one value's sessions
// call the tool an argument rule is about makes a model (the reader refused
// it: the other value's sub-map has no state of that tool), and check and
// serve take it; the rule judges a call whichever map answers.
func TestByArgs(t *testing.T) {
	dir := t.TempDir()
	var log strings.Builder
	for i := range 20 {
		fmt.Fprintf(&log, `{"session_id":"x%02d","step":0,"node":"lookup","event":"ok","attrs":{"task":"x","args":{"id":%q}}}`+"\n", i, []string{"A1", "B2"}[i%2])
		fmt.Fprintf(&log, `{"session_id":"x%02d","step":1,"node":"b","event":"done","attrs":{"task":"x"}}`+"\n", i)
	}
	for i := range 5 {
		fmt.Fprintf(&log, `{"session_id":"y%02d","step":0,"node":"c","event":"ok","attrs":{"task":"y"}}`+"\n", i)
		fmt.Fprintf(&log, `{"session_id":"y%02d","step":1,"node":"b","event":"done","attrs":{"task":"y"}}`+"\n", i)
	}
	train, test, model := filepath.Join(dir, "train.jsonl"), filepath.Join(dir, "test.jsonl"), filepath.Join(dir, "m.json")
	if err := os.WriteFile(train, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	unseen := `{"session_id":"x99","step":0,"node":"lookup","event":"ok","attrs":{"task":"x","args":{"id":"Z9"}}}
{"session_id":"x99","step":1,"node":"b","event":"done","attrs":{"task":"x"}}
`
	if err := os.WriteFile(test, []byte(unseen), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCmd(t, "build", "-q", "--args", "--by", "attrs.task", "--by-min", "5", "-o", model, train); code != exitOK {
		t.Fatalf("build: exit %d: %s", code, errOut)
	}
	if code, out, errOut := runCmd(t, "check", "--model", model, train); code != exitOK || !strings.Contains(out, "arguments   0 of 25 sessions break an argument rule (1 rules)") {
		t.Errorf("check of the training log: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCmd(t, "check", "--model", model, test); code != exitFound || !strings.Contains(out, `unseen_value "lookup" argument "id"`) {
		t.Errorf("check of a call with an unseen value: exit %d, want %d\n%s%s", code, exitFound, out, errOut)
	}
	if code, out, errOut := runCmd(t, "serve", "--check", "--model", model); code != exitOK {
		t.Errorf("serve --check: exit %d\n%s%s", code, out, errOut)
	}
}

// TestByArgsReal: the raw tau2 retail exports, conditioned on the task
// with argument rules (whose tools most tasks' sub-maps never call), make
// a model that check and serve take, and that passes its own log.
func TestByArgsReal(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	dir := filepath.Join(rawDataDir, "tau2")
	logs := []string{
		filepath.Join(dir, "gpt-4.1_retail_default_gpt-4.1_1trials.json"),
		filepath.Join(dir, "ft-gpt-4.1_retail_default_gpt-4.1_1trials.json"),
	}
	if _, err := os.Stat(logs[0]); err != nil {
		t.Skipf("%s not present", logs[0])
	}
	model := filepath.Join(t.TempDir(), "m.json")
	if code, _, errOut := runCmd(t, append([]string{"build", "-q", "--args", "--by", "attrs.task_id", "--by-min", "1", "-o", model}, logs...)...); code != exitOK {
		t.Fatalf("build: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCmd(t, append([]string{"check", "--model", model}, logs...)...)
	if code != exitOK || !strings.Contains(out, "arguments   0 of 80 sessions break an argument rule") {
		t.Errorf("check of the model's own log: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCmd(t, "serve", "--check", "--model", model); code != exitOK {
		t.Errorf("serve --check: exit %d\n%s%s", code, out, errOut)
	}
}

// TestSuggestByReal: the policy serve --suggest drafts from a model of
// tau2 retail with a sub-map per task (--by-mode moves) is one serve takes
// with that model; it named states and loop caps many sub-maps lack.
func TestSuggestByReal(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	log := filepath.Join(rawDataDir, "..", "jsonl", "tau2_retail.jsonl")
	if _, err := os.Stat(log); err != nil {
		t.Skipf("%s not present", log)
	}
	dir := t.TempDir()
	model, policy := filepath.Join(dir, "m.json"), filepath.Join(dir, "p.json")
	if code, _, errOut := runCmd(t, "build", "-q", "--by", "attrs.task_id", "--by-min", "1", "--by-mode", "moves", "-o", model, log); code != exitOK {
		t.Fatalf("build: exit %d: %s", code, errOut)
	}
	code, out, errOut := runCmd(t, "serve", "--check", "--suggest", "--model", model)
	if code != exitOK {
		t.Fatalf("serve --suggest: exit %d: %s", code, errOut)
	}
	if err := os.WriteFile(policy, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCmd(t, "serve", "--check", "--model", model, "--policy", policy); code != exitOK {
		t.Errorf("serve --check --policy (the draft): exit %d: %s", code, errOut)
	}
}
