//go:build unix

package render

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestBuiltinEngineCache: the builtin engine's compilation cache (machine
// code that wazero made from Graphviz's WebAssembly, kept in
// $XDG_CACHE_HOME/go-graphviz) can only make drawing faster. A bad entry is
// removed and made again, never fatal, whatever is in it; a cache directory
// that is not the user's own (a symlink, or open to others) is not used at
// all, since wazero runs the machine code it finds there. Each case runs
// the test binary as a child that draws an SVG with its own cache
// directory: the SVG must be the one drawn with a fresh cache.
func TestBuiltinEngineCache(t *testing.T) {
	if out := os.Getenv("FSMINE_TEST_CACHE_CHILD"); out != "" {
		var buf bytes.Buffer
		if err := SVG(&buf, loadFixture(t, fixtures[0]), Options{}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		t.Skip("os.UserCacheDir follows XDG_CACHE_HOME only on other systems")
	}
	if testing.Short() {
		t.Skip("a child process per cache case, each compiling Graphviz: skipped in -short mode")
	}
	fc := newFreshCache(t)
	t.Run("entry", func(t *testing.T) { testSpoiltEntries(t, fc) })
	t.Run("dir", func(t *testing.T) { testPlantedDirs(t, fc) })
}

// drawWithCache runs a child with cache as XDG_CACHE_HOME and returns its
// SVG. A child that hangs (on a FIFO, say) is killed: the deadline only
// stops a hang from stalling the run, no timing is asserted.
func drawWithCache(t *testing.T, cache string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.svg")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestBuiltinEngineCache$")
	cmd.Env = append(os.Environ(), "FSMINE_TEST_CACHE_CHILD="+out, "XDG_CACHE_HOME="+cache)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child drawing with cache %s: %v (context: %v)\n%s", cache, err, ctx.Err(), b)
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return svg
}

// freshCache is what drawing with a fresh cache gives: the SVG to compare
// with, and the one entry it made (its bytes, its version directory's name
// and its own) to spoil.
type freshCache struct {
	want       []byte
	good       []byte
	versionDir string
	name       string
}

// newFreshCache draws with a fresh cache, which must hold one entry, in
// directories of mode 700.
func newFreshCache(t *testing.T) freshCache {
	t.Helper()
	fresh := t.TempDir()
	want := drawWithCache(t, fresh)
	entries, _ := filepath.Glob(filepath.Join(fresh, "go-graphviz", "wazero-*", "*"))
	if len(entries) != 1 {
		t.Fatalf("a fresh cache holds %d entries %q, want 1", len(entries), entries)
	}
	entry := entries[0]
	good, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(fresh, "go-graphviz"), filepath.Dir(entry)} {
		fi, err := os.Lstat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); !fi.IsDir() || perm != 0o700 {
			t.Errorf("%s: mode %v, want a directory with mode 700", dir, fi.Mode())
		}
	}
	return freshCache{want: want, good: good, versionDir: filepath.Base(filepath.Dir(entry)), name: filepath.Base(entry)}
}

// hugeCount is the start of an entry that claims 2^32-1 functions, for the
// wazero version that versionDir names.
func hugeCount(versionDir string) []byte {
	b := []byte("WAZEVO")
	v := versionDir[len("wazero-"):]
	v = v[:len(v)-len("-"+runtime.GOARCH+"-"+runtime.GOOS)]
	b = append(b, byte(len(v)))
	b = append(b, v...)
	return binary.LittleEndian.AppendUint32(b, 0xffffffff)
}

