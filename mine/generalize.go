package mine

import (
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/fsmine/fsmine/automaton"
)

// Generalisation with evidence.
//
// A map mined from the paths sessions took is exact but narrow: on real
// agent logs every session is a different combination of the same steps, and
// a held-out session often differs from every training path by one step
// skipped, two steps in the other order, or another outcome of a step. The
// miner adds such moves, marked as generalised, only where the log gives
// positive evidence for them near where they are added; a context the log
// saw often without a move never gains it.
//
// Each training path is edited once at each position, at the level of labels
// (L0 is the start, Ln+1 the end):
//
//   - skip: the visit of B between A and C is left out. The log must show B
//     left out on both sides of this place: after A ending with the same
//     event (A -e-> B -> C' and A -e-> C' both seen) and before C (A' -> B
//     -> C and A' -> C both seen). p is the lesser of the two rates at which
//     B was left out there; the context is the triple A→B→C.
//   - swap: the adjacent visits X, Y (X ≠ Y, each with its own event) change
//     places; p = c(Y→X) / (c(X→Y) + c(Y→X)), the context the quadruple
//     P→X→Y→Q.
//   - event: the visit of A ends with another event e' before C, where the
//     log shows A -e'-> C at another state of A, or where e and e' do not
//     decide what follows A (see neutral) and p, the share of C after e, is
//     tested over the visits of A ending with e'; or where C is A itself (a
//     retry, where A already repeats) and p is the share of visits of
//     other labels ending with e' that the same label follows, shown by at
//     least minRetryLabels labels (back-off from the label to the event).
//
// A skip or swap whose new move would carry an event to a label the log never
// showed after it is taken only when that event is how the label's visits
// usually end (outcomeFits): an outcome (not found, invalid, an error) is
// never carried to a successor that only another outcome led to. A skip
// that gives a label and event a successor the log never showed after them
// needs some successor of theirs seen only once (novel): a context that
// showed each of its successors again and again gains no new one.
//
// and one more, at the level of labels alone:
//
//   - follow: labels X and Y are followed by much the same labels (their
//     next-label distributions overlap by at least FollowOverlap) and have
//     some common ground before them (FollowBefore), a neighbour other than
//     the session's start and end in common, Y visited at least
//     FollowMinVisits times, and Z followed Y's
//     usual ending but never X; p is the share of Z after Y's usual ending,
//     the context every visit of X. The move X→Z is added from every state of X,
//     into the most visited state of Z, with the event that most often ends
//     X, where some training path into X, then Z, then some training path on
//     from Z's state keeps the constraints. On agent logs this is the second
//     request of a session. Where two or more labels like X show Z, their
//     shares also make a prior that X's visits without Z update (sharedRate):
//     one label's absence weighed against the agreement of its likes.
//
// An edit is taken when its absence in its context is not significant and
// the test could have said otherwise (plausible): p ≥ MinRate, and with n the
// times the log took the context without the edit, (1-p)^n ≥
// GeneralizeLevel. This is the test of a zero count against a rate estimated
// nearby, as PDFA smoothing borrows mass for unseen moves from related
// states (back-off), taken here as a yes or no.
//
// The constraints over whole sessions (constraints.go) are learned first, and
// an edit whose path would break one is dropped. The edited path is threaded
// through the learned automaton: a move the automaton has is followed, a
// missing one is added as a generalised transition into the state the
// original path visits for that step. An edit whose transitions would close a
// cycle that the observed transitions do not already close is dropped, but
// for a follow move into a component that holds a mined loop: the state
// then joins the loop (analyze.go's
// components) and the loop's cap, measured on real sessions, counts the move.
// So every cycle of the model is capped by a measured loop.

// FollowOverlap is how much the next labels of two labels must overlap (the
// sum over next labels of the lesser of their two shares) for what followed
// one to be allowed after the other.
const FollowOverlap = 0.3

// FollowBefore is how much the previous labels of two labels must overlap
// for what followed one to be allowed after the other: some common ground
// before them, not an acting step and the lookup it never follows. Chosen
// on a sweep (0, 0.05, 0.1, 0.15, 0.2, 0.3) over the agent truth and three
// real logs (docs/build.md): 0 let identification tools take the moves of
// lookups (generalisation precision 0.77 on the truth, from 1); above 0.1 cost
// tau-bench airline a second request after a baggage change.
const FollowBefore = 0.1

// FollowMinVisits is how many visits with a successor Y needs for what
// followed it to be evidence for X. A label seen twice is alike to every
// label seen twice in the same places: 5,000 sessions of 4 of 10,000 names
// (each seen twice) gained 1.5 million follow moves, a model of 214 MB in
// 68 s. 3 is the most that changes no model of the real logs and truths
// measured (96 builds, docs/performance.md); 4 drops 4 follow moves of
// tau2-bench's raw fine-tuned retail run (40 sessions) taken from labels
// seen 3 times; 5 drops 8 in its other retail and telecom runs.
const FollowMinVisits = 3

// MinRate is the least rate of a behaviour that generalisation takes as
// evidence: a behaviour seen in fewer than one in ten of the contexts
// where it could happen is too rare for its absence elsewhere to say
// anything (see plausible).
const MinRate = 0.1

// GeneralizeLevel is the significance level of the generalisation test: an
// edit is taken when the chance of never seeing it in its context, at its
// rate elsewhere, is at least this.
const GeneralizeLevel = 0.05

// Generalisation kinds, the values of automaton.Transition.Generalized.
const (
	GenSkip   = automaton.GenSkip
	GenSwap   = automaton.GenSwap
	GenEvent  = automaton.GenEvent
	GenFollow = automaton.GenFollow
	// GenAnyOrder marks the moves of GeneralizeAnyOrder.
	GenAnyOrder = automaton.GenAnyOrder
	// GenLoose marks the moves of GeneralizeLoose.
	GenLoose = automaton.GenLoose
)

type genEdge struct {
	to   int32
	kind string
}

