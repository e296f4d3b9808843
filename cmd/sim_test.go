package cmd

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/guard"
	"github.com/fsmine/fsmine/mine"
)

// TestGuardSimulation is a simulation, not a measurement of real agents: it
// compares a drifting agent with and without the guard. The agent follows
// the returns-flow truth model, but drifts as agents do:
//   - an off-topic turn that derails it to a stage the flow does not have
//     (p 0.04 per step);
//   - a skipped check: from identify_customer it goes straight to
//     lookup_order, skipping verify_identity (p 0.3 each time there);
//   - an endless retry: in lookup_order it keeps retrying not_found
//     (p 0.15 of sessions), never finding the order.
//
// Without the guard the agent does what it proposes; with it (a model mined
// from 2,000 sessions of the truth, default loop caps, a watchdog of 4 turns
// falling back to escalate_to_human) a denied step makes the agent take the
// guard's most frequent legal move instead, and a watchdog moves it to the
// fallback. A session completes the task when it ends at close having made
// task moves the truth allows (small talk aside); it leaves the map when a
// move it made is not in the mined model; it runs away when it is still going
// after 60 moves.
//
// The slots rows add a third drift: the agent skips collecting a slot the
// task needs. Leaving lookup_order for check_eligibility needs a valid
// order id (the agent sends none with p 0.2, a malformed one with p 0.1),
// leaving collect_return_reason needs the reason (none with p 0.25); a
// session that leaves either without it does not complete the task. The
// guard with slots (slotsPolicy: the same policy plus a required slot and a
// rule condition) denies such a move; the agent then asks the customer and
// sends the move again, with the slot right with p 0.9 each time. "with the
// guard, no slot rules" is the first guard facing that agent: it does not
// see the slots.
//
// Run with -v for the table the README quotes.
func TestGuardSimulation(t *testing.T) {
	truth, rules := returnsTruthAndRules(t)
	m, err := mine.Build(readGenerated(t, truth, 2000, 3, rules), mine.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	policy := &guard.Policy{Watchdog: &guard.Watchdog{MaxTurns: 4,
		Fallback: &guard.Fallback{Event: "stuck", To: "escalate_to_human"}}}
	withSlots, err := guard.ReadPolicy(strings.NewReader(slotsPolicy))
	if err != nil {
		t.Fatal(err)
	}
	const sessions = 5000
	type outcome struct{ complete, escalated, left, runaway, denied, generalized int }
	run := func(guarded bool, policy *guard.Policy, skipsSlots bool) outcome {
		g, err := guard.New(m, policy, guard.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(42, 42))
		var o outcome
		for s := 0; s < sessions; s++ {
			var agent *slotAgent
			if skipsSlots {
				agent = &slotAgent{have: make(map[string]bool), send: policy.Slots != nil, ok: true}
			}
			r := simulateSession(truth, m, g, guarded, agent, rng, fmt.Sprint("s", s))
			if r.complete {
				o.complete++
			}
			if r.escalated {
				o.escalated++
			}
			if r.left {
				o.left++
			}
			if r.runaway {
				o.runaway++
			}
			if r.refusedAdvice {
				t.Fatalf("session %d: the guard refused a move it had offered", s)
			}
			o.denied += r.denied
			o.generalized += r.generalized
		}
		return o
	}
	without, with := run(false, policy, false), run(true, policy, false)
	slotsWithout, slotsPlain, slotsWith := run(false, policy, true), run(true, policy, true), run(true, withSlots, true)
	pct := func(n int) float64 { return 100 * float64(n) / sessions }
	gen := 0
	for _, tr := range m.Transitions {
		if tr.Generalized != "" {
			gen++
		}
	}
	t.Logf("simulation, %d sessions of a drifting agent on the returns flow; the mined model has %d transitions, %d of them generalised", sessions, len(m.Transitions), gen)
	t.Logf("%-38s %10s %10s %12s %10s %8s", "", "complete", "escalated", "left the map", "runaway", "denied")
	for _, row := range []struct {
		name string
		o    outcome
	}{{"without guard", without}, {"with guard", with},
		{"skips slots: without guard", slotsWithout}, {"skips slots: with guard, no slot rules", slotsPlain}, {"skips slots: guard with slots", slotsWith}} {
		t.Logf("%-38s %9.1f%% %9.1f%% %11.1f%% %9.1f%% %8d", row.name, pct(row.o.complete), pct(row.o.escalated), pct(row.o.left), pct(row.o.runaway), row.o.denied)
	}
	t.Logf("steps the guards allowed along generalised transitions: %d, %d, %d", with.generalized, slotsPlain.generalized, slotsWith.generalized)
	if slotsWith.left != 0 || slotsWith.runaway != 0 {
		t.Errorf("with the slots guard %d sessions left the map and %d ran away, want none", slotsWith.left, slotsWith.runaway)
	}
	if slotsWith.complete <= slotsWithout.complete || slotsWith.complete <= slotsPlain.complete {
		t.Errorf("the agent that skips slots completes %d sessions with the slots guard, %d without a guard, %d with the plain guard: want most with the slots guard",
			slotsWith.complete, slotsWithout.complete, slotsPlain.complete)
	}
	if with.left != 0 || with.runaway != 0 {
		t.Errorf("with the guard %d sessions left the map and %d ran away, want none", with.left, with.runaway)
	}
	if without.left == 0 || without.runaway == 0 {
		t.Errorf("the drifting agent never left the map (%d) or ran away (%d) without the guard: the simulation does not drift", without.left, without.runaway)
	}
	if with.complete <= without.complete {
		t.Errorf("with the guard %d sessions complete, without %d: want more with", with.complete, without.complete)
	}
}

// slotsPolicy is the simulation's policy with slots: the watchdog of the
// plain one, the order id a condition of finding the order, the reason
// required to leave collect_return_reason.
const slotsPolicy = `{
  "watchdog": {"max_turns": 4, "fallback": {"event": "stuck", "to": "escalate_to_human"}},
  "slots": [{"name": "order_id", "pattern": "^[A-Z]{2}[0-9]{8}$"}],
  "states": {
    "collect_return_reason": {"required_slots": [{"name": "reason"}], "instructions": "Ask why the customer returns the item."},
    "lookup_order": {"instructions": "Ask for the order id (two letters, eight digits) and look the order up."}
  },
  "transitions": [
    {"from": "lookup_order", "event": "found", "to": "check_eligibility", "when": [{"slot": "order_id", "matches": "^[A-Z]{2}[0-9]{8}$"}]}
  ]
}`

// slotAgent is the drifting agent's handling of slots in the slots rows.
type slotAgent struct {
	have map[string]bool // slots collected right
	send bool            // the guard knows slots: send them
	ok   bool            // no move left a state without the slot the task needs
}

// need names the slot the task needs for the move out of cur to label.
func (a *slotAgent) need(cur, ev, label string) string {
	switch {
	case cur == "lookup_order" && ev == "found" && label == "check_eligibility":
		return "order_id"
	case cur == "collect_return_reason" && label != "collect_return_reason":
		return "reason"
	}
	return ""
}

func (a *slotAgent) value(name string) string {
	if name == "order_id" {
		return "AB12345678"
	}
	return "damaged"
}

// carry returns the slots the agent sends with a move, drifting: a slot not
// yet collected is skipped or (the order id) malformed.
func (a *slotAgent) carry(cur, ev, label string, rng *rand.Rand) []guard.Slot {
	if a == nil {
		return nil
	}
	name := a.need(cur, ev, label)
	if name == "" || a.have[name] {
		return nil
	}
	skip, bad := 0.25, 0.0
	if name == "order_id" {
		skip, bad = 0.2, 0.1
	}
	switch x := rng.Float64(); {
	case x < skip:
		return nil
	case x < skip+bad:
		return []guard.Slot{{Name: name, Value: "order 4711"}}
	}
	return []guard.Slot{{Name: name, Value: a.value(name)}}
}

// took records a move the agent made with slots.
func (a *slotAgent) took(cur, ev, label string, slots []guard.Slot) {
	if a == nil {
		return
	}
	for _, sl := range slots {
		if sl.Value == a.value(sl.Name) {
			a.have[sl.Name] = true
		}
	}
	if name := a.need(cur, ev, label); name != "" && !a.have[name] {
		a.ok = false
	}
}

type simResult struct {
	complete, escalated, left, runaway bool
	refusedAdvice                      bool // the guard denied a move it had just offered
	denied                             int
	generalized                        int // steps allowed along a generalised transition
}

// simulateSession runs one session of the drifting agent. The agent knows
// where it is in the truth (ts); the mined model's walk (ms) tells whether
// it is still on the map.
func simulateSession(truth, m *automaton.Model, g *guard.Guard, guarded bool, agent *slotAgent, rng *rand.Rand, id string) simResult {
	var r simResult
	ts := automaton.StartID
	ms := automaton.StartID // "" once off the map
	truthOK := true
	stuck := rng.Float64() < 0.15
	step := func(ev, label, nextTS string) {
		if ms != "" {
			if tr := m.Next(ms, automaton.Move{Event: ev, Label: label}); tr != nil {
				ms = tr.To
			} else {
				ms = ""
				r.left = true
			}
		}
		if nextTS == "" {
			truthOK = false
		} else {
			ts = nextTS
		}
	}
	for moves := 0; ; moves++ {
		if moves == 60 {
			r.runaway = true
			return r
		}
		// The truth's next move, then the drift.
		ev, label, nextTS := sampleTruth(truth, ts, rng)
		cur := truth.State(ts).Label
		switch {
		case stuck && cur == "lookup_order":
			ev, label, nextTS = "not_found", "lookup_order", ts
		case cur == "identify_customer" && label == "verify_identity" && rng.Float64() < 0.3:
			label, nextTS = "lookup_order", ""
		case ts != automaton.StartID && label != automaton.EndID && rng.Float64() < 0.04:
			ev, label, nextTS = "off_topic", "chitchat", ""
		}
		slots := agent.carry(cur, ev, label, rng)
		if guarded {
			d := propose(g, id, agent, cur, ev, label, &slots, rng, &r)
			if d.Allowed && d.Generalized {
				r.generalized++
			}
			if !d.Allowed {
				r.denied++
				switch {
				case d.Fallback != nil:
					// The guard took the policy's fallback: a move of the
					// policy, not of the mined model, so the map holds.
					ms, ts = d.State, "escalate_to_human"
					continue
				case stuck && cur == "lookup_order":
					continue // a stuck agent proposes the retry again; the watchdog acts
				case len(d.NextMoves) > 0:
					ev, label = d.NextMoves[0].Event, d.NextMoves[0].Label
					slots = agent.carry(cur, ev, label, rng)
					d = propose(g, id, agent, cur, ev, label, &slots, rng, &r)
					if d.Allowed && d.Generalized {
						r.generalized++
					}
					if !d.Allowed && d.Fallback != nil && agent != nil {
						// asking for a slot took too long: the watchdog
						r.denied++
						ms, ts = d.State, "escalate_to_human"
						continue
					}
					if !d.Allowed {
						r.refusedAdvice = true
						return r
					}
				default:
					r.runaway = true
					return r
				}
				nextTS = ""
				if tr := truth.Next(ts, automaton.Move{Event: ev, Label: label}); tr != nil {
					nextTS = tr.To
				}
			}
		}
		agent.took(cur, ev, label, slots)
		if label == automaton.EndID {
			step(ev, label, automaton.EndID)
			r.complete = truthOK && cur == "close" && (agent == nil || agent.ok)
			r.escalated = cur == "escalate_to_human"
			if guarded {
				g.End(id)
			}
			return r
		}
		if label == "lookup_order" && nextTS == "" && truth.State(ts).Label == "identify_customer" {
			// A skipped check: the agent is now really looking up the order.
			step(ev, label, "")
			ts = "lookup_order"
			continue
		}
		if nextTS == "" && label == "chitchat" {
			step(ev, label, "")
			truthOK = true // small talk does not break the task by itself; leaving the map is counted
			ms = ""
			continue
		}
		step(ev, label, nextTS)
	}
}

// propose sends the agent's move to the guard. A move denied for its slots
// is sent again after the agent asked the customer, who gives the slot right
// with p 0.9 each time, until the guard allows it or something else (the
// watchdog) answers.
func propose(g *guard.Guard, id string, agent *slotAgent, cur, ev, label string, slots *[]guard.Slot, rng *rand.Rand, r *simResult) guard.Decision {
	if agent == nil || !agent.send {
		return g.Step(id, ev, label)
	}
	for {
		d, err := g.StepSlots(id, ev, label, *slots)
		if err != nil {
			panic(err) // the simulation's slots are the policy's
		}
		switch d.Reason {
		case guard.ReasonMissingSlot, guard.ReasonInvalidSlot, guard.ReasonCondition:
		default:
			return d
		}
		r.denied++
		if rng.Float64() < 0.9 {
			name := agent.need(cur, ev, label)
			*slots = []guard.Slot{{Name: name, Value: agent.value(name)}}
		}
	}
}

// sampleTruth draws the truth's next move out of state ts.
func sampleTruth(truth *automaton.Model, ts string, rng *rand.Rand) (event, label, to string) {
	out := truth.Out(ts)
	total := 0
	for _, t := range out {
		total += t.Count
	}
	x := rng.IntN(total)
	for _, t := range out {
		if x < t.Count {
			return t.Event, truth.State(t.To).Label, t.To
		}
		x -= t.Count
	}
	t := out[len(out)-1]
	return t.Event, truth.State(t.To).Label, t.To
}
