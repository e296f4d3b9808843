// Package guard enforces a model (automaton.Model) at run time: a Guard
// judges each step an agent proposes, over many concurrent sessions, by the
// model's transitions, loop caps and constraints and by a Policy (slots,
// rules on moves, a watchdog), and answers with a Decision. Policy files are
// read, checked against a model and drafted (SuggestPolicy) here too. It
// never prints; the HTTP service over a Guard is automaton/serve.
package guard

import (
	"errors"
	"fmt"
	"hash/maphash"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/internal/risk"
	"github.com/fsmine/fsmine/automaton/internal/rules"
	"github.com/goccy/go-json"
)

// Reasons a Decision gives for a deviation. The empty reason means the step
// follows the model and the policy.
const (
	ReasonNone         = ""
	ReasonIllegal      = "illegal_transition"     // the model has no such transition from the current state
	ReasonUnknownState = "unknown_state"          // the proposed next state is no state of the model
	ReasonLoopCap      = "loop_cap"               // the transition's loop cap is used up for this stay in the loop
	ReasonRepeatCap    = "repeat_cap"             // one visit of a label in a row more than the target state's max_run
	ReasonRare         = "rare_transition"        // a rare transition, under rare_is_deviation
	ReasonWatchdog     = "watchdog"               // too many consecutive turns in one state
	ReasonGeneralized  = "generalized_transition" // a transition no session took, under "generalized": "deny"
	ReasonUnusualCap   = "unusual_cap"            // one rare or generalised step more than max_unusual allows the session
	ReasonUnusualRun   = "unusual_run"            // one rare or generalised step more in a row than max_unusual_run allows
	ReasonMissingSlot  = "missing_slot"           // leaving a state whose required slots are not all present
	ReasonInvalidSlot  = "invalid_slot"           // leaving a state whose required slots do not all match their patterns
	ReasonCondition    = "condition_failed"       // a condition of the policy's rule on the transition does not hold
	// The step breaks one of the model's constraints (Decision.Constraint
	// names it): the reasons are the deviation kinds.
	ReasonMissingPrerequisite = automaton.KindMissingPrerequisite
	ReasonOnceOnly            = automaton.KindOnceOnly
	ReasonRerun               = automaton.KindRerun
	ReasonNotBoth             = automaton.KindNotBoth
)

// Reasons lists every reason a Decision can carry, ReasonNone first.
var Reasons = []string{ReasonNone, ReasonIllegal, ReasonUnknownState, ReasonLoopCap, ReasonRepeatCap, ReasonRare, ReasonWatchdog,
	ReasonGeneralized, ReasonUnusualCap, ReasonUnusualRun, ReasonMissingSlot, ReasonInvalidSlot, ReasonCondition,
	ReasonMissingPrerequisite, ReasonOnceOnly, ReasonNotBoth, ReasonRerun,
	automaton.KindUnseenValue, automaton.KindValueWithoutSource}

// SlotKind is the JSON type of a slot's value.
type SlotKind uint8

// Slot kinds.
const (
	SlotString SlotKind = iota
	SlotNumber
	SlotBool
)

// Slot is one named value a step reports (an order id, a reason). Value is
// the text of a string, the JSON text of a number, or "true" or "false".
// Valid is the guard's verdict, filled in by Guard.StepSlots: the value is
// present (not empty) and matches every pattern the policy declares for the
// slot.
type Slot struct {
	Name  string
	Value string
	Kind  SlotKind
	Valid bool
}

// jsonValue returns the slot's value as encoding/json would decode it.
func (s Slot) jsonValue() interface{} {
	switch s.Kind {
	case SlotNumber:
		return json.Number(s.Value)
	case SlotBool:
		return s.Value == "true"
	}
	return s.Value
}

// ErrUndeclaredSlot is the error a step carrying a slot the policy does not
// declare gets, wrapped in a *SlotError.
var ErrUndeclaredSlot = errors.New("the policy declares no such slot")

// SlotError says which slot of a step is wrong.
type SlotError struct {
	Name string
	Err  error
}

func (e *SlotError) Error() string { return fmt.Sprintf("slot %q: %v", e.Name, e.Err) }
func (e *SlotError) Unwrap() error { return e.Err }

// Decision is the guard's answer to one proposed step.
//
// Allowed says whether the agent may take the step. In enforce mode a
// deviation is denied and State is the state the session stays in (or the
// watchdog's fallback state); in monitor mode every step is allowed and
// Reason records the deviation, if any.
type Decision struct {
	// Session and Step identify the decision: Step counts the session's
	// decisions from 0.
	Session string `json:"session_id"`
	Step    int    `json:"step"`
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason"`
	// State and Label are the session's state after the decision.
	State string `json:"state"`
	Label string `json:"label"`
	// Rare and Prob describe the model's transition for the proposed step:
	// its rare mark and its share of its source's outflow (0 without one).
	Rare bool    `json:"rare"`
	Prob float64 `json:"prob"`
	// NextMoves are the moves out of State that the guard would allow now,
	// most frequent first. The slice is shared: callers must not modify it.
	NextMoves []MoveOption `json:"next_moves"`
	// Fallback is the watchdog's transition when Reason is ReasonWatchdog
	// and the policy names one: taken (enforce) or advised (monitor).
	Fallback *Fallback `json:"fallback,omitempty"`
	// MissingSlots and InvalidSlots name, in the policy's order, the
	// required slots of the state the step would leave that are not
	// present, or present but not matching their patterns, when Reason is
	// ReasonMissingSlot or ReasonInvalidSlot.
	MissingSlots []string `json:"missing_slots,omitempty"`
	InvalidSlots []string `json:"invalid_slots,omitempty"`
	// Condition describes the condition that failed when Reason is
	// ReasonCondition: its JSON path in the policy and what it tests.
	Condition string `json:"condition,omitempty"`
	// Generalized says that the proposed step follows a transition the
	// miner generalised (no session took it).
	Generalized bool `json:"generalized,omitempty"`
	// Constraint is the model's constraint the step breaks when Reason is
	// one of the constraint reasons.
	Constraint *automaton.Constraint `json:"constraint,omitempty"`
	// Arg names the call's tool and argument when Reason is
	// automaton.KindUnseenValue or automaton.KindValueWithoutSource (see
	// Guard.StepCall).
	Arg *automaton.ArgDeviation `json:"arg,omitempty"`
	// Instructions are the policy's instructions for State.
	Instructions string `json:"instructions,omitempty"`
	// Surprise is the proposed step's surprisal under the model in bits,
	// and Risk the session's running total (both rounded to 6 decimals), this step included: the sum
	// of the surprisal of every step proposed, allowed or not (see conform.Risk;
	// a step out of a state that the session entered by the watchdog's
	// fallback or stayed in after a denial is costed from that state). A
	// runtime can escalate a session whose Risk climbs early.
	Surprise float64 `json:"surprise"`
	Risk     float64 `json:"risk"`
	// Map names the map of a conditioned model (see automaton.By) that judged the
	// session: "by:" and its value, or automaton.SharedMap; empty for a model that
	// is not conditioned.
	Map string `json:"map,omitempty"`
	// Time is when the guard decided, by Options.Now.
	Time time.Time `json:"-"`
}

