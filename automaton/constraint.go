package automaton

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
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

// anyNeed is a precedence with alternatives: one of the labels of mask, and
// the constraint's index in Model.Constraints.
type anyNeed struct {
	mask []uint64
	c    int
}

// runRule is a run constraint compiled: the indexes of A and B (-1: none),
// and its bit of the visit set after the labels' own, open: A visited since
// the last B. The session left A when A is open and the last visit was to
// another label; the visit set's last word holds the index of the last
// label visited, plus one (0: a label no constraint names).
type runRule struct {
	a, b, open int32
	c          int
}

// rules are a model's constraints compiled for stepping: each constrained
// label has an index, a session's visits are a bit set over the indexes
// (then a bit per run constraint and, with runs, a word for the last label
// visited), and each label the sets of labels it needs before it and
// excludes.
type rules struct {
	index map[string]int32
	words int
	runs  []runRule
	runA  [][]int32   // per index: the runs whose A it is
	runB  [][]int32   // per index: the runs whose B it is
	need  [][]uint64  // per index: labels that must have been visited (precedence)
	any   [][]anyNeed // per index: sets of labels one of which must have been visited
	deny  [][]uint64  // per index: labels that must not have been visited (not_both)
	once  []bool      // per index: at most one visit
	// The constraint behind each bit of need and deny, for messages.
	needC, denyC map[[2]int32]int
	onceC        map[int32]int
}

func compileRules(m *Model) *rules { return compileConstraints(m.Constraints) }

func compileConstraints(cs []Constraint) *rules {
	if len(cs) == 0 {
		return nil
	}
	r := &rules{index: map[string]int32{}, needC: map[[2]int32]int{}, denyC: map[[2]int32]int{}, onceC: map[int32]int{}}
	idx := func(l string) int32 {
		if i, ok := r.index[l]; ok {
			return i
		}
		i := int32(len(r.index))
		r.index[l] = i
		return i
	}
	for _, c := range cs {
		idx(c.A)
		if c.B != "" {
			idx(c.B)
		}
		for _, o := range c.Or {
			idx(o)
		}
	}
	n := len(r.index)
	bit := int32(n)
	r.runA, r.runB = make([][]int32, n), make([][]int32, n)
	for ci, c := range cs {
		if c.Kind == ConstraintRun {
			rr := runRule{a: r.index[c.A], b: -1, open: bit, c: ci}
			r.runA[rr.a] = append(r.runA[rr.a], int32(len(r.runs)))
			if c.B != "" {
				rr.b = r.index[c.B]
				r.runB[rr.b] = append(r.runB[rr.b], int32(len(r.runs)))
			}
			r.runs = append(r.runs, rr)
			bit++
		}
	}
	r.words = (int(bit) + 63) / 64
	if len(r.runs) > 0 {
		r.words++ // the last label visited
	}
	r.need = make([][]uint64, n)
	r.any = make([][]anyNeed, n)
	r.deny = make([][]uint64, n)
	r.once = make([]bool, n)
	add := func(sets [][]uint64, at, bit int32) {
		if sets[at] == nil {
			sets[at] = make([]uint64, r.words)
		}
		sets[at][bit/64] |= 1 << (bit % 64)
	}
	for ci, c := range cs {
		a := r.index[c.A]
		switch c.Kind {
		case ConstraintPrecedence:
			b := r.index[c.B]
			if len(c.Or) == 0 {
				add(r.need, b, a)
				r.needC[[2]int32{b, a}] = ci
				break
			}
			mask := make([]uint64, r.words)
			for _, l := range append([]string{c.A}, c.Or...) {
				i := r.index[l]
				mask[i/64] |= 1 << (i % 64)
			}
			r.any[b] = append(r.any[b], anyNeed{mask, ci})
		case ConstraintNotBoth:
			b := r.index[c.B]
			add(r.deny, b, a)
			add(r.deny, a, b)
			r.denyC[[2]int32{b, a}] = ci
			r.denyC[[2]int32{a, b}] = ci
		case ConstraintOnce:
			r.once[a] = true
			r.onceC[a] = ci
		}
	}
	return r
}

