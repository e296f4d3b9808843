//go:build unix

package wasm

// fsmine patch: this file is fsmine's, not upstream's (see FSMINE.md).

import (
	"io/fs"
	"os"
	"syscall"
)

// openEntry opens a cache entry for reading without following a symlink
// (the open fails on one) and without blocking on a FIFO.
func openEntry(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// ownedByUser reports whether fi's owner is the user this process runs as.
func ownedByUser(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// private reports whether fi is the user's, with no permission for group
// or others.
func private(fi fs.FileInfo) bool {
	return ownedByUser(fi) && fi.Mode().Perm()&0o077 == 0
}

// safeParentInfo reports whether fi, a directory, is owned by the user or
// root and is not writable by others unless sticky.
func safeParentInfo(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || (int(st.Uid) != os.Getuid() && st.Uid != 0) {
		return false
	}
	return fi.Mode().Perm()&0o002 == 0 || fi.Mode()&fs.ModeSticky != 0
}
