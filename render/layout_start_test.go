package render

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/fsmine/fsmine/internal/graphviz"
)

// TestBuiltinEngineOnFirstUse: a program that links the builtin engine
// starts without making Graphviz's WebAssembly instance (upstream
// go-graphviz made it in init, in every fsmine command: see
// internal/graphviz/FSMINE.md), and the first picture keeps the
// compiled code in the user's cache directory, made for them alone, not in
// a shared temporary directory. The test runs itself as a child process
// with its own cache and temporary directories: once drawing nothing, once
// drawing an SVG.
func TestBuiltinEngineOnFirstUse(t *testing.T) {
	if mode := os.Getenv("FSMINE_TEST_ENGINE_CHILD"); mode != "" {
		if mode == "draw" {
			if err := SVG(io.Discard, loadFixture(t, fixtures[0]), Options{}); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("os.UserCacheDir follows XDG_CACHE_HOME only on other systems")
	}
	run := func(mode string) (cache, tmp string) {
		t.Helper()
		cache, tmp = t.TempDir(), t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestBuiltinEngineOnFirstUse$")
		cmd.Env = append(os.Environ(), "FSMINE_TEST_ENGINE_CHILD="+mode, "XDG_CACHE_HOME="+cache, "TMPDIR="+tmp)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("child (%s): %v\n%s", mode, err, out)
		}
		if _, err := os.Stat(filepath.Join(tmp, "go-graphviz")); err == nil {
			t.Errorf("child (%s) made go-graphviz in the temporary directory", mode)
		}
		return cache, tmp
	}
	cache, _ := run("none")
	if _, err := os.Stat(filepath.Join(cache, "go-graphviz")); err == nil {
		t.Error("a child that drew nothing made the engine's compilation cache: Graphviz was instantiated at start")
	}
	cache, _ = run("draw")
	fi, err := os.Stat(filepath.Join(cache, "go-graphviz"))
	if err != nil {
		t.Fatalf("a child that drew an SVG left no compilation cache in the user's cache directory: %v", err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("compilation cache directory has mode %o, want 700", perm)
	}
}

// TestBuiltinEngineEnums: the engine's own PNG renderer, which fsmine does
// not use but the copy of go-graphviz keeps, draws a filled red node red.
// Its flags and colour types are enum values that packages cgraph and gvc
// copy when they load; the copy declares them as Graphviz's (upstream set
// them in init: see internal/graphviz/FSMINE.md), and with ordinal
// placeholders the node came out transparent.
func TestBuiltinEngineEnums(t *testing.T) {
	ctx := context.Background()
	builtinMu.Lock()
	defer builtinMu.Unlock()
	readyBuiltin(false)
	gv, err := graphviz.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer gv.Close()
	g, err := graphviz.ParseBytes([]byte(`digraph { a [color=red style=filled]; a -> b }`))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var buf bytes.Buffer
	if err := gv.Render(ctx, g, graphviz.PNG, &buf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, gr, bl, a := img.At(x, y).RGBA()
			if a > 0xf000 && r > 0xd000 && gr < 0x3000 && bl < 0x3000 {
				return
			}
		}
	}
	t.Errorf("no red pixel in the %dx%d PNG of a filled red node", b.Dx(), b.Dy())
}