type lpair struct{ a, c uint32 }
type ltri struct{ a, b, c uint32 }
type lquad struct{ p, x, y, q uint32 }
type levent struct{ a, e uint32 }
type lpairEv struct{ a, e, c uint32 }
type ltriEv struct{ a, e, b, c uint32 }

// genStats are the label-level counts of the training paths.
type genStats struct {
	pair   map[lpair]int
	tri    map[ltri]int
	quad   map[lquad]int
	visits map[uint32]int
	events map[levent]int
	pairEv map[lpairEv]int
	triEv  map[ltriEv]int // A -e-> B -> C, e the event ending A
	// leftSkip[A,e,B] and rightSkip[B,C]: how often B was left out, and
	// taken, after A ending with e (before C), over the contexts where
	// both were seen (see skipEvidence).
	leftSkip, leftTake   map[lpairEv]int
	rightSkip, rightTake map[lpair]int
	succEv               map[levent][]lpairEv  // the moves after each label and event; see neutral
	byLabel              map[uint32][]uint32   // events ending each label's visits; see eventsOf
	retry                map[uint32]retryCount // per event: the retries after it; see retryRate
	once                 map[levent]int        // per label and event: successors seen once; see novel
}

// genStats counts the training paths; labs holds each variant's labels
// (see labels).
func (b *builder) genStats(labs [][]uint32) *genStats {
	g := &genStats{
		pair: map[lpair]int{}, tri: map[ltri]int{}, quad: map[lquad]int{},
		visits: map[uint32]int{}, events: map[levent]int{}, pairEv: map[lpairEv]int{},
		triEv: map[ltriEv]int{}, retry: map[uint32]retryCount{},
	}
	for vi, v := range b.vars {
		lab := labs[vi]
		for j := 0; j+1 < len(lab); j++ {
			g.pair[lpair{lab[j], lab[j+1]}] += v.count
			if j+2 < len(lab) {
				g.tri[ltri{lab[j], lab[j+1], lab[j+2]}] += v.count
			}
			if j+3 < len(lab) {
				g.quad[lquad{lab[j], lab[j+1], lab[j+2], lab[j+3]}] += v.count
			}
		}
		// Visit i (label lab[i+1]) ends with the event of move i+1.
		for i := 0; i+1 < len(v.moves); i++ {
			a, e, c := v.moves[i].label(), v.moves[i+1].event(), v.moves[i+1].label()
			g.visits[a] += v.count
			g.events[levent{a, e}] += v.count
			g.pairEv[lpairEv{a, e, c}] += v.count
			if i+2 < len(v.moves) {
				g.triEv[ltriEv{a, e, c, v.moves[i+2].label()}] += v.count
			}
		}
	}
	g.skipEvidence()
	for k, n := range g.events {
		rc := g.retry[k.e]
		rc.ended += n
		if r := g.pairEv[lpairEv{k.a, k.e, k.a}]; r > 0 {
			rc.retried += r
			rc.labels++
		}
		g.retry[k.e] = rc
	}
	return g
}

// retryCount is, for one event, the visits it ended, how many of them the
// same label followed (retries), and the labels that show a retry.
type retryCount struct{ ended, retried, labels int }

// skipEvidence counts the local evidence for leaving B out. On the left,
// after A ending with e: the paths A -e-> B -> C' whose shortcut A -e-> C'
// the log also took (take), and how often it took the shortcut (skip). On
// the right, before C: the paths A' -> B -> C whose shortcut A' -> C the log
// also took. A context where B was never left out gives no evidence either
// way.
func (g *genStats) skipEvidence() {
	g.leftSkip, g.leftTake = map[lpairEv]int{}, map[lpairEv]int{}
	g.rightSkip, g.rightTake = map[lpair]int{}, map[lpair]int{}
	for t, n := range g.triEv {
		if t.b == t.c {
			continue
		}
		if k := g.pairEv[lpairEv{t.a, t.e, t.c}]; k > 0 {
			g.leftTake[lpairEv{t.a, t.e, t.b}] += n
			g.leftSkip[lpairEv{t.a, t.e, t.b}] += k
		}
	}
	for t, n := range g.tri {
		if t.a == t.b || t.b == t.c {
			continue
		}
		if k := g.pair[lpair{t.a, t.c}]; k > 0 {
			g.rightTake[lpair{t.b, t.c}] += n
			g.rightSkip[lpair{t.b, t.c}] += k
		}
	}
}

// outcomeFits says whether the move A -e-> C may be added: the log took it
// between these labels, or e is how visits of A usually end (more than half
// of them), so that no outcome that decides what comes next (not found,
// invalid, an error) is carried to a successor the log showed only after
// another outcome.
func (g *genStats) outcomeFits(a, e, c uint32) bool {
	if g.pairEv[lpairEv{a, e, c}] > 0 {
		return true
	}
	return 2*g.events[levent{a, e}] > g.visits[a]
}

// novel says whether A ending with e may gain C, a successor the log never
// showed after it: some successor of A -e-> was seen only once, so that the
// Good-Turing estimate of the chance of an unseen one (those seen once over
// the visits) is not zero. A context whose every successor the log showed
// again and again has shown all it has: 100 sessions of the agent truth,
// where the hand-off follows a lookup or a failed identification, gave
// "identified, then the hand-off" as a skip of the lookup without it.
func (g *genStats) novel(a, e, c uint32) bool {
	if g.pairEv[lpairEv{a, e, c}] > 0 {
		return true
	}
	if g.once == nil {
		g.once = map[levent]int{}
		for k, n := range g.pairEv {
			if n == 1 {
				g.once[levent{k.a, k.e}]++
			}
		}
	}
	return g.once[levent{a, e}] > 0
}

// NeutralOverlap is how much the next labels after two events of one
// label must overlap (the sum over next labels of the lesser of their two
// shares) for the events to count as not deciding what follows.
const NeutralOverlap = 0.6

// minNeutral is the fewest visits ending with each of two events that the
// neutrality test takes.
const minNeutral = 5

