package automaton

import (
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton/internal/rules"
)

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

// loadGuardFixture is the guard's returns flow (automaton/guard's tests
// describe it).
func loadGuardFixture(t testing.TB) *Model {
	t.Helper()
	m, err := Load("guard/testdata/returns.json")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// constrainedFixture is the guard fixture with constraints: a hand-off
// only after the order lookup, the identification at most once, and never
// both a hand-off and a return.
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

// runModel is a lookup (o) that may repeat, a product lookup (p), a
// confirmation (c) and an action (act) that may start a second request,
// with the constraint that o's visits come in one run until c.
func runModel(t *testing.T, until string) *Model {
	t.Helper()
	tr := func(from, to string) Transition { return Transition{From: from, Event: "ok", To: to, Count: 1} }
	m := sampleModel(t, nil, Transition{From: StartID, To: "o", Count: 1}, tr("o", "o"), tr("o", "p"), tr("p", "o"), tr("o", "c"),
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
