package guard

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/internal/modeltest"
)

// byModel is a conditioned model over branch's shape: the shared map takes
// a or b after plan; the sub-map of value "A" knows only a, that of "B"
// only b.
func byModel(t testing.TB) *automaton.Model {
	t.Helper()
	m := branch(t, 3, 3)
	m.By = &automaton.By{Field: "attrs.task", MinSessions: 2, Values: 3, Shared: 1, Maps: []automaton.SubMap{
		automaton.NewSubMap("A", only(t, "a")),
		automaton.NewSubMap("B", only(t, "b")),
	}}
	m.Digest = m.ComputeDigest()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

// only is branch with every session through x.
func only(t testing.TB, x string) *automaton.Model {
	return buildModel(t, 1, []edge{
		{automaton.StartID, "", "plan", 3, false},
		{"plan", "ok", x, 3, false},
		{x, "done", automaton.EndID, 3, false},
	})
}

func TestGuardBy(t *testing.T) {
	m := byModel(t)
	g, err := New(m, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		session, value string
		allowed        bool
		mapName        string
	}{
		{"s1", "A", false, "by:A"},
		{"s2", "B", true, "by:B"},
		{"s3", "unseen", true, automaton.SharedMap},
		{"s4", "", true, automaton.SharedMap},
		{"s5", "A\x00", true, automaton.SharedMap},
	}
	for _, tt := range tests {
		for i, st := range [][2]string{{"", "plan"}, {"ok", "b"}} {
			value := tt.value
			if i > 0 {
				value = "B" // a later step's value is not read
			}
			d, err := g.StepBy(tt.session, value, st[0], st[1], nil)
			if err != nil {
				t.Fatal(err)
			}
			if d.Map != tt.mapName {
				t.Errorf("%s step %d: map %q, want %q", tt.session, i, d.Map, tt.mapName)
			}
			want := i == 0 || tt.allowed
			if d.Allowed != want {
				t.Errorf("%s step %d: allowed %v (%s), want %v", tt.session, i, d.Allowed, d.Reason, want)
			}
		}
	}
	if info, _ := g.Session("s1"); info.Map != "by:A" {
		t.Errorf("Session(s1).Map = %q, want by:A", info.Map)
	}
	// A reload that keeps the value's sub-map keeps the session on it.
	g.StepBy("s6", "A", "", "plan", nil)
	if _, err := g.Reload(byModel(t), nil); err != nil {
		t.Fatal(err)
	}
	if d := g.Step("s6", "ok", "b"); d.Allowed || d.Map != "by:A" {
		t.Errorf("after a reload with the sub-maps: allowed %v, map %q; want denied by by:A", d.Allowed, d.Map)
	}
	// A reload whose model lacks the value's sub-map judges the session
	// by the shared map.
	if _, err := g.Reload(branch(t, 3, 3), nil); err != nil {
		t.Fatal(err)
	}
	if d := g.Step("s1", "ok", "b"); !d.Allowed || d.Map != "" {
		t.Errorf("after a reload without sub-maps: allowed %v, map %q; want allowed by the unconditioned map", d.Allowed, d.Map)
	}
	plain, err := New(branch(t, 3, 3), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := plain.StepBy("s", "A", "", "plan", nil); d.Map != "" {
		t.Errorf("unconditioned model: map %q, want empty", d.Map)
	}
}

// TestGuardByAllocs holds a conditioned model's steps to an unconditioned
// one's allocations: none, once the session exists.
// TestGuardValidatesModelInUse: New and Reload validate the model they are
// given, which may be the one a guard is judging sessions by (a reload of
// the model in force with another policy, a second guard of one model):
// validating it must not rebuild its index or its sub-maps under the
// sessions' reads. Validate re-indexed every time, which the race detector
// (.ci/run runs the guard's tests under it) caught here.
func TestGuardValidatesModelInUse(t *testing.T) {
	m := byModel(t)
	g, err := New(m, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := range 300 {
				id := fmt.Sprintf("w%d-%d", w, i)
				if _, err := g.StepBy(id, []string{"A", "B", "C"}[i%3], "", "plan", nil); err != nil {
					t.Error(err)
					return
				}
				g.Step(id, "ok", "a")
				g.End(id)
			}
		})
	}
	wg.Go(func() {
		for i := range 30 {
			p := &Policy{Mode: []string{ModeMonitor, ModeEnforce}[i%2]}
			if _, err := g.Reload(g.Model(), p); err != nil {
				t.Error(err)
				return
			}
			if _, err := New(m, p, Options{}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
}

func TestGuardByAllocs(t *testing.T) {
	for _, tt := range []struct {
		name  string
		m     *automaton.Model
		value string
	}{{"plain", branch(t, 3, 3), ""}, {"by", byModel(t), "B"}} {
		g, err := New(tt.m, nil, Options{History: -1})
		if err != nil {
			t.Fatal(err)
		}
		g.StepBy("s", tt.value, "", "plan", nil)
		n := testing.AllocsPerRun(100, func() {
			g.StepBy("s", tt.value, "ok", "b", nil) // denied or taken, then the same again
		})
		if n != 0 {
			t.Errorf("%s: %v allocations a step, want 0", tt.name, n)
		}
	}
}

// benchByModel is the guard fixture conditioned on n values, each sub-map
// a copy of the fixture's own map.
func benchByModel(b *testing.B, n int) *automaton.Model {
	m := modeltest.Returns(b)
	m.By = &automaton.By{Field: "attrs.task", MinSessions: 1, Values: n}
	for i := 0; i < n; i++ {
		sm := automaton.NewSubMap(fmt.Sprintf("task-%04d", i), m)
		sm.Sessions = 1
		m.By.Maps = append(m.By.Maps, sm)
	}
	m.Digest = m.ComputeDigest()
	if err := m.Validate(); err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkGuardStepBy is BenchmarkGuardStep's serial walk with the
// sessions spread over the sub-maps of a conditioned model (maps=0: the
// fixture unconditioned, through StepBy).
func BenchmarkGuardStepBy(b *testing.B) {
	p := guardPolicy(b, `{"watchdog":{"max_turns":5,"fallback":{"event":"escalate","to":"human"}}}`)
	const sessions = 1000
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = fmt.Sprintf("session-%06d", i)
	}
	for _, maps := range []int{0, 100} {
		b.Run(fmt.Sprintf("maps=%d", maps), func(b *testing.B) {
			m := modeltest.Returns(b)
			values := make([]string, sessions)
			if maps > 0 {
				m = benchByModel(b, maps)
				for i := range values {
					values[i] = m.By.Maps[i%maps].Value
				}
			}
			g, err := New(m, p, Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				s := i % sessions
				st := benchPath[(i/sessions)%len(benchPath)]
				if d, _ := g.StepBy(ids[s], values[s], st[0], st[1], nil); !d.Allowed {
					b.Fatalf("step %d of %s denied: %s", i, ids[s], d.Reason)
				}
				if st[1] == automaton.EndID {
					g.End(ids[s])
				}
				i++
			}
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}

// TestGuardByPolicy holds that a policy must fit every sub-map: one whose
// fallback names a state a sub-map lacks is refused, naming the value.
func TestGuardByPolicy(t *testing.T) {
	p := guardPolicy(t, `{"watchdog":{"max_turns":3,"fallback":{"event":"x","to":"b"}}}`)
	if _, err := New(branch(t, 3, 3), p, Options{}); err != nil {
		t.Fatal(err)
	}
	_, err := New(byModel(t), p, Options{})
	if err == nil || !strings.Contains(err.Error(), `by attrs.task: the map of value "A": policy: watchdog: fallback`) {
		t.Errorf("New = %v, want the map of A named", err)
	}
}

// TestSuggestPolicyBy: the draft of a conditioned model is a policy the
// model takes (a policy applies to every map): states and caps a sub-map
// lacks are left out. The draft named every state of the shared map, which
// the map of "A" (no b) and that of "B" (no a) refused.
func TestSuggestPolicyBy(t *testing.T) {
	m := byModel(t)
	p := SuggestPolicy(m)
	if err := p.Check(m); err != nil {
		t.Fatalf("the draft does not fit its model: %v", err)
	}
	if _, ok := p.States["plan"]; !ok {
		t.Errorf("the draft lost plan, a state of every map: %v", p.States)
	}
	for _, id := range []string{"a", "b"} {
		if _, ok := p.States[id]; ok {
			t.Errorf("the draft names %s, which a sub-map lacks", id)
		}
	}
}
