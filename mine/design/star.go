package design

import (
	"path/filepath"
	"sort"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/jsondup"
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
	r := &starReader{f: newFlow(opt.Path)}
	if err := json.Unmarshal(data, &r.doc); err != nil {
		return nil, r.f.errorf("", "not a STAR task graph: %s", whyJSON(data, err))
	}
	if err := jsondup.Check(data); err != nil {
		return nil, r.f.errorf("", "%v", err)
	}
	if len(r.doc.Graph) == 0 {
		return nil, r.f.errorf("", `not a STAR task graph: no "graph" of node -> next node`)
	}
	// The log names a query by the task's file name (query:ride_book),
	// which the graph's own "task" (book_ride) does not match.
	task := r.doc.Task
	if base := filepath.Base(opt.Path); strings.HasSuffix(base, ".flow.json") {
		task = strings.TrimSuffix(base, ".flow.json")
	}
	if err := r.nodes(task); err != nil {
		return nil, err
	}
	from, err := r.decisions()
	if err != nil {
		return nil, err
	}
	r.edges(from)
	r.f.labels = []byte(starRules)
	return r.f, nil
}

// starReader reads a STAR task graph.
type starReader struct {
	f     *flow
	doc   starGraph
	keys  []string // the graph's keys, sorted
	names []string // its nodes (keys and targets but the decision words), sorted
}

// open reports whether node n has no next node of its own in the graph.
func (r *starReader) open(n string) bool { return !r.doc.hasKey(n) }

// nodes adds the graph's nodes, the queries labelled query:TASK, and finds
// the start: the one node nothing leads to.
func (r *starReader) nodes(task string) error {
	f := r.f
	targets := map[string]bool{}
	for k, v := range r.doc.Graph {
		r.keys = append(r.keys, k)
		if v == "" {
			return f.errorf(k, "its next node is empty")
		}
		if starDecision(v) {
			return f.errorf(k, "its next node %q is a decision word, not a node", v)
		}
		targets[v] = true
	}
	sort.Strings(r.keys)
	for _, k := range r.keys {
		if !starDecision(k) {
			r.names = append(r.names, k)
		}
	}
	for _, k := range r.keys {
		if v := r.doc.Graph[k]; r.open(v) && !contains(r.names, v) {
			r.names = append(r.names, v)
		}
	}
	sort.Strings(r.names)
	var starts []string
	for _, n := range r.names {
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
		return f.errorf("", "no start: every node follows another one")
	case 1:
		f.start = starts[0]
		return nil
	}
	return f.errorf(starts[1], "a second start: nothing leads to it, nor to %q", starts[0])
}

// decisions ties each decision word to the node it follows: an outcome to
// its query, an answer to the question.
func (r *starReader) decisions() (map[string]string, error) {
	var queries []string
	for _, n := range r.names {
		if starQuery(n) && r.open(n) {
			queries = append(queries, n)
		}
	}
	from := map[string]string{}
	for _, w := range r.keys {
		if _, ok := starOutcomes[w]; !ok {
			continue
		}
		q, err := r.f.starQueryOf(w, queries)
		if err != nil {
			return nil, err
		}
		from[w] = q
	}
	var answers []string
	for _, w := range starAnswers {
		if r.doc.hasKey(w) {
			answers = append(answers, w)
		}
	}
	if len(answers) == 0 {
		return from, nil
	}
	q, err := r.f.starQuestion(answers[0], r.doc.Graph, r.names, r.open)
	if err != nil {
		return nil, err
	}
	for _, w := range answers {
		from[w] = q
	}
	return from, nil
}

// edges adds the graph's moves, and a move into __end__ out of each node
// that neither has a next node nor is followed by a decision.
func (r *starReader) edges(from map[string]string) {
	f := r.f
	for _, k := range r.keys {
		v := r.doc.Graph[k]
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
	for _, n := range r.names {
		if r.open(n) && !followed[n] {
			event := starAgent
			if starQuery(n) {
				event = starOK
			}
			f.edges = append(f.edges, edge{from: n, event: event, to: automaton.EndID})
		}
	}
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
func (f *flow) starQuestion(answer string, graph map[string]string, names []string, open func(string) bool) (string, error) {
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
		return "", f.errorf(answer, "an answer, but no node without a next node asks a question for it to follow (a dangling decision)")
	}
	return "", f.errorf(answer, "an answer, and %s all ask: which one it follows is unclear", strings.Join(quoteAll(asking), ", "))
}
