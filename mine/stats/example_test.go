package stats_test

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/stats"
)

// read reads a JSONL log held in a string.
func read(name, log string) (*mine.Log, error) {
	return mine.Read([]mine.Input{{Name: name, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(log)), nil
	}}}, mine.ReadOptions{})
}

// A model mined from three sessions, then a day's log replayed through it:
// where the sessions through each state end, and how often the lookup was
// retried.
func ExampleFromLogs() {
	train, err := read("train.jsonl", `{"session_id":"t1","step":0,"node":"greet","event":"ok"}
{"session_id":"t1","step":1,"node":"lookup","event":"found"}
{"session_id":"t1","step":2,"node":"refund","event":"done"}
{"session_id":"t2","step":0,"node":"greet","event":"ok"}
{"session_id":"t2","step":1,"node":"lookup","event":"not_found"}
{"session_id":"t2","step":2,"node":"lookup","event":"found"}
{"session_id":"t2","step":3,"node":"refund","event":"done"}
{"session_id":"t3","step":0,"node":"greet","event":"ok"}
{"session_id":"t3","step":1,"node":"lookup","event":"none"}
{"session_id":"t3","step":2,"node":"close","event":"done"}
`)
	if err != nil {
		fmt.Println(err)
		return
	}
	opt := mine.DefaultOptions()
	opt.Merge, opt.Examples = mine.MergeLabel, 0
	m, err := mine.Build(train, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	m.Version = 1 // fsmine build numbers a model's versions from 1
	today, err := read("today.jsonl", `{"session_id":"a","step":0,"node":"greet","event":"ok"}
{"session_id":"a","step":1,"node":"lookup","event":"not_found"}
{"session_id":"a","step":2,"node":"lookup","event":"not_found"}
{"session_id":"a","step":3,"node":"lookup","event":"none"}
{"session_id":"a","step":4,"node":"close","event":"done"}
{"session_id":"b","step":0,"node":"greet","event":"ok"}
{"session_id":"b","step":1,"node":"lookup","event":"found"}
{"session_id":"b","step":2,"node":"refund","event":"done"}
`)
	if err != nil {
		fmt.Println(err)
		return
	}
	r := stats.FromLogs(m, today, nil, 10)
	r.Model.Path = "model.json"
	if err := r.WriteText(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// model     model.json  v1 sha256:526d3b46149b  (6 states, 7 transitions, 1 loop)
	// logs      2 sessions (1 fit the model), 8 events
	//
	// states (by visits)
	//   state   visits  sessions  dwell p50  dwell p95  sessions through it end in
	//   lookup       4         2          -          -  close 50.0%, refund 50.0%
	//   greet        2         2          -          -  close 50.0%, refund 50.0%
	//   close        1         1          -          -  close 100.0%
	//   refund       1         1          -          -  refund 100.0%
	//
	// hottest back edges
	//   edge                          count  sessions
	//   lookup -[not_found]-> lookup      2         1
	//
	// loops (iterations per stay)
	//   {lookup}
	//     2 iterations in 1 session; max 2, p95 2; stays by iterations 2:1
}
