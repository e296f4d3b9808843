package design

import (
	"path/filepath"
	"sort"
	"strings"

	json "github.com/goccy/go-json"
)

// STAR's task graphs (the *.flow.json files of STAR, the schema-guided
// Wizard-of-Oz dialogue dataset: Mosig et al., "STAR: A Schema-Guided
// Dialog Dataset for Transfer Learning", 2020) map a node to the node that
// follows it. Some keys are not nodes but decision words, and the graph
// does not say which node they follow: readSTAR ties them as the published
// flowcharts draw them.
//
//   - query, query_check and query_book are the knowledge-base query, the
//     log's node "query:TASK" (TASK is the file name before .flow.json, or
//     the graph's "task" when the file is not so named).
//     Its plain next node follows on the event "ok".
//   - query_success / query_failure are the outcome of a query that has no
//     next node of its own, on the events "ok" / "empty" (nothing found);
//     available / unavailable are the outcome of the check query
//     (query_check, when two queries lack a next node), both on "ok": the
//     query found the item either way.
//   - yes, no and done are the user's answer to the question before them:
//     the node without a next node of its own that the positive outcome
//     (query_success, available) leads to, or else the one whose name
//     asks ("_ask_"). The answer is a user turn, which the model's label
//     rules drop, so the move goes from the question on its own event.
//   - Every other node is the wizard's action, on the event "agent"; a
//     node without a next node ends the flow.
//
// The model keeps label rules that drop the log's user turns (node
// user_utter): the flowchart has no user turns, so check and serve read
// the logs without them.

// starRules are the label rules of a STAR design.
const starRules = `{"rules":[{"name":"user turns are not steps of the flowchart","match":{"node":"^user_utter$"},"drop":true}],"unmatched":"keep"}`

// STAR's events: the wizard's actions, and a query's outcomes.
const (
	starAgent = "agent"
	starOK    = "ok"
	starEmpty = "empty"
)

var (
	starAnswers  = []string{"done", "no", "yes"}
	starOutcomes = map[string]string{
		"query_success": starOK, "query_failure": starEmpty,
		"available": starOK, "unavailable": starOK,
	}
	starPositive = map[string]bool{"query_success": true, "available": true}
	starNegative = map[string]bool{"query_failure": true, "unavailable": true}
)

func starQuery(name string) bool {
	return name == "query" || strings.HasPrefix(name, "query_") && starOutcomes[name] == ""
}

func starDecision(name string) bool {
	_, outcome := starOutcomes[name]
	return outcome || name == "yes" || name == "no" || name == "done"
}