// neutral says whether visits of A ending with e and with alt are followed
// by much the same labels, each event seen at least minNeutral times: then
// the event is no outcome that decides the next step (an ok or an error of
// a lookup the agent goes on from either way), and a move after one may be
// taken after the other.
func (g *genStats) neutral(a, e, alt uint32) bool {
	ne, na := g.events[levent{a, e}], g.events[levent{a, alt}]
	if ne < minNeutral || na < minNeutral {
		return false
	}
	var common int64
	for _, k := range g.successors(a, e) {
		common += min(int64(g.pairEv[k])*int64(na), int64(g.pairEv[lpairEv{a, alt, k.c}])*int64(ne))
	}
	return float64(common) >= NeutralOverlap*float64(ne)*float64(na)
}

// successors returns the moves A -e-> C the log took, one for each C, in no
// particular order.
func (g *genStats) successors(a, e uint32) []lpairEv {
	if g.succEv == nil {
		g.succEv = map[levent][]lpairEv{}
		for k := range g.pairEv {
			g.succEv[levent{k.a, k.e}] = append(g.succEv[levent{k.a, k.e}], k)
		}
	}
	return g.succEv[levent{a, e}]
}

// minRetryLabels is the fewest other labels that must show a retry after
// an event for the retry to be a pattern of the event, not of one label.
const minRetryLabels = 2

// retryRate is the share of visits ending with e, of labels other than a,
// that the same label follows (a retry after an error), when at least
// minRetryLabels labels show it; else 0.
func (g *genStats) retryRate(a, e uint32) float64 {
	rc := g.retry[e]
	if own := g.pairEv[lpairEv{a, e, a}]; own > 0 {
		rc.retried -= own
		rc.labels--
	}
	rc.ended -= g.events[levent{a, e}]
	if rc.labels < minRetryLabels {
		return 0
	}
	return float64(rc.retried) / float64(rc.ended)
}

// labels returns the labels a path passes: the start's, each move's.
func (b *builder) labels(mvs []move) []uint32 {
	lab := make([]uint32, 0, len(mvs)+1)
	lab = append(lab, b.startLabel)
	for _, mv := range mvs {
		lab = append(lab, mv.label())
	}
	return lab
}

// plausible is the test: a behaviour at rate p, never seen in n tries, is
// plausible when its absence is not significant, (1-p)^n >= level. A rate
// below MinRate is no evidence: the test could not reject it for any n the
// log can have, so its absence would license the behaviour everywhere.
func plausible(p float64, n int) bool {
	if p < MinRate {
		return false
	}
	if p >= 1 {
		return n == 0
	}
	return float64(n)*math.Log1p(-p) >= math.Log(GeneralizeLevel)
}

// RunTail is the chance, per run of a label, that a run cap cuts a run the
// label's own runs make plausible (see runCaps).
const RunTail = 0.001

// runCaps returns, per label, the cap on its visits in a row: the most any
// session made, raised where the label's runs, fitted as geometric (each
// visit followed by another with the chance q the log shows: visits in
// runs less runs, over visits), make a longer run more likely than tail
// (RunTail, or AnyOrderRunTail for the any-order end).
// A run cap is there to stop a runaway repeat, not the next session's one
// more lookup than the longest seen: on 30 sessions of the agent truth,
// caps at the longest run denied 5% of its held-out sessions. A label the
// log never repeats keeps the cap 1: generalisation invents no repeat.
func runCaps(vars []variant, tail float64) map[uint32]int {
	longest := map[uint32]int{}
	runs, visits := map[uint32]int{}, map[uint32]int{}
	for _, v := range vars {
		run := 0
		for j, mv := range v.moves {
			if j > 0 && mv.label() == v.moves[j-1].label() {
				run++
			} else {
				run = 1
				runs[mv.label()] += v.count
			}
			visits[mv.label()] += v.count
			longest[mv.label()] = max(longest[mv.label()], run)
		}
	}
	caps := make(map[uint32]int, len(longest))
	for l, n := range longest {
		caps[l] = n
		if n < 2 {
			continue
		}
		q := float64(visits[l]-runs[l]) / float64(visits[l])
		if c := int(math.Ceil(math.Log(tail) / math.Log(q))); c > n {
			caps[l] = c
		}
	}
	return caps
}

// generalize adds the generalised transitions to b.gen; it runs after walk.
func (b *builder) generalize() error {
	g := b.newGeneralizer()
	switch b.opt.Generalize {
	case GeneralizeConstraints:
		return nil
	case GeneralizeAnyOrder, GeneralizeLoose:
		return b.anyOrder()
	}
	w := &editWalk{}
	for vi, v := range b.vars {
		w.v, w.path, w.lab = v, b.paths[vi], g.labs[vi]
		g.checkpoint(w)
		g.skips(w)
		g.swaps(w)
		g.events(w)
	}
	b.follow(g)
	return nil
}

// generalizer holds what the edits of generalize share: the log's counts,
// its constraints, the automaton's moves (observed and added so far) and
// the scratch of the walks.
type generalizer struct {
	b    *builder
	st   *genStats
	cons *automaton.PathChecker // the constraints, for the edited paths
	scc  []int                  // the components of the observed moves
	adj  [][]int32              // per state: the states its moves (observed and added) reach

	seen  []int32 // reaches' marks, valid where equal to stamp
	stamp int32
	// The scratch of one edit: its own moves and the states the original
	// path gives them, then the original's rest (rest and restTo, parts of
	// the variant's moves and path, not copies: a session of a million
	// steps edited at each would copy its rest a million times); and the
	// moves thread would add. See editLen, editMove and editTarget.
	mvs     []move
	targets []int32
	rest    []move
	restTo  []int32
	add     []dkey
	addTo   []int32
	occ     [][]pathPos // per state: places on training paths (followKeeps)
	prefix  []uint64    // the checker's state after a prefix (followKeeps)
	labs    [][]uint32  // per variant: its labels (see labels)
	evs     *eventEdits // the event edit's candidates (see events)
}

