package guard

import (
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// edge is one transition for buildModel: "from event to count", with
// rare marking it rare.
type edge struct {
	from, event, to string
	count           int
	rare            bool
}

// buildModel makes a valid model from its edges: states are the edges' ends
// (label = id), visits the inflow, prob count over the source's outflow.
func buildModel(t testing.TB, version int, es []edge) *automaton.Model {
	t.Helper()
	m := buildModelUnchecked(version, es)
	if err := m.Validate(); err != nil {
		t.Fatalf("buildModel: %v", err)
	}
	return m
}

// buildModelUnchecked is buildModel without Validate, for counts whose sums
// overflow, which no valid model holds.
func buildModelUnchecked(version int, es []edge) *automaton.Model {
	m := &automaton.Model{Schema: automaton.Schema, Version: version, Initial: automaton.StartID, Trunk: []string{}}
	visits := map[string]int{automaton.StartID: 0, automaton.EndID: 0}
	out := map[string]int{}
	for _, e := range es {
		out[e.from] += e.count
		visits[e.to] += e.count
		if _, ok := visits[e.from]; !ok {
			visits[e.from] = 0
		}
	}
	visits[automaton.StartID] = out[automaton.StartID]
	for id, v := range visits {
		m.States = append(m.States, automaton.State{ID: id, Label: id, Visits: v, Sessions: v})
	}
	for _, e := range es {
		m.Transitions = append(m.Transitions, automaton.Transition{
			From: e.from, Event: e.event, To: e.to, Count: e.count, Sessions: e.count,
			Prob: float64(e.count) / float64(out[e.from]), Rare: e.rare,
		})
	}
	m.Source.Sessions = out[automaton.StartID]
	m.Sort()
	m.Digest = m.ComputeDigest()
	return m
}

// branch is a model where every session goes start -> plan, then to a (a
// of them) or b (b of them), then ends.
func branch(t testing.TB, a, b int) *automaton.Model {
	return buildModel(t, 1, []edge{
		{automaton.StartID, "", "plan", a + b, false},
		{"plan", "ok", "a", a, false},
		{"plan", "ok", "b", b, false},
		{"a", "done", automaton.EndID, a, false},
		{"b", "done", automaton.EndID, b, false},
	})
}
