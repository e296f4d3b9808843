// Package conform checks sessions against a model (automaton.Model): does a
// session follow the model, where does it first leave it, and how far is it
// from the nearest path of the model. It never prints.
//
// The first deviation comes from replaying the session's moves with
// automaton.Model.Next. The distance is an optimal alignment (van der Aalst, Adriansyah & van
// Dongen, "Replaying history on process models for conformance checking and
// performance analysis", 2012): a shortest path through the product of the
// session and the automaton, whose nodes are (moves consumed, model state)
// and whose edges are synchronous moves (the model takes the session's move:
// cost 0), log moves (the session's move is skipped: cost 1) and model moves
// (the model takes a transition the session did not: cost 1). The costs are
// 0 or 1, so the search is A* over a bucket queue with a consistent
// heuristic (see alignHeuristic); fitness is normalised as pm4py normalises
// alignment fitness: 1 - cost / (moves in the session + moves in the
// shortest path of the model from start to end), the second term being the
// cost of the worst sensible alignment (skip the whole session, walk the
// model's shortest path).
package conform

import (
	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/internal/risk"
	"github.com/fsmine/fsmine/automaton/internal/rules"
)

// Deviation kinds, the Kind of a Deviation.
const (
	// KindUnknownState: the session enters a label that no state of the
	// model carries.
	KindUnknownState = "unknown_state"
	// KindIllegalTransition: the label is known but the model has no such
	// move (event and next label) out of the current state.
	KindIllegalTransition = "illegal_transition"
	// KindLoopCap: the move is a transition of the model, but it takes a
	// loop's back edges more often in one stay than the loop's cap.
	KindLoopCap = "loop_cap"
	// KindIncomplete: the session's last move, into automaton.EndID, is not a
	// transition of the model: the model never ends there, or not with
	// that event.
	KindIncomplete = "incomplete"
	// KindRare: the move takes a transition flagged rare; a deviation only
	// with Options.RareIsDeviation.
	KindRare = "rare"
	// KindGeneralized: the move takes a generalised transition, one no
	// session the model was mined from took; a deviation only with
	// Options.GeneralizedIsDeviation.
	KindGeneralized = "generalized"
	// KindRepeatCap: the move is a transition of the model, but it makes
	// more visits of one label in a row than the state's MaxRun.
	KindRepeatCap = "repeat_cap"
	// KindUnusualCap: the move is a transition of the model flagged rare
	// or generalised, one more than Options.MaxUnusual allows a session.
	KindUnusualCap = "unusual_cap"
	// KindUnusualRun: the move is a transition of the model flagged rare or
	// generalised, one more in a row than Options.MaxUnusualRun allows.
	KindUnusualRun = "unusual_run"
)

// Step verdicts, the Verdict of a Step.
const (
	StepOK         = "ok"
	StepRare       = "rare"        // a transition of the model flagged rare
	StepGeneral    = "generalized" // a generalised transition of the model (see automaton.Transition.Generalized)
	StepLoopCap    = "loop_cap"    // a transition of the model, beyond its loop's cap
	StepRepeatCap  = "repeat_cap"  // a transition of the model, beyond its target's MaxRun
	StepUnusualCap = "unusual_cap" // a rare or generalised transition, beyond Options.MaxUnusual
	StepUnusualRun = "unusual_run" // a rare or generalised transition, one in a row beyond Options.MaxUnusualRun
	StepIllegal    = "illegal"     // no such transition; the label is the model's
	StepUnknown    = "unknown"     // the label is no state's
	StepIncomplete = "incomplete"  // no such transition into automaton.EndID
	StepLost       = "lost"        // not checked: the state before the move is not known
	// A transition of the model that breaks one of its constraints (see
	// Constraint): the verdicts are the deviation kinds.
	StepMissingPrerequisite = automaton.KindMissingPrerequisite
	StepOnceOnly            = automaton.KindOnceOnly
	StepRerun               = automaton.KindRerun
	StepNotBoth             = automaton.KindNotBoth
)

// DefaultMaxAlignStates is the number of alignment search nodes Options
// allows per session when MaxAlignStates is 0.
const DefaultMaxAlignStates = 1 << 20

// Options shape a Checker.
type Options struct {
	// RareIsDeviation makes taking a rare transition a deviation (KindRare)
	// instead of a counted pass.
	RareIsDeviation bool
	// GeneralizedIsDeviation makes taking a generalised transition a
	// deviation (KindGeneralized) instead of a counted pass: the model as
	// the sessions it was mined from took it, and no more.
	GeneralizedIsDeviation bool
	// MaxUnusual, when above 0, is the most unusual moves a session may
	// take: transitions flagged rare or generalised, the moves the sessions
	// the model was mined from seldom or never made where they were. The
	// next one is a deviation (KindUnusualCap): a session may wander from
	// the common paths a little, not at every step. 0 means no cap (for
	// none at all, RareIsDeviation and GeneralizedIsDeviation).
	MaxUnusual int
	// MaxUnusualRun, when above 0, is the most unusual moves a session may
	// take in a row; the next one is a deviation (KindUnusualRun). A
	// session that leaves the common paths for a move and comes back passes;
	// one that runs through the map's unusual moves one after another, as a
	// step left out or two steps swapped make it do, does not. 0 means no
	// cap.
	MaxUnusualRun int
	// MaxAlignStates bounds the alignment search of one session: after
	// expanding this many (position, state) nodes the search stops and the
	// cost of a greedy alignment is reported instead, with Bounded set.
	// 0 means DefaultMaxAlignStates.
	MaxAlignStates int
	// LoopCaps overrides the cap of loops, by index into automaton.Model.Loops; a
	// loop not in the map is capped at its MaxIterations. A cap <= 0 means
	// no cap.
	LoopCaps map[int]int
}

