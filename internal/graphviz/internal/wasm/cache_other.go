//go:build !unix

package wasm

// fsmine patch: this file is fsmine's, not upstream's (see FSMINE.md).

import (
	"io/fs"
	"os"
)

// openEntry opens a cache entry for reading. Off Unix there is neither
// O_NOFOLLOW nor a FIFO that blocks an open; checkEntry refuses what is not
// a regular file.
func openEntry(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrInvalid}
	}
	return os.Open(path)
}

// ownedByUser is true off Unix, where a file has no owner that Go reports.
func ownedByUser(fs.FileInfo) bool { return true }

// private is true off Unix: the user's cache directory there (on Windows
// %LocalAppData%) is kept private to the user by the system's access
// lists, which Go's file modes do not show.
func private(fs.FileInfo) bool { return true }

// safeParentInfo is true off Unix, as private is.
func safeParentInfo(fs.FileInfo) bool { return true }
