package automaton

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fsmine/fsmine/automaton/internal/rules"
)

// Constraints over the whole session: what adjacency cannot see. A model
// says which moves may follow a state; a constraint says what a session may
// do given everything it did before, in the style of Declare's templates
// (Pesic & van der Aalst, "A declarative approach for flexible business
// processes management", 2006): B only after A somewhere before it, A at
// most once, A and B not both. The miner records each with the sessions it
// was tested on and the share of them that kept it; check, replay and the
// guard enforce them, each at the step that breaks it.

// Constraint kinds, the Kind of a Constraint.
const (
	// ConstraintPrecedence: a visit of label B only after some visit of
	// label A earlier in the session, or of one of the labels in Or.
	ConstraintPrecedence = "precedence"
	// ConstraintOnce: at most one visit of label A in a session.
	ConstraintOnce = "once"
	// ConstraintNotBoth: no session visits both A and B.
	ConstraintNotBoth = "not_both"
	// ConstraintRun: the visits of label A come in one run: once the
	// session has left A for another label, it enters A again only after a
	// visit of label B (B empty: never). An order looked up again and again
	// in a row, but not after the session moved on to the products, until
	// the next request's confirmation.
	ConstraintRun = "run"
)

// Deviation kinds of constraints, the Kind of a Deviation and the Verdict of
// a Step.
const (
	// KindMissingPrerequisite: the move enters B, but the session has not
	// visited A, which a precedence constraint requires before B.
	KindMissingPrerequisite = "missing_prerequisite"
	// KindOnceOnly: the move enters A a second time, and a once constraint
	// allows one visit.
	KindOnceOnly = "once_only"
	// KindNotBoth: the move enters B, and the session visited A, which a
	// not_both constraint excludes.
	KindNotBoth = "not_both"
	// KindRerun: the move enters A again after the session left it, and a
	// run constraint keeps A's visits in one run (until B).
	KindRerun = "rerun"
)

// Constraint is one rule over whole sessions (see the kinds).
type Constraint struct {
	Kind string `json:"kind"`
	// A and B are labels; B is empty for ConstraintOnce, and may be for
	// ConstraintRun.
	A string `json:"a"`
	B string `json:"b,omitempty"`
	// Or are the other labels a precedence takes instead of A, sorted (B
	// only after A or any of Or: one of several tools that identify the
	// customer, one of several searches before a booking); empty for a
	// single prerequisite and for the other kinds.
	Or []string `json:"or,omitempty"`
	// Support is the number of sessions the rule applies to in the log the
	// model was mined from (precedence: those visiting B; once: visiting A;
	// not_both: visiting A or B; run: leaving A for another label),
	// Confidence the share of them that keep it.
	Support    int     `json:"support"`
	Confidence float64 `json:"confidence"`
}

// String describes the constraint as a reader would say it.
func (c Constraint) String() string {
	switch c.Kind {
	case ConstraintPrecedence:
		if len(c.Or) > 0 {
			return fmt.Sprintf("%s only after %s or %s", c.B, c.A, strings.Join(c.Or, " or "))
		}
		return fmt.Sprintf("%s only after %s", c.B, c.A)
	case ConstraintOnce:
		return fmt.Sprintf("%s at most once", c.A)
	case ConstraintNotBoth:
		return fmt.Sprintf("not both %s and %s", c.A, c.B)
	case ConstraintRun:
		if c.B != "" {
			return fmt.Sprintf("%s in one run until %s", c.A, c.B)
		}
		return fmt.Sprintf("%s in one run", c.A)
	}
	return c.Kind
}

// digestFields are the constraint's fields in the model's digest.
func (c Constraint) digestFields() []string {
	f := []string{"constraint", c.Kind, c.A, c.B, strconv.Itoa(c.Support), strconv.FormatFloat(c.Confidence, 'g', -1, 64)}
	if len(c.Or) > 0 {
		// A run of "or" and the labels: models without alternatives keep
		// their digests.
		f = append(append(f, "or"), c.Or...)
	}
	return f
}

