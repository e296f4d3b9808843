package mine

import (
	"container/heap"
	"encoding/binary"
	"math"
	"slices"
)

// bayesPicker picks, for learnBayes, the red state a blue one folds into:
// the first red state of its label, in the order they turned red, of the
// greatest bayesGain that is not negative, or -1 if none.
//
// Trying every red state of the label is quadratic where events carry ids:
// each distinct event leaves a state the merge keeps, so the red states of
// a label grow with the log, and so do their moves, which bayesGain sums.
// The picker tries few of them. A red state that shares no move with the
// blue one takes its moves whole, and the fold's gain (exactly, not in
// floating point) is then a function of the red state's move count alone,
// which falls as the count grows; so it looks at the red states that share
// a move (an index by label and move) and at the others by fewest moves (a
// heap), until the rest cannot reach the best. It compares estimates
// within a bound of bayesGain (bayesGainEstimate), which take time in the
// blue state's subtree only, and computes bayesGain itself for those the
// bounds cannot tell apart from the best or from zero, so the pick is the
// one trying every red state with bayesGain makes.
type bayesPicker struct {
	p      *pta
	mp, sp float64
	labels map[uint32]*labelReds
	// withMove lists the red states that have a move, by label and move.
	withMove map[labelMove][]int32
	// Per tree node: its place in its label's red states (-1 while not
	// red or not seen yet), how many of its edges withMove holds, the
	// move count it has in the heap, and the last pick that met it.
	rank    []int32
	indexed []int32
	heaped  []int
	met     []int32
	picks   int32
	// Reused from pick to pick.
	cands, near                  []bayesCand
	floor                        float64 // what the best gain surely reaches
	popped, poppedBuckets, aside []keyed
	counts                       []byte
}

type labelMove struct {
	label uint32
	mv    move
}

// labelReds is what the picker knows of one label's red states.
type labelReds struct {
	seen int // how many of redBlue's list it has taken in
	// By count of moves, with stale entries: those of many moves alone,
	// the others in buckets of the same counts.
	byOut, bucketsByOut keyHeap
	buckets             []*countsBucket
	bucketOf            map[string]int32 // by counts
	maxOut              int              // the greatest count of moves of any
}

// bayesCand is a red state and its bayesGainEstimate.
type bayesCand struct {
	r         int32
	gain, err float64
}

func newBayesPicker(p *pta, mp, sp float64) *bayesPicker {
	n := len(p.nodes)
	bp := &bayesPicker{
		p: p, mp: mp, sp: sp,
		labels:   map[uint32]*labelReds{},
		withMove: map[labelMove][]int32{},
		rank:     make([]int32, n),
		indexed:  make([]int32, n),
		heaped:   make([]int, n),
		met:      make([]int32, n),
	}
	for i := range bp.rank {
		bp.rank[i], bp.heaped[i] = -1, -1
	}
	p.grown = make([]int32, 0, 16)
	return bp
}

// sync takes in the red states that turned red, and the moves and counts
// red states gained, since the last pick.
func (bp *bayesPicker) sync(lr *labelReds, reds []int32) {
	for _, r := range reds[lr.seen:] {
		bp.rank[r] = int32(lr.seen)
		lr.seen++
		bp.update(r)
	}
	for _, r := range bp.p.grown {
		if bp.rank[r] >= 0 {
			bp.update(r)
		}
	}
	bp.p.grown = bp.p.grown[:0]
}

