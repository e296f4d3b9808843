package render

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBuiltinEngineAfterJSON draws, in one process, PNG pictures (laid out
// through Graphviz's json renderer) of five review maps of real logs
// (testdata/json_spoils: BPI 2012, help desk and three STAR tasks, as
// fsmine render wrote their DOT), then an SVG. Graphviz 12.1.2's json
// renderer damages the WebAssembly instance's memory on some labels with
// characters outside ASCII ("…", "·"): after the first four, the fifth read
// no graph and runBuiltin panicked on go-graphviz's nil graph. The engine
// now makes the instance anew after json.
func TestBuiltinEngineAfterJSON(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "json_spoils", "*.dot"))
	if err != nil || len(files) != 5 {
		t.Fatalf("want 5 DOT files in testdata/json_spoils, got %d (%v)", len(files), err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := layoutBuiltin(src, "png", guard{}); err != nil {
			t.Fatalf("PNG of %s: %v", f, err)
		}
	}
	m := syntheticModel(t, 10, 1)
	checkSVG(t, m, render(t, SVG, m, Options{}))
}
