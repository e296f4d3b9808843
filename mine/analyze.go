package mine

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/fsmine/fsmine/automaton"
)

// model assembles the automaton.Model from the walked automaton.
func (b *builder) model() *automaton.Model {
	d := b.d
	lg := b.lg
	ids := b.stateIDs()
	b.dwellDone()

	outflow := make([]int, len(d.label))
	for k, t := range b.trans {
		outflow[k.from] += t.count
	}
	keys := b.transKeys()

	// The any-order moves take no part in the loops (see anyorder.go).
	anyOrder := b.anyOrderEnd()
	scc, dist := b.components(keys, !anyOrder)
	back := map[dkey]bool{}
	for _, k := range keys {
		to := b.trans[k].to
		if scc[k.from] == scc[to] && (k.from == to || dist[to] <= dist[k.from]) {
			back[k] = true
		}
	}

	m := &automaton.Model{
		Schema:  automaton.Schema,
		Initial: automaton.StartID,
		Params: automaton.Params{
			Format:    lg.Format(),
			Fields:    lg.Fields,
			Import:    lg.Import,
			Merge:     b.opt.Merge,
			RareCount: b.opt.RareCount,
			RareRatio: b.opt.RareRatio,
		},
		Source: automaton.Source{
			Files:      lg.Files,
			Sessions:   b.tally.sessions,
			Events:     b.tally.events,
			Records:    lg.Records,
			Skipped:    lg.Skipped,
			Duplicates: lg.Duplicates,
			Dropped:    lg.Dropped,
			Folded:     lg.Folded,
			Detours:    lg.Detours,
			StepGaps:   lg.StepGaps,
			LeftOut:    lg.LeftOut,
		},
	}
	if lg.Rules != nil {
		m.Params.Labels = lg.Rules.Raw()
	}
	switch b.opt.Merge {
	case MergeAlergia:
		m.Params.Alpha = b.opt.Alpha
	case MergeBayes:
		m.Params.PriorMove, m.Params.PriorState = b.opt.BayesMovePrior, b.opt.BayesStatePrior
	}
	for st := range d.label {
		s := automaton.State{
			ID:       ids[st],
			Label:    lg.names[d.label[st]],
			Visits:   b.visits[st],
			Sessions: b.sessions[st],
		}
		s.DwellMS = b.dwell[st].summary()
		if b.stateEx != nil {
			s.Examples = exampleIDs(b.stateEx[st])
		}
		if b.gen != nil && s.ID != automaton.StartID && s.ID != automaton.EndID {
			s.MaxRun = b.maxRun[d.label[st]]
		}
		m.States = append(m.States, s)
	}
	for _, k := range keys {
		t := b.trans[k]
		p := float64(t.count) / float64(outflow[k.from])
		rare := isRare(t.count, p, b.opt.RareCount, b.opt.RareRatio)
		m.Transitions = append(m.Transitions, automaton.Transition{
			From: ids[k.from], Event: lg.names[k.mv.event()], To: ids[t.to],
			Count: t.count, Sessions: t.sessions, Prob: Round6(p), Rare: rare, BackEdge: back[k],
			Examples: exampleIDs(b.transEx[k]),
		})
	}
	gkeys := make([]dkey, 0, len(b.gen))
	for k := range b.gen {
		gkeys = append(gkeys, k)
	}
	for _, k := range gkeys {
		g := b.gen[k]
		// A generalised transition never closes a cycle of its own (see
		// generalize.go); inside a loop it is a back edge as an observed
		// one would be, so that the loop's cap counts it. The any-order
		// moves close cycles everywhere and are never back edges (see
		// anyorder.go).
		isBack := !anyOrder && scc[k.from] == scc[g.to] && (k.from == g.to || dist[g.to] <= dist[k.from])
		m.Transitions = append(m.Transitions, automaton.Transition{
			From: ids[k.from], Event: lg.names[k.mv.event()], To: ids[g.to],
			BackEdge: isBack, Generalized: g.kind,
		})
	}
	m.Params.Examples = b.opt.Examples
	if b.opt.Generalize != "" && b.opt.Generalize != GeneralizeNone {
		m.Params.Generalize = b.opt.Generalize
		if n := b.support(); n != MinConstraintSupport {
			m.Params.ConstraintSupport = n
		}
		m.Constraints = b.cons
	}
	m.Loops = b.loops(keys, scc, back, ids)
	m.Trunk = trunk(m)
	m.Variants = len(b.vars)
	m.TopVariants = b.topVariants(ids)
	m.Sort()
	m.Digest = m.ComputeDigest()
	return m
}