// Deviation is where a session first leaves the model.
type Deviation struct {
	Kind string
	// Move is the index of the offending move in the session's moves; it is
	// len(moves) when the moves stop before automaton.EndID.
	Move int
	// State is the state the session was in; Event and Label the move.
	State, Event, Label string
	// Loop (an index into automaton.Model.Loops), Iterations and Cap are set for
	// KindLoopCap; Loop is -1 otherwise. For KindRepeatCap, Iterations is
	// the visits of the label in a row and Cap the state's MaxRun; for
	// KindUnusualCap, the unusual moves taken and Options.MaxUnusual; for
	// KindUnusualRun, the unusual moves in a row and Options.MaxUnusualRun.
	Loop, Iterations, Cap int
	// Constraint is the constraint the move breaks, for the constraint
	// kinds (automaton.KindMissingPrerequisite, automaton.KindOnceOnly, automaton.KindNotBoth, automaton.KindRerun); nil
	// otherwise.
	Constraint *automaton.Constraint
}

// Verdict is the conformance of one session.
type Verdict struct {
	// Moves is the number of moves in the session, the move into automaton.EndID
	// included.
	Moves int
	// Deviation is the first deviation, nil when the session fits.
	Deviation *Deviation
	// Rare counts the rare transitions taken before the first move the
	// model has no transition for (all of them when there is none).
	Rare int
	// Generalized counts the generalised transitions taken, likewise.
	Generalized int
	// Cost is the cost of an optimal alignment: 0 exactly when the moves
	// are a path of the model (a session that deviates only by KindLoopCap,
	// KindRare or a constraint's kind costs 0).
	Cost int
	// MaxCost is Moves plus the length of the model's shortest path from
	// automaton.StartID to automaton.EndID: the cost of skipping every move of the session.
	MaxCost int
	// Fitness is 1 - Cost/MaxCost.
	Fitness float64
	// Bounded says that the alignment search hit Options.MaxAlignStates:
	// Cost is then that of a greedy alignment, an upper bound, and Fitness a
	// lower bound.
	Bounded bool
	// Risk is the session's surprisal under the model (see Risk): every
	// move counts, those after a deviation too.
	Risk Risk
}

// Fits reports whether the session has no deviation.
func (v *Verdict) Fits() bool { return v.Deviation == nil }

// Outside reports whether the session is not a path of the model: some move
// has no transition, so that its alignment costs something.
func (v *Verdict) Outside() bool { return v.Cost > 0 }

// Step is one move of a replay (see Checker.Replay).
type Step struct {
	// Move is the index of the move in the session.
	Move int
	// From is the state before the move and To the state after it; either
	// is "" when not known. After a move the model has no transition for,
	// To is the one state that carries the move's label, if exactly one
	// does (the replay resynchronises there, Resync), else "".
	From, To string
	// Transition is the model's transition for the move, nil when none (or
	// when From is not known).
	Transition *automaton.Transition
	// Verdict is one of the Step* constants.
	Verdict string
	Resync  bool
	// Loop is the index into automaton.Model.Loops of the loop the move stays in, or
	// -1; Iteration the back-edge traversals of this stay so far, this move
	// included, and Cap the loop's cap (0: none).
	Loop, Iteration, Cap int
	// Run and MaxRun are set for StepRepeatCap: the visits of the label in
	// a row, this one included, and the state's MaxRun.
	Run, MaxRun int
	// Unusual and MaxUnusual are set for StepUnusualCap: the rare and
	// generalised transitions taken, this one included, and the cap.
	Unusual, MaxUnusual int
	// UnusualRun and MaxUnusualRun are set for StepUnusualRun: the rare
	// and generalised transitions taken in a row, this one included, and
	// the cap.
	UnusualRun, MaxUnusualRun int
	// Constraint is the constraint the move breaks, for the constraint
	// verdicts; nil otherwise.
	Constraint *automaton.Constraint
}

// Checker checks sessions against one model. It keeps scratch space between
// calls and is not safe for concurrent use; make one per goroutine. It must
// not outlive changes to the model.
type Checker struct {
	m          *automaton.Model
	opt        Options
	ids        []string
	state      map[string]int32
	start, end int32
	syms       map[automaton.Move]int32 // (event, next label) of some transition -> symbol
	next       map[uint64]int32         // from<<32 | symbol -> index into m.Transitions
	trans      []ctrans                 // parallel to m.Transitions
	out        [][]int32                // per state: its transitions, in m.Transitions order
	unique     map[string]int32         // label -> its state when one state has it, else -1
	dist       []int32                  // fewest moves from a state to automaton.EndID; -1: unreachable
	loopOf     []int32                  // per state: index into m.Loops, or -1
	caps       []int                    // per loop: the cap, 0 for none
	maxRun     []int                    // per state: its MaxRun, 0 for none
	labelOf    []string                 // per state: its label
	rules      *rules.Set               // the model's constraints, nil for none
	seen       []uint64                 // the constrained labels a walk visited
	risk       *risk.Tables

	// Alignment scratch, reused across sessions.
	a alignScratch
}

