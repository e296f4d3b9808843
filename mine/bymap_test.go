package mine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// byLog is a log of sessions "s<i>" whose value of attrs.task is given,
// each through plan then its own path.
func byLog(t *testing.T, sessions map[string][]string) *Log {
	t.Helper()
	var b strings.Builder
	for id, path := range sessions {
		for i, n := range path {
			fmt.Fprintf(&b, `{"session_id":%q,"step":%d,"node":%q,"event":"ok"}`+"\n", id, i, n)
		}
	}
	lg, err := Read([]Input{strInput("by.jsonl", b.String())}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return lg
}

func TestBuildBy(t *testing.T) {
	lg := byLog(t, map[string][]string{
		"a1": {"plan", "a"}, "a2": {"plan", "a"}, "a3": {"plan", "a", "a"},
		"b1": {"plan", "b"}, "b2": {"plan", "b"},
		"c1": {"plan", "c"},
		"n1": {"plan", "d"},
	})
	values := map[string]string{"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B", "c1": "C"}
	tests := []struct {
		min          int
		maps         []string
		shared       int
		sharedTakesC bool
	}{
		{1, []string{"A", "B", "C"}, 1, true},
		{2, []string{"A", "B"}, 2, true},
		{3, []string{"A"}, 4, true},
		{4, nil, 7, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("min=%d", tt.min), func(t *testing.T) {
			m, err := BuildBy(lg, DefaultOptions(), ByOptions{Field: "attrs.task", MinSessions: tt.min}, values)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, sm := range m.By.Maps {
				got = append(got, sm.Value)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.maps) || m.By.Shared != tt.shared || m.By.Values != 3 || m.By.Unvalued != 1 {
				t.Errorf("maps %v, shared %d, values %d, unvalued %d; want %v, %d, 3, 1", got, m.By.Shared, m.By.Values, m.By.Unvalued, tt.maps, tt.shared)
			}
			if m.Digest != m.ComputeDigest() {
				t.Error("the model is not sealed with its sub-maps")
			}
			for i := range lg.Sessions {
				s := &lg.Sessions[i]
				if !m.For(values[s.ID]).Accepts(lg.Moves(s)) {
					t.Errorf("session %s is not a path of its map", s.ID)
				}
			}
			if sub := m.For("A"); len(tt.maps) > 0 && sub.Source.Sessions != 3 {
				t.Errorf("the map of A has %d sessions, want 3", sub.Source.Sessions)
			}
			if len(tt.maps) > 0 && m.For("A").HasLabel("b") {
				t.Error("the map of A has B's label")
			}
		})
	}
}

func TestBuildByErrors(t *testing.T) {
	lg := byLog(t, map[string][]string{"a1": {"plan", "a"}, "b1": {"plan", "b"}})
	tests := []struct {
		name   string
		values map[string]string
		min    int
		want   string
	}{
		{"no value", map[string]string{}, 1, "by attrs.task: no session carries the field: none of the 2 sessions' records has it"},
		{"control", map[string]string{"a1": "x\ty"}, 1, `by attrs.task: session "a1": value "x\ty" has a control character at byte 1`},
		{"not utf-8", map[string]string{"b1": "\xff"}, 1, `by attrs.task: session "b1": value "\xff" is not valid UTF-8 at byte 0`},
		{"min 0", map[string]string{"a1": "A"}, 0, "by attrs.task: 0 sessions a value: want 1 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := BuildBy(lg, DefaultOptions(), ByOptions{Field: "attrs.task", MinSessions: tt.min}, tt.values)
			if err == nil || err.Error() != tt.want {
				t.Errorf("BuildBy = %v, want %q", err, tt.want)
			}
		})
	}
	_, err := BuildBy(lg, DefaultOptions(), ByOptions{Field: "attrs.task", MinSessions: 1}, nil)
	if !errors.Is(err, ErrByField) {
		t.Errorf("no values: %v, want ErrByField", err)
	}
}