// stateIDs names states so that the names survive a rebuild on similar data:
// the most visited state of a label is named by the label; the other states
// of the label are told apart by context — the label of the state their
// heaviest incoming transition comes from (label@source), then that
// transition's event (label@source/event), then a rank by visits (#1, #2...).
func (b *builder) stateIDs() []string {
	d := b.d
	lg := b.lg
	ids := make([]string, len(d.label))
	byLabel := map[uint32][]int32{}
	for st, l := range d.label {
		byLabel[l] = append(byLabel[l], int32(st))
	}
	// The heaviest incoming transition of each state, self-loops aside.
	type in struct {
		from  int32
		mv    move
		count int
	}
	heaviest := make([]in, len(d.label))
	for i := range heaviest {
		heaviest[i].from = -1
	}
	for k, t := range b.trans {
		if k.from == t.to {
			continue
		}
		h := &heaviest[t.to]
		better := h.from < 0 || t.count > h.count
		if !better && t.count == h.count {
			fl, hl := lg.names[d.label[k.from]], lg.names[d.label[h.from]]
			better = fl < hl || (fl == hl && b.rank[k.mv.event()] < b.rank[h.mv.event()])
		}
		if better {
			*h = in{k.from, k.mv, t.count}
		}
	}
	used := map[string]bool{}
	labels := make([]uint32, 0, len(byLabel))
	for l := range byLabel {
		labels = append(labels, l)
	}
	sort.Slice(labels, func(i, j int) bool { return lg.names[labels[i]] < lg.names[labels[j]] })
	for _, l := range labels {
		sts := byLabel[l]
		name := lg.names[l]
		if len(sts) == 1 {
			ids[sts[0]] = name
			used[name] = true
		}
	}
	for _, l := range labels {
		sts := byLabel[l]
		if len(sts) == 1 {
			continue
		}
		name := lg.names[l]
		ctx := func(st int32, withEvent bool) string {
			h := heaviest[st]
			if h.from < 0 {
				return name
			}
			s := name + "@" + lg.names[d.label[h.from]]
			if withEvent {
				s += "/" + lg.names[h.mv.event()]
			}
			return s
		}
		// The most visited state keeps the bare label, so that a label that
		// gains or loses a rare second state does not rename its main one.
		sort.SliceStable(sts, func(i, j int) bool {
			if b.visits[sts[i]] != b.visits[sts[j]] {
				return b.visits[sts[i]] > b.visits[sts[j]]
			}
			return ctx(sts[i], true) < ctx(sts[j], true)
		})
		rest := sts
		if !used[name] {
			ids[sts[0]] = name
			used[name] = true
			rest = sts[1:]
		}
		count := map[string]int{}
		for _, st := range rest {
			count[ctx(st, false)]++
		}
		cand := make(map[int32]string, len(rest))
		count2 := map[string]int{}
		for _, st := range rest {
			c := ctx(st, false)
			if count[c] > 1 || used[c] {
				c = ctx(st, true)
			}
			cand[st] = c
			count2[c]++
		}
		seq := map[string]int{}
		for _, st := range rest {
			c := cand[st]
			if count2[c] > 1 || used[c] {
				for {
					seq[c]++
					id := fmt.Sprintf("%s#%d", c, seq[c])
					if !used[id] {
						c = id
						break
					}
				}
			}
			ids[st] = c
			used[c] = true
		}
	}
	return ids
}

