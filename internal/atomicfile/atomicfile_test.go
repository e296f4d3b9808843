package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "one"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "two"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Errorf("file holds %q, want two", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d entries left in the folder, want 1 (no temporary files)", len(entries))
	}
	// A device is written in place, never renamed over.
	if err := Write(os.DevNull, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode().IsRegular() {
		t.Fatalf("%s became a regular file", os.DevNull)
	}
	if err := Write(dir, func(io.Writer) error { return nil }); err == nil {
		t.Error("writing over a directory succeeded")
	}
}

// A batch changes all of its files or none: a write that fails leaves the
// ones written before it as they were, and no temporary file behind.
func TestBatch(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	text := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	for _, p := range []string{a, b} {
		if err := Write(p, text("old")); err != nil {
			t.Fatal(err)
		}
	}
	var fail Batch
	if err := fail.Write(a, text("new")); err != nil {
		t.Fatal(err)
	}
	if err := fail.Write(b, func(io.Writer) error { return io.ErrShortWrite }); err == nil {
		t.Fatal("a failing write succeeded")
	}
	if err := fail.Commit(); err == nil {
		t.Error("Commit after a failed write succeeded")
	}
	for _, p := range []string{a, b} {
		if got, _ := os.ReadFile(p); string(got) != "old" {
			t.Errorf("%s holds %q after a failed batch, want old", filepath.Base(p), got)
		}
	}
	if names := dirNames(t, dir); len(names) != 2 {
		t.Errorf("folder holds %q after a failed batch, want a and b alone", names)
	}

	var ok Batch
	for _, p := range []string{a, b} {
		if err := ok.Write(p, text("new")); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(a); string(got) != "old" {
		t.Errorf("a holds %q before Commit, want old", got)
	}
	if err := ok.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{a, b} {
		if got, _ := os.ReadFile(p); string(got) != "new" {
			t.Errorf("%s holds %q after Commit, want new", filepath.Base(p), got)
		}
	}
	if names := dirNames(t, dir); len(names) != 2 {
		t.Errorf("folder holds %q after Commit, want a and b alone", names)
	}

	// A rename that fails is named by its file, and leaves no temporary.
	var late Batch
	c := filepath.Join(dir, "c")
	if err := late.Write(c, text("new")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(c, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := late.Commit(); err == nil || !strings.Contains(err.Error(), c) {
		t.Errorf("Commit over a folder: %v, want an error naming %s", err, c)
	}
	if names := dirNames(t, dir); len(names) != 3 {
		t.Errorf("folder holds %q after a failed rename, want a, b and c alone", names)
	}
}
