// Package rules compiles a model's constraints over whole sessions
// (automaton.Constraint) for stepping: the miner's path checker
// (automaton.PathChecker), the conformance checker (automaton/conform) and
// the guard (automaton/guard) share it, so that what a constraint means is
// written once. It imports nothing of automaton; its kinds are spelt as
// automaton spells them (a test in automaton holds them equal).
package rules

import "math/bits"

// Constraint kinds, as automaton.Constraint.Kind spells them.
const (
	Precedence = "precedence"
	Once       = "once"
	NotBoth    = "not_both"
	Run        = "run"
)

// Deviation kinds a broken constraint gives, as automaton spells them.
const (
	KindMissingPrerequisite = "missing_prerequisite"
	KindOnceOnly            = "once_only"
	KindNotBoth             = "not_both"
	KindRerun               = "rerun"
)

// Rule is one constraint as the compiler reads it: the Kind, A, B and Or of
// an automaton.Constraint.
type Rule struct {
	Kind, A, B string
	Or         []string
}

// anyNeed is a precedence with alternatives: one of the labels of mask, and
// the rule's index.
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

// Set is constraints compiled for stepping: each constrained label has an
// index, a session's visits are a bit set over the indexes (then a bit per
// run constraint and, with runs, a word for the last label visited), and
// each label the sets of labels it needs before it and excludes. A nil *Set
// has no constraints: every method accepts it. A Set is never modified once
// compiled and may be shared; the visit sets are the callers'.
type Set struct {
	index map[string]int32
	words int
	runs  []runRule
	runA  [][]int32   // per index: the runs whose A it is
	runB  [][]int32   // per index: the runs whose B it is
	need  [][]uint64  // per index: labels that must have been visited (precedence)
	any   [][]anyNeed // per index: sets of labels one of which must have been visited
	deny  [][]uint64  // per index: labels that must not have been visited (not_both)
	once  []bool      // per index: at most one visit
	// The rule behind each bit of need and deny, for messages.
	needC, denyC map[[2]int32]int
	onceC        map[int32]int
}

// Compile compiles rs; nil when there are none. The indexes Check returns
// are indexes into rs.
func Compile(rs []Rule) *Set {
	if len(rs) == 0 {
		return nil
	}
	r := &Set{index: map[string]int32{}, needC: map[[2]int32]int{}, denyC: map[[2]int32]int{}, onceC: map[int32]int{}}
	idx := func(l string) int32 {
		if i, ok := r.index[l]; ok {
			return i
		}
		i := int32(len(r.index))
		r.index[l] = i
		return i
	}
	for _, c := range rs {
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
	for ci, c := range rs {
		if c.Kind == Run {
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
	for ci, c := range rs {
		a := r.index[c.A]
		switch c.Kind {
		case Precedence:
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
		case NotBoth:
			b := r.index[c.B]
			add(r.deny, b, a)
			add(r.deny, a, b)
			r.denyC[[2]int32{b, a}] = ci
			r.denyC[[2]int32{a, b}] = ci
		case Once:
			r.once[a] = true
			r.onceC[a] = ci
		}
	}
	return r
}

// Seen returns an empty visit set for r: nil for a nil r.
func (r *Set) Seen() []uint64 {
	if r == nil {
		return nil
	}
	return make([]uint64, r.words)
}

// Check says whether entering label, after the visits in seen, breaks a
// constraint: the deviation kind and the rule's index, or "" and -1. It
// does not record the visit (see Visit). It does not allocate.
func (r *Set) Check(seen []uint64, label string) (string, int) {
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

// Visit records a visit of label in seen.
func (r *Set) Visit(seen []uint64, label string) {
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

// Carry returns the visits seen, made under r, as visits under to: the
// labels by name, the state of each run constraint both have, and the last
// label visited.
func (r *Set) Carry(seen []uint64, to *Set) []uint64 {
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
func (r *Set) names() []string {
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
