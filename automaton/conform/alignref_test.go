package conform

import "github.com/fsmine/fsmine/automaton"

// The alignment's search as it was before its nodes were made small (8
// bytes, no pointer, no parent kept: see alignNode) and the nodes it
// reaches in higher buckets were queued only when it gets there (see
// alignBucket): kept as the reference that TestAlignSameSearch holds the
// search to, the same cost, the same nodes expanded, the same operations.
// dense chooses refAlign's node store (arrays up to 1<<22 nodes, else a
// map).

// refScratch holds the search's per-node arrays, indexed by
// position*states + state and valid where stamp equals gen, so that they are
// reused across sessions without clearing. Searches whose node space is too
// large for arrays use the map instead.
type refScratch struct {
	gen     uint32
	stamp   []uint32
	closed  []uint32
	g       []int32
	par     []int64
	via     []int32
	sparse  map[int64]*refNode
	buckets [][]refEntry
	syms    []int32
	unknown []int32
	// The search at hand: nodes are move position * nq + state, in arrays
	// (dense) or a map.
	dense bool
	nq    int64
	n     int
	dist  []int32
}

type refNode struct {
	g      int32
	par    int64
	via    int32
	closed bool
}

type refEntry struct {
	node int64
	g    int32
}

// prepare readies the scratch for aligning moves with c's model: the
// moves' symbols, how many moves from each position on have no transition
// anywhere in the model (those can only be log moves), and an empty node
// store and queue.
func (a *refScratch) prepare(c *Checker, dense bool, moves []automaton.Move) {
	n := len(moves)
	a.n, a.nq, a.dist = n, int64(len(c.ids)), c.dist
	a.syms = a.syms[:0]
	a.unknown = append(a.unknown[:0], make([]int32, n+1)...)
	for _, mv := range moves {
		s, ok := c.syms[mv]
		if !ok {
			s = -1
		}
		a.syms = append(a.syms, s)
	}
	for i := n - 1; i >= 0; i-- {
		a.unknown[i] = a.unknown[i+1]
		if a.syms[i] < 0 {
			a.unknown[i]++
		}
	}
	size := int64(n+1) * a.nq
	a.dense = dense && size <= 1<<22
	if a.dense {
		if int64(len(a.stamp)) < size {
			a.stamp = make([]uint32, size)
			a.closed = make([]uint32, size)
			a.g = make([]int32, size)
			a.par = make([]int64, size)
			a.via = make([]int32, size)
			a.gen = 0
		}
		a.gen++
		if a.gen == 0 {
			clear(a.stamp)
			clear(a.closed)
			a.gen = 1
		}
	} else {
		a.sparse = map[int64]*refNode{}
	}
	for i := range a.buckets {
		a.buckets[i] = a.buckets[i][:0]
	}
}

// cost returns node k's cost so far, if it has been reached.
func (a *refScratch) cost(k int64) (int32, bool) {
	if a.dense {
		if a.stamp[k] == a.gen {
			return a.g[k], true
		}
		return 0, false
	}
	if nd, ok := a.sparse[k]; ok {
		return nd.g, true
	}
	return 0, false
}

func (a *refScratch) isClosed(k int64) bool {
	if a.dense {
		return a.closed[k] == a.gen
	}
	nd, ok := a.sparse[k]
	return ok && nd.closed
}

func (a *refScratch) close(k int64) {
	if a.dense {
		a.closed[k] = a.gen
		return
	}
	a.sparse[k].closed = true
}

// parent returns the node k was reached from and the transition taken (-1
// for a log move).
func (a *refScratch) parent(k int64) (int64, int32) {
	if a.dense {
		return a.par[k], a.via[k]
	}
	nd := a.sparse[k]
	return nd.par, nd.via
}

