package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayStdinRealLog replays sessions of tau2 retail from the file and
// from standard input, which replay now reads for the one session too: the
// reports must be the same, and a session not there an error that counts
// the records read.
func TestReplayStdinRealLog(t *testing.T) {
	logs := filepath.Join(realDataDir, "tau2_retail.jsonl")
	data, err := os.ReadFile(logs)
	if err != nil {
		t.Skip("no ../shared/data/jsonl/tau2_retail.jsonl")
	}
	model := filepath.Join(t.TempDir(), "m.json")
	mustRun(t, "build", "-q", "--labels", filepath.Join("..", "testdata", "tau2_retail.labels.json"), "-o", model, logs)
	run := func(session, log string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(context.Background(), []string{"replay", "-q", "--model", model, "--session", session, log}, IO{In: bytes.NewReader(data), Out: &out, Err: &errb})
		return code, out.String(), errb.String()
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for _, i := range []int{0, len(lines) / 2, len(lines) - 1} {
		var rec struct {
			ID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil {
			t.Fatal(err)
		}
		id := rec.ID
		fc, fout, ferr := run(id, logs)
		sc, sout, serr := run(id, "-")
		// The same report, but for the file's name (and the column it
		// widens).
		same := strings.Join(strings.Fields(strings.ReplaceAll(fout, logs, "-")), " ") == strings.Join(strings.Fields(sout), " ")
		if fc == exitError || fc != sc || !same {
			t.Errorf("session %s: file exit %d (%s), stdin exit %d (%s); reports differ:\n%s\n---\n%s", id, fc, ferr, sc, serr, fout, sout)
		}
	}
	code, _, stderr := run("no-such-session", "-")
	if want := `session "no-such-session" not found in - (`; code != exitError || !strings.Contains(stderr, want) || !strings.Contains(stderr, "records read; a stream is read once") {
		t.Errorf("missing session from stdin: exit %d, %s", code, stderr)
	}
}
