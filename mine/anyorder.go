package mine

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// The any-order end of generalisation (GeneralizeAnyOrder): every label
// may follow every label, from every state, and a session may end after
// any label. What still decides is what the log shows over whole sessions
// and of each step: the learned constraints (constraints.go: prerequisites,
// once-only, runs, pairs that never meet), the run caps (runCaps), the
// labels a session starts with and the outcomes each label ends with. This
// is the Declare end of the spectrum (Pesic and van der Aalst, "A
// declarative approach for flexible business processes management", 2006):
// a model of what must and must not happen, the order between left free.
//
//   - start: a session may start with a label the log shows first, or with
//     one visited in fewer than the constraints' support (MinConstraintSupport
//     unless Options.ConstraintSupport), too few for
//     its absence at the start to say anything (Declare's init, held to a
//     precedence's support).
//   - events: a visit of A may end with any event the log shows ending A's
//     visits, towards any label. An event the log never shows ending A (an
//     error of a step that never failed in the log) leads only to a label
//     the log shows it leading to after at least minRetryLabels other
//     labels: what follows an outcome backs off from the label to the
//     outcome, as the auto setting's retry edit does.
//   - repeats: A may follow A only where A's run cap allows two visits in
//     a row: the any-order end invents no repeat. Its run caps are fitted
//     with the looser AnyOrderRunTail.
//
// The loops are the observed moves' (their caps as measured), and an added
// move is never a back edge. Were the added moves counted, every state
// would join one component, whose cap (the most back edges a training
// session took in it) denies sessions merely for being longer than those
// seen: a cap of the construction, not of the log. An added move out of a
// loop ends the stay, so a loop's cap bounds the stays the log showed,
// and what bounds a session as a whole is its run caps and its once and
// run constraints.

// The loose setting (GeneralizeLoose) is the any-order end less the moves
// the log argues against. A label A whose visits ended with event e n
// times, none of them followed by label Z, keeps that absence when Z is
// common enough elsewhere that n misses are unlikely by chance: with p the
// share of Z among the moves out of the labels other than A, (1 − p)^n <
// AbsenceLevel. This is the test auto's edits pass, turned round: there a
// move needs the test to find its absence plausible and positive evidence
// besides; here any move whose absence the test does not find telling is
// allowed. A rare label, or a label after a rare outcome, is free to move;
// a common pair the log keeps apart stays apart.

// AbsenceLevel is the level of the loose setting's test: auto's (see
// generalize.go), not tuned on the logs it was measured on.
const AbsenceLevel = GeneralizeLevel

// anyOrderEnd says whether b builds the any-order end or its loose form.
func (b *builder) anyOrderEnd() bool {
	return b.opt.Generalize == GeneralizeAnyOrder || b.opt.Generalize == GeneralizeLoose
}

// AnyOrderRunTail is RunTail for the any-order end. Its run caps are there
// to stop a runaway repeat; at RunTail they denied 4 of the 262 held-out
// sessions of tau2-bench retail and tau-bench airline (one search more
// than any training session made), at AnyOrderRunTail none.
const AnyOrderRunTail = 1e-4

// MaxAnyOrderMoves bounds the moves the any-order end may consider (states
// times the log's outcomes times its labels): past it, the model would
// hold far more moves than the log has steps, and build refuses.
const MaxAnyOrderMoves = 2_000_000

// anyOrder adds the moves of the any-order end to b.gen; it runs after
// newGeneralizer has learned the constraints and run caps.
func (b *builder) anyOrder() error {
	d := b.d
	ev := b.orderEvidence()
	// Each label's most visited state (the end's own for the end), in the
	// order of the labels' names.
	best := b.mostVisited()
	targets := make([]uint32, 0, len(best))
	for l := range best {
		targets = append(targets, l)
	}
	sort.Slice(targets, func(i, j int) bool { return b.rank[targets[i]] < b.rank[targets[j]] })
	if n := len(d.label) * max(len(ev.all), 1) * len(targets); n > MaxAnyOrderMoves {
		return fmt.Errorf("generalize %s: %d states, %d outcomes and %d labels make %d moves to weigh, more than %d: label the nodes into fewer stages first (fsmine labels suggest)",
			b.opt.Generalize, len(d.label), len(ev.all), len(targets), n, MaxAnyOrderMoves)
	}
	kind := GenAnyOrder
	var absent map[lpairEv]bool
	if b.opt.Generalize == GeneralizeLoose {
		kind, absent = GenLoose, b.absentMoves()
	}
	add := func(u int32, e, z uint32) {
		k := dkey{u, mkMove(e, z)}
		if _, ok := d.next[k]; !ok {
			b.gen[k] = genEdge{to: best[z], kind: kind}
		}
	}
	allowed := map[uint32][]move{} // per label: its moves, computed once
	for u := range d.label {
		a := d.label[u]
		switch {
		case int32(u) == b.end:
			continue
		case u == 0:
			for _, z := range targets {
				if (ev.first[z] || ev.sessions[z] < b.support()) && best[z] != b.end {
					for _, e := range ev.start {
						add(0, e, z)
					}
				}
			}
			continue
		}
		mvs, ok := allowed[a]
		if !ok {
			mvs = b.anyOrderMoves(a, ev, targets, absent)
			allowed[a] = mvs
		}
		for _, mv := range mvs {
			add(int32(u), mv.event(), mv.label())
		}
	}
	return nil
}