// update indexes red state r's new moves and puts its move count in the
// heap if it changed (the entry of its old count goes stale).
func (bp *bayesPicker) update(r int32) {
	n := &bp.p.nodes[r]
	for _, e := range n.edges[bp.indexed[r]:] {
		k := labelMove{n.label, e.mv}
		bp.withMove[k] = append(bp.withMove[k], r)
	}
	bp.indexed[r] = int32(len(n.edges))
	lr := bp.labels[n.label]
	if bp.heaped[r] == n.out {
		return
	}
	bp.heaped[r] = n.out
	lr.maxOut = max(lr.maxOut, n.out)
	if len(n.edges) > bucketedMoves {
		heap.Push(&lr.byOut, keyed{n.out, r})
		return
	}
	// The counts stay as they are until the count of moves changes.
	counts := bp.counts[:0]
	for _, e := range n.edges {
		counts = binary.AppendUvarint(counts, uint64(e.count))
	}
	bp.counts = counts
	i, ok := lr.bucketOf[string(counts)]
	if !ok {
		i = int32(len(lr.buckets))
		lr.bucketOf[string(counts)] = i
		lr.buckets = append(lr.buckets, &countsBucket{counts: string(counts), out: n.out})
		heap.Push(&lr.bucketsByOut, keyed{n.out, i})
	}
	heap.Push(&lr.buckets[i].reds, keyed{int(bp.rank[r]), r})
}

// bucketedMoves is the most moves a red state may have to be kept in a
// bucket of the same counts (a key of that many counts) rather than alone.
const bucketedMoves = 64

// countsBucket holds, by rank, the red states whose moves have the same
// counts in the same order, with stale entries (states that grew since).
type countsBucket struct {
	counts string // the counts, as uvarints
	out    int    // their sum
	reds   keyHeap
}

// pick is the red state among reds, b's label's in the order they turned
// red, that b folds into, or -1 (see bayesPicker).
func (bp *bayesPicker) pick(b int32, reds []int32) int32 {
	p, nb := bp.p, &bp.p.nodes[b]
	lr := bp.labels[nb.label]
	if lr == nil {
		lr = &labelReds{bucketOf: map[string]int32{}}
		bp.labels[nb.label] = lr
	}
	bp.sync(lr, reds)
	if len(reds) == 0 {
		return -1
	}
	if len(nb.edges) == 0 {
		// Nothing folds along: bayesGain is statePrior exactly (the one
		// state saved) whatever the red state, and that is not negative.
		return reds[0]
	}
	bp.picks++
	bp.cands, bp.floor = bp.cands[:0], 0
	for _, be := range nb.edges {
		for _, r := range bp.withMove[labelMove{nb.label, be.mv}] {
			if bp.met[r] != bp.picks {
				bp.met[r] = bp.picks
				bp.try(r, b)
			}
		}
	}
	bp.walkSharesNone(lr, b)
	cands, floor := bp.cands, bp.floor

	// Those whose estimate may reach the floor, in the order they turned
	// red, are the only ones that may be the first of the greatest gain.
	near := bp.near[:0]
	for _, c := range cands {
		if c.gain+c.err >= floor {
			near = append(near, c)
		}
	}
	bp.near = near
	if len(near) == 1 && near[0].gain-near[0].err >= 0 {
		return near[0].r
	}
	slices.SortFunc(near, func(x, y bayesCand) int { return int(bp.rank[x.r] - bp.rank[y.r]) })
	best, bestGain := int32(-1), 0.0
	for _, c := range near {
		if g := bayesGain(p, c.r, b, bp.mp, bp.sp); best < 0 && g >= 0 || best >= 0 && g > bestGain {
			best, bestGain = c.r, g
		}
	}
	return best
}

// try adds red state r's estimate for b to the candidates.
func (bp *bayesPicker) try(r, b int32) {
	g, e := bayesGainEstimate(bp.p, r, b, bp.mp, bp.sp)
	bp.cands = append(bp.cands, bayesCand{r, g, e})
	bp.floor = max(bp.floor, g-e)
}

