package mine

import (
	"container/heap"
	"math"
	"sort"
)

// A move is one symbol of a session: the event that led out of the previous
// state (high 32 bits) and the label of the next state (low 32 bits), both
// name ids of the Log.
type move uint64

func mkMove(event, label uint32) move { return move(uint64(event)<<32 | uint64(label)) }
func (m move) event() uint32          { return uint32(m >> 32) }
func (m move) label() uint32          { return uint32(m) }

// dfa is a learned deterministic automaton over moves. State 0 is the start.
type dfa struct {
	label []uint32 // per state
	next  map[dkey]int32
}

type dkey struct {
	from int32
	mv   move
}

// variant is a distinct move sequence and how many sessions took it.
type variant struct {
	moves []move
	count int
}

// learnLabel is the label merge: one state per label, what a reviewer draws
// by hand.
func learnLabel(vars []variant, startLabel uint32) *dfa {
	d := &dfa{label: []uint32{startLabel}, next: map[dkey]int32{}}
	byLabel := map[uint32]int32{}
	for _, v := range vars {
		cur := int32(0)
		for _, mv := range v.moves {
			s, ok := byLabel[mv.label()]
			if !ok {
				s = int32(len(d.label))
				byLabel[mv.label()] = s
				d.label = append(d.label, mv.label())
			}
			d.next[dkey{cur, mv}] = s
			cur = s
		}
	}
	return d
}

// pta is a prefix tree acceptor with counts that red-blue merging folds in
// place into an automaton.
type pta struct {
	nodes []ptaNode
	// grown lists the red nodes that fold added to, where it is not nil:
	// for the Bayesian merge's index of red states (see bayesPicker).
	grown []int32
}

type ptaNode struct {
	label uint32
	count int // arrivals
	out   int // the sum of the edges' counts
	edges []ptaEdge
	// byMove is the position of each move in edges, kept once a node has
	// more than indexedEdges of them (nil before): a node with thousands
	// of moves (events that carry ids) would otherwise be searched in a
	// list at every step of a merge.
	byMove map[move]int32
	in     move  // the move of the tree edge into the node
	order  int32 // shortlex rank of the node in the tree
	red    bool
	dead   bool
}

type ptaEdge struct {
	mv    move
	to    int32
	count int
}

// indexedEdges is how many moves a node holds before they are indexed by
// move: below it a scan of the list is as fast as a map.
const indexedEdges = 16

// child is n's edge of move mv, or nil.
func (p *pta) child(n int32, mv move) *ptaEdge {
	nd := &p.nodes[n]
	if nd.byMove != nil {
		if i, ok := nd.byMove[mv]; ok {
			return &nd.edges[i]
		}
		return nil
	}
	for i := range nd.edges {
		if nd.edges[i].mv == mv {
			return &nd.edges[i]
		}
	}
	return nil
}

// addEdge appends e to n's edges (n must lack e's move) and returns it.
func (p *pta) addEdge(n int32, e ptaEdge) *ptaEdge {
	nd := &p.nodes[n]
	nd.edges = append(nd.edges, e)
	switch {
	case nd.byMove != nil:
		nd.byMove[e.mv] = int32(len(nd.edges) - 1)
	case len(nd.edges) > indexedEdges:
		nd.index()
	}
	return &nd.edges[len(nd.edges)-1]
}

// index builds n's byMove from its edges.
func (n *ptaNode) index() {
	n.byMove = make(map[move]int32, len(n.edges))
	for i, e := range n.edges {
		n.byMove[e.mv] = int32(i)
	}
}

// buildPTA builds the prefix tree of the variants. Children are ordered by
// rank (so that the tree and its shortlex order do not depend on the order
// names were first seen).
func buildPTA(vars []variant, startLabel uint32, less func(a, b move) bool) *pta {
	p := &pta{nodes: []ptaNode{{label: startLabel}}}
	for _, v := range vars {
		cur := int32(0)
		p.nodes[0].count += v.count
		for _, mv := range v.moves {
			e := p.child(cur, mv)
			if e == nil {
				p.nodes = append(p.nodes, ptaNode{label: mv.label(), in: mv})
				e = p.addEdge(cur, ptaEdge{mv: mv, to: int32(len(p.nodes) - 1)})
			}
			e.count += v.count
			p.nodes[cur].out += v.count
			cur = e.to
			p.nodes[cur].count += v.count
		}
	}
	// Shortlex order: breadth first, children by move rank.
	queue := []int32{0}
	rank := int32(0)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		p.nodes[n].order = rank
		rank++
		es := p.nodes[n].edges
		sort.Slice(es, func(i, j int) bool { return less(es[i].mv, es[j].mv) })
		if p.nodes[n].byMove != nil {
			p.nodes[n].index()
		}
		for _, e := range es {
			queue = append(queue, e.to)
		}
	}
	return p
}

