package stages

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// The thresholds of the message turns, free text and branches found from
// how nodes behave in the log; the package comment says what each decides.
// They were set on the tau and STAR logs of the project's data and keep
// help desk's and BPI 2012's nodes all task steps.
const (
	TurnSessions   = 0.9  // a turn is in at least this share of the sessions
	TurnTouch      = 0.65 // and next to at least this share of the other records
	TurnNeighbours = 0.5  // and of the other nodes (3 at least)
	FreeNeighbours = 0.8  // free text is next to at least this share of the other task nodes
	FreeEntropy    = 0.65 // with this normalised entropy of what comes around it
	FreeSpread     = 0.28 // and positions of this standard deviation at least
	FreeRuns       = 20   // over at least this many runs
	FreeDependence = 0.9  // or free text departs at most this much from the others' context (see dependence)
	FreeSessions   = 0.2  // and is in at least this share of the sessions
	BranchShare    = 0.5  // branches follow one node in at least this share of their runs
	BranchTogether = 0.1  // and share at most this share of the sessions of the rarer
)

const chatByName = "a message turn, not a task step (the name says so)"

// findTurns marks as message turns the nodes that behave as turns of a
// conversation, whatever their names: in nearly every session
// (TurnSessions), and next to most records of every other node
// (TurnTouch) and of most other nodes (TurnNeighbours), as the user's and
// the agent's turns alternate with everything else (STAR's user_utter is next to 92-99% of the other
// records, tau's user_msg and agent_msg to 75%; the busiest task step of
// the project's logs, help desk's Resolve ticket, to 57%). They are not
// marked when that would leave fewer than two task nodes.
func (a *analysis) findTurns() {
	n := len(a.names)
	touch := make([]int, n) // records of other nodes next to one of the node
	visits := make([]int, n)
	nbrs := make([]map[int32]bool, n)
	total := 0
	next := func(x, id int32) {
		touch[x]++
		if nbrs[x] == nil {
			nbrs[x] = map[int32]bool{}
		}
		nbrs[x][id] = true
	}
	for _, seq := range a.seqs {
		for i, id := range seq {
			visits[id]++
			total++
			var prev int32 = -1
			if i > 0 && seq[i-1] != id {
				prev = seq[i-1]
				next(prev, id)
			}
			if i+1 < len(seq) && seq[i+1] != id && seq[i+1] != prev {
				next(seq[i+1], id)
			}
		}
	}
	var turns []int
	tasks := 0
	for id := range n {
		if a.chat[id] {
			continue
		}
		tasks++
		cov := float64(a.sessions[id]) / float64(len(a.seqs))
		other := total - visits[id]
		if other == 0 || cov < TurnSessions || len(nbrs[id]) < max(3, int(math.Ceil(TurnNeighbours*float64(n-1)))) {
			continue
		}
		if share := float64(touch[id]) / float64(other); share >= TurnTouch {
			turns = append(turns, id)
			a.chatWhy[id] = fmt.Sprintf("a message turn, not a task step (the log says so: in %.0f%% of the sessions, next to %.0f%% of the other records)", 100*cov, 100*share)
		}
	}
	if tasks-len(turns) < 2 {
		for _, id := range turns {
			a.chatWhy[id] = ""
		}
		return
	}
	for _, id := range turns {
		a.chat[id] = true
	}
}