// editWalk is one variant as generalize edits it: its moves, the states it
// passes (path[0] the start, path[i+1] after move i) and its labels; and
// the constraint checker's state after each of its visits (see checkpoint).
type editWalk struct {
	v    variant
	path []int32
	lab  []uint32

	kept   bool     // the variant keeps every constraint
	stride int      // the length of one checker state
	states []uint64 // per j: the state after visiting lab[1..j], stride each
}

// checkpoint walks w's variant through the constraints once and keeps the
// checker's state after each visit, so that an edit at visit i is checked
// from the state the variant had there, and only until its path is back in
// the state the variant had at the same point: from there on the edited
// path visits what the variant visits, with the same verdicts.
func (g *generalizer) checkpoint(w *editWalk) {
	g.cons.Start()
	w.states = g.cons.AppendState(w.states[:0])
	w.stride = len(w.states)
	w.kept = true
	for _, mv := range w.v.moves {
		w.kept = g.cons.Visit(g.b.lg.names[mv.label()]) && w.kept
		w.states = g.cons.AppendState(w.states)
	}
}

// keepsEdit says whether an edit of w's variant keeps every constraint: the
// variant's visits lab[1..i], then g.mvs, whose moves from k on are the
// variant's own from move m on. It is keeps, resumed and cut short at the
// first point where the edited path is back in the variant's state.
func (g *generalizer) keepsEdit(w *editWalk, i, k, m int) bool {
	if !w.kept {
		return g.keeps(w.lab[1:i+1], slices.Concat(g.mvs, g.rest))
	}
	at := func(j int) []uint64 { return w.states[j*w.stride : (j+1)*w.stride] }
	g.cons.Resume(at(i))
	for t := range g.editLen() {
		mv := g.editMove(t)
		if !g.cons.Visit(g.b.lg.names[mv.label()]) {
			return false
		}
		if t+1 >= k && g.cons.InState(at(m+t+1-k)) {
			return true
		}
	}
	return true
}

// newGeneralizer prepares the edits: detour events, run caps, the log's
// counts and, first of all, its constraints.
func (b *builder) newGeneralizer() *generalizer {
	d := b.d
	keys := b.transKeys()
	g := &generalizer{b: b, adj: make([][]int32, len(d.label)), seen: make([]int32, len(d.label))}
	g.scc, _ = b.components(keys, false)
	for _, k := range keys {
		g.adj[k.from] = append(g.adj[k.from], b.trans[k].to)
	}
	// A detour's event marks a self-loop taken out of the flow; moves
	// that carry it elsewhere are no behaviour to generalise.
	b.detour = map[uint32]bool{}
	for id, name := range b.lg.names {
		if strings.HasPrefix(name, "detour:") {
			b.detour[uint32(id)] = true
		}
	}
	b.gen = map[dkey]genEdge{}
	tail := RunTail
	if b.anyOrderEnd() {
		tail = AnyOrderRunTail
	}
	b.maxRun = runCaps(b.vars, tail)
	g.labs = make([][]uint32, len(b.vars))
	for vi, v := range b.vars {
		g.labs[vi] = b.labels(v.moves)
	}
	g.st = b.genStats(g.labs)
	// An edit that breaks a constraint of the log would add a move no
	// session may take: the constraints come first.
	b.cons = b.constraints()
	g.cons = automaton.NewPathChecker(b.cons)
	return g
}

// keeps says whether the path through the labels prefix, then the moves'
// labels, keeps every constraint.
func (g *generalizer) keeps(prefix []uint32, mvs []move) bool {
	g.cons.Start()
	for _, l := range prefix {
		if !g.cons.Visit(g.b.lg.names[l]) {
			return false
		}
	}
	for _, mv := range mvs {
		if !g.cons.Visit(g.b.lg.names[mv.label()]) {
			return false
		}
	}
	return true
}

// next is the state the move leads to from state from, observed or added.
func (g *generalizer) next(from int32, mv move) (int32, bool) {
	if to, ok := g.b.d.next[dkey{from, mv}]; ok {
		return to, true
	}
	if e, ok := g.b.gen[dkey{from, mv}]; ok {
		return e.to, true
	}
	return 0, false
}

// reaches says whether state to can be reached from state from along the
// moves so far and the extra ones (extra[i] leading to extraTo[i]).
func (g *generalizer) reaches(from, to int32, extra []dkey, extraTo []int32) bool {
	g.stamp++
	stack := []int32{from}
	g.seen[from] = g.stamp
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if u == to {
			return true
		}
		visit := func(v int32) {
			if g.seen[v] != g.stamp {
				g.seen[v] = g.stamp
				stack = append(stack, v)
			}
		}
		for _, v := range g.adj[u] {
			visit(v)
		}
		for i, k := range extra {
			if k.from == u {
				visit(extraTo[i])
			}
		}
	}
	return false
}

// editLen is the length of the edit being made: its own moves and the
// original's rest.
func (g *generalizer) editLen() int { return len(g.mvs) + len(g.rest) }

// editMove is move t of the edit being made.
func (g *generalizer) editMove(t int) move {
	if t < len(g.mvs) {
		return g.mvs[t]
	}
	return g.rest[t-len(g.mvs)]
}

// editTarget is the state the original path gives move t of the edit.
func (g *generalizer) editTarget(t int) int32 {
	if t < len(g.mvs) {
		return g.targets[t]
	}
	return g.restTo[t-len(g.mvs)]
}

