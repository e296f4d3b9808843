//go:build unix

package automaton

import (
	"os"
	"syscall"
)

// lockFile takes an advisory lock on f, held until f is closed, that tells
// other processes the file is being written.
func lockFile(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// stale reports whether no process holds the file at path locked.
func stale(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