// components returns each state's strongly connected component (gonum's
// Tarjan) and its breadth-first distance from the start.
func (b *builder) components(keys []dkey, withGen bool) (scc []int, dist []int) {
	n := len(b.d.label)
	g := simple.NewDirectedGraph()
	for i := 0; i < n; i++ {
		g.AddNode(simple.Node(i))
	}
	adj := make([][]int32, n)
	for _, k := range keys {
		to := b.trans[k].to
		adj[k.from] = append(adj[k.from], to)
		if k.from != to && !g.HasEdgeFromTo(int64(k.from), int64(to)) {
			g.SetEdge(simple.Edge{F: simple.Node(k.from), T: simple.Node(to)})
		}
	}
	if withGen {
		// A follow move may join a state to a mined loop (see
		// generalize.go): the loop then holds it, and its cap counts the
		// move. Distances stay those of the observed moves.
		for k, e := range b.gen {
			if k.from != e.to && !g.HasEdgeFromTo(int64(k.from), int64(e.to)) {
				g.SetEdge(simple.Edge{F: simple.Node(k.from), T: simple.Node(e.to)})
			}
		}
	}
	scc = make([]int, n)
	for ci, comp := range topo.TarjanSCC(graph.Directed(g)) {
		for _, node := range comp {
			scc[node.ID()] = ci
		}
	}
	dist = make([]int, n)
	for i := range dist {
		dist[i] = -1
	}
	dist[0] = 0
	queue := []int32{0}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range adj[u] {
			if dist[v] < 0 {
				dist[v] = dist[u] + 1
				queue = append(queue, v)
			}
		}
	}
	return scc, dist
}

// loops finds the components with a cycle and how sessions iterate them.
func (b *builder) loops(keys []dkey, scc []int, back map[dkey]bool, ids []string) []automaton.Loop {
	type acc struct {
		states   map[int32]bool
		backs    []dkey
		count    int
		sessions int
		iters    []int // iterations of each stay that iterated, weighted by expansion
		iterW    []int
	}
	byComp := map[int]*acc{}
	for _, k := range keys {
		if !back[k] {
			continue
		}
		c := scc[k.from]
		a := byComp[c]
		if a == nil {
			a = &acc{states: map[int32]bool{}}
			byComp[c] = a
		}
		a.backs = append(a.backs, k)
	}
	if len(byComp) == 0 {
		return nil
	}
	for st := range b.d.label {
		if a := byComp[scc[st]]; a != nil {
			a.states[int32(st)] = true
		}
	}
	for vi, v := range b.vars {
		path := b.paths[vi]
		took := map[int]bool{}
		curComp, iters := -1, 0
		flush := func() {
			if curComp >= 0 && iters > 0 {
				a := byComp[curComp]
				a.iters = append(a.iters, iters)
				a.iterW = append(a.iterW, v.count)
			}
		}
		for i := 0; i+1 < len(path); i++ {
			from, to := path[i], path[i+1]
			k := dkey{from, v.moves[i]}
			c := scc[from]
			if byComp[c] == nil || scc[to] != c {
				flush()
				curComp, iters = -1, 0
				continue
			}
			if curComp != c {
				flush()
				curComp, iters = c, 0
			}
			if back[k] {
				iters++
				byComp[c].count += v.count
				took[c] = true
			}
		}
		flush()
		for c := range took {
			byComp[c].sessions += v.count
		}
	}
	var out []automaton.Loop
	for _, a := range byComp {
		l := automaton.Loop{Count: a.count, Sessions: a.sessions}
		for st := range a.states {
			l.States = append(l.States, ids[st])
		}
		sort.Strings(l.States)
		for _, k := range a.backs {
			l.BackEdges = append(l.BackEdges, automaton.EdgeRef{From: ids[k.from], Event: b.lg.names[k.mv.event()], To: ids[b.trans[k].to]})
		}
		sort.Slice(l.BackEdges, func(i, j int) bool {
			x, y := l.BackEdges[i], l.BackEdges[j]
			if x.From != y.From {
				return x.From < y.From
			}
			if x.Event != y.Event {
				return x.Event < y.Event
			}
			return x.To < y.To
		})
		l.MaxIterations, l.P95Iterations = weightedMaxP95(a.iters, a.iterW)
		if b.maxRun != nil && !b.anyOrderEnd() { // generalising: a cap, as the run caps are
			l.MaxIterations = loopCap(l.MaxIterations, a.iters, a.iterW, RunTail)
		}
		out = append(out, l)
	}
	return out
}