// thread walks an edited path from state from, where the path leaves the
// original: the edit's first edited moves are its own, the rest the
// original's, and editTarget gives each the state the original path gives
// it. It adds the missing moves as generalised transitions of kind, unless
// one would close a new cycle. Once the walk is back on the original path
// within its rest, the rest is the original's own.
func (g *generalizer) thread(from int32, edited int, kind string) {
	b, d := g.b, g.b.d
	g.add, g.addTo = g.add[:0], g.addTo[:0]
	cur := from
	rejoined := false
	for i := range g.editLen() {
		if i >= edited && cur == g.editTarget(i-1) {
			rejoined = true
			break
		}
		mv := g.editMove(i)
		if to, ok := g.next(cur, mv); ok {
			cur = to
			continue
		}
		found := false
		for j, k := range g.add {
			if k == (dkey{cur, mv}) {
				cur, found = g.addTo[j], true
				break
			}
		}
		if found {
			continue
		}
		to := g.editTarget(i)
		if d.label[to] != mv.label() || b.detour[mv.event()] {
			return
		}
		if g.scc[cur] != g.scc[to] && g.reaches(to, cur, g.add, g.addTo) {
			return
		}
		g.add = append(g.add, dkey{cur, mv})
		g.addTo = append(g.addTo, to)
		cur = to
	}
	if !rejoined && cur != b.end {
		return
	}
	for i, k := range g.add {
		b.gen[k] = genEdge{to: g.addTo[i], kind: kind}
		g.adj[k.from] = append(g.adj[k.from], g.addTo[i])
	}
}

// skips leaves out each middle visit of the walk where the log supports it.
// Visit i is move i, label lab[i+1], for i in 0..n-2 (move n-1 enters the
// end).
func (g *generalizer) skips(w *editWalk) {
	st, v, path, lab := g.st, w.v, w.path, w.lab
	n := len(v.moves)
	for i := 0; i+1 < n; i++ {
		a, bl, c := lab[i], lab[i+1], lab[i+2]
		if a == c || bl == c {
			continue // a repeat, which generalisation never invents
		}
		ea := v.moves[i].event() // the event ending the visit before B
		if !st.outcomeFits(a, ea, c) || !st.novel(a, ea, c) {
			continue
		}
		if st.pairEv[lpairEv{a, ea, c}] == 0 {
			// B must be left out near here: after A with the same
			// outcome, and before C, each at a rate the absence of a skip
			// from this context, seen n times, does not refute.
			l := lpairEv{a, ea, bl}
			r := lpair{bl, c}
			if st.leftSkip[l] == 0 || st.rightSkip[r] == 0 {
				continue
			}
			pl := float64(st.leftSkip[l]) / float64(st.leftSkip[l]+st.leftTake[l])
			pr := float64(st.rightSkip[r]) / float64(st.rightSkip[r]+st.rightTake[r])
			if !plausible(min(pl, pr), st.tri[ltri{a, bl, c}]) {
				continue
			}
		}
		g.mvs, g.targets = g.mvs[:0], g.targets[:0]
		// The move into C carries the event that ended the visit before B.
		g.mvs = append(g.mvs, mkMove(ea, c))
		g.targets = append(g.targets, path[i+2])
		g.rest, g.restTo = v.moves[i+2:], path[i+3:]
		if g.keepsEdit(w, i, 1, i+2) {
			g.thread(path[i], 1, GenSkip)
		}
	}
}

// swaps changes the places of visits i and i+1 (moves i and i+1), for i in
// 0..n-3, where the log supports it.
func (g *generalizer) swaps(w *editWalk) {
	st, v, path, lab := g.st, w.v, w.path, w.lab
	n := len(v.moves)
	for i := 0; i+2 < n; i++ {
		x, y := lab[i+1], lab[i+2]
		if x == y {
			continue
		}
		pp, q := lab[i], lab[i+3]
		if pp == y || x == q {
			continue // a repeat, which generalisation never invents
		}
		ep, ex, ey := v.moves[i].event(), v.moves[i+1].event(), v.moves[i+2].event() // the events ending P, X and Y
		if !st.outcomeFits(pp, ep, y) || !st.outcomeFits(y, ey, x) || !st.outcomeFits(x, ex, q) {
			continue
		}
		rev, fwd := st.pair[lpair{y, x}], st.pair[lpair{x, y}]
		pSwap := float64(rev) / float64(rev+fwd)
		if st.quad[lquad{pp, y, x, q}] == 0 && !plausible(pSwap, st.quad[lquad{pp, x, y, q}]) {
			continue
		}
		g.mvs, g.targets = g.mvs[:0], g.targets[:0]
		g.mvs = append(g.mvs, mkMove(ep, y), mkMove(ey, x), mkMove(ex, q))
		g.targets = append(g.targets, path[i+2], path[i+1], path[i+3])
		g.rest, g.restTo = v.moves[i+3:], path[i+4:]
		if g.keepsEdit(w, i, 3, i+3) {
			g.thread(path[i], 3, GenSwap)
		}
	}
}

// events ends visit i (label lab[i+1]) with another event before move i+1:
// towards a label the log shows after that very outcome of the label
// (generalising across the states of one label), or where the log shows
// that the two events do not decide what follows the label (see neutral)
// and the absence of the move after the other event is not significant.
//
// The other events tried at a place are those eventEdits keeps for it, in
// name order, as every event of the label would be: no other is taken, or
// adds a move.
func (g *generalizer) events(w *editWalk) {
	st, v, path, lab := g.st, w.v, w.path, w.lab
	if g.evs == nil {
		g.evs = g.b.eventEdits(st)
	}
	n := len(v.moves)
	for i := 0; i+1 < n; i++ {
		a, c, e := lab[i+1], lab[i+2], v.moves[i+1].event()
		if st.visits[a] == st.events[levent{a, e}] {
			continue // a single event ends A's visits
		}
		from, to := path[i+1], path[i+2]
		site := eventSite{from, to, c}
		open, known := g.evs.open[site]
		if !known {
			open = g.evs.start[lpair{a, c}]
		}
		like := g.evs.neutralTo(st, a, e)
		for _, alt := range g.evs.union(open, like) {
			if alt == e {
				continue
			}
			if st.pairEv[lpairEv{a, alt, c}] == 0 {
				switch {
				case g.evs.has(like, alt): // st.neutral(a, e, alt)
					p := float64(st.pairEv[lpairEv{a, e, c}]) / float64(st.events[levent{a, e}])
					if !plausible(p, st.events[levent{a, alt}]) {
						continue
					}
				case c == a:
					// A repeat of A after another event: a retry, where
					// the log shows retries after that event elsewhere.
					if !plausible(st.retryRate(a, alt), st.events[levent{a, alt}]) {
						continue
					}
				default:
					continue
				}
			}
			if next, ok := g.next(from, mkMove(alt, c)); ok && next == to {
				continue // the edited path is the original: thread adds nothing
			}
			g.mvs, g.targets = g.mvs[:0], g.targets[:0]
			g.mvs = append(g.mvs, mkMove(alt, c))
			g.targets = append(g.targets, to)
			g.rest, g.restTo = v.moves[i+2:], path[i+3:]
			g.thread(from, 1, GenEvent)
		}
		// An event whose move from here already leads where the original
		// goes changes nothing at this place again (moves are only ever
		// added, never changed): keep the others for the next visit.
		var kept []uint32
		if known {
			kept = open[:0] // this place's own list, filtered in place
		}
		for _, alt := range open {
			if next, ok := g.next(from, mkMove(alt, c)); !ok || next != to {
				kept = append(kept, alt)
			}
		}
		g.evs.open[site] = kept
	}
}

