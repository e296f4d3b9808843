package check_test

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/check"
)

// read reads a JSONL log held in a string, named name.
func read(name, log string) (*mine.Log, error) {
	return mine.Read([]mine.Input{{Name: name, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(log)), nil
	}}}, mine.ReadOptions{})
}

// A model mined from two sessions checks three new ones: one fits, one
// skips the lookup, one ends early. The summary's text form names each
// deviating session, its step and file:line.
func ExampleLog() {
	train := `{"session_id":"a","step":0,"node":"greet","event":"ok"}
{"session_id":"a","step":1,"node":"lookup","event":"found"}
{"session_id":"a","step":2,"node":"refund","event":"done"}
{"session_id":"b","step":0,"node":"greet","event":"ok"}
{"session_id":"b","step":1,"node":"lookup","event":"found"}
{"session_id":"b","step":2,"node":"refund","event":"done"}
`
	fresh := `{"session_id":"n1","step":0,"node":"greet","event":"ok"}
{"session_id":"n1","step":1,"node":"lookup","event":"found"}
{"session_id":"n1","step":2,"node":"refund","event":"done"}
{"session_id":"n2","step":0,"node":"greet","event":"ok"}
{"session_id":"n2","step":1,"node":"refund","event":"done"}
{"session_id":"n3","step":0,"node":"greet","event":"ok"}
{"session_id":"n3","step":1,"node":"lookup","event":"found"}
`
	lg, err := read("train.jsonl", train)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := mine.Build(lg, mine.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	lg, err = read("new.jsonl", fresh)
	if err != nil {
		fmt.Println(err)
		return
	}
	sum, err := check.Log(lg, conform.New(m, conform.Options{}), check.Options{Deviations: true}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	sum.Model = check.ModelRef{Path: "model.json", Version: 4, Digest: "sha256:0123456789abcdef"}
	sum.SetMinFit(0.5)
	fmt.Println("pass:", sum.Pass)
	if err := sum.WriteText(os.Stdout, m, 0); err != nil {
		fmt.Println(err)
	}
	// Output:
	// pass: false
	// model       model.json  v4 sha256:0123456789ab  (5 states, 4 transitions)
	// logs        new.jsonl, 7 records (0 skipped), 3 sessions, 7 events
	// fit         1 of 3 sessions (33.3%)  min 50.0%: BELOW
	// outside     2 sessions (66.7%) off every path of the model; re-mine when this grows
	// fitness     log 0.7273 (1 - sum cost / sum max cost, as pm4py), mean per session 0.7143
	// rare        0 rare transitions taken in 0 sessions (pass)
	//
	// deviations by kind
	//   unknown_state             0
	//   illegal_transition        1
	//   loop_cap                  0
	//   incomplete                1
	//
	// deviations by place
	//        1  illegal_transition   greet -[ok]-> refund
	//        1  incomplete           lookup -[found]-> __end__
	//
	// deviating sessions (2 of 2)
	//   n2  step 1     new.jsonl:5  illegal_transition   greet -[ok]-> refund  fitness 0.571
	//   n3  step 1     new.jsonl:7  incomplete           lookup -[found]-> __end__  fitness 0.571
}

// Replay walks one session through the model step by step and explains
// its first deviation.
func ExampleReplay() {
	train := `{"session_id":"a","step":0,"node":"greet","event":"ok"}
{"session_id":"a","step":1,"node":"lookup","event":"found"}
{"session_id":"a","step":2,"node":"refund","event":"done"}
`
	lg, err := read("train.jsonl", train)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := mine.Build(lg, mine.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	lg, err = read("new.jsonl", `{"session_id":"n2","step":0,"node":"greet","event":"ok"}
{"session_id":"n2","step":1,"node":"refund","event":"done"}
`)
	if err != nil {
		fmt.Println(err)
		return
	}
	r := check.Replay(lg, check.FindSession(lg, "n2"), conform.New(m, conform.Options{}))
	r.Model = check.ModelRef{Path: "model.json", Version: 4, Digest: "sha256:0123456789abcdef"}
	if err := r.WriteText(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// session  n2  (2 records)
	// model    model.json  v4 sha256:0123456789ab
	// verdict  deviates at step 1 (new.jsonl:2): illegal_transition greet -[ok]-> refund
	// fitness  0.571  (alignment cost 3 of 7)
	//
	//    step  record       state      event  next             count   share  verdict  dwell
	//       0  new.jsonl:1  __start__         greet                1  100.0%  ok           -
	// >     1  new.jsonl:2  greet      ok     refund (resync)      -       -  illegal      -
	//     end  new.jsonl:2  refund     done   __end__              1  100.0%  ok           -
	//
	// > step 1: the model has no move greet -[ok]-> refund; it expected the one move below
	//   the model's moves from greet:
	//      -[ok]-> lookup  1  100.0%    e.g. a
	//
	// alignment (cost 3): skip the session's step 1 (-[ok]-> refund); add the model's greet -[ok]-> lookup before the session's end; add the model's lookup -[found]-> refund before the session's end
}