// MoveOption is one move out of a state: the event, the target state's id
// and label, and the transition's probability and rare mark.
//
// Generalized marks a move along a transition the miner generalised.
type MoveOption struct {
	Event       string  `json:"event"`
	To          string  `json:"to"`
	Label       string  `json:"label"`
	Prob        float64 `json:"prob"`
	Rare        bool    `json:"rare"`
	Generalized bool    `json:"generalized,omitempty"`
}

// Options tune a Guard. The zero value is valid: no expiry, no bound on
// sessions, the wall clock.
type Options struct {
	// TTL expires a session idle for at least this long; 0 never does.
	// Expiry happens when the session is next touched and in Sweep.
	TTL time.Duration
	// MaxSessions bounds the live sessions; 0 means no bound. When a new
	// session would pass the bound, the least recently used session of its
	// shard is expired to make room: new sessions are never refused. The
	// bound is split over the shards, so the evicted session is the least
	// recently used of its shard, not always of the whole guard. Which
	// shard a session falls in is keyed by a seed the guard draws, so a
	// client cannot choose the shard of its ids.
	MaxSessions int
	// Shards is the number of independently locked session maps (default
	// 64, at most MaxSessions when that is set).
	Shards int
	// History is how many recent decisions each session keeps for
	// Session (default 16; negative keeps none). A session costs about
	// 0.4 KB plus 0.12 KB per kept decision, and 0.3 KB at most for one
	// whose event or next the model lacks: history keeps such a name cut
	// to its first 64 bytes (see HistoryEntry).
	History int
	// Now is the clock (default time.Now); tests inject their own.
	Now func() time.Time
	// OnDecision, when set, is called with every decision and the step's
	// event, next and slots (with their Valid verdicts) as given, while the
	// session is locked: calls for one session come in step order. It must
	// not call back into the guard, must not keep slots, and should return
	// quickly (it holds up the session's shard). The decision comes by value
	// so that Step's copy stays on its stack.
	OnDecision func(d Decision, event, next string, slots []Slot)
}

// Stats counts a guard's sessions.
type Stats struct {
	Live     int   // sessions alive now
	Created  int64 // sessions ever started
	Expired  int64 // sessions expired for idleness (TTL)
	Evicted  int64 // sessions expired to respect MaxSessions
	Ended    int64 // sessions ended by End
	Dropped  int64 // sessions dropped by Reload (their state left the model)
	Remapped int64 // sessions moved to a same-label state by Reload
}

// ReloadStats tells what a Reload did to the live sessions it found.
type ReloadStats struct {
	Kept     int `json:"kept"`
	Remapped int `json:"remapped"`
	Dropped  int `json:"dropped"`
}

// HistoryEntry is one past decision of a session. Event and Next are as
// the step gave them, but a name the model lacks that is longer than 64
// bytes is cut (at a rune) and marked "…(N bytes)" with its length.
type HistoryEntry struct {
	Step    int       `json:"step"`
	Event   string    `json:"event"`
	Next    string    `json:"next"`
	Allowed bool      `json:"allowed"`
	Reason  string    `json:"reason"`
	State   string    `json:"state"`
	Time    time.Time `json:"ts"`
}

// SessionInfo is a snapshot of one session. Slots holds the session's
// slots by name, as strings, json.Numbers and bools; Instructions are the
// policy's instructions for its state.
type SessionInfo struct {
	ID           string                 `json:"session_id"`
	State        string                 `json:"state"`
	Label        string                 `json:"label"`
	Steps        int                    `json:"steps"`
	Turns        int                    `json:"turns"`
	LastSeen     time.Time              `json:"last_seen"`
	Slots        map[string]interface{} `json:"slots"`
	Instructions string                 `json:"instructions,omitempty"`
	History      []HistoryEntry         `json:"history"`
	// Map names the map of a conditioned model that judges the session,
	// as Decision.Map does.
	Map string `json:"map,omitempty"`
}

// Guard enforces a model and a policy over many concurrent agent sessions.
// Each session has a current state, starting at automaton.StartID; Step judges the
// session's next move. A Guard is safe for concurrent use: sessions live in
// shards, each behind its own mutex, and the compiled model is swapped
// atomically by Reload.
type Guard struct {
	cur      atomic.Pointer[compiled]
	shards   []shard
	seed     maphash.Seed // of shard's hash
	ttl      time.Duration
	history  int
	now      func() time.Time
	observe  func(d Decision, event, next string, slots []Slot)
	reloadMu sync.Mutex

	live, created, expired, evicted, ended, dropped, remapped atomic.Int64
}

type shard struct {
	mu       sync.Mutex
	sessions map[string]*session
	lru      session // sentinel: lru.next is the most recently used
	limit    int
	_        [40]byte // keep hot shards off each other's cache lines
}

type session struct {
	id     string
	state  *gstate
	gen    uint64
	steps  int
	turns  int
	run    int // visits of the state's label in a row (automaton.State.MaxRun)
	loop   int
	counts []int
	iters  int  // back edges taken in this stay in loop (compiled.loopMax)
	lost   bool // in monitor mode, check is lost: an unknown label, or a shared one after a step the model lacks
	last   time.Time
	hist   []HistoryEntry // ring of at most Guard.history entries
	hpos   int            // next write position once the ring is full
	slots  []Slot         // at most one per name; Valid is not kept
	seen   []uint64       // the constrained labels visited, indexed by cons
	cons   *rules.Set
	risk   float64             // the running surprisal, in bits
	odd    int                 // the rare and generalised transitions taken (Policy.MaxUnusual)
	oddRun int                 // those taken in a row up to the last step taken (Policy.MaxUnusualRun)
	args   *automaton.ArgWatch // the text that entered the session, for automaton.Model.Args; nil until a Call

	// sub, in a conditioned model, is the sub-map that judges the session
	// (nil: the shared map; see compiled.of).
	sub *compiled

	prev, next *session
}

// compiled is a model and a policy prepared for fast lookups. It is never
// modified once built.
type compiled struct {
	m         *automaton.Model
	policy    *Policy
	gen       uint64
	monitor   bool
	rareDev   bool
	states    map[string]*gstate
	labels    map[string]*gstate // label -> the most visited state carrying it
	names     map[string]string  // the states' ids and labels, for history to share
	events    map[string]string  // the transitions' events, for history to share
	caps      map[automaton.EdgeRef]capRef
	loopSlots []int           // per loop: how many capped transitions
	loopMax   []int           // per loop: its max_iterations, the back edges of one stay together (0: none)
	tcaps     []capRef        // per transition of the model, by index: capOf
	shared    map[string]bool // labels more than one state carries
	watchMax  int
	fallback  *Fallback
	fbState   *gstate
	start     *gstate
	genDeny   bool
	maxOdd    int                             // Policy.MaxUnusual
	maxOddRun int                             // Policy.MaxUnusualRun
	slotRes   map[string][]*regexp.Regexp     // declared slots: their patterns (nil: none)
	rules     map[*automaton.Transition]*rule // nil without rules
	cons      *rules.Set                      // the model's constraints, nil for none
	risk      *risk.Tables
	args      *automaton.ArgRules // the model's argument rules, nil for none
	argFrom   map[string]string   // the labels the rules' From give, for seenLabel
	// standFor maps the stand-in seenLabel gives a label that no model
	// had to the label, for each label this model (with argument rules)
	// has: a session carried over from an earlier model keeps what it saw
	// under the label's own name (see carry).
	standFor map[string]string
	by       byCompiled // a conditioned model's sub-maps (see bymap.go)
}