// findFreeText marks as message turns the task nodes that have no place
// of their own in the flow, over FreeRuns runs at least: text the agent
// typed instead of a step (STAR's wizard_free_text). Either next to nearly
// every other task node (FreeNeighbours), with no one node around them
// that dominates (FreeEntropy), anywhere in the sessions (FreeSpread); or,
// where the task has many steps and free text touches fewer of them, in
// FreeSessions of the sessions with what comes before and after its runs
// close to what comes around the other nodes' (FreeDependence; see
// dependence), anywhere in them (FreeSpread, which steps done in any
// order between fixed ones do not reach), unless half the task nodes or
// more would be so taken: a log with no flow shows nothing to tell free
// text from. A query that every branch comes back to is next to every
// node too, but at its place in the flow. The second rule's two
// thresholds were set on the five STAR tasks of the project's data and
// its four real logs (free text at most 0.86 and in 28% of the sessions at
// least; every step there above 0.93, or in 11% of the sessions at most)
// and found the free text of five more of STAR's other 19 tasks, with no
// step taken for free text (docs/labels.md).
func (a *analysis) findFreeText() {
	n := len(a.names)
	tasks := 0
	for id := range n {
		if !a.chat[id] {
			tasks++
		}
	}
	if tasks < 4 {
		return
	}
	ctx := newContexts(n) // what comes before and after each node's runs
	runs := make([]int, n)
	var sum, sq []float64 = make([]float64, n), make([]float64, n)
	var rs []int32
	for v, task := range a.tasks {
		w := a.weight[v]
		rs = rs[:0]
		for _, id := range task {
			if len(rs) == 0 || rs[len(rs)-1] != id {
				rs = append(rs, id)
			}
		}
		for i, id := range rs {
			runs[id] += w
			p := relPos(i, len(rs))
			sum[id] += float64(w) * p
			sq[id] += float64(w) * p * p
			prev, next := int32(-1), int32(-2)
			if i > 0 {
				prev = rs[i-1]
			}
			if i+1 < len(rs) {
				next = rs[i+1]
			}
			ctx.add(id, prev, next, w)
		}
	}
	var free, byContext []int
	contextFree := 0 // task nodes whose context is any run's, spread or not
	for id := range n {
		if a.chat[id] || runs[id] < FreeRuns {
			continue
		}
		around := ctx.around(int32(id))
		keys := slices.Sorted(maps.Keys(around)) // sums in one order: the same floats every run
		nodes, tot := 0, 0
		for _, x := range keys {
			if x >= 0 {
				nodes++
			}
			tot += around[x]
		}
		ent := 0.0
		for _, x := range keys {
			p := float64(around[x]) / float64(tot)
			ent -= p * math.Log(p)
		}
		ent /= math.Log(float64(tasks + 1)) // the other task nodes, start and end
		mean := sum[id] / float64(runs[id])
		sd := math.Sqrt(max(0, sq[id]/float64(runs[id])-mean*mean))
		nb := float64(nodes) / float64(tasks-1)
		if nb >= FreeNeighbours && ent >= FreeEntropy && sd >= FreeSpread {
			free = append(free, id)
			a.chatWhy[id] = fmt.Sprintf("a message turn, not a task step (free text, the log says so: next to %.0f%% of the other task nodes, entropy of what comes around it %.2f, positions spread %.2f)", 100*nb, ent, sd)
			continue
		}
		share := float64(a.sessions[id]) / float64(len(a.seqs))
		if share < FreeSessions {
			continue
		}
		dep := ctx.dependence(int32(id))
		if dep > FreeDependence {
			continue
		}
		contextFree++
		if sd >= FreeSpread {
			byContext = append(byContext, id)
			a.chatWhy[id] = fmt.Sprintf("a message turn, not a task step (free text, the log says so: in %.0f%% of the sessions, anywhere in them, and what comes before and after it departs from what comes around the other task nodes by %.2f, a step's by several times 1)", 100*share, dep)
		}
	}
	// Free text is told by its context against the flow of the others: a
	// log where half the task nodes have the context of any run shows no
	// flow to tell it from.
	if 2*contextFree > tasks {
		for _, id := range byContext {
			a.chatWhy[id] = ""
		}
		byContext = nil
	}
	free = append(free, byContext...)
	if len(free) == 0 || tasks-len(free) < 2 {
		for _, id := range free {
			a.chatWhy[id] = ""
		}
		return
	}
	for _, id := range free {
		a.chat[id] = true
	}
	a.findTasks()
}