type ctrans struct {
	from, to   int32
	sym        int32
	rare, back bool
	general    bool
}

// New prepares m for checking. m must be valid (see automaton.Model.Validate).
func New(m *automaton.Model, opt Options) *Checker {
	if opt.MaxAlignStates <= 0 {
		opt.MaxAlignStates = DefaultMaxAlignStates
	}
	c := &Checker{
		m:      m,
		opt:    opt,
		state:  make(map[string]int32, len(m.States)),
		syms:   map[automaton.Move]int32{},
		next:   make(map[uint64]int32, len(m.Transitions)),
		unique: map[string]int32{},
		start:  -1,
		end:    -1,
	}
	for i, s := range m.States {
		c.maxRun = append(c.maxRun, s.MaxRun)
		c.labelOf = append(c.labelOf, s.Label)
		c.ids = append(c.ids, s.ID)
		c.state[s.ID] = int32(i)
		if _, seen := c.unique[s.Label]; seen {
			c.unique[s.Label] = -1
		} else {
			c.unique[s.Label] = int32(i)
		}
		switch s.ID {
		case automaton.StartID:
			c.start = int32(i)
		case automaton.EndID:
			c.end = int32(i)
		}
	}
	c.out = make([][]int32, len(m.States))
	c.trans = make([]ctrans, len(m.Transitions))
	for i, t := range m.Transitions {
		from, to := c.state[t.From], c.state[t.To]
		mv := automaton.Move{Event: t.Event, Label: m.States[to].Label}
		sym, ok := c.syms[mv]
		if !ok {
			sym = int32(len(c.syms))
			c.syms[mv] = sym
		}
		c.trans[i] = ctrans{from: from, to: to, sym: sym, rare: t.Rare, back: t.BackEdge, general: t.Generalized != ""}
		c.next[uint64(from)<<32|uint64(sym)] = int32(i)
		c.out[from] = append(c.out[from], int32(i))
	}
	c.distances()
	c.rules = compileConstraints(m.Constraints)
	c.seen = c.rules.Seen()
	c.risk = risk.New(m)
	c.loopOf = make([]int32, len(m.States))
	for i := range c.loopOf {
		c.loopOf[i] = -1
	}
	c.caps = make([]int, len(m.Loops))
	for li, l := range m.Loops {
		for _, id := range l.States {
			if s, ok := c.state[id]; ok {
				c.loopOf[s] = int32(li)
			}
		}
		c.caps[li] = max(l.MaxIterations, 0)
		if cp, ok := opt.LoopCaps[li]; ok {
			c.caps[li] = max(cp, 0)
		}
	}
	return c
}

// distances fills dist by a breadth-first search back from automaton.EndID.
func (c *Checker) distances() {
	n := len(c.ids)
	c.dist = make([]int32, n)
	for i := range c.dist {
		c.dist[i] = -1
	}
	if c.end < 0 {
		return
	}
	in := make([][]int32, n)
	for _, t := range c.trans {
		in[t.to] = append(in[t.to], t.from)
	}
	c.dist[c.end] = 0
	queue := []int32{c.end}
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		for _, p := range in[q] {
			if c.dist[p] < 0 {
				c.dist[p] = c.dist[q] + 1
				queue = append(queue, p)
			}
		}
	}
}

// Model returns the model the checker checks against.
func (c *Checker) Model() *automaton.Model { return c.m }

// ShortestPath returns the number of moves of the model's shortest path from
// automaton.StartID to automaton.EndID, or -1 when automaton.EndID cannot be reached.
func (c *Checker) ShortestPath() int {
	if c.start < 0 {
		return -1
	}
	return int(c.dist[c.start])
}

// Cap returns the cap of loop li (an index into automaton.Model.Loops), 0 for none.
func (c *Checker) Cap(li int) int { return c.caps[li] }

// walker is the state of a replay between moves.
type walker struct {
	at    int32 // current state, -1 when lost
	loop  int32 // loop of the current stay, -1 for none
	iters int   // back edges taken in the stay
	run   int   // visits of the current state's label in a row
	// unusual counts the rare and generalised transitions taken, oddRun
	// those in a row up to the last move.
	unusual, oddRun int
	seen            []uint64
	broke           int // the constraint the last step broke, -1 for none
}

// walk starts a walk at automaton.StartID, with the checker's scratch for the
// constrained labels visited.
func (c *Checker) walk() walker {
	clear(c.seen)
	return walker{at: c.start, loop: -1, seen: c.seen, broke: -1}
}