// testSpoiltEntries draws with a cache whose one entry is bad in each of
// several ways: the SVG must be fc's, and a good entry must replace the bad.
func testSpoiltEntries(t *testing.T, fc freshCache) {
	good := fc.good
	huge := hugeCount(fc.versionDir)
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0xff

	bad := []struct {
		name  string
		spoil func(t *testing.T, path string)
	}{
		{"empty", func(t *testing.T, path string) { write(t, path, nil) }},
		{"truncated", func(t *testing.T, path string) { write(t, path, good[:len(good)/2]) }},
		{"flipped byte", func(t *testing.T, path string) { write(t, path, flipped) }},
		{"garbage", func(t *testing.T, path string) { write(t, path, bytes.Repeat([]byte("garbage!"), 1000)) }},
		{"2^32-1 functions", func(t *testing.T, path string) { write(t, path, huge) }},
		{"FIFO", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink to a good entry", func(t *testing.T, path string) {
			target := filepath.Join(t.TempDir(), "entry")
			write(t, target, good)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			dir := filepath.Join(cache, "go-graphviz", fc.versionDir)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, fc.name)
			tt.spoil(t, path)
			if got := drawWithCache(t, cache); !bytes.Equal(got, fc.want) {
				t.Errorf("SVG drawn with a bad cache entry differs from the one drawn with a fresh cache")
			}
			// The bad entry is gone and a good one made in its place.
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatalf("no entry after drawing: %v", err)
			}
			if !fi.Mode().IsRegular() || fi.Size() != int64(len(good)) {
				t.Errorf("entry after drawing: %v, %d bytes; want a regular file of %d bytes", fi.Mode(), fi.Size(), len(good))
			}
		})
	}
}

// testPlantedDirs draws beside cache directories that are not the user's
// own, which must not be used: the entry planted in them is garbage, which
// would fail the draw if it were read, and it is left as it was.
func testPlantedDirs(t *testing.T, fc freshCache) {
	versionDir, name := fc.versionDir, fc.name
	planted := []struct {
		name string
		make func(t *testing.T, cache string) (entry string)
	}{
		{"go-graphviz open to all", func(t *testing.T, cache string) string {
			return plant(t, filepath.Join(cache, "go-graphviz"), 0o777, versionDir, 0o700, name)
		}},
		{"version directory open to all", func(t *testing.T, cache string) string {
			return plant(t, filepath.Join(cache, "go-graphviz"), 0o700, versionDir, 0o777, name)
		}},
		{"go-graphviz group-readable", func(t *testing.T, cache string) string {
			return plant(t, filepath.Join(cache, "go-graphviz"), 0o750, versionDir, 0o700, name)
		}},
		{"go-graphviz a symlink", func(t *testing.T, cache string) string {
			other := t.TempDir()
			entry := plant(t, filepath.Join(other, "elsewhere"), 0o700, versionDir, 0o700, name)
			if err := os.Symlink(filepath.Join(other, "elsewhere"), filepath.Join(cache, "go-graphviz")); err != nil {
				t.Fatal(err)
			}
			return entry
		}},
		{"version directory a symlink", func(t *testing.T, cache string) string {
			other := t.TempDir()
			entry := plant(t, other, 0o700, "v", 0o700, name)
			if err := os.Mkdir(filepath.Join(cache, "go-graphviz"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(other, "v"), filepath.Join(cache, "go-graphviz", versionDir)); err != nil {
				t.Fatal(err)
			}
			return entry
		}},
		{"go-graphviz another user's", func(t *testing.T, cache string) string {
			if os.Getuid() != 0 {
				t.Skip("only root can make a directory owned by another user")
			}
			dir := filepath.Join(cache, "go-graphviz")
			entry := plant(t, dir, 0o700, versionDir, 0o700, name)
			for _, p := range []string{dir, filepath.Dir(entry), entry} {
				if err := os.Lchown(p, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			return entry
		}},
	}
	for _, tt := range planted {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			entry := tt.make(t, cache)
			if got := drawWithCache(t, cache); !bytes.Equal(got, fc.want) {
				t.Errorf("SVG drawn beside a planted cache differs from the one drawn with a fresh cache")
			}
			got, err := os.ReadFile(entry)
			if err != nil {
				t.Fatalf("planted entry: %v", err)
			}
			if !bytes.Equal(got, plantedEntry) {
				t.Errorf("the planted entry was changed (%d bytes now): the directory was used", len(got))
			}
		})
	}
}

// plantedEntry is what plant puts in a cache directory.
var plantedEntry = []byte("WAZEVO planted garbage")

// plant makes dir with mode dirMode, sub in it with mode subMode, and the
// cache entry name in sub holding plantedEntry, and returns the entry's path.
func plant(t *testing.T, dir string, dirMode os.FileMode, sub string, subMode os.FileMode, name string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(dir, sub, name)
	write(t, entry, plantedEntry)
	// Chmod, not Mkdir's mode, which the umask would narrow.
	if err := os.Chmod(filepath.Join(dir, sub), subMode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, dirMode); err != nil {
		t.Fatal(err)
	}
	return entry
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