// TestBuildEach: one model per value, the values sorted, each from its own
// sessions; sessions without a value counted and left out.
func TestBuildEach(t *testing.T) {
	lg, err := Read([]Input{strInput("log", sessionsJSONL(
		"a:ok b:ok", "a:ok b:ok", "a:ok c:ok", "a:ok c:ok", "a:ok d:ok"))}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]string{"s0": "x", "s1": "x", "s2": "w", "s3": "w"}
	g, err := BuildEach(lg, DefaultOptions(), vals)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Values, []string{"w", "x"}) || g.Missing != 1 || len(g.Models) != 2 {
		t.Fatalf("values %v, missing %d, %d models", g.Values, g.Missing, len(g.Models))
	}
	for i, want := range []string{"c", "b"} {
		if m := g.Models[i]; m.Source.Sessions != 2 || !m.HasLabel(want) || m.HasLabel("d") {
			t.Errorf("value %s: %d sessions, labels %v; want 2 sessions with %s and no d", g.Values[i], m.Source.Sessions, m.States, want)
		}
	}
	got := OutcomeValues(&Outcomes{Succeeded: map[string]bool{"s0": true, "s1": false}})
	if got["s0"] != "succeeded" || got["s1"] != "failed" || len(got) != 2 {
		t.Errorf("OutcomeValues = %v", got)
	}
}

// TestBuildByStages: in mode stages a value's sub-map is the shared map on
// the labels its sessions visit. Task T always reads a then b, U reads b
// then a, V sends money: T's map denies send_money, which no session of T
// called, and accepts b before a, which the shared map takes; T's map
// mined from its own paths denies that order.
func TestBuildByStages(t *testing.T) {
	lg := byLog(t, map[string][]string{
		"t1": {"plan", "read_a", "read_b", "reply"}, "t2": {"plan", "read_a", "read_b", "reply"},
		"t3": {"plan", "read_a", "read_b", "reply"},
		"u1": {"plan", "read_b", "read_a", "reply"}, "u2": {"plan", "read_b", "read_a", "reply"},
		"u3": {"plan", "read_b", "read_a", "reply"},
		"v1": {"plan", "read_a", "send_money", "reply"}, "v2": {"plan", "read_a", "send_money", "reply"},
		"v3": {"plan", "read_a", "send_money", "reply"},
	})
	values := map[string]string{}
	for i := range lg.Sessions {
		values[lg.Sessions[i].ID] = strings.ToUpper(lg.Sessions[i].ID[:1])
	}
	path := func(labels ...string) []automaton.Move {
		var mvs []automaton.Move
		for i, l := range labels {
			mv := automaton.Move{Label: l}
			if i > 0 {
				mv.Event = "ok"
			}
			mvs = append(mvs, mv)
		}
		return append(mvs, automaton.Move{Event: "ok", Label: automaton.EndID})
	}
	reordered := path("plan", "read_b", "read_a", "reply")
	hijacked := path("plan", "read_a", "send_money", "reply")
	tests := []struct {
		mode                string
		reordered, hijacked bool // T's map accepts them
	}{
		{automaton.ByStages, true, false},
		{automaton.ByPaths, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			m, err := BuildBy(lg, DefaultOptions(), ByOptions{Field: "attrs.task", MinSessions: 3, Mode: tt.mode}, values)
			if err != nil {
				t.Fatal(err)
			}
			if !m.Accepts(hijacked) || !m.Accepts(reordered) {
				t.Fatal("the shared map denies a path of its own log")
			}
			sub := m.For("T")
			if got := sub.Accepts(reordered); got != tt.reordered {
				t.Errorf("T's map accepts b before a: %v, want %v", got, tt.reordered)
			}
			if got := sub.Accepts(hijacked); got != tt.hijacked {
				t.Errorf("T's map accepts send_money: %v, want %v", got, tt.hijacked)
			}
			if sub.HasLabel("send_money") || sub.Source.Sessions != 3 {
				t.Errorf("T's map: send_money %v, %d sessions; want false, 3", sub.HasLabel("send_money"), sub.Source.Sessions)
			}
			for i := range lg.Sessions {
				s := &lg.Sessions[i]
				if !m.For(values[s.ID]).Accepts(lg.Moves(s)) {
					t.Errorf("session %s is not a path of its map", s.ID)
				}
			}
			wantMode := tt.mode
			if wantMode == automaton.ByPaths {
				wantMode = ""
			}
			if m.By.Mode != wantMode {
				t.Errorf("by.mode = %q, want %q", m.By.Mode, wantMode)
			}
		})
	}
}

