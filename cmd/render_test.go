package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const tinyModel = `{"schema": "fsmine.automaton/v1", "initial": "__start__", "digest": "sha256:57f541463a4855578b8fd7a58723e666a8f381b3e0e9c6b5326f8e5d8832d5a1",
 "states": [{"id": "__start__", "label": "__start__", "visits": 1}, {"id": "a", "label": "a", "visits": 1}, {"id": "__end__", "label": "__end__", "visits": 1}],
 "transitions": [{"from": "__start__", "event": "", "to": "a", "count": 1, "prob": 1}, {"from": "a", "event": "ok", "to": "__end__", "count": 1, "prob": 1}],
 "trunk": ["a"]}`

func TestRenderExitStatus(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model.json")
	if err := os.WriteFile(model, []byte(tinyModel), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		status int
		stderr string
	}{
		{"dot", []string{"render", model}, exitOK, ""},
		{"every format", []string{"render", model, "--format", "langgraph"}, exitOK, ""},
		{"missing model", []string{"render", filepath.Join(dir, "nope.json")}, exitError, "nope.json"},
		{"not a model", []string{"render", "/dev/null"}, exitError, "/dev/null"},
		{"unknown format", []string{"render", model, "--format", "pdf"}, exitError, `unknown format "pdf"`},
		{"no model", []string{"render"}, exitError, "one model file"},
		{"png to a file", []string{"render", model, "--format", "png", "-o", filepath.Join(dir, "m.png")}, exitOK, ""},
		{"unknown engine", []string{"render", model, "--format", "svg", "--engine", "neato"}, exitError, `unknown engine "neato"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			status := Run(context.Background(), tt.args, IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
			if status != tt.status {
				t.Errorf("status = %d, want %d (stderr %q)", status, tt.status, errOut.String())
			}
			if !strings.Contains(errOut.String(), tt.stderr) {
				t.Errorf("stderr %q does not name %q", errOut.String(), tt.stderr)
			}
			if tt.status == exitOK && !slices.Contains(tt.args, "-o") && out.Len() == 0 {
				t.Error("nothing written")
			}
		})
	}
}

func TestRenderRefusesPNGOnATerminal(t *testing.T) {
	model := filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(model, []byte(tinyModel), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	streams := IO{In: strings.NewReader(""), Out: &out, Err: &errOut, IsTTY: true}
	if status := Run(context.Background(), []string{"render", model, "--format", "png"}, streams); status != exitError {
		t.Errorf("status = %d, want %d", status, exitError)
	}
	if out.Len() != 0 || !strings.Contains(errOut.String(), "not writing PNG to a terminal") {
		t.Errorf("stdout %d bytes, stderr %q", out.Len(), errOut.String())
	}
	out.Reset()
	if status := Run(context.Background(), []string{"render", model, "--format", "svg"}, streams); status != exitOK || out.Len() == 0 {
		t.Errorf("SVG to a terminal: status %d, %d bytes", status, out.Len())
	}
}
