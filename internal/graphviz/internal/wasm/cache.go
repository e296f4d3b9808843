package wasm

// fsmine patch: this file is fsmine's, not upstream's (see FSMINE.md).

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/tetratelabs/wazero"
)

// The compilation cache keeps Graphviz compiled to machine code, so that
// a process does not spend most of a second compiling it again. wazero
// runs whatever machine code it finds there (the CRC32C it checks guards
// against a damaged file, not a planted one), and upstream go-graphviz
// used a directory under the system's temporary directory, made with mode
// 0755 by whoever came first. wazero also trusts each entry's layout and
// never removes a bad one: an empty, truncated or damaged entry fails
// every later compilation (go-graphviz panics on that), one that claims
// 2^32-1 functions allocates 32 GB before it reads them, and a FIFO blocks
// the open forever.
//
// So the cache is trusted only when it is private to the user: the user's
// cache directory (os.UserCacheDir), not open to others unless sticky,
// holds go-graphviz, which holds the directory of wazero's version, both
// real directories (not symlinks) owned by the user with no permission
// for group or others (made so, mode 0700, if absent). A cache that fails
// this is not used at all: Graphviz is compiled in memory, as with no
// cache. In a private cache every entry is checked before wazero reads it
// (a regular file of the user's, not a symlink, of at most maxCacheEntry bytes, laid out
// as wazero lays it out, with the right checksum), and a bad one is
// removed, so that wazero compiles Graphviz again and writes a good one.
// If wazero still fails with the cache, instantiateCached removes the entries and
// compiles in memory.

// maxCacheEntry bounds an entry of the compilation cache: Graphviz 12.1.2
// compiles to some 6 MB of machine code.
const maxCacheEntry = 256 << 20

// cacheMagic starts an entry, as wazero's wazevo engine writes it.
var cacheMagic = []byte("WAZEVO")

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// compilationCache returns wazero's compilation cache in the user's cache
// directory, with its bad entries removed, and the directory that holds
// the entries; or nil when that directory is not the user's own, or
// cannot be made.
func compilationCache() (wazero.CompilationCache, string) {
	userCache, err := os.UserCacheDir()
	if err != nil || !filepath.IsAbs(userCache) {
		return nil, ""
	}
	if err := os.MkdirAll(userCache, 0o700); err != nil {
		return nil, ""
	}
	if !safeParent(userCache) {
		return nil, ""
	}
	dir := filepath.Join(userCache, "go-graphviz")
	entries := filepath.Join(dir, wazeroCacheDir())
	if !privateDir(dir) || !privateDir(entries) {
		return nil, ""
	}
	removeBadEntries(entries)
	cache, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil, ""
	}
	return cache, entries
}

// wazeroCacheDir is the name of the directory, under the one given to
// wazero.NewCompilationCacheWithDir, that wazero keeps its entries in, as
// wazero names it (its internal/version and cache.go): they are for one
// version of wazero on one system.
func wazeroCacheDir() string {
	return "wazero-" + wazeroVersion() + "-" + runtime.GOARCH + "-" + runtime.GOOS
}

// wazeroVersion is wazero's version as wazero's internal/version finds it,
// which is what wazero writes into each entry.
func wazeroVersion() string {
	var v string
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if strings.Contains(dep.Path, "github.com/tetratelabs/wazero") {
				v = dep.Version
			}
		}
		if v == "" || v == "(devel)" {
			v = info.Main.Version
		}
	}
	if v == "" || v == "(devel)" {
		return "dev"
	}
	return v
}

// privateDir makes dir with mode 0700 if it does not exist, and reports
// whether it is a directory, not a symlink, owned by the user, with no
// permission for group or others.
func privateDir(dir string) bool {
	err := os.Mkdir(dir, 0o700)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return false
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return false
	}
	return fi.IsDir() && private(fi)
}

// safeParent reports whether no one but the user (and root) can replace
// what dir holds: dir is owned by the user or root and is not writable by
// others, unless it is sticky (as /tmp is). dir may be a symlink (a home
// directory's .cache often is): what it points to is checked.
func safeParent(dir string) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	return safeParentInfo(fi)
}

// removeBadEntries removes from dir every cache entry that wazero could
// not use or should not trust (see checkEntry), so that wazero compiles
// again and writes a good one. Temporary files that wazero writes before
// renaming them into place are left alone: another process may be writing
// one, and wazero never reads them.
func removeBadEntries(dir string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	version := wazeroVersion()
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".tmp") {
			continue
		}
		path := filepath.Join(dir, de.Name())
		if checkEntry(path, version) != nil {
			_ = os.RemoveAll(path)
		}
	}
}

// checkEntry returns an error unless path is a cache entry that wazero
// can read: a regular file (opened without following a symlink, and
// without blocking on a FIFO), owned by the user, of at most
// maxCacheEntry bytes, that is an entry of wazero version as wazero's
// wazevo engine writes it (engine_cache.go), checksum included.
func checkEntry(path, version string) error {
	f, err := openEntry(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%v)", path, fi.Mode().Type())
	}
	if !ownedByUser(fi) {
		return fmt.Errorf("%s: not the user's", path)
	}
	if fi.Size() > maxCacheEntry {
		return fmt.Errorf("%s: %d bytes, more than %d", path, fi.Size(), maxCacheEntry)
	}
	if err := parseEntry(bufio.NewReader(f), fi.Size(), version); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// parseEntry reads an entry of size bytes from r: the magic WAZEVO, the
