// Package measure holds what logs say of a model beyond its counts:
// cost and latency per state and transition (Measures) and where sessions
// fail under an outcome (FailureReport). They are measured by package
// mine/stats and drawn by package render, which imports nothing under mine.
package measure

import "github.com/fsmine/fsmine/automaton"

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

// FailureReport is where sessions fail, under an outcome expression.
type FailureReport struct {
	Expr string `json:"expr"`
	// Sessions have an outcome, Failed of them failed, Unknown have none
	// (counted apart); LogRate is Failed / Sessions.
	Sessions int     `json:"sessions"`
	Failed   int     `json:"failed"`
	Unknown  int     `json:"unknown"`
	LogRate  float64 `json:"log_rate"`
	// Note says plainly why there are no places: every session succeeded,
	// or every one failed. Empty otherwise.
	Note string `json:"note,omitempty"`
	// Tested is the number of places tested; Alpha the false discovery
	// rate.
	Tested int     `json:"tested"`
	Alpha  float64 `json:"alpha"`
	// Places are the places whose failure rate is above the log's, by p
	// (least first), then by failures (most first), kind, state, event
	// and target; at most the number asked. Significant ones have Q at
	// most Alpha.
	Places []FailurePlace `json:"places"`
}

// FailurePlace is a state or a move (a transition) and how its sessions
// came out. For a state, State is its id and Label its label; for a move,
// State, Event and To name the transition and Label is its target's label.
// Rate is Failed / Sessions; Lift is Rate / the log's rate (the relative
// risk) and Diff Rate less the log's rate; P is the one-sided Fisher exact
// test's p-value and Q the Benjamini-Hochberg adjusted one. Examples are
// failed sessions through the place, when known.
type FailurePlace struct {
	Kind        string   `json:"kind"` // "state" or "move"
	State       string   `json:"state"`
	Event       string   `json:"event,omitempty"`
	To          string   `json:"to,omitempty"`
	Label       string   `json:"label"`
	Sessions    int      `json:"sessions"`
	Failed      int      `json:"failed"`
	Rate        float64  `json:"rate"`
	Lift        float64  `json:"lift"`
	Diff        float64  `json:"diff"`
	P           float64  `json:"p"`
	Q           float64  `json:"q"`
	Significant bool     `json:"significant"`
	Examples    []string `json:"examples"`
}
