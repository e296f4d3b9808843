package conform

import (
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// constrainedFixture is the guard fixture (see loadGuardFixture) with
// constraints: a hand-off only after the order lookup, the identification
// at most once, and never both a hand-off and a return.
func constrainedFixture(t testing.TB) *automaton.Model {
	t.Helper()
	m := loadGuardFixture(t)
	m.Constraints = []automaton.Constraint{
		{Kind: automaton.ConstraintNotBoth, A: "return_delivered_order_items", B: "transfer_to_human_agents", Support: 40, Confidence: 1},
		{Kind: automaton.ConstraintOnce, A: "find_user_id_by_email", Support: 50, Confidence: 1},
		{Kind: automaton.ConstraintPrecedence, A: "get_order_details", B: "transfer_to_human_agents", Support: 20, Confidence: 1},
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

func sessionMoves(path ...string) []automaton.Move {
	var out []automaton.Move
	for i := 0; i < len(path); i += 2 {
		out = append(out, automaton.Move{Event: path[i], Label: path[i+1]})
	}
	return out
}

func TestConstraintsCheck(t *testing.T) {
	m := constrainedFixture(t)
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
	m := loadGuardFixture(t)
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

// runModel is a lookup (o) that may repeat, a product lookup (p), a
// confirmation (c) and an action (act) that may start a second request,
// with the constraint that o's visits come in one run until c.
func runModel(t testing.TB, until string) *automaton.Model {
	t.Helper()
	tr := func(from, to string) automaton.Transition {
		return automaton.Transition{From: from, Event: "ok", To: to, Count: 1}
	}
	m := checkModel(t, automaton.Transition{From: automaton.StartID, To: "o", Count: 1}, tr("o", "o"), tr("o", "p"), tr("p", "o"), tr("o", "c"),
		tr("p", "c"), tr("c", "act"), tr("act", "o"), tr("act", automaton.EndID))
	m.Constraints = []automaton.Constraint{
		{Kind: automaton.ConstraintOnce, A: "p", Support: 60, Confidence: 1},
		{Kind: automaton.ConstraintRun, A: "o", B: until, Support: 80, Confidence: 1},
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

func path(labels ...string) []automaton.Move {
	mvs := []automaton.Move{{Label: labels[0]}}
	for _, l := range labels[1:] {
		mvs = append(mvs, automaton.Move{Event: "ok", Label: l})
	}
	return append(mvs, automaton.Move{Event: "ok", Label: automaton.EndID})
}

// TestConstraintRun: a run constraint lets a label repeat in a row and
// denies a return to it after the session moved on, until its reset label.
func TestConstraintRun(t *testing.T) {
	tests := []struct {
		name, until string
		mvs         []automaton.Move
		move        int // the move that breaks the run; -1 for none
	}{
		{"repeats in a row", "c", path("o", "o", "o", "p", "c", "act"), -1},
		{"back after the product lookup", "c", path("o", "p", "o", "c", "act"), 2},
		{"a second request after the confirmation", "c", path("o", "c", "act", "o", "o", "c", "act"), -1},
		{"back within the second request", "c", path("o", "c", "act", "o", "p", "o", "c", "act"), 5},
		{"no reset label: never back", "", path("o", "c", "act", "o", "c", "act"), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := runModel(t, tt.until)
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
