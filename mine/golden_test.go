package mine

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/internal/goldenfile"
)

// TestGolden mines each testdata/golden/NAME.jsonl with default options (and
// NAME.labels.json when present) and compares the model with
// NAME.golden.json.
func TestGolden(t *testing.T) {
	logs, err := filepath.Glob("testdata/golden/*.jsonl")
	if err != nil || len(logs) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, path := range logs {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			ropt := ReadOptions{Strict: true}
			if data, err := os.ReadFile(strings.TrimSuffix(path, ".jsonl") + ".labels.json"); err == nil {
				if ropt.Rules, err = ParseRules(data); err != nil {
					t.Fatal(err)
				}
			}
			in := Input{Name: filepath.Base(path), Open: func() (io.ReadCloser, error) { return os.Open(path) }}
			m := mustBuild(t, DefaultOptions(), ropt, in)
			var got bytes.Buffer
			if err := m.Write(&got); err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(path, ".jsonl") + ".golden.json"
			if goldenfile.Update() {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("model differs from %s; run go test ./mine -run TestGolden -update and read the diff", golden)
			}
		})
	}
}
