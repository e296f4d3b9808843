package conform

import (
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/internal/modeltest"
)

func sessionMoves(path ...string) []automaton.Move {
	var out []automaton.Move
	for i := 0; i < len(path); i += 2 {
		out = append(out, automaton.Move{Event: path[i], Label: path[i+1]})
	}
	return out
}

func TestConstraintsCheck(t *testing.T) {
	m := modeltest.Constrained(t)
	c := New(m, Options{})
	tests := []struct {
		name  string
		mvs   []automaton.Move
		kind  string // "" fits
		move  int
		which string
	}{
		{"the happy path", sessionMoves("", "agent_msg", "agent", "find_user_id_by_email", "ok", "get_order_details", "ok", "return_delivered_order_items", "ok", "agent_msg", "agent", automaton.EndID), "", 0, ""},
		{"a hand-off after the lookup", sessionMoves("", "agent_msg", "agent", "find_user_id_by_email", "ok", "get_order_details", "error", "transfer_to_human_agents", "ok", automaton.EndID), "", 0, ""},
		{"a hand-off before any lookup", sessionMoves("", "agent_msg", "agent", "find_user_id_by_email", "error", "transfer_to_human_agents", "ok", automaton.EndID),
			automaton.KindMissingPrerequisite, 2, "transfer_to_human_agents only after get_order_details"},
		{"identified twice", sessionMoves("", "agent_msg", "agent", "find_user_id_by_email", "ok", "get_order_details", "error", "transfer_to_human_agents", "retry", "find_user_id_by_email", "ok", "get_order_details", "ok", "return_delivered_order_items", "ok", "agent_msg", "agent", automaton.EndID),
			automaton.KindOnceOnly, 4, "find_user_id_by_email at most once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := c.Check(tt.mvs)
			if got := c.Fits(tt.mvs); got != (tt.kind == "") {
				t.Errorf("Fits = %v, want %v", got, tt.kind == "")
			}
			if tt.kind == "" {
				if v.Deviation != nil {
					t.Fatalf("deviation %+v, want none", v.Deviation)
				}
				return
			}
			d := v.Deviation
			if d == nil || d.Kind != tt.kind || d.Move != tt.move || d.Constraint == nil || d.Constraint.String() != tt.which {
				t.Fatalf("deviation %+v, want %s at move %d (%s)", d, tt.kind, tt.move, tt.which)
			}
			if v.Cost != 0 {
				t.Errorf("cost %d, want 0: a constraint's deviation is a path of the model", v.Cost)
			}
			steps := c.Replay(tt.mvs)
			if s := steps[tt.move]; s.Verdict != tt.kind || s.Constraint == nil {
				t.Errorf("replay step %d: %+v, want verdict %s with its constraint", tt.move, s, tt.kind)
			}
		})
	}
}

// TestConstraintsEither: a precedence with an alternative holds when either
// label came before, and names both when neither did.
func TestConstraintsEither(t *testing.T) {
	m := modeltest.Returns(t)
	m.Constraints = []automaton.Constraint{{Kind: automaton.ConstraintPrecedence, A: "find_user_id_by_email", B: "transfer_to_human_agents", Or: []string{"get_order_details"}, Support: 30, Confidence: 1}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	c := New(m, Options{})
	ok := sessionMoves("", "agent_msg", "agent", "find_user_id_by_email", "error", "transfer_to_human_agents", "ok", automaton.EndID)
	if v := c.Check(ok); v.Deviation != nil {
		t.Errorf("after the first alternative: %+v", v.Deviation)
	}
	m.Constraints[0].A = "get_order_details"
	m.Constraints[0].Or = []string{"return_delivered_order_items"}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	c = New(m, Options{})
	v := c.Check(ok)
	if v.Deviation == nil || v.Deviation.Kind != automaton.KindMissingPrerequisite || v.Deviation.Move != 2 {
		t.Fatalf("neither alternative before: %+v", v.Deviation)
	}
	if got, want := v.Deviation.Constraint.String(), "transfer_to_human_agents only after get_order_details or return_delivered_order_items"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	m.Constraints[0].Or = []string{"get_order_details"}
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "or must be sorted labels other than a and b") {
		t.Errorf("an alternative equal to a: %v", err)
	}
}

// TestConstraintRun: a run constraint lets a label repeat in a row and
// denies a return to it after the session moved on, until its reset label.
func TestConstraintRun(t *testing.T) {
	tests := []struct {
		name, until string
		mvs         []automaton.Move
		move        int // the move that breaks the run; -1 for none
	}{
		{"repeats in a row", "c", modeltest.Path("o", "o", "o", "p", "c", "act"), -1},
		{"back after the product lookup", "c", modeltest.Path("o", "p", "o", "c", "act"), 2},
		{"a second request after the confirmation", "c", modeltest.Path("o", "c", "act", "o", "o", "c", "act"), -1},
		{"back within the second request", "c", modeltest.Path("o", "c", "act", "o", "p", "o", "c", "act"), 5},
		{"no reset label: never back", "", modeltest.Path("o", "c", "act", "o", "c", "act"), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := modeltest.Run(t, tt.until)
			c := New(m, Options{})
			v := c.Check(tt.mvs)
			pc := automaton.NewPathChecker(m.Constraints)
			pc.Start()
			broke := -1
			for i, mv := range tt.mvs {
				if !pc.Visit(mv.Label) && broke < 0 {
					broke = i
				}
			}
			if broke != tt.move {
				t.Errorf("path checker: broken at move %d, want %d", broke, tt.move)
			}
			if tt.move < 0 {
				if v.Deviation != nil || !c.Fits(tt.mvs) {
					t.Fatalf("deviation %+v, want none", v.Deviation)
				}
				return
			}
			d := v.Deviation
			if d == nil || d.Kind != automaton.KindRerun || d.Move != tt.move || d.Constraint == nil || d.Constraint.Kind != automaton.ConstraintRun {
				t.Fatalf("deviation %+v, want %s at move %d", d, automaton.KindRerun, tt.move)
			}
			want := "o in one run"
			if tt.until != "" {
				want += " until " + tt.until
			}
			if d.Constraint.String() != want {
				t.Errorf("String() = %q, want %q", d.Constraint.String(), want)
			}
			if s := c.Replay(tt.mvs)[tt.move]; s.Verdict != automaton.KindRerun {
				t.Errorf("replay step %d: verdict %q, want %s", tt.move, s.Verdict, automaton.KindRerun)
			}
		})
	}
}
