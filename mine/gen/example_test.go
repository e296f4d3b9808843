package gen_test

import (
	"context"
	"fmt"
	"os"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine/gen"
)

// Two sessions sampled from a two-stage model, written as JSONL records:
// the second session starts while the first is still open, so their
// records interleave by time.
func ExampleGenerator_Write() {
	m := &automaton.Model{
		Schema: automaton.Schema, Version: 1, Initial: automaton.StartID,
		States: []automaton.State{
			{ID: automaton.StartID, Label: automaton.StartID},
			{ID: automaton.EndID, Label: automaton.EndID},
			{ID: "greet", Label: "greet"},
			{ID: "lookup_order", Label: "lookup_order"},
		},
		Transitions: []automaton.Transition{
			{From: automaton.StartID, To: "greet", Prob: 1},
			{From: "greet", Event: "ok", To: "lookup_order", Prob: 1},
			{From: "lookup_order", Event: "found", To: automaton.EndID, Prob: 1},
		},
	}
	g, err := gen.New(m, gen.Options{Seed: 7, Start: gen.DefaultStart})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := g.Write(context.Background(), os.Stdout, 2); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"session_id":"s-000001","step":0,"ts":"2026-01-05T09:00:00.000Z","node":"greet","event":"ok","duration_ms":560,"model":"gpt-4o-mini","prompt_version":"p7","tokens":{"prompt":1170,"completion":57},"attrs":{"channel":"chat"}}
	// {"session_id":"s-000002","step":0,"ts":"2026-01-05T09:00:00.188Z","node":"greet","event":"ok","duration_ms":256,"model":"gpt-4o-mini","prompt_version":"p7","tokens":{"prompt":1219,"completion":41},"attrs":{"channel":"chat"}}
	// {"session_id":"s-000001","step":1,"ts":"2026-01-05T09:00:02.306Z","node":"lookup_order","event":"found","duration_ms":438,"model":"gpt-4o-mini","prompt_version":"p7","tokens":{"prompt":1425,"completion":61},"attrs":{"channel":"chat"}}
	// {"session_id":"s-000002","step":1,"ts":"2026-01-05T09:00:02.568Z","node":"lookup_order","event":"found","duration_ms":819,"model":"gpt-4o-mini","prompt_version":"p7","tokens":{"prompt":1392,"completion":78},"attrs":{"channel":"chat"}}
}

// The built-in truths are ordinary models: sample them, mine them, or
// compare a mined model with them.
func ExampleAgentTruth() {
	m := gen.AgentTruth()
	fmt.Println(len(m.States), "states,", len(m.Transitions), "transitions")
	fmt.Println(m.State("confirm_with_user").Label)
	// Output:
	// 29 states, 73 transitions
	// confirm_with_user
}
