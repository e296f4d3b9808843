package conform_test

import (
	"fmt"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
)

const exampleModel = `{
  "schema": "fsmine.automaton/v1", "version": 1, "initial": "__start__",
  "states": [
    {"id":"__start__","label":"__start__","visits":2,"sessions":2},
    {"id":"greet","label":"greet","visits":2,"sessions":2},
    {"id":"refund","label":"refund","visits":2,"sessions":2},
    {"id":"__end__","label":"__end__","visits":2,"sessions":2}
  ],
  "transitions": [
    {"from":"__start__","event":"","to":"greet","count":2,"sessions":2,"prob":1},
    {"from":"greet","event":"ok","to":"refund","count":2,"sessions":2,"prob":1},
    {"from":"refund","event":"ok","to":"__end__","count":2,"sessions":2,"prob":1}
  ],
  "loops": [], "trunk": ["greet", "refund"], "variants": 1, "top_variants": []
}`

// Checking one session against a model: where it first leaves the model,
// and how far it is from the model's nearest path.
func ExampleChecker_Check() {
	m, err := automaton.Decode(strings.NewReader(exampleModel)) // hand-written: no digest to verify
	if err != nil {
		fmt.Println(err)
		return
	}
	c := conform.New(m, conform.Options{})
	v := c.Check([]automaton.Move{
		{Event: "", Label: "greet"},
		{Event: "ok", Label: "escalate"},
		{Event: "handoff", Label: automaton.EndID},
	})
	fmt.Printf("fits %v; %s at move %d (%s -[%s]-> %s); cost %d, fitness %.3f\n",
		v.Fits(), v.Deviation.Kind, v.Deviation.Move, v.Deviation.State, v.Deviation.Event, v.Deviation.Label, v.Cost, v.Fitness)
	// Output:
	// fits false; unknown_state at move 1 (greet -[ok]-> escalate); cost 4, fitness 0.333
}
