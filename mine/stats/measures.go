package stats

import (
	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/automaton/measure"
	"github.com/fsmine/fsmine/mine"
)

// MeasureLogs replays every session of lg through m and sums what the
// report's Cost and latency section shows: per state, its visits; per
// transition, the visits that left along it (a transition out of __start__
// is counted, but no visit leaves along it).
func MeasureLogs(m *automaton.Model, lg *mine.Log, ms *mine.Measures) *measure.Measures {
	type acc struct {
		n int
		Visits
	}
	states := map[string]*acc{}
	edges := map[*automaton.Transition]*acc{}
	out := &measure.Measures{Sessions: len(lg.Sessions)}
	c := conform.New(m, conform.Options{})
	var buf []automaton.Move
	for si := range lg.Sessions {
		s := &lg.Sessions[si]
		buf = lg.AppendMoves(buf[:0], s)
		if c.Fits(buf) {
			out.Fit++
		}
		for _, st := range c.Replay(buf) {
			if st.Move < len(s.Visits) && st.To != "" {
				a := states[st.To]
				if a == nil {
					a = &acc{}
					states[st.To] = a
				}
				a.n++
				a.Add(ms, si, st.Move, &s.Visits[st.Move])
			}
			if st.Transition != nil {
				a := edges[st.Transition]
				if a == nil {
					a = &acc{}
					edges[st.Transition] = a
				}
				a.n++
				if st.Move > 0 {
					a.Add(ms, si, st.Move-1, &s.Visits[st.Move-1])
				}
			}
		}
	}
	var found []int // indexes of the paths some record carries
	for p, path := range ms.Paths {
		if ms.Found[p] > 0 {
			found = append(found, p)
			out.Paths = append(out.Paths, path)
		}
	}
	values := func(a *acc) []*measure.Quantiles {
		q := make([]*measure.Quantiles, len(found))
		for i, p := range found {
			if a.Values != nil {
				q[i] = quantilesOf(a.Values[p])
			}
		}
		return q
	}
	for _, s := range m.States {
		if s.ID == automaton.StartID || s.ID == automaton.EndID {
			continue
		}
		a := states[s.ID]
		if a == nil {
			a = &acc{}
		}
		out.States = append(out.States, measure.MeasuredState{ID: s.ID, Visits: a.n, Dwell: a.Dwell.Summary(), Values: values(a)})
	}
	for i := range m.Transitions {
		t := &m.Transitions[i]
		if a := edges[t]; a != nil {
			out.Edges = append(out.Edges, measure.MeasuredEdge{From: t.From, Event: t.Event, To: t.To, Count: a.n, Dwell: a.Dwell.Summary(), Values: values(a)})
		}
	}
	return out
}

// quantilesOf summarises xs as stats does (rounded to 3 decimals), or nil
// for none.
func quantilesOf(xs []float64) *measure.Quantiles {
	s := Summarize(xs)
	if s == nil {
		return nil
	}
	return &measure.Quantiles{N: s.Visits, Total: s.Total, Mean: s.Mean, P50: s.P50, P95: s.P95}
}
