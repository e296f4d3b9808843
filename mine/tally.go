package mine

import (
	"cmp"
	"math"
	"math/bits"

	"slices"

	"github.com/fsmine/fsmine/automaton"
)

// tally is all Build needs of a log's sessions: the tree of their distinct
// move sequences (each node a distinct prefix), with how many sessions ended
// at each leaf and a histogram of the dwell times of the visits each node
// stands for. It grows with the number of distinct paths, not with the
// number of sessions or records, so a streaming read can fold each session
// into it and forget the session.
type tally struct {
	noEvent, endLabel uint32
	nodes             []tallyNode // nodes[0] is the root; a parent comes before its children
	child             map[dkey]int32
	ends              []int32 // the nodes entered by a move into the end
	sessions          int
	events            int
	keep              int // example sessions kept per end node (see examples)
	// recent caches child lookups (see step): most sessions take the same
	// few moves, which are then found without hashing into child.
	recent *[recentSize]recentStep
	// pend holds dwell times not yet in their nodes' histograms (see
	// settle); sorted is settle's scratch.
	pend, sorted []dwellAt
}

// dwellAt is a dwell time waiting to be added to a node's histogram.
type dwellAt struct {
	node, key int32 // key: histKey(ms)
	ms        float64
}

// dwellBatch is how many dwell times a tally holds before it adds them to
// their histograms (2 MB of them): enough that the times of one busy node
// come together and find its histogram in cache. A variable, so that tests
// can batch a few at a time.
var dwellBatch = 1 << 17

// recentStep is an entry of tally.recent: the child to of node from by
// move mv; to is 0 (the root, no one's child) while the entry is empty.
type recentStep struct {
	from, to int32
	mv       move
}

const (
	recentBits = 12
	recentSize = 1 << recentBits
)

type tallyNode struct {
	parent int32
	mv     move
	ended  int // sessions that end here (a node entered by a move into the end)
	dwell  dwellHist
	ex     []example // at an end node: the first keep sessions ending here, by exampleCmp
}

// newTally makes an empty tally that keeps up to keep example sessions per
// distinct path.
func newTally(lg *Log, keep int) *tally {
	return &tally{
		noEvent: lg.intern(""), endLabel: lg.intern(automaton.EndID),
		nodes: []tallyNode{{parent: -1}}, child: map[dkey]int32{}, keep: keep,
	}
}

// tallySessions tallies a log read whole, keeping up to keep example
// sessions per distinct path.
func (lg *Log) tallySessions(keep int) *tally {
	t := newTally(lg, keep)
	for i := range lg.Sessions {
		t.add(lg.Sessions[i].ID, lg.Sessions[i].Visits)
	}
	t.done()
	return t
}

// add counts one session, given its id and visits. The id must stay valid:
// the tally may keep it as an example.
func (t *tally) add(id string, vs []Visit) {
	cur := int32(0)
	ev := t.noEvent
	for i := range vs {
		cur = t.step(cur, mkMove(ev, vs[i].Label))
		if vs[i].HasDwell {
			if t.pend == nil {
				// Its full size at once: append's growth by a quarter
				// allocated five times that on the way.
				t.pend = make([]dwellAt, 0, dwellBatch)
			}
			ms := vs[i].DwellMS
			t.pend = append(t.pend, dwellAt{cur, histKey(ms), ms})
		}
		ev = vs[i].Event
	}
	end := t.step(cur, mkMove(ev, t.endLabel))
	if t.nodes[end].ended == 0 {
		t.ends = append(t.ends, end)
	}
	t.nodes[end].ended++
	if t.keep > 0 {
		en := &t.nodes[end]
		en.ex = offerExample(en.ex, example{exampleHash(id), id}, t.keep)
	}
	t.sessions++
	t.events += len(vs)
	if len(t.pend) >= dwellBatch {
		t.settle()
	}
}

// done settles the pending dwell times and lets the batch's buffers go:
// the tally takes no more sessions.
func (t *tally) done() {
	t.settle()
	t.pend, t.sorted = nil, nil
}