// learnAlergia is red-blue state merging with the Alergia compatibility test
// (Carrasco & Oncina 1994, "Learning stochastic regular grammars by means of
// a state merging method"), restricted to states of the same label so that
// one stage used in two contexts may stay two states. Blue states are taken
// in shortlex order; each is merged into the first red state of its label
// whose future is compatible (Hoeffding bound at level alpha, recursively
// over the blue subtree), else promoted to red.
func learnAlergia(p *pta, alpha float64) *dfa {
	bound := math.Sqrt(0.5 * math.Log(2/alpha))
	compatible := func(n1, n2, f1, f2 int) bool {
		if n1 < minTestCount || n2 < minTestCount {
			return true
		}
		d := math.Abs(float64(f1)/float64(n1) - float64(f2)/float64(n2))
		return d < bound*(1/math.Sqrt(float64(n1))+1/math.Sqrt(float64(n2)))
	}
	var compat func(r, b int32) bool
	compat = func(r, b int32) bool {
		rn, bn := &p.nodes[r], &p.nodes[b]
		for _, be := range bn.edges {
			re := p.child(r, be.mv)
			rc := 0
			if re != nil {
				rc = re.count
			}
			if !compatible(rn.count, bn.count, rc, be.count) {
				return false
			}
		}
		// Below the least count every move passes: skip the list of r's
		// moves, which may be long where b's is short.
		if rn.count >= minTestCount && bn.count >= minTestCount {
			for _, re := range rn.edges {
				if p.child(b, re.mv) == nil && !compatible(rn.count, bn.count, re.count, 0) {
					return false
				}
			}
		}
		for _, be := range bn.edges {
			if re := p.child(r, be.mv); re != nil && !compat(re.to, be.to) {
				return false
			}
		}
		return true
	}
	return redBlue(p, func(b int32, reds []int32) int32 {
		for _, r := range reds {
			if compat(r, b) {
				return r
			}
		}
		return -1
	})
}

// learnBayes is red-blue state merging by posterior (Stolcke & Omohundro
// 1994, "Best-first model merging for hidden Markov model induction"),
// restricted to states of the same label as learnAlergia is: each blue
// state, in shortlex order, is merged into the red state of its label that
// most raises the log posterior, if any merge does not lower it, else
// promoted to red. The log posterior is the training moves' log-likelihood
// under the automaton's own frequencies plus a prior that charges
// movePrior for each transition and statePrior for each state, both in
// units of ln(moves)/2 (the Bayesian information criterion's charge for a
// parameter; moves counts the training sessions' moves). A merge always
// costs likelihood; it pays when it saves transitions (two states that
// share moves) or states.
func learnBayes(p *pta, movePrior, statePrior float64) *dfa {
	moves := 0
	for i := range p.nodes {
		for _, e := range p.nodes[i].edges {
			moves += e.count
		}
	}
	unit := math.Log(float64(max(moves, 2))) / 2
	mp, sp := movePrior*unit, statePrior*unit
	return redBlue(p, newBayesPicker(p, mp, sp).pick)
}

// bayesGain is the change in log posterior (see learnBayes) of folding
// blue tree node b into red node r, as redBlue does: the edge into b from
// its parent turns to r, then b's subtree folds along r's moves, and a move
// r lacks takes its subtree along. Sums run in the tree's edge order, so
// that the result does not depend on map order.
func bayesGain(p *pta, r, b int32, movePrior, statePrior float64) float64 {
	var into []int32             // nodes that gain counts, in first-visit order
	add := map[int32][]ptaEdge{} // the counts each gains, by move
	gain, trans, states := 0.0, 0, 0
	p.foldPairs(r, b, func(x, y int32) {
		states++
		if _, ok := add[x]; !ok {
			into = append(into, x)
			add[x] = nil
		}
		es := p.nodes[y].edges
		gain -= logLikelihood(es)
		trans -= len(es)
		for _, be := range es {
			add[x] = addCount(add[x], be.mv, be.count)
		}
	})
	for _, n := range into {
		old := p.nodes[n].edges
		merged := append([]ptaEdge(nil), old...)
		for _, e := range add[n] {
			merged = addCount(merged, e.mv, e.count)
		}
		gain += logLikelihood(merged) - logLikelihood(old)
		trans += len(merged) - len(old)
	}
	return gain - movePrior*float64(trans) + statePrior*float64(states)
}

// foldPairs calls each(x, y) for every pair of nodes that folding blue
// node b into red node r joins, y's moves going to x, in the order
// bayesGain sums them: r and b first, then along the moves they share (a
// move of b that x lacks takes its subtree to x whole, and a later node's
// move that x gained so continues into that subtree).
func (p *pta) foldPairs(r, b int32, each func(x, y int32)) {
	type pair struct{ r, b int32 }
	attached := map[dkey]int32{} // moves a node gains with their subtree
	stack := []pair{{r, b}}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		each(x.r, x.b)
		for _, be := range p.nodes[x.b].edges {
			k := dkey{x.r, be.mv}
			if re := p.child(x.r, be.mv); re != nil {
				to := re.to
				if to == b { // the parent's edge, turned to r
					to = r
				}
				stack = append(stack, pair{to, be.to})
			} else if t, ok := attached[k]; ok {
				stack = append(stack, pair{t, be.to})
			} else {
				attached[k] = be.to
			}
		}
	}
}

