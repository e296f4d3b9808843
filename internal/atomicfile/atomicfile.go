// Package atomicfile writes files so that readers never see half of one:
// through a locked temporary file in the same folder and a rename, with the
// temporary files of killed writers swept and those being written removable
// on a signal.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Write writes what write produces to path through a temporary file
// in the same folder and a rename, so that readers never see half a file.
// A path that exists and is not a regular file (/dev/null, /dev/stdout, a
// named pipe) is written in place: renaming over it would replace the device.
//
// The temporary file is ".NAME.tmp-N" and is locked while it is written.
// Before it is created, the temporary files of path that no process holds
// and that were last written over a minute ago (left by a process that was
// killed) are removed; RemoveTemps removes
// the ones being written, for a process that is about to exit on a signal.
func Write(path string, write func(io.Writer) error) error {
	var b Batch
	if err := b.Write(path, write); err != nil {
		return err
	}
	return b.Commit()
}

// A Batch writes several files so that a failure leaves every one of them
// as it was: Write writes each to its temporary file (as the package's
// Write does), and Commit renames them all into place, in the order they
// were written. A Write that fails removes the batch's temporary files and
// Commit does nothing after it; Abort removes them too. Only a rename that
// fails part way (the file system full of names, a folder removed) can
// leave some files new and the rest as they were. A path that is not a
// regular file is written in place at once, as Write does.
type Batch struct {
	pending []pending
	failed  error
}

// pending is a file written and not yet renamed: it stays open, and so
// locked, until then, so that no other writer of its path sweeps it as a
// killed writer's.
type pending struct {
	f         *os.File
	tmp, path string
}

// Write writes what write produces to path's temporary file, to be renamed
// into place by Commit.
func (b *Batch) Write(path string, write func(io.Writer) error) error {
	if b.failed != nil {
		return b.failed
	}
	err := b.write(path, write)
	if err != nil {
		b.Abort()
		b.failed = err
	}
	return err
}

func (b *Batch) write(path string, write func(io.Writer) error) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if err := write(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	dir := filepath.Dir(path)
	prefix := "." + filepath.Base(path) + ".tmp-"
	sweepTempFiles(dir, prefix)
	f, err := tempFiles.create(dir, prefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		tempFiles.remove(tmp)
		return err
	}
	if err := lockFile(f); err != nil {
		return fail(fmt.Errorf("locking %s: %w", tmp, err))
	}
	if err := write(f); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	b.pending = append(b.pending, pending{f, tmp, path})
	return nil
}

// Commit renames the files written into place, in the order written. After
// a failed Write it does nothing and returns that failure; a rename that
// fails stops it, and the files not yet renamed are removed. Its error names
// the file it could not rename.
func (b *Batch) Commit() error {
	if b.failed != nil {
		return b.failed
	}
	for i, p := range b.pending {
		err := p.f.Close()
		if err == nil {
			err = os.Rename(p.tmp, p.path) // a *LinkError, naming path
		} else {
			err = fmt.Errorf("%s: %w", p.path, err)
		}
		tempFiles.remove(p.tmp)
		if err != nil {
			os.Remove(p.tmp)
			b.pending = b.pending[i+1:]
			b.Abort()
			b.failed = err
			return err
		}
	}
	b.pending = nil
	return nil
}

// Abort removes the temporary files written and not yet committed.
func (b *Batch) Abort() {
	for _, p := range b.pending {
		p.f.Close()
		os.Remove(p.tmp)
		tempFiles.remove(p.tmp)
	}
	b.pending = nil
}

// tempFiles are the temporary files Write is writing.
var tempFiles = &tempSet{m: make(map[string]bool)}

type tempSet struct {
	mu sync.Mutex
	m  map[string]bool
}

// create creates a temporary file as os.CreateTemp does and adds it to the
// set under one lock, so that RemoveTemps never runs between the two and
// misses a file that is already there.
func (s *tempSet) create(dir, pattern string) (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.CreateTemp(dir, pattern)
	if err == nil {
		s.m[f.Name()] = true
	}
	return f, err
}

func (s *tempSet) remove(path string) { s.mu.Lock(); delete(s.m, path); s.mu.Unlock() }

// RemoveTemps removes the temporary files that Write is
// writing, so that a process stopped by a signal leaves none behind; the
// writes then fail. It is safe to call from any goroutine.
func RemoveTemps() {
	tempFiles.mu.Lock()
	defer tempFiles.mu.Unlock()
	for path := range tempFiles.m {
		os.Remove(path)
		delete(tempFiles.m, path)
	}
}

// sweepTempFiles removes the files of dir named prefix and digits (as
// os.CreateTemp names them) that no process holds locked: what a killed
// Write of the same path left.
func sweepTempFiles(dir, prefix string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		digits, ok := strings.CutPrefix(name, prefix)
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, name)
		if stale(p) {
			os.Remove(p)
		}
	}
}