// settle adds the pending dwell times to their nodes' histograms; readers
// of the histograms call it first. Adding one time to the histogram of a
// busy node (thousands of bins) as each session is tallied missed the cache
// more often than not; sorted by node and key, a batch adds up one
// histogram at a time, walking its table forward (see tabSlot). A
// histogram does not depend on the order of its times (see dwellHist), so
// neither does the tally.
func (t *tally) settle() {
	if len(t.pend) == 0 {
		return
	}
	// LSD radix sort by node and key, 11 bits a pass: the keys (from the
	// least in the batch) first, then the nodes.
	const digit = 11
	src := t.pend
	dst := slices.Grow(t.sorted[:0], len(src))[:len(src)]
	keyLo, keyHi := src[0].key, src[0].key
	for _, d := range src {
		keyLo, keyHi = min(keyLo, d.key), max(keyHi, d.key)
	}
	var count [1 << digit]int
	pass := func(digitOf func(d *dwellAt) uint32) {
		clear(count[:])
		for i := range src {
			count[digitOf(&src[i])]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for i := range src {
			k := digitOf(&src[i])
			dst[count[k]] = src[i]
			count[k]++
		}
		src, dst = dst, src
	}
	for shift := 0; shift < bits.Len32(uint32(keyHi-keyLo)); shift += digit {
		pass(func(d *dwellAt) uint32 { return uint32(d.key-keyLo) >> shift & (1<<digit - 1) })
	}
	for shift := 0; shift < bits.Len(uint(len(t.nodes))); shift += digit {
		pass(func(d *dwellAt) uint32 { return uint32(d.node) >> shift & (1<<digit - 1) })
	}
	for _, d := range src {
		h := &t.nodes[d.node].dwell
		h.span(d.ms, d.ms)
		h.addBin(d.key, 1, d.ms)
	}
	t.pend, t.sorted = src[:0], dst[:0]
}

func (t *tally) step(from int32, mv move) int32 {
	if t.recent == nil {
		t.recent = new([recentSize]recentStep)
	}
	r := &t.recent[(uint64(mv)*0x9e3779b97f4a7c15^uint64(from)*0xff51afd7ed558ccd)>>(64-recentBits)]
	if r.to != 0 && r.from == from && r.mv == mv {
		return r.to
	}
	k := dkey{from, mv}
	n, ok := t.child[k]
	if !ok {
		n = int32(len(t.nodes))
		t.nodes = append(t.nodes, tallyNode{parent: from, mv: mv})
		t.child[k] = n
	}
	*r = recentStep{from: from, to: n, mv: mv}
	return n
}

// variants returns the distinct move sequences and their counts.
func (t *tally) variants() []variant {
	out := make([]variant, 0, len(t.ends))
	for _, e := range t.ends {
		n := 0
		for x := e; x > 0; x = t.nodes[x].parent {
			n++
		}
		mv := make([]move, n)
		for x := e; x > 0; x = t.nodes[x].parent {
			n--
			mv[n] = t.nodes[x].mv
		}
		out = append(out, variant{moves: mv, count: t.nodes[e].ended})
	}
	return out
}

// dwellHist counts dwell times in bins of the time in microseconds: one bin
// per microsecond below 2^11 µs, then 2^10 bins per doubling, so a bin is at
// most 1/1024 of its values wide and a histogram has at most 1024 bins for
// each doubling of time between its least and greatest. A bin that has
// only ever held one value keeps it, so quantiles are exact unless two
// different times share a bin; then the bin stands for its roundest value
// (see histValue), within 1/1024 of every time in it. The least and greatest
// times are kept exactly.
type dwellHist struct {
	lo, hi float64
	bins   []histBin // sorted by key, while tab is nil
	// tab holds the bins of a large histogram instead of bins: an
	// open-addressing table by key (see tabSlot), so that a time finds its
	// bin with one probe rather than a binary search through thousands. A
	// slot is a bin, empty while its n is 0, so that a time finds its bin's
	// count and one value in one cache line (with the values in an array of
	// their own, times of whole milliseconds, whose bins keep one value,
	// missed the cache twice). flush sorts the table back into bins for
	// readers.
	tab  []histBin // len a power of two
	used int       // occupied slots of tab
}

// tabFrom is the number of bins from which a histogram keeps them in a
// table: below it a binary search stays within a few cache lines.
const tabFrom = 64

// histBin is a bin of a sorted histogram. Counts take 32 bits: a
// histogram counts visits of one state, and a log holds fewer than 2^32
// records (see errTooManyRecords).
type histBin struct {
	key int32
	n   uint32
	val float64 // the one value the bin has held, or NaN
}

const histBits = 10

func (h *dwellHist) add(ms float64) {
	h.span(ms, ms)
	h.addBin(histKey(ms), 1, ms)
}

func (h *dwellHist) empty() bool { return h.used == 0 && len(h.bins) == 0 }

// span widens the least and greatest times to take in lo and hi.
func (h *dwellHist) span(lo, hi float64) {
	if h.empty() || lo < h.lo {
		h.lo = lo
	}
	if h.empty() || hi > h.hi {
		h.hi = hi
	}
}

// addBin adds n times of key k, all of them val (NaN: not all one value).
func (h *dwellHist) addBin(k int32, n uint32, val float64) {
	if h.tab != nil {
		h.addToTab(k, n, val)
		return
	}
	if i, ok := addToBin(h.bins, k, n, val); ok {
		return
	} else if len(h.bins) < tabFrom {
		h.bins = slices.Insert(h.bins, i, histBin{k, n, val})
		return
	}
	// A new bin for a large histogram: move its bins into a table.
	h.rehash(tabSize(len(h.bins) + 1))
	h.addToTab(k, n, val)
}

// addAll adds the times of g to h, as if each had been added to h.
func (h *dwellHist) addAll(g *dwellHist) {
	if g.empty() {
		return
	}
	h.span(g.lo, g.hi)
	for _, b := range g.bins {
		h.addBin(b.key, b.n, b.val)
	}
	for _, b := range g.tab {
		if b.n != 0 {
			h.addBin(b.key, b.n, b.val)
		}
	}
}

// tabSize is the table size for n bins: a power of two at most half full
// (it grows when three quarters full).
func tabSize(n int) int {
	size := 2 * tabFrom
	for size < 2*n {
		size *= 2
	}
	return size
}

// rehash moves the bins (of bins, or of the table) into a table of size
// slots.
func (h *dwellHist) rehash(size int) {
	old := h.tab
	h.tab = make([]histBin, size)
	for _, b := range old {
		if b.n != 0 {
			h.tab[h.tabSlot(b.key)] = b
		}
	}
	for _, b := range h.bins {
		h.tab[h.tabSlot(b.key)] = b
	}
	h.used += len(h.bins)
	h.bins = h.bins[:0]
}

// tabSlot returns the slot of the bin of key k in h.tab: the one that holds
// it, or the empty one where it goes, by linear probing from the key's low
// bits with its high bits folded in (XOR). Keys of one stretch as long as
// the table take slots in the same order, up to the XOR with the stretch's
// number, which keeps each aligned group of slots together: a tally adding
// a batch of times sorted by key (see settle) walks each table forward
// through its cache lines, and a histogram's keys spread over a range no
// wider than the table share no slot. The fold spreads keys that differ by
// multiples of the table's size, which the low bits alone would pile onto
// one slot. Like any fixed hash (the Fibonacci hash before it too), it can
// be made to probe long runs by durations chosen for it: 1,000 consecutive
// keys and 500 of their multiples of 2,048 take 34 times as long to add as
// ordinary times.
func (h *dwellHist) tabSlot(k int32) int {
	mask := uint32(len(h.tab) - 1)
	u := uint32(k)
	i := (u ^ u>>bits.TrailingZeros32(mask+1)) & mask
	for h.tab[i].n != 0 && h.tab[i].key != k {
		i = (i + 1) & mask
	}
	return int(i)
}

// addToTab adds n times of key k, all val, to the table of bins, growing
// it to stay at most three quarters full.
func (h *dwellHist) addToTab(k int32, n uint32, val float64) {
	b := &h.tab[h.tabSlot(k)]
	if b.n != 0 {
		b.n += n
		if b.val != val {
			b.val = math.NaN() // NaN != NaN: a bin of several values stays so
		}
		return
	}
	*b = histBin{k, n, val}
	if h.used++; 4*h.used > 3*len(h.tab) {
		h.rehash(2 * len(h.tab))
	}
}

// addToBin adds n times val to the bin of key k in bins, sorted by key, if
// there is one; else it returns where that bin would go.
func addToBin(bins []histBin, k int32, n uint32, val float64) (int, bool) {
	i, j := 0, len(bins) // the first bin at or past k is in [i, j]
	for i < j {
		m := int(uint(i+j) >> 1)
		if bins[m].key < k {
			i = m + 1
		} else {
			j = m
		}
	}
	if i < len(bins) && bins[i].key == k {
		bins[i].n += n
		if bins[i].val != val {
			bins[i].val = math.NaN()
		}
		return i, true
	}
	return i, false
}

// flush sorts the bins of a table back into bins; readers of bins call it
// first. A histogram added to after it starts a table again.
func (h *dwellHist) flush() {
	if h.tab == nil {
		return
	}
	bins := slices.Grow(h.bins[:0], h.used)
	for _, b := range h.tab {
		if b.n != 0 {
			bins = append(bins, b)
		}
	}
	slices.SortFunc(bins, func(a, b histBin) int { return cmp.Compare(a.key, b.key) })
	h.bins, h.tab, h.used = bins, nil, 0
}

// histKey is the bin of a time in milliseconds; keys order as times do.
func histKey(ms float64) int32 {
	us := math.Round(ms * 1e3)
	neg := us < 0
	us = min(math.Abs(us), math.MaxFloat64) // a finite top bin for +Inf
	var k int64
	if us < 1<<(histBits+1) {
		k = int64(us)
	} else {
		// us = frac·2^exp with frac in [0.5, 1): its doubling starts at
		// 2^(exp-1), and its bin in the doubling is the top histBits bits
		// after the leading one.
		frac, exp := math.Frexp(us)
		shift := int64(exp - 1 - histBits)
		k = shift<<histBits + int64(frac*(1<<(histBits+1)))
	}
	if neg {
		return int32(-k - 1)
	}
	return int32(k)
}

// histValue is the value a bin stands for, in milliseconds: the roundest
// number of microseconds in the bin (the one with the most trailing zeros),
// so that a bin holding one whole millisecond reports exactly that; past
// 2^62 µs, the bin's middle.
func histValue(key int32) float64 {
	k := int64(key)
	neg := k < 0
	if neg {
		k = -k - 1
	}
	var v float64
	switch shift := k>>histBits - 1; {
	case k < 1<<(histBits+1):
		v = float64(k)
	case shift > 62-histBits-1:
		m := float64(k - shift<<histBits)
		v = math.Ldexp(m+0.5, int(shift))
	default:
		m := k - shift<<histBits
		lo, hi := m<<shift, (m+1)<<shift
		v = float64(lo)
		for p := int64(1e18); p > 1; p /= 10 {
			if c := (lo + p - 1) / p * p; c < hi {
				v = float64(c)
				break
			}
		}
	}
	if neg {
		v = -v
	}
	return v / 1e3
}

// summary returns the median, 95th percentile and greatest time, or nil if
// the histogram is empty. The quantiles are nearest-rank, clamped to the
// exact least and greatest.
func (h *dwellHist) summary() *automaton.Dwell {
	h.flush()
	if h.empty() {
		return nil
	}
	var n uint64
	for _, b := range h.bins {
		n += uint64(b.n)
	}
	quantile := func(q float64) float64 {
		rank := uint64(max(math.Ceil(q*float64(n)), 1))
		var seen uint64
		for _, b := range h.bins {
			seen += uint64(b.n)
			if seen >= rank {
				v := b.val
				if math.IsNaN(v) {
					v = histValue(b.key)
				}
				return min(max(v, h.lo), h.hi)
			}
		}
		return h.hi
	}
	return &automaton.Dwell{P50: Round3(quantile(0.5)), P95: Round3(quantile(0.95)), Max: Round3(h.hi)}
}

// DwellStats collects dwell times and sums them up as Build does for a
// model's states, so that figures read from logs match the model's.
type DwellStats struct{ h dwellHist }

// Add adds a dwell time in milliseconds.
func (d *DwellStats) Add(ms float64) { d.h.add(ms) }

// Summary returns the median, 95th percentile and greatest time, or nil if
// none was added.
func (d *DwellStats) Summary() *automaton.Dwell { return d.h.summary() }
