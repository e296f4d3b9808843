package render

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/stats"
)

// Measures are what logs say of a model's states and transitions, for the
// report's Cost and latency section (fsmine report M.json LOG...): per
// state, the visits the logs make to it; per transition, the visits that
// leave along it (the step whose outcome took the transition). Dwell is the
// time of those visits; Values sums numeric record fields (tokens, cost,
// duration_ms) per visit.
type Measures struct {
	// Sessions is how many sessions the logs hold, Fit how many of them fit
	// the model.
	Sessions, Fit int
	// Paths are the record fields measured, in column order.
	Paths  []string
	States []MeasuredState
	Edges  []MeasuredEdge
}

// MeasuredState is what the logs say of one state.
type MeasuredState struct {
	ID     string
	Visits int
	Dwell  *automaton.Dwell
	// Values holds, for each of Measures.Paths, the field summed per visit,
	// over the visits that carry it; nil when none does.
	Values []*Quantiles
}

// MeasuredEdge is what the logs say of one transition.
type MeasuredEdge struct {
	From, Event, To string
	Count           int
	Dwell           *automaton.Dwell
	Values          []*Quantiles
}

// Quantiles summarise a field over N visits.
type Quantiles struct {
	N                     int
	Total, Mean, P50, P95 float64
}

type measuresView struct {
	Sessions, Fit int
	Paths         []string
	States        []measuredRow
	Edges         []measuredRow
}

type measuredRow struct {
	ID              string // a state's, or "" for a transition
	From, Event, To string
	Count           int
	Dwell           *automaton.Dwell
	Cells           []*Quantiles // one per path, nil for none
}

// measuresPage orders what the logs say for the page: states by visits,
// then id; transitions as the model's file orders them.
func measuresPage(ms *Measures) *measuresView {
	if ms == nil {
		return nil
	}
	v := &measuresView{Sessions: ms.Sessions, Fit: ms.Fit, Paths: ms.Paths}
	cells := func(vals []*Quantiles) []*Quantiles {
		out := make([]*Quantiles, len(ms.Paths))
		copy(out, vals)
		return out
	}
	for _, s := range ms.States {
		v.States = append(v.States, measuredRow{ID: s.ID, Count: s.Visits, Dwell: s.Dwell, Cells: cells(s.Values)})
	}
	slices.SortStableFunc(v.States, func(a, b measuredRow) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return automaton.CompareIDs(a.ID, b.ID)
	})
	for _, e := range ms.Edges {
		v.Edges = append(v.Edges, measuredRow{From: e.From, Event: e.Event, To: e.To, Count: e.Count, Dwell: e.Dwell, Cells: cells(e.Values)})
	}
	slices.SortStableFunc(v.Edges, func(a, b measuredRow) int {
		return automaton.CompareEdges(&automaton.Transition{From: a.From, Event: a.Event, To: a.To},
			&automaton.Transition{From: b.From, Event: b.Event, To: b.To})
	})
	return v
}

// measureText shows a measured number: whole numbers with thousands
// separators, others to three significant digits.
func measureText(x float64) string {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return strconv.FormatFloat(x, 'g', -1, 64)
	case x == math.Trunc(x) && math.Abs(x) < 1e15:
		return thousands(int(x))
	case math.Abs(x) >= 100:
		return measureText(math.Round(x))
	}
	s := strconv.FormatFloat(x, 'g', 3, 64)
	if strings.ContainsAny(s, "e") {
		s = strconv.FormatFloat(x, 'f', -1, 64)
	}
	return s
}

// MeasureLogs replays every session of lg through m and sums what the
// report's Cost and latency section shows: per state, its visits; per
// transition, the visits that left along it (a transition out of __start__
// is counted, but no visit leaves along it).
func MeasureLogs(m *automaton.Model, lg *mine.Log, ms *mine.Measures) *Measures {
	type acc struct {
		n int
		stats.Visits
	}
	states := map[string]*acc{}
	edges := map[*automaton.Transition]*acc{}
	out := &Measures{Sessions: len(lg.Sessions)}
	c := automaton.NewChecker(m, automaton.CheckOptions{})
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
	values := func(a *acc) []*Quantiles {
		q := make([]*Quantiles, len(found))
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
		out.States = append(out.States, MeasuredState{ID: s.ID, Visits: a.n, Dwell: a.Dwell.Summary(), Values: values(a)})
	}
	for i := range m.Transitions {
		t := &m.Transitions[i]
		if a := edges[t]; a != nil {
			out.Edges = append(out.Edges, MeasuredEdge{From: t.From, Event: t.Event, To: t.To, Count: a.n, Dwell: a.Dwell.Summary(), Values: values(a)})
		}
	}
	return out
}

// quantilesOf summarises xs as stats does (rounded to 3 decimals), or nil
// for none.
func quantilesOf(xs []float64) *Quantiles {
	s := stats.Summarize(xs)
	if s == nil {
		return nil
	}
	return &Quantiles{N: s.Visits, Total: s.Total, Mean: s.Mean, P50: s.P50, P95: s.P95}
}
