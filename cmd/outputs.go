package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsmine/fsmine/mine"
)

// checkOutputs is the one rule of every command that writes files: it
// refuses an output that is one of the inputs (a log, a model, label rules,
// a policy; a glob among inputs stands for the files it matches, a folder
// read as one log, such as a tau2 experiment, for the files it reads) or
// another output, as writing it would destroy what the command reads, or
// one output would replace the other. outputs are pairs of the flag and the
// path; "" is no output. Standard output ("-") takes one output, as two
// would run together there; files that exist and are not regular
// (/dev/null) may repeat. Two names are the same file when they are the
// same path once made absolute, or name one file (os.SameFile: hard links,
// symbolic links). The error, a usage error (exit 2), names the flag and
// the file; it comes before anything is written.
func checkOutputs(inputs []string, outputs [][2]string) error {
	type named struct{ what, path string }
	var seen []named
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		paths := []string{in}
		if strings.ContainsAny(in, "*?[") {
			matches, _ := filepath.Glob(in) // a bad pattern fails where it is read
			paths = append(paths, matches...)
		}
		for _, p := range paths {
			seen = append(seen, named{"an input", p})
			for _, f := range folderFiles(p) {
				seen = append(seen, named{"an input", f})
			}
		}
	}
	stdout := ""
	for _, out := range outputs {
		path := out[1]
		if path == "" {
			continue
		}
		if path == "-" {
			if stdout != "" {
				return usagef("%s -: %s writes to standard output already: give one of them a file", out[0], stdout)
			}
			stdout = out[0]
			continue
		}
		if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
			continue
		}
		// Said now, not when the output is written after a long read (a
		// path ending in a separator is a folder gen makes).
		if dir := filepath.Dir(path); dir != "." && !os.IsPathSeparator(path[len(path)-1]) {
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return fmt.Errorf("%s %s: no folder %s to write it in", out[0], path, dir)
			}
		}
		for _, s := range seen {
			if samePath(s.path, path) {
				return usagef("%s %s: the file is %s too", out[0], path, s.what)
			}
		}
		seen = append(seen, named{out[0] + "'s output", path})
	}
	return nil
}

// folderFiles lists the files a folder read as one log reads (a tau2
// experiment: results.json and simulations/*.json), none for anything else.
// A folder that cannot be listed fails where it is read.
func folderFiles(path string) []string {
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return nil
	}
	in, ok, err := mine.DirInput(path, mine.FormatAuto)
	if err != nil || !ok || in.Files == nil {
		return nil
	}
	files, _ := in.Files()
	return files
}

// samePath reports whether a and b name the same file: one that exists
// under both names, or the same path once made absolute.
func samePath(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}
