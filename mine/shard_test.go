package mine

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestReadSameAcrossWorkers reads logs with 1 to 5 workers (and as many
// shards, and with the default number of shards), cut into small chunks, whole and streaming and session by
// session, and wants the same models, partial results, counts and sessions
// as with one worker: what the shards give must not depend on their number
// or on scheduling. Models keep the most example sessions, which the shards'
// tallies pick each from their own sessions. The returns sample has a detour rule (so shards name new
// events), duplicates across inputs, an empty input, and sessions that
// interleave (so small windows start over).
func TestReadSameAcrossWorkers(t *testing.T) {
	defer func(n int) { chunkSize = n }(chunkSize)
	chunkSize = 4 << 10
	rules := readRules(t, "../testdata/returns.labels.json")
	data, err := os.ReadFile("../testdata/returns.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	third := len(lines) / 3
	ins := []Input{
		memInput("a.jsonl", strings.Join(lines[:third], "")),
		memInput("b.jsonl", ""),
		memInput("c.jsonl", lines[third]+strings.Join(lines[third:2*third], "")),
		memInput("d.jsonl", strings.Join(lines[2*third:], "")+lines[0]+lines[1]+"{bad\n"),
	}
	type result struct {
		partial, model []byte
		counts         string
		streamed       map[int]string // window -> model and reread
		each           string
	}
	read := func(t *testing.T, workers, shards int) result {
		var r result
		lg, err := Read(ins, ReadOptions{Rules: rules, Workers: workers, shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := lg.WritePartial(&buf); err != nil {
			t.Fatal(err)
		}
		r.partial = buf.Bytes()
		r.counts = fmt.Sprintf("%d %d %d %d %d %d %d %d %d %v %v", lg.Records, lg.Skipped, lg.Duplicates, lg.Dropped, lg.Emptied,
			lg.Folded, lg.Detours, lg.StepGaps, lg.NumSessions(), lg.Files, lg.Bad)
		r.model = buildBytesWith(t, lg, MaxExamples)
		r.streamed = map[int]string{}
		for _, window := range []int{1, 50, DefaultWindow} {
			lg, err := Read(ins, ReadOptions{Rules: rules, Workers: workers, shards: shards, Stream: true, Window: window})
			if err != nil {
				t.Fatal(err)
			}
			r.streamed[window] = fmt.Sprintf("%s\nreread %q %d %d %d %d", buildBytesWith(t, lg, MaxExamples), lg.Reread, lg.Duplicates, lg.Detours, lg.NumSessions(), lg.Emptied)
		}
		var got []string
		lg, err = Read(ins, ReadOptions{Rules: rules, Workers: workers, shards: shards, Stream: true, Each: func(lg *Log, s *Session) {
			moves := lg.Moves(s)
			got = append(got, fmt.Sprint(s.ID, moves, s.Visits))
		}})
		if err != nil || lg.Reread != "" {
			t.Fatalf("each: %v, reread %q", err, lg.Reread)
		}
		slices.Sort(got)
		r.each = strings.Join(got, "\n")
		return r
	}
	want := read(t, 1, 1)
	if !strings.Contains(string(want.model), "detour:") {
		t.Fatal("the returns sample no longer has detours: the test needs a log that does")
	}
	if want.streamed[1] == want.streamed[DefaultWindow] || !strings.Contains(want.streamed[1], "reread \"session") {
		t.Fatalf("window 1 did not start over: %s", want.streamed[1][strings.LastIndex(want.streamed[1], "\n"):])
	}
	for _, c := range []struct{ workers, shards int }{{2, 2}, {3, 3}, {5, 5}, {2, 0}, {5, 0}} {
		got := read(t, c.workers, c.shards)
		name := fmt.Sprintf("%d workers, %d shards", c.workers, c.shards)
		if !bytes.Equal(got.partial, want.partial) {
			t.Errorf("%s: partial result differs", name)
		}
		if !bytes.Equal(got.model, want.model) {
			t.Errorf("%s: model differs", name)
		}
		if got.counts != want.counts {
			t.Errorf("%s: counts\n%s\nwant\n%s", name, got.counts, want.counts)
		}
		for w, s := range want.streamed {
			if got.streamed[w] != s {
				t.Errorf("%s, window %d: streamed model differs", name, w)
			}
		}
		if got.each != want.each {
			t.Errorf("%s: sessions given to Each differ", name)
		}
	}
}

// TestReadSameAcrossGOMAXPROCS is the command-line case: default options
// (workers from GOMAXPROCS) under GOMAXPROCS 1 and 2 give the same model.
func TestReadSameAcrossGOMAXPROCS(t *testing.T) {
	data, err := os.ReadFile("../testdata/returns.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ins := []Input{memInput("returns.jsonl", string(data))}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var models [][]byte
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		lg, err := Read(ins, ReadOptions{Stream: true})
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, buildBytesWith(t, lg, MaxExamples))
	}
	if !bytes.Equal(models[0], models[1]) {
		t.Error("GOMAXPROCS 1 and 2 give different models")
	}
}

// TestProvenanceHash: a file's SHA-256 is that of its decompressed bytes,
// byte-order mark included, whether its lines are hashed where they are read
// (JSONL) or as a converter reads them, and however it is cut into chunks.
func TestProvenanceHash(t *testing.T) {
	defer func(n int) { chunkSize = n }(chunkSize)
	data, err := os.ReadFile("../testdata/returns.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	csv := "case,activity,timestamp\n" + strings.Repeat("c1,a,2024-01-01T00:00:00Z\nc1,b,2024-01-01T00:01:00Z\nc2,a,2024-01-01T00:02:00Z\n", 2000)
	gz := func(s string) string {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.String()
	}
	tests := []struct{ name, stored, plain string }{
		{"jsonl", string(data), string(data)},
		{"jsonl with a byte-order mark", "\xef\xbb\xbf" + string(data), "\xef\xbb\xbf" + string(data)},
		{"gzipped jsonl", gz(string(data)), string(data)},
		{"gzipped csv with a byte-order mark", gz("\xef\xbb\xbf" + csv), "\xef\xbb\xbf" + csv},
		{"csv", csv, csv},
	}
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		chunkSize = size
		for _, tt := range tests {
			lg, err := Read([]Input{memInput(tt.name, tt.stored)}, ReadOptions{})
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			sum := sha256.Sum256([]byte(tt.plain))
			if got, want := lg.Files[0].SHA256, hex.EncodeToString(sum[:]); got != want {
				t.Errorf("chunks of %d, %s: sha256 %s, want %s", size, tt.name, got, want)
			}
			if lg.Records == 0 {
				t.Errorf("chunks of %d, %s: no records", size, tt.name)
			}
		}
	}
}

// TestSessionTable: finds, inserts and removes, with hashes that collide
// and probe runs that wrap around the table, agree with a map.
func TestSessionTable(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var tab sessionTable
	ids := []string{}             // index -> id
	hashOf := map[string]uint64{} // live ids
	idOf := func(i int) string { return ids[i] }
	for step := 0; step < 30000; step++ {
		if len(hashOf) > 0 && r.IntN(5) < 2 {
			// Remove a live id.
			var id string
			for id = range hashOf {
				break
			}
			at, cell, ok := tab.find(hashOf[id], id, idOf)
			if !ok || ids[at] != id {
				t.Fatalf("step %d: live %q not found", step, id)
			}
			tab.remove(cell)
			delete(hashOf, id)
			continue
		}
		id := fmt.Sprint("s", step)
		// A quarter from few distinct hashes near the end of the first
		// table (long runs, collisions, wrap-around), with high bits that
		// only the comparison sees; the rest random.
		h := r.Uint64()
		if r.IntN(4) == 0 {
			h = uint64(1024-8+r.IntN(24)) | uint64(r.IntN(3))<<40
		}
		if _, _, ok := tab.find(h, id, idOf); ok {
			t.Fatalf("step %d: %q found before it was inserted", step, id)
		}
		_, cell, _ := tab.find(h, id, idOf)
		ids = append(ids, id)
		tab.insert(cell, h, len(ids)-1)
		hashOf[id] = h
		if step%1000 == 0 {
			if tab.used != len(hashOf) {
				t.Fatalf("step %d: %d used, want %d", step, tab.used, len(hashOf))
			}
			for id, h := range hashOf {
				if at, _, ok := tab.find(h, id, idOf); !ok || ids[at] != id {
					t.Fatalf("step %d: %q lost", step, id)
				}
			}
		}
	}
}
