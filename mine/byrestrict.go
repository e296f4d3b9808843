package mine

import (
	"encoding/binary"
	"slices"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/walk"
)

// restrictedMap returns the sub-map of value v in mode automaton.ByStages
// or automaton.ByMoves: the shared map m restricted to the labels that the
// sessions of lg with value v (sessions, indices into lg.Sessions) visit and, in ByMoves, to the moves between
// labels (one label after another, whatever the event; __start__ to the
// first, the last to __end__) that those sessions made. A value's few
// sessions rarely show every order of its stages, but they do show which
// stages it needs, and which stage each may follow; the shared map, mined
// from every session, knows how those stages connect. A move the value
// made is kept wherever the shared map makes it, in any context; a move
// between two of its stages that none of its sessions made is not. The
// restriction keeps:
//
//   - the states of those labels, __start__ and __end__, less those that no
//     path from __start__ to __end__ through kept transitions reaches (the
//     value's own sessions fit m, so none of their states goes);
//   - the transitions between kept states (of kept moves, in ByMoves), with
//     m's counts and flags and prob renormalised over the kept outflow of
//     their source (rare again by m's rare-count and rare-ratio); a
//     self-loop is a move like any other, kept where the value's sessions
//     repeat the label;
//   - each loop of m on its kept states and back edges, with its cap, while
//     a kept back edge (observed or generalised) closes it (every cycle of
//     the restriction is one of m and holds one of m's back edges);
//   - each constraint of m as it reads when the dropped labels cannot
//     occur (see restrictConstraint).
//
// Sessions, Events and Variants are the value's, Trunk the restriction's.
func restrictedMap(m *automaton.Model, lg *Log, sessions []int, v, mode string) automaton.SubMap {
	labels := map[string]bool{automaton.StartID: true, automaton.EndID: true}
	moves := map[[2]string]bool{}
	sub := automaton.SubMap{Value: v, Initial: m.Initial}
	paths := map[string]bool{}
	var path []byte
	for _, i := range sessions {
		s := &lg.Sessions[i]
		sub.Sessions++
		sub.Events += len(s.Visits)
		path = path[:0]
		prev := automaton.StartID
		for _, vis := range s.Visits {
			l := lg.Name(vis.Label)
			labels[l] = true
			moves[[2]string{prev, l}] = true
			prev = l
			path = binary.LittleEndian.AppendUint32(path, vis.Label)
			path = binary.LittleEndian.AppendUint32(path, vis.Event)
		}
		moves[[2]string{prev, automaton.EndID}] = true
		paths[string(path)] = true
	}
	sub.Variants = len(paths)

	label := make(map[string]string, len(m.States))
	for _, s := range m.States {
		label[s.ID] = s.Label
	}
	allowed := func(t *automaton.Transition) bool {
		from, to := label[t.From], label[t.To]
		return labels[from] && labels[to] && (mode != automaton.ByMoves || moves[[2]string{from, to}])
	}
	keep := trimmed(m, allowed)
	kept := func(t *automaton.Transition) bool { return keep[t.From] && keep[t.To] && allowed(t) }
	outflow := map[string]int{}
	edges := map[automaton.EdgeRef]bool{}
	for i := range m.Transitions {
		if t := &m.Transitions[i]; kept(t) {
			outflow[t.From] += t.Count
			edges[automaton.EdgeRef{From: t.From, Event: t.Event, To: t.To}] = true
		}
	}
	for _, s := range m.States {
		if keep[s.ID] {
			sub.States = append(sub.States, s)
		}
	}
	for _, t := range m.Transitions {
		if !kept(&t) {
			continue
		}
		if t.Generalized == "" {
			p := 0.0
			if outflow[t.From] > 0 {
				p = float64(t.Count) / float64(outflow[t.From])
			}
			t.Prob, t.Rare = Round6(p), isRare(t.Count, p, m.Params.RareCount, m.Params.RareRatio)
		}
		sub.Transitions = append(sub.Transitions, t)
	}
	sub.Loops = restrictLoops(m.Loops, keep, edges, sub.Transitions)
	for _, c := range m.Constraints {
		if rc, ok := restrictConstraint(c, labels); ok {
			sub.Constraints = append(sub.Constraints, rc)
		}
	}
	sub.Trunk = trunk(&automaton.Model{States: sub.States, Transitions: sub.Transitions})
	return sub
}

// trimmed returns the states of m that lie on a path from __start__ to
// __end__ through transitions that allowed keeps.
func trimmed(m *automaton.Model, allowed func(*automaton.Transition) bool) map[string]bool {
	fwd := map[string][]string{}
	back := map[string][]string{}
	for i := range m.Transitions {
		if t := &m.Transitions[i]; allowed(t) {
			fwd[t.From] = append(fwd[t.From], t.To)
			back[t.To] = append(back[t.To], t.From)
		}
	}
	from, to := walk.Reach(automaton.StartID, fwd), walk.Reach(automaton.EndID, back)
	keep := map[string]bool{}
	for id := range from {
		if to[id] {
			keep[id] = true
		}
	}
	return keep
}

// restrictLoops returns loops on their states in keep and their back edges
// in edges, leaving out a loop that no kept back edge closes any more. A
// loop's list of back edges holds observed transitions only; a generalised
// transition flagged as a back edge between two of its kept states closes
// it too, and the loop stays (with its cap) while one does: else the
// restriction would keep a cycle without the cap the shared map puts on it.
func restrictLoops(loops []automaton.Loop, keep map[string]bool, edges map[automaton.EdgeRef]bool, kept []automaton.Transition) []automaton.Loop {
	var out []automaton.Loop
	for _, l := range loops {
		var back []automaton.EdgeRef
		for _, e := range l.BackEdges {
			if edges[e] {
				back = append(back, e)
			}
		}
		l.States = slices.DeleteFunc(slices.Clone(l.States), func(id string) bool { return !keep[id] })
		if len(back) == 0 && !closedBy(l.States, kept) {
			continue
		}
		l.BackEdges = back
		out = append(out, l)
	}
	return out
}

// closedBy says whether a transition flagged as a back edge leads between
// two of states.
func closedBy(states []string, ts []automaton.Transition) bool {
	for _, t := range ts {
		if t.BackEdge && slices.Contains(states, t.From) && slices.Contains(states, t.To) {
			return true
		}
	}
	return false
}

// restrictConstraint returns c as it reads on a map whose labels are
// labels: a rule about a label that cannot occur holds vacuously and goes
// (a precedence whose b, a once or run whose a, a not_both with either
// side dropped); a precedence keeps the alternatives that can occur (the
// first as a, the rest as or), and a run whose b cannot occur becomes a
// run without one. The value's sessions keep every rule they were mined
// with, so a precedence they visit b of keeps an alternative.
func restrictConstraint(c automaton.Constraint, labels map[string]bool) (automaton.Constraint, bool) {
	switch c.Kind {
	case automaton.ConstraintPrecedence:
		if !labels[c.B] {
			return c, false
		}
		var alt []string
		for _, l := range append([]string{c.A}, c.Or...) {
			if labels[l] {
				alt = append(alt, l)
			}
		}
		if len(alt) == 0 {
			return c, false
		}
		c.A, c.Or = alt[0], alt[1:]
		if len(c.Or) == 0 {
			c.Or = nil
		}
	case automaton.ConstraintNotBoth:
		if !labels[c.A] || !labels[c.B] {
			return c, false
		}
	default: // once, run
		if !labels[c.A] {
			return c, false
		}
		if c.B != "" && !labels[c.B] {
			c.B = ""
		}
	}
	return c, true
}
