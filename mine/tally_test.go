package mine

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDwellHistTable: a histogram gives the same bins whether it keeps
// them sorted or, once large, in a table, however adds and reads
// (flush) interleave: the counts and the one value of each bin as a plain
// map of keys counts them. So does a sum (addAll) of histograms that each
// took some of the times, some kept sorted and some in tables.
func TestDwellHistTable(t *testing.T) {
	type want struct {
		n   uint32
		val float64
	}
	for _, c := range []struct {
		name   string
		n      int
		value  func(r *rand.Rand) float64
		flushy bool
	}{
		{"few", 50, func(r *rand.Rand) float64 { return float64(r.IntN(40)) }, false},
		{"ms", 20000, func(r *rand.Rand) float64 { return float64(r.IntN(30000)) }, false},
		{"ms read between", 20000, func(r *rand.Rand) float64 { return float64(r.IntN(30000)) }, true},
		{"µs", 50000, func(r *rand.Rand) float64 { return math.Round(r.ExpFloat64()*5e6) / 1e3 }, false},
		{"signed", 20000, func(r *rand.Rand) float64 { return float64(r.IntN(20000) - 10000) }, true},
		{"one value", 5000, func(r *rand.Rand) float64 { return 1234.5 }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var h dwellHist
			parts := make([]dwellHist, 4)
			ref := map[int32]*want{}
			lo, hi := math.Inf(1), math.Inf(-1)
			check := func(h *dwellHist) {
				t.Helper()
				h.flush()
				if h.tab != nil || h.used != 0 {
					t.Fatalf("flush left a table of %d bins", h.used)
				}
				if len(h.bins) != len(ref) {
					t.Fatalf("%d bins, want %d", len(h.bins), len(ref))
				}
				for i, b := range h.bins {
					if i > 0 && h.bins[i-1].key >= b.key {
						t.Fatalf("bins out of order at %d: %d then %d", i, h.bins[i-1].key, b.key)
					}
					w := ref[b.key]
					if w == nil || w.n != b.n || !(w.val == b.val || math.IsNaN(w.val) && math.IsNaN(b.val)) {
						t.Fatalf("bin %d: n %d val %v, want %+v", b.key, b.n, b.val, w)
					}
				}
				if h.lo != lo || h.hi != hi {
					t.Fatalf("lo, hi %v %v, want %v %v", h.lo, h.hi, lo, hi)
				}
			}
			for i := 0; i < c.n; i++ {
				ms := c.value(r)
				h.add(ms)
				// Part 0 takes most times, so that it alone grows a
				// table; the others stay small on the larger cases.
				parts[min(r.IntN(8), 3)].add(ms)
				lo, hi = min(lo, ms), max(hi, ms)
				k := histKey(ms)
				if w := ref[k]; w == nil {
					ref[k] = &want{1, ms}
				} else {
					w.n++
					if w.val != ms {
						w.val = math.NaN()
					}
				}
				if c.flushy && i%997 == 0 {
					check(&h)
				}
			}
			check(&h)
			var sum dwellHist
			for i := range parts {
				sum.addAll(&parts[i])
			}
			check(&sum)
		})
	}
}

// TestDwellHistCollidingKeys: keys that all share a slot of every table
// size up to theirs (multiples of 4096) are all kept, each with its count.
func TestDwellHistCollidingKeys(t *testing.T) {
	var h dwellHist
	const n = 500
	for round := 1; round <= 3; round++ {
		for i := 0; i < n; i++ {
			h.addBin(int32(i*4096), 1, float64(i))
		}
	}
	h.flush()
	if len(h.bins) != n {
		t.Fatalf("%d bins, want %d", len(h.bins), n)
	}
	for i, b := range h.bins {
		if b.key != int32(i*4096) || b.n != 3 || b.val != float64(i) {
			t.Fatalf("bin %d: %+v, want key %d, n 3, val %d", i, b, i*4096, i)
		}
	}
}

// TestDwellBatches: a model does not depend on how the dwell times were
// batched on their way to the histograms (see tally.settle): a few at a
// time, streamed or held, it is the one a single batch gives.
func TestDwellBatches(t *testing.T) {
	ins := []Input{realInput(t, "jsonl/helpdesk.jsonl.gz")}
	build := func(stream bool) []byte {
		lg, err := Read(ins, ReadOptions{Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		return buildBytesWith(t, lg, DefaultExamples)
	}
	want := build(true) // 21,348 records: one batch
	defer func(n int) { dwellBatch = n }(dwellBatch)
	dwellBatch = 7
	for _, stream := range []bool{true, false} {
		if got := build(stream); !bytes.Equal(got, want) {
			t.Errorf("stream %v: a model from batches of 7 dwell times differs from one batch's", stream)
		}
	}
}