// loopCap is the cap on a loop's iterations per stay under the auto and
// constraints settings: the most a stay made, raised, as runCaps raises a
// label's run cap, where the stays' iterations, fitted as geometric (each
// iteration followed by another at the rate the log shows: iterations less
// stays, over iterations), make a longer stay more likely than tail; but
// only where MinOnceSupport stays iterated, the support a rule over whole
// sessions needs: a tail fitted to a few stays can say anything (three of
// 2, 3 and 4 iterations would give 18); and only where the fit explains
// the stays (below). A cap at the most seen denied the
// next session's one more turn: 100 sessions of the agent truth, 30
// samples, held back 2-4% of the held-out sessions of 5 for a stay longer
// than any training session's (docs/build.md). The any-order end keeps its
// loops' measured caps (see anyOrder).
func loopCap(most int, iters, weights []int, tail float64) int {
	total, stays := 0, 0
	for i, k := range iters {
		total += k * weights[i]
		stays += weights[i]
	}
	if stays < MinOnceSupport || total <= stays {
		return most
	}
	q := float64(total-stays) / float64(total)
	// The fit must explain the stays it is fitted to: where no stay went
	// past the most seen though the fit gives that a chance below tail, the
	// stays are no geometric and the cap stays the most seen (tau2 retail's
	// loop over the whole conversation, read with --slots: 80 stays of 4 to
	// 18 iterations, q 0.89, would have raised 18 to 61).
	if float64(stays)*math.Log1p(-math.Pow(q, float64(most))) < math.Log(tail) {
		return most
	}
	return max(most, int(math.Ceil(math.Log(tail)/math.Log(q))))
}

// weightedMaxP95 returns the maximum and the nearest-rank 95th percentile of
// values each repeated by its weight.
func weightedMaxP95(vals, weights []int) (int, int) {
	if len(vals) == 0 {
		return 0, 0
	}
	idx := make([]int, len(vals))
	total := 0
	for i := range idx {
		idx[i] = i
		total += weights[i]
	}
	sort.Slice(idx, func(i, j int) bool { return vals[idx[i]] < vals[idx[j]] })
	want := int(math.Ceil(0.95 * float64(total)))
	acc, p95 := 0, 0
	for _, i := range idx {
		acc += weights[i]
		if acc >= want {
			p95 = vals[i]
			break
		}
	}
	return vals[idx[len(idx)-1]], p95
}

// trunk is the main road: the path most sessions follow from __start__ to
// __end__, built from the states that the most sessions entered. It takes
// the states from most to fewest sessions (then most visits, then by id)
// and keeps a state when one start-to-end path can pass through it and every
// state kept before it, unless it is a detour few take or a branch beside
// the road (see mainRoad). Paths follow the observed forward transitions:
// not back edges (which close loops, so the trunk repeats no state), not
// generalised ones, and not rare ones unless the common ones alone do not
// reach __end__. Reachability along forward transitions is a partial
// order, so the kept states form a chain, and a chain that no further state
// fits into is a path: any state that could stand between two consecutive
// kept states would have been kept. A gap that the two rules leave without
// a move of its own is filled without them, so the trunk is a path all the
// same. The ending follows from the states kept, so a short path that many
// sessions take to an early exit loses to a road through the stages most
// sessions pass.
//
// Trunk returns the trunk of m as the miner computes it (see trunk), for a
// model that was not mined: one read back from an export or designed. It is
// nil when no path of observed transitions leads from __start__ to __end__.
func Trunk(m *automaton.Model) []string { return trunk(m) }

