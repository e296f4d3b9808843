// Package modeltest holds the small models that the tests of the checker
// (automaton/conform), the guard (automaton/guard) and its server
// (automaton/serve) share, so that each is written once. It is for tests only.
package modeltest

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// Check returns the valid model of the transitions ts: its states are their
// ends, each labelled as its id.
func Check(tb testing.TB, ts ...automaton.Transition) *automaton.Model {
	tb.Helper()
	m := &automaton.Model{Schema: automaton.Schema, Initial: automaton.StartID}
	ids := map[string]bool{automaton.StartID: true, automaton.EndID: true}
	for _, tr := range ts {
		ids[tr.From], ids[tr.To] = true, true
	}
	for id := range ids {
		m.States = append(m.States, automaton.State{ID: id, Label: id})
	}
	m.Transitions = ts
	m.Sort()
	if err := m.Validate(); err != nil {
		tb.Fatal(err)
	}
	return m
}

// Retry is
//
//	__start__ --> a -ok-> b -ok-> c -ok-> __end__
//	                      b -retry-> b   (back edge; loop {b}, max 2 iterations)
//	              a -skip-> c            (rare)
//
// Its shortest path from start to end has 3 moves (via skip).
func Retry(tb testing.TB) *automaton.Model {
	m := Check(tb,
		automaton.Transition{From: automaton.StartID, Event: "", To: "a", Count: 10},
		automaton.Transition{From: "a", Event: "ok", To: "b", Count: 9},
		automaton.Transition{From: "a", Event: "skip", To: "c", Count: 1, Rare: true},
		automaton.Transition{From: "b", Event: "ok", To: "c", Count: 9},
		automaton.Transition{From: "b", Event: "retry", To: "b", Count: 4, BackEdge: true},
		automaton.Transition{From: "c", Event: "ok", To: automaton.EndID, Count: 10},
	)
	m.Loops = []automaton.Loop{{States: []string{"b"}, BackEdges: []automaton.EdgeRef{{From: "b", Event: "retry", To: "b"}}, Count: 4, Sessions: 3, MaxIterations: 2, P95Iterations: 2}}
	return m
}

// Moves builds moves from "event>label" pairs; "" before the first label.
func Moves(pairs ...string) []automaton.Move {
	out := make([]automaton.Move, len(pairs))
	for i, p := range pairs {
		if j := strings.LastIndexByte(p, '>'); j >= 0 {
			out[i] = automaton.Move{Event: p[:j], Label: p[j+1:]}
		}
	}
	return out
}

// Path is the session through labels, each move with event "ok", then to
// __end__.
func Path(labels ...string) []automaton.Move {
	mvs := []automaton.Move{{Label: labels[0]}}
	for _, l := range labels[1:] {
		mvs = append(mvs, automaton.Move{Event: "ok", Label: l})
	}
	return append(mvs, automaton.Move{Event: "ok", Label: automaton.EndID})
}

// Run is a lookup (o) that may repeat, a product lookup (p), a
// confirmation (c) and an action (act) that may start a second request,
// with the constraint that o's visits come in one run until c.
func Run(tb testing.TB, until string) *automaton.Model {
	tb.Helper()
	tr := func(from, to string) automaton.Transition {
		return automaton.Transition{From: from, Event: "ok", To: to, Count: 1}
	}
	m := Check(tb, automaton.Transition{From: automaton.StartID, To: "o", Count: 1}, tr("o", "o"), tr("o", "p"), tr("p", "o"), tr("o", "c"),
		tr("p", "c"), tr("c", "act"), tr("act", "o"), tr("act", automaton.EndID))
	m.Constraints = []automaton.Constraint{
		{Kind: automaton.ConstraintOnce, A: "p", Support: 60, Confidence: 1},
		{Kind: automaton.ConstraintRun, A: "o", B: until, Support: 80, Confidence: 1},
	}
	if err := m.Validate(); err != nil {
		tb.Fatal(err)
	}
	return m
}

// Returns is the guard's hand-written returns flow,
// automaton/guard/testdata/returns.json:
//
//	__start__ -> greet(agent_msg) -agent-> find -ok-> order -ok-> return -ok-> confirm(agent_msg) -agent-> __end__
//	order -ok-> order (back edge), return -error-> order (back edge): loop {order, return}, max_iterations 3
//	find -error-> human, order -error-> human (both rare); human -ok-> __end__, human -retry-> find
func Returns(tb testing.TB) *automaton.Model {
	tb.Helper()
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("modeltest: no source path")
	}
	m, err := automaton.Load(filepath.Join(filepath.Dir(here), "..", "..", "guard", "testdata", "returns.json"))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// Constrained is Returns with constraints: a hand-off only after the order
// lookup, the identification at most once, and never both a hand-off and a
// return.
func Constrained(tb testing.TB) *automaton.Model {
	tb.Helper()
	m := Returns(tb)
	m.Constraints = []automaton.Constraint{
		{Kind: automaton.ConstraintNotBoth, A: "return_delivered_order_items", B: "transfer_to_human_agents", Support: 40, Confidence: 1},
		{Kind: automaton.ConstraintOnce, A: "find_user_id_by_email", Support: 50, Confidence: 1},
		{Kind: automaton.ConstraintPrecedence, A: "get_order_details", B: "transfer_to_human_agents", Support: 20, Confidence: 1},
	}
	if err := m.Validate(); err != nil {
		tb.Fatal(err)
	}
	return m
}

// Args is user_msg -ok-> read -ok-> send -ok-> __end__ (20 sessions), with
// an argument rule that send's "from" is one mail box (unseen_value) and one
// that its "to" comes from the user's words (value_without_source), sealed.
func Args(tb testing.TB) *automaton.Model {
	tb.Helper()
	m := &automaton.Model{
		Schema:  automaton.Schema,
		Initial: automaton.StartID,
		States: []automaton.State{{ID: automaton.StartID, Label: automaton.StartID}, {ID: automaton.EndID, Label: automaton.EndID, Visits: 20, Sessions: 20},
			{ID: "read", Label: "read", Visits: 20, Sessions: 20}, {ID: "send", Label: "send", Visits: 20, Sessions: 20},
			{ID: "user_msg", Label: "user_msg", Visits: 20, Sessions: 20}},
		Transitions: []automaton.Transition{
			{From: automaton.StartID, Event: "start", To: "user_msg", Count: 20, Sessions: 20, Prob: 1},
			{From: "read", Event: "ok", To: "send", Count: 20, Sessions: 20, Prob: 1},
			{From: "send", Event: "ok", To: automaton.EndID, Count: 20, Sessions: 20, Prob: 1},
			{From: "user_msg", Event: "ok", To: "read", Count: 20, Sessions: 20, Prob: 1},
		},
		Args: []automaton.ArgRule{
			{Tool: "send", Arg: "from", Kind: automaton.KindUnseenValue, Steps: 20, Sessions: 20, Values: []string{automaton.ArgHash("send", "from", "desk@corp.example")}},
			{Tool: "send", Arg: "to", Kind: automaton.KindValueWithoutSource, Steps: 20, Sessions: 20, From: []string{"user_msg"}},
		},
	}
	m.Sort()
	m.Digest = m.ComputeDigest()
	return m
}
