package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportEventNotUTF8: an --event that is not UTF-8 is a usage error
// naming the flag, and nothing is written.
func TestImportEventNotUTF8(t *testing.T) {
	dir := t.TempDir()
	flow := filepath.Join(dir, "flow.mmd")
	if err := os.WriteFile(flow, []byte("stateDiagram-v2\n    [*] --> a\n    a --> [*]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "design.json")
	code, _, errOut := runCmd(t, "import", "--event", "caf\xe9", flow, "-o", out)
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	if want := `fsmine: --event "caf\xe9" is not valid UTF-8`; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written", out)
	}
}
