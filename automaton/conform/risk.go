package conform

import (
	"github.com/fsmine/fsmine/automaton"
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
	// LastBits is the cost of the last move added: of a whole session,
	// its move into automaton.EndID, the surprisal of ending where it
	// ended.
	LastBits float64
}

// add adds a move's cost to r.
func (r *Risk) add(i int, bits float64, from string) {
	r.Bits += bits
	r.LastBits = bits
	if r.MaxMove < 0 || bits > r.MaxBits {
		r.MaxBits, r.MaxMove, r.MaxFrom = bits, i, from
	}
}

// Surprisal returns the surprisal of moves under m (see Risk): what
// Checker.Check returns with its verdict, for a caller with no checker.
func Surprisal(m *automaton.Model, moves []automaton.Move) Risk {
	c := New(m, Options{})
	r := Risk{MaxMove: -1}
	c.riskRest(&r, moves, 0, c.start)
	return r
}