// trunkDetour weighs a state off the road against the road: the trunk
// takes a state between two of its states when trunkDetour times the
// sessions that enter it outnumber the steps that go straight from the one
// to the other. With 2 a step that a third of that traffic takes is on the
// road. With 1 (the road only where most go) the trunks of STAR's tasks held
// 0.80 of the designers' happy paths; with 2, 0.91
// (docs/diff-stats-report-render.md).
const trunkDetour = 2

// trunkUpstream keeps a branch beside the road off it: a state is not
// taken between two states of the road when more than this share of the
// steps into it (at least minTestCount of them) come from the road before
// the first of them, or from states refused so. plane_book's
// "flight unavailable", the other outcome of the first query, is entered
// from that query in 118 of 133 steps and from the booking after it in 15:
// a branch, not the booking's next step. Chosen on STAR's five tasks: 0.7
// and 0.8 give the same trunks; at 0.6 trip_directions' trunk loses a step
// of the designers' happy path, at 0.5 ride_book's too ("anything else",
// which 0.6 of its steps enter straight from the query, skipping an
// optional step); at 0.9 plane_book's branch joins the road.
const trunkUpstream = 0.7

// trunkStates bounds the states the trunk is chosen among (start and end
// included): those entered by the most sessions. A trunk is read on a map
// of at most ten boxes; only logs whose node names carry ids reach it.
const trunkStates = 4096

// maxRoadRounds bounds the rounds of the trunk's search (see mainRoad):
// each round refuses at least one more state, and a round's trunk is a
// path whatever it refused.
const maxRoadRounds = 8

func trunk(m *automaton.Model) []string {
	path := mainRoad(m, false)
	if path == nil {
		path = mainRoad(m, true)
	}
	return path
}