// TestBuildByMoves: in mode moves a value's sub-map is the shared map on
// the labels its sessions visit and the moves between them they made, in
// any context. Task T reads a and b in either order; U reads a alone and
// X replies at once. T's moves map accepts a then reply, a move T made
// after b only, and denies plan then reply, between two of T's stages but
// never made by T, which the stages map accepts.
func TestBuildByMoves(t *testing.T) {
	lg := byLog(t, map[string][]string{
		"t1": {"plan", "read_a", "read_b", "reply"}, "t2": {"plan", "read_b", "read_a", "reply"},
		"t3": {"plan", "read_a", "read_b", "reply"},
		"u1": {"plan", "read_a", "reply"}, "u2": {"plan", "read_a", "reply"}, "u3": {"plan", "read_a", "reply"},
		"x1": {"plan", "reply"}, "x2": {"plan", "reply"}, "x3": {"plan", "reply"},
		"v1": {"plan", "read_a", "send_money", "reply"}, "v2": {"plan", "read_a", "send_money", "reply"},
		"v3": {"plan", "read_a", "send_money", "reply"},
	})
	values := map[string]string{}
	for i := range lg.Sessions {
		values[lg.Sessions[i].ID] = strings.ToUpper(lg.Sessions[i].ID[:1])
	}
	path := func(labels ...string) []automaton.Move {
		mvs := []automaton.Move{{Label: labels[0]}}
		for _, l := range labels[1:] {
			mvs = append(mvs, automaton.Move{Event: "ok", Label: l})
		}
		return append(mvs, automaton.Move{Event: "ok", Label: automaton.EndID})
	}
	elsewhere := path("plan", "read_a", "reply")
	unmade := path("plan", "reply")
	hijacked := path("plan", "read_a", "send_money", "reply")
	tests := []struct {
		mode              string
		elsewhere, unmade bool // T's map accepts them
	}{
		{automaton.ByMoves, true, false},
		{automaton.ByStages, true, true},
		{automaton.ByPaths, true, false}, // mined from T alone, generalised
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			m, err := BuildBy(lg, DefaultOptions(), ByOptions{Field: "attrs.task", MinSessions: 3, Mode: tt.mode}, values)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range [][]automaton.Move{elsewhere, unmade, hijacked} {
				if !m.Accepts(p) {
					t.Fatalf("the shared map denies %v, a path of its own log", p)
				}
			}
			sub := m.For("T")
			if got := sub.Accepts(elsewhere); got != tt.elsewhere {
				t.Errorf("T's map accepts read_a then reply after plan: %v, want %v", got, tt.elsewhere)
			}
			if got := sub.Accepts(unmade); got != tt.unmade {
				t.Errorf("T's map accepts plan then reply: %v, want %v", got, tt.unmade)
			}
			if sub.Accepts(hijacked) {
				t.Error("T's map accepts send_money")
			}
			for i := range lg.Sessions {
				s := &lg.Sessions[i]
				if !m.For(values[s.ID]).Accepts(lg.Moves(s)) {
					t.Errorf("session %s is not a path of its map", s.ID)
				}
			}
		})
	}
}

func TestRestrictConstraint(t *testing.T) {
	labels := map[string]bool{"a": true, "b": true, "c": true}
	prec := func(a, b string, or ...string) automaton.Constraint {
		return automaton.Constraint{Kind: automaton.ConstraintPrecedence, A: a, B: b, Or: or}
	}
	tests := []struct {
		name string
		c    automaton.Constraint
		want string // the constraint as it reads, or "" when it goes
	}{
		{"precedence kept", prec("a", "b"), "b only after a"},
		{"precedence of a dropped b", prec("a", "x"), ""},
		{"precedence narrowed to its alternatives left", prec("x", "b", "c", "y"), "b only after c"},
		{"precedence keeps its alternatives left", prec("a", "b", "c", "y"), "b only after a or c"},
		{"once of a dropped label", automaton.Constraint{Kind: automaton.ConstraintOnce, A: "x"}, ""},
		{"not_both with a side dropped", automaton.Constraint{Kind: automaton.ConstraintNotBoth, A: "a", B: "x"}, ""},
		{"run whose b is dropped", automaton.Constraint{Kind: automaton.ConstraintRun, A: "a", B: "x"},
			automaton.Constraint{Kind: automaton.ConstraintRun, A: "a"}.String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := restrictConstraint(tt.c, labels)
			s := ""
			if ok {
				s = got.String()
			}
			if s != tt.want {
				t.Errorf("restrictConstraint(%v) = %q, want %q", tt.c, s, tt.want)
			}
		})
	}
}