// step replays one move. It returns the step's verdict and, for a move the
// model has, the transition's index (else -1).
func (c *Checker) step(w *walker, mv automaton.Move) (verdict string, ti int32) {
	w.broke = -1
	broke, ci := c.rules.Check(w.seen, mv.Label)
	c.rules.Visit(w.seen, mv.Label)
	if w.at < 0 {
		w.at, w.loop, w.iters, w.run, w.oddRun = c.resync(mv.Label), -1, 0, 1, 0
		return StepLost, -1
	}
	ti = -1
	if sym, ok := c.syms[mv]; ok {
		if i, ok := c.next[uint64(w.at)<<32|uint64(sym)]; ok {
			ti = i
		}
	}
	if ti < 0 {
		verdict = StepIllegal
		switch {
		case mv.Label == automaton.EndID:
			verdict = StepIncomplete
		case !c.m.HasLabel(mv.Label):
			verdict = StepUnknown
		}
		w.at, w.loop, w.iters, w.run, w.oddRun = c.resync(mv.Label), -1, 0, 1, 0
		return verdict, -1
	}
	t := &c.trans[ti]
	lf := c.loopOf[w.at]
	switch {
	case lf < 0 || c.loopOf[t.to] != lf:
		w.loop, w.iters = -1, 0
	case w.loop != lf:
		w.loop, w.iters = lf, 0
	}
	if w.at >= 0 && c.labelOf[w.at] == c.labelOf[t.to] {
		w.run++
	} else {
		w.run = 1
	}
	w.at = t.to
	verdict = StepOK
	if t.back && w.loop >= 0 {
		w.iters++
	}
	switch {
	case t.rare && (!t.general || c.opt.RareIsDeviation):
		// A transition marked both (a hand edit) is rare where rare moves
		// are deviations, as the guard denies it, else generalised.
		verdict = StepRare
		w.unusual++
		w.oddRun++
	case t.general:
		verdict = StepGeneral
		w.unusual++
		w.oddRun++
	default:
		w.oddRun = 0
	}
	if cp := c.maxRun[t.to]; cp > 0 && w.run > cp {
		return StepRepeatCap, ti
	}
	if t.back && w.loop >= 0 {
		if cp := c.caps[w.loop]; cp > 0 && w.iters > cp {
			return StepLoopCap, ti
		}
	}
	// In the guard's order: a move that is a deviation on its own (rare or
	// generalised, as the options ask), then the cap, then the constraints.
	if verdict != StepOK {
		switch {
		case verdict == StepGeneral && c.opt.GeneralizedIsDeviation, verdict == StepRare && c.opt.RareIsDeviation:
			return verdict, ti
		case c.opt.MaxUnusual > 0 && w.unusual > c.opt.MaxUnusual:
			return StepUnusualCap, ti
		case c.opt.MaxUnusualRun > 0 && w.oddRun > c.opt.MaxUnusualRun:
			return StepUnusualRun, ti
		}
	}
	if broke != "" {
		w.broke = ci
		return broke, ti
	}
	return verdict, ti
}

// resync returns the one state that carries label, or -1.
func (c *Checker) resync(label string) int32 {
	if s, ok := c.unique[label]; ok {
		return s
	}
	return -1
}

// Check checks one session, given as its moves (see mine's Log.Moves: a move
// out of automaton.StartID with an empty event first, a move into automaton.EndID last). It
// computes an alignment only for sessions that are not paths of the model,
// so that checking a fitting session costs one map lookup per move.
func (c *Checker) Check(moves []automaton.Move) Verdict {
	v := Verdict{Moves: len(moves), MaxCost: len(moves) + c.ShortestPath(), Risk: Risk{MaxMove: -1}}
	w := c.walk()
	path := c.start >= 0
	scored := false // the rest of the moves' risk is in v.Risk
	for i, mv := range moves {
		from := w.at
		verdict, ti := c.step(&w, mv)
		switch {
		case scored:
		case ti >= 0:
			v.Risk.add(i, c.risk.Trans[ti], c.ids[from])
		default:
			c.riskRest(&v.Risk, moves[i:], i, from)
			scored = true
		}
		dev := ""
		switch verdict {
		case StepRare:
			v.Rare++
			if c.opt.RareIsDeviation {
				dev = KindRare
			}
		case StepGeneral:
			v.Generalized++
			if c.opt.GeneralizedIsDeviation {
				dev = KindGeneralized
			}
		case StepLoopCap:
			dev = KindLoopCap
		case StepRepeatCap:
			dev = KindRepeatCap
		case StepUnusualCap, StepUnusualRun:
			dev = verdict
			// Counted as Check counts the moves it lets pass.
			if c.trans[ti].general {
				v.Generalized++
			} else {
				v.Rare++
			}
		case StepIllegal:
			dev = KindIllegalTransition
		case StepUnknown:
			dev = KindUnknownState
		case StepIncomplete:
			dev = KindIncomplete
		case StepMissingPrerequisite, StepOnceOnly, StepNotBoth, StepRerun:
			dev = verdict
		}
		if dev != "" && v.Deviation == nil {
			d := &Deviation{Kind: dev, Move: i, Event: mv.Event, Label: mv.Label, Loop: -1}
			if from >= 0 {
				d.State = c.ids[from]
			}
			switch dev {
			case KindLoopCap:
				d.Loop, d.Iterations, d.Cap = int(w.loop), w.iters, c.caps[w.loop]
			case KindRepeatCap:
				d.Iterations, d.Cap = w.run, c.maxRun[w.at]
			case KindUnusualCap:
				d.Iterations, d.Cap = w.unusual, c.opt.MaxUnusual
			case KindUnusualRun:
				d.Iterations, d.Cap = w.oddRun, c.opt.MaxUnusualRun
			case automaton.KindMissingPrerequisite, automaton.KindOnceOnly, automaton.KindNotBoth, automaton.KindRerun:
				d.Constraint = &c.m.Constraints[w.broke]
			}
			v.Deviation = d
		}
		if w.at < 0 || verdict == StepIllegal || verdict == StepUnknown || verdict == StepIncomplete {
			path = false
			break
		}
	}
	if path && w.at != c.end {
		path = false
		if v.Deviation == nil {
			v.Deviation = &Deviation{Kind: KindIncomplete, Move: len(moves), State: c.ids[w.at], Loop: -1}
		}
	}
	if !path {
		al := c.align(moves, false)
		v.Cost, v.MaxCost, v.Bounded = al.Cost, al.MaxCost, al.Bounded
	}
	v.Fitness = fitness(v.Cost, v.MaxCost)
	return v
}

