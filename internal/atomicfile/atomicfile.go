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
	defer tempFiles.remove(tmp)
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
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
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
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