// anyOrderMoves returns the moves out of a visit of label a that the
// any-order end allows (what every state of a gains, unless it has them).
func (b *builder) anyOrderMoves(a uint32, ev *orderEvidence, targets []uint32, absent map[lpairEv]bool) []move {
	var mvs []move
	for _, e := range ev.all {
		own := ev.own[levent{a, e}]
		for _, z := range targets {
			if z == a && b.maxRun[a] < 2 {
				continue // a repeat the run caps deny
			}
			if absent[lpairEv{a, e, z}] {
				continue // the loose setting's test
			}
			if own || ev.leadsAfter(e, z, a) >= minRetryLabels {
				mvs = append(mvs, mkMove(e, z))
			}
		}
	}
	return mvs
}

// orderEvidence is what the any-order end reads from the moves the
// sessions took.
type orderEvidence struct {
	start    []uint32            // the events of the moves out of the start (the empty one), by rank
	own      map[levent]bool     // (label, event): the event ends some visit of the label
	all      []uint32            // every event ending a visit of a label, by rank
	after    map[levent][]uint32 // (next label, event): the labels (not the start) the event led to it from
	first    map[uint32]bool     // labels some session starts with
	sessions map[uint32]int      // per label: the sessions visiting it (see labelSessions)
}

// orderEvidence collects the events of each label (detours left out: a
// detour's event marks a self-loop taken out of the flow), the labels each
// event leads to and from, and the labels sessions start with.
func (b *builder) orderEvidence() *orderEvidence {
	d := b.d
	ev := &orderEvidence{own: map[levent]bool{}, after: map[levent][]uint32{},
		first: map[uint32]bool{}}
	keys := b.transKeys()
	byRank := func(xs []uint32) {
		sort.Slice(xs, func(i, j int) bool { return b.rank[xs[i]] < b.rank[xs[j]] })
	}
	seenEvent := map[uint32]bool{}
	for _, k := range keys {
		a, e, z := d.label[k.from], k.mv.event(), k.mv.label()
		if k.from == 0 {
			ev.first[z] = true
		}
		if b.detour[e] {
			continue
		}
		if !ev.own[levent{a, e}] {
			ev.own[levent{a, e}] = true
			switch {
			case k.from == 0:
				ev.start = append(ev.start, e)
			case !seenEvent[e]:
				seenEvent[e] = true
				ev.all = append(ev.all, e)
			}
		}
		if k.from != 0 && !slices.Contains(ev.after[levent{z, e}], a) {
			ev.after[levent{z, e}] = append(ev.after[levent{z, e}], a)
		}
	}
	byRank(ev.start)
	byRank(ev.all)
	ev.sessions = b.labelSessions()
	return ev
}

// leadsAfter is the number of labels other than a after which the log shows
// event e leading to label z.
func (ev *orderEvidence) leadsAfter(e, z, a uint32) int {
	n := 0
	for _, w := range ev.after[levent{z, e}] {
		if w != a {
			n++
		}
	}
	return n
}

// absentMoves is the loose setting's test: the moves (label, event, next
// label) that no session took and whose absence is unlikely by chance. A
// label's repeats are no evidence of what follows other labels, so they
// count on neither side of p; whether a label repeats is its run cap's to
// say. Moves out of the start and detours take no part, as in
// orderEvidence. The end is a label here too: a session ends after A only
// where the log does not argue against it.
func (b *builder) absentMoves() map[lpairEv]bool {
	d := b.d
	ended := map[levent]int{} // (label, event): visits ending with it
	out := map[uint32]int{}   // label: moves out of it to another label
	into := map[uint32]int{}  // label: moves into it from another label
	took := map[lpair]int{}   // (label, next label): moves, any event
	seen := map[lpairEv]bool{}
	total := 0
	for k, t := range b.trans {
		e := k.mv.event()
		if k.from == 0 || b.detour[e] {
			continue
		}
		a, z := d.label[k.from], k.mv.label()
		ended[levent{a, e}] += t.count
		seen[lpairEv{a, e, z}] = true
		if a == z {
			continue
		}
		out[a] += t.count
		into[z] += t.count
		took[lpair{a, z}] += t.count
		total += t.count
	}
	absent := map[lpairEv]bool{}
	for ae, n := range ended {
		rest := total - out[ae.a]
		if rest <= 0 {
			continue
		}
		for z, c := range into {
			mv := lpairEv{ae.a, ae.e, z}
			if z == ae.a || seen[mv] {
				continue
			}
			p := float64(c-took[lpair{ae.a, z}]) / float64(rest)
			if math.Pow(1-p, float64(n)) < AbsenceLevel {
				absent[mv] = true
			}
		}
	}
	return absent
}
