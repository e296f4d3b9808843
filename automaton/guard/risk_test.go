package guard

import (
	"math"
	"testing"

	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/automaton/internal/modeltest"
	"github.com/fsmine/fsmine/automaton/internal/risk"
)

// FuzzAlign reads the input as a session over a small alphabet (the
// model's moves and a few it does not know) and checks Check and Align
// against the dynamic program, and the greedy alignment's validity.
// TestGuardRisk checks that the guard's running risk is the surprisal of
// the steps proposed: along a path of the model, Surprisal's; a step the
// model has no transition for costs a finite surprise above the others.
func TestGuardRisk(t *testing.T) {
	m := modeltest.Retry(t)
	g, err := New(m, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	moves := modeltest.Moves(">a", "ok>b", "retry>b", "ok>c", "ok>__end__")
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
