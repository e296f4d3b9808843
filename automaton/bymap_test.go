package automaton

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// byModel is a conditioned model over branch's shape: the shared map takes
// a or b after plan; the sub-map of value "A" knows only a, that of "B"
// only b.
func byModel(t testing.TB) *Model {
	t.Helper()
	m := branch(t, 3, 3)
	m.By = &By{Field: "attrs.task", MinSessions: 2, Values: 3, Shared: 1, Maps: []SubMap{
		NewSubMap("A", only(t, "a")),
		NewSubMap("B", only(t, "b")),
	}}
	m.Digest = m.ComputeDigest()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

// only is branch with every session through x.
func only(t testing.TB, x string) *Model {
	return buildModel(t, 1, []edge{
		{StartID, "", "plan", 3, false},
		{"plan", "ok", x, 3, false},
		{x, "done", EndID, 3, false},
	})
}

func TestByFor(t *testing.T) {
	m := byModel(t)
	tests := []struct {
		value, mapName string
		b              bool // the map takes b
	}{
		{"A", "by:A", false},
		{"B", "by:B", true},
		{"C", SharedMap, true},
		{"", SharedMap, true},
	}
	for _, tt := range tests {
		sm := m.For(tt.value)
		if got := m.MapName(tt.value); got != tt.mapName {
			t.Errorf("MapName(%q) = %q, want %q", tt.value, got, tt.mapName)
		}
		if got := sm.Next("plan", Move{Event: "ok", Label: "b"}) != nil; got != tt.b {
			t.Errorf("For(%q) takes plan -ok-> b: %v, want %v", tt.value, got, tt.b)
		}
		if sm.By != nil && sm != m {
			t.Errorf("For(%q) has a By", tt.value)
		}
	}
	if got := branch(t, 1, 1).MapName("A"); got != "" {
		t.Errorf("MapName of a model that is not conditioned = %q, want empty", got)
	}
}

func TestByDigestAndRoundTrip(t *testing.T) {
	plain := branch(t, 3, 3)
	m := byModel(t)
	if m.Digest == plain.Digest {
		t.Fatal("the sub-maps do not change the digest")
	}
	if plain.ComputeDigest() != plain.Digest {
		t.Error("a model without By changed digest")
	}
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if back.By == nil || len(back.By.Maps) != 2 || back.Digest != m.Digest {
		t.Fatalf("read back: by %+v, digest %s, want 2 maps and %s", back.By, back.Digest, m.Digest)
	}
	if back.For("A").Next("plan", Move{Event: "ok", Label: "b"}) != nil {
		t.Error("read back: the sub-map of A takes b")
	}
	// An edit of a sub-map is an edit of the model.
	edited := strings.Replace(buf.String(), `"value":"A","sessions":3`, `"value":"A","sessions":4`, 1)
	if _, err := Read(strings.NewReader(edited)); err != nil {
		t.Errorf("sessions of a sub-map are provenance, yet: %v", err)
	}
	edited = strings.Replace(buf.String(), `"value":"B"`, `"value":"C"`, 1)
	if _, err := Read(strings.NewReader(edited)); err == nil {
		t.Error("renaming a sub-map's value kept the digest")
	}
}

func TestByValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(b *By)
		want string
	}{
		{"no field", func(b *By) { b.Field = "" }, "by has no field"},
		{"field of an empty name", func(b *By) { b.Field = "attrs..task_id" }, `by.field "attrs..task_id": want names joined by dots`},
		{"field a dot", func(b *By) { b.Field = "." }, `by.field ".": want names joined by dots`},
		{"field with a newline", func(b *By) { b.Field = "attrs.<script>x\"\n" }, `by.field: value "attrs.<script>x\"\n" has a control character at byte 16`},
		{"min 0", func(b *By) { b.MinSessions = 0 }, "by.min_sessions is 0"},
		{"unsorted", func(b *By) { b.Maps[0], b.Maps[1] = b.Maps[1], b.Maps[0] }, `value "A" is not after "B"`},
		{"duplicate", func(b *By) { b.Maps[1].Value = "A" }, `value "A" is not after "A"`},
		{"control", func(b *By) { b.Maps[1].Value = "B\n" }, `by.maps[1]: value "B\n" has a control character at byte 1`},
		{"empty value", func(b *By) { b.Maps[0].Value = "" }, "by.maps[0]: an empty value"},
		{"too few", func(b *By) { b.MinSessions = 4 }, `by.maps[0] (value "A") has 3 sessions, fewer than by.min_sessions 4`},
		{"bad sub-map", func(b *By) { b.Maps[1].Transitions[0].To = "nowhere" }, `by.maps[1] (value "B"): invalid model: transition`},
		{"negative", func(b *By) { b.Shared = -1 }, "a count of by is negative"},
		{"unknown mode", func(b *By) { b.Mode = "words" }, `by.mode is "words", want "paths", "moves", "stages" or none`},
		{"stages: a move the shared map lacks", func(b *By) {
			b.Mode = ByStages
			b.Maps[0].Transitions[1].Event = "retry"
		}, `by.maps[0] (value "A"): transition a -[retry]-> __end__ is not the shared map's`},
		{"stages: a state the shared map lacks", func(b *By) {
			b.Mode = ByStages
			b.Maps[1].States[1].Label = "c"
		}, `by.maps[1] (value "B"): state "b" (label "c") is not the shared map's`},
		{"stages: a back edge outside every loop", func(b *By) {
			b.Mode = ByStages
			b.Maps[0].Transitions[1].BackEdge = true
		}, `by.maps[0] (value "A"): back edge a -[done]-> __end__ closes no loop`},
		{"stages: a loop the shared map lacks", func(b *By) {
			b.Mode = ByStages
			b.Maps[0].Loops = append(b.Maps[0].Loops, Loop{States: []string{"plan"}, MaxIterations: 9})
		}, `by.maps[0] (value "A"): loop [plan] (max_iterations 9) is in no loop of the shared map`},
		{"moves: a move the shared map lacks", func(b *By) {
			b.Mode = ByMoves
			b.Maps[0].Transitions[1].Event = "retry"
		}, `by.maps[0] (value "A"): transition a -[retry]-> __end__ is not the shared map's`},
	}
	for _, mode := range []string{"", ByPaths, ByMoves, ByStages} {
		m := byModel(t)
		m.By.Mode = mode
		if err := m.Validate(); err != nil {
			t.Errorf("mode %q: Validate = %v, want nil (the sub-maps restrict the shared map)", mode, err)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := byModel(t)
			tt.edit(m.By)
			err := m.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestByRestrictedRunCaps: a restricted sub-map may not cap a label's runs
// above the shared map's cap, nor leave a capped label uncapped.
func TestByRestrictedRunCaps(t *testing.T) {
	for _, sub := range []int{0, 3} {
		m := byModel(t)
		m.By.Mode = ByStages
		m.State("plan").MaxRun = 2
		for i := range m.By.Maps[0].States {
			if st := &m.By.Maps[0].States[i]; st.ID == "plan" {
				st.MaxRun = sub
			}
		}
		want := fmt.Sprintf(`state "plan": max_run %d, the shared map's is 2`, sub)
		if err := m.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("sub-map max_run %d: Validate = %v, want %q", sub, err, want)
		}
	}
}

// TestByRestrictedLoopCaps: a restricted sub-map may not lift what the
// shared map holds a loop's moves to: a cap of 0 (none) where the shared
// loop has one, a back edge of a capped loop left unmarked (its turns then
// count towards no cap), a generalisation mark dropped. Rare may go, as a
// restriction marks rarity anew, and so may a back edge of a loop without
// a cap. Each lift was accepted, and check let the extra turns through.
func TestByRestrictedLoopCaps(t *testing.T) {
	// loopModel with a generalised skip out of a and a rare way out of b.
	model := func() *Model {
		m := loopModel(t)
		m.Transitions = append(m.Transitions, Transition{From: "a", Event: "done", To: EndID, Generalized: GenSkip})
		m.Transitions[len(m.Transitions)-2].Rare = true // b -[done]-> __end__
		m.Sort()
		return m
	}
	tests := []struct {
		name         string
		shared, edit func(m *Model) // of the shared map, of the sub-map
		want         string         // "" for valid
	}{
		{"the shared map's", nil, nil, ""},
		{"a lower cap", nil, func(m *Model) { m.Loops[0].MaxIterations = 1 }, ""},
		{"a higher cap", nil, func(m *Model) { m.Loops[0].MaxIterations = 3 }, `loop [a]: max_iterations 3, the shared map's is 2`},
		{"no cap", nil, func(m *Model) { m.Loops[0].MaxIterations = 0 }, `loop [a]: max_iterations 0, the shared map's is 2 (0 is no cap)`},
		{"no cap under no cap", func(m *Model) { m.Loops[0].MaxIterations = 0 }, func(m *Model) { m.Loops[0].MaxIterations = 0 }, ""},
		{"a back edge unmarked", nil, func(m *Model) {
			m.Loops = nil
			m.Next("a", Move{Event: "retry", Label: "a"}).BackEdge = false
		}, `transition a -[retry]-> a is no back edge, the shared map's is one of a capped loop`},
		{"a back edge of an uncapped loop unmarked", func(m *Model) { m.Loops[0].MaxIterations = 0 }, func(m *Model) {
			m.Loops = nil
			m.Next("a", Move{Event: "retry", Label: "a"}).BackEdge = false
		}, ""},
		{"a generalisation unmarked", nil, func(m *Model) {
			m.Next("a", Move{Event: "done", Label: EndID}).Generalized = ""
		}, `transition a -[done]-> __end__ is not generalised, the shared map's is (skip)`},
		{"rare unmarked", nil, func(m *Model) { m.Next("b", Move{Event: "done", Label: EndID}).Rare = false }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, sub := model(), model()
			if tt.shared != nil {
				tt.shared(m)
				tt.shared(sub)
			}
			if tt.edit != nil {
				tt.edit(sub)
			}
			m.By = &By{Field: "attrs.task", Mode: ByStages, MinSessions: 1, Values: 1, Maps: []SubMap{NewSubMap("A", sub)}}
			err := m.Validate()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestByArgsSharedLabels: argument rules hold for a tool whichever map
// answers, so a sub-map without a state of the tool (B's has no a) is
// valid, as build --by --args writes it; a rule of a tool the shared map
// has no state of is refused, and named at the top, not in a sub-map.
func TestByArgsSharedLabels(t *testing.T) {
	for _, tt := range []struct {
		tool, want string
	}{
		{"a", ""},
		{"nowhere", `invalid model: args[0] is a rule of tool "nowhere", which no state of the model is labelled`},
	} {
		m := byModel(t)
		m.Args = []ArgRule{{Tool: tt.tool, Arg: "id", Kind: KindValueWithoutSource, Steps: 3, Sessions: 3}}
		m.Digest = m.ComputeDigest()
		var buf bytes.Buffer
		if err := m.Write(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := Read(&buf)
		if tt.want == "" {
			if err != nil {
				t.Errorf("a rule of %s, which sub-map B lacks: Read = %v, want nil", tt.tool, err)
			} else if got := back.For("B").Args; len(got) != 1 || got[0].Tool != tt.tool {
				t.Errorf("sub-map B's rules = %v, want the shared map's", got)
			} else if err := back.For("B").Validate(); err != nil {
				t.Errorf("sub-map B as a model: Validate = %v, want nil", err)
			}
			continue
		}
		if err == nil || err.Error() != tt.want {
			t.Errorf("a rule of %s: Read = %v, want %q", tt.tool, err, tt.want)
		}
	}
}

func TestValidByValue(t *testing.T) {
	tests := []struct {
		v  string
		ok bool
	}{
		{"task-7", true}, {"café ☕", true}, {"", false}, {"a\x00b", false}, {"a\x1b[31m", false},
		{"a\u0085", false}, {"\xff", false},
	}
	for _, tt := range tests {
		if err := ValidByValue(tt.v); (err == nil) != tt.ok {
			t.Errorf("ValidByValue(%q) = %v, want ok %v", tt.v, err, tt.ok)
		}
	}
}

// FuzzDecodeBy decodes mutations of a conditioned model: Decode either
// refuses the bytes or returns a model whose every sub-map is a valid
// model, which writes and decodes back to the same digest.
func FuzzDecodeBy(f *testing.F) {
	var buf bytes.Buffer
	if err := byModel(f).Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(bytes.Replace(buf.Bytes(), []byte(`"value":"B"`), []byte(`"value":"A"`), 1))
	f.Add(bytes.Replace(buf.Bytes(), []byte(`"min_sessions":2`), []byte(`"min_sessions":0`), 1))
	// A stages sub-map must be a part of the shared map.
	f.Add(bytes.Replace(buf.Bytes(), []byte(`"min_sessions":2`), []byte(`"mode":"stages","min_sessions":2`), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		if m.By != nil {
			for _, sm := range m.By.Maps {
				if err := m.For(sm.Value).Validate(); err != nil {
					t.Fatalf("sub-map %q of a decoded model: %v", sm.Value, err)
				}
				if m.MapName(sm.Value) != "by:"+sm.Value {
					t.Fatalf("MapName(%q) = %q", sm.Value, m.MapName(sm.Value))
				}
			}
		}
		var out bytes.Buffer
		if err := m.Write(&out); err != nil {
			t.Fatal(err)
		}
		back, err := Decode(&out)
		if err != nil {
			t.Fatalf("a decoded model does not decode back: %v", err)
		}
		if back.ComputeDigest() != m.ComputeDigest() {
			t.Fatal("the digest changed through Write and Decode")
		}
	})
}
