//go:build !unix

package atomicfile

import (
	"os"
	"time"
)

// lockFile does nothing where there is no flock: stale goes by age.
func lockFile(*os.File) error { return nil }

// stale reports whether the file at path has not been written for an hour.
func stale(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && time.Since(fi.ModTime()) > time.Hour
}