// riskRest adds to r the cost of moves, the rest of a session from move i
// on, made from state at (-1: not known).
func (c *Checker) riskRest(r *Risk, moves []automaton.Move, i int, at int32) {
	for k, mv := range moves {
		from := ""
		if at >= 0 {
			from = c.ids[at]
		}
		if at >= 0 {
			if sym, ok := c.syms[mv]; ok {
				if ti, ok := c.next[uint64(at)<<32|uint64(sym)]; ok {
					r.add(i+k, c.risk.Trans[ti], from)
					at = c.trans[ti].to
					continue
				}
			}
		}
		b, to := c.risk.Unseen(int(at), mv.Label)
		r.add(i+k, b, from)
		at = int32(to)
	}
}

// Fits reports whether moves are a path of the model from automaton.StartID to automaton.EndID
// within every loop cap: Check's verdict without its alignment, for callers
// that only count fitting sessions.
func (c *Checker) Fits(moves []automaton.Move) bool {
	i, _ := c.Miss(moves)
	return i < 0
}

// Miss is Fits told apart: the index of the first move that breaks the
// model and its step verdict (StepIllegal, StepLoopCap, a constraint's
// kind...; StepIncomplete at the move into automaton.EndID when the model
// has no such transition), len(moves) and StepIncomplete when the moves
// end elsewhere than automaton.EndID, 0 and StepUnknown for a model
// without a start, or -1 and StepOK when they fit.
func (c *Checker) Miss(moves []automaton.Move) (int, string) {
	if c.start < 0 {
		return 0, StepUnknown
	}
	w := c.walk()
	for i, mv := range moves {
		switch verdict, _ := c.step(&w, mv); verdict {
		case StepOK:
		case StepRare:
			if c.opt.RareIsDeviation {
				return i, verdict
			}
		case StepGeneral:
			if c.opt.GeneralizedIsDeviation {
				return i, verdict
			}
		default:
			return i, verdict
		}
	}
	if w.at != c.end {
		return len(moves), StepIncomplete
	}
	return -1, StepOK
}

func fitness(cost, maxCost int) float64 {
	if maxCost <= 0 {
		if cost == 0 {
			return 1
		}
		return 0
	}
	f := 1 - float64(cost)/float64(maxCost)
	return max(f, 0)
}

// Replay walks a session through the model move by move and says what each
// move did. After a move the model has no transition for, the replay goes on
// from the one state that carries the move's label, if exactly one does;
// else it is lost, and the following moves are not checked (StepLost) until
// one enters a label that exactly one state carries.
func (c *Checker) Replay(moves []automaton.Move) []Step {
	steps := make([]Step, 0, len(moves))
	w := c.walk()
	for i, mv := range moves {
		from := w.at
		verdict, ti := c.step(&w, mv)
		s := Step{Move: i, Verdict: verdict, Loop: -1}
		if from >= 0 {
			s.From = c.ids[from]
		}
		if w.at >= 0 {
			s.To = c.ids[w.at]
		}
		if ti >= 0 {
			s.Transition = &c.m.Transitions[ti]
			if w.loop >= 0 {
				s.Loop, s.Iteration, s.Cap = int(w.loop), w.iters, c.caps[w.loop]
			}
			switch verdict {
			case StepRepeatCap:
				s.Run, s.MaxRun = w.run, c.maxRun[w.at]
			case StepUnusualCap:
				s.Unusual, s.MaxUnusual = w.unusual, c.opt.MaxUnusual
			case StepUnusualRun:
				s.UnusualRun, s.MaxUnusualRun = w.oddRun, c.opt.MaxUnusualRun
			}
			if w.broke >= 0 {
				s.Constraint = &c.m.Constraints[w.broke]
			}
		} else {
			s.Resync = w.at >= 0
		}
		steps = append(steps, s)
	}
	return steps
}

// Alignment operation kinds, the Op of an AlignOp.
const (
	OpSync  = "sync"  // the model takes the session's move
	OpLog   = "log"   // the session's move is skipped: the model has no place for it
	OpModel = "model" // the model takes a transition the session does not have
)

// AlignOp is one operation of an alignment.
type AlignOp struct {
	Op string `json:"op"`
	// Move is the index of the session's move (OpSync, OpLog), or of the
	// move before which the model's move is taken (OpModel; len(moves) at
	// the end).
	Move int `json:"move"`
	// From and To are model states (To == From for OpLog); Event and Label
	// the move taken (the session's for OpSync and OpLog, the transition's
	// event and target label for OpModel).
	From  string `json:"from"`
	To    string `json:"to"`
	Event string `json:"event"`
	Label string `json:"label"`
}

