// Package risk computes a model's move costs in bits, for the surprisal of
// a session under the model: the conformance checker's (conform.Risk) and
// the guard's running total (guard.Decision.Risk).
//
// The model's counts make it a probabilistic automaton: a move out of a
// state has the probability of its transition's share of the state's
// outflow. A session's surprisal is the sum over its moves of -log2 of that
// probability (its negative log-likelihood), the score a language model
// gives a sentence. Moves the model has no transition for would cost
// infinitely much, so the probabilities are smoothed: Witten-Bell smoothing
// (Witten & Bell, "The zero-frequency problem", 1991), which gives a state
// with n moves out over d distinct transitions the mass d/(n+d) for moves
// never seen there, backing off to how often the sessions moved into the
// move's label anywhere in the model (add-one smoothed over the labels, one
// more for a label the model does not know):
//
//	P(label)      = (N(label) + 1) / (N + L + 1)
//	P(move | s)   = (c(move) + d·P(label)) / (n + d)   a transition taken c times
//	P(move | s)   = d·P(label) / (n + d)               a move s has no transition for
//	P(move | s)   = P(label)                           s has no move out (n = 0), or is not known
//
// where N(label) counts the moves into states carrying the label, N all
// moves and L the labels. Generalised transitions, which no session took
// (Count 0), cost what an unseen move costs. After a move the model has no
// transition for, the walk goes on from the most visited state carrying the
// move's label (ties: the smaller id), as the guard's monitor mode does, or
// from nowhere when no state carries it.
package risk

import (
	"math"

	"github.com/fsmine/fsmine/automaton"
)

// Round6 rounds x to 6 decimals, as reports show bits.
func Round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// Tables are a model's move costs in bits. They are never modified once
// made.
type Tables struct {
	// Trans is the cost of each transition, in Model.Transitions order.
	Trans []float64
	// Novel is, per state in Model.States order, -log2 d/(n+d): the mass
	// of the moves the state has no transition for; 0 when n = 0.
	Novel []float64
	// Unknown is -log2 P(label) of a label the model does not know.
	Unknown float64
	label   map[string]float64 // -log2 P(label)
	common  map[string]int     // label -> the most visited state carrying it, as an index into Model.States
}

// New computes m's move costs.
func New(m *automaton.Model) *Tables {
	rt := &Tables{
		Trans:  make([]float64, len(m.Transitions)),
		Novel:  make([]float64, len(m.States)),
		label:  map[string]float64{},
		common: map[string]int{},
	}
	state := make(map[string]int, len(m.States))
	for i, s := range m.States {
		state[s.ID] = i
	}
	labelOf := func(id string) string {
		if i, ok := state[id]; ok {
			return m.States[i].Label
		}
		return id
	}
	// Counts are added up as floats: a model's counts may add up past
	// what an int holds, and a sum that wrapped made the bits NaN.
	into := map[string]float64{}
	n := 0.0
	out := make([]float64, len(m.States))
	distinct := make([]int, len(m.States))
	for _, t := range m.Transitions {
		if t.Count <= 0 {
			continue
		}
		into[labelOf(t.To)] += float64(t.Count)
		n += float64(t.Count)
		if i, ok := state[t.From]; ok {
			out[i] += float64(t.Count)
			distinct[i]++
		}
	}
	for i, s := range m.States {
		if _, ok := into[s.Label]; !ok && s.ID != automaton.StartID {
			into[s.Label] = 0
		}
		if j, ok := rt.common[s.Label]; !ok || automaton.StandsFor(&m.States[i], &m.States[j]) {
			rt.common[s.Label] = i
		}
	}
	den := n + float64(len(into)+1)
	for l, k := range into {
		rt.label[l] = -math.Log2((k + 1) / den)
	}
	rt.Unknown = -math.Log2(1 / den)
	for i := range m.States {
		if out[i] > 0 {
			rt.Novel[i] = -math.Log2(float64(distinct[i]) / (out[i] + float64(distinct[i])))
		}
	}
	for ti, t := range m.Transitions {
		i := state[t.From]
		pl := rt.LabelBits(labelOf(t.To))
		switch {
		case out[i] == 0:
			rt.Trans[ti] = pl
		case t.Count <= 0:
			rt.Trans[ti] = rt.Novel[i] + pl
		default:
			d := float64(distinct[i])
			p := (float64(t.Count) + d*math.Exp2(-pl)) / (out[i] + d)
			rt.Trans[ti] = -math.Log2(p)
		}
	}
	return rt
}

// LabelBits returns -log2 P(label).
func (rt *Tables) LabelBits(label string) float64 {
	if b, ok := rt.label[label]; ok {
		return b
	}
	return rt.Unknown
}

// Unseen returns the cost of a move with label out of state i (an index
// into Model.States, -1 for not known) that has no transition there, and
// the state the walk goes on from (-1: none).
func (rt *Tables) Unseen(i int, label string) (float64, int) {
	b := rt.LabelBits(label)
	if i >= 0 {
		b += rt.Novel[i]
	}
	to, ok := rt.common[label]
	if !ok {
		to = -1
	}
	return b, to
}