// walkSharesNone tries the red states of lr that share no move with b
// (those that do are tried and met), by fewest moves, until those left
// cannot reach the floor: their gain is sharesNone of their move count
// within errSharesNone, and falls as the count grows. Of red states whose
// moves have the same counts in the same order it tries the first to turn
// red only: bayesGain does the same sums for each, so they tie.
func (bp *bayesPicker) walkSharesNone(lr *labelReds, b int32) {
	p, nb := bp.p, &bp.p.nodes[b]
	errNone := bp.errSharesNone(nb, lr.maxOut)
	popped, poppedBuckets := bp.popped[:0], bp.poppedBuckets[:0]
	for {
		// Clear stale entries (states whose count of moves changed since).
		for lr.byOut.Len() > 0 && lr.byOut[0].key != p.nodes[lr.byOut[0].r].out {
			heap.Pop(&lr.byOut)
		}
		for lr.bucketsByOut.Len() > 0 {
			bucket := lr.buckets[lr.bucketsByOut[0].r]
			for bucket.reds.Len() > 0 && p.nodes[bucket.reds[0].r].out != bucket.out {
				heap.Pop(&bucket.reds)
			}
			if bucket.reds.Len() > 0 {
				break
			}
			delete(lr.bucketOf, bucket.counts)
			lr.buckets[lr.bucketsByOut[0].r] = nil
			heap.Pop(&lr.bucketsByOut)
		}
		n, alone := -1, false
		switch {
		case lr.byOut.Len() > 0 && (lr.bucketsByOut.Len() == 0 || lr.byOut[0].key <= lr.bucketsByOut[0].key):
			n, alone = lr.byOut[0].key, true
		case lr.bucketsByOut.Len() > 0:
			n = lr.bucketsByOut[0].key
		}
		if n < 0 || bp.sharesNone(nb.out, n)+2*errNone < bp.floor {
			break
		}
		if alone {
			e := heap.Pop(&lr.byOut).(keyed)
			popped = append(popped, e)
			if bp.met[e.r] != bp.picks {
				bp.met[e.r] = bp.picks
				bp.try(e.r, b)
			}
			continue
		}
		top := heap.Pop(&lr.bucketsByOut).(keyed)
		poppedBuckets = append(poppedBuckets, top)
		bucket, aside := &lr.buckets[top.r].reds, bp.aside[:0]
		for bucket.Len() > 0 {
			e := heap.Pop(bucket).(keyed)
			if p.nodes[e.r].out != n {
				continue // stale
			}
			aside = append(aside, e)
			if bp.met[e.r] != bp.picks {
				bp.met[e.r] = bp.picks
				bp.try(e.r, b)
				break
			}
		}
		for _, e := range aside {
			heap.Push(bucket, e)
		}
		bp.aside = aside
	}
	for _, e := range popped {
		heap.Push(&lr.byOut, e)
	}
	for _, e := range poppedBuckets {
		heap.Push(&lr.bucketsByOut, e)
	}
	bp.popped, bp.poppedBuckets = popped, poppedBuckets
}

// sharesNone is the gain (in exact arithmetic) of folding a blue state
// whose moves' counts add up to a into a red state with none of its moves
// and counts that add up to n: the one state saved, less the likelihood
// lost by the red state's moves now sharing its counts with a more. It
// falls as n grows, where a > 0.
func (bp *bayesPicker) sharesNone(a, n int) float64 {
	return xlogx(a) - (xlogx(n+a) - xlogx(n)) + bp.sp
}

// errSharesNone bounds bayesGainEstimate's err for blue state nb and any
// red state that shares none of its moves and whose counts add up to at
// most maxOut (so it has at most maxOut moves).
func (bp *bayesPicker) errSharesNone(nb *ptaNode, maxOut int) float64 {
	size := scale(nb.out) + 2*(scale(maxOut)+scale(maxOut+nb.out)) + bp.sp + 1
	for _, e := range nb.edges {
		size += scale(e.count)
	}
	terms := len(nb.edges) + 1 + 2*len(nb.edges) + 2*maxOut + len(nb.edges) + 4
	return gainErr(terms, size)
}

// keyed is a red state and a key: its count of moves, or its rank.
type keyed struct {
	key int
	r   int32
}