// check says whether entering label, after the visits in seen, breaks a
// constraint: the deviation kind and the constraint's index in
// Model.Constraints, or "" and -1. It does not record the visit (see
// visit). It does not allocate.
func (r *rules) check(seen []uint64, label string) (string, int) {
	if r == nil {
		return "", -1
	}
	i, ok := r.index[label]
	if !ok {
		return "", -1
	}
	if r.once[i] && has(seen, i) {
		return KindOnceOnly, r.onceC[i]
	}
	for _, k := range r.runA[i] {
		if rr := r.runs[k]; has(seen, rr.open) && seen[r.words-1] != uint64(i)+1 {
			return KindRerun, rr.c
		}
	}
	if need := r.need[i]; need != nil {
		for w, bits := range need {
			if miss := bits &^ seen[w]; miss != 0 {
				return KindMissingPrerequisite, r.needC[[2]int32{i, int32(w*64 + trailingZeros(miss))}]
			}
		}
	}
	for _, an := range r.any[i] {
		hit := false
		for w, bits := range an.mask {
			if bits&seen[w] != 0 {
				hit = true
				break
			}
		}
		if !hit {
			return KindMissingPrerequisite, an.c
		}
	}
	if deny := r.deny[i]; deny != nil {
		for w, bits := range deny {
			if hit := bits & seen[w]; hit != 0 {
				return KindNotBoth, r.denyC[[2]int32{i, int32(w*64 + trailingZeros(hit))}]
			}
		}
	}
	return "", -1
}

// visit records a visit of label in seen.
func (r *rules) visit(seen []uint64, label string) {
	if r == nil {
		return
	}
	i, ok := r.index[label]
	if !ok {
		if len(r.runs) > 0 {
			seen[r.words-1] = 0
		}
		return
	}
	set(seen, i)
	if len(r.runs) == 0 {
		return
	}
	for _, k := range r.runA[i] {
		set(seen, r.runs[k].open)
	}
	for _, k := range r.runB[i] {
		unset(seen, r.runs[k].open)
	}
	seen[r.words-1] = uint64(i) + 1
}

// carry returns the visits seen, made under r, as visits under to: the
// labels by name, the state of each run constraint both have, and the last
// label visited.
func (r *rules) carry(seen []uint64, to *rules) []uint64 {
	if to == nil {
		return nil
	}
	out := make([]uint64, to.words)
	if r == nil {
		return out
	}
	from := r.names()
	for i, label := range from {
		if j, ok := to.index[label]; ok && has(seen, int32(i)) {
			set(out, j)
		}
	}
	if len(r.runs) == 0 || len(to.runs) == 0 {
		return out
	}
	// A run is the same rule when its labels are: "" for no B.
	label := func(names []string, i int32) string {
		if i < 0 {
			return ""
		}
		return names[i]
	}
	into := to.names()
	for _, rr := range to.runs {
		for _, old := range r.runs {
			if label(from, old.a) == into[rr.a] && label(from, old.b) == label(into, rr.b) && has(seen, old.open) {
				set(out, rr.open)
			}
		}
	}
	if last := seen[r.words-1]; last > 0 {
		if j, ok := to.index[from[last-1]]; ok {
			out[to.words-1] = uint64(j) + 1
		}
	}
	return out
}

// names returns the constrained labels by index.
func (r *rules) names() []string {
	out := make([]string, len(r.index))
	for label, i := range r.index {
		out[i] = label
	}
	return out
}

func has(seen []uint64, i int32) bool { return seen[i/64]&(1<<(i%64)) != 0 }
func set(seen []uint64, i int32)      { seen[i/64] |= 1 << (i % 64) }
func unset(seen []uint64, i int32)    { seen[i/64] &^= 1 << (i % 64) }

func trailingZeros(x uint64) int { return bits.TrailingZeros64(x) }

// PathChecker checks whole paths against constraints, one visit at a time,
// without allocating: the miner tests its edits with it, so that what a
// constraint means is written once, here. It is not safe for concurrent
// use.
type PathChecker struct {
	r    *rules
	seen []uint64
}

// NewPathChecker compiles cs; they need not belong to a model yet.
func NewPathChecker(cs []Constraint) *PathChecker {
	pc := &PathChecker{r: compileConstraints(cs)}
	if pc.r != nil {
		pc.seen = make([]uint64, pc.r.words)
	}
	return pc
}

// Start begins a new path.
func (pc *PathChecker) Start() { clear(pc.seen) }

// Visit enters label and reports whether that keeps every constraint,
// given the visits since Start.
func (pc *PathChecker) Visit(label string) bool {
	kind, _ := pc.r.check(pc.seen, label)
	pc.r.visit(pc.seen, label)
	return kind == ""
}

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
