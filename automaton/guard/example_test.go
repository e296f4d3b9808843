package guard_test

import (
	"fmt"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/guard"
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

// Enforcing a model at run time: each step is allowed or denied with a
// reason, and the answer says where the session is.
func ExampleGuard_Step() {
	m, err := automaton.Decode(strings.NewReader(exampleModel)) // hand-written: no digest to verify
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := guard.New(m, nil, guard.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, step := range [][2]string{{"", "greet"}, {"ok", "escalate"}, {"ok", "refund"}} {
		d := g.Step("session-1", step[0], step[1])
		if d.Allowed {
			fmt.Printf("-[%s]-> %s: allowed, now in %s\n", step[0], step[1], d.State)
		} else {
			fmt.Printf("-[%s]-> %s: denied (%s), still in %s\n", step[0], step[1], d.Reason, d.State)
		}
	}
	// Output:
	// -[]-> greet: allowed, now in greet
	// -[ok]-> escalate: denied (unknown_state), still in greet
	// -[ok]-> refund: allowed, now in refund
}
