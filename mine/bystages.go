package mine

import (
	"slices"
	"strings"

	"github.com/fsmine/fsmine/automaton"
)

// stagesMap returns the sub-map of value v in mode automaton.ByStages: the
// shared map m restricted to the labels that the sessions of lg with value
// v visit. A value's few sessions rarely show every order of its stages,
// but they do show which stages it needs; the shared map, mined from every
// session, knows how those stages connect. The restriction keeps:
//
//   - the states of those labels, __start__ and __end__, less those that no
//     path from __start__ to __end__ through kept states reaches (the
//     value's own sessions fit m, so none of their states goes);
//   - the transitions between kept states, with m's counts and flags and
//     prob renormalised over the kept outflow of their source (rare again
//     by m's rare-count and rare-ratio);
//   - each loop of m on its kept states and back edges, with its cap, when
//     a back edge is left (every cycle of the restriction is one of m and
//     holds one of m's back edges);
//   - each constraint of m as it reads when the dropped labels cannot
//     occur (see restrictConstraint).
//
// Sessions, Events and Variants are the value's, Trunk the restriction's.
func stagesMap(m *automaton.Model, lg *Log, values map[string]string, v string) automaton.SubMap {
	labels := map[string]bool{automaton.StartID: true, automaton.EndID: true}
	sub := automaton.SubMap{Value: v, Initial: m.Initial}
	paths := map[string]bool{}
	var path strings.Builder
	for i := range lg.Sessions {
		s := &lg.Sessions[i]
		if x, ok := values[s.ID]; !ok || x != v {
			continue
		}
		sub.Sessions++
		sub.Events += len(s.Visits)
		path.Reset()
		for _, vis := range s.Visits {
			labels[lg.Name(vis.Label)] = true
			path.WriteString(lg.Name(vis.Label))
			path.WriteByte(0)
			path.WriteString(lg.Name(vis.Event))
			path.WriteByte(1)
		}
		paths[path.String()] = true
	}
	sub.Variants = len(paths)

	keep := trimmed(m, labels)
	outflow := map[string]int{}
	for _, t := range m.Transitions {
		if keep[t.From] && keep[t.To] {
			outflow[t.From] += t.Count
		}
	}
	for _, s := range m.States {
		if keep[s.ID] {
			sub.States = append(sub.States, s)
		}
	}
	for _, t := range m.Transitions {
		if !keep[t.From] || !keep[t.To] {
			continue
		}
		if t.Generalized == "" {
			p := 0.0
			if outflow[t.From] > 0 {
				p = float64(t.Count) / float64(outflow[t.From])
			}
			rc, rr := m.Params.RareCount, m.Params.RareRatio
			t.Prob, t.Rare = Round6(p), (rc > 0 && t.Count < rc) || (rr > 0 && p < rr)
		}
		sub.Transitions = append(sub.Transitions, t)
	}
	sub.Loops = restrictLoops(m.Loops, keep)
	for _, c := range m.Constraints {
		if rc, ok := restrictConstraint(c, labels); ok {
			sub.Constraints = append(sub.Constraints, rc)
		}
	}
	sub.Trunk = trunk(&automaton.Model{States: sub.States, Transitions: sub.Transitions})
	return sub
}

// trimmed returns the states of m whose label is in labels and that lie on
// a path from __start__ to __end__ through such states.
func trimmed(m *automaton.Model, labels map[string]bool) map[string]bool {
	in := map[string]bool{}
	for _, s := range m.States {
		if labels[s.Label] {
			in[s.ID] = true
		}
	}
	fwd := map[string][]string{}
	back := map[string][]string{}
	for _, t := range m.Transitions {
		if in[t.From] && in[t.To] {
			fwd[t.From] = append(fwd[t.From], t.To)
			back[t.To] = append(back[t.To], t.From)
		}
	}
	from, to := reach(automaton.StartID, fwd), reach(automaton.EndID, back)
	keep := map[string]bool{}
	for id := range from {
		if to[id] {
			keep[id] = true
		}
	}
	return keep
}

// reach returns the states that next reaches from start, start included.
func reach(start string, next map[string][]string) map[string]bool {
	seen := map[string]bool{start: true}
	stack := []string{start}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, n := range next[s] {
			if !seen[n] {
				seen[n] = true
				stack = append(stack, n)
			}
		}
	}
	return seen
}

// restrictLoops returns loops on their states in keep and the back edges
// between them, leaving out a loop with no back edge left.
func restrictLoops(loops []automaton.Loop, keep map[string]bool) []automaton.Loop {
	var out []automaton.Loop
	for _, l := range loops {
		var edges []automaton.EdgeRef
		for _, e := range l.BackEdges {
			if keep[e.From] && keep[e.To] {
				edges = append(edges, e)
			}
		}
		if len(edges) == 0 {
			continue
		}
		l.BackEdges = edges
		l.States = slices.DeleteFunc(slices.Clone(l.States), func(id string) bool { return !keep[id] })
		out = append(out, l)
	}
	return out
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
