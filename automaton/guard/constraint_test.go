package guard

import (
	"bytes"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/automaton/internal/modeltest"
)

func TestConstraintsGuard(t *testing.T) {
	m := modeltest.Constrained(t)
	g, err := New(m, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g.Step("s", "", "agent_msg")
	g.Step("s", "agent", "find_user_id_by_email")
	d := g.Step("s", "error", "transfer_to_human_agents")
	if d.Allowed || d.Reason != ReasonMissingPrerequisite || d.Constraint == nil || d.Constraint.B != "transfer_to_human_agents" {
		t.Fatalf("hand-off before the lookup: %+v, want denied as %s", d, ReasonMissingPrerequisite)
	}
	for _, mv := range d.NextMoves {
		if mv.Label == "transfer_to_human_agents" {
			t.Errorf("next moves offer the hand-off the constraint denies: %+v", d.NextMoves)
		}
	}
	if d := g.Step("s", "ok", "get_order_details"); !d.Allowed {
		t.Fatalf("lookup: %+v", d)
	}
	if d := g.Step("s", "error", "transfer_to_human_agents"); !d.Allowed {
		t.Fatalf("hand-off after the lookup: %+v, want allowed", d)
	}
	// A reload to a model with the constraints in another order keeps
	// what the session visited.
	m2 := modeltest.Constrained(t)
	m2.Constraints[0], m2.Constraints[2] = m2.Constraints[2], m2.Constraints[0]
	if _, err := g.Reload(m2, nil); err != nil {
		t.Fatal(err)
	}
	d = g.Step("s", "retry", "find_user_id_by_email")
	if d.Allowed || d.Reason != ReasonOnceOnly {
		t.Fatalf("second identification after a reload: %+v, want denied as %s", d, ReasonOnceOnly)
	}
}

// TestConstraintRunGuard: the guard denies the return, leaves it out of the
// next moves, and keeps the run's state across a reload that reorders the
// constraints.
func TestConstraintRunGuard(t *testing.T) {
	m := modeltest.Run(t, "c")
	g, err := New(m, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, mv := range modeltest.Path("o", "o", "p")[:3] {
		if d := g.Step("s", mv.Event, mv.Label); !d.Allowed {
			t.Fatalf("%v: %+v", mv, d)
		}
	}
	m2 := modeltest.Run(t, "c")
	m2.Constraints[0], m2.Constraints[1] = m2.Constraints[1], m2.Constraints[0]
	if _, err := g.Reload(m2, nil); err != nil {
		t.Fatal(err)
	}
	d := g.Step("s", "ok", "o")
	if d.Allowed || d.Reason != ReasonRerun || d.Constraint == nil || d.Constraint.A != "o" {
		t.Fatalf("back to the lookup after a reload: %+v, want denied as %s", d, ReasonRerun)
	}
	for _, mv := range d.NextMoves {
		if mv.Label == "o" {
			t.Errorf("next moves offer the return the run denies: %+v", d.NextMoves)
		}
	}
	if d := g.Step("s", "ok", "c"); !d.Allowed {
		t.Fatalf("confirmation: %+v", d)
	}
	g.Step("s", "ok", "act")
	if d := g.Step("s", "ok", "o"); !d.Allowed {
		t.Fatalf("second request after the confirmation: %+v, want allowed", d)
	}
}

// FuzzConstrainedModel decodes hostile model files that carry constraints
// (run constraints among them) and argument rules, and walks sessions over
// their labels through the checker, a path checker and the guard: none may
// panic, and the checker and the path checker agree on whether a path keeps
// the constraints.
func FuzzConstrainedModel(f *testing.F) {
	for _, until := range []string{"c", ""} {
		var buf bytes.Buffer
		if err := modeltest.Run(f, until).Write(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), []byte{0, 1, 0, 2, 3})
		f.Add(bytes.Replace(buf.Bytes(), []byte(`"kind":"once"`), []byte(`"kind":"run"`), 1), []byte{0, 0, 1, 1, 0})
	}
	var buf bytes.Buffer
	if err := modeltest.Args(f).Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes(), []byte{4, 2, 1, 0})
	f.Fuzz(func(t *testing.T, data, walk []byte) {
		m, err := automaton.Decode(bytes.NewReader(data))
		if err != nil || len(m.States) == 0 || len(walk) > 64 {
			return
		}
		labels := make([]string, 0, len(m.States))
		for _, s := range m.States {
			labels = append(labels, s.Label)
		}
		mvs := make([]automaton.Move, 0, len(walk)+1)
		for i, b := range walk {
			ev := "ok"
			if i == 0 {
				ev = ""
			}
			mvs = append(mvs, automaton.Move{Event: ev, Label: labels[int(b)%len(labels)]})
		}
		mvs = append(mvs, automaton.Move{Event: "ok", Label: automaton.EndID})
		c := conform.New(m, conform.Options{MaxAlignStates: 1000})
		v := c.Check(mvs)
		c.Replay(mvs)
		pc := automaton.NewPathChecker(m.Constraints)
		pc.Start()
		keeps := true
		for _, mv := range mvs {
			keeps = pc.Visit(mv.Label) && keeps
		}
		if v.Deviation != nil && v.Deviation.Constraint != nil && keeps {
			t.Fatalf("the checker says %s breaks %s, the path checker that the path keeps every constraint", v.Deviation.Kind, v.Deviation.Constraint)
		}
		g, err := New(m, nil, Options{})
		if err != nil {
			return
		}
		for _, mv := range mvs {
			g.StepCall("s", mv.Event, mv.Label, nil, &Call{Args: []automaton.Arg{{Name: "to", Value: mv.Label}}, Seen: []SeenText{{mv.Label, string(walk)}}})
		}
		if _, err := g.Reload(m, nil); err != nil {
			t.Fatalf("reloading the same model: %v", err)
		}
		g.Step("s", "ok", labels[0])
	})
}
