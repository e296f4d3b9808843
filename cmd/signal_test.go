package cmd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalRemovesTempFiles: fsmine stopped by SIGINT or SIGTERM while it
// writes an output removes its temporary file (six kills of gen -o left
// 1.9 GB of them) and exits as a signal would have it.
func TestSignalRemovesTempFiles(t *testing.T) {
	bin, err := exec.LookPath("fsmine") // the test binary, put on PATH by TestMain
	if err != nil {
		t.Skip("no fsmine on PATH")
	}
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(bin, "gen", "-n", "100000000", "-o", filepath.Join(dir, "big.jsonl"))
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			deadline := time.Now().Add(failAfter)
			for {
				names := dirNames(t, dir)
				if len(names) == 1 && strings.HasPrefix(names[0], ".big.jsonl.tmp-") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no temporary file appeared: %q", names)
				}
				time.Sleep(10 * time.Millisecond)
			}
			cmd.Process.Signal(tt.sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tt.code {
				t.Errorf("exit: %v, want status %d", err, tt.code)
			}
			if names := dirNames(t, dir); len(names) != 0 {
				t.Errorf("files left: %q", names)
			}
		})
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestSignalStopsLayout: SIGTERM stops fsmine while the builtin engine lays
// out a picture in full, even on one processor. Graphviz's code compiled to
// WebAssembly never yields to Go's scheduler unless guarded, so with
// GOMAXPROCS=1 the handler of the signal did not run once Graphviz was
// some seconds into the layout: a render of this model (99 states, 291
// transitions) went on 644 seconds past its SIGTERM, until killed.
func TestSignalStopsLayout(t *testing.T) {
	bin, err := exec.LookPath("fsmine")
	if err != nil {
		t.Skip("no fsmine on PATH")
	}
	dir := t.TempDir()
	var log strings.Builder
	x := 0
	for s := range 600 {
		for k := range 20 {
			fmt.Fprintf(&log, `{"session_id":"s%d","step":%d,"node":"n%d","event":"ok"}`+"\n", s, k, x)
			x = (x + 62) % 97
		}
	}
	logPath, model := filepath.Join(dir, "walk.jsonl"), filepath.Join(dir, "walk.json")
	if err := os.WriteFile(logPath, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCmd(t, "build", logPath, "-o", model); code != exitOK {
		t.Fatalf("build: exit %d: %s", code, errOut)
	}
	// A picture in full of a tiny model first, so that Graphviz's
	// guarded code is compiled and cached and the signal below comes in
	// the layout, not in the compiling.
	tiny := filepath.Join(dir, "tiny.json")
	if code, _, errOut := runCmd(t, "build", "../testdata/check/tiny-train.jsonl", "-o", tiny); code != exitOK {
		t.Fatalf("build: exit %d: %s", code, errOut)
	}
	warm := exec.Command(bin, "render", tiny, "--detail", "full", "-o", filepath.Join(dir, "tiny.svg"))
	if b, err := warm.CombinedOutput(); err != nil {
		t.Fatalf("render of a tiny model: %v: %s", err, b)
	}
	out := filepath.Join(t.TempDir(), "walk.svg")
	cmd := exec.Command(bin, "render", model, "--detail", "full", "-o", out)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(failAfter)
	for {
		names := dirNames(t, filepath.Dir(out))
		if len(names) == 1 && strings.HasPrefix(names[0], ".walk.svg.tmp-") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no temporary file appeared: %q", names)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // into the layout (minutes)
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 143 {
			t.Errorf("exit: %v, want status 143", err)
		}
	case <-time.After(failAfter):
		t.Fatalf("still laying out %v after SIGTERM", failAfter)
	}
	if names := dirNames(t, filepath.Dir(out)); len(names) != 0 {
		t.Errorf("files left: %q", names)
	}
}