// eventEdits indexes the other events e' that the event edit may take at a
// visit of a label A followed by C, each list in name order: those with
// A -e'-> C in the log, those after which a retry of A is plausible (when C
// is A), and those that neutral finds like the visit's own event. Any other
// event of A fails all three tests, so an edit tries these alone: where
// events carry ids, a label ends its visits with thousands of events, and
// trying each of them at each visit grew with the square of the log (209 s
// at 100,000 events).
type eventEdits struct {
	// Per A and C: the events e' of A -e'-> C in the log and, when C is
	// A, those after which a retry of A is plausible (see retryRate).
	start    map[lpair][]uint32
	frequent map[uint32][]uint32 // per A: the events ending at least minNeutral of its visits
	like     map[levent][]uint32 // per A and e: the events of frequent that neutral finds like e
	neutral  map[uint32]*neutralIndex
	// Per place (a state of A, the state the original goes to, C): the
	// events of start whose edit may still add a move there. An event is
	// dropped once its move from the place leads where the original goes.
	open  map[eventSite][]uint32
	cands []uint32 // union's result
	rank  []int    // the builder's name ranks
}

// eventSite is a place of the event edit: the move into label c from state
// from, which the original path takes into state to.
type eventSite struct {
	from, to int32
	c        uint32
}

// eventEdits indexes the events of each label (see eventEdits).
func (b *builder) eventEdits(st *genStats) *eventEdits {
	x := &eventEdits{
		start: map[lpair][]uint32{}, frequent: map[uint32][]uint32{},
		like: map[levent][]uint32{}, open: map[eventSite][]uint32{}, rank: b.rank,
	}
	for a := range st.visits {
		// eventsOf is in name order, and so is each list built from it.
		var retry []uint32
		for _, e := range b.eventsOf(st, a) {
			for _, k := range st.successors(a, e) {
				x.start[lpair{a, k.c}] = append(x.start[lpair{a, k.c}], e)
			}
			if plausible(st.retryRate(a, e), st.events[levent{a, e}]) {
				retry = append(retry, e)
			}
			if st.events[levent{a, e}] >= minNeutral {
				x.frequent[a] = append(x.frequent[a], e)
			}
		}
		if len(retry) > 0 {
			x.start[lpair{a, a}] = slices.Clone(x.union(x.start[lpair{a, a}], retry))
		}
	}
	return x
}

// neutralTo returns the events neutral finds like e after A, in name order.
func (x *eventEdits) neutralTo(st *genStats, a, e uint32) []uint32 {
	ne := st.events[levent{a, e}]
	if ne < minNeutral {
		return nil // neutral passes no event
	}
	like, ok := x.like[levent{a, e}]
	if ok {
		return like
	}
	// neutral over every other frequent event (e is one), with e's
	// successors spread over an array by their place: a label whose
	// events carry ids has thousands of them, and the pairs' map lookups
	// took seconds.
	nx := x.neutralIndex(st, a)
	for _, k := range st.successors(a, e) {
		nx.buf[nx.place[k.c]] = int64(st.pairEv[k])
	}
	for j, alt := range x.frequent[a] {
		if alt == e {
			continue
		}
		na := nx.visits[j]
		var common int64
		for _, s := range nx.succ[j] {
			common += min(s.n*int64(ne), nx.buf[s.c]*na)
		}
		if float64(common) >= NeutralOverlap*float64(ne)*float64(na) {
			like = append(like, alt)
		}
	}
	for _, k := range st.successors(a, e) {
		nx.buf[nx.place[k.c]] = 0
	}
	x.like[levent{a, e}] = like
	return like
}

// neutralIndex holds the successors of a label's frequent events as
// neutralTo compares them: for the j-th event of frequent, its visits and
// its successors, each by its place among the label's successors (place)
// with its count.
type neutralIndex struct {
	visits []int64
	succ   [][]placeCount
	place  map[uint32]int32
	buf    []int64 // by place; zero between calls
}

type placeCount struct {
	c int32
	n int64
}

// neutralIndex returns A's neutralIndex, made on first use.
func (x *eventEdits) neutralIndex(st *genStats, a uint32) *neutralIndex {
	if nx := x.neutral[a]; nx != nil {
		return nx
	}
	nx := &neutralIndex{place: map[uint32]int32{}}
	for _, e := range x.frequent[a] {
		var succ []placeCount
		for _, k := range st.successors(a, e) {
			p, ok := nx.place[k.c]
			if !ok {
				p = int32(len(nx.place))
				nx.place[k.c] = p
			}
			succ = append(succ, placeCount{p, int64(st.pairEv[k])})
		}
		nx.visits = append(nx.visits, int64(st.events[levent{a, e}]))
		nx.succ = append(nx.succ, succ)
	}
	nx.buf = make([]int64, len(nx.place))
	if x.neutral == nil {
		x.neutral = map[uint32]*neutralIndex{}
	}
	x.neutral[a] = nx
	return nx
}

