package guard_test

import (
	"os"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/guard"
)

// A model built with fsmine build --slots knows which fields a session
// always carried out of each state; SuggestPolicy turns them into required
// slots of a draft policy, with the loop caps and a watchdog the sessions
// support.
func ExampleSuggestPolicy() {
	m := &automaton.Model{
		Schema:  automaton.Schema,
		Initial: automaton.StartID,
		States: []automaton.State{
			{ID: automaton.StartID, Label: automaton.StartID},
			{ID: "lookup_order", Label: "lookup_order", MaxRun: 3, Fields: []string{"attrs.args.order_id"}},
			{ID: "refund", Label: "refund", MaxRun: 1, Fields: []string{"attrs.args.order_id", "attrs.args.reason"}},
			{ID: automaton.EndID, Label: automaton.EndID},
		},
		Transitions: []automaton.Transition{
			{From: automaton.StartID, Event: "", To: "lookup_order", Count: 5, Sessions: 5, Prob: 1},
			{From: "lookup_order", Event: "not_found", To: "lookup_order", Count: 4, Sessions: 2, Prob: 0.44, BackEdge: true},
			{From: "lookup_order", Event: "ok", To: "refund", Count: 5, Sessions: 5, Prob: 0.56},
			{From: "refund", Event: "ok", To: automaton.EndID, Count: 5, Sessions: 5, Prob: 1},
		},
		Loops: []automaton.Loop{{
			States:    []string{"lookup_order"},
			BackEdges: []automaton.EdgeRef{{From: "lookup_order", Event: "not_found", To: "lookup_order"}},
			Count:     4, Sessions: 2, MaxIterations: 2, P95Iterations: 2,
		}},
	}
	if err := m.Validate(); err != nil {
		panic(err)
	}
	if err := guard.SuggestPolicy(m).Write(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// {
	//   "mode": "monitor",
	//   "loop_caps": [
	//     {"from":"lookup_order","event":"not_found","to":"lookup_order","max":2}
	//   ],
	//   "watchdog": {"max_turns":3},
	//   "states": {
	//     "lookup_order": {"required_slots": [{"name":"order_id"}], "instructions": ""},
	//     "refund": {"required_slots": [{"name":"order_id"},{"name":"reason"}], "instructions": ""}
	//   }
	// }
}
