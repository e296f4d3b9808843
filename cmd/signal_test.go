package cmd

import (
	"errors"
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
