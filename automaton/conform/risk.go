package conform

import (
	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/internal/risk"
)

// Risk is a session's surprisal under a model: Bits is the sum over its
// moves of -log2 of each move's probability, smoothed (Witten-Bell, backing
// off to the labels' shares; see automaton/internal/risk), MaxBits the
// largest term and MaxMove the index of its move (the first, on ties; -1
// for no move), made from state MaxFrom ("" when the walk did not know the
// state). After a move the model has no transition for, the walk goes on
// from the most visited state carrying the move's label.
type Risk struct {
	Bits    float64
	MaxBits float64
	MaxMove int
	MaxFrom string
}

// add adds a move's cost to r.
func (r *Risk) add(i int, bits float64, from string) {
	r.Bits += bits
	if r.MaxMove < 0 || bits > r.MaxBits {
		r.MaxBits, r.MaxMove, r.MaxFrom = bits, i, from
	}
}

// Surprisal returns the surprisal of moves under m (see Risk). It walks the
// model with NextIndex; Checker.Check returns the same figure with its
// verdict at less cost.
func Surprisal(m *automaton.Model, moves []automaton.Move) Risk {
	rt := risk.New(m)
	state := make(map[string]int, len(m.States))
	for i, s := range m.States {
		state[s.ID] = i
	}
	r := Risk{MaxMove: -1}
	at := -1
	if i, ok := state[automaton.StartID]; ok {
		at = i
	}
	for k, mv := range moves {
		from := ""
		ti := -1
		if at >= 0 {
			from = m.States[at].ID
			ti = m.NextIndex(from, mv)
		}
		if ti >= 0 {
			r.add(k, rt.Trans[ti], from)
			at = state[m.Transitions[ti].To]
			continue
		}
		b, to := rt.Unseen(at, mv.Label)
		r.add(k, b, from)
		at = to
	}
	return r
}
