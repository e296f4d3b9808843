package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// TestRemoveTemps: what a process stopped by a signal calls before it
// exits removes the temporary file being written.
func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	var during []string
	err := Write(filepath.Join(dir, "big.jsonl"), func(w io.Writer) error {
		if _, err := io.WriteString(w, "partial\n"); err != nil {
			return err
		}
		during = dirNames(t, dir)
		RemoveTemps()
		return errors.New("stopped")
	})
	if err == nil {
		t.Fatal("the write succeeded")
	}
	if len(during) != 1 {
		t.Fatalf("files while writing = %q, want one temporary file", during)
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("files after RemoveTempFiles = %q, want none", got)
	}
}
