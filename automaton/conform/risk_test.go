package conform

import (
	"math"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/internal/modeltest"
	"github.com/fsmine/fsmine/automaton/internal/risk"
)

// TestRisk works the smoothed surprisal out by hand on modeltest.Retry: 43
// moves, into a 10, b 13, c 10 and __end__ 10 (4 labels), so that
// P(label) = (N(label)+1)/48.
func TestRisk(t *testing.T) {
	m := modeltest.Retry(t)
	lg := func(x float64) float64 { return -math.Log2(x) }
	pa, pb, pc, pe, pz := 11.0/48, 14.0/48, 11.0/48, 11.0/48, 1.0/48
	start := lg((10 + 1*pa) / 11) // __start__: n 10, d 1
	ab := lg((9 + 2*pb) / 12)     // a: n 10, d 2
	bc := lg((9 + 2*pc) / 15)     // b: n 13, d 2
	bb := lg((4 + 2*pb) / 15)     //
	ce := lg((10 + 1*pe) / 11)    // c: n 10, d 1
	azz := lg(2.0/12) + lg(pz)    // a unseen, label unknown: then lost
	lostC := lg(pc)               // from nowhere
	ac := lg((1 + 2*pc) / 12)     // the rare one
	bEnd := lg(2.0/15) + lg(pe)   // b unseen into __end__
	aboomA := lg(2.0/12) + lg(pa) // a unseen, label a: resync to a
	tests := []struct {
		name    string
		moves   []automaton.Move
		bits    float64
		maxMove int
		maxFrom string
		last    float64 // the move into __end__
	}{
		{"fits", modeltest.Moves(">a", "ok>b", "ok>c", "ok>__end__"), start + ab + bc + ce, 2, "b", ce},
		{"loop", modeltest.Moves(">a", "ok>b", "retry>b", "ok>c", "ok>__end__"), start + ab + bb + bc + ce, 2, "b", ce},
		{"rare", modeltest.Moves(">a", "skip>c", "ok>__end__"), start + ac + ce, 1, "a", ce},
		{"unknown label, then lost", modeltest.Moves(">a", "ok>zz", "ok>c", "ok>__end__"), start + azz + lostC + ce, 1, "a", ce},
		{"ends early", modeltest.Moves(">a", "ok>b", "ok>__end__"), start + ab + bEnd, 2, "b", bEnd},
		{"illegal, resync", modeltest.Moves(">a", "boom>a", "ok>b", "ok>c", "ok>__end__"), start + aboomA + ab + bc + ce, 1, "a", ce},
		{"no moves", nil, 0, -1, "", 0},
	}
	c := New(m, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, got := range []Risk{Surprisal(m, tt.moves), c.Check(tt.moves).Risk} {
				if math.Abs(got.Bits-tt.bits) > 1e-9 {
					t.Errorf("Bits = %v, want %v", got.Bits, tt.bits)
				}
				if math.Abs(got.LastBits-tt.last) > 1e-9 {
					t.Errorf("LastBits = %v, want %v", got.LastBits, tt.last)
				}
				if got.MaxMove != tt.maxMove || got.MaxFrom != tt.maxFrom {
					t.Errorf("most surprising move = %d from %q, want %d from %q", got.MaxMove, got.MaxFrom, tt.maxMove, tt.maxFrom)
				}
				if math.IsInf(got.Bits, 0) || math.IsNaN(got.Bits) {
					t.Errorf("Bits = %v, want finite", got.Bits)
				}
			}
		})
	}
}

// TestRiskMostVisited checks that after an unseen move the walk goes on
// from the most visited state carrying the label, not the first by id.
func TestRiskMostVisited(t *testing.T) {
	m := modeltest.Check(t,
		automaton.Transition{From: automaton.StartID, To: "a", Count: 10},
		automaton.Transition{From: "a", Event: "p", To: "x1", Count: 3},
		automaton.Transition{From: "a", Event: "q", To: "x2", Count: 7},
		automaton.Transition{From: "x1", Event: "ok", To: automaton.EndID, Count: 3},
		automaton.Transition{From: "x2", Event: "go", To: automaton.EndID, Count: 7},
	)
	for i := range m.States {
		switch m.States[i].ID {
		case "x1":
			m.States[i].Label, m.States[i].Visits = "x", 3
		case "x2":
			m.States[i].Label, m.States[i].Visits = "x", 7
		}
	}
	m.Reindex()
	// a -r-> x is unseen: the walk goes on from x2, where go>__end__ is
	// a transition, so the last move costs what it costs through x2.
	got := Surprisal(m, modeltest.Moves(">a", "r>x", "go>__end__"))
	want := Surprisal(m, modeltest.Moves(">a", "q>x", "go>__end__"))
	rt := risk.New(m)
	stateIndex := func(id string) int {
		for i, s := range m.States {
			if s.ID == id {
				return i
			}
		}
		return -1
	}
	unseen, to := rt.Unseen(stateIndex("a"), "x")
	if to < 0 || m.States[to].ID != "x2" {
		t.Errorf("the walk goes on from %d, want x2 (7 visits to 3)", to)
	}
	gox2 := rt.Trans[m.NextIndex("x2", automaton.Move{Event: "go", Label: automaton.EndID})]
	start := rt.Trans[m.NextIndex(automaton.StartID, automaton.Move{Event: "", Label: "a"})]
	if d := got.Bits - (start + unseen + gox2); math.Abs(d) > 1e-9 {
		t.Errorf("Bits = %v, want %v (resync to x2)", got.Bits, start+unseen+gox2)
	}
	if got.Bits <= want.Bits {
		t.Errorf("unseen move costs %v in all, the seen one %v: want more", got.Bits, want.Bits)
	}
}

// TestRiskHugeCounts: counts that add up past what an int holds (a model
// made in memory; a model file's are refused by Validate) give finite bits,
// not NaN, which JSON cannot carry.
func TestRiskHugeCounts(t *testing.T) {
	m := modeltest.Check(t,
		automaton.Transition{From: automaton.StartID, To: "a", Count: 1},
		automaton.Transition{From: automaton.StartID, To: "b", Count: 1},
		automaton.Transition{From: "a", Event: "ok", To: automaton.EndID, Count: 1},
		automaton.Transition{From: "b", Event: "ok", To: automaton.EndID, Count: 1},
	)
	for i := range m.Transitions {
		m.Transitions[i].Count = math.MaxInt64
	}
	r := Surprisal(m, modeltest.Moves(">a", "ok>__end__"))
	if math.IsNaN(r.Bits) || math.IsInf(r.Bits, 0) || math.Abs(r.Bits-1) > 1e-6 {
		t.Errorf("Bits = %v, want about 1 (a or b, then the end for sure)", r.Bits)
	}
}