// keyHeap orders keyed red states by least key.
type keyHeap []keyed

func (h keyHeap) Len() int           { return len(h) }
func (h keyHeap) Less(i, j int) bool { return h[i].key < h[j].key }
func (h keyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)        { *h = append(*h, x.(keyed)) }
func (h *keyHeap) Pop() any {
	x := (*h)[len(*h)-1]
	*h = (*h)[:len(*h)-1]
	return x
}

// bayesGainEstimate is bayesGain(p, r, b, movePrior, statePrior) within
// err, in time that grows with b's subtree and not with the moves of the
// states it folds into: a state's log-likelihood is the sum of c ln c over
// its moves less n ln n, so a fold changes it by the terms of the moves it
// adds to. bayesGain sums every move instead, in another order, so the
// two differ by rounding; err bounds that difference with a wide margin:
// each of the K additions and products either sum does errs by at most a
// few units of the last place of a term or partial sum, none of which
// exceeds T, the sum of n (ln n + 1) over the likelihoods and of the
// other terms.
func bayesGainEstimate(p *pta, r, b int32, movePrior, statePrior float64) (gain, err float64) {
	type added struct {
		at    int32
		mv    move
		count int
	}
	var (
		into   []int32           // nodes that gain counts, in first-visit order
		inInto = map[int32]int{} // their index in into
		adds   []added           // the counts they gain, by move
		addAt  = map[dkey]int{}  // index in adds
		size   float64           // T above
		terms  int               // K above
	)
	trans, states := 0, 0
	p.foldPairs(r, b, func(x, y int32) {
		states++
		if _, ok := inInto[x]; !ok {
			inInto[x] = len(into)
			into = append(into, x)
		}
		es := p.nodes[y].edges
		gain -= logLikelihood(es)
		size += scale(p.nodes[y].out)
		terms += len(es) + 1
		trans -= len(es)
		for _, be := range es {
			k := dkey{x, be.mv}
			if i, ok := addAt[k]; ok {
				adds[i].count += be.count
			} else {
				addAt[k] = len(adds)
				adds = append(adds, added{x, be.mv, be.count})
			}
		}
	})
	gained := make([]int, len(into)) // counts each node of into gains
	moves := make([]int, len(into))  // and the moves they are of
	for _, a := range adds {
		c := 0
		if e := p.child(a.at, a.mv); e != nil {
			c = e.count
		} else {
			trans++
		}
		gain += xlogx(c+a.count) - xlogx(c)
		size += scale(c + a.count)
		terms += 2
		gained[inInto[a.at]] += a.count
		moves[inInto[a.at]]++
	}
	for i, n := range into {
		old, now := p.nodes[n].out, p.nodes[n].out+gained[i]
		gain -= xlogx(now) - xlogx(old)
		// bayesGain sums the moves before and after the fold.
		size += 2 * (scale(old) + scale(now))
		terms += 2*len(p.nodes[n].edges) + moves[i] + 4
	}
	gain = gain - movePrior*float64(trans) + statePrior*float64(states)
	size += math.Abs(movePrior*float64(trans)) + math.Abs(statePrior*float64(states)) + 1
	return gain, gainErr(terms, size)
}

// gainErr bounds, with a margin of 8, the difference between two sums of
// terms additions and products whose terms and partial sums are at most
// size: each errs by at most a unit roundoff of size, math.Log by one unit
// in the last place.
func gainErr(terms int, size float64) float64 {
	const unit = 0x1p-53 // the unit roundoff of a float64
	return 16 * unit * float64(terms+16) * size
}

// scale bounds |Σ c ln(c/n)| over counts c that add up to n, and n ln n.
func scale(n int) float64 {
	x := float64(n)
	return x * (math.Log(max(x, 1)) + 1)
}

// xlogx is n ln n, 0 at 0.
func xlogx(n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(n) * math.Log(float64(n))
}
