package guard

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/automaton/internal/modeltest"
)

func guardPolicy(t testing.TB, js string) *Policy {
	t.Helper()
	p, err := ReadPolicy(strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// clock is a settable clock for TTL tests.
type guardClock struct {
	mu  sync.Mutex
	now time.Time
}

func newGuardClock() *guardClock {
	return &guardClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *guardClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *guardClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type guardStep struct {
	event, next string
	allowed     bool
	reason      string
	state       string
}

func TestGuardStep(t *testing.T) {
	// toCap takes the order loop's back edge as often as its max_iterations
	// allows, and once more.
	toCap := []guardStep{
		{"", "agent_msg", true, "", "greet"},
		{"agent", "find_user_id_by_email", true, "", "find"},
		{"ok", "get_order_details", true, "", "order"},
		{"ok", "get_order_details", true, "", "order"},
		{"ok", "get_order_details", true, "", "order"},
		{"ok", "get_order_details", true, "", "order"},
		{"ok", "get_order_details", false, ReasonLoopCap, "order"},
	}
	happy := []guardStep{
		{"", "agent_msg", true, "", "greet"},
		{"agent", "find_user_id_by_email", true, "", "find"},
		{"ok", "get_order_details", true, "", "order"},
		{"ok", "return_delivered_order_items", true, "", "return"},
		{"ok", "agent_msg", true, "", "confirm"},
		{"agent", "__end__", true, "", "__end__"},
		{"agent", "agent_msg", false, ReasonIllegal, "__end__"},
	}
	tests := []struct {
		name   string
		policy string
		steps  []guardStep
	}{
		{name: "happy path", steps: happy},
		{name: "first step needs an empty event", steps: []guardStep{
			{"agent", "agent_msg", false, ReasonIllegal, "__start__"},
			{"", "agent_msg", true, "", "greet"},
		}},
		{name: "unknown state", steps: []guardStep{
			{"", "no_such_tool", false, ReasonUnknownState, "__start__"},
		}},
		{name: "illegal transition", steps: []guardStep{
			{"", "agent_msg", true, "", "greet"},
			{"agent", "get_order_details", false, ReasonIllegal, "greet"},
			{"ok", "find_user_id_by_email", false, ReasonIllegal, "greet"},
		}},
		{name: "next by state id", steps: []guardStep{
			{"", "greet", true, "", "greet"},
			{"agent", "find", true, "", "find"},
			{"error", "human", true, "", "human"},
		}},
		{name: "state id of the wrong state for the label", steps: []guardStep{
			{"", "confirm", false, ReasonIllegal, "__start__"},
		}},
		{name: "default loop cap is the observed max_iterations", steps: append(toCap[:len(toCap):len(toCap)],
			// the stay in the loop goes on through return, and the cap
			// counts the loop's back edges together, as check does: the
			// other back edge is denied too
			guardStep{"ok", "return_delivered_order_items", true, "", "return"},
			guardStep{"error", "get_order_details", false, ReasonLoopCap, "return"},
		)},
		{name: "a new stay in the loop counts afresh", steps: append(toCap[:len(toCap):len(toCap)],
			// leaving the loop and coming back starts a new stay
			guardStep{"error", "transfer_to_human_agents", true, "", "human"},
			guardStep{"retry", "find_user_id_by_email", true, "", "find"},
			guardStep{"ok", "get_order_details", true, "", "order"},
			guardStep{"ok", "get_order_details", true, "", "order"},
		)},
		{name: "explicit cap by label", policy: `{"loop_caps":[{"from":"get_order_details","event":"ok","to":"get_order_details","max":1}]}`, steps: []guardStep{
			{"", "agent_msg", true, "", "greet"},
			{"agent", "find_user_id_by_email", true, "", "find"},
			{"ok", "get_order_details", true, "", "order"},
			{"ok", "get_order_details", true, "", "order"},
			{"ok", "get_order_details", false, ReasonLoopCap, "order"},
			{"ok", "return_delivered_order_items", true, "", "return"},
		}},
		{name: "cap on the other back edge", policy: `{"loop_caps":[{"from":"return","event":"error","to":"order","max":1}]}`, steps: []guardStep{
			{"", "agent_msg", true, "", "greet"},
			{"agent", "find_user_id_by_email", true, "", "find"},
			{"ok", "get_order_details", true, "", "order"},
			{"ok", "return_delivered_order_items", true, "", "return"},
			{"error", "get_order_details", true, "", "order"},
			{"ok", "return_delivered_order_items", true, "", "return"},
			{"error", "get_order_details", false, ReasonLoopCap, "return"},
		}},
		{name: "rare allowed by default", steps: []guardStep{
			{"", "agent_msg", true, "", "greet"},
			{"agent", "find_user_id_by_email", true, "", "find"},
			{"error", "transfer_to_human_agents", true, "", "human"},
		}},
		{name: "rare is deviation", policy: `{"rare_is_deviation":true}`, steps: []guardStep{
			{"", "agent_msg", true, "", "greet"},
			{"agent", "find_user_id_by_email", true, "", "find"},
			{"error", "transfer_to_human_agents", false, ReasonRare, "find"},
		}},
		{name: "watchdog falls back", policy: `{"watchdog":{"max_turns":2,"fallback":{"event":"escalate","to":"transfer_to_human_agents"}}}`, steps: []guardStep{
			{"", "agent_msg", true, "", "greet"},
			{"agent", "find_user_id_by_email", true, "", "find"},
			{"ok", "get_order_details", true, "", "order"},
			{"ok", "get_order_details", true, "", "order"},
			{"ok", "get_order_details", false, ReasonWatchdog, "human"},
			{"ok", "__end__", true, "", "__end__"},
		}},
		{name: "watchdog counts denied steps", policy: `{"watchdog":{"max_turns":3,"fallback":{"event":"escalate","to":"human"}}}`, steps: []guardStep{
			{"", "agent_msg", true, "", "greet"},
			{"agent", "get_order_details", false, ReasonIllegal, "greet"},
			{"agent", "no_such_tool", false, ReasonUnknownState, "greet"},
			{"agent", "get_order_details", false, ReasonWatchdog, "human"},
		}},
		{name: "watchdog without fallback denies", policy: `{"watchdog":{"max_turns":1}}`, steps: []guardStep{
			{"", "agent_msg", true, "", "greet"},
			{"agent", "get_order_details", false, ReasonWatchdog, "greet"},
			{"agent", "find_user_id_by_email", true, "", "find"},
		}},
		{name: "watchdog before the cap", policy: `{"loop_caps":[{"from":"order","event":"ok","to":"order","max":1}],"watchdog":{"max_turns":3,"fallback":{"event":"escalate","to":"human"}}}`, steps: []guardStep{
			{"", "agent_msg", true, "", "greet"},
			{"agent", "find_user_id_by_email", true, "", "find"},
			{"ok", "get_order_details", true, "", "order"},
			{"ok", "get_order_details", true, "", "order"},
			{"ok", "get_order_details", false, ReasonLoopCap, "order"},
			{"ok", "get_order_details", false, ReasonWatchdog, "human"},
		}},
		{name: "monitor", policy: `{"mode":"monitor","loop_caps":[{"from":"order","event":"ok","to":"order","max":1}],"watchdog":{"max_turns":3,"fallback":{"event":"escalate","to":"human"}}}`, steps: []guardStep{
			{"", "no_such_tool", true, ReasonUnknownState, "__start__"},
			{"", "agent_msg", true, "", "greet"},
			// an illegal step moves the session to the state it names
			{"agent", "get_order_details", true, ReasonIllegal, "order"},
			{"ok", "get_order_details", true, "", "order"},
			{"ok", "get_order_details", true, ReasonLoopCap, "order"},
			{"ok", "get_order_details", true, ReasonWatchdog, "order"},
			{"ok", "return_delivered_order_items", true, "", "return"},
			// a label two states carry resolves to the most visited one
			{"bogus", "agent_msg", true, ReasonIllegal, "greet"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p *Policy
			if tt.policy != "" {
				p = guardPolicy(t, tt.policy)
			}
			g, err := New(modeltest.Returns(t), p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tt.steps {
				d := g.Step("s1", s.event, s.next)
				if d.Allowed != s.allowed || d.Reason != s.reason || d.State != s.state || d.Step != i {
					t.Fatalf("step %d (%q, %q) = {allowed %v, reason %q, state %q, step %d}, want {%v, %q, %q, %d}",
						i, s.event, s.next, d.Allowed, d.Reason, d.State, d.Step, s.allowed, s.reason, s.state, i)
				}
			}
		})
	}
}

func TestGuardDecisionDetails(t *testing.T) {
	p := guardPolicy(t, `{"watchdog":{"max_turns":2,"fallback":{"event":"escalate","to":"human"}}}`)
	g, err := New(modeltest.Returns(t), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g.Step("s", "", "agent_msg")
	g.Step("s", "agent", "find_user_id_by_email")
	d := g.Step("s", "error", "transfer_to_human_agents")
	if !d.Rare || d.Prob != 0.0909 || d.Label != "transfer_to_human_agents" || d.Session != "s" {
		t.Errorf("rare step = %+v, want rare, prob 0.0909, label transfer_to_human_agents", d)
	}
	if got, want := fmtMoves(d.NextMoves), "ok>__end__ retry>find"; got != want {
		t.Errorf("next moves from human = %s, want %s", got, want)
	}
	d = g.Step("s", "retry", "find_user_id_by_email")
	d = g.Step("s", "ok", "get_order_details")
	if got, want := fmtMoves(d.NextMoves), "ok>order ok>return error>human"; got != want {
		t.Errorf("next moves from order = %s, want %s", got, want)
	}
	// after two turns in order the self-loop is no longer offered
	d = g.Step("s", "ok", "get_order_details")
	if got, want := fmtMoves(d.NextMoves), "ok>return error>human"; got != want {
		t.Errorf("next moves at the watchdog's limit = %s, want %s", got, want)
	}
	d = g.Step("s", "ok", "get_order_details")
	if d.Fallback == nil || *d.Fallback != (Fallback{Event: "escalate", To: "human", Label: "transfer_to_human_agents"}) {
		t.Errorf("fallback = %+v, want escalate to human", d.Fallback)
	}
	if d.Prob == 0 {
		t.Errorf("watchdog decision lost the transition's prob")
	}
	d = g.Step("s", "nope", "nope")
	if d.Prob != 0 || d.Rare || d.Fallback != nil {
		t.Errorf("unknown step = %+v, want no prob, rare or fallback", d)
	}
}

func fmtMoves(ms []MoveOption) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, m.Event+">"+m.To)
	}
	return strings.Join(parts, " ")
}

func TestGuardCapsListed(t *testing.T) {
	p := guardPolicy(t, `{"loop_caps":[{"from":"order","event":"ok","to":"order","max":1},{"from":"order","event":"ok","to":"return","max":5}]}`)
	g, err := New(modeltest.Returns(t), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(g.LoopCaps())
	want := "[{order ok order 1} {order ok return 5} {return error order 3}]"
	if got != want {
		t.Errorf("LoopCaps() = %s, want %s", got, want)
	}
}

func TestPolicyErrors(t *testing.T) {
	tests := []struct {
		name, policy, want string
	}{
		{"bad mode", `{"mode":"strict"}`, `policy: mode is "strict", want "enforce" or "monitor"`},
		{"unknown field", `{"mode":"enforce","loop_cap":[]}`, `policy: unknown key "loop_cap"`},
		{"unknown field in a cap", `{"loop_caps":[{"from":"order","event":"ok","to":"order","max":1},{"from":"order","event":"ok","to":"order","mx":1}]}`, `policy: loop_caps[1]: unknown key "mx"`},
		{"two values", `{} {}`, `more than one JSON value`},
		{"not json", `mode: enforce`, `policy: line 1, column 1: invalid character 'm' looking for beginning of value`},
		{"trailing comma", "{\n  \"mode\": \"enforce\",\n}", `policy: line 3, column 1: invalid character '}' looking for beginning of object key string`},
		{"cap without max", `{"loop_caps":[{"from":"order","event":"ok","to":"order"}]}`, `policy: loop_caps[0] (order -[ok]-> order): max is 0, want at least 1`},
		{"cap without to", `{"loop_caps":[{"from":"order","event":"ok","max":1}]}`, `policy: loop_caps[0]: from and to are required`},
		{"unknown state in cap", `{"loop_caps":[{"from":"order","event":"ok","to":"order","max":1},{"from":"nope","event":"ok","to":"order","max":1}]}`, `policy: loop_caps[1] (nope -[ok]-> order): state "nope" is not in the model`},
		{"no such transition", `{"loop_caps":[{"from":"order","event":"retry","to":"order","max":1}]}`, `policy: loop_caps[0] (order -[retry]-> order): no such transition in the model`},
		{"not in a loop", `{"loop_caps":[{"from":"find","event":"ok","to":"order","max":1}]}`, `policy: loop_caps[0] (find -[ok]-> order): the transition is not inside a loop of the model`},
		{"above the loop", `{"loop_caps":[{"from":"return","event":"error","to":"order","max":4}]}`, `policy: loop_caps[0] (return -[error]-> order): max 4 is above the loop's max_iterations 3, which caps its back edges together; a policy can only lower it`},
		{"duplicate cap", `{"loop_caps":[{"from":"order","event":"ok","to":"order","max":1},{"from":"get_order_details","event":"ok","to":"order","max":2}]}`, `policy: loop_caps[1] (get_order_details -[ok]-> order): the transition is capped by loop_caps[0] too`},
		{"ambiguous label", `{"watchdog":{"max_turns":3,"fallback":{"to":"agent_msg"}}}`, `policy: watchdog: fallback: label "agent_msg" is carried by 2 states (confirm, greet): name one by id`},
		{"unknown fallback", `{"watchdog":{"max_turns":3,"fallback":{"event":"x","to":"manager"}}}`, `policy: watchdog: fallback: state "manager" is not in the model`},
		{"fallback to start", `{"watchdog":{"max_turns":3,"fallback":{"to":"__start__"}}}`, `policy: watchdog: fallback: cannot go to __start__`},
		{"no max_turns", `{"watchdog":{"fallback":{"to":"human"}}}`, `policy: watchdog: max_turns is 0, want at least 1`},
		{"fallback without to", `{"watchdog":{"max_turns":2,"fallback":{"event":"x"}}}`, `policy: watchdog: fallback.to is required`},
		// the decoder took the last of two values, and keys in any case
		{"mode twice", `{"mode":"monitor","mode":"enforce"}`, `policy: the key "mode" is given twice`},
		{"max_turns twice", `{"watchdog":{"max_turns":9,"max_turns":2}}`, `policy: the key "max_turns" is given twice in watchdog`},
		{"key in other case", `{"WatchDog":{"max_turns":2}}`, `policy: key "WatchDog" is in other case: want "watchdog"`},
		{"nested key in other case", `{"watchdog":{"MAX_TURNS":2}}`, `policy: watchdog: key "MAX_TURNS" is in other case: want "max_turns"`},
		{"condition key in other case", `{"transitions":[{"from":"order","to":"order","when":[{"Slot":"x","present":true}]}]}`, `policy: transitions[0].when[0]: key "Slot" is in other case: want "slot"`},
		{"state key in other case", `{"states":{"order":{"Instructions":"x"}}}`, `policy: states.order: key "Instructions" is in other case: want "instructions"`},
		// the label was ignored, whatever it said
		{"fallback label", `{"watchdog":{"max_turns":2,"fallback":{"to":"human","label":"greet"}}}`, `policy: watchdog: fallback: label is not read from a policy`},
	}
	m := modeltest.Returns(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ReadPolicy(strings.NewReader(tt.policy))
			if err == nil {
				_, err = New(m, p, Options{})
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestPolicyFixture(t *testing.T) {
	p, err := LoadPolicy("testdata/returns.policy.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(modeltest.Returns(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPolicy("testdata/missing.json"); err == nil {
		t.Error("LoadPolicy of a missing file succeeded")
	}
}

func TestGuardTTL(t *testing.T) {
	clk := newGuardClock()
	g, err := New(modeltest.Returns(t), nil, Options{TTL: time.Minute, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	g.Step("a", "", "agent_msg")
	g.Step("b", "", "agent_msg")
	clk.Add(59 * time.Second)
	if d := g.Step("a", "agent", "find_user_id_by_email"); !d.Allowed || d.Step != 1 {
		t.Fatalf("step before the TTL = %+v, want allowed step 1", d)
	}
	clk.Add(time.Second)
	// b has been idle a full minute: it is gone, a is not
	if _, ok := g.Session("b"); ok {
		t.Error("session b outlived its TTL")
	}
	info, ok := g.Session("a")
	if !ok || info.State != "find" || info.Steps != 2 || len(info.History) != 2 {
		t.Fatalf("session a = %+v, %v, want live in find after 2 steps", info, ok)
	}
	clk.Add(time.Minute)
	if n := g.Sweep(); n != 1 {
		t.Errorf("Sweep() = %d, want 1", n)
	}
	if g.Len() != 0 {
		t.Errorf("Len() = %d after the sweep, want 0", g.Len())
	}
	// an expired session starts afresh
	if d := g.Step("a", "ok", "get_order_details"); d.Allowed || d.Step != 0 || d.State != automaton.StartID {
		t.Errorf("step of an expired session = %+v, want a denied first step", d)
	}
	if st := g.Stats(); st.Expired != 2 || st.Created != 3 || st.Live != 1 {
		t.Errorf("Stats() = %+v, want 2 expired, 3 created, 1 live", st)
	}
}

func TestGuardCapacity(t *testing.T) {
	t.Run("least recently used goes", func(t *testing.T) {
		g, err := New(modeltest.Returns(t), nil, Options{MaxSessions: 2, Shards: 1})
		if err != nil {
			t.Fatal(err)
		}
		g.Step("a", "", "agent_msg")
		g.Step("b", "", "agent_msg")
		g.Step("a", "agent", "find_user_id_by_email")
		g.Step("c", "", "agent_msg")
		for id, want := range map[string]bool{"a": true, "b": false, "c": true} {
			if _, ok := g.Session(id); ok != want {
				t.Errorf("session %s live = %v, want %v", id, ok, want)
			}
		}
		if st := g.Stats(); st.Evicted != 1 || st.Live != 2 {
			t.Errorf("Stats() = %+v, want 1 evicted, 2 live", st)
		}
	})
	t.Run("bound holds over shards", func(t *testing.T) {
		g, err := New(modeltest.Returns(t), nil, Options{MaxSessions: 10, Shards: 4})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 100; i++ {
			g.Step(fmt.Sprintf("s%d", i), "", "agent_msg")
			if g.Len() > 10 {
				t.Fatalf("Len() = %d after %d sessions, want at most 10", g.Len(), i+1)
			}
		}
		if st := g.Stats(); st.Created != 100 || st.Evicted+int64(st.Live) != 100 {
			t.Errorf("Stats() = %+v, want 100 created = evicted + live", st)
		}
	})
}

func TestGuardHistory(t *testing.T) {
	g, err := New(modeltest.Returns(t), nil, Options{History: 3})
	if err != nil {
		t.Fatal(err)
	}
	g.Step("s", "", "agent_msg")
	g.Step("s", "agent", "find_user_id_by_email")
	g.Step("s", "ok", "get_order_details")
	g.Step("s", "ok", "nope")
	g.Step("s", "ok", "get_order_details")
	info, _ := g.Session("s")
	var got []string
	for _, h := range info.History {
		got = append(got, fmt.Sprintf("%d:%s:%s:%v:%s", h.Step, h.Next, h.State, h.Allowed, h.Reason))
	}
	want := "2:get_order_details:order:true: 3:nope:order:false:unknown_state 4:get_order_details:order:true:"
	if strings.Join(got, " ") != want {
		t.Errorf("history = %s, want %s", strings.Join(got, " "), want)
	}
	if !g.End("s") || g.End("s") {
		t.Error("End should report true once, then false")
	}
	if _, ok := g.Session("s"); ok {
		t.Error("session s outlived End")
	}
}

// TestGuardHistoryCutsUnknownNames: a session's history keeps a next or an
// event the model lacks cut to 64 bytes and marked with its length, and the
// documented bound on a session's memory holds with such names: 0.4 KB
// plus 0.3 KB at most per kept decision. History kept them whole, and
// sixteen 1,000-byte names cost a session 34 KB.
func TestGuardHistoryCutsUnknownNames(t *testing.T) {
	g, err := New(modeltest.Returns(t), nil, Options{History: 16})
	if err != nil {
		t.Fatal(err)
	}
	long := func(i, j int) string { return fmt.Sprintf("%d-%d-x%s", i, j, strings.Repeat("é", 500)) }
	g.Step("s", long(0, 0), long(0, 1))
	info, _ := g.Session("s")
	h := info.History[0]
	for _, f := range []struct{ name, got, given string }{{"event", h.Event, long(0, 0)}, {"next", h.Next, long(0, 1)}} {
		want := f.given[:63] + "…(1005 bytes)" // cut at a rune
		if f.got != want {
			t.Errorf("history's %s = %q, want %q", f.name, f.got, want)
		}
	}
	g.Step("s", "", "agent_msg")
	if info, _ := g.Session("s"); info.History[1].Next != "agent_msg" {
		t.Errorf("history's next = %q, want agent_msg", info.History[1].Next)
	}

	if testing.Short() {
		return
	}
	const sessions = 2000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g, err = New(modeltest.Returns(t), nil, Options{History: 16})
	if err != nil {
		t.Fatal(err)
	}
	for i := range sessions {
		id := fmt.Sprintf("s%d", i)
		for j := range 16 {
			g.Step(id, long(i, j), long(i, j+16))
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perSession := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / sessions / 1024
	if bound := 0.4 + 16*0.3; perSession > bound {
		t.Errorf("a session with 16 decisions on unknown names costs %.1f KB, documented bound %.1f KB", perSession, bound)
	}
	runtime.KeepAlive(g)
}

// reshapedModel returns a copy of m changed by edit and re-validated.
func reshapedModel(t *testing.T, m *automaton.Model, edit func(*automaton.Model)) *automaton.Model {
	t.Helper()
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	c, err := automaton.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	edit(c)
	c.Sort()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGuardReload(t *testing.T) {
	m1 := modeltest.Returns(t)
	g, err := New(m1, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	walk := func(id string, steps ...[2]string) {
		for _, s := range steps {
			if d := g.Step(id, s[0], s[1]); !d.Allowed {
				t.Fatalf("%s: step %v denied: %s", id, s, d.Reason)
			}
		}
	}
	toOrder := [][2]string{{"", "agent_msg"}, {"agent", "find_user_id_by_email"}, {"ok", "get_order_details"}}
	walk("kept", toOrder...)
	walk("kept", [2]string{"ok", "get_order_details"}, [2]string{"ok", "get_order_details"}, [2]string{"ok", "get_order_details"})
	walk("moved", append(toOrder, [2]string{"ok", "return_delivered_order_items"})...)
	walk("gone", append(toOrder, [2]string{"error", "transfer_to_human_agents"})...)

	// version 2 renames state "return" (same label) and drops "human"
	m2 := reshapedModel(t, m1, func(m *automaton.Model) {
		m.Version = 2
		var states []automaton.State
		for _, s := range m.States {
			switch s.ID {
			case "human":
				continue
			case "return":
				s.ID = "ret"
			}
			states = append(states, s)
		}
		m.States = states
		var ts []automaton.Transition
		for _, tr := range m.Transitions {
			if tr.From == "human" || tr.To == "human" {
				continue
			}
			if tr.From == "return" {
				tr.From = "ret"
			}
			if tr.To == "return" {
				tr.To = "ret"
			}
			ts = append(ts, tr)
		}
		m.Transitions = ts
		m.Loops[0].States = []string{"order", "ret"}
		m.Loops[0].BackEdges[1].From = "ret"
		// The trunk and the variants name states of the model too.
		rename := func(ids []string) []string {
			var out []string
			for _, id := range ids {
				switch id {
				case "human":
				case "return":
					out = append(out, "ret")
				default:
					out = append(out, id)
				}
			}
			return out
		}
		m.Trunk = rename(m.Trunk)
		for i := range m.TopVariants {
			m.TopVariants[i].States = rename(m.TopVariants[i].States)
		}
	})

	// a policy that does not fit the new model is refused; nothing changes
	bad := guardPolicy(t, `{"watchdog":{"max_turns":2,"fallback":{"to":"human"}}}`)
	if _, err := g.Reload(m2, bad); err == nil || !strings.Contains(err.Error(), `state "human" is not in the model`) {
		t.Fatalf("Reload with a policy naming a removed state: err = %v", err)
	}
	if g.Model() != m1 {
		t.Fatal("a failed reload changed the model")
	}

	st, err := g.Reload(m2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ReloadStats{Kept: 1, Remapped: 1, Dropped: 1}); st != want {
		t.Errorf("Reload stats = %+v, want %+v", st, want)
	}
	if g.Model().Version != 2 || g.Len() != 2 {
		t.Errorf("after reload: version %d, %d sessions; want 2, 2", g.Model().Version, g.Len())
	}
	// the kept session's loop counts restarted: three more iterations pass
	walk("kept", [2]string{"ok", "get_order_details"}, [2]string{"ok", "get_order_details"}, [2]string{"ok", "get_order_details"})
	if d := g.Step("kept", "ok", "get_order_details"); d.Reason != ReasonLoopCap {
		t.Errorf("fourth iteration after reload: reason %q, want loop_cap", d.Reason)
	}
	if d := g.Step("moved", "ok", "agent_msg"); !d.Allowed || d.State != "confirm" || d.Step != 4 {
		t.Errorf("remapped session step = %+v, want allowed into confirm at step 4", d)
	}
	if d := g.Step("gone", "ok", "__end__"); d.Allowed || d.Step != 0 {
		t.Errorf("dropped session step = %+v, want a fresh session's denied step 0", d)
	}
}

// TestGuardConcurrent drives many sessions from many goroutines while the
// model is reloaded and idle sessions are swept; run it with -race.
func TestGuardConcurrent(t *testing.T) {
	m1 := modeltest.Returns(t)
	m2 := reshapedModel(t, m1, func(m *automaton.Model) { m.Version = 2 })
	clk := newGuardClock()
	// OnDecision must see each session's decisions in step order
	var (
		obsMu    sync.Mutex
		lastStep = map[string]int{}
		outOfOrd []string
	)
	observe := func(d Decision, event, next string, _ []Slot) {
		obsMu.Lock()
		defer obsMu.Unlock()
		last, ok := lastStep[d.Session]
		if !ok {
			last = -1
		}
		if d.Step != last+1 {
			outOfOrd = append(outOfOrd, fmt.Sprintf("%s: step %d after %d", d.Session, d.Step, last))
		}
		lastStep[d.Session] = d.Step
	}
	g, err := New(m1, guardPolicy(t, `{"watchdog":{"max_turns":10,"fallback":{"to":"human"}}}`), Options{TTL: time.Hour, Now: clk.Now, MaxSessions: 100000, OnDecision: observe})
	if err != nil {
		t.Fatal(err)
	}
	path := [][2]string{
		{"", "agent_msg"}, {"agent", "find_user_id_by_email"}, {"ok", "get_order_details"},
		{"ok", "get_order_details"}, {"ok", "return_delivered_order_items"}, {"ok", "agent_msg"}, {"agent", "__end__"},
	}
	const workers, sessions = 8, 50
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for s := 0; s < sessions; s++ {
				id := fmt.Sprintf("w%d-s%d", w, s)
				for i, st := range path {
					d := g.Step(id, st[0], st[1])
					if !d.Allowed || d.Step != i {
						errs <- fmt.Sprintf("%s step %d: %+v", id, i, d)
						return
					}
					g.Step("shared", "x", "y") // contend on one session too
				}
				if _, ok := g.Session(id); !ok {
					errs <- id + " vanished"
					return
				}
			}
		}(w)
	}
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			m := m1
			if i%2 == 0 {
				m = m2
			}
			if _, err := g.Reload(m, nil); err != nil {
				errs <- err.Error()
				return
			}
			g.Sweep()
			g.Stats()
		}
	}()
	wg.Wait()
	close(stop)
	bg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	info, ok := g.Session("shared")
	if !ok || info.Steps != workers*sessions*len(path) {
		t.Errorf("shared session: %d steps, want %d", info.Steps, workers*sessions*len(path))
	}
	if g.Len() != workers*sessions+1 {
		t.Errorf("Len() = %d, want %d", g.Len(), workers*sessions+1)
	}
	if len(outOfOrd) > 0 {
		t.Errorf("OnDecision saw %d decisions out of order, first: %s", len(outOfOrd), outOfOrd[0])
	}
	if lastStep["shared"] != workers*sessions*len(path)-1 {
		t.Errorf("OnDecision saw shared up to step %d, want %d", lastStep["shared"], workers*sessions*len(path)-1)
	}
}

func TestNewErrors(t *testing.T) {
	m := modeltest.Returns(t)
	if _, err := New(nil, nil, Options{}); err == nil {
		t.Error("New(nil) succeeded")
	}
	// Validate refuses the model too (every reader of a model does), so
	// edit a copy without it.
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	bad, err := automaton.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	bad.Loops[0].BackEdges = append(bad.Loops[0].BackEdges, automaton.EdgeRef{From: "find", Event: "ok", To: "order"})
	if _, err := New(bad, nil, Options{}); err == nil || !strings.Contains(err.Error(), "back edge find -[ok]-> order leaves the loop") {
		t.Errorf("New with a back edge outside its loop: err = %v", err)
	}
}

// unusualEdges are a -> b -> c -> end with a rare move beside each, and
// last a loop back from c to a.
var unusualEdges = []edge{
	{automaton.StartID, "", "a", 10, false},
	{"a", "ok", "b", 9, false},
	{"a", "odd", "b", 1, true},
	{"b", "ok", "c", 9, false},
	{"b", "odd", "c", 1, true},
	{"c", "ok", automaton.EndID, 9, false},
	{"c", "odd", automaton.EndID, 1, true},
	{"c", "ok", "a", 5, false},
}

// TestGuardMaxUnusual: with max_unusual a session may take that many steps
// along rare or generalised transitions; the next is denied (unusual_cap)
// and no longer offered among the next moves, while the common moves still
// pass. In monitor mode the step passes, flagged.
func TestGuardMaxUnusual(t *testing.T) {
	m := buildModel(t, 1, unusualEdges[:7])
	for _, tt := range []struct {
		policy string
		denied int // the step denied, -1 for none
		allow  bool
	}{
		{`{}`, -1, true},
		{`{"max_unusual": 3}`, -1, true},
		{`{"max_unusual": 2}`, 3, false},
		{`{"max_unusual": 1}`, 2, false},
		{`{"max_unusual": 1, "mode": "monitor"}`, 2, true},
	} {
		g, err := New(m, guardPolicy(t, tt.policy), Options{})
		if err != nil {
			t.Fatal(err)
		}
		steps := [][2]string{{"", "a"}, {"odd", "b"}, {"odd", "c"}, {"odd", automaton.EndID}}
		for i, st := range steps {
			d := g.Step("s", st[0], st[1])
			// Monitor mode lets the step pass, so every later unusual
			// step is over the cap too.
			over := tt.denied >= 0 && i >= tt.denied
			if !over {
				if d.Reason != ReasonNone || !d.Allowed {
					t.Errorf("%s: step %d = %+v; want allowed", tt.policy, i, d)
				}
				continue
			}
			if d.Reason != ReasonUnusualCap || d.Allowed != tt.allow {
				t.Errorf("%s: step %d = %+v; want reason %s, allowed %v", tt.policy, i, d, ReasonUnusualCap, tt.allow)
			}
			if !tt.allow {
				// Denied: the session stays, offered the common move
				// only, which passes.
				if got, want := fmtMoves(d.NextMoves), "ok>"+st[1]; d.State == st[1] || got != want {
					t.Errorf("%s: after the denied step in %s, next moves %s; want %s", tt.policy, d.State, got, want)
				}
				break
			}
		}
	}
	// A rare step denied for another reason (here a rule's condition) is
	// not taken and uses none of the budget: the next rare step passes.
	g, err := New(m, guardPolicy(t, `{"max_unusual": 1, "slots": [{"name": "x"}], "transitions": [{"from": "a", "event": "odd", "to": "b", "when": [{"slot": "x", "present": true}]}]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g.Step("r", "", "a")
	if d := g.Step("r", "odd", "b"); d.Allowed || d.Reason != ReasonCondition {
		t.Errorf("the rare step the rule denies = %+v; want %s", d, ReasonCondition)
	}
	g.Step("r", "ok", "b")
	if d := g.Step("r", "odd", "c"); !d.Allowed || d.Reason != ReasonNone {
		t.Errorf("the first rare step taken = %+v; want allowed", d)
	}
	if d := g.Step("r", "odd", automaton.EndID); d.Allowed || d.Reason != ReasonUnusualCap {
		t.Errorf("the second rare step taken = %+v; want %s", d, ReasonUnusualCap)
	}
	// At the cap the next moves are the state's common ones, computed once:
	// a denied step allocates nothing, as without a cap.
	g, err = New(m, guardPolicy(t, `{"max_unusual": 1}`), Options{History: -1})
	if err != nil {
		t.Fatal(err)
	}
	g.Step("a", "", "a")
	g.Step("a", "odd", "b")
	n := testing.AllocsPerRun(100, func() {
		if d := g.Step("a", "odd", "c"); d.Allowed || len(d.NextMoves) != 1 {
			t.Fatalf("the step over the cap: %+v", d)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations a step denied at the cap, want 0", n)
	}
	if _, err := New(m, &Policy{MaxUnusual: -1}, Options{}); err == nil || !strings.Contains(err.Error(), "max_unusual is -1") {
		t.Errorf("max_unusual -1: %v, want an error naming it", err)
	}
}

// TestGuardMaxUnusualRun: with max_unusual_run N a session may take N rare or
// generalised steps in a row; the next is denied (reason unusual_run) and
// the state offers only its common moves, until a common step is taken.
// Over every short walk of a model, the guard denies the step check
// --max-unusual-run (conform) first calls a deviation, with and without
// max_unusual beside it.
func TestGuardMaxUnusualRun(t *testing.T) {
	m := buildModel(t, 1, unusualEdges)
	g, err := New(m, guardPolicy(t, `{"max_unusual_run": 1}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range []struct {
		event, to, reason, next string
	}{
		{"", "a", ReasonNone, "ok>b odd>b"},
		{"odd", "b", ReasonNone, "ok>c"},
		{"odd", "c", ReasonUnusualRun, "ok>c"},
		{"ok", "c", ReasonNone, "ok>__end__ ok>a odd>__end__"},
		{"odd", automaton.EndID, ReasonNone, ""},
	} {
		d := g.Step("s", tt.event, tt.to)
		if d.Reason != tt.reason || d.Allowed != (tt.reason == ReasonNone) || fmtMoves(d.NextMoves) != tt.next {
			t.Errorf("step %d (%s>%s) = %+v, next %s; want reason %q, next %s", i, tt.event, tt.to, d, fmtMoves(d.NextMoves), tt.reason, tt.next)
		}
	}
	// The watchdog's fallback puts the session in a known place: the run
	// starts again there.
	g, err = New(m, guardPolicy(t, `{"max_unusual_run": 1, "watchdog": {"max_turns": 2, "fallback": {"event": "x", "to": "b"}}}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range []struct{ event, to, reason string }{
		{"", "a", ReasonNone}, {"odd", "b", ReasonNone}, {"odd", "c", ReasonUnusualRun},
		{"odd", "c", ReasonWatchdog}, {"odd", "c", ReasonNone},
	} {
		if d := g.Step("w", tt.event, tt.to); d.Reason != tt.reason {
			t.Errorf("watchdog: step %d (%s>%s) = %+v; want reason %q", i, tt.event, tt.to, d, tt.reason)
		}
	}
	if _, err := New(m, &Policy{MaxUnusualRun: -1}, Options{}); err == nil || !strings.Contains(err.Error(), "max_unusual_run is -1") {
		t.Errorf("max_unusual_run -1: %v, want an error naming it", err)
	}

	var moves []automaton.Move
	for _, tr := range m.Transitions {
		if tr.From != automaton.StartID {
			moves = append(moves, automaton.Move{Event: tr.Event, Label: tr.To})
		}
	}
	for _, caps := range [][2]int{{0, 1}, {0, 2}, {2, 1}, {3, 2}, {1, 0}} {
		if walks := agreeWithCheck(t, m, &Policy{MaxUnusual: caps[0], MaxUnusualRun: caps[1]}, conform.Options{MaxUnusual: caps[0], MaxUnusualRun: caps[1]},
			moves, 6, ReasonUnusualRun, conform.StepUnusualRun); walks < 1000 {
			t.Fatalf("caps %v: %d walks", caps, walks)
		}
	}

	// In monitor mode every step passes and the guard follows the session
	// as replay does, moves the model lacks included.
	moves = append(moves, automaton.Move{Event: "weird", Label: "a"}, automaton.Move{Event: "weird", Label: "b"})
	for _, run := range []int{1, 2} {
		agreeInMonitor(t, m, &Policy{Mode: ModeMonitor, MaxUnusualRun: run}, conform.Options{MaxUnusualRun: run}, moves, 5)
	}
}

// capReasons are the deviations of a cap, named alike by the guard's
// reasons and check's verdicts.
var capReasons = []string{ReasonLoopCap, ReasonRepeatCap, ReasonUnusualCap, ReasonUnusualRun}

// agreeInMonitor walks every sequence of moves out of the model's start
// (its first step to "a"), up to depth steps, never ending, through a new
// guard in monitor mode under p and through replay under opt, and fails
// where a step is over a cap in one and not the other (steps replay cannot
// judge, lost after an unknown label, aside).
func agreeInMonitor(t *testing.T, m *automaton.Model, p *Policy, opt conform.Options, moves []automaton.Move, depth int) {
	t.Helper()
	c := conform.New(m, opt)
	var walk func(mvs []automaton.Move)
	walk = func(mvs []automaton.Move) {
		steps := c.Replay(mvs)
		g, err := New(m, p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, mv := range mvs {
			d := g.Step("s", mv.Event, mv.Label)
			v := steps[i].Verdict
			if v != conform.StepLost && d.Reason != v && (slices.Contains(capReasons, d.Reason) || slices.Contains(capReasons, v)) {
				t.Fatalf("monitor %+v, walk %v: step %d is %q in the guard, %s in replay", opt, mvs, i, d.Reason, v)
			}
		}
		if len(mvs) == depth {
			return
		}
		for _, mv := range moves {
			if mv.Label != automaton.EndID {
				walk(append(mvs[:len(mvs):len(mvs)], mv))
			}
		}
	}
	walk([]automaton.Move{{Label: "a"}})
}

// TestGuardRepeatCap: the guard enforces each state's max_run, the most
// visits of its label in a row, as check does (repeat_cap): over every walk
// of up to eight steps of a model whose label x has two states, one with a
// self-loop, the guard denies the step check first calls a deviation, and
// leaves the move out of next_moves at the cap.
func TestGuardRepeatCap(t *testing.T) {
	m := buildModelUnchecked(1, []edge{
		{automaton.StartID, "", "a", 10, false},
		{"a", "ok", "x1", 10, false},
		{"x1", "ok", "x2", 6, false},
		{"x1", "ok", "b", 4, false},
		{"x2", "ok", "x2", 5, false},
		{"x2", "ok", "b", 6, false},
		{"b", "ok", "a", 2, false},
		{"b", "ok", automaton.EndID, 10, false},
	})
	for i := range m.States {
		if s := &m.States[i]; s.ID == "x1" || s.ID == "x2" {
			s.Label, s.MaxRun = "x", 4
		}
	}
	m.Digest = m.ComputeDigest()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	g, err := New(m, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range []struct{ next, reason, moves string }{
		{"a", ReasonNone, "ok>x1"}, {"x", ReasonNone, "ok>x2 ok>b"}, {"x", ReasonNone, "ok>b ok>x2"},
		{"x", ReasonNone, "ok>b ok>x2"}, {"x", ReasonNone, "ok>b"}, {"x", ReasonRepeatCap, "ok>b"},
		{"b", ReasonNone, "ok>__end__ ok>a"},
	} {
		ev := "ok"
		if i == 0 {
			ev = ""
		}
		if d := g.Step("s", ev, tt.next); d.Reason != tt.reason || fmtMoves(d.NextMoves) != tt.moves {
			t.Errorf("step %d (%s>%s) = %+v, next %s; want reason %q, next %s", i, ev, tt.next, d, fmtMoves(d.NextMoves), tt.reason, tt.moves)
		}
	}

	var moves []automaton.Move
	for _, l := range []string{"a", "x", "b", automaton.EndID} {
		moves = append(moves, automaton.Move{Event: "ok", Label: l})
	}
	if walks := agreeWithCheck(t, m, nil, conform.Options{}, moves, 8, ReasonRepeatCap, conform.StepRepeatCap); walks < 1000 {
		t.Fatalf("%d walks", walks)
	}
	// In monitor mode, with steps the model lacks and a label it does not
	// know among them.
	moves = append(moves, automaton.Move{Event: "weird", Label: "x"}, automaton.Move{Event: "ok", Label: "zzz"})
	agreeInMonitor(t, m, &Policy{Mode: ModeMonitor}, conform.Options{}, moves, 7)
}

// firstDenial steps mvs through a new guard for m under p and returns the
// first step it denies and why, -1 for none; a walk check finds incomplete
// (at, verdict: check's first deviation) counts as denied there, since the
// guard does not judge a walk that has not ended.
func firstDenial(t *testing.T, m *automaton.Model, p *Policy, mvs []automaton.Move, at int, verdict string) (int, string) {
	t.Helper()
	g, err := New(m, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, mv := range mvs {
		if d := g.Step("s", mv.Event, mv.Label); !d.Allowed {
			return i, d.Reason
		}
	}
	if verdict == conform.StepIncomplete {
		return at, verdict
	}
	return -1, ""
}

// agreeWithCheck walks every sequence of moves out of the model's start (its
// first step to "a"), up to depth steps or the end, through a new guard
// under p and through check under opt, and fails where they deny different
// first steps, or where one names reason (verdict) and the other does not.
// It returns the number of walks.
func agreeWithCheck(t *testing.T, m *automaton.Model, p *Policy, opt conform.Options, moves []automaton.Move, depth int, reason, verdict string) int {
	t.Helper()
	c := conform.New(m, opt)
	walks := 0
	var walk func(mvs []automaton.Move)
	walk = func(mvs []automaton.Move) {
		if len(mvs) > 1 {
			walks++
			at, v := c.Miss(mvs)
			denied, why := firstDenial(t, m, p, mvs, at, v)
			if denied != at || at >= 0 && (why == reason) != (v == verdict) {
				t.Fatalf("%+v, walk %v: the guard denies step %d (%s), check deviates at %d (%s)", opt, mvs, denied, why, at, v)
			}
		}
		if len(mvs) == depth || len(mvs) > 0 && mvs[len(mvs)-1].Label == automaton.EndID {
			return
		}
		for _, mv := range moves {
			walk(append(mvs[:len(mvs):len(mvs)], mv))
		}
	}
	walk([]automaton.Move{{Label: "a"}})
	return walks
}

// TestGuardLoopInMonitor: in monitor mode a step the model lacks, and the
// step after an unknown label, start a new stay in the loop, as check
// starts one where it resynchronises, and the loop cap falls where replay
// puts it.
func TestGuardLoopInMonitor(t *testing.T) {
	m := modeltest.Retry(t)
	moves := modeltest.Moves("ok>b", "retry>b", "ok>c", "weird>b", "ok>zzz")
	agreeInMonitor(t, m, &Policy{Mode: ModeMonitor}, conform.Options{}, moves, 7)
}

// TestGuardLoopCountsGeneralisedBackEdges: a generalised transition the
// miner marks a back edge inside a loop counts toward the loop's
// max_iterations though the loop does not list it, as check counts it.
func TestGuardLoopCountsGeneralisedBackEdges(t *testing.T) {
	m := buildModelUnchecked(1, []edge{
		{automaton.StartID, "", "x", 10, false},
		{"x", "err", "x", 4, false},
		{"x", "ok", automaton.EndID, 10, false},
	})
	for i := range m.Transitions {
		if tr := &m.Transitions[i]; tr.From == "x" && tr.To == "x" {
			tr.BackEdge = true
		}
	}
	m.Transitions = append(m.Transitions, automaton.Transition{From: "x", Event: "ok", To: "x", BackEdge: true, Generalized: "event"})
	m.Loops = []automaton.Loop{{States: []string{"x"}, BackEdges: []automaton.EdgeRef{{From: "x", Event: "err", To: "x"}}, Count: 4, Sessions: 4, MaxIterations: 2, P95Iterations: 1}}
	m.Sort()
	m.Digest = m.ComputeDigest()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	moves := modeltest.Moves(">x", "ok>x", "err>x", "err>x", "ok>__end__")
	at, verdict := conform.New(m, conform.Options{}).Miss(moves)
	g, err := New(m, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, mv := range moves {
		d := g.Step("s", mv.Event, mv.Label)
		if want := i != 3; d.Allowed != want || !want && d.Reason != ReasonLoopCap {
			t.Errorf("step %d (%s>%s) = %+v; want allowed %v", i, mv.Event, mv.Label, d, want)
		}
		// With the loop's two back edges taken, neither is offered.
		if got := fmtMoves(d.NextMoves); (i == 2 || i == 3) && got != "ok>__end__" {
			t.Errorf("step %d: next moves %s, want ok>__end__", i, got)
		}
	}
	if at != 3 || verdict != conform.StepLoopCap {
		t.Errorf("check deviates at %d (%s), want 3 (%s)", at, verdict, conform.StepLoopCap)
	}
}

// TestGuardReloadRelabelled: a session kept in a state whose label a reload
// changed starts its run of that label afresh, so max_run counts the new
// label's visits only.
func TestGuardReloadRelabelled(t *testing.T) {
	model := func(label string) *automaton.Model {
		m := buildModelUnchecked(1, []edge{
			{automaton.StartID, "", "a", 10, false},
			{"a", "ok", "x1", 10, false},
			{"x1", "ok", "x1", 5, false},
			{"x1", "ok", automaton.EndID, 10, false},
		})
		for i := range m.States {
			if s := &m.States[i]; s.ID == "x1" {
				s.Label, s.MaxRun = label, 2
			}
		}
		m.Digest = m.ComputeDigest()
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	g, err := New(model("x"), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g.Step("s", "", "a")
	g.Step("s", "ok", "x")
	if d := g.Step("s", "ok", "x"); !d.Allowed {
		t.Fatalf("the second visit of x = %+v, want allowed", d)
	}
	if _, err := g.Reload(model("y"), nil); err != nil {
		t.Fatal(err)
	}
	if d := g.Step("s", "ok", "y"); !d.Allowed {
		t.Errorf("after the reload, the second visit of y = %+v, want allowed", d)
	}
	if d := g.Step("s", "ok", "y"); d.Allowed || d.Reason != ReasonRepeatCap {
		t.Errorf("the third visit of y = %+v, want %s", d, ReasonRepeatCap)
	}
}

// TestGuardUnmarkedBackEdge: a back edge a loop lists but the model does
// not mark as one (a hand edit) is counted by neither check nor the guard.
func TestGuardUnmarkedBackEdge(t *testing.T) {
	m := modeltest.Retry(t)
	for i := range m.Transitions {
		m.Transitions[i].BackEdge = false
	}
	m.Digest = m.ComputeDigest()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	moves := modeltest.Moves(">a", "ok>b", "retry>b", "retry>b", "retry>b", "ok>c", "ok>__end__")
	if at, v := conform.New(m, conform.Options{}).Miss(moves); at >= 0 {
		t.Fatalf("check deviates at %d (%s), want a fit", at, v)
	}
	g, err := New(m, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, mv := range moves {
		if d := g.Step("s", mv.Event, mv.Label); !d.Allowed {
			t.Errorf("step %d (%s>%s) = %+v, want allowed as check allows it", i, mv.Event, mv.Label, d)
		}
	}
}

// TestGuardRareAndGeneralised: a transition marked both rare and
// generalised (a hand edit) is judged alike by check and the guard: rare
// where rare moves are deviations, else generalised.
func TestGuardRareAndGeneralised(t *testing.T) {
	m := modeltest.Retry(t)
	for i := range m.Transitions {
		if tr := &m.Transitions[i]; tr.Event == "skip" {
			tr.Generalized = "event"
		}
	}
	m.Digest = m.ComputeDigest()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	moves := modeltest.Moves(">a", "skip>c", "ok>__end__")
	for _, tt := range []struct {
		policy string
		opt    conform.Options
		reason string
	}{
		{`{"rare_is_deviation": true}`, conform.Options{RareIsDeviation: true}, ReasonRare},
		{`{"generalized": "deny"}`, conform.Options{GeneralizedIsDeviation: true}, ReasonGeneralized},
		{`{}`, conform.Options{}, ""},
	} {
		at, verdict := conform.New(m, tt.opt).Miss(moves)
		g, err := New(m, guardPolicy(t, tt.policy), Options{})
		if err != nil {
			t.Fatal(err)
		}
		g.Step("s", "", "a")
		d := g.Step("s", "skip", "c")
		if d.Reason != tt.reason || (at == 1) != (tt.reason != "") {
			t.Errorf("%s: the guard says %q, check deviates at %d (%s); want %q at step 1", tt.policy, d.Reason, at, verdict, tt.reason)
		}
	}
}

// TestGuardFallbackVisits: the watchdog's fallback state counts as visited
// for the model's constraints: a step that needs it before passes after
// the fallback.
func TestGuardFallbackVisits(t *testing.T) {
	m := buildModel(t, 1, []edge{
		{automaton.StartID, "", "a", 10, false},
		{"a", "ok", "b", 6, false},
		{"a", "ok", "c", 4, false},
		{"b", "ok", "c", 6, false},
		{"c", "ok", automaton.EndID, 10, false},
	})
	m.Constraints = []automaton.Constraint{{Kind: automaton.ConstraintPrecedence, A: "b", B: "c", Support: 6, Confidence: 1}}
	m.Digest = m.ComputeDigest()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	g, err := New(m, guardPolicy(t, `{"watchdog": {"max_turns": 1, "fallback": {"event": "ok", "to": "b"}}}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g.Step("s", "", "a")
	if d := g.Step("s", "ok", "zzz"); d.Reason != ReasonWatchdog || d.State != "b" {
		t.Fatalf("the stuck step = %+v, want the watchdog's fallback to b", d)
	}
	if d := g.Step("s", "ok", "c"); !d.Allowed {
		t.Errorf("c after the fallback to b = %+v, want allowed", d)
	}
}
