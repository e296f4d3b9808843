package automaton

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton/internal/rules"
)

// constrainedFixture is the guard fixture (see loadGuardFixture) with
// constraints: a hand-off only after the order lookup, the identification
// at most once, and never both a hand-off and a return.
func constrainedFixture(t testing.TB) *Model {
	t.Helper()
	m := loadGuardFixture(t)
	m.Constraints = []Constraint{
		{Kind: ConstraintNotBoth, A: "return_delivered_order_items", B: "transfer_to_human_agents", Support: 40, Confidence: 1},
		{Kind: ConstraintOnce, A: "find_user_id_by_email", Support: 50, Confidence: 1},
		{Kind: ConstraintPrecedence, A: "get_order_details", B: "transfer_to_human_agents", Support: 20, Confidence: 1},
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

func sessionMoves(path ...string) []Move {
	var out []Move
	for i := 0; i < len(path); i += 2 {
		out = append(out, Move{Event: path[i], Label: path[i+1]})
	}
	return out
}

func TestConstraintsCheck(t *testing.T) {
	m := constrainedFixture(t)
	c := NewChecker(m, CheckOptions{})
	tests := []struct {
		name  string
		mvs   []Move
		kind  string // "" fits
		move  int
		which string
	}{
		{"the happy path", sessionMoves("", "agent_msg", "agent", "find_user_id_by_email", "ok", "get_order_details", "ok", "return_delivered_order_items", "ok", "agent_msg", "agent", EndID), "", 0, ""},
		{"a hand-off after the lookup", sessionMoves("", "agent_msg", "agent", "find_user_id_by_email", "ok", "get_order_details", "error", "transfer_to_human_agents", "ok", EndID), "", 0, ""},
		{"a hand-off before any lookup", sessionMoves("", "agent_msg", "agent", "find_user_id_by_email", "error", "transfer_to_human_agents", "ok", EndID),
			KindMissingPrerequisite, 2, "transfer_to_human_agents only after get_order_details"},
		{"identified twice", sessionMoves("", "agent_msg", "agent", "find_user_id_by_email", "ok", "get_order_details", "error", "transfer_to_human_agents", "retry", "find_user_id_by_email", "ok", "get_order_details", "ok", "return_delivered_order_items", "ok", "agent_msg", "agent", EndID),
			KindOnceOnly, 4, "find_user_id_by_email at most once"},
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

func TestConstraintsGuard(t *testing.T) {
	m := constrainedFixture(t)
	g, err := NewGuard(m, nil, GuardOptions{})
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
	m2 := constrainedFixture(t)
	m2.Constraints[0], m2.Constraints[2] = m2.Constraints[2], m2.Constraints[0]
	if _, err := g.Reload(m2, nil); err != nil {
		t.Fatal(err)
	}
	d = g.Step("s", "retry", "find_user_id_by_email")
	if d.Allowed || d.Reason != ReasonOnceOnly {
		t.Fatalf("second identification after a reload: %+v, want denied as %s", d, ReasonOnceOnly)
	}
}

func TestConstraintsValidate(t *testing.T) {
	tests := []struct {
		c    Constraint
		want string
	}{
		{Constraint{Kind: "sometimes", A: "get_order_details"}, `unknown kind "sometimes"`},
		{Constraint{Kind: ConstraintPrecedence, A: "get_order_details"}, "precedence needs b"},
		{Constraint{Kind: ConstraintOnce, A: "get_order_details", B: "agent_msg"}, "once takes no b"},
		{Constraint{Kind: ConstraintNotBoth, A: "nope", B: "agent_msg"}, `label "nope" is no state's`},
		{Constraint{Kind: ConstraintOnce, A: EndID}, `label "__end__" is no state's`},
		{Constraint{Kind: ConstraintOnce, A: "agent_msg", Confidence: 2}, "confidence 2"},
	}
	for _, tt := range tests {
		m := loadGuardFixture(t)
		m.Constraints = []Constraint{tt.c}
		err := m.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want one containing %q", tt.c, err, tt.want)
		}
	}
}

func TestConstraintsDiff(t *testing.T) {
	old := constrainedFixture(t)
	new := constrainedFixture(t)
	new.Constraints = append(new.Constraints[1:], Constraint{Kind: ConstraintOnce, A: "get_order_details", Support: 60, Confidence: 1})
	d := Compare(old, new, DiffOptions{})
	if len(d.ConstraintsAdded) != 1 || d.ConstraintsAdded[0].A != "get_order_details" ||
		len(d.ConstraintsRemoved) != 1 || d.ConstraintsRemoved[0].Kind != ConstraintNotBoth {
		t.Fatalf("added %v, removed %v", d.ConstraintsAdded, d.ConstraintsRemoved)
	}
	if d.Empty() || !strings.Contains(d.Summary(), "1 constraint added, 1 constraint removed") {
		t.Errorf("empty %v, summary %q", d.Empty(), d.Summary())
	}
	if d := Compare(old, constrainedFixture(t), DiffOptions{}); !d.Empty() || d.ConstraintsAdded != nil {
		t.Errorf("same constraints: %+v", d)
	}
}

// TestConstraintsEither: a precedence with an alternative holds when either
// label came before, and names both when neither did.
func TestConstraintsEither(t *testing.T) {
	m := loadGuardFixture(t)
	m.Constraints = []Constraint{{Kind: ConstraintPrecedence, A: "find_user_id_by_email", B: "transfer_to_human_agents", Or: []string{"get_order_details"}, Support: 30, Confidence: 1}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	c := NewChecker(m, CheckOptions{})
	ok := sessionMoves("", "agent_msg", "agent", "find_user_id_by_email", "error", "transfer_to_human_agents", "ok", EndID)
	if v := c.Check(ok); v.Deviation != nil {
		t.Errorf("after the first alternative: %+v", v.Deviation)
	}
	m.Constraints[0].A = "get_order_details"
	m.Constraints[0].Or = []string{"return_delivered_order_items"}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	c = NewChecker(m, CheckOptions{})
	v := c.Check(ok)
	if v.Deviation == nil || v.Deviation.Kind != KindMissingPrerequisite || v.Deviation.Move != 2 {
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
func runModel(t testing.TB, until string) *Model {
	t.Helper()
	tr := func(from, to string) Transition { return Transition{From: from, Event: "ok", To: to, Count: 1} }
	m := checkModel(t, Transition{From: StartID, To: "o", Count: 1}, tr("o", "o"), tr("o", "p"), tr("p", "o"), tr("o", "c"),
		tr("p", "c"), tr("c", "act"), tr("act", "o"), tr("act", EndID))
	m.Constraints = []Constraint{
		{Kind: ConstraintOnce, A: "p", Support: 60, Confidence: 1},
		{Kind: ConstraintRun, A: "o", B: until, Support: 80, Confidence: 1},
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

func path(labels ...string) []Move {
	mvs := []Move{{Label: labels[0]}}
	for _, l := range labels[1:] {
		mvs = append(mvs, Move{Event: "ok", Label: l})
	}
	return append(mvs, Move{Event: "ok", Label: EndID})
}

// TestConstraintRun: a run constraint lets a label repeat in a row and
// denies a return to it after the session moved on, until its reset label.
func TestConstraintRun(t *testing.T) {
	tests := []struct {
		name, until string
		mvs         []Move
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
			c := NewChecker(m, CheckOptions{})
			v := c.Check(tt.mvs)
			pc := NewPathChecker(m.Constraints)
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
			if d == nil || d.Kind != KindRerun || d.Move != tt.move || d.Constraint == nil || d.Constraint.Kind != ConstraintRun {
				t.Fatalf("deviation %+v, want %s at move %d", d, KindRerun, tt.move)
			}
			want := "o in one run"
			if tt.until != "" {
				want += " until " + tt.until
			}
			if d.Constraint.String() != want {
				t.Errorf("String() = %q, want %q", d.Constraint.String(), want)
			}
			if s := c.Replay(tt.mvs)[tt.move]; s.Verdict != KindRerun {
				t.Errorf("replay step %d: verdict %q, want %s", tt.move, s.Verdict, KindRerun)
			}
		})
	}
}

// TestConstraintRunGuard: the guard denies the return, leaves it out of the
// next moves, and keeps the run's state across a reload that reorders the
// constraints.
func TestConstraintRunGuard(t *testing.T) {
	m := runModel(t, "c")
	g, err := NewGuard(m, nil, GuardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, mv := range path("o", "o", "p")[:3] {
		if d := g.Step("s", mv.Event, mv.Label); !d.Allowed {
			t.Fatalf("%v: %+v", mv, d)
		}
	}
	m2 := runModel(t, "c")
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

func TestConstraintRunValidate(t *testing.T) {
	m := runModel(t, "c")
	m.Constraints[1].B = "o"
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), `a and b are both "o"`) {
		t.Errorf("run until itself: %v", err)
	}
	m.Constraints[1].B = "nope"
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), `label "nope" is no state's`) {
		t.Errorf("run until an unknown label: %v", err)
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
		if err := runModel(f, until).Write(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), []byte{0, 1, 0, 2, 3})
		f.Add(bytes.Replace(buf.Bytes(), []byte(`"kind":"once"`), []byte(`"kind":"run"`), 1), []byte{0, 0, 1, 1, 0})
	}
	var buf bytes.Buffer
	if err := argsModel(f).Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes(), []byte{4, 2, 1, 0})
	f.Fuzz(func(t *testing.T, data, walk []byte) {
		m, err := Decode(bytes.NewReader(data))
		if err != nil || len(m.States) == 0 || len(walk) > 64 {
			return
		}
		labels := make([]string, 0, len(m.States))
		for _, s := range m.States {
			labels = append(labels, s.Label)
		}
		mvs := make([]Move, 0, len(walk)+1)
		for i, b := range walk {
			ev := "ok"
			if i == 0 {
				ev = ""
			}
			mvs = append(mvs, Move{Event: ev, Label: labels[int(b)%len(labels)]})
		}
		mvs = append(mvs, Move{Event: "ok", Label: EndID})
		c := NewChecker(m, CheckOptions{MaxAlignStates: 1000})
		v := c.Check(mvs)
		c.Replay(mvs)
		pc := NewPathChecker(m.Constraints)
		pc.Start()
		keeps := true
		for _, mv := range mvs {
			keeps = pc.Visit(mv.Label) && keeps
		}
		if v.Deviation != nil && v.Deviation.Constraint != nil && keeps {
			t.Fatalf("the checker says %s breaks %s, the path checker that the path keeps every constraint", v.Deviation.Kind, v.Deviation.Constraint)
		}
		g, err := NewGuard(m, nil, GuardOptions{})
		if err != nil {
			return
		}
		for _, mv := range mvs {
			g.StepCall("s", mv.Event, mv.Label, nil, &Call{Args: []Arg{{"to", mv.Label}}, Seen: []SeenText{{mv.Label, string(walk)}}})
		}
		if _, err := g.Reload(m, nil); err != nil {
			t.Fatalf("reloading the same model: %v", err)
		}
		g.Step("s", "ok", labels[0])
	})
}

// TestConstraintKindsSpelt: package rules compiles constraints by kind and
// names the deviations it finds with its own constants, which must spell
// automaton's.
func TestConstraintKindsSpelt(t *testing.T) {
	tests := []struct{ got, want string }{
		{rules.Precedence, ConstraintPrecedence},
		{rules.Once, ConstraintOnce},
		{rules.NotBoth, ConstraintNotBoth},
		{rules.Run, ConstraintRun},
		{rules.KindMissingPrerequisite, KindMissingPrerequisite},
		{rules.KindOnceOnly, KindOnceOnly},
		{rules.KindNotBoth, KindNotBoth},
		{rules.KindRerun, KindRerun},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("package rules spells %q, automaton %q", tt.got, tt.want)
		}
	}
}