// Alignment is an optimal alignment of a session with the model (see
// Checker.Align).
type Alignment struct {
	Cost, MaxCost int
	Fitness       float64
	// Bounded: the search hit Options.MaxAlignStates; Ops and Cost are
	// those of a greedy alignment, Cost an upper bound of the optimum.
	Bounded bool
	// Explored is the number of search nodes expanded.
	Explored int
	// Ops are the operations in order; empty when the model cannot reach
	// automaton.EndID at all.
	Ops []AlignOp
}

// Align computes an optimal alignment of moves with the model, with its
// operations. Among alignments of equal cost the one found first is
// returned; the result is deterministic.
func (c *Checker) Align(moves []automaton.Move) Alignment {
	return c.align(moves, true)
}

// alignScratch holds the search's nodes and queue. Nodes are move position
// * states + state. Small node spaces are kept in an array, valid where
// stamp equals gen so that it is reused across sessions without clearing;
// larger ones in a map, of the nodes reached alone. A node is 8 bytes and
// holds no pointer: a search of a long session reaches millions of nodes,
// and the collector need not scan them.
//
// The queue is a bucket per cost plus heuristic (see alignBucket). The
// nodes an expansion reaches in a higher bucket than its own are queued
// only when the search gets to that bucket: most never are, as the search
// ends first. A search of a million moves against a model whose states
// have ten transitions out would otherwise keep ten nodes for each it
// expands.
type alignScratch struct {
	gen     uint32
	stamp   []uint32
	nodes   []alignNode
	sparse  map[int64]alignNode
	buckets []alignBucket
	syms    []int32
	unknown []int32
	// The search at hand: nodes are move position * nq + state, in arrays
	// (dense) or a map.
	dense bool
	nq    int64
	n     int
	dist  []int32
}

// alignNode is what the search keeps of a node it reached: g, the cost of
// the cheapest way found to it, and in last how that way's last move got
// there and whether the node was expanded. The node the move came from is
// not kept, as the move tells it: a model move stays at the node's
// position and a log or synchronous move comes from the one before; a
// model or synchronous move leaves its transition's source and a log move
// the node's own state. last names transitions below 1 << (32 -
// viaShift), half a billion: far more than a model holds.
type alignNode struct {
	g    int32
	last uint32 // the move's kind (byStart ... bySync), closedBit, and the transition << viaShift
}

// The kinds of an alignNode's last move, its bits under kindMask.
const (
	byStart = iota // the search's first node: no move
	byLog
	byModel
	bySync

	kindMask  = 3
	closedBit = 4
	viaShift  = 3
)

// alignBucket is the queue's bucket of one cost plus heuristic.
type alignBucket struct {
	// queue holds the nodes queued here, a stack.
	queue []int64
	// later holds the nodes expanded in lower buckets that reach nodes
	// in this one, in the order expanded: the search queues those when
	// it gets here (see Checker.expand), in the order the expansions
	// would have queued them.
	later []int64
}

// reached returns the node of a way to it of cost g whose last move is of
// kind by through transition via (ignored for byStart and byLog).
func reached(g int32, by int, via int32) alignNode {
	nd := alignNode{g: g, last: uint32(by)}
	if by == byModel || by == bySync {
		nd.last |= uint32(via) << viaShift
	}
	return nd
}

// prepare readies the scratch for aligning moves with c's model: the
// moves' symbols, how many moves from each position on have no transition
// anywhere in the model (those can only be log moves), and an empty node
// store and queue.
func (a *alignScratch) prepare(c *Checker, moves []automaton.Move) {
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
	a.dense = size <= maxDenseAlign
	if a.dense {
		if int64(len(a.stamp)) < size {
			a.stamp = make([]uint32, size)
			a.nodes = make([]alignNode, size)
			a.gen = 0
		}
		a.gen++
		if a.gen == 0 {
			clear(a.stamp)
			a.gen = 1
		}
	} else {
		a.sparse = map[int64]alignNode{}
	}
	for i := range a.buckets {
		a.buckets[i].queue = a.buckets[i].queue[:0]
		a.buckets[i].later = a.buckets[i].later[:0]
	}
}

// release lets go of what a search of a long session grew: the map of
// its nodes and the queue's large buckets, which the checker would
// otherwise hold until its next search.
func (a *alignScratch) release() {
	a.sparse = nil
	for f := range a.buckets {
		a.buckets[f].trim()
	}
}

// trim lets go of the bucket's lists that have grown large.
func (b *alignBucket) trim() {
	if cap(b.queue) > keptBucket {
		b.queue = nil
	}
	if cap(b.later) > keptBucket {
		b.later = nil
	}
}

// bucket returns bucket f, adding the buckets up to it.
func (a *alignScratch) bucket(f int) *alignBucket {
	for len(a.buckets) <= f {
		a.buckets = append(a.buckets, alignBucket{})
	}
	return &a.buckets[f]
}

// keptBucket is the largest bucket (in nodes) that the scratch keeps for
// the next search.
const keptBucket = 1 << 12

// node returns node k, if it has been reached.
func (a *alignScratch) node(k int64) (alignNode, bool) {
	if a.dense {
		if a.stamp[k] == a.gen {
			return a.nodes[k], true
		}
		return alignNode{}, false
	}
	nd, ok := a.sparse[k]
	return nd, ok
}