// has says whether the events es, in name order, hold e.
func (x *eventEdits) has(es []uint32, e uint32) bool {
	_, ok := slices.BinarySearchFunc(es, e, func(p, q uint32) int { return x.rank[p] - x.rank[q] })
	return ok
}

// union returns the events of p and q, each in name order, in name order
// and once each. The result is p or q, or else reused by the next call.
func (x *eventEdits) union(p, q []uint32) []uint32 {
	if len(q) == 0 {
		return p
	}
	if len(p) == 0 {
		return q
	}
	out := x.cands[:0]
	for len(p) > 0 || len(q) > 0 {
		switch {
		case len(q) == 0 || len(p) > 0 && x.rank[p[0]] < x.rank[q[0]]:
			out, p = append(out, p[0]), p[1:]
		case len(p) == 0 || x.rank[q[0]] < x.rank[p[0]]:
			out, q = append(out, q[0]), q[1:]
		default:
			out, p, q = append(out, p[0]), p[1:], q[1:]
		}
	}
	x.cands = out
	return out
}

// follow adds, for labels X and Y whose next labels and previous labels are
// much the same, the moves from X to what followed Y but never X.
func (b *builder) follow(g *generalizer) {
	d, st, scc := b.d, g.st, g.scc
	succ := map[uint32]map[uint32]int{}
	for k, n := range st.pair {
		if succ[k.a] == nil {
			succ[k.a] = map[uint32]int{}
		}
		succ[k.a][k.c] += n
	}
	tot := map[uint32]int{}
	for a, m := range succ {
		for _, n := range m {
			tot[a] += n
		}
	}
	pred := map[uint32]map[uint32]int{}
	ptot := map[uint32]int{}
	for k, n := range st.pair {
		if pred[k.c] == nil {
			pred[k.c] = map[uint32]int{}
		}
		pred[k.c][k.a] += n
		ptot[k.c] += n
	}
	// overlapAt says whether two distributions overlap by at least fo:
	// the sum over keys of the lesser of their shares, summed in integers
	// over the common denominator so that the test does not depend on the
	// order the map gives keys in.
	overlapAt := func(fo float64, mx, my map[uint32]int, tx, ty int) bool {
		var common int64
		for z, n := range mx {
			common += min(int64(n)*int64(ty), int64(my[z])*int64(tx))
		}
		return float64(common) >= fo*float64(tx)*float64(ty)
	}

	var labels []uint32
	for a := range succ {
		if a != b.startLabel {
			labels = append(labels, a)
		}
	}
	sort.Slice(labels, func(i, j int) bool { return b.rank[labels[i]] < b.rank[labels[j]] })
	// The most visited state of each label, and the event that most often
	// ends a label's visits.
	best := b.mostVisited()
	// The components that hold a mined loop: a follow move into one may
	// close a cycle through its source, which then joins the loop and its
	// measured cap (a second request after an action, where the log shows
	// one after a similar action).
	loop := map[int]bool{}
	size := map[int]int{}
	for s := range d.label {
		size[scc[s]]++
	}
	for k, t := range b.trans {
		if scc[k.from] == scc[t.to] && (k.from == t.to || size[scc[k.from]] > 1) {
			loop[scc[k.from]] = true
		}
	}
	topEvent := map[uint32]uint32{}
	for _, a := range labels {
		bestN := -1
		for _, e := range b.eventsOf(st, a) {
			if n := st.events[levent{a, e}]; n > bestN {
				bestN, topEvent[a] = n, e
			}
		}
	}
	// Only a label that shares a successor and a predecessor with X can be
	// like it (both overlaps are above 0); the start before and the end
	// after, every session's neighbours, are no common ground. So the
	// candidates are looked up through the other neighbours, among the
	// labels with FollowMinVisits visits: a log of ten thousand labels then
	// compares few pairs, even through a step every session passes.
	endLabel := b.lg.intern(automaton.EndID)
	before, after := map[uint32][]uint32{}, map[uint32][]uint32{}
	for _, y := range labels {
		if tot[y] < FollowMinVisits {
			continue
		}
		for z := range succ[y] {
			before[z] = append(before[z], y)
		}
		for p := range pred[y] {
			after[p] = append(after[p], y)
		}
	}
	statesOf := map[uint32][]int{}
	for u, l := range d.label {
		statesOf[l] = append(statesOf[l], u)
	}
	cand := map[uint32]bool{}
	for _, x := range labels {
		// The labels like X (below), whose shares of a Z pool as a prior
		// for X's (see sharedRate), once per Z.
		var like []uint32
		shared := map[uint32]float64{}
		clear(cand)
		for z := range succ[x] {
			if z != endLabel {
				for _, y := range before[z] {
					cand[y] = true
				}
			}
		}
		for p := range pred[x] {
			if p != b.startLabel {
				for _, y := range after[p] {
					cand[y] = true
				}
			}
		}
		ys := make([]uint32, 0, len(cand))
		for y := range cand {
			ys = append(ys, y)
		}
		sort.Slice(ys, func(i, j int) bool { return b.rank[ys[i]] < b.rank[ys[j]] })
		for _, y := range ys {
			if x == y {
				continue
			}
			if !overlapAt(FollowOverlap, succ[x], succ[y], tot[x], tot[y]) {
				continue
			}
			// X and Y must be alike in what comes before them too (each may
			// stand for the other on both sides): two acting steps after a
			// confirmation, not an acting step and a lookup that both lead
			// to the next order lookup, nor an identification and a lookup.
			if !overlapAt(FollowBefore, pred[x], pred[y], ptot[x], ptot[y]) {
				continue
			}
			like = append(like, y)
		}
		for _, y := range like {
			var zs []uint32
			for z := range succ[y] {
				if succ[x][z] == 0 && z != x {
					zs = append(zs, z)
				}
			}
			sort.Slice(zs, func(i, j int) bool { return b.rank[zs[i]] < b.rank[zs[j]] })
			for _, z := range zs {
				// Z must follow Y's usual ending, as the move carries X's:
				// a successor of an outcome (not found, an error) stays
				// that outcome's.
				// n is every visit of X with a successor, not only those
				// ending with its usual event: the stricter test.
				ey := levent{y, topEvent[y]}
				p := float64(st.pairEv[lpairEv{y, ey.e, z}]) / float64(st.events[ey])
				if !plausible(p, tot[x]) {
					r, ok := shared[z]
					if !ok {
						r = sharedRate(st, like, topEvent, z, tot[x])
						shared[z] = r
					}
					if r < MinRate {
						continue
					}
				}
				to, ok := best[z]
				if !ok {
					continue
				}
				mv := mkMove(topEvent[x], z)
				if b.detour[topEvent[x]] {
					continue
				}
				for _, u := range statesOf[x] {
					k := dkey{int32(u), mv}
					if _, ok := d.next[k]; ok {
						continue
					}
					if _, ok := b.gen[k]; ok {
						continue
					}
					if scc[u] != scc[to] && !loop[scc[to]] && g.reaches(to, int32(u), nil, nil) {
						continue
					}
					if !g.followKeeps(int32(u), z, to) {
						continue
					}
					b.gen[k] = genEdge{to: to, kind: GenFollow}
					g.adj[u] = append(g.adj[u], to)
				}
			}
		}
	}
}