// findBranches marks the pairs of task nodes that the log shows on
// different branches after one decision: most runs of each
// (BranchShare) follow the same node, and they rarely come in one session
// (BranchTogether of the sessions of the rarer at most): ride_confirm_booking
// and ride_inform_nothing_found after query:ride_book (success, nothing
// found). Names of one family (modify_pending_order_items and
// modify_pending_order_address) are two ways of one step, not branches,
// unless the decision repeats: a family whose members come together in
// sessions (more than BranchTogether), in no fixed order (as the clustering
// judges order), but seldom between the same two runs of the node they
// follow (at most BranchTogether of the rarer's stretches) is the outcomes
// of a check made again and again, as STAR's trivia tells each answer
// correct, incorrect or not given; its mark is negative. Clustering merges
// branches last.
func (a *analysis) findBranches() {
	n := len(a.names)
	a.branchAfter = make([]int32, n*n)
	prev := make([]map[int32]int, n) // node -> runs of it after each node
	runs := make([]int, n)
	inv := make([][]int32, n) // node -> distinct sessions of tasks with it
	for v, task := range a.tasks {
		w := a.weight[v]
		for i, id := range task {
			if n := len(inv[id]); n == 0 || inv[id][n-1] != int32(v) {
				inv[id] = append(inv[id], int32(v))
			}
			if i > 0 && task[i-1] == id {
				continue
			}
			runs[id] += w
			if i > 0 {
				if prev[id] == nil {
					prev[id] = map[int32]int{}
				}
				prev[id][task[i-1]] += w
			}
		}
	}
	after := map[int32][]int32{} // main predecessor -> its nodes
	for id := range int32(n) {
		if a.chat[id] || runs[id] == 0 {
			continue
		}
		p, most := int32(-1), 0
		for _, x := range slices.Sorted(maps.Keys(prev[id])) {
			if c := prev[id][x]; c > most {
				p, most = x, c
			}
		}
		if p >= 0 && float64(most) >= BranchShare*float64(runs[id]) {
			after[p] = append(after[p], id)
		}
	}
	weight := func(vs []int32) int {
		t := 0
		for _, v := range vs {
			t += a.weight[v]
		}
		return t
	}
	for p, nodes := range after {
		for i, x := range nodes {
			for _, y := range nodes[i+1:] {
				both := weight(intersectSorted(inv[x], inv[y]))
				together := float64(both) > BranchTogether*float64(min(weight(inv[x]), weight(inv[y])))
				branch := !together && a.aff[x][y] < FamilyAffinity
				mark := p + 1
				if together && a.aff[x][y] >= FamilyAffinity {
					sx, sy, sb, xy, yx := a.segments(p, x, y)
					fixed := xy+yx >= MinOrderSessions && float64(max(xy, yx)) >= FixedOrder*float64(xy+yx) &&
						float64(max(xy, yx)) >= Sequence*float64(min(weight(inv[x]), weight(inv[y])))
					branch = !fixed && sb <= int(BranchTogether*float64(min(sx, sy)))
					mark = -mark
				}
				if branch {
					a.branchAfter[int(x)*n+int(y)] = mark
					a.branchAfter[int(y)*n+int(x)] = mark
				}
			}
		}
	}
}

