package gen

import (
	"bytes"
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"github.com/fsmine/fsmine/automaton"
)

// returnsTruth is the model file of ReturnsTruth, in the form
// automaton.Model.Write gives it.
//
//go:embed returns.truth.json
var returnsTruth []byte

// ReturnsTruth returns the built-in truth model of a hand-written
// customer-service returns flow (fsmine gen without --model): 15 stages
// from greet to close, retry loops, verify_identity used twice (early and
// before a high-value refund), a rare escalate_to_human and a rare
// complaint path. Every state but the start and end has dwell_ms. Each
// call returns a new model, which the caller may change.
func ReturnsTruth() *automaton.Model {
	m, err := automaton.Read(bytes.NewReader(returnsTruth))
	if err != nil {
		panic(fmt.Sprintf("built-in returns truth: %v", err)) // a bug in returns.truth.json, not input
	}
	return m
}

// AgentTruth returns the built-in tool-calling agent truth (fsmine gen
// --truth agent): what is legal is known exactly, and sessions are sparse,
// every one a different combination of the same tools, as real agent logs
// are. Each call returns a new model, which the caller may change.
//
//   - Identification by one of a family of tools: find_user_id_by_email or
//     find_user_id_by_name_zip; a not_found answer is retried with the
//     other (or once more by name and zip).
//   - Read-only lookups in any order, each optional: get_user_details,
//     get_order_details, get_product_details; the order lookup may repeat.
//     The truth's states remember which lookups were made (one state per
//     tool and set of tools done), so each lookup is made at most once
//     apart from the order lookup's repeats.
//   - A required confirmation (confirm_with_user, event yes) before one
//     acting tool, and only after the order was looked up.
//   - A second request in some sessions: after the action, another order
//     lookup, confirmation and action.
//   - A rare hand-off to a human (transfer_to_human_agents) from the
//     lookups.
//
// Counts are per mille of each state's outflow.
func AgentTruth() *automaton.Model {
	m := &automaton.Model{
		Schema: automaton.Schema, Version: 1, Initial: automaton.StartID,
		Generator: "built-in tool-calling agent truth for fsmine gen",
		Trunk:     []string{},
	}
	states := map[string]string{} // id -> label
	add := func(from, event, to string, count int) {
		m.Transitions = append(m.Transitions, automaton.Transition{From: from, Event: event, To: to, Count: count})
	}
	state := func(id, label string) string {
		states[id] = label
		return id
	}
	state(automaton.StartID, automaton.StartID)
	state(automaton.EndID, automaton.EndID)
	email := state("find_user_id_by_email", "find_user_id_by_email")
	zip := state("find_user_id_by_name_zip", "find_user_id_by_name_zip")
	zip2 := state("find_user_id_by_name_zip@retry", "find_user_id_by_name_zip")
	human := state("transfer_to_human_agents", "transfer_to_human_agents")
	confirm := state("confirm_with_user", "confirm_with_user")
	acts := []string{"cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_items", "return_delivered_order_items"}
	lookups := []string{"get_order_details", "get_product_details", "get_user_details"}
	short := map[string]string{"get_order_details": "o", "get_product_details": "p", "get_user_details": "u"}
	// lookup returns the state of tool made with the set done (tools' short
	// names, sorted) of lookups made so far, it included.
	lookup := func(tool string, done []string) string {
		return state(tool+"@"+strings.Join(done, ""), tool)
	}
	with := func(done []string, tool string) []string {
		out := append(append([]string{}, done...), short[tool])
		sort.Strings(out)
		return out
	}

	add(automaton.StartID, "", email, 700)
	add(automaton.StartID, "", zip, 300)
	add(email, "not_found", zip, 250)
	add(zip, "not_found", zip2, 200)
	add(human, "ok", automaton.EndID, 1000)
	// After identification: the first lookup, any of the three.
	first := func(from string, total int) {
		add(from, "ok", lookup("get_order_details", []string{"o"}), total*5/10)
		add(from, "ok", lookup("get_user_details", []string{"u"}), total*4/10)
		add(from, "ok", lookup("get_product_details", []string{"p"}), total/10)
	}
	first(email, 750)
	first(zip, 800)
	first(zip2, 950)
	add(zip2, "not_found", human, 50)
	// Every set of lookups done, every tool last made.
	sets := [][]string{}
	for mask := 1; mask < 8; mask++ {
		var done []string
		for i, t := range lookups {
			if mask&(1<<i) != 0 {
				done = append(done, short[t])
			}
		}
		sort.Strings(done)
		sets = append(sets, done)
	}
	has := func(done []string, s string) bool {
		for _, d := range done {
			if d == s {
				return true
			}
		}
		return false
	}
	for _, done := range sets {
		for _, tool := range lookups {
			if !has(done, short[tool]) {
				continue
			}
			from := lookup(tool, done)
			var next []string
			for _, t := range lookups {
				if !has(done, short[t]) {
					next = append(next, t)
				}
			}
			// Shares: 20 to the hand-off, then the rest split among the
			// lookups left, the order lookup's repeat and the confirmation.
			add(from, "ok", human, 20)
			ways := len(next)
			if tool == "get_order_details" {
				ways++
			}
			if has(done, "o") {
				ways++
			}
			each := 980 / ways
			for _, t := range next {
				add(from, "ok", lookup(t, with(done, t)), each)
			}
			if tool == "get_order_details" {
				add(from, "ok", from, each)
			}
			if has(done, "o") {
				add(from, "ok", confirm, each)
			}
		}
	}
	// The confirmation, one action, and maybe a second request.
	order2 := state("get_order_details@second", "get_order_details")
	confirm2 := state("confirm_with_user@second", "confirm_with_user")
	for _, a := range acts {
		act := state(a, a)
		add(confirm, "yes", act, 250)
		add(act, "ok", automaton.EndID, 750)
		add(act, "ok", order2, 250)
		act2 := state(a+"@second", a)
		add(confirm2, "yes", act2, 250)
		add(act2, "ok", automaton.EndID, 1000)
	}
	add(order2, "ok", order2, 300)
	add(order2, "ok", confirm2, 700)

	ids := make([]string, 0, len(states))
	for id := range states {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		s := automaton.State{ID: id, Label: states[id]}
		if id != automaton.StartID && id != automaton.EndID {
			s.DwellMS = &automaton.Dwell{P50: 800, P95: 3000, Max: 20000}
		}
		m.States = append(m.States, s)
	}
	outflow := map[string]int{}
	for _, t := range m.Transitions {
		outflow[t.From] += t.Count
	}
	for i := range m.Transitions {
		t := &m.Transitions[i]
		t.Prob = float64(t.Count) / float64(outflow[t.From])
	}
	m.Sort()
	if err := m.Validate(); err != nil {
		panic(fmt.Sprintf("built-in agent truth: %v", err)) // a bug in this file, not input
	}
	m.Digest = m.ComputeDigest()
	return m
}
