// Package goldenfile is the tests' one way to hold output against a golden file:
// Check compares, and rewrites the file when the test binary runs with
// -update (go test ./PKG -update). Only tests import it; it registers the
// -update flag for the test binary.
package goldenfile

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files and fixtures")

// Update reports whether -update was given.
func Update() bool { return *update }

// Check compares got with the file at path, or writes got there under
// -update. A difference fails the test, naming the file and how to
// refresh it.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (-update rewrites it; read the diff)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
