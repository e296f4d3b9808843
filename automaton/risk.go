package automaton

// Risk: how surprising a session is under a model, in bits.
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

import "math"

// round6 rounds x to 6 decimals, as reports show bits.
func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// Risk is a session's surprisal under a model (see the comment at the top of
// risk.go): Bits is the sum over its moves of -log2 of each move's smoothed
// probability, MaxBits the largest term and MaxMove the index of its move
// (the first, on ties; -1 for no move), made from state MaxFrom ("" when the
// walk did not know the state).
type Risk struct {
	Bits    float64
	MaxBits float64
	MaxMove int
	MaxFrom string
}

// riskTables are a model's move costs in bits.
type riskTables struct {
	trans   []float64          // per transition, in Model.Transitions order
	novel   []float64          // per state, in Model.States order: -log2 d/(n+d); 0 when n = 0
	label   map[string]float64 // -log2 P(label)
	unknown float64            // -log2 P(label) of a label the model does not know
	common  map[string]int     // label -> the most visited state carrying it, as an index into Model.States
}

// newRiskTables computes m's move costs; m must be indexed.
func newRiskTables(m *Model) *riskTables {
	rt := &riskTables{
		trans:  make([]float64, len(m.Transitions)),
		novel:  make([]float64, len(m.States)),
		label:  map[string]float64{},
		common: map[string]int{},
	}
	ix := m.idx()
	labelOf := func(id string) string {
		if i, ok := ix.state[id]; ok {
			return m.States[i].Label
		}
		return id
	}
	into := map[string]int{}
	n := 0
	out := make([]int, len(m.States))
	distinct := make([]int, len(m.States))
	for _, t := range m.Transitions {
		if t.Count <= 0 {
			continue
		}
		into[labelOf(t.To)] += t.Count
		n += t.Count
		if i, ok := ix.state[t.From]; ok {
			out[i] += t.Count
			distinct[i]++
		}
	}
	for i, s := range m.States {
		if _, ok := into[s.Label]; !ok && s.ID != StartID {
			into[s.Label] = 0
		}
		if j, ok := rt.common[s.Label]; !ok || s.Visits > m.States[j].Visits || (s.Visits == m.States[j].Visits && s.ID < m.States[j].ID) {
			rt.common[s.Label] = i
		}
	}
	den := float64(n + len(into) + 1)
	for l, k := range into {
		rt.label[l] = -math.Log2(float64(k+1) / den)
	}
	rt.unknown = -math.Log2(1 / den)
	for i := range m.States {
		if out[i] > 0 {
			rt.novel[i] = -math.Log2(float64(distinct[i]) / float64(out[i]+distinct[i]))
		}
	}
	for ti, t := range m.Transitions {
		i := ix.state[t.From]
		pl := rt.labelBits(labelOf(t.To))
		switch {
		case out[i] == 0:
			rt.trans[ti] = pl
		case t.Count <= 0:
			rt.trans[ti] = rt.novel[i] + pl
		default:
			d := float64(distinct[i])
			p := (float64(t.Count) + d*math.Exp2(-pl)) / float64(out[i]+distinct[i])
			rt.trans[ti] = -math.Log2(p)
		}
	}
	return rt
}

// labelBits returns -log2 P(label).
func (rt *riskTables) labelBits(label string) float64 {
	if b, ok := rt.label[label]; ok {
		return b
	}
	return rt.unknown
}

// unseen returns the cost of a move with label out of state i (an index into
// Model.States, -1 for not known) that has no transition there, and the
// state the walk goes on from.
func (rt *riskTables) unseen(i int, label string) (float64, int) {
	b := rt.labelBits(label)
	if i >= 0 {
		b += rt.novel[i]
	}
	to, ok := rt.common[label]
	if !ok {
		to = -1
	}
	return b, to
}

// add adds a move's cost to r.
func (r *Risk) add(i int, bits float64, from string) {
	r.Bits += bits
	if r.MaxMove < 0 || bits > r.MaxBits {
		r.MaxBits, r.MaxMove, r.MaxFrom = bits, i, from
	}
}

// Surprisal returns the surprisal of moves under m (see Risk). It walks the
// model with Next; Checker.Check returns the same figure with its verdict at
// less cost.
func Surprisal(m *Model, moves []Move) Risk {
	rt := newRiskTables(m)
	ix := m.idx()
	r := Risk{MaxMove: -1}
	at := -1
	if i, ok := ix.state[StartID]; ok {
		at = i
	}
	for k, mv := range moves {
		from := ""
		if at >= 0 {
			from = m.States[at].ID
		}
		ti, ok := -1, false
		if at >= 0 {
			ti, ok = ix.next[moveKey{from, mv.Event, mv.Label}]
		}
		if ok {
			r.add(k, rt.trans[ti], from)
			at = ix.state[m.Transitions[ti].To]
			continue
		}
		b, to := rt.unseen(at, mv.Label)
		r.add(k, b, from)
		at = to
	}
	return r
}