// mainRoad is trunk over the forward transitions, rare ones included or
// not; nil when they do not lead from __start__ to __end__.
func mainRoad(m *automaton.Model, withRare bool) []string {
	index := make(map[string]int, len(m.States))
	for i, s := range m.States {
		index[s.ID] = i
	}
	n := len(m.States)
	start, okS := index[automaton.StartID]
	end, okE := index[automaton.EndID]
	if !okS || !okE {
		return nil
	}
	// The observed transitions, most taken first (then by target and
	// event), self-loops aside.
	type arc struct {
		to, count int
		event     string
	}
	out := make([][]arc, n)
	for _, t := range m.Transitions {
		if t.Generalized != "" || t.Count == 0 || (t.Rare && !withRare) {
			continue
		}
		f, ok1 := index[t.From]
		to, ok2 := index[t.To]
		if !ok1 || !ok2 || f == to {
			continue
		}
		out[f] = append(out[f], arc{to, t.Count, t.Event})
	}
	for _, a := range out {
		sort.Slice(a, func(i, j int) bool {
			if a[i].count != a[j].count {
				return a[i].count > a[j].count
			}
			if c := automaton.CompareIDs(m.States[a[i].to].ID, m.States[a[j].to].ID); c != 0 {
				return c < 0
			}
			return a[i].event < a[j].event
		})
	}
	// A depth-first search from __start__ that follows the most taken
	// transitions first; the transitions it finds closing a cycle (to a
	// state on its stack) are left out, so the rest is acyclic and points
	// the way the bulk of the sessions go. Its finishing order, reversed, is
	// a topological order.
	const (
		unseen = iota
		onStack
		finished
	)
	mark := make([]int, n)
	succ := make([][]int, n)
	var order []int // states in finishing order
	type frame struct{ v, next int }
	stack := []frame{{start, 0}}
	mark[start] = onStack
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == len(out[top.v]) {
			mark[top.v] = finished
			order = append(order, top.v)
			stack = stack[:len(stack)-1]
			continue
		}
		a := out[top.v][top.next]
		top.next++
		switch mark[a.to] {
		case onStack:
			continue // closes a cycle
		case unseen:
			mark[a.to] = onStack
			stack = append(stack, frame{a.to, 0})
		}
		succ[top.v] = append(succ[top.v], a.to)
	}
	if mark[end] != finished {
		return nil
	}
	// The states the trunk may take: the trunkStates entered by the most
	// sessions (see cands), which the reachability below is kept for, so
	// that a model of a hundred thousand states (names with ids in them)
	// does not hold a bit for every pair (1.2 GB).
	byTraffic := func(a, b *automaton.State) bool {
		if a.Sessions != b.Sessions {
			return a.Sessions > b.Sessions
		}
		if a.Visits != b.Visits {
			return a.Visits > b.Visits
		}
		return automaton.CompareIDs(a.ID, b.ID) < 0
	}
	universe := make([]int, 0, n)
	for i := range m.States {
		if i != start && i != end {
			universe = append(universe, i)
		}
	}
	if len(universe) > trunkStates-2 {
		sort.Slice(universe, func(x, y int) bool { return byTraffic(&m.States[universe[x]], &m.States[universe[y]]) })
		universe = universe[:trunkStates-2]
	}
	universe = append(universe, start, end)
	col := make([]int32, n) // a state's bit in the reachability sets, or -1
	for i := range col {
		col[i] = -1
	}
	slices.Sort(universe)
	for k, v := range universe {
		col[v] = int32(k)
	}
	words := (len(universe) + 63) / 64
	reach := make([][]uint64, n)
	for _, v := range order { // a state finishes after every state it reaches
		r := make([]uint64, words)
		if c := col[v]; c >= 0 {
			r[c/64] |= 1 << (c % 64)
		}
		for _, j := range succ[v] {
			for w := range r {
				r[w] |= reach[j][w]
			}
		}
		reach[v] = r
	}
	// b must be in the universe.
	reaches := func(a, b int) bool { return reach[a] != nil && reach[a][col[b]/64]&(1<<(col[b]%64)) != 0 }

	cands := make([]int, 0, len(universe))
	for _, i := range universe {
		if i != start && i != end && reaches(start, i) && reaches(i, end) {
			cands = append(cands, i)
		}
	}
	sort.Slice(cands, func(x, y int) bool { return byTraffic(&m.States[cands[x]], &m.States[cands[y]]) })
	// direct counts the sessions' steps from a straight to b.
	direct := func(a, b int) int {
		n := 0
		for _, x := range out[a] {
			if x.to == b {
				n += x.count
			}
		}
		return n
	}
	// into lists the steps into each state: (from, count).
	type step struct{ from, count int }
	into := make([][]step, n)
	for f, as := range out {
		for _, x := range as {
			into[x.to] = append(into[x.to], step{f, x.count})
		}
	}
	// A detour that fewer sessions enter than half the steps that go
	// straight past it is not the road; one that more take is, as an
	// optional step (a greeting a third of the sessions make, the question
	// some agents ask first), as designers draw their flows. Nor is a
	// branch beside the road: a state whose steps come mostly from the road
	// before the gap, or from states refused so (trunkUpstream). A state
	// skipped is tried again in the next pass, since the states kept after
	// it may have left a gap that only it fills; and a gap that the
	// branch rule leaves without a move of its own is then filled without
	// it, so that the trunk stays a path. Since the states are taken in
	// order of sessions, a branch's next state may be kept before the
	// branch is refused: such a state is refused from the start of another
	// round (at most maxRoadRounds).
	var chain []int
	kept := make([]bool, n)
	refused := make([]bool, n)
	at := make([]int, n) // a kept state's place on the chain
	// fed is the share of the steps into c that come from the chain before
	// its i-th state or from states refused and not kept; with i -1, from
	// states refused, kept since or not. It is 0 below minTestCount steps.
	fed := func(i, c int) float64 {
		from, all := 0, 0
		for _, x := range into[c] {
			all += x.count
			before := i >= 0 && (x.from == start || kept[x.from]) && at[x.from] < i
			if before || (refused[x.from] && (i < 0 || !kept[x.from])) {
				from += x.count
			}
		}
		if all < minTestCount {
			return 0
		}
		return float64(from) / float64(all)
	}
	// fill keeps the states that fit the chain, until none does; strict,
	// by both rules, else only into gaps without a move of their own.
	fill := func(strict bool, pre []bool) bool {
		grew := false
		for changed := true; changed; {
			changed = false
			for _, c := range cands {
				if kept[c] {
					continue
				}
				i := 0
				for i+1 < len(chain) && !(reaches(chain[i], c) && reaches(c, chain[i+1])) {
					i++
				}
				if i+1 == len(chain) {
					continue
				}
				d := direct(chain[i], chain[i+1])
				if trunkDetour*m.States[c].Sessions <= d {
					continue
				}
				if strict && (pre[c] || fed(i, c) > trunkUpstream) {
					refused[c] = true
					continue
				}
				if !strict && d > 0 {
					continue
				}
				chain = slices.Insert(chain, i+1, c)
				kept[c], changed, grew = true, true, true
				for j := i + 1; j < len(chain); j++ {
					at[chain[j]] = j
				}
			}
		}
		return grew
	}
	pre := make([]bool, n) // refused from the start of a round
	for round := 0; ; round++ {
		chain = append(chain[:0], start, end)
		clear(kept)
		clear(refused)
		at[end] = 1
		for fill(true, pre) || fill(false, pre) {
		}
		more := false
		for _, c := range chain[1 : len(chain)-1] {
			if !pre[c] && fed(-1, c) > trunkUpstream {
				pre[c], more = true, true
			}
		}
		if !more || round+1 == maxRoadRounds {
			break
		}
	}
	if len(universe) < n {
		// A gap only states outside the universe fill: the shortest way
		// through them, so that the trunk stays a path.
		for i := 0; i+1 < len(chain); i++ {
			if direct(chain[i], chain[i+1]) == 0 {
				way := forwardWay(succ, chain[i], chain[i+1])
				chain = slices.Insert(chain, i+1, way...)
				i += len(way)
			}
		}
	}
	path := make([]string, 0, len(chain)-2)
	for _, v := range chain[1 : len(chain)-1] {
		path = append(path, m.States[v].ID)
	}
	return path
}