type gstate struct {
	id, label string
	index     int          // into automaton.Model.States
	maxRun    int          // automaton.State.MaxRun
	loop      int          // index into automaton.Model.Loops, -1 outside any loop
	moves     []MoveOption // out of the state, less those the policy always denies
	moveCaps  []capRef     // parallel to moves
	// common and commonCaps are moves and moveCaps less the rare and
	// generalised moves: what a session that has used up max_unusual, or
	// reached max_unusual_run, may take (set only with either).
	common       []MoveOption
	commonCaps   []capRef
	required     []reqSlot
	instructions string
}

// reqSlot is a slot required to leave a state, and the patterns (the
// state's and the slot's top-level one) its value must match.
type reqSlot struct {
	name string
	res  []*regexp.Regexp
}

// rule is a compiled Rule.
type rule struct {
	keep, clear []string
	keepOnly    bool // keep was given: slots not in keep go
	when        []cond
}

// cond is a compiled Condition.
type cond struct {
	desc    string // JSON path and test, for the Decision
	slot    string // or:
	field   string
	test    byte // 'p' present, 'e' equals, 'm' matches
	present bool
	eq      string
	eqKind  SlotKind
	re      *regexp.Regexp
}

// capRef is what caps a transition: its own count's slot inside a loop
// (-1: not capped) and most; whether it is a back edge (marked so, between
// two states of one loop) of a loop whose max_iterations caps its back
// edges together, as check counts them; and run, its target's max_run when
// it repeats its source's label (0: none), as check's repeat_cap judges.
type capRef struct {
	slot, max int
	back      bool
	run       int
}

