//go:build unix

package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestWriteSweepsStaleTemps: the temporary files of the same
// output that a killed process left (1.9 GB after six kills of gen -o) are
// removed by the next write; those of a live writer, other outputs' and
// files that merely look alike stay.
func TestWriteSweepsStaleTemps(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".out.json.tmp-123", ".out.json.tmp-456", ".out.json.tmp-abc", ".other.json.tmp-1", "out.json.tmp-2"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-2 * freshTemp)
		if err := os.Chtimes(filepath.Join(dir, name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	live, err := os.Open(filepath.Join(dir, ".out.json.tmp-456"))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := syscall.Flock(int(live.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "out.json"), func(w io.Writer) error {
		_, err := io.WriteString(w, "{}\n")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{".other.json.tmp-1", ".out.json.tmp-456", ".out.json.tmp-abc", "out.json", "out.json.tmp-2"}
	if got := dirNames(t, dir); !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
}

// TestWriteKeepsFreshTemps: an unlocked temporary file written
// less than freshTemp ago may be another writer's between creating and
// locking it; the sweep leaves it.
func TestWriteKeepsFreshTemps(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".out.json.tmp-7"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "out.json"), func(w io.Writer) error {
		_, err := io.WriteString(w, "{}\n")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := dirNames(t, dir), []string{".out.json.tmp-7", "out.json"}; !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
}
