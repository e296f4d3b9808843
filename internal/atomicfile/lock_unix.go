//go:build unix

package atomicfile

import (
	"os"
	"syscall"
	"time"
)

// lockFile takes an advisory lock on f, held until f is closed, that tells
// other processes the file is being written. It waits while another
// process's stale check holds the lock for a moment.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
}

// freshTemp is how long a temporary file is left alone however it looks: a
// writer creates its file before it can lock it.
const freshTemp = time.Minute

// stale reports whether no process holds the file at path locked and it
// was last written more than freshTemp ago.
func stale(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || time.Since(fi.ModTime()) < freshTemp {
		return false
	}
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
