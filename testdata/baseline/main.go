// Command baseline is the yardstick of fsmine's speed target: a
// single-threaded loop that only decodes each line's session, step, node and
// event with goccy/go-json, groups steps by session and counts transitions.
// `fsmine build` on the same log must be no slower and use at most twice its
// peak memory. Run it as
//
//	go run ./testdata/baseline LOG.jsonl
//
// (it lives under testdata so that it is no part of fsmine's packages).
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"

	"github.com/goccy/go-json"
)

type record struct {
	Session string `json:"session_id"`
	Step    int    `json:"step"`
	Node    string `json:"node"`
	Event   string `json:"event"`
}

type step struct {
	n           int
	node, event string
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: baseline LOG.jsonl")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer f.Close()
	sessions := map[string][]step{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	bad := 0
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			bad++
			continue
		}
		sessions[r.Session] = append(sessions[r.Session], step{r.Step, r.Node, r.Event})
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	type key struct{ from, event, to string }
	counts := map[key]int{}
	events := 0
	for _, ss := range sessions {
		sort.Slice(ss, func(i, j int) bool { return ss[i].n < ss[j].n })
		from, ev := "__start__", ""
		for _, s := range ss {
			counts[key{from, ev, s.node}]++
			from, ev = s.node, s.event
			events++
		}
		counts[key{from, ev, "__end__"}]++
	}
	fmt.Printf("sessions %d, events %d, bad %d, transitions %d\n", len(sessions), events, bad, len(counts))
}
