package design

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
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
//   - yes, no and done are the user's answer to the question before them,
//     a node without a next node of its own: the one the positive outcome
//     (query_success, available) leads to when its name asks ("_ask_");
//     else the only one that asks; else the one the positive outcome
//     leads to; else the only one left. Where several ask, the answer
//     follows those another answer leads to (the next round's question:
//     trivia's "ask next" after correct and incorrect). Where no other
//     node asks, an answer that leads back to an open node that asks
//     follows that node ("anything more?", yes, "anything more?"). The
//     answer is a user turn, which the model's label rules drop, so the
//     move goes from the question on its own event.
//   - Every STAR graph starts at hello. Any other key nothing leads to is
//     a decision word of the task's own (trivia's correct, incorrect,
//     noanswer): an answer, tied as yes is, to a question no answer leads
//     to. The reader says so (Options.Note). info_missing (the user lacks what the request asks, so the
//     wizard asks other questions) follows the node before the one its
//     branch comes back to; info_missing2 follows the last node of that
//     branch (the user lacks those too).
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
	note := opt.Note
	if note == nil {
		note = func(string) {}
	}
	if err := json.Unmarshal(data, &r.doc); err != nil {
		return nil, r.f.errorf("", "not a STAR task graph: %s", whyJSON(data, err))
	}
	if err := r.f.forgiven(data); err != nil {
		return nil, err
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
	if err := r.nodes(task, opt.Labels); err != nil {
		return nil, err
	}
	var own []string
	for _, w := range r.keys {
		if _, missing := infoMissing(w); r.words[w] && !missing {
			own = append(own, w)
		}
	}
	if len(own) > 0 {
		// One line a flow, however many words a graph holds.
		named := quoteAll(own[:min(len(own), maxNamed)])
		if len(own) > maxNamed {
			named = append(named, fmt.Sprintf("%d more", len(own)-maxNamed))
		}
		note(fmt.Sprintf("%s: nothing leads to %s: read as answer words of the task's own", opt.Path, strings.Join(named, ", ")))
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
	keys  []string            // the graph's keys, sorted
	names []string            // its nodes (keys and targets but the decision words), sorted
	words map[string]bool     // the task's own decision words (keys nothing leads to but hello)
	preds map[string][]string // per node, the nodes (not words) that lead to it, sorted
	// branches are the branches walked, by the node they start at
	branches map[string]starBranch
	cycle    map[string]bool // the nodes on a cycle, once a branch is walked
}

// decision reports whether key k is a decision word, STAR's or the task's.
func (r *starReader) decision(k string) bool { return starDecision(k) || r.words[k] }

// open reports whether node n has no next node of its own in the graph.
func (r *starReader) open(n string) bool { return !r.doc.hasKey(n) }

// nodes adds the graph's nodes, the queries labelled query:TASK, and finds
// the start: the one node nothing leads to.
func (r *starReader) nodes(task string, labels map[string]string) error {
	f := r.f
	targets := map[string]bool{}
	for k := range r.doc.Graph {
		r.keys = append(r.keys, k)
	}
	sort.Strings(r.keys)
	for _, k := range r.keys {
		v := r.doc.Graph[k]
		switch {
		case k == "":
			return f.errorf("", "a node with an empty name (leading to %q)", v)
		case v == "":
			return f.errorf(k, "its next node is empty")
		case starDecision(v):
			return f.errorf(k, "its next node %q is a decision word, not a node", v)
		}
		targets[v] = true
	}
	named := map[string]bool{}
	for _, k := range r.keys {
		if !starDecision(k) {
			r.names = append(r.names, k)
			named[k] = true
		}
	}
	for _, k := range r.keys {
		if v := r.doc.Graph[k]; r.open(v) && !named[v] {
			r.names = append(r.names, v)
			named[v] = true
		}
	}
	sort.Strings(r.names)
	var starts []string
	for _, n := range r.names {
		if !targets[n] {
			starts = append(starts, n)
		}
	}
	if len(starts) > 1 && contains(starts, starStart) {
		// The other keys nothing leads to are the task's own words.
		r.words = map[string]bool{}
		for _, n := range starts {
			if n != starStart {
				r.words[n] = true
			}
		}
		starts = []string{starStart}
		r.names = slices.DeleteFunc(r.names, func(n string) bool { return r.words[n] })
	}
	r.preds = map[string][]string{}
	for _, k := range r.keys {
		if !r.decision(k) {
			v := r.doc.Graph[k]
			r.preds[v] = append(r.preds[v], k)
		}
	}
	for _, n := range r.names {
		nd := f.add(n)
		if starQuery(n) {
			if _, named := labels[n]; task == "" && !named {
				// "query:" is no query of a log
				return f.errorf(n, `a query, but the flow names no task for it: name the file TASK.flow.json, give the graph a "task", or give the query a label in the label map`)
			}
			nd.label = "query:" + task
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

// maxNamed is the most keys a note names.
const maxNamed = 5

// starStart is where every STAR task graph begins.
const starStart = "hello"

// decisions ties each decision word to the nodes it follows: an outcome to
// its query, an answer to its question, info_missing to its request.
func (r *starReader) decisions() (map[string][]string, error) {
	var queries []string
	for _, n := range r.names {
		if starQuery(n) && r.open(n) {
			queries = append(queries, n)
		}
	}
	from := map[string][]string{}
	for _, w := range r.keys {
		if _, ok := starOutcomes[w]; !ok {
			continue
		}
		q, err := r.f.starQueryOf(w, queries)
		if err != nil {
			return nil, err
		}
		from[w] = []string{q}
	}
	// The nodes an answer leads to: the next round's questions.
	answered := map[string]bool{}
	for _, w := range r.keys {
		if r.words[w] || slices.Contains(starAnswers, w) {
			answered[r.doc.Graph[w]] = true
		}
	}
	open := r.openQuestions()
	var own []string // the question every word of the task's own follows
	for _, w := range r.keys {
		if !r.words[w] {
			continue
		}
		var err error
		switch k, ok := infoMissing(w); {
		case ok:
			from[w], err = r.infoMissingFrom(w, k)
		case own == nil:
			// The same for every such word: the node a word leads to is
			// answered, so never among the candidates. Asking once keeps
			// a graph of many words linear.
			own, err = r.question(w, open, answered, true)
			from[w] = own
		default:
			from[w] = own
		}
		if err != nil {
			return nil, err
		}
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
	q, err := r.question(answers[0], open, answered, false)
	if err != nil {
		return nil, err
	}
	for _, w := range answers {
		from[w] = q
	}
	return from, nil
}

// infoMissing reports whether w is info_missing (k 1) or info_missingK.
func infoMissing(w string) (k int, ok bool) {
	rest, ok := strings.CutPrefix(w, "info_missing")
	if !ok {
		return 0, false
	}
	if rest == "" {
		return 1, true
	}
	k, err := strconv.Atoi(rest)
	if err != nil || k < 2 || strconv.Itoa(k) != rest {
		return 0, false
	}
	return k, true
}

// branch is the nodes from word w's next node on, up to the node where the
// flow comes back in (a node that a node off the branch leads to), and
// that node ("" when the branch ends, or loops, without coming back).
// Branches are kept by the node they start at: many info_missingK words
// leading to one node walk it once.
func (r *starReader) branch(w string) (nodes []string, back string) {
	start := r.doc.Graph[w]
	if b, ok := r.branches[start]; ok {
		return b.nodes, b.back
	}
	nodes, back = r.walkBranch(start)
	if r.branches == nil {
		r.branches = map[string]starBranch{}
	}
	r.branches[start] = starBranch{nodes, back}
	return nodes, back
}

type starBranch struct {
	nodes []string
	back  string
}

// walkBranch walks branch's nodes from start. A node's predecessor is on
// the branch only as the node before it or, where the walk closes a
// cycle, as the cycle's node before it, so the walk stops at the node
// where the flow comes back in: walking on to its end first made many
// branches into one long tail quadratic.
func (r *starReader) walkBranch(start string) (nodes []string, back string) {
	if r.cycle == nil {
		r.cycle = r.cycles()
	}
	on := map[string]bool{}
	prev := ""
	for n := start; n != "" && !on[n]; n = r.doc.Graph[n] {
		for _, p := range r.preds[n] {
			if p != prev && !(r.cycle[n] && r.cycle[p]) {
				return nodes, n
			}
		}
		on[n] = true
		nodes = append(nodes, n)
		prev = n
	}
	return nodes, ""
}

// cycles marks the nodes on a cycle of the graph's moves from node to next
// node. Each node has one next node, so a walk from any node meets at most
// one cycle, and a node walked before ends the walk.
func (r *starReader) cycles() map[string]bool {
	on := map[string]bool{}
	state := map[string]int{} // 1 on the walk being made, 2 walked before
	for _, k := range r.keys {
		var path []string
		n := k
		for n != "" && state[n] == 0 && !r.decision(n) {
			state[n] = 1
			path = append(path, n)
			n = r.doc.Graph[n]
		}
		if state[n] == 1 { // the walk came back to n: a cycle from n on
			for i := len(path) - 1; path[i] != n; i-- {
				on[path[i]] = true
			}
			on[n] = true
		}
		for _, p := range path {
			state[p] = 2
		}
	}
	return on
}

// infoMissingFrom is the node info_missing word w (the k-th) follows: for
// the first, the node before the one its branch comes back to, the request
// the user could not answer; for the k-th, the last node of the (k-1)-th's
// branch, whose questions the user could not answer either.
func (r *starReader) infoMissingFrom(w string, k int) ([]string, error) {
	if k == 1 {
		nodes, back := r.branch(w)
		for _, p := range r.preds[back] {
			if !contains(nodes, p) {
				return []string{p}, nil
			}
		}
		return nil, r.f.errorf(w, "the user lacks information, but its branch never comes back to the flow: which request it follows is unclear")
	}
	prev := "info_missing"
	if k > 2 {
		prev += strconv.Itoa(k - 1)
	}
	if !r.words[prev] {
		return nil, r.f.errorf(w, "the user lacks information again, but the graph has no %q before it", prev)
	}
	nodes, _ := r.branch(prev)
	if len(nodes) == 0 {
		return nil, r.f.errorf(w, "the user lacks information again, but %q leads to no questions", prev)
	}
	return nodes[len(nodes)-1:], nil
}

// edges adds the graph's moves, and a move into __end__ out of each node
// that neither has a next node nor is followed by a decision.
func (r *starReader) edges(from map[string][]string) {
	f := r.f
	seen := map[edge]bool{} // two words may make one move
	for _, k := range r.keys {
		v := r.doc.Graph[k]
		switch {
		case r.decision(k):
			event := starAgent
			if e, ok := starOutcomes[k]; ok {
				event = e
			}
			for _, q := range from[k] {
				if e := (edge{from: q, event: event, to: v}); !seen[e] {
					seen[e] = true
					f.edges = append(f.edges, e)
				}
			}
		case starQuery(k):
			f.edges = append(f.edges, edge{from: k, event: starOK, to: v})
		default:
			f.edges = append(f.edges, edge{from: k, event: starAgent, to: v})
		}
	}
	followed := map[string]bool{}
	for _, qs := range from {
		for _, q := range qs {
			followed[q] = true
		}
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

// setAside reports whether node n is where a failed outcome or "no"
// leads: an answer's destination, not a question it answers.
func (r *starReader) setAside(n string) bool {
	for k := range starNegative {
		if r.doc.Graph[k] == n {
			return true
		}
	}
	return r.doc.Graph["no"] == n
}

// openQuestions are the nodes an answer may follow: those without a next
// node of their own that are no query.
func (r *starReader) openQuestions() []string {
	var out []string
	for _, n := range r.names {
		if r.open(n) && !starQuery(n) {
			out = append(out, n)
		}
	}
	return out
}

// question is the node (or nodes) answer w follows, among open (see
// openQuestions) but the node w leads to: the one the positive outcome
// (query_success, available) leads to when it asks ("_ask_"); else the
// only one that asks; else the one the positive outcome leads to; else
// the only one left once the nodes a negative outcome or "no" lead to are
// set aside. Where several ask, a word of the task's own (own) follows the
// one no answer leads to, and yes, no and done follow those another answer
// leads to (the next round's questions). Where no other node asks, yes,
// no or done leading back to an open node that asks follows that node: a
// loop that asks the question again.
func (r *starReader) question(w string, open []string, answered map[string]bool, own bool) ([]string, error) {
	asks := func(n string) bool { return strings.Contains(n, "_ask_") }
	var candidates, asking, led []string
	for _, n := range open {
		if n == r.doc.Graph[w] || own && answered[n] {
			continue
		}
		candidates = append(candidates, n)
		if asks(n) {
			asking = append(asking, n)
			if answered[n] {
				led = append(led, n)
			}
		}
	}
	positive := ""
	for _, k := range []string{"query_success", "available"} {
		if v, ok := r.doc.Graph[k]; ok && contains(candidates, v) {
			positive = v
			break
		}
	}
	switch {
	case positive != "" && asks(positive):
		return []string{positive}, nil
	case len(asking) == 1:
		return asking, nil
	case positive != "":
		return []string{positive}, nil
	case len(asking) > 1 && !own && len(led) > 0:
		return led, nil
	case len(asking) > 1:
		return nil, r.f.errorf(w, "an answer, and %s all ask: which one it follows is unclear", strings.Join(quoteAll(asking), ", "))
	}
	// No other node asks: an answer that leads back to an open node that
	// asks answers that question and asks it again ("anything else?",
	// yes, "anything else?"). Not for the task's own words, which answer
	// the nodes no other answer leads to.
	if to := r.doc.Graph[w]; !own && asks(to) && contains(open, to) {
		return []string{to}, nil
	}
	// None asks: the only node left once the outcomes' failures and what
	// "no" leads to are set aside.
	var left []string
	for _, n := range candidates {
		if !r.setAside(n) {
			left = append(left, n)
		}
	}
	if len(left) == 1 {
		return left, nil
	}
	return nil, r.f.errorf(w, "an answer, but no node without a next node asks a question for it to follow (a dangling decision)")
}