// intersectSorted returns the elements of two ascending lists that are in
// both.
func intersectSorted(x, y []int32) []int32 {
	var out []int32
	for i, j := 0, 0; i < len(x) && j < len(y); {
		switch {
		case x[i] < y[j]:
			i++
		case x[i] > y[j]:
			j++
		default:
			out = append(out, x[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// segments counts the stretches from a run of p to the next (weighted) in
// which x comes, in which y does and in which both do; and the sessions
// whose first x comes before their first y (xy) or after it (yx).
func (a *analysis) segments(p, x, y int32) (sx, sy, sb, xy, yx int) {
	for v, task := range a.tasks {
		w := a.weight[v]
		if i, j := slices.Index(task, x), slices.Index(task, y); i >= 0 && j >= 0 {
			if i < j {
				xy += w
			} else {
				yx += w
			}
		}
		in, hx, hy := false, false, false
		flush := func() {
			if !in {
				return
			}
			if hx {
				sx += w
			}
			if hy {
				sy += w
			}
			if hx && hy {
				sb += w
			}
		}
		for _, id := range task {
			switch id {
			case p:
				flush()
				in, hx, hy = true, false, false
			case x:
				hx = true
			case y:
				hy = true
			}
		}
		flush()
	}
	return sx, sy, sb, xy, yx
}

// contexts counts, over the runs of the task sessions, the node (or the
// start, -1, or the end, -2) before each run and after it.
type contexts struct {
	next, prev         []map[int32]int // per node: what follows its runs, what precedes them
	nextTot, prevTot   map[int32]int   // over every node and the start: what follows; over every node and the end: what precedes
	nextKeys, prevKeys []int32         // their keys in order (see dependence)
}

func newContexts(n int) *contexts {
	return &contexts{next: make([]map[int32]int, n), prev: make([]map[int32]int, n),
		nextTot: map[int32]int{}, prevTot: map[int32]int{}}
}

// add counts a run of id between prev and next (-1 the start, -2 the end),
// w times; the start's move into the first run and the end's out of the
// last are counted with the first and the last run.
func (c *contexts) add(id, prev, next int32, w int) {
	if c.next[id] == nil {
		c.next[id], c.prev[id] = map[int32]int{}, map[int32]int{}
	}
	c.next[id][next] += w
	c.prev[id][prev] += w
	c.nextTot[next] += w
	c.prevTot[prev] += w
	if prev == -1 {
		c.nextTot[id] += w // the start, a source of its own, is followed by id
	}
	if next == -2 {
		c.prevTot[id] += w // the end, a target of its own, is preceded by id
	}
}

// around is what comes next to x's runs on either side (the start -1, the
// end -2), each side counted.
func (c *contexts) around(x int32) map[int32]int {
	m := make(map[int32]int, len(c.next[x])+len(c.prev[x]))
	for z, w := range c.next[x] {
		m[z] += w
	}
	for z, w := range c.prev[x] {
		m[z] += w
	}
	return m
}

// dependence is how much what comes next to x's runs departs from what
// comes next to every other node's: the chi-square statistic of x's next
// nodes against the others' (x left out on both sides), less its degrees of
// freedom (what chance alone gives), over x's runs; the same of the nodes
// before; their mean. 0 for a node that comes anywhere, as free text does;
// a task step, which has its place in the flow, scores several times 1.
func (c *contexts) dependence(x int32) float64 {
	if c.nextKeys == nil { // one order: the same floats every run
		c.nextKeys, c.prevKeys = slices.Sorted(maps.Keys(c.nextTot)), slices.Sorted(maps.Keys(c.prevTot))
	}
	return (depart(c.next[x], c.nextTot, c.nextKeys, x) + depart(c.prev[x], c.prevTot, c.prevKeys, x)) / 2
}

// depart is one side of dependence: obs, what is next to x's runs on that
// side, against tot less obs, what is next to every other run (keys: tot's
// keys in order).
func depart(obs, tot map[int32]int, keys []int32, x int32) float64 {
	n, m := 0, 0
	for z, o := range obs {
		if z != x {
			n += o
		}
	}
	for z, t := range tot {
		if z != x {
			m += t - obs[z]
		}
	}
	if n == 0 || m == 0 {
		return math.Inf(1)
	}
	chi, k := 0.0, 0
	for _, z := range keys {
		if z == x {
			continue
		}
		o, rest := float64(obs[z]), float64(tot[z]-obs[z])
		if rest == 0 && o == 0 {
			continue
		}
		// A cell expected less than half a record counts as expected
		// half a record: else one stray record of a rare neighbour (or
		// of one no other node's runs have) would outweigh the rest.
		e := max(float64(n)*rest/float64(m), 0.5)
		chi += (o - e) * (o - e) / e
		k++
	}
	return max(0, chi-float64(k-1)) / float64(n)
}
