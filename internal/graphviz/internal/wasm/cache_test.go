//go:build unix

package wasm

// fsmine patch: this file is fsmine's, not upstream's (see FSMINE.md).

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/tetratelabs/wazero"
)

// entry lays out a cache entry as wazero's wazevo engine writes it
// (serializeCompiledModule in its engine_cache.go).
type entry struct {
	magic      string
	version    string
	offsets    []uint64
	code       []byte
	badSum     bool
	sourceMap  []uint64 // pairs
	mapFlag    byte
	mapLen     *uint64
	functions  *uint32
	codeLen    *uint64
	trailing   []byte
	truncateTo int
}

func (e entry) bytes() []byte {
	b := []byte(e.magic)
	b = append(b, byte(len(e.version)))
	b = append(b, e.version...)
	n := uint32(len(e.offsets))
	if e.functions != nil {
		n = *e.functions
	}
	b = binary.LittleEndian.AppendUint32(b, n)
	for _, o := range e.offsets {
		b = binary.LittleEndian.AppendUint64(b, o)
	}
	cl := uint64(len(e.code))
	if e.codeLen != nil {
		cl = *e.codeLen
	}
	b = binary.LittleEndian.AppendUint64(b, cl)
	b = append(b, e.code...)
	sum := crc32.Checksum(e.code, crc32.MakeTable(crc32.Castagnoli))
	if e.badSum {
		sum++
	}
	b = binary.LittleEndian.AppendUint32(b, sum)
	b = append(b, e.mapFlag)
	if e.mapFlag == 1 {
		ml := uint64(len(e.sourceMap) / 2)
		if e.mapLen != nil {
			ml = *e.mapLen
		}
		b = binary.LittleEndian.AppendUint64(b, ml)
		for _, v := range e.sourceMap {
			b = binary.LittleEndian.AppendUint64(b, v)
		}
	}
	b = append(b, e.trailing...)
	if e.truncateTo > 0 {
		b = b[:e.truncateTo]
	}
	return b
}

func u32(v uint32) *uint32 { return &v }
func u64(v uint64) *uint64 { return &v }

func good() entry {
	return entry{magic: "WAZEVO", version: "v1.2.3", offsets: []uint64{0, 4, 8}, code: []byte("0123456789ab")}
}

func TestParseEntry(t *testing.T) {
	with := func(f func(*entry)) []byte {
		e := good()
		f(&e)
		return e.bytes()
	}
	tests := []struct {
		name  string
		b     []byte
		valid bool
	}{
		{"good", good().bytes(), true},
		{"good with a source map", with(func(e *entry) { e.mapFlag = 1; e.sourceMap = []uint64{1, 2, 3, 4} }), true},
		{"empty", nil, false},
		{"magic only", []byte("WAZEVO"), false},
		{"other magic", with(func(e *entry) { e.magic = "WAZERO" }), false},
		{"other version", with(func(e *entry) { e.version = "v1.2.4" }), false},
		{"2^32-1 functions", with(func(e *entry) { e.functions = u32(0xffffffff) }), false},
		{"more functions than offsets", with(func(e *entry) { e.functions = u32(4) }), false},
		{"function past the code", with(func(e *entry) { e.offsets[2] = 13 }), false},
		{"no code", with(func(e *entry) { e.code = nil; e.offsets = nil }), false},
		{"2^64-1 bytes of code", with(func(e *entry) { e.codeLen = u64(1<<64 - 1) }), false},
		{"more code than there is", with(func(e *entry) { e.codeLen = u64(13) }), false},
		{"checksum mismatch", with(func(e *entry) { e.badSum = true }), false},
		{"truncated in the code", with(func(e *entry) { e.truncateTo = 40 }), false},
		{"truncated before the source map flag", with(func(e *entry) { e.truncateTo = len(good().bytes()) - 1 }), false},
		{"source map flag 2", with(func(e *entry) { e.mapFlag = 2 }), false},
		{"source map longer than the entry", with(func(e *entry) { e.mapFlag = 1; e.sourceMap = []uint64{1, 2}; e.mapLen = u64(2) }), false},
		{"source map of 2^64-1 pairs", with(func(e *entry) { e.mapFlag = 1; e.mapLen = u64(1<<64 - 1) }), false},
		{"bytes after the entry", with(func(e *entry) { e.trailing = []byte{0} }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := parseEntry(bytes.NewReader(tt.b), int64(len(tt.b)), "v1.2.3")
			if (err == nil) != tt.valid {
				t.Errorf("parseEntry = %v, want valid %v", err, tt.valid)
			}
		})
	}
}