// length and bytes of wazero's version, the number of functions (uint32)
// and each one's offset in the machine code (uint64), the length of the
// machine code (uint64), the code, its CRC32C (uint32), then 0, or 1 and
// a source map of pairs of uint64 (its length first), and nothing after.
// Integers are little-endian. Every count is checked against size before
// anything is read or made for it.
func parseEntry(r io.Reader, size int64, version string) error {
	left := size
	read := func(n int64) ([]byte, error) {
		if n > left {
			return nil, io.ErrUnexpectedEOF
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		left -= n
		return b, nil
	}
	b, err := read(int64(len(cacheMagic)) + 1)
	if err != nil || string(b[:len(cacheMagic)]) != string(cacheMagic) {
		return errors.New("no WAZEVO header")
	}
	if b, err = read(int64(b[len(cacheMagic)])); err != nil || string(b) != version {
		return fmt.Errorf("not of wazero %s", version)
	}
	if b, err = read(4); err != nil {
		return errors.New("truncated header")
	}
	functions := int64(binary.LittleEndian.Uint32(b))
	if functions > left/8 {
		return fmt.Errorf("%d functions in %d bytes", functions, left)
	}
	offsets, err := read(8 * functions)
	if err != nil {
		return errors.New("truncated function offsets")
	}
	if b, err = read(8); err != nil {
		return errors.New("truncated code length")
	}
	codeLen := binary.LittleEndian.Uint64(b)
	if codeLen == 0 || codeLen > uint64(left) {
		return fmt.Errorf("%d bytes of code in %d bytes", codeLen, left)
	}
	for i := int64(0); i < functions; i++ {
		if off := binary.LittleEndian.Uint64(offsets[8*i:]); off > codeLen {
			return fmt.Errorf("function %d at %d, past %d bytes of code", i, off, codeLen)
		}
	}
	sum := crc32.New(crc32c)
	if _, err := io.CopyN(sum, r, int64(codeLen)); err != nil {
		return errors.New("truncated code")
	}
	left -= int64(codeLen)
	if b, err = read(4); err != nil {
		return errors.New("truncated checksum")
	}
	if binary.LittleEndian.Uint32(b) != sum.Sum32() {
		return errors.New("checksum mismatch")
	}
	if b, err = read(1); err != nil {
		return errors.New("truncated source map flag")
	}
	switch b[0] {
	case 0:
	case 1:
		if b, err = read(8); err != nil {
			return errors.New("truncated source map length")
		}
		if n := binary.LittleEndian.Uint64(b); n > uint64(left)/16 || int64(n)*16 != left {
			return fmt.Errorf("source map of %d pairs in %d bytes", n, left)
		}
		if _, err := io.CopyN(io.Discard, r, left); err != nil {
			return errors.New("truncated source map")
		}
		left = 0
	default:
		return fmt.Errorf("source map flag %d", b[0])
	}
	if left != 0 {
		return fmt.Errorf("%d bytes after the entry", left)
	}
	return nil
}

// removeEntries removes the entries (and temporary files) in dir, after
// wazero failed to use them.
func removeEntries(dir string) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range des {
		_ = os.RemoveAll(filepath.Join(dir, de.Name()))
	}
}

// wasmRuntime is the runtime that instantiate made last, closed when
// instantiateCached gives up the compilation cache.
var wasmRuntime wazero.Runtime

// instantiateCached instantiates Graphviz with inst (instantiate, but for
// tests) and the compilation cache when the user has a private one; and
// in memory when not, or when inst fails (panics) with the cache, after it
// removes the cache's entries: the cache can make a start faster, never
// fail it.
func instantiateCached(inst func(wazero.RuntimeConfig)) {
	instanceGuarded = guarded
	if cache, dir := compilationCache(); cache != nil {
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("%v", r)
				}
			}()
			inst(runtimeConfig().WithCompilationCache(cache))
			return nil
		}()
		if err == nil {
			return
		}
		ctx := context.Background()
		if wasmRuntime != nil {
			_ = wasmRuntime.Close(ctx)
			wasmRuntime = nil
		}
		_ = cache.Close(ctx)
		removeEntries(dir)
	}
	inst(runtimeConfig())
}

// guarded is what SetGuarded last chose; instanceGuarded, what the instance
// made last runs.
var guarded, instanceGuarded bool

// Instance says whether Graphviz's instance is made, whether it runs guarded
// code, and whether it is closed (a guarded call whose context ended closes
// it; Restart makes another).
func Instance() (made, guarded, closed bool) {
	if mod.mod == nil {
		return false, false, false
	}
	return true, instanceGuarded, mod.mod.IsClosed()
}

// SetGuarded chooses whether the instances made from now on (by the first
// Init, or by Restart) are guarded: their code checks, at every loop and in
// Go, whether the context of the call is done, and if so closes the
// instance and returns the context's error. Guarded code is slower (a
// layout takes 2.2 to 3.3 times as long), but a call stops when its context
// ends, and it never holds up the collector's stop of the world, so a
// signal is handled at once even on one processor; unguarded code runs to
// its end whatever happens meanwhile.
func SetGuarded(on bool) { guarded = on }

// runtimeConfig is the configuration the next instance runs with.
func runtimeConfig() wazero.RuntimeConfig {
	return wazero.NewRuntimeConfig().WithCloseOnContextDone(guarded)
}
