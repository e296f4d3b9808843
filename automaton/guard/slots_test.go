package guard

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// The fixture testdata/slots.json is a hand-written returns desk:
//
//	__start__ -> greet -ok-> collecting_info -ok-> confirming -confirmed-> refund -ok-> __end__
//	collecting_info -ask-> collecting_info, confirming -change_order-> collecting_info,
//	confirming -declined-> __end__, and collecting_info -ok-> refund, a
//	generalised ("skip") transition no session took.
func loadSlotsFixture(t testing.TB) *automaton.Model {
	t.Helper()
	m, err := automaton.Load("testdata/slots.json")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const slotsPolicy = `{
  "slots": [{"name": "channel", "pattern": "^(web|phone)$"}, {"name": "amount"}],
  "states": {
    "collecting_info": {
      "required_slots": [{"name": "order_id", "pattern": "^[A-Z]{2}[0-9]{8}$"}, {"name": "reason"}],
      "instructions": "Ask for the order id and the reason."
    },
    "confirming": {"instructions": "Confirm the return with the customer."}
  },
  "transitions": [
    {"from": "confirming", "event": "change_order", "to": "collecting_info", "clear": ["reason", "amount"]},
    {"from": "confirming", "event": "confirmed", "to": "refund",
     "when": [{"slot": "channel", "equals": "web"}, {"slot": "amount", "matches": "^[0-9]+$"}]},
    {"from": "confirming", "event": "declined", "to": "__end__", "keep": ["order_id"],
     "when": [{"field": "event", "matches": "^decl"}]}
  ]
}`

// slotStep is one step of a slots test and what the guard should answer.
type slotStep struct {
	event, next string
	slots       []Slot
	allowed     bool
	reason      string
	state       string
	missing     []string
	invalid     []string
	condition   string // a substring of Decision.Condition
	held        map[string]interface{}
}

func str(name, v string) Slot { return Slot{Name: name, Value: v} }

func TestGuardSlots(t *testing.T) {
	m := loadSlotsFixture(t)
	toCollect := []slotStep{
		{event: "", next: "greet", allowed: true, state: "greet"},
		{event: "ok", next: "collecting_info", allowed: true, state: "collect"},
	}
	good := []Slot{str("order_id", "AB12345678"), str("reason", "too small")}
	tests := []struct {
		name   string
		policy string
		steps  []slotStep
	}{
		{name: "leaving without the required slots", steps: append(toCollect,
			slotStep{event: "ok", next: "confirming", reason: ReasonMissingSlot, state: "collect", missing: []string{"order_id", "reason"}},
			slotStep{event: "ok", next: "confirming", slots: []Slot{str("order_id", "AB12345678"), str("reason", "")},
				reason: ReasonMissingSlot, state: "collect", missing: []string{"reason"}},
			slotStep{event: "ok", next: "confirming", slots: []Slot{str("order_id", "ab1"), str("reason", "broken")},
				reason: ReasonInvalidSlot, state: "collect", invalid: []string{"order_id"}},
			slotStep{event: "ok", next: "confirming", slots: []Slot{str("reason", "broken")},
				reason: ReasonMissingSlot, state: "collect", missing: []string{"order_id"}, held: map[string]interface{}{}},
		)},
		{name: "slots collected while staying count when leaving", steps: append(toCollect,
			slotStep{event: "ask", next: "collecting_info", slots: []Slot{str("order_id", "AB12345678")}, allowed: true, state: "collect"},
			slotStep{event: "ask", next: "collecting_info", slots: []Slot{str("reason", "too small")}, allowed: true, state: "collect",
				held: map[string]interface{}{"order_id": "AB12345678", "reason": "too small"}},
			slotStep{event: "ok", next: "confirming", allowed: true, state: "confirm"},
		)},
		{name: "change of order clears what depended on it", steps: append(toCollect,
			slotStep{event: "ok", next: "confirming", slots: append(good, Slot{Name: "amount", Value: "40", Kind: SlotNumber}), allowed: true, state: "confirm"},
			slotStep{event: "change_order", next: "collecting_info", slots: []Slot{str("order_id", "CD87654321")}, allowed: true, state: "collect",
				held: map[string]interface{}{"order_id": "CD87654321"}},
			slotStep{event: "ok", next: "confirming", reason: ReasonMissingSlot, state: "collect", missing: []string{"reason"}},
		)},
		{name: "keep drops every other slot", steps: append(toCollect,
			slotStep{event: "ok", next: "confirming", slots: append(good, str("channel", "web")), allowed: true, state: "confirm"},
			slotStep{event: "declined", next: "__end__", allowed: true, state: "__end__",
				held: map[string]interface{}{"order_id": "AB12345678"}},
		)},
		{name: "conditions name the one that failed", steps: append(toCollect,
			slotStep{event: "ok", next: "confirming", slots: good, allowed: true, state: "confirm"},
			slotStep{event: "confirmed", next: "refund", reason: ReasonCondition, state: "confirm", condition: `transitions[1].when[0]: slot "channel" equals "web"`},
			slotStep{event: "confirmed", next: "refund", slots: []Slot{str("channel", "web")}, reason: ReasonCondition, state: "confirm",
				condition: `transitions[1].when[1]: slot "amount" matches "^[0-9]+$"`, held: map[string]interface{}{"order_id": "AB12345678", "reason": "too small"}},
			slotStep{event: "confirmed", next: "refund", slots: []Slot{str("channel", "web"), {Name: "amount", Value: "12", Kind: SlotNumber}}, allowed: true, state: "refund"},
		)},
		{name: "equals compares kinds: the string 40 is not the number 40", policy: `{
			"slots": [{"name": "amount"}],
			"transitions": [{"from": "confirming", "to": "refund", "when": [{"slot": "amount", "equals": 40}]}]}`,
			steps: append(toCollect,
				slotStep{event: "ok", next: "confirming", allowed: true, state: "confirm"},
				slotStep{event: "confirmed", next: "refund", slots: []Slot{str("amount", "40")}, reason: ReasonCondition, state: "confirm", condition: "equals 40"},
				slotStep{event: "confirmed", next: "refund", slots: []Slot{{Name: "amount", Value: "40.0", Kind: SlotNumber}}, allowed: true, state: "refund"},
			)},
		{name: "a field the step carries", policy: `{"transitions": [{"from": "greet", "to": "collecting_info", "when": [{"field": "next", "equals": "collect"}]}]}`,
			steps: []slotStep{
				{event: "", next: "greet", allowed: true, state: "greet"},
				{event: "ok", next: "collecting_info", reason: ReasonCondition, state: "greet", condition: `field next equals "collect"`},
				{event: "ok", next: "collect", allowed: true, state: "collect"},
			}},
		{name: "present false", policy: `{"slots": [{"name": "flag"}], "transitions": [{"from": "greet", "to": "collecting_info", "when": [{"slot": "flag", "present": false}]}]}`,
			steps: []slotStep{
				{event: "", next: "greet", slots: []Slot{{Name: "flag", Value: "true", Kind: SlotBool}}, allowed: true, state: "greet"},
				{event: "ok", next: "collecting_info", reason: ReasonCondition, state: "greet", condition: `slot "flag" is absent`},
				{event: "ok", next: "collecting_info", slots: []Slot{str("flag", "")}, allowed: true, state: "collect"},
			}},
		{name: "monitor mode records and moves", policy: `{"mode": "monitor", "states": {"collecting_info": {"required_slots": [{"name": "order_id"}]}}}`,
			steps: append(toCollect,
				slotStep{event: "ok", next: "confirming", allowed: true, reason: ReasonMissingSlot, state: "confirm", missing: []string{"order_id"}},
			)},
		{name: "the watchdog's fallback is exempt", policy: `{"watchdog": {"max_turns": 2, "fallback": {"event": "stuck", "to": "refund"}},
			"states": {"collecting_info": {"required_slots": [{"name": "order_id"}]}}}`,
			steps: append(toCollect,
				slotStep{event: "ok", next: "confirming", reason: ReasonMissingSlot, state: "collect", missing: []string{"order_id"}},
				slotStep{event: "ok", next: "confirming", reason: ReasonWatchdog, state: "refund"},
			)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := tt.policy
			if pol == "" {
				pol = slotsPolicy
			}
			g, err := New(m, guardPolicy(t, pol), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i, st := range tt.steps {
				d, err := g.StepSlots("s", st.event, st.next, st.slots)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if d.Allowed != st.allowed || d.Reason != st.reason || d.State != st.state {
					t.Errorf("step %d (%s -> %s): allowed %v reason %q state %s, want %v %q %s (%+v)", i, st.event, st.next, d.Allowed, d.Reason, d.State, st.allowed, st.reason, st.state, d)
				}
				if !reflect.DeepEqual(d.MissingSlots, st.missing) || !reflect.DeepEqual(d.InvalidSlots, st.invalid) {
					t.Errorf("step %d: missing %q invalid %q, want %q %q", i, d.MissingSlots, d.InvalidSlots, st.missing, st.invalid)
				}
				if (st.condition == "") != (d.Condition == "") || !strings.Contains(d.Condition, st.condition) {
					t.Errorf("step %d: condition %q, want one with %q", i, d.Condition, st.condition)
				}
				if st.held != nil {
					info, _ := g.Session("s")
					if !reflect.DeepEqual(info.Slots, st.held) {
						t.Errorf("step %d: session slots %v, want %v", i, info.Slots, st.held)
					}
				}
			}
		})
	}
}

func TestGuardSlotValidity(t *testing.T) {
	g, err := New(loadSlotsFixture(t), guardPolicy(t, slotsPolicy), Options{})
	if err != nil {
		t.Fatal(err)
	}
	slots := []Slot{str("channel", "fax"), str("order_id", "AB12345678"), str("reason", ""), {Name: "amount", Value: "3", Kind: SlotNumber}}
	if _, err := g.StepSlots("s", "", "greet", slots); err != nil {
		t.Fatal(err)
	}
	var got []bool
	for _, sl := range slots {
		got = append(got, sl.Valid)
	}
	if want := []bool{false, true, false, true}; !reflect.DeepEqual(got, want) {
		t.Errorf("Valid = %v, want %v", got, want)
	}
}

func TestGuardSlotErrors(t *testing.T) {
	g, err := New(loadSlotsFixture(t), guardPolicy(t, slotsPolicy), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.StepSlots("s", "", "greet", nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		slots []Slot
		want  string
	}{
		{"undeclared", []Slot{str("order_id", "AB12345678"), str("color", "red")}, `slot "color": the policy declares no such slot`},
		{"twice", []Slot{str("reason", "a"), str("reason", "b")}, `slot "reason": given twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := g.StepSlots("s", "ok", "collecting_info", tt.slots)
			var se *SlotError
			if !errors.As(err, &se) || err.Error() != tt.want {
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
			info, _ := g.Session("s")
			if info.State != "greet" || info.Steps != 1 || len(info.Slots) != 0 {
				t.Errorf("the session changed: %+v", info)
			}
			if _, ok := g.Session("fresh"); ok {
				t.Fatal("unexpected session")
			}
			if _, err := g.StepSlots("fresh", "", "greet", tt.slots); err == nil {
				t.Fatal("no error")
			}
			if _, ok := g.Session("fresh"); ok {
				t.Error("a refused first step created a session")
			}
		})
	}
	if !errors.Is(func() error { _, err := g.StepSlots("s", "", "x", []Slot{str("nope", "")}); return err }(), ErrUndeclaredSlot) {
		t.Error("not ErrUndeclaredSlot")
	}
}

func TestGuardInstructions(t *testing.T) {
	g, err := New(loadSlotsFixture(t), guardPolicy(t, slotsPolicy), Options{})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct{ event, next, want string }{
		{"", "greet", ""},
		{"ok", "collecting_info", "Ask for the order id and the reason."},
		{"ok", "confirming", "Ask for the order id and the reason."}, // denied: still collecting
		{"ok", "nowhere", "Ask for the order id and the reason."},
	}
	for i, st := range steps {
		if d := g.Step("s", st.event, st.next); d.Instructions != st.want {
			t.Errorf("step %d: instructions %q, want %q", i, d.Instructions, st.want)
		}
	}
	if d, _ := g.StepSlots("s", "ok", "confirming", []Slot{str("order_id", "AB12345678"), str("reason", "r")}); d.Instructions != "Confirm the return with the customer." {
		t.Errorf("instructions in confirming = %q", d.Instructions)
	}
	if info, _ := g.Session("s"); info.Instructions != "Confirm the return with the customer." {
		t.Errorf("Session instructions = %q", info.Instructions)
	}
}

func TestGuardGeneralized(t *testing.T) {
	m := loadSlotsFixture(t)
	tests := []struct {
		policy  string
		allowed bool
		reason  string
		state   string
		offered bool // the generalised move is among next_moves in collecting_info
	}{
		{`{}`, true, "", "refund", true},
		{`{"generalized": "allow"}`, true, "", "refund", true},
		{`{"generalized": "deny"}`, false, ReasonGeneralized, "collect", false},
		{`{"generalized": "deny", "mode": "monitor"}`, true, ReasonGeneralized, "refund", false},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			g, err := New(m, guardPolicy(t, tt.policy), Options{})
			if err != nil {
				t.Fatal(err)
			}
			g.Step("s", "", "greet")
			d := g.Step("s", "ok", "collecting_info")
			offered := false
			for _, mv := range d.NextMoves {
				if mv.To == "refund" {
					offered = mv.Generalized
				} else if mv.Generalized {
					t.Errorf("move %+v marked generalised", mv)
				}
			}
			if offered != tt.offered {
				t.Errorf("generalised move offered = %v, want %v (%+v)", offered, tt.offered, d.NextMoves)
			}
			d = g.Step("s", "ok", "refund")
			if d.Allowed != tt.allowed || d.Reason != tt.reason || d.State != tt.state || !d.Generalized {
				t.Errorf("step = allowed %v reason %q state %s generalized %v, want %v %q %s true", d.Allowed, d.Reason, d.State, d.Generalized, tt.allowed, tt.reason, tt.state)
			}
			// an observed transition is not marked
			g.Step("t", "", "greet")
			g.Step("t", "ok", "collecting_info")
			if d := g.Step("t", "ask", "collecting_info"); d.Generalized || !d.Allowed {
				t.Errorf("observed step: %+v", d)
			}
		})
	}
}

func TestGuardSlotsSurviveReload(t *testing.T) {
	m := loadSlotsFixture(t)
	g, err := New(m, guardPolicy(t, slotsPolicy), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g.Step("s", "", "greet")
	g.StepSlots("s", "ok", "collecting_info", []Slot{str("order_id", "AB12345678")})
	if _, err := g.Reload(loadSlotsFixture(t), nil); err != nil {
		t.Fatal(err)
	}
	if info, _ := g.Session("s"); !reflect.DeepEqual(info.Slots, map[string]interface{}{"order_id": "AB12345678"}) {
		t.Errorf("slots after reload = %v", info.Slots)
	}
}

func TestPolicySlotErrors(t *testing.T) {
	m := loadSlotsFixture(t)
	tests := []struct {
		name, policy, want string
	}{
		{"unknown state", `{"states": {"shipping": {"instructions": "x"}}}`, `policy: states.shipping: state "shipping" is not in the model`},
		{"odd key", `{"states": {"a b": {}}}`, `policy: states["a b"]: state "a b" is not in the model`},
		{"state named twice", `{"states": {"collect": {}, "collecting_info": {}}}`, `policy: states.collecting_info: state "collect" is named by states.collect too`},
		{"invalid pattern", `{"states": {"collecting_info": {"required_slots": [{"name": "order_id", "pattern": "^[A-Z"}]}}}`,
			`policy: states.collecting_info.required_slots[0].pattern: invalid RE2 pattern "^[A-Z": missing closing ]`},
		{"perl pattern", `{"slots": [{"name": "x", "pattern": "(?=a)"}]}`, `policy: slots[0].pattern: invalid RE2 pattern "(?=a)": invalid or unsupported Perl syntax`},
		{"unnamed slot", `{"slots": [{"pattern": "a"}]}`, `policy: slots[0].name: a slot needs a name`},
		{"slot declared twice", `{"slots": [{"name": "x"}, {"name": "x"}]}`, `policy: slots[1]: slot "x" is declared by slots[0] too`},
		{"unknown slot in clear", `{"transitions": [{"from": "confirming", "to": "collecting_info", "clear": ["reason"]}]}`,
			`policy: transitions[0].clear[0]: slot "reason" is not declared (by slots or a state's required_slots)`},
		{"unknown slot in a condition", `{"slots": [{"name": "a"}], "transitions": [{"from": "confirming", "to": "refund", "when": [{"slot": "b", "present": true}]}]}`,
			`policy: transitions[0].when[0].slot: slot "b" is not declared (by slots or a state's required_slots)`},
		{"a field steps never carry", `{"transitions": [{"from": "confirming", "to": "refund", "when": [{"field": "intent", "equals": "refund"}]}]}`,
			`policy: transitions[0].when[0].field: steps carry no field "intent" (they carry "event" and "next")`},
		{"two tests", `{"slots": [{"name": "a"}], "transitions": [{"from": "confirming", "to": "refund", "when": [{"slot": "a", "present": true, "matches": "x"}]}]}`,
			`policy: transitions[0].when[0]: give exactly one of present, equals and matches (2 given)`},
		{"equals an object", `{"slots": [{"name": "a"}], "transitions": [{"from": "confirming", "to": "refund", "when": [{"slot": "a", "equals": {"x": 1}}]}]}`,
			`policy: transitions[0].when[0].equals: want a string, number or bool, not an object`},
		{"keep and clear", `{"slots": [{"name": "a"}], "transitions": [{"from": "confirming", "to": "refund", "keep": ["a"], "clear": ["a"]}]}`,
			`policy: transitions[0]: give keep or clear, not both`},
		{"no such transition", `{"transitions": [{"from": "greet", "event": "ok", "to": "refund"}]}`,
			`policy: transitions[0] (greet -[ok]-> refund): no such transition in the model`},
		{"rule on an unknown state", `{"transitions": [{"from": "greet", "to": "shipping"}]}`,
			`policy: transitions[0] (greet -[*]-> shipping): to: state "shipping" is not in the model`},
		{"two rules on one transition", `{"transitions": [{"from": "confirming", "to": "refund"}, {"from": "confirm", "event": "confirmed", "to": "refund"}]}`,
			`policy: transitions[1] (confirm -[confirmed]-> refund): the transition confirm -[confirmed]-> refund has a rule in transitions[0] too`},
		{"generalized", `{"generalized": "warn"}`, `policy: generalized is "warn", want "allow" or "deny"`},
		// A 5 MB literal took 11 s and 768 MB to compile, and the error
		// quoted all of it.
		{"pattern too long", `{"slots": [{"name": "x", "pattern": "` + strings.Repeat("a", 5<<20) + `"}]}`,
			`policy: slots[0].pattern: invalid RE2 pattern "` + strings.Repeat("a", 64) + `"...: 5242880 bytes, at most 4096`},
		{"condition pattern too long", `{"slots": [{"name": "a"}], "transitions": [{"from": "confirming", "to": "refund", "when": [{"slot": "a", "matches": "é` + strings.Repeat("b", MaxPattern) + `"}]}]}`,
			`policy: transitions[0].when[0].matches: invalid RE2 pattern "é` + strings.Repeat("b", 62) + `"...: 4098 bytes, at most 4096`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ReadPolicy(strings.NewReader(tt.policy))
			if err == nil {
				err = p.Check(m)
			}
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant  %s", err, tt.want)
			}
		})
	}
}

// FuzzPolicy feeds ReadPolicy and Check arbitrary policies against the
// slots fixture: no panic, and a policy that passes makes a guard that
// answers a step with slots.
func FuzzPolicy(f *testing.F) {
	for _, s := range []string{slotsPolicy, `{}`, `{"generalized":"deny"}`, `{"states":{"a b":{}}}`,
		`{"slots":[{"name":"x","pattern":"(?i)^a+$"}],"transitions":[{"from":"greet","to":"collecting_info","when":[{"slot":"x","equals":1.5}]}]}`,
		`{"transitions":[{"from":"confirming","to":"refund","when":[{"field":"next","present":false}]}]}`} {
		f.Add(s)
	}
	m := loadSlotsFixture(f)
	f.Fuzz(func(t *testing.T, js string) {
		p, err := ReadPolicy(strings.NewReader(js))
		if err != nil {
			return
		}
		g, err := New(m, p, Options{})
		if err != nil {
			return
		}
		var slots []Slot
		for name := range p.Slots {
			slots = append(slots, Slot{Name: p.Slots[name].Name, Value: "AB12345678"})
		}
		for _, step := range [][2]string{{"", "greet"}, {"ok", "collecting_info"}, {"ok", "confirming"}, {"confirmed", "refund"}} {
			if _, err := g.StepSlots("s", step[0], step[1], slots); err != nil {
				var se *SlotError
				if !errors.As(err, &se) {
					t.Fatalf("StepSlots: %v", err)
				}
			}
		}
	})
}

// TestGuardGeneralizedDenyAllocs: with "generalized": "deny" a step
// allocates no more than without it: the moves a decision offers are
// filtered once, when the policy is compiled, not at every step.
func TestGuardGeneralizedDenyAllocs(t *testing.T) {
	m := loadSlotsFixture(t)
	ids := make([]string, 200)
	for i := range ids {
		ids[i] = fmt.Sprint("s", i)
	}
	allocs := func(policy string) float64 {
		g, err := New(m, guardPolicy(t, policy), Options{})
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		return testing.AllocsPerRun(100, func() {
			// collecting_info offers a generalised move, to refund
			g.Step(ids[i], "", "greet")
			if d := g.Step(ids[i], "ok", "collecting_info"); !d.Allowed || len(d.NextMoves) == 0 {
				t.Fatalf("step into collecting_info: %+v", d)
			}
			i++
		})
	}
	if allow, deny := allocs(`{}`), allocs(`{"generalized": "deny"}`); deny > allow {
		t.Errorf("two steps allocate %v times with generalized deny, %v without", deny, allow)
	}
}