// validConstraints checks the model's constraints: known kinds, labels some
// state carries, B set exactly when the kind has one, and counts in range.
func (m *Model) validConstraints(labels map[string]bool) error {
	for i, c := range m.Constraints {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("invalid model: constraints[%d]: %s", i, fmt.Sprintf(format, args...))
		}
		switch c.Kind {
		case ConstraintPrecedence, ConstraintNotBoth:
			if c.B == "" {
				return bad("%s needs b", c.Kind)
			}
			if c.A == c.B {
				return bad("a and b are both %q", c.A)
			}
		case ConstraintOnce:
			if c.B != "" {
				return bad("once takes no b")
			}
		case ConstraintRun:
			if c.A == c.B {
				return bad("a and b are both %q", c.A)
			}
		}
		if len(c.Or) > 0 && c.Kind != ConstraintPrecedence {
			return bad("%s takes no or", c.Kind)
		}
		for j, o := range c.Or {
			if o == c.A || o == c.B || (j > 0 && o <= c.Or[j-1]) {
				return bad("or must be sorted labels other than a and b, each once")
			}
		}
		switch c.Kind {
		case ConstraintPrecedence, ConstraintNotBoth, ConstraintOnce, ConstraintRun:
		default:
			return bad("unknown kind %q", c.Kind)
		}
		for _, l := range append([]string{c.A, c.B}, c.Or...) {
			if l != "" && (!labels[l] || l == StartID || l == EndID) {
				return bad("label %q is no state's", l)
			}
		}
		if c.Support < 0 || !(c.Confidence >= 0 && c.Confidence <= 1) {
			return bad("support %d, confidence %v: want support >= 0 and confidence 0 to 1", c.Support, c.Confidence)
		}
	}
	return nil
}

// compileConstraints compiles cs for stepping (see package rules).
func compileConstraints(cs []Constraint) *rules.Set {
	rs := make([]rules.Rule, len(cs))
	for i, c := range cs {
		rs[i] = rules.Rule{Kind: c.Kind, A: c.A, B: c.B, Or: c.Or}
	}
	return rules.Compile(rs)
}

// PathChecker checks whole paths against constraints, one visit at a time,
// without allocating: the miner tests its edits with it, so that what a
// constraint means is written once, here. It is not safe for concurrent
// use.
type PathChecker struct {
	r    *rules.Set
	seen []uint64
}

// NewPathChecker compiles cs; they need not belong to a model yet.
func NewPathChecker(cs []Constraint) *PathChecker {
	r := compileConstraints(cs)
	return &PathChecker{r: r, seen: r.Seen()}
}

// Start begins a new path.
func (pc *PathChecker) Start() { clear(pc.seen) }

// Visit enters label and reports whether that keeps every constraint,
// given the visits since Start.
func (pc *PathChecker) Visit(label string) bool {
	kind, _ := pc.r.Check(pc.seen, label)
	pc.r.Visit(pc.seen, label)
	return kind == ""
}

// AppendState appends what the visits since Start left (all that decides
// the next visits' verdicts) to buf. A path that reaches a state another
// path left goes on as that path would: the miner resumes and compares
// states so as not to check an edited path's unchanged parts again.
func (pc *PathChecker) AppendState(buf []uint64) []uint64 { return append(buf, pc.seen...) }

// Resume makes state, from AppendState of a checker of the same
// constraints, the visits since Start. It panics on a state of another
// length.
func (pc *PathChecker) Resume(state []uint64) {
	if len(state) != len(pc.seen) {
		panic("automaton: PathChecker.Resume: a state of other constraints")
	}
	copy(pc.seen, state)
}

// InState says whether the visits since Start left state.
func (pc *PathChecker) InState(state []uint64) bool { return slices.Equal(pc.seen, state) }

// CompareConstraints orders constraints by kind, then labels (A, B, then
// the alternatives), as models list them.
func CompareConstraints(x, y Constraint) int {
	if c := strings.Compare(x.Kind, y.Kind); c != 0 {
		return c
	}
	if c := strings.Compare(x.A, y.A); c != 0 {
		return c
	}
	if c := strings.Compare(x.B, y.B); c != 0 {
		return c
	}
	return slices.Compare(x.Or, y.Or)
}
