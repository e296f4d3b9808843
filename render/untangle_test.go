package render

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
)

// tangledModel is a trunk a, b with seven states off it, each of which
// leads to every later one: a complete graph of seven boxes, which no
// drawing lays out with fewer than 9 crossings.
func tangledModel() *automaton.Model {
	st, tr := sumState, sumMove
	m := trunkAB(60)
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
	layout := func(sm *summary) measured {
		out, err := runBuiltin([]byte(sm.graph(Options{}, true).String()), "json", guard{})
		if err != nil {
			t.Fatal(err)
		}
		l, err := measureLayout(out)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	before, drawn := layout(sm).Crossings, len(sm.edges)
	if before <= maxCrossings {
		t.Fatalf("the tangled model crosses at %d points as summarize draws it, want more than %d", before, maxCrossings)
	}
	if err := sm.untangle(); err != nil {
		t.Fatal(err)
	}
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
	if got, err := drawnSummary(m); err != nil || fmt.Sprint(got.edges) != fmt.Sprint(sm.edges) {
		t.Errorf("drawnSummary draws other edges than summarize and untangle (%v)", err)
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

// TestEdgeCrossingsByID: crossings are counted against the edge's id, not
// its place in Graphviz's list. e2 and e0 cross once, e1 crosses nothing,
// and the layout lists them e2, e1, e0; the edge without an id (an
// invisible one) is no summary edge.
func TestEdgeCrossingsByID(t *testing.T) {
	const layout = `{"bb": "0,0,200,200", "_subgraph_cnt": 0, "objects": [], "edges": [
  {"id": "e2", "_draw_": [{"op": "b", "points": [[0,0],[30,30],[70,70],[100,100]]}]},
  {"id": "e1", "_draw_": [{"op": "b", "points": [[150,0],[150,60],[150,120],[150,180]]}]},
  {"id": "", "_draw_": []},
  {"id": "e0", "_draw_": [{"op": "b", "points": [[0,93],[30,63],[70,23],[100,-7]]}]}
]}`
	l, err := measureLayout([]byte(layout))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(l.edgeCrossings()), "map[e0:1 e1:0 e2:1]"; l.Crossings != 1 || got != want {
		t.Errorf("%d crossings, per edge %s; want 1, %s", l.Crossings, got, want)
	}
}

// TestSummaryGraphIDs: in the layout of a summary written with ids, the
// edge with id eK joins the boxes of the summary's edge K, head to tail
// where it is written against the spine (dir=back): c -> a goes back up.
func TestSummaryGraphIDs(t *testing.T) {
	st, tr := sumState, sumMove
	m := &automaton.Model{
		Schema: automaton.Schema, Version: 1, Initial: automaton.StartID,
		States: []automaton.State{st(automaton.StartID, 10), st("a", 15), st("b", 10), st("c", 15), st(automaton.EndID, 10)},
		Transitions: []automaton.Transition{
			{From: automaton.StartID, To: "a", Count: 10, Sessions: 10, Prob: 1},
			tr("a", "b", 10), tr("b", "c", 10), tr("c", automaton.EndID, 10), tr("c", "a", 5), tr("a", "c", 5),
		},
		Trunk: []string{"a", "b", "c"},
	}
	m.Sort()
	sm := summarize(m)
	out, err := runBuiltin([]byte(sm.graph(Options{}, true).String()), "json", guard{})
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Objects []struct {
			ID      int    `json:"_gvid"`
			Tooltip string `json:"tooltip"`
		} `json:"objects"`
		Edges []struct {
			ID         string `json:"id"`
			Tail, Head int
			Dir        string `json:"dir"`
		} `json:"edges"`
	}
	if err := json.Unmarshal(out, &g); err != nil {
		t.Fatal(err)
	}
	state := map[int]string{} // gvid: the state the box stands for
	for _, o := range g.Objects {
		state[o.ID] = o.Tooltip
	}
	back, seen := 0, 0
	for _, e := range g.Edges {
		if e.ID == "" {
			continue
		}
		seen++
		k, err := strconv.Atoi(strings.TrimPrefix(e.ID, "e"))
		if err != nil || k >= len(sm.edges) {
			t.Fatalf("edge id %q: no edge of the summary", e.ID)
		}
		from, to := state[e.Tail], state[e.Head]
		if e.Dir == "back" {
			from, to = to, from
			back++
		}
		se := sm.edges[k]
		if want := [2]string{sm.nodes[se.from].states[0].ID, sm.nodes[se.to].states[0].ID}; [2]string{from, to} != want {
			t.Errorf("edge %s joins %s -> %s, want %s -> %s", e.ID, from, to, want[0], want[1])
		}
	}
	if seen != len(sm.edges) || back == 0 {
		t.Errorf("%d edges with ids of %d, %d written against the spine; want all, and c -> a", seen, len(sm.edges), back)
	}
}