// sharedRate is the rate of Z after X that the labels like X agree on, as
// X's own visits (n, none followed by Z) leave it: the shares of Z after
// the usual ending of those of like that show Z (two at least, else 0)
// make a beta prior by the method of moments, its mean their pooled share
// and its weight the more the less they differ beyond what their counts
// give by chance (at most their visits), and the mean of the posterior is
// returned. Where several like X show Z at one rate, X's visits without Z
// count against that evidence, not against a test at each label's rate
// alone: 100 sessions of the agent truth showed a second request after
// each acting step but one, 14 of 81 times after the others and none in 27
// after that one, which the test refuses (0.83^27 < 0.05) but the truth
// allows as often as after the others. A context seen often without the
// move still never gains it: X's absence counts as a difference from its
// likes once it is stranger than RunTail at their rate, and the posterior
// falls under MinRate once n outweighs the prior.
func sharedRate(st *genStats, like []uint32, topEvent map[uint32]uint32, z uint32, n int) float64 {
	var shows, visits, k int
	for _, y := range like {
		ey := levent{y, topEvent[y]}
		if c := st.pairEv[lpairEv{y, ey.e, z}]; c > 0 && st.events[ey] > 0 {
			shows += c
			visits += st.events[ey]
			k++
		}
	}
	if k < 2 {
		return 0
	}
	mu := float64(shows) / float64(visits)
	if mu >= 1 {
		return 0
	}
	// X must be one of them: its visits without Z no stranger, at their
	// rate, than the tail the caps allow (RunTail). 3,000 visits without a
	// move its likes take half the time are no rare sample.
	if float64(n)*math.Log1p(-mu) < math.Log(RunTail) {
		return 0
	}
	var spread float64 // the visits-weighted variance of their shares
	for _, y := range like {
		ey := levent{y, topEvent[y]}
		if c, m := st.pairEv[lpairEv{y, ey.e, z}], st.events[ey]; c > 0 && m > 0 {
			d := float64(c)/float64(m) - mu
			spread += float64(m) * d * d
		}
	}
	spread /= float64(visits)
	weight := float64(visits)
	if between := spread - mu*(1-mu)*float64(k)/float64(visits); between > 0 {
		weight = min(weight, mu*(1-mu)/between-1)
	}
	if weight <= 0 {
		return 0
	}
	return mu * weight / (weight + float64(n))
}

// mostVisited returns each label's most visited state (the first of those
// tied), the start aside.
func (b *builder) mostVisited() map[uint32]int32 {
	best := map[uint32]int32{}
	for s, l := range b.d.label {
		if s == 0 {
			continue
		}
		if cur, ok := best[l]; !ok || b.visits[s] > b.visits[cur] {
			best[l] = int32(s)
		}
	}
	return best
}

// followKeeps says whether the move from state u into label z, then on from
// state to, keeps the constraints on some path the log took: a prefix of a
// training path into u, then z, then the rest of a training path from to
// (the first maxSamples of each).
func (g *generalizer) followKeeps(u int32, z uint32, to int32) bool {
	if len(g.b.cons) == 0 {
		return true
	}
	if g.occ == nil {
		g.occ = make([][]pathPos, len(g.b.d.label))
		for vi, path := range g.b.paths {
			for i, s := range path {
				if len(g.occ[s]) < maxSamples {
					g.occ[s] = append(g.occ[s], pathPos{int32(vi), int32(i)})
				}
			}
		}
	}
	names := g.b.lg.names
	for _, pu := range g.occ[u] {
		// The prefix is walked once, each rest from the state it leaves.
		if !g.keeps(g.labs[pu.v][1:pu.i+1], nil) {
			continue
		}
		g.prefix = g.cons.AppendState(g.prefix[:0])
	rests:
		for _, pt := range g.occ[to] {
			g.cons.Resume(g.prefix)
			if !g.cons.Visit(names[z]) {
				continue
			}
			for _, mv := range g.b.vars[pt.v].moves[pt.i:] {
				if !g.cons.Visit(names[mv.label()]) {
					continue rests
				}
			}
			return true
		}
	}
	return false
}

// maxSamples is how many training paths through a state followKeeps tries.
const maxSamples = 8

// pathPos is a place on a training path: variant v, after its i-th move.
type pathPos struct{ v, i int32 }

// eventsOf returns the events that end visits of label a, in name order.
func (b *builder) eventsOf(st *genStats, a uint32) []uint32 {
	if st.byLabel == nil {
		st.byLabel = map[uint32][]uint32{}
		for k := range st.events {
			st.byLabel[k.a] = append(st.byLabel[k.a], k.e)
		}
		for _, es := range st.byLabel {
			sort.Slice(es, func(i, j int) bool { return b.rank[es[i]] < b.rank[es[j]] })
		}
	}
	return st.byLabel[a]
}