// addCount adds c to mv's count in es, appending mv when es lacks it.
func addCount(es []ptaEdge, mv move, c int) []ptaEdge {
	for i := range es {
		if es[i].mv == mv {
			es[i].count += c
			return es
		}
	}
	return append(es, ptaEdge{mv: mv, count: c})
}

// logLikelihood is the log-likelihood of a state's moves under their own
// frequencies: the sum of c ln(c/n).
func logLikelihood(es []ptaEdge) float64 {
	n := 0
	for _, e := range es {
		n += e.count
	}
	l := 0.0
	for _, e := range es {
		if e.count > 0 {
			l += float64(e.count) * math.Log(float64(e.count)/float64(n))
		}
	}
	return l
}

// redBlue folds the prefix tree into an automaton: blue states (children
// of red ones), in shortlex order, are merged into the red state of their
// label that pick names (it sees those red states in the order they turned
// red), or turn red when it names none (-1).
func redBlue(p *pta, pick func(b int32, reds []int32) int32) *dfa {
	blue := &nodeHeap{p: p}
	redsByLabel := map[uint32][]int32{}
	promote := func(n int32) {
		p.nodes[n].red = true
		redsByLabel[p.nodes[n].label] = append(redsByLabel[p.nodes[n].label], n)
		for _, e := range p.nodes[n].edges {
			if !p.nodes[e.to].red {
				heap.Push(blue, e.to)
			}
		}
	}
	// parent is each tree node's one incoming edge's source.
	parent := make([]int32, len(p.nodes))
	for i := range p.nodes {
		for _, e := range p.nodes[i].edges {
			parent[e.to] = int32(i)
		}
	}
	attach := func(r, child int32) {
		parent[child] = r
		if p.nodes[r].red && !p.nodes[child].red {
			heap.Push(blue, child)
		}
	}
	promote(0)
	for blue.Len() > 0 {
		b := heap.Pop(blue).(int32)
		if p.nodes[b].red || p.nodes[b].dead {
			continue
		}
		r := pick(b, redsByLabel[p.nodes[b].label])
		if r < 0 {
			promote(b)
			continue
		}
		p.merge(r, b, parent[b], attach)
	}

	// Renumber the red states in shortlex order from the start.
	d := &dfa{next: map[dkey]int32{}}
	id := map[int32]int32{}
	queue := []int32{0}
	id[0] = 0
	d.label = append(d.label, p.nodes[0].label)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, e := range p.nodes[n].edges {
			if _, ok := id[e.to]; !ok {
				id[e.to] = int32(len(d.label))
				d.label = append(d.label, p.nodes[e.to].label)
				queue = append(queue, e.to)
			}
			d.next[dkey{id[n], e.mv}] = id[e.to]
		}
	}
	return d
}

// minTestCount is the fewest arrivals a state needs for its frequencies to
// be tested: below it the evidence says nothing and the states count as
// compatible. Without it, the many tests of a recursive comparison deep in
// sparse subtrees reject merges on noise (0 of 6 where 73% was expected) and
// the model splits states that have the same future.
const minTestCount = 10

// merge folds blue tree node b, whose parent is par, into red node r: the
// edge from par (red, since b was blue) turns to r, then b's counts add to
// r's and b's edges join r's, recursively along the moves they share; attach
// is told of each edge r takes whole (r, the subtree's root).
func (p *pta) merge(r, b, par int32, attach func(r, child int32)) {
	// b is not red, so that edge is its only way in, of the move it had
	// in the tree (a subtree taken whole keeps its move).
	p.child(par, p.nodes[b].in).to = r
	p.fold(r, b, attach)
}

// fold merges tree node b into node r: counts add and b's edges join r's.
func (p *pta) fold(r, b int32, attach func(r, child int32)) {
	p.nodes[r].count += p.nodes[b].count
	p.nodes[r].out += p.nodes[b].out
	if p.grown != nil && p.nodes[r].red {
		p.grown = append(p.grown, r)
	}
	p.nodes[b].dead = true
	for _, be := range p.nodes[b].edges {
		if re := p.child(r, be.mv); re != nil {
			re.count += be.count
			p.fold(re.to, be.to, attach)
			continue
		}
		p.addEdge(r, be)
		attach(r, be.to)
	}
	p.nodes[b].edges, p.nodes[b].byMove = nil, nil
}

// nodeHeap orders blue nodes by their shortlex rank in the tree.
type nodeHeap struct {
	p *pta
	s []int32
}

func (h *nodeHeap) Len() int           { return len(h.s) }
func (h *nodeHeap) Less(i, j int) bool { return h.p.nodes[h.s[i]].order < h.p.nodes[h.s[j]].order }
func (h *nodeHeap) Swap(i, j int)      { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *nodeHeap) Push(x any)         { h.s = append(h.s, x.(int32)) }
func (h *nodeHeap) Pop() any {
	x := h.s[len(h.s)-1]
	h.s = h.s[:len(h.s)-1]
	return x
}
