package automaton

import "math/rand/v2"

// Sample takes a random walk through the model from StartID and returns the
// moves of one session, the last of them the move into EndID. Out of each
// state it takes a transition with probability proportional to its Prob, or
// to Count over the state's outflow when Prob is 0; a state whose
// transitions all weigh 0 picks among them uniformly. The walk stops early,
// without reaching EndID, at a state with no transition out or after
// maxSteps moves; maxSteps <= 0 means no limit.
//
// Transitions are weighed in Out's order and rng is read only through
// Uint64, once per move, so the same model and the same rng state give the
// same moves on every platform that computes IEEE floats alike. Sample
// panics if rng is nil.
func (m *Model) Sample(rng *rand.Rand, maxSteps int) []Move {
	moves := make([]Move, 0, 16)
	from := StartID
	for maxSteps <= 0 || len(moves) < maxSteps {
		t := m.pick(from, rng)
		if t == nil {
			break
		}
		moves = append(moves, Move{Event: t.Event, Label: m.label(t.To)})
		if t.To == EndID {
			break
		}
		from = t.To
	}
	return moves
}

// pick draws one transition out of from, or returns nil when from has none.
func (m *Model) pick(from string, rng *rand.Rand) *Transition {
	out := m.Out(from)
	if len(out) == 0 {
		return nil
	}
	// One uniform draw in [0, 1) from the top 53 bits, as the IEEE mantissa
	// holds them, so that the stream does not depend on how a Go release
	// implements Float64.
	u := float64(rng.Uint64()>>11) * 0x1p-53
	outflow := 0
	for _, t := range out {
		outflow += t.Count
	}
	weight := func(t *Transition) float64 {
		if t.Prob > 0 {
			return t.Prob
		}
		if outflow > 0 {
			return float64(t.Count) / float64(outflow)
		}
		return 0
	}
	total := 0.0
	for _, t := range out {
		total += weight(t)
	}
	if total <= 0 {
		return out[int(u*float64(len(out)))]
	}
	x, cum := u*total, 0.0
	for _, t := range out {
		cum += weight(t)
		if x < cum {
			return t
		}
	}
	// Rounding left x at or past the last sum: take the last transition that
	// has any weight.
	for i := len(out) - 1; i >= 0; i-- {
		if weight(out[i]) > 0 {
			return out[i]
		}
	}
	return out[len(out)-1]
}

// label returns the label of state id, or id itself for a state the model
// does not hold (as Next keys such transitions).
func (m *Model) label(id string) string {
	if s := m.State(id); s != nil {
		return s.Label
	}
	return id
}

// Accepts reports whether moves is a whole session of the model: walked
// with Next from StartID, every move has a transition and the last one
// enters EndID. An empty sequence is not accepted.
func (m *Model) Accepts(moves []Move) bool {
	if len(moves) == 0 {
		return false
	}
	at := StartID
	for _, mv := range moves {
		t := m.Next(at, mv)
		if t == nil {
			return false
		}
		at = t.To
	}
	return at == EndID
}
