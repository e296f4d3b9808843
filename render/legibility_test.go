package render

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

func TestCrossings(t *testing.T) {
	box := rect{-5, -5, 5, 5} // a node at the origin
	tests := []struct {
		name  string
		lines [][]point
		want  int
	}{
		{"an X", [][]point{{{20, 20}, {40, 40}}, {{20, 40}, {40, 20}}}, 1},
		{"an X on a node", [][]point{{{-10, -10}, {10, 10}}, {{-10, 10}, {10, -10}}}, 0},
		{"parallel", [][]point{{{0, 0}, {10, 0}}, {{0, 1}, {10, 1}}}, 0},
		{"meeting at a node", [][]point{{{0, 0}, {20, 20}}, {{0, 0}, {20, -20}}, {{-3, 3}, {3, -3}}}, 0},
		{"twice, far apart", [][]point{{{0, 20}, {100, 20}}, {{10, 0}, {20, 40}, {30, 0}}}, 2},
		{"three edges through one point", [][]point{{{-10, 20}, {10, 40}}, {{-10, 40}, {10, 20}}, {{0, 10}, {0, 50}}}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := crossings(tt.lines, []rect{box}); got != tt.want {
				t.Errorf("crossings = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestSummaryLegible holds the review map of a synthetic model of 10
// states with loops to the bar: fitted to a 1,920 × 1,200 screen,
// its smallest label is at least 9 px and at most 5 edges cross; and a
// loop's edge is written against the spine (dir=back) so that it is drawn
// beside it.
func TestSummaryLegible(t *testing.T) {
	m := syntheticModel(t, 10, 1)
	l, err := MeasureLayout(m, Options{Detail: DetailSummary})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.MinFont * l.Scale; got < 9 || l.Crossings > 5 {
		t.Errorf("%d × %d px, smallest label %.1f px on screen, %d crossings; want >= 9 px, <= 5", l.Width, l.Height, got, l.Crossings)
	}
	if math.Abs(l.MinFont-14*pngDPI/72.0) > 1e-9 {
		t.Errorf("smallest font %.2f px, want 14 pt (%.2f px)", l.MinFont, 14*pngDPI/72.0)
	}
	dot := string(render(t, DOT, loopModel(), Options{Detail: DetailSummary}))
	if !strings.Contains(dot, `dir="back"`) || !strings.Contains(dot, `rankdir="TB"`) {
		t.Errorf("the summary has no edge drawn back up a top-down spine:\n%s", dot)
	}
	full, err := MeasureLayout(m, Options{Detail: DetailFull})
	if err != nil {
		t.Fatal(err)
	}
	if full.MinFont >= l.MinFont {
		t.Errorf("full detail's smallest font %.1f px; want today's 9 pt __end__ (12 px)", full.MinFont)
	}
}

// loopModel is __start__ -> plan -> act -> check -> __end__ with a busy
// loop back from check to plan.
func loopModel() *automaton.Model {
	m := &automaton.Model{Schema: automaton.Schema, Version: 1, Initial: automaton.StartID,
		Trunk: []string{"plan", "act", "check"}}
	for _, id := range []string{automaton.StartID, "plan", "act", "check", automaton.EndID} {
		m.States = append(m.States, automaton.State{ID: id, Label: id, Visits: 100, Sessions: 100})
	}
	for _, t := range []automaton.Transition{
		{From: automaton.StartID, To: "plan", Count: 100, Prob: 1},
		{From: "plan", Event: "ok", To: "act", Count: 160, Prob: 1},
		{From: "act", Event: "ok", To: "check", Count: 160, Prob: 1},
		{From: "check", Event: "ok", To: automaton.EndID, Count: 100, Prob: 0.625},
		{From: "check", Event: "retry", To: "plan", Count: 60, Prob: 0.375, BackEdge: true},
	} {
		t.Sessions = t.Count
		m.Transitions = append(m.Transitions, t)
	}
	m.Sort()
	return m
}

func TestFitMap(t *testing.T) {
	mined := loopModel()
	design := &automaton.Model{Schema: automaton.Schema, Version: 1, Initial: automaton.StartID}
	for _, id := range []string{automaton.StartID, "plan", "act", "check", "fail", automaton.EndID} {
		design.States = append(design.States, automaton.State{ID: id, Label: id})
	}
	design.Transitions = append(design.Transitions, []automaton.Transition{
		{From: automaton.StartID, To: "plan"},
		{From: "plan", Event: "ok", To: "act"},
		{From: "act", Event: "ok", To: "check"},
		{From: "act", Event: "empty", To: "fail"}, // shorter, but a failure
		{From: "fail", Event: "ok", To: automaton.EndID},
		{From: "check", Event: "ok", To: automaton.EndID},
		{From: "check", Event: "retry", To: "act"},       // never taken
		{From: "plan", Event: "no", To: automaton.EndID}, // shorter still: declined
	}...)
	fit, err := FitMap(design, mined)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(fit.HappyPath, " "), "plan act check"; got != want {
		t.Errorf("happy path %q, want %q", got, want)
	}
	if fit.OnTrunk != 3 || len(fit.Moves) != 8 || fit.Drawn != 4 {
		t.Errorf("on trunk %d, moves %d, drawn %d; want 3, 8, 4 (missing %v)", fit.OnTrunk, len(fit.Moves), fit.Drawn, fit.Missing)
	}
}

// A design too large to search for its longest path settles for the
// shortest: every node of 40 reaches every other one.
func TestFitMapHappyPathBudget(t *testing.T) {
	design := &automaton.Model{Schema: automaton.Schema, Version: 1, Initial: automaton.StartID}
	design.States = append(design.States, automaton.State{ID: automaton.StartID}, automaton.State{ID: automaton.EndID})
	for i := range 40 {
		id := fmt.Sprintf("s%02d", i)
		design.States = append(design.States, automaton.State{ID: id, Label: id})
		for j := range 40 {
			if j != i {
				design.Transitions = append(design.Transitions, automaton.Transition{From: id, Event: "ok", To: fmt.Sprintf("s%02d", j)})
			}
		}
	}
	design.Transitions = append(design.Transitions,
		automaton.Transition{From: automaton.StartID, To: "s00"},
		automaton.Transition{From: "s39", Event: "ok", To: automaton.EndID})
	design.Sort()
	fit, err := FitMap(design, loopModel())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(fit.HappyPath, " "), "s00 s39"; got != want {
		t.Errorf("happy path %q, want %q", got, want)
	}
}
