package guard

import (
	"math"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/automaton/internal/risk"
)

func conformModel(tb testing.TB) *automaton.Model {
	m := checkModel(tb,
		automaton.Transition{From: automaton.StartID, Event: "", To: "a", Count: 10},
		automaton.Transition{From: "a", Event: "ok", To: "b", Count: 9},
		automaton.Transition{From: "a", Event: "skip", To: "c", Count: 1, Rare: true},
		automaton.Transition{From: "b", Event: "ok", To: "c", Count: 9},
		automaton.Transition{From: "b", Event: "retry", To: "b", Count: 4, BackEdge: true},
		automaton.Transition{From: "c", Event: "ok", To: automaton.EndID, Count: 10},
	)
	m.Loops = []automaton.Loop{{States: []string{"b"}, BackEdges: []automaton.EdgeRef{{From: "b", Event: "retry", To: "b"}}, Count: 4, Sessions: 3, MaxIterations: 2, P95Iterations: 2}}
	return m
}

// mvs builds moves from "event>label" pairs; "" before the first label.
func mvs(pairs ...string) []automaton.Move {
	out := make([]automaton.Move, len(pairs))
	for i, p := range pairs {
		for j := 0; j < len(p); j++ {
			if p[j] == '>' {
				out[i] = automaton.Move{Event: p[:j], Label: p[j+1:]}
			}
		}
	}
	return out
}

func checkModel(tb testing.TB, ts ...automaton.Transition) *automaton.Model {
	tb.Helper()
	m := &automaton.Model{Schema: automaton.Schema, Initial: automaton.StartID}
	ids := map[string]bool{automaton.StartID: true, automaton.EndID: true}
	for _, tr := range ts {
		ids[tr.From], ids[tr.To] = true, true
	}
	for id := range ids {
		m.States = append(m.States, automaton.State{ID: id, Label: id})
	}
	m.Transitions = ts
	m.Sort()
	if err := m.Validate(); err != nil {
		tb.Fatal(err)
	}
	return m
}

// FuzzAlign reads the input as a session over a small alphabet (the
// model's moves and a few it does not know) and checks Check and Align
// against the dynamic program, and the greedy alignment's validity.
// TestGuardRisk checks that the guard's running risk is the surprisal of
// the steps proposed: along a path of the model, Surprisal's; a step the
// model has no transition for costs a finite surprise above the others.
func TestGuardRisk(t *testing.T) {
	m := conformModel(t)
	g, err := New(m, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	moves := mvs(">a", "ok>b", "retry>b", "ok>c", "ok>__end__")
	var d Decision
	for _, mv := range moves {
		d = g.Step("s", mv.Event, mv.Label)
	}
	if want := risk.Round6(conform.Surprisal(m, moves).Bits); d.Risk != want {
		t.Errorf("Risk = %v after the path, want %v", d.Risk, want)
	}
	g.Step("t", "", "a")
	d = g.Step("t", "boom", "c")
	if d.Allowed || math.IsInf(d.Surprise, 0) || d.Surprise < 4.7 {
		t.Errorf("unseen step: allowed %v, surprise %v; want denied, finite, 4.71 bits (log2 12/2 + log2 48/11)", d.Allowed, d.Surprise)
	}
	before := d.Risk
	d = g.Step("t", "ok", "b")
	if !d.Allowed || d.Risk != risk.Round6(before+d.Surprise) && math.Abs(d.Risk-before-d.Surprise) > 2e-6 {
		t.Errorf("after a denial: allowed %v, risk %v; want allowed, %v + %v", d.Allowed, d.Risk, before, d.Surprise)
	}
}
