package mine_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
)

// A log of three sessions, read and mined with the default options: the
// states and the transitions the sessions took, and how many moves the
// miner generalised on the log's evidence.
func ExampleBuild() {
	log := `{"session_id":"a","step":0,"node":"greet","event":"ok"}
{"session_id":"a","step":1,"node":"lookup","event":"found"}
{"session_id":"a","step":2,"node":"refund","event":"ok"}
{"session_id":"b","step":0,"node":"greet","event":"ok"}
{"session_id":"b","step":1,"node":"lookup","event":"not_found"}
{"session_id":"b","step":2,"node":"lookup","event":"found"}
{"session_id":"b","step":3,"node":"refund","event":"ok"}
{"session_id":"c","step":0,"node":"greet","event":"ok"}
{"session_id":"c","step":1,"node":"escalate","event":"handoff"}
`
	lg, err := mine.Read([]mine.Input{{Name: "log.jsonl", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(log)), nil
	}}}, mine.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := mine.Build(lg, mine.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	generalised := 0
	for _, t := range m.Transitions {
		if t.Generalized != "" {
			generalised++
			continue
		}
		fmt.Printf("%s -[%s]-> %s  %d\n", t.From, t.Event, t.To, t.Count)
	}
	fmt.Println("generalised:", generalised)
	fmt.Println("accepts greet, lookup, refund:", m.Accepts([]automaton.Move{
		{Event: "", Label: "greet"}, {Event: "ok", Label: "lookup"}, {Event: "found", Label: "refund"}, {Event: "ok", Label: automaton.EndID},
	}))
	// Output:
	// __start__ -[]-> greet  3
	// escalate -[handoff]-> __end__  1
	// greet -[ok]-> escalate  1
	// greet -[ok]-> lookup  2
	// lookup -[found]-> refund  2
	// lookup -[not_found]-> lookup  1
	// refund -[ok]-> __end__  2
	// generalised: 0
	// accepts greet, lookup, refund: true
}
