package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalArgs: eval --args learns argument rules on each fold and says so;
// it reads the logs twice, so standard input is a usage error.
func TestEvalArgs(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "hijack.jsonl")
	code, out, errOut := runCmd(t, "gen", "--scenario", "hijack", "-n", "60", "--hijack-share", "0")
	if code != exitOK {
		t.Fatalf("gen: exit %d: %s", code, errOut)
	}
	if err := os.WriteFile(log, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCmd(t, "eval", "-q", "--args", log)
	if code != exitOK {
		t.Fatalf("eval --args: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "argument rules learned on each fold's training sessions") {
		t.Errorf("eval --args does not say it judged by argument rules:\n%s", out)
	}
	code, _, errOut = runCmd(t, "eval", "-q", "--args", "-")
	if code != exitError || !strings.Contains(errOut, "--args reads the logs twice") {
		t.Errorf("eval --args -: exit %d, %q; want a usage error", code, errOut)
	}
}