// set stores node k.
func (a *alignScratch) set(k int64, nd alignNode) {
	if a.dense {
		a.stamp[k], a.nodes[k] = a.gen, nd
		return
	}
	a.sparse[k] = nd
}

// parent returns the node k was reached from (-1 for the first) and the
// transition taken (-1 for a log move).
func (a *alignScratch) parent(k int64, trans []ctrans) (int64, int32) {
	nd, _ := a.node(k)
	i := k / a.nq
	via := int32(nd.last >> viaShift)
	switch nd.last & kindMask {
	case byLog:
		return k - a.nq, -1
	case byModel:
		return i*a.nq + int64(trans[via].from), via
	case bySync:
		return (i-1)*a.nq + int64(trans[via].from), via
	}
	return -1, -1
}

// h is node k's heuristic (see alignHeuristic): a node queued at cost g
// is in bucket g + h(k).
func (a *alignScratch) h(k int64) int32 {
	i, q := int(k/a.nq), k%a.nq
	return alignHeuristic(int32(a.n-i), a.unknown[i], a.dist[q])
}

// push reaches node k at cost g by a move of kind by through transition
// via, unless it was reached as cheaply before, and queues it in bucket f,
// its cost plus its heuristic.
func (a *alignScratch) push(k int64, g int32, f int, by int, via int32) {
	if old, ok := a.node(k); ok && old.g <= g {
		return
	}
	a.set(k, reached(g, by, via))
	b := a.bucket(f)
	b.queue = append(b.queue, k)
}

// reach handles node s, which node k reaches at cost g by a move of kind
// by through transition via while the search is at bucket f. It drops s
// when automaton.EndID is out of reach from s's state, and pushes s when s
// falls in bucket f (with later set, also below f: a consistent heuristic
// never puts it there, but the search always pushed those). With later
// set, it notes k in the later list of s's bucket when that is above f,
// for the search to push s when it gets there.
func (a *alignScratch) reach(k, s int64, g int32, by int, via int32, f int, later bool) {
	if a.dist[s%a.nq] < 0 {
		return
	}
	fs := int(g + a.h(s))
	switch {
	case fs == f || later && fs < f:
		a.push(s, g, fs, by, via)
	case later && fs > f:
		// One note per expansion: the notes of this one are the last.
		b := a.bucket(fs)
		if n := len(b.later); n == 0 || b.later[n-1] != k {
			b.later = append(b.later, k)
		}
	}
}

// expand reaches the nodes one move from node k, reached at cost g, while
// the search is at bucket f: model moves first, then the log move, then
// the synchronous move, so that the synchronous move, when there is one,
// is on top of the bucket's stack. With later set it is k's expansion,
// and notes k in the higher buckets it reaches; without, it queues what
// k's expansion reached in bucket f, which the search got to.
func (c *Checker) expand(k int64, g int32, f int, later bool) {
	a := &c.a
	nq := a.nq
	i, q := k/nq, k%nq
	for _, ti := range c.out[q] {
		a.reach(k, i*nq+int64(c.trans[ti].to), g+1, byModel, ti, f, later)
	}
	if int(i) < a.n {
		a.reach(k, k+nq, g+1, byLog, -1, f, later)
		if s := a.syms[i]; s >= 0 {
			if ti, ok := c.next[uint64(q)<<32|uint64(s)]; ok {
				a.reach(k, (i+1)*nq+int64(c.trans[ti].to), g, bySync, ti, f, later)
			}
		}
	}
}

// maxDenseAlign is the largest node space searched with arrays. A
// variable so that the tests search small sessions both ways.
var maxDenseAlign int64 = 1 << 20

func (c *Checker) align(moves []automaton.Move, withOps bool) Alignment {
	n := len(moves)
	al := Alignment{MaxCost: n + c.ShortestPath()}
	if c.start < 0 || c.end < 0 || c.dist[c.start] < 0 {
		// No path of the model ends: nothing to align with.
		al.Cost, al.MaxCost = n, n
		al.Fitness = fitness(al.Cost, al.MaxCost)
		return al
	}
	a := &c.a
	a.prepare(c, moves)
	defer a.release()
	nq := a.nq
	goal := int64(n)*nq + int64(c.end)
	a.push(int64(c.start), 0, int(a.h(int64(c.start))), byStart, -1)
	found := false
	for f := 0; f < len(a.buckets) && !found && al.Explored <= c.opt.MaxAlignStates; f++ {
		// The nodes that expansions in lower buckets reached in this one,
		// in the order they were expanded. An expanded node's cost is
		// final: the heuristic is consistent.
		for _, k := range a.buckets[f].later {
			nd, _ := a.node(k)
			c.expand(k, nd.g, f, false)
		}
		for b := &a.buckets[f]; len(b.queue) > 0; b = &a.buckets[f] {
			k := b.queue[len(b.queue)-1]
			b.queue = b.queue[:len(b.queue)-1]
			// The entry was queued at cost f - h; a cheaper way to the
			// node queued it again, in a lower bucket.
			g := int32(f) - a.h(k)
			nd, _ := a.node(k)
			if nd.g != g || nd.last&closedBit != 0 {
				continue // superseded by a cheaper entry
			}
			nd.last |= closedBit
			a.set(k, nd)
			if k == goal {
				al.Cost = int(g)
				found = true
				break
			}
			al.Explored++
			if al.Explored > c.opt.MaxAlignStates {
				break
			}
			c.expand(k, g, f, true)
		}
		// No node is queued below the bucket at hand again (the heuristic
		// is consistent), so large lists can go now.
		a.buckets[f].trim()
	}
	if !found {
		al.Bounded = true
		return c.greedy(moves, al, withOps)
	}
	al.Fitness = fitness(al.Cost, al.MaxCost)
	if withOps {
		al.Ops = c.alignOps(moves, goal, al.Ops)
	}
	return al
}