// push reaches node k at cost g from par through via, unless it was reached
// as cheaply before or the end is out of reach from its state, and queues
// it by cost plus the heuristic.
func (a *refScratch) push(k int64, g int32, par int64, via int32) {
	i, q := int(k/a.nq), int32(k%a.nq)
	if a.dist[q] < 0 {
		return // automaton.EndID is out of reach from q
	}
	if old, ok := a.cost(k); ok && old <= g {
		return
	}
	if a.dense {
		a.stamp[k], a.g[k], a.par[k], a.via[k] = a.gen, g, par, via
	} else {
		a.sparse[k] = &refNode{g: g, par: par, via: via}
	}
	f := int(g + alignHeuristic(int32(a.n-i), a.unknown[i], a.dist[q]))
	for len(a.buckets) <= f {
		a.buckets = append(a.buckets, nil)
	}
	a.buckets[f] = append(a.buckets[f], refEntry{k, g})
}

func refAlign(c *Checker, dense bool, moves []automaton.Move, withOps bool) Alignment {
	n := len(moves)
	al := Alignment{MaxCost: n + c.ShortestPath()}
	if c.start < 0 || c.end < 0 || c.dist[c.start] < 0 {
		// No path of the model ends: nothing to align with.
		al.Cost, al.MaxCost = n, n
		al.Fitness = fitness(al.Cost, al.MaxCost)
		return al
	}
	a := &refScratch{}
	a.prepare(c, dense, moves)
	nq := a.nq
	goal := int64(n)*nq + int64(c.end)
	a.push(int64(c.start), 0, -1, -1)
	found := false
	for f := 0; f < len(a.buckets) && !found && al.Explored <= c.opt.MaxAlignStates; f++ {
		for len(a.buckets[f]) > 0 {
			b := a.buckets[f]
			e := b[len(b)-1]
			a.buckets[f] = b[:len(b)-1]
			if g, _ := a.cost(e.node); g != e.g || a.isClosed(e.node) {
				continue // superseded by a cheaper entry
			}
			a.close(e.node)
			if e.node == goal {
				al.Cost = int(e.g)
				found = true
				break
			}
			al.Explored++
			if al.Explored > c.opt.MaxAlignStates {
				break
			}
			i, q := int(e.node/nq), int32(e.node%nq)
			// Model moves first, then the log move, then the synchronous
			// move: the bucket is a stack, so the synchronous move, when
			// there is one, is expanded next.
			for _, ti := range c.out[q] {
				a.push(int64(i)*nq+int64(c.trans[ti].to), e.g+1, e.node, ti)
			}
			if i < n {
				a.push(e.node+nq, e.g+1, e.node, -1)
				if s := a.syms[i]; s >= 0 {
					if ti, ok := c.next[uint64(q)<<32|uint64(s)]; ok {
						a.push(int64(i+1)*nq+int64(c.trans[ti].to), e.g, e.node, ti)
					}
				}
			}
		}
	}
	if !found {
		al.Bounded = true
		return c.greedy(moves, al, withOps)
	}
	al.Fitness = fitness(al.Cost, al.MaxCost)
	if withOps {
		al.Ops = refAlignOps(c, a, moves, goal, al.Ops)
	}
	return al
}

// alignOps walks the parents of the search back from goal and returns the
// alignment's operations in order, appended to ops.
func refAlignOps(c *Checker, a *refScratch, moves []automaton.Move, goal int64, ops []AlignOp) []AlignOp {
	nq := a.nq
	start := len(ops)
	for k := goal; ; {
		par, via := a.parent(k)
		if par < 0 {
			break
		}
		i, q := int(k/nq), int32(k%nq)
		pi, pq := int(par/nq), int32(par%nq)
		op := AlignOp{From: c.ids[pq], To: c.ids[q]}
		switch {
		case pi == i:
			t := &c.m.Transitions[via]
			op.Op, op.Move, op.Event, op.Label = OpModel, i, t.Event, c.m.States[q].Label
		case via < 0:
			op.Op, op.Move, op.Event, op.Label = OpLog, pi, moves[pi].Event, moves[pi].Label
		default:
			op.Op, op.Move, op.Event, op.Label = OpSync, pi, moves[pi].Event, moves[pi].Label
		}
		ops = append(ops, op)
		k = par
	}
	for i, j := start, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}
