package render

import (
	"fmt"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// tangledModel is a trunk a, b with seven states off it, each of which
// leads to every later one: a complete graph of seven boxes, which no
// drawing lays out with fewer than 9 crossings.
func tangledModel() *automaton.Model {
	st := func(id string, visits int) automaton.State {
		return automaton.State{ID: id, Label: id, Visits: visits, Sessions: visits}
	}
	tr := func(from, to string, count int) automaton.Transition {
		return automaton.Transition{From: from, Event: "ok", To: to, Count: count, Sessions: count, Prob: 0.5}
	}
	m := &automaton.Model{
		Schema: automaton.Schema, Version: 1, Initial: automaton.StartID,
		States: []automaton.State{st(automaton.StartID, 100), st("a", 100), st("b", 100), st(automaton.EndID, 100)},
		Transitions: []automaton.Transition{
			{From: automaton.StartID, To: "a", Count: 100, Sessions: 100, Prob: 1},
			tr("a", "b", 60), tr("b", automaton.EndID, 100),
		},
		Trunk: []string{"a", "b"},
	}
	const k = 7
	for i := range k {
		p := fmt.Sprintf("p%d", i)
		m.States = append(m.States, st(p, 40))
		for j := i + 1; j < k; j++ {
			m.Transitions = append(m.Transitions, tr(p, fmt.Sprintf("p%d", j), 10+i+j))
		}
	}
	m.Transitions = append(m.Transitions, tr("a", "p0", 40), tr(fmt.Sprintf("p%d", k-1), "b", 40))
	m.Sort()
	return m
}

// TestUntangle: a summary whose picture crosses at more than maxCrossings
// points loses edges off the trunk until it does not, each counted on its
// box as crossing; the trunk stays.
func TestUntangle(t *testing.T) {
	m := tangledModel()
	sm := summarize(m)
	layout := func(sm *summary) Legibility {
		out, err := runBuiltin([]byte(sm.graph(Options{}, true).String()), "json")
		if err != nil {
			t.Fatal(err)
		}
		l, err := measureXDOT(out)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	before, drawn := layout(sm).Crossings, len(sm.edges)
	if before <= maxCrossings {
		t.Fatalf("the tangled model crosses at %d points as summarize draws it, want more than %d", before, maxCrossings)
	}
	sm.untangle()
	after := layout(sm).Crossings
	crossing := 0
	for _, n := range sm.nodes {
		crossing += n.hidden.crossing
	}
	t.Logf("%d edges crossing at %d points; untangled, %d edges at %d points", drawn, before, len(sm.edges), after)
	if after > maxCrossings {
		t.Errorf("untangled, the picture crosses at %d points, want at most %d", after, maxCrossings)
	}
	if crossing != drawn-len(sm.edges) || crossing == 0 {
		t.Errorf("%d transitions counted as crossing, %d edges taken out", crossing, drawn-len(sm.edges))
	}
	trunk := 0
	for _, e := range sm.edges {
		if e.trunk {
			trunk++
		}
	}
	if trunk != 3 {
		t.Errorf("%d trunk edges drawn, want 3", trunk)
	}
	if got := drawnSummary(m); fmt.Sprint(got.edges) != fmt.Sprint(sm.edges) {
		t.Error("drawnSummary draws other edges than summarize and untangle")
	}
}

// TestMostCrossing: untangle takes out an edge off the trunk whose boxes
// keep another drawn edge before one that would cut a box loose, the one
// crossing most first and, of equal crossings, the one taken fewest times.
func TestMostCrossing(t *testing.T) {
	sm := &summary{nodes: make([]sumNode, 5), edges: []sumEdge{
		{from: 0, to: 1, trunk: true, count: 50}, // e0
		{from: 1, to: 2, trunk: true, count: 50}, // e1
		{from: 1, to: 3, count: 30},              // e2: 3 is tied by e3 too
		{from: 3, to: 2, count: 20},              // e3
		{from: 1, to: 4, count: 40},              // e4: the only edge of box 4
		{from: 0, to: 2, count: 10},              // e5
	}}
	for _, tt := range []struct {
		per  map[string]int
		want int
	}{
		{map[string]int{"e0": 9, "e1": 9}, -1},                           // only the trunk crosses
		{map[string]int{"e4": 7, "e2": 1}, 2},                            // a tied edge before the loose one
		{map[string]int{"e4": 7}, 4},                                     // the loose one when nothing else crosses
		{map[string]int{"e2": 2, "e3": 3, "e5": 1}, 3},                   // the most crossings
		{map[string]int{"e2": 2, "e3": 2, "e5": 2, "e4": 2, "e0": 5}, 5}, // of equal crossings, the lightest
	} {
		if got := sm.mostCrossing(tt.per); got != tt.want {
			t.Errorf("mostCrossing(%v) = %d, want %d", tt.per, got, tt.want)
		}
	}
}
