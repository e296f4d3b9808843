package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayers holds the direction of imports (docs/design.md), read from go
// list: automaton imports the standard library, go-json, gonum and the
// wording leaf internal/text only; the model (automaton itself) imports
// neither automaton/conform nor automaton/guard, and those two do not import
// each other; nothing under mine or automaton imports render or cmd; render imports nothing under mine; internal/text imports
// the standard library only; nothing but main imports cmd.
func TestLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("go list: skipped in -short mode")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/fsmine/fsmine"
	under := func(pkg, dir string) bool { return pkg == mod+"/"+dir || strings.HasPrefix(pkg, mod+"/"+dir+"/") }
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, imports := f[0], f[1:]
		for _, imp := range imports {
			var bad string
			switch {
			case (under(pkg, "mine") || under(pkg, "automaton")) && (under(imp, "render") || under(imp, "cmd")):
				bad = "mine and automaton import nothing under render or cmd"
			case under(pkg, "automaton") && under(imp, "mine"):
				bad = "automaton imports nothing under mine"
			case pkg == mod+"/automaton" && (under(imp, "automaton/conform") || under(imp, "automaton/guard")):
				bad = "the model imports neither its checker nor its guard"
			case under(pkg, "automaton/conform") && under(imp, "automaton/guard") || under(pkg, "automaton/guard") && under(imp, "automaton/conform"):
				bad = "the checker and the guard do not import each other"
			case under(pkg, "render") && (under(imp, "mine") || under(imp, "cmd")):
				bad = "render imports nothing under mine or cmd: measures are computed in mine, drawn in render"
			case under(pkg, "automaton") && strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") &&
				!strings.HasPrefix(imp, mod+"/") && !strings.HasPrefix(imp, "github.com/goccy/go-json") && !strings.HasPrefix(imp, "gonum.org/v1/gonum/"):
				bad = "automaton imports the standard library, go-json and gonum only"
			case under(pkg, "internal/text") && strings.Contains(strings.SplitN(imp, "/", 2)[0], "."):
				bad = "internal/text imports the standard library only"
			case pkg != mod && under(imp, "cmd") && !under(pkg, "cmd"):
				bad = "only main imports cmd"
			}
			if bad != "" {
				t.Errorf("%s imports %s: %s", pkg, imp, bad)
			}
		}
	}
}