// alignOps walks the parents of the search back from goal and returns the
// alignment's operations in order, appended to ops.
func (c *Checker) alignOps(moves []automaton.Move, goal int64, ops []AlignOp) []AlignOp {
	a := &c.a
	nq := a.nq
	start := len(ops)
	for k := goal; ; {
		par, via := a.parent(k, c.trans)
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

// alignHeuristic is a lower bound of the cost of aligning the rest of a
// session, rest moves of which unknown have no transition anywhere in the
// model, from a state dist moves away from automaton.EndID. Each unknown move costs a
// log move; the model needs at least dist moves, of which at most
// rest-unknown can be synchronous. It is consistent: a log or model move
// (cost 1) lowers it by at most 1, and a synchronous move (cost 0) consumes
// one known move and one model move and so never lowers it.
func alignHeuristic(rest, unknown, dist int32) int32 {
	return unknown + max(0, dist-(rest-unknown))
}

// greedyLookahead is how many model moves the greedy alignment tries before
// it skips a session move.
const greedyLookahead = 3

// greedy aligns moves greedily, for sessions whose optimal search hit the
// bound: take the session's move when the model has it; else the fewest
// model moves (up to greedyLookahead) after which the model has it; else
// skip the session's move. At the end, walk the shortest path to automaton.EndID. The
// result is a real alignment, so its cost bounds the optimum from above.
func (c *Checker) greedy(moves []automaton.Move, al Alignment, withOps bool) Alignment {
	cost := 0
	q := c.start
	var ops []AlignOp
	add := func(op AlignOp) {
		if withOps {
			ops = append(ops, op)
		}
	}
	modelMove := func(i int, ti int32) {
		t := &c.trans[ti]
		add(AlignOp{Op: OpModel, Move: i, From: c.ids[t.from], To: c.ids[t.to], Event: c.m.Transitions[ti].Event, Label: c.m.States[t.to].Label})
		cost++
		q = t.to
	}
	for i, mv := range moves {
		if ti, ok := c.lookup(q, mv); ok && c.dist[c.trans[ti].to] >= 0 {
			add(AlignOp{Op: OpSync, Move: i, From: c.ids[q], To: c.ids[c.trans[ti].to], Event: mv.Event, Label: mv.Label})
			q = c.trans[ti].to
			continue
		}
		if path := c.reach(q, mv); path != nil {
			for _, ti := range path {
				modelMove(i, ti)
			}
			ti, _ := c.lookup(q, mv)
			add(AlignOp{Op: OpSync, Move: i, From: c.ids[q], To: c.ids[c.trans[ti].to], Event: mv.Event, Label: mv.Label})
			q = c.trans[ti].to
			continue
		}
		add(AlignOp{Op: OpLog, Move: i, From: c.ids[q], To: c.ids[q], Event: mv.Event, Label: mv.Label})
		cost++
	}
	for q != c.end {
		// Follow a transition that brings automaton.EndID one move closer.
		var best int32 = -1
		for _, ti := range c.out[q] {
			if d := c.dist[c.trans[ti].to]; d >= 0 && d == c.dist[q]-1 {
				best = ti
				break
			}
		}
		modelMove(len(moves), best)
	}
	al.Cost, al.Ops = cost, ops
	al.Fitness = fitness(al.Cost, al.MaxCost)
	return al
}

// lookup returns the transition mv takes out of state q.
func (c *Checker) lookup(q int32, mv automaton.Move) (int32, bool) {
	s, ok := c.syms[mv]
	if !ok {
		return -1, false
	}
	ti, ok := c.next[uint64(q)<<32|uint64(s)]
	return ti, ok
}

// reach returns the fewest transitions (at most greedyLookahead) from q to a
// state out of which mv is a transition whose target can reach automaton.EndID, or nil.
func (c *Checker) reach(q int32, mv automaton.Move) []int32 {
	type item struct {
		q    int32
		path []int32
	}
	frontier := []item{{q, nil}}
	seen := map[int32]bool{q: true}
	for depth := 0; depth < greedyLookahead; depth++ {
		var next []item
		for _, it := range frontier {
			for _, ti := range c.out[it.q] {
				to := c.trans[ti].to
				if seen[to] || c.dist[to] < 0 {
					continue
				}
				seen[to] = true
				p := append(append([]int32(nil), it.path...), ti)
				if tj, ok := c.lookup(to, mv); ok && c.dist[c.trans[tj].to] >= 0 {
					return p
				}
				next = append(next, item{to, p})
			}
		}
		frontier = next
	}
	return nil
}

// compileConstraints compiles the model's constraints for stepping.
func compileConstraints(cs []automaton.Constraint) *rules.Set {
	rs := make([]rules.Rule, len(cs))
	for i, c := range cs {
		rs[i] = rules.Rule{Kind: c.Kind, A: c.A, B: c.B, Or: c.Or}
	}
	return rules.Compile(rs)
}