// forwardWay is the states strictly between a and b on a shortest path of
// succ's moves from a to b (breadth first, moves in succ's order); nil
// when b is a's successor or out of reach.
func forwardWay(succ [][]int, a, b int) []int {
	prev := map[int]int{a: -1}
	queue := []int{a}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if v == b {
			var way []int
			for u := prev[b]; u != a; u = prev[u] {
				way = append(way, u)
			}
			slices.Reverse(way)
			return way
		}
		for _, w := range succ[v] {
			if _, ok := prev[w]; !ok {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return nil
}

// topVariants lists the most frequent variants as state paths.
func (b *builder) topVariants(ids []string) []automaton.Variant {
	n := b.opt.TopVariants
	order := make([]int, len(b.vars))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return b.vars[order[i]].count > b.vars[order[j]].count })
	if n > len(order) {
		n = len(order)
	}
	out := make([]automaton.Variant, 0, n)
	for _, vi := range order[:n] {
		path := b.paths[vi]
		v := automaton.Variant{Count: b.vars[vi].count}
		for _, st := range path[1 : len(path)-1] {
			v.States = append(v.States, ids[st])
		}
		out = append(out, v)
	}
	return out
}

// Round3 rounds x to 3 decimals, as models and reports write times in
// milliseconds.
func Round3(x float64) float64 { return math.Round(x*1e3) / 1e3 }

// Round6 rounds x to 6 decimals, as models and reports write shares,
// probabilities and fitness.
func Round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// isRare says whether a transition taken count times, a share p of its
// source's outflow, is rare under the thresholds rareCount and rareRatio
// (see Options; 0 turns one off).
func isRare(count int, p float64, rareCount int, rareRatio float64) bool {
	return (rareCount > 0 && count < rareCount) || (rareRatio > 0 && p < rareRatio)
}

// transKeys returns the keys of the walked transitions in a fixed order: by
// source state, then by move (see lessMove).
func (b *builder) transKeys() []dkey {
	keys := make([]dkey, 0, len(b.trans))
	for k := range b.trans {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].from != keys[j].from {
			return keys[i].from < keys[j].from
		}
		return b.lessMove(keys[i].mv, keys[j].mv)
	})
	return keys
}
