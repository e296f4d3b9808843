package guard

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
)

// randomModel is a small valid model drawn from r: up to five states whose
// labels may be shared, moves chosen at random (at most one per event and
// label from a state), some rare, some generalised, some marked back
// edges, states put in loops with caps, and max_runs; nil when the draw is
// not a valid model.
func randomModel(r *rand.Rand) *automaton.Model {
	n := 2 + r.IntN(4)
	labels := []string{"a", "b", "c"}
	ids := make([]string, n)
	label := map[string]string{automaton.EndID: automaton.EndID}
	for i := range ids {
		ids[i] = fmt.Sprintf("s%d", i)
		label[ids[i]] = labels[r.IntN(len(labels))]
	}
	var es []edge
	used := map[string]bool{}
	add := func(from, event, to string) {
		if k := from + "\x00" + event + "\x00" + label[to]; !used[k] {
			used[k] = true
			es = append(es, edge{from, event, to, 1 + r.IntN(9), r.IntN(5) == 0})
		}
	}
	add(automaton.StartID, "", ids[0])
	if r.IntN(2) == 0 {
		add(automaton.StartID, "", ids[r.IntN(n)])
	}
	for _, from := range ids {
		for _, ev := range []string{"ok", "err"} {
			for _, to := range append(slices.Clone(ids), automaton.EndID) {
				if r.IntN(3) == 0 {
					add(from, ev, to)
				}
			}
		}
	}
	m := buildModelUnchecked(1, es)
	loopOf := map[string]int{}
	for i := range m.States {
		s := &m.States[i]
		if l, ok := label[s.ID]; ok && s.ID != automaton.EndID {
			s.Label = l
			s.MaxRun = r.IntN(4)
			if k := r.IntN(4); k < 2 {
				loopOf[s.ID] = k
			}
		}
	}
	m.Loops = nil
	for li := range 2 {
		l := automaton.Loop{MaxIterations: r.IntN(4), Count: 1, Sessions: 1}
		for _, id := range ids {
			if k, ok := loopOf[id]; ok && k == li {
				l.States = append(l.States, id)
			}
		}
		if len(l.States) == 0 {
			continue
		}
		for i := range m.Transitions {
			t := &m.Transitions[i]
			lf, okf := loopOf[t.From]
			lt, okt := loopOf[t.To]
			in := okf && okt && lf == li && lt == li
			if r.IntN(3) == 0 {
				t.BackEdge = true
			}
			if in && (t.BackEdge || r.IntN(8) == 0) {
				l.BackEdges = append(l.BackEdges, automaton.EdgeRef{From: t.From, Event: t.Event, To: t.To})
			}
		}
		m.Loops = append(m.Loops, l)
	}
	for i := range m.Transitions {
		if t := &m.Transitions[i]; t.From != automaton.StartID && r.IntN(8) == 0 {
			t.Generalized = "event"
		}
	}
	m.Sort()
	m.Digest = m.ComputeDigest()
	if m.Validate() != nil {
		return nil
	}
	return m
}

// TestGuardAgreesRandomModels: over random small models and policies, the
// guard in enforce mode denies first the step check first calls a
// deviation, naming the same cap where it is one, and in monitor mode
// names a cap at each step replay names it (where replay is not lost).
// Shared labels, loops whose listed and marked back edges differ, rare and
// generalised moves, max_run, both unusual caps, rare_is_deviation and
// "generalized": "deny" are all drawn.
func TestGuardAgreesRandomModels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	models, walks := 0, 0
	for models < 1500 {
		m := randomModel(r)
		if m == nil {
			continue
		}
		models++
		p := &Policy{MaxUnusual: r.IntN(4), MaxUnusualRun: r.IntN(3), RareIsDeviation: r.IntN(4) == 0}
		if r.IntN(4) == 0 {
			p.Generalized = GeneralizedDeny
		}
		opt := conform.Options{MaxUnusual: p.MaxUnusual, MaxUnusualRun: p.MaxUnusualRun, RareIsDeviation: p.RareIsDeviation, GeneralizedIsDeviation: p.Generalized == GeneralizedDeny}
		c := conform.New(m, opt)
		mon := *p
		mon.Mode = ModeMonitor
		for range 20 {
			walks++
			mvs := []automaton.Move{{Label: "abc"[r.IntN(3):][:1]}}
			for len(mvs) < 9 {
				l := []string{"a", "b", "c", automaton.EndID, "zzz"}[r.IntN(5)]
				mvs = append(mvs, automaton.Move{Event: []string{"ok", "err"}[r.IntN(2)], Label: l})
				if l == automaton.EndID {
					break
				}
			}
			at, verdict := c.Miss(mvs)
			denied, reason := firstDenial(t, m, p, mvs, at, verdict)
			if denied != at || at >= 0 && reason != verdict && (slices.Contains(capReasons, reason) || slices.Contains(capReasons, verdict)) {
				t.Fatalf("policy %+v, walk %v: the guard denies step %d (%s), check deviates at %d (%s)\nmodel %+v", *p, mvs, denied, reason, at, verdict, m)
			}
			gm, err := New(m, &mon, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i, st := range c.Replay(mvs) {
				d := gm.Step("s", mvs[i].Event, mvs[i].Label)
				if v := st.Verdict; v != conform.StepLost && d.Reason != v && (slices.Contains(capReasons, d.Reason) || slices.Contains(capReasons, v)) {
					t.Fatalf("monitor, policy %+v, walk %v: step %d is %q in the guard, %s in replay\nmodel %+v", *p, mvs, i, d.Reason, v, m)
				}
			}
		}
	}
	t.Logf("%d models, %d walks", models, walks)
}
