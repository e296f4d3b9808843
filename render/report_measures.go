package render

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/measure"
)

// Measures are what logs say of a model's states and transitions, for the
// report's Cost and latency section (see package automaton/measure, and
// stats.MeasureLogs, which measures them).
type (
	Measures      = measure.Measures
	MeasuredState = measure.MeasuredState
	MeasuredEdge  = measure.MeasuredEdge
	Quantiles     = measure.Quantiles
)

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
	case math.Abs(x) >= 1e15: // past int's exact whole numbers: rounding gives x again
		return strconv.FormatFloat(x, 'g', 3, 64)
	case math.Abs(x) >= 100:
		return measureText(math.Round(x))
	}
	s := strconv.FormatFloat(x, 'g', 3, 64)
	if strings.ContainsAny(s, "e") {
		s = strconv.FormatFloat(x, 'f', -1, 64)
	}
	return s
}