func readSTAR(data []byte, opt Options) (*flow, error) {
	f := newFlow(opt.Path)
	var doc starGraph
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, f.errorf("", "not a STAR task graph: %v", err)
	}
	if len(doc.Graph) == 0 {
		return nil, f.errorf("", `not a STAR task graph: no "graph" of node -> next node`)
	}
	// The log names a query by the task's file name (query:ride_book),
	// which the graph's own "task" (book_ride) does not match.
	task := doc.Task
	if base := filepath.Base(opt.Path); strings.HasSuffix(base, ".flow.json") {
		task = strings.TrimSuffix(base, ".flow.json")
	}
	keys := make([]string, 0, len(doc.Graph))
	targets := map[string]bool{}
	for k, v := range doc.Graph {
		keys = append(keys, k)
		if v == "" {
			return nil, f.errorf(k, "its next node is empty")
		}
		if starDecision(v) {
			return nil, f.errorf(k, "its next node %q is a decision word, not a node", v)
		}
		targets[v] = true
	}
	sort.Strings(keys)

	// Nodes: every key and target that is not a decision word.
	var names []string
	for _, k := range keys {
		if !starDecision(k) {
			names = append(names, k)
		}
	}
	for _, k := range keys {
		v := doc.Graph[k]
		if !doc.hasKey(v) && !contains(names, v) {
			names = append(names, v)
		}
	}
	sort.Strings(names)
	var starts []string
	for _, n := range names {
		nd := f.add(n)
		if starQuery(n) {
			nd.label = "query:" + task
		}
		if !targets[n] {
			starts = append(starts, n)
		}
	}
	switch len(starts) {
	case 0:
		return nil, f.errorf("", "no start: every node follows another one")
	case 1:
		f.start = starts[0]
	default:
		return nil, f.errorf(starts[1], "a second start: nothing leads to it, nor to %q", starts[0])
	}
	open := func(n string) bool { _, ok := doc.Graph[n]; return !ok }

	// Outcomes follow a query without a next node of its own.
	var queries []string
	for _, n := range names {
		if starQuery(n) && open(n) {
			queries = append(queries, n)
		}
	}
	from := map[string]string{}
	for _, w := range keys {
		if _, ok := starOutcomes[w]; !ok {
			continue
		}
		q, err := f.starQueryOf(w, queries)
		if err != nil {
			return nil, err
		}
		from[w] = q
	}
	// Answers follow the question.
	hasAnswer := false
	for _, w := range starAnswers {
		_, ok := doc.Graph[w]
		hasAnswer = hasAnswer || ok
	}
	if hasAnswer {
		q, err := f.starQuestion(doc.Graph, names, open)
		if err != nil {
			return nil, err
		}
		for _, w := range starAnswers {
			if _, ok := doc.Graph[w]; ok {
				from[w] = q
			}
		}
	}
	for _, k := range keys {
		v := doc.Graph[k]
		switch {
		case starDecision(k):
			event := starAgent
			if e, ok := starOutcomes[k]; ok {
				event = e
			}
			f.edges = append(f.edges, edge{from: from[k], event: event, to: v})
		case starQuery(k):
			f.edges = append(f.edges, edge{from: k, event: starOK, to: v})
		default:
			f.edges = append(f.edges, edge{from: k, event: starAgent, to: v})
		}
	}
	followed := map[string]bool{}
	for _, q := range from {
		followed[q] = true
	}
	for _, n := range names {
		if open(n) && !followed[n] {
			event := starAgent
			if starQuery(n) {
				event = starOK
			}
			f.edges = append(f.edges, edge{from: n, event: event, to: "__end__"})
		}
	}
	f.labels = []byte(starRules)
	return f, nil
}

// starGraph is a STAR task graph file.
type starGraph struct {
	Task  string            `json:"task"`
	Graph map[string]string `json:"graph"`
}

func (g starGraph) hasKey(k string) bool { _, ok := g.Graph[k]; return ok }

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// starQueryOf is the query that outcome word w follows.
func (f *flow) starQueryOf(w string, queries []string) (string, error) {
	switch len(queries) {
	case 0:
		return "", f.errorf(w, "an outcome of a query, but no query lacks a next node for it to follow (a dangling decision)")
	case 1:
		return queries[0], nil
	}
	want := "query_book"
	if w == "available" || w == "unavailable" {
		want = "query_check"
	}
	if contains(queries, want) {
		return want, nil
	}
	return "", f.errorf(w, "an outcome of a query, and %s all lack a next node: which one it follows is unclear", strings.Join(quoteAll(queries), ", "))
}

// starQuestion is the node the answers (yes, no, done) follow.
func (f *flow) starQuestion(graph map[string]string, names []string, open func(string) bool) (string, error) {
	excluded := map[string]bool{}
	for w, v := range graph {
		if starNegative[w] || w == "no" {
			excluded[v] = true
		}
	}
	var candidates []string
	for _, n := range names {
		if open(n) && !starQuery(n) && !excluded[n] {
			candidates = append(candidates, n)
		}
	}
	for _, w := range []string{"query_success", "available"} {
		if v, ok := graph[w]; ok && contains(candidates, v) && starPositive[w] {
			return v, nil
		}
	}
	var asking []string
	for _, n := range candidates {
		if strings.Contains(n, "_ask_") {
			asking = append(asking, n)
		}
	}
	if len(asking) == 1 {
		return asking[0], nil
	}
	if len(asking) == 0 {
		return "", f.errorf("yes", "an answer, but no node without a next node asks a question for it to follow (a dangling decision)")
	}
	return "", f.errorf("yes", "an answer, and %s all ask: which one it follows is unclear", strings.Join(quoteAll(asking), ", "))
}