// New returns a guard for model m under policy p (nil: enforce, the
// default loop caps, no watchdog). It validates m, which must not be modified
// afterwards, and checks p against it; errors name the offending entry.
func New(m *automaton.Model, p *Policy, opt Options) (*Guard, error) {
	if m == nil {
		return nil, errors.New("guard: no model")
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	c, err := compile(m, p)
	if err != nil {
		return nil, err
	}
	c.setGen(1)
	n := opt.Shards
	if n <= 0 {
		n = 64
	}
	if opt.MaxSessions > 0 && n > opt.MaxSessions {
		n = opt.MaxSessions
	}
	g := &Guard{
		seed:    maphash.MakeSeed(),
		shards:  make([]shard, n),
		ttl:     opt.TTL,
		history: opt.History,
		now:     opt.Now,
		observe: opt.OnDecision,
	}
	if g.history == 0 {
		g.history = 16
	}
	if g.history < 0 {
		g.history = 0
	}
	if g.now == nil {
		g.now = time.Now
	}
	for i := range g.shards {
		sh := &g.shards[i]
		sh.sessions = make(map[string]*session)
		sh.lru.next, sh.lru.prev = &sh.lru, &sh.lru
		if opt.MaxSessions > 0 {
			sh.limit = opt.MaxSessions / n
			if i < opt.MaxSessions%n {
				sh.limit++
			}
		}
	}
	g.cur.Store(c)
	return g, nil
}

// compile prepares m and p; m must be indexed.
func compile(m *automaton.Model, p *Policy) (*compiled, error) {
	if p == nil {
		p = &Policy{}
	}
	patterns, err := p.checkForm()
	if err != nil {
		return nil, err
	}
	return compileWith(m, p, patterns)
}

// compileWith is compile with the patterns p.checkForm compiled, which the
// sub-maps of a conditioned model share.
func compileWith(m *automaton.Model, p *Policy, patterns *policyPatterns) (*compiled, error) {
	c := &compiled{
		m:         m,
		cons:      compileConstraints(m.Constraints),
		args:      automaton.NewArgRules(m.Args),
		policy:    p,
		monitor:   p.Monitor(),
		rareDev:   p.RareIsDeviation,
		maxOdd:    p.MaxUnusual,
		maxOddRun: p.MaxUnusualRun,
		states:    make(map[string]*gstate, len(m.States)),
		labels:    make(map[string]*gstate, len(m.States)),
		names:     make(map[string]string, 2*len(m.States)),
		events:    make(map[string]string),
		caps:      make(map[automaton.EdgeRef]capRef),
	}
	for _, st := range m.States {
		c.names[st.ID], c.names[st.Label] = st.ID, st.Label
	}
	for _, t := range m.Transitions {
		c.events[t.Event] = t.Event
	}
	for _, r := range m.Args {
		for _, l := range r.From {
			if c.argFrom == nil {
				c.argFrom = make(map[string]string)
			}
			c.argFrom[l] = l
		}
	}
	if len(m.Args) > 0 {
		c.standFor = make(map[string]string)
		for l := range c.labels {
			c.standFor[standIn(l)] = l
		}
		for l := range c.argFrom {
			c.standFor[standIn(l)] = l
		}
	}
	c.risk = risk.New(m)
	loopOf := make(map[string]int)
	for li, l := range m.Loops {
		for _, id := range l.States {
			if m.State(id) == nil {
				return nil, fmt.Errorf("invalid model: loop %d names unknown state %q", li, id)
			}
			if other, dup := loopOf[id]; dup {
				return nil, fmt.Errorf("invalid model: state %q is in loops %d and %d", id, other, li)
			}
			loopOf[id] = li
		}
	}
	c.loopSlots = make([]int, len(m.Loops))
	c.loopMax = make([]int, len(m.Loops))
	find := func(from, event, to string) *automaton.Transition {
		for _, t := range m.Out(from) {
			if t.Event == event && t.To == to {
				return t
			}
		}
		return nil
	}
	for li, l := range m.Loops {
		c.loopMax[li] = max(l.MaxIterations, 0)
		for _, be := range l.BackEdges {
			t := find(be.From, be.Event, be.To)
			if t == nil {
				return nil, fmt.Errorf("invalid model: loop %d: back edge %s -[%s]-> %s is not a transition", li, be.From, be.Event, be.To)
			}
			lf, okf := loopOf[be.From]
			lt, okt := loopOf[be.To]
			if !okf || !okt || lf != li || lt != li {
				return nil, fmt.Errorf("invalid model: loop %d: back edge %s -[%s]-> %s leaves the loop", li, be.From, be.Event, be.To)
			}
			// Check counts the transitions marked as back edges; a listed
			// one not so marked (a hand edit) gets no cap, as there.
			if _, dup := c.caps[be]; dup || l.MaxIterations <= 0 || !t.BackEdge {
				continue
			}
			c.caps[be] = capRef{slot: c.loopSlots[li], max: l.MaxIterations}
			c.loopSlots[li]++
		}
	}
	explicit := make(map[automaton.EdgeRef]int)
	for i, lc := range p.LoopCaps {
		name := fmt.Sprintf("policy: loop_caps[%d] (%s -[%s]-> %s)", i, lc.From, lc.Event, lc.To)
		from, err := resolveState(m, lc.From)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		to, err := resolveState(m, lc.To)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		t := find(from.ID, lc.Event, to.ID)
		if t == nil {
			return nil, fmt.Errorf("%s: no such transition in the model", name)
		}
		lf, okf := loopOf[from.ID]
		lt, okt := loopOf[to.ID]
		if !okf || !okt || lf != lt {
			return nil, fmt.Errorf("%s: the transition is not inside a loop of the model", name)
		}
		if most := c.loopMax[lf]; t.BackEdge && most > 0 && lc.Max > most {
			return nil, fmt.Errorf("%s: max %d is above the loop's max_iterations %d, which caps its back edges together; a policy can only lower it", name, lc.Max, most)
		}
		key := automaton.EdgeRef{From: from.ID, Event: lc.Event, To: to.ID}
		if j, dup := explicit[key]; dup {
			return nil, fmt.Errorf("%s: the transition is capped by loop_caps[%d] too", name, j)
		}
		explicit[key] = i
		if cr, ok := c.caps[key]; ok {
			cr.max = lc.Max
			c.caps[key] = cr
			continue
		}
		c.caps[key] = capRef{slot: c.loopSlots[lf], max: lc.Max}
		c.loopSlots[lf]++
	}
	for i := range m.States {
		s := &m.States[i]
		gs := &gstate{id: s.ID, label: s.Label, index: i, loop: -1, maxRun: s.MaxRun}
		if li, ok := loopOf[s.ID]; ok {
			gs.loop = li
		}
		c.states[s.ID] = gs
		if _, ok := c.labels[s.Label]; ok {
			if c.shared == nil {
				c.shared = map[string]bool{}
			}
			c.shared[s.Label] = true
		}
		if prev, ok := c.labels[s.Label]; !ok || automaton.StandsFor(s, &m.States[prev.index]) {
			c.labels[s.Label] = gs
		}
	}
	c.tcaps = make([]capRef, len(m.Transitions))
	for i := range m.Transitions {
		c.tcaps[i] = c.capOf(&m.Transitions[i])
	}
	// Moves the policy always denies (rare ones with rare_is_deviation,
	// generalised ones with "generalized": "deny") are left out of the
	// moves a decision offers here, once, rather than filtered out at every
	// step.
	genDeny := p.Generalized == GeneralizedDeny
	for _, gs := range c.states {
		out := m.Out(gs.id)
		gs.moves = make([]MoveOption, 0, len(out)) // [] in a decision's JSON, not null
		gs.moveCaps = make([]capRef, 0, len(out))
		for _, t := range out {
			if c.rareDev && t.Rare || genDeny && t.Generalized != "" {
				continue
			}
			gs.moves = append(gs.moves, MoveOption{Event: t.Event, To: t.To, Label: c.states[t.To].label, Prob: t.Prob, Rare: t.Rare, Generalized: t.Generalized != ""})
			gs.moveCaps = append(gs.moveCaps, c.capOf(t))
		}
		if c.maxOdd > 0 || c.maxOddRun > 0 {
			gs.common = make([]MoveOption, 0, len(gs.moves))
			for i, mv := range gs.moves {
				if !mv.Rare && !mv.Generalized {
					gs.common = append(gs.common, mv)
					gs.commonCaps = append(gs.commonCaps, gs.moveCaps[i])
				}
			}
		}
	}
	if err := c.compileSlots(m, p, patterns); err != nil {
		return nil, err
	}
	c.start = c.states[automaton.StartID]
	if w := p.Watchdog; w != nil {
		c.watchMax = w.MaxTurns
		if fb := w.Fallback; fb != nil {
			s, err := resolveState(m, fb.To)
			if err != nil {
				return nil, fmt.Errorf("policy: watchdog: fallback: %w", err)
			}
			if s.ID == automaton.StartID {
				return nil, fmt.Errorf("policy: watchdog: fallback: cannot go to %s", automaton.StartID)
			}
			c.fallback = &Fallback{Event: fb.Event, To: s.ID, Label: s.Label}
			c.fbState = c.states[s.ID]
		}
	}
	return c, c.compileBy(m, p, patterns)
}

// compileSlots prepares the policy's slots, states and transitions, whose
// patterns checkForm compiled.
func (c *compiled) compileSlots(m *automaton.Model, p *Policy, patterns *policyPatterns) error {
	c.slotRes = patterns.decl
	c.genDeny = p.Generalized == GeneralizedDeny
	top := make(map[string]*regexp.Regexp)
	for _, sp := range p.Slots {
		if sp.Pattern != "" {
			top[sp.Name] = patterns.re[sp.Pattern]
		}
	}
	claimed := make(map[string]string) // state id -> the states key naming it
	for _, key := range sortedKeys(p.States) {
		path := "policy: states" + jsonKey(key)
		sts, err := resolveStates(m, key)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		sp := p.States[key]
		for _, st := range sts {
			if other, dup := claimed[st.ID]; dup {
				return fmt.Errorf("%s: state %q is named by states%s too", path, st.ID, jsonKey(other))
			}
			claimed[st.ID] = key
			gs := c.states[st.ID]
			gs.instructions = sp.Instructions
			for _, rs := range sp.RequiredSlots {
				r := reqSlot{name: rs.Name}
				if rs.Pattern != "" {
					r.res = append(r.res, patterns.re[rs.Pattern])
				}
				if re := top[rs.Name]; re != nil {
					r.res = append(r.res, re)
				}
				gs.required = append(gs.required, r)
			}
		}
	}
	if len(p.Transitions) == 0 {
		return nil
	}
	c.rules = make(map[*automaton.Transition]*rule)
	owner := make(map[*automaton.Transition]int)
	for i, r := range p.Transitions {
		ev := "*"
		if r.Event != nil {
			ev = *r.Event
		}
		path := fmt.Sprintf("policy: transitions[%d] (%s -[%s]-> %s)", i, r.From, ev, r.To)
		froms, err := resolveStates(m, r.From)
		if err != nil {
			return fmt.Errorf("%s: from: %w", path, err)
		}
		tos, err := resolveStates(m, r.To)
		if err != nil {
			return fmt.Errorf("%s: to: %w", path, err)
		}
		cr := &rule{keep: r.Keep, clear: r.Clear, keepOnly: r.Keep != nil}
		for j, k := range r.When {
			cr.when = append(cr.when, compileCond(fmt.Sprintf("transitions[%d].when[%d]", i, j), k, patterns))
		}
		matched := 0
		for _, from := range froms {
			for _, t := range m.Out(from.ID) {
				if r.Event != nil && *r.Event != t.Event {
					continue
				}
				hit := false
				for _, to := range tos {
					hit = hit || to.ID == t.To
				}
				if !hit {
					continue
				}
				if j, dup := owner[t]; dup {
					return fmt.Errorf("%s: the transition %s -[%s]-> %s has a rule in transitions[%d] too", path, t.From, t.Event, t.To, j)
				}
				owner[t] = i
				c.rules[t] = cr
				matched++
			}
		}
		if matched == 0 {
			return fmt.Errorf("%s: no such transition in the model", path)
		}
	}
	return nil
}

// compileCond prepares a condition that slotTable has checked.
func compileCond(path string, k Condition, patterns *policyPatterns) cond {
	c := cond{slot: k.Slot, field: k.Field}
	subject := fmt.Sprintf("slot %q", k.Slot)
	if k.Field != "" {
		subject = "field " + k.Field
	}
	switch {
	case k.Present != nil:
		c.test, c.present = 'p', *k.Present
		if c.present {
			c.desc = fmt.Sprintf("%s: %s is present", path, subject)
		} else {
			c.desc = fmt.Sprintf("%s: %s is absent", path, subject)
		}
	case k.Equals != nil:
		c.test = 'e'
		c.eq, c.eqKind, _ = equalsText(k.Equals)
		c.desc = fmt.Sprintf("%s: %s equals %s", path, subject, jsonText(c.eq, c.eqKind))
	default:
		c.test, c.re = 'm', patterns.re[k.Matches]
		c.desc = fmt.Sprintf("%s: %s matches %q", path, subject, k.Matches)
	}
	return c
}

func jsonText(v string, k SlotKind) string {
	if k == SlotString {
		return strconv.Quote(v)
	}
	return v
}

// holds reports whether the condition holds for a value (ok: there is one;
// an empty value counts as none).
func (k *cond) holds(v string, kind SlotKind, ok bool) bool {
	ok = ok && v != ""
	switch k.test {
	case 'p':
		return ok == k.present
	case 'e':
		if !ok {
			return false
		}
		if kind == SlotNumber && k.eqKind == SlotNumber {
			a, errA := strconv.ParseFloat(v, 64)
			b, errB := strconv.ParseFloat(k.eq, 64)
			return errA == nil && errB == nil && a == b
		}
		return kind == k.eqKind && v == k.eq
	}
	return ok && k.re.MatchString(v)
}

// capOf returns t's cap: its own, the policy's or its loop's default for
// a listed back edge, and whether its loop's max_iterations counts it.
func (c *compiled) capOf(t *automaton.Transition) capRef {
	cr, ok := c.caps[automaton.EdgeRef{From: t.From, Event: t.Event, To: t.To}]
	if !ok {
		cr = capRef{slot: -1}
	}
	from, to := c.states[t.From], c.states[t.To]
	cr.back = t.BackEdge && from.loop >= 0 && from.loop == to.loop && c.loopMax[from.loop] > 0
	if from.label == to.label {
		cr.run = to.maxRun
	}
	return cr
}

// Model returns the model in force.
func (g *Guard) Model() *automaton.Model { return g.cur.Load().m }

// Policy returns the policy in force; callers must not modify it.
func (g *Guard) Policy() *Policy { return g.cur.Load().policy }

// Fallback returns the watchdog's fallback transition in force, its target
// resolved to a state id and label, or nil.
func (g *Guard) Fallback() *Fallback {
	if fb := g.cur.Load().fallback; fb != nil {
		c := *fb
		return &c
	}
	return nil
}

// LoopCaps returns the caps in force, explicit and default, sorted by from,
// event and to.
func (g *Guard) LoopCaps() []LoopCap {
	c := g.cur.Load()
	caps := make([]LoopCap, 0, len(c.caps))
	for e, cr := range c.caps {
		caps = append(caps, LoopCap{From: e.From, Event: e.Event, To: e.To, Max: cr.max})
	}
	sortCaps(caps)
	return caps
}

func sortCaps(caps []LoopCap) {
	sort.Slice(caps, func(i, j int) bool {
		a, b := caps[i], caps[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.Event != b.Event {
			return a.Event < b.Event
		}
		return a.To < b.To
	})
}

// Len returns the number of live sessions, expired ones not yet swept
// included.
func (g *Guard) Len() int { return int(g.live.Load()) }

// Stats returns the guard's session counters.
func (g *Guard) Stats() Stats {
	return Stats{
		Live:     int(g.live.Load()),
		Created:  g.created.Load(),
		Expired:  g.expired.Load(),
		Evicted:  g.evicted.Load(),
		Ended:    g.ended.Load(),
		Dropped:  g.dropped.Load(),
		Remapped: g.remapped.Load(),
	}
}

func (g *Guard) shard(id string) *shard {
	// Keyed by a seed of the guard's own, so that a client cannot make
	// ids that fill a chosen session's shard and evict it with a
	// 64th of MaxSessions (it does not allocate).
	return &g.shards[maphash.String(g.seed, id)%uint64(len(g.shards))]
}

// Step judges the move of session id by event into next, the label (or id)
// of the proposed next state, and advances the session as the decision
// says. A session that does not exist (or has expired) starts at automaton.StartID, so
// its first step proposes its first state with an empty event.
//
// The reason is ReasonWatchdog whenever the watchdog fires; otherwise the
// first of ReasonUnknownState, ReasonIllegal, ReasonRepeatCap,
// ReasonLoopCap, ReasonRare, ReasonGeneralized, ReasonUnusualCap,
// ReasonUnusualRun, ReasonMissingSlot, ReasonInvalidSlot, ReasonCondition,
// the constraints' reasons and the argument rules' kinds that applies, or
// ReasonNone. next is read as a label first and as a state
// id only when no state carries it as a label.
//
// In enforce mode a deviating step is denied and the session stays where it
// is, except that the watchdog moves it to its fallback state. In monitor
// mode every step is allowed: the session follows the model's transition
// when there is one, moves to the state next names when there is none (the
// most visited state with that label), and stays put when next names no
// state; the watchdog's fallback is advised, not taken.
func (g *Guard) Step(id, event, next string) Decision {
	d, _ := g.StepSlots(id, event, next, nil) // no slots, no error
	return d
}

// StepSlots is Step for a step that reports slots: it sets each slot's
// Valid, and judges the move (required slots, rule conditions) on the
// session's slots with slots written over them. A step that is
// allowed writes its slots into the session (after the rule of the
// transition taken, if any, kept or cleared the session's own); a denied
// step changes no slot. The session keeps the slots' strings.
//
// A slot the policy does not declare, or named twice, is a *SlotError
// (ErrUndeclaredSlot for the first), and then nothing happens: no session
// is created or changed and no decision is made.
func (g *Guard) StepSlots(id, event, next string, slots []Slot) (Decision, error) {
	return g.StepByCall(id, "", event, next, slots, nil)
}

// StepBy is StepSlots for a conditioned model (see automaton.By): a session that
// starts with this step is judged from then on by the sub-map of value,
// its value of automaton.By.Field, or by the shared map when value has none (""
// for no value); the value of a later step of the session is not read.
// Decision.Map names the map that answered. For a model that is not
// conditioned it is StepSlots.
func (g *Guard) StepBy(id, value, event, next string, slots []Slot) (Decision, error) {
	return g.StepByCall(id, value, event, next, slots, nil)
}

// StepCall is StepSlots for a step that proposes a tool call: call's Seen
// (the text that entered the session since the last step) is remembered,
// whatever the decision, and call's Args are judged by the model's argument
// rules (automaton.Model.Args) after every other test: a step whose argument breaks
// one gets the rule's kind as its reason (automaton.KindUnseenValue,
// automaton.KindValueWithoutSource) and Decision.Arg names the tool and argument. A
// nil call, or a model without argument rules, judges no argument. A
// session holds at most automaton.MaxSeenTokens token hashes of its text.
func (g *Guard) StepCall(id, event, next string, slots []Slot, call *Call) (Decision, error) {
	return g.StepByCall(id, "", event, next, slots, call)
}

// StepByCall is StepBy and StepCall at once: the session's value of a
// conditioned model's field (read at its first step) and a proposed call.
func (g *Guard) StepByCall(id, value, event, next string, slots []Slot, call *Call) (Decision, error) {
	now := g.now()
	// The slots' patterns run before the session's shard is locked, so that
	// steps of other sessions of the shard do not wait for them; should a
	// reload swap the compiled policy meanwhile, they run again.
	c := g.cur.Load()
	if err := c.checkSlots(slots); err != nil {
		return Decision{}, err
	}
	sh := g.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if cur := g.cur.Load(); cur != c {
		c = cur
		if err := c.checkSlots(slots); err != nil {
			return Decision{}, err
		}
	}
	s := g.lookup(sh, id, now, c)
	if s == nil {
		s = g.create(sh, id, c.forValue(value))
		if c.by.subs != nil {
			s.sub = c.by.subs[value]
		}
	}
	c = c.of(s)
	d := c.decide(s, event, next, slots, call)
	d.Map = c.by.mapName
	d.Session = id
	d.Time = now
	s.last = now
	sh.touch(s)
	if g.history > 0 {
		e := HistoryEntry{Step: d.Step, Event: c.keptName(event, c.events), Next: c.keptName(next, c.names), Allowed: d.Allowed, Reason: d.Reason, State: d.State, Time: now}
		if len(s.hist) < g.history {
			s.hist = append(s.hist, e)
		} else {
			s.hist[s.hpos] = e
			s.hpos = (s.hpos + 1) % g.history
		}
	}
	if g.observe != nil {
		g.observe(d, event, next, slots)
	}
	return d, nil
}

// maxKeptName is the most bytes of a name the model lacks that a
// session's history keeps: such a name may be 1,024 bytes long (serve's
// bound), and sixteen of them, event and next, cost a session 34 KB.
const maxKeptName = 64

// keptName is name as a session's history keeps it: the model's own
// string when known has it (shared by every session, and pinning no
// request's memory), else a copy of name, cut past maxKeptName bytes and
// marked with its length.
func (c *compiled) keptName(name string, known map[string]string) string {
	if k, ok := known[name]; ok {
		return k
	}
	if len(name) <= maxKeptName {
		return strings.Clone(name)
	}
	cut := maxKeptName
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + "…(" + strconv.Itoa(len(name)) + " bytes)"
}

// checkSlots sets each slot's Valid by the policy's patterns; a slot the
// policy does not declare, or named twice, is a *SlotError.
func (c *compiled) checkSlots(slots []Slot) error {
	for i := range slots {
		sl := &slots[i]
		res, ok := c.slotRes[sl.Name]
		if !ok {
			return &SlotError{Name: sl.Name, Err: ErrUndeclaredSlot}
		}
		for j := 0; j < i; j++ {
			if slots[j].Name == sl.Name {
				return &SlotError{Name: sl.Name, Err: errors.New("given twice")}
			}
		}
		sl.Valid = matchAll(res, sl.Value)
	}
	return nil
}

// matchAll reports whether v is present (not empty) and matches every
// pattern of res (nil entries match anything).
func matchAll(res []*regexp.Regexp, v string) bool {
	if v == "" {
		return false
	}
	for _, re := range res {
		if re != nil && !re.MatchString(v) {
			return false
		}
	}
	return true
}

// slotValue finds slot name in step's slots, else in held.
func slotValue(name string, step, held []Slot) (Slot, bool) {
	for i := range step {
		if step[i].Name == name {
			return step[i], true
		}
	}
	for i := range held {
		if held[i].Name == name {
			return held[i], true
		}
	}
	return Slot{}, false
}

// checkRequired judges the required slots of the state st a step leaves.
func checkRequired(st *gstate, step, held []Slot) (reason string, missing, invalid []string) {
	for _, r := range st.required {
		v, ok := slotValue(r.name, step, held)
		switch {
		case !ok || v.Value == "":
			missing = append(missing, r.name)
		case v.Valid:
			// a step's slot that matched every pattern declared for its
			// name (StepSlots), these among them
		case !matchAll(r.res, v.Value):
			invalid = append(invalid, r.name)
		}
	}
	switch {
	case missing != nil:
		return ReasonMissingSlot, missing, invalid
	case invalid != nil:
		return ReasonInvalidSlot, missing, invalid
	}
	return ReasonNone, nil, nil
}

// check returns the description of the first condition of r that does not
// hold, or "".
func (r *rule) check(event, next string, step, held []Slot) string {
	for i := range r.when {
		k := &r.when[i]
		var ok bool
		var v Slot
		switch k.field {
		case FieldEvent:
			v, ok = Slot{Value: event}, true
		case FieldNext:
			v, ok = Slot{Value: next}, true
		default:
			v, ok = slotValue(k.slot, step, held)
		}
		if !k.holds(v.Value, v.Kind, ok) {
			return k.desc
		}
	}
	return ""
}

// apply keeps or clears the session's slots as the rule says.
func (r *rule) apply(s *session) {
	if !r.keepOnly && len(r.clear) == 0 {
		return
	}
	out := s.slots[:0]
	for _, sl := range s.slots {
		listed := false
		for _, n := range r.keep {
			listed = listed || n == sl.Name
		}
		for _, n := range r.clear {
			listed = listed || n == sl.Name
		}
		if listed == r.keepOnly {
			out = append(out, sl)
		}
	}
	clear(s.slots[len(out):])
	s.slots = out
}

// write sets the step's slots in the session, overwriting same names;
// declared is how many slots the policy declares, which bounds the
// session's.
func (s *session) write(slots []Slot, declared int) {
	if s.slots == nil && len(slots) > 0 {
		s.slots = make([]Slot, 0, declared)
	}
outer:
	for _, sl := range slots {
		sl.Valid = false
		for i := range s.slots {
			if s.slots[i].Name == sl.Name {
				s.slots[i] = sl
				continue outer
			}
		}
		s.slots = append(s.slots, sl)
	}
}

// decide judges one step and advances s.
func (c *compiled) decide(s *session, event, next string, slots []Slot, call *Call) Decision {
	cur := s.state
	var (
		t      *automaton.Transition
		ti     = -1    // t's index into automaton.Model.Transitions
		target *gstate // the state next names
		reason string
	)
	if ts, ok := c.labels[next]; ok {
		target = ts
		ti = c.m.NextIndex(cur.id, automaton.Move{Event: event, Label: next})
	} else if ts, ok := c.states[next]; ok {
		target = ts
		ti = c.m.NextIndex(cur.id, automaton.Move{Event: event, Label: ts.label})
		if ti >= 0 && c.m.Transitions[ti].To != next {
			ti = -1
		}
	}
	if ti >= 0 {
		t = &c.m.Transitions[ti]
	}
	var bits float64
	switch {
	case t != nil:
		bits = c.risk.Trans[ti]
	case target != nil:
		bits = c.risk.Novel[cur.index] + c.risk.LabelBits(target.label)
	default:
		bits = c.risk.Novel[cur.index] + c.risk.Unknown
	}
	s.risk += bits
	cr := capRef{slot: -1}
	var (
		r                *rule
		missing, invalid []string
		failed           string
		broke            *automaton.Constraint
	)
	switch {
	case target == nil:
		reason = ReasonUnknownState
	case t == nil:
		reason = ReasonIllegal
	default:
		cr = c.tcaps[ti]
		if c.rules != nil {
			r = c.rules[t]
		}
		switch capped := c.capReason(s, cr); {
		case capped != ReasonNone:
			reason = capped
		case t.Rare && c.rareDev:
			reason = ReasonRare
		case t.Generalized != "" && c.genDeny:
			reason = ReasonGeneralized
		case c.maxOdd > 0 && (t.Rare || t.Generalized != "") && s.odd >= c.maxOdd:
			reason = ReasonUnusualCap
		case c.maxOddRun > 0 && (t.Rare || t.Generalized != "") && s.oddRun >= c.maxOddRun:
			reason = ReasonUnusualRun
		}
		if reason == ReasonNone && t.To != cur.id && cur.required != nil {
			reason, missing, invalid = checkRequired(cur, slots, s.slots)
		}
		if reason == ReasonNone && r != nil {
			if failed = r.check(event, next, slots, s.slots); failed != "" {
				reason = ReasonCondition
			}
		}
		if reason == ReasonNone && c.cons != nil {
			if kind, ci := c.cons.Check(s.seen, target.label); kind != "" {
				reason, broke = kind, &c.m.Constraints[ci]
			}
		}
	}
	var argDev *automaton.ArgDeviation
	if call != nil && c.args != nil {
		argDev = s.callArgs(c, target, call, reason == ReasonNone)
		if argDev != nil {
			reason = argDev.Kind
		}
	}
	d := Decision{Step: s.steps, Allowed: reason == ReasonNone || c.monitor, Surprise: risk.Round6(bits), Risk: risk.Round6(s.risk)}
	if t != nil {
		d.Rare, d.Prob, d.Generalized = t.Rare, t.Prob, t.Generalized != ""
	}
	dest, taken := cur, false
	switch {
	case t != nil && d.Allowed:
		dest, taken = c.states[t.To], true
	case target != nil && c.monitor:
		dest = target
	}
	fellBack := false
	if c.watchMax > 0 && dest == cur && s.turns+1 > c.watchMax {
		reason = ReasonWatchdog
		d.Fallback = c.fallback
		if !c.monitor {
			d.Allowed, taken = false, false
			if c.fbState != nil {
				dest, fellBack = c.fbState, true
			}
		}
	}
	d.Reason = reason
	if reason != ReasonWatchdog {
		d.MissingSlots, d.InvalidSlots, d.Condition, d.Constraint, d.Arg = missing, invalid, failed, broke, argDev
	}
	s.steps++
	switch {
	case fellBack || dest != cur:
		s.turns = 1
	default:
		s.turns++
	}
	// In monitor mode a step the model lacks, or the first step after an
	// unknown label (check is lost until then), resynchronises as check
	// does: a new stay, no count of the step. So does the watchdog's
	// fallback, which puts the session in a known place.
	lost := s.lost
	// Check stays lost while a label names no single state: an unknown
	// one, or after a step the model lacks (or a lost one) one that
	// several states carry.
	s.lost = c.monitor && (target == nil || (t == nil || lost) && target.label == next && c.shared[next])
	resync := c.monitor && (t == nil || lost) || fellBack
	counted := taken && !resync
	if dest.loop != s.loop || resync {
		s.enterLoop(dest.loop, c)
	}
	if counted && cr.slot >= 0 {
		s.counts[cr.slot]++
	}
	if counted && cr.back {
		s.iters++
	}
	switch {
	case counted && (t.Rare || t.Generalized != ""):
		s.odd++
		s.oddRun++
	case taken, resync:
		s.oddRun = 0
	}
	switch {
	case counted && dest.label == cur.label:
		s.run++
	case taken, resync:
		s.run = 1
	}
	if taken || fellBack || (dest != cur && c.monitor) {
		c.cons.Visit(s.seen, dest.label)
	}
	if d.Allowed {
		if taken && r != nil {
			r.apply(s)
		}
		s.write(slots, len(c.slotRes))
	}
	s.state = dest
	d.State, d.Label, d.Instructions = dest.id, dest.label, dest.instructions
	d.NextMoves = c.nextMoves(s)
	return d
}

// capReason says which of a transition's caps, cr, a step along it from s's
// state would break: ReasonRepeatCap (its label once more in a row than
// the target's max_run), ReasonLoopCap (its own cap used up in this stay, or
// a back edge past the loop's max_iterations), or ReasonNone.
func (c *compiled) capReason(s *session, cr capRef) string {
	switch {
	case cr.run > 0 && s.run >= cr.run:
		return ReasonRepeatCap
	case cr.slot >= 0 && s.counts[cr.slot] >= cr.max, cr.back && s.iters >= c.loopMax[s.state.loop]:
		return ReasonLoopCap
	}
	return ReasonNone
}

// enterLoop starts a stay in loop li (-1: none), with fresh counts.
func (s *session) enterLoop(li int, c *compiled) {
	s.loop = li
	n := 0
	if li >= 0 {
		n = c.loopSlots[li]
	}
	if cap(s.counts) < n {
		s.counts = make([]int, n)
	}
	s.counts = s.counts[:n]
	clear(s.counts)
	s.iters = 0
}

// nextMoves returns the moves out of s's state that would be allowed now. It
// returns the state's shared slice unless a cap or the watchdog rules a move
// out.
func (c *compiled) nextMoves(s *session) []MoveOption {
	st := s.state
	moves, caps := st.moves, st.moveCaps
	if c.maxOdd > 0 && s.odd >= c.maxOdd || c.maxOddRun > 0 && s.oddRun >= c.maxOddRun {
		moves, caps = st.common, st.commonCaps // max_unusual used up, or max_unusual_run reached
	}
	blocked := func(i int) bool {
		if c.capReason(s, caps[i]) != ReasonNone {
			return true
		}
		if kind, _ := c.cons.Check(s.seen, moves[i].Label); kind != "" {
			return true
		}
		return c.watchMax > 0 && moves[i].To == st.id && s.turns+1 > c.watchMax
	}
	first := -1
	for i := range moves {
		if blocked(i) {
			first = i
			break
		}
	}
	if first < 0 {
		return moves
	}
	out := make([]MoveOption, 0, len(moves)-1)
	out = append(out, moves[:first]...)
	for i := first + 1; i < len(moves); i++ {
		if !blocked(i) {
			out = append(out, moves[i])
		}
	}
	return out
}

// lookup returns the live session id, expiring it if idle past the TTL and
// carrying it over to model c if it was made under an earlier one; nil if
// there is none. sh must be locked.
func (g *Guard) lookup(sh *shard, id string, now time.Time, c *compiled) *session {
	s := sh.sessions[id]
	if s == nil {
		return nil
	}
	if g.ttl > 0 && now.Sub(s.last) >= g.ttl {
		sh.remove(s)
		g.live.Add(-1)
		g.expired.Add(1)
		return nil
	}
	if s.gen != c.gen {
		switch g.carry(s, c.of(s)) {
		case carryDropped:
			sh.remove(s)
			g.live.Add(-1)
			return nil
		}
	}
	return s
}

func (g *Guard) create(sh *shard, id string, c *compiled) *session {
	if sh.limit > 0 && len(sh.sessions) >= sh.limit {
		sh.remove(sh.lru.prev)
		g.live.Add(-1)
		g.evicted.Add(1)
	}
	s := &session{id: id, state: c.start, gen: c.gen, loop: -1}
	if c.cons != nil {
		s.seen, s.cons = c.cons.Seen(), c.cons
	}
	if c.start.loop >= 0 {
		s.enterLoop(c.start.loop, c)
	}
	sh.sessions[id] = s
	sh.pushFront(s)
	g.live.Add(1)
	g.created.Add(1)
	return s
}

const (
	carryKept = iota
	carryRemapped
	carryDropped
)

// carry moves s to model c: a state that c still has is kept; otherwise the
// session moves to the most visited state of c with the same label, or is
// dropped when c has none. Loop counts start afresh either way.
func (g *Guard) carry(s *session, c *compiled) int {
	res := carryKept
	st, ok := c.states[s.state.id]
	if !ok {
		st, ok = c.labels[s.state.label]
		if !ok {
			g.dropped.Add(1)
			return carryDropped
		}
		res = carryRemapped
		g.remapped.Add(1)
	}
	if st.label != s.state.label {
		s.run = 1
	}
	s.state = st
	s.gen = c.gen
	s.enterLoop(st.loop, c)
	if s.cons != c.cons {
		// The constrained labels visited, by name, in c's indexes.
		s.seen, s.cons = s.cons.Carry(s.seen, c.cons), c.cons
	}
	if s.args != nil && c.standFor != nil {
		// Text seen under a label the earlier model lacked, kept under
		// its stand-in, counts under the label now that c has it.
		s.args.Relabel(func(label string) (string, bool) {
			l, ok := c.standFor[label]
			return l, ok
		})
	}
	return res
}

// Reload puts model m, and policy p (nil: keep the policy in force), in
// force without dropping live sessions. It validates m and checks the policy
// against it; on error the guard keeps what it had. A session whose state id
// is still in m stays there; one whose state is gone moves to the most
// visited state of m with the same label, or is dropped (a later step starts
// it afresh) when m has no such label. Every session's loop counts restart
// (a new stay, which may take the loop's back edges max_iterations times
// again); its counts of unusual steps and of visits of its label in a row
// carry over.
func (g *Guard) Reload(m *automaton.Model, p *Policy) (ReloadStats, error) {
	var st ReloadStats
	if m == nil {
		return st, errors.New("guard: no model")
	}
	if err := m.Validate(); err != nil {
		return st, err
	}
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	old := g.cur.Load()
	if p == nil {
		p = old.policy
	}
	c, err := compile(m, p)
	if err != nil {
		return st, err
	}
	c.setGen(old.gen + 1)
	g.cur.Store(c)
	for i := range g.shards {
		sh := &g.shards[i]
		sh.mu.Lock()
		for _, s := range sh.sessions {
			if s.gen == c.gen {
				st.Kept++ // a step already carried it over
				continue
			}
			switch g.carry(s, c.of(s)) {
			case carryKept:
				st.Kept++
			case carryRemapped:
				st.Remapped++
			case carryDropped:
				st.Dropped++
				sh.remove(s)
				g.live.Add(-1)
			}
		}
		sh.mu.Unlock()
	}
	return st, nil
}

// Session returns a snapshot of session id, history oldest first, and
// whether it is live.
func (g *Guard) Session(id string) (SessionInfo, bool) {
	now := g.now()
	sh := g.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	c := g.cur.Load()
	s := g.lookup(sh, id, now, c)
	if s == nil {
		return SessionInfo{}, false
	}
	info := SessionInfo{
		Map:          c.of(s).by.mapName,
		ID:           s.id,
		State:        s.state.id,
		Label:        s.state.label,
		Steps:        s.steps,
		Turns:        s.turns,
		LastSeen:     s.last,
		Slots:        make(map[string]interface{}, len(s.slots)),
		Instructions: s.state.instructions,
		History:      make([]HistoryEntry, 0, len(s.hist)),
	}
	for _, sl := range s.slots {
		info.Slots[sl.Name] = sl.jsonValue()
	}
	info.History = append(info.History, s.hist[s.hpos:]...)
	info.History = append(info.History, s.hist[:s.hpos]...)
	return info, true
}

// End forgets session id and reports whether it was live.
func (g *Guard) End(id string) bool {
	now := g.now()
	sh := g.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s := g.lookup(sh, id, now, g.cur.Load())
	if s == nil {
		return false
	}
	sh.remove(s)
	g.live.Add(-1)
	g.ended.Add(1)
	return true
}

// Sweep expires every session idle past the TTL and returns how many it
// expired. Step and Session expire idle sessions they meet; Sweep reclaims
// the memory of those no one asks about again.
func (g *Guard) Sweep() int {
	if g.ttl <= 0 {
		return 0
	}
	now := g.now()
	n := 0
	for i := range g.shards {
		sh := &g.shards[i]
		sh.mu.Lock()
		for s := sh.lru.prev; s != &sh.lru && now.Sub(s.last) >= g.ttl; s = sh.lru.prev {
			sh.remove(s)
			n++
		}
		sh.mu.Unlock()
	}
	g.live.Add(int64(-n))
	g.expired.Add(int64(n))
	return n
}

func (sh *shard) pushFront(s *session) {
	s.prev = &sh.lru
	s.next = sh.lru.next
	s.next.prev = s
	sh.lru.next = s
}

func (sh *shard) touch(s *session) {
	if sh.lru.next == s {
		return
	}
	s.prev.next = s.next
	s.next.prev = s.prev
	sh.pushFront(s)
}

func (sh *shard) remove(s *session) {
	s.prev.next = s.next
	s.next.prev = s.prev
	s.prev, s.next = nil, nil
	delete(sh.sessions, s.id)
}

// compileConstraints compiles the model's constraints for stepping.
func compileConstraints(cs []automaton.Constraint) *rules.Set {
	rs := make([]rules.Rule, len(cs))
	for i, c := range cs {
		rs[i] = rules.Rule{Kind: c.Kind, A: c.A, B: c.B, Or: c.Or}
	}
	return rules.Compile(rs)
}
