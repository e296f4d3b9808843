package cmd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportExitStatus(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model.json")
	if err := os.WriteFile(model, []byte(tinyModel), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.html")
	tests := []struct {
		name   string
		args   []string
		stdin  string
		status int
		stdout string // a fragment of standard output
		stderr string // a fragment of standard error
	}{
		{"stdout", []string{"report", model}, "", exitOK, "<svg", ""},
		{"file", []string{"report", model, "-o", out}, "", exitOK, "", ""},
		{"stdin", []string{"report", "-", "--diagram", "none"}, tinyModel, exitOK, "<h1>fsmine model v0</h1>", ""},
		{"missing model", []string{"report", filepath.Join(dir, "nope.json")}, "", exitError, "", "nope.json: no such file"},
		{"not a model", []string{"report", "/dev/null"}, "", exitError, "", "/dev/null: not an fsmine model"},
		{"bad stdin", []string{"report", "-"}, "{}", exitError, "", "standard input: not an fsmine model"},
		{"unknown diagram", []string{"report", model, "--diagram", "big"}, "", exitError, "", `unknown --diagram "big"`},
		{"a model given as a log", []string{"report", model, model}, "", exitError, "", "model.json: no sessions in the input"},
		{"no model", []string{"report"}, "", exitError, "", "report takes a model file (and optionally logs)"},
		{"diff html differs", []string{"diff", "--format", "html", "../automaton/testdata/diff/old.json", "../automaton/testdata/diff/new.json"}, "", exitFound, "<svg", ""},
		{"diff html same", []string{"diff", "--format", "html", model, model}, "", exitOK, "No differences", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			status := Run(context.Background(), tt.args, IO{In: strings.NewReader(tt.stdin), Out: &stdout, Err: &stderr})
			if status != tt.status {
				t.Errorf("status = %d, want %d (stderr %q)", status, tt.status, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout lacks %q", tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.stderr)
			}
			if tt.status != exitOK && stdout.Len() > 0 && tt.status != exitFound {
				t.Errorf("trouble wrote to stdout: %.100q", stdout.String())
			}
		})
	}

	// Graphviz's dot program draws a picture the page inlines too.
	if _, err := exec.LookPath("dot"); err == nil {
		var stdout, stderr bytes.Buffer
		if status := Run(context.Background(), []string{"report", model, "--engine", "dot"}, IO{In: strings.NewReader(""), Out: &stdout, Err: &stderr}); status != exitOK {
			t.Errorf("--engine dot: status %d: %s", status, stderr.String())
		}
		if !strings.Contains(stdout.String(), "<svg") {
			t.Error("--engine dot: no picture")
		}
	}

	// -o writes what standard output gets.
	var stdout bytes.Buffer
	if status := Run(context.Background(), []string{"report", model}, IO{In: strings.NewReader(""), Out: &stdout, Err: new(bytes.Buffer)}); status != exitOK {
		t.Fatal(status)
	}
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, stdout.Bytes()) {
		t.Error("the file written with -o differs from standard output")
	}
}