// TestCheckEntry: what is not a regular file is refused without being
// read, a FIFO without blocking (before the fix, opening one hung).
func TestCheckEntry(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(path("good"), good().bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path("fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(path("good"), path("symlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path("dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A sparse file one byte over the bound, refused by its size.
	f, err := os.Create(path("huge"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxCacheEntry + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for name, valid := range map[string]bool{"good": true, "fifo": false, "symlink": false, "dir": false, "huge": false, "missing": false} {
		if err := checkEntry(path(name), "v1.2.3"); (err == nil) != valid {
			t.Errorf("checkEntry(%s) = %v, want valid %v", name, err, valid)
		}
	}
}

// TestCompilationCache: the cache is used only where the directories are
// the user's own.
func TestCompilationCache(t *testing.T) {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		t.Skip("os.UserCacheDir follows XDG_CACHE_HOME only on other systems")
	}
	tests := []struct {
		name   string
		setup  func(t *testing.T, base string)
		usable bool
	}{
		{"fresh", func(*testing.T, string) {}, true},
		{"base sticky and open to all", func(t *testing.T, base string) { chmod(t, base, 0o777|os.ModeSticky) }, true},
		{"base open to all", func(t *testing.T, base string) { chmod(t, base, 0o777) }, false},
		{"go-graphviz open to all", func(t *testing.T, base string) {
			mkdir(t, filepath.Join(base, "go-graphviz"), 0o777)
		}, false},
		{"version directory group-writable", func(t *testing.T, base string) {
			mkdir(t, filepath.Join(base, "go-graphviz"), 0o700)
			mkdir(t, filepath.Join(base, "go-graphviz", wazeroCacheDir()), 0o770)
		}, false},
		{"go-graphviz a file", func(t *testing.T, base string) {
			if err := os.WriteFile(filepath.Join(base, "go-graphviz"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "cache")
			mkdir(t, base, 0o700)
			tt.setup(t, base)
			t.Setenv("XDG_CACHE_HOME", base)
			cache, dir := compilationCache()
			if (cache != nil) != tt.usable {
				t.Fatalf("compilationCache() = %v, %q; want usable %v", cache, dir, tt.usable)
			}
			if cache == nil {
				return
			}
			defer cache.Close(t.Context())
			if want := filepath.Join(base, "go-graphviz", wazeroCacheDir()); dir != want {
				t.Errorf("entries in %s, want %s", dir, want)
			}
			for _, d := range []string{filepath.Dir(dir), dir} {
				fi, err := os.Lstat(d)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode() != os.ModeDir|0o700 {
					t.Errorf("%s: mode %v, want drwx------", d, fi.Mode())
				}
			}
		})
	}
}

// TestInstantiateCachedFallback: when instantiating with the cache fails
// (go-graphviz panics on any error), the entries are removed and Graphviz
// is instantiated again without the cache, once.
func TestInstantiateCachedFallback(t *testing.T) {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		t.Skip("os.UserCacheDir follows XDG_CACHE_HOME only on other systems")
	}
	base := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", base)
	entries := filepath.Join(base, "go-graphviz", wazeroCacheDir())
	mkdir(t, filepath.Dir(entries), 0o700)
	mkdir(t, entries, 0o700)
	// A well-formed entry that the fake instantiation below rejects, as
	// wazero would one whose fault the checks cannot see.
	spoilt := filepath.Join(entries, "0123")
	e := good()
	e.version = wazeroVersion()
	if err := os.WriteFile(spoilt, e.bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	calls := 0
	instantiateCached(func(wazero.RuntimeConfig) {
		calls++
		if calls == 1 {
			panic("compilationcache: bad entry")
		}
	})
	if calls != 2 {
		t.Errorf("instantiate called %d times, want 2 (with the cache, then without)", calls)
	}
	if _, err := os.Lstat(spoilt); err == nil {
		t.Error("the entry wazero failed on is still there")
	}
}

func mkdir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	chmod(t, dir, mode)
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
