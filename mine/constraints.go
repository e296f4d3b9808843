package mine

import (
	"slices"
	"sort"

	"github.com/fsmine/fsmine/automaton"
)

// Constraints that adjacency cannot see (see automaton.Constraint): learned
// from the variants when the miner generalises, each only where the log
// supports it.
//
//   - precedence A, B: every session that visits B visits A before its
//     first B, in at least the support's sessions (MinConstraintSupport, or
//     Options.ConstraintSupport). Of a chain of
//     them only the links are kept (A before C is implied by A before B
//     and B before C).
//   - once A: no session visits A twice, in at least MinOnceSupport
//     sessions.
//   - run A (until B): no session enters A again after leaving it for
//     another label (unless it visited B in between), in at least
//     MinOnceSupport sessions that left A; A's visits in a row are free. B
//     is the label every such return to A in the log passed through (of
//     several, the one visited in most sessions, the rule that denies
//     least); a label visited at most once needs no run rule.
//   - not_both A, B: no session visits both, though each is visited in at
//     least the support's sessions and, were they independent, at
//     least 10 sessions would visit both (the chance of none, about e^-10,
//     is negligible; one action per session makes pairs rarer than chance): a pair too rare to meet says nothing.
//
// Each holds in every session of the log (confidence 1): a rule that the
// log breaks even once is no rule a guard may enforce. Only the
// maxConstraintLabels labels visited in the most sessions are considered,
// which bounds the work by the log's length times that number.

// MinConstraintSupport is the fewest sessions a constraint must hold in.
// By the rule of succession, a rule kept by n sessions out of n is broken
// by the next with a chance of about 1/(n+2): 7% at 12. Chosen on a sweep
// (8, 12, 20, 30) over the agent truth and two real logs (docs/build.md):
// 8 cost held-out fit on 30 sessions of the truth, 20 and 30 gave up
// rejections on the real logs.
const MinConstraintSupport = 12

// support is the fewest sessions a constraint must hold in: the options'
// ConstraintSupport, or MinConstraintSupport.
func (b *builder) support() int {
	if b.opt.ConstraintSupport > 0 {
		return b.opt.ConstraintSupport
	}
	return MinConstraintSupport
}

// MinOnceSupport is the fewest sessions a once constraint must hold in. A
// second visit is often a rare, legitimate thing (a second request with
// the same action), which a few dozen sessions need not show: a once
// learned from 25 sessions of the agent truth denied 1.4% of its held-out
// sessions.
const MinOnceSupport = 50

const maxConstraintLabels = 256

// labelSessions returns, per label, the sessions that visit it (the end
// aside), counted once and kept.
func (b *builder) labelSessions() map[uint32]int {
	if b.labelSess == nil {
		b.labelSess = map[uint32]int{}
		for _, v := range b.vars {
			seen := map[uint32]bool{}
			for _, mv := range v.moves[:len(v.moves)-1] {
				if !seen[mv.label()] {
					seen[mv.label()] = true
					b.labelSess[mv.label()] += v.count
				}
			}
		}
	}
	return b.labelSess
}

// constraints returns the constraints the variants support, sorted.
func (b *builder) constraints() []automaton.Constraint {
	sessions := b.labelSessions()
	total := 0
	for _, v := range b.vars {
		total += v.count
	}
	var labels []uint32
	for l, n := range sessions {
		if n >= b.support() {
			labels = append(labels, l)
		}
	}
	sort.Slice(labels, func(i, j int) bool {
		x, y := labels[i], labels[j]
		if sessions[x] != sessions[y] {
			return sessions[x] > sessions[y]
		}
		return b.rank[x] < b.rank[y]
	})
	if len(labels) > maxConstraintLabels {
		labels = labels[:maxConstraintLabels]
	}
	if len(labels) == 0 {
		return nil
	}
	idx := map[uint32]int{}
	for i, l := range labels {
		idx[l] = i
	}
	n := len(labels)
	before := make([]int, n*n) // [a*n+b]: sessions visiting A before their first B
	both := make([]int, n*n)   // [a*n+b]: sessions visiting both
	twice := make([]int, n)    // sessions visiting the label more than once
	first := make([]int, n)
	visits := make([]int, n)
	runs := newRunStats(n)
	var order []int
	for _, v := range b.vars {
		for i := range first {
			first[i], visits[i] = -1, 0
		}
		order = order[:0]
		for pos, mv := range v.moves[:len(v.moves)-1] {
			i, ok := idx[mv.label()]
			if !ok {
				continue
			}
			if visits[i] == 0 {
				first[i] = pos
				order = append(order, i)
			}
			visits[i]++
		}
		runs.add(v, idx)
		// order lists the labels by first visit: each is after all the
		// ones listed before it.
		for x, a := range order {
			if visits[a] > 1 {
				twice[a] += v.count
			}
			for _, bl := range order[x+1:] {
				before[a*n+bl] += v.count
			}
			for _, bl := range order {
				both[a*n+bl] += v.count
			}
		}
	}
	prec := make([]bool, n*n)
	for a := 0; a < n; a++ {
		for bl := 0; bl < n; bl++ {
			prec[a*n+bl] = a != bl && before[a*n+bl] == sessions[labels[bl]]
		}
	}
	var out []automaton.Constraint
	name := func(i int) string { return b.lg.names[labels[i]] }
	for a := 0; a < n; a++ {
		for bl := 0; bl < n; bl++ {
			if !prec[a*n+bl] {
				continue
			}
			implied := false
			for c := 0; c < n && !implied; c++ {
				implied = c != a && c != bl && prec[a*n+c] && prec[c*n+bl]
			}
			if !implied {
				out = append(out, automaton.Constraint{Kind: automaton.ConstraintPrecedence, A: name(a), B: name(bl), Support: sessions[labels[bl]], Confidence: 1})
			}
		}
	}
	out = append(out, b.eitherPrecedences(labels, idx, sessions, before, prec)...)
	for a := 0; a < n; a++ {
		if twice[a] == 0 && sessions[labels[a]] >= MinOnceSupport {
			out = append(out, automaton.Constraint{Kind: automaton.ConstraintOnce, A: name(a), Support: sessions[labels[a]], Confidence: 1})
			continue
		}
		if twice[a] == 0 || runs.left[a] < MinOnceSupport {
			continue
		}
		c := automaton.Constraint{Kind: automaton.ConstraintRun, A: name(a), Support: runs.left[a], Confidence: 1}
		if runs.rerun[a] > 0 {
			bl := -1
			for x, in := range runs.gap[a] {
				if in && (bl < 0 || sessions[labels[x]] > sessions[labels[bl]]) {
					bl = x
				}
			}
			if bl < 0 {
				continue // some return to A passed through no common label
			}
			c.B = name(bl)
		}
		out = append(out, c)
	}
	for a := 0; a < n; a++ {
		for bl := a + 1; bl < n; bl++ {
			na, nb := sessions[labels[a]], sessions[labels[bl]]
			if both[a*n+bl] > 0 || float64(na)*float64(nb) < 10*float64(total) {
				continue
			}
			x, y := name(a), name(bl)
			if y < x {
				x, y = y, x
			}
			out = append(out, automaton.Constraint{Kind: automaton.ConstraintNotBoth, A: x, B: y, Support: na + nb, Confidence: 1})
		}
	}
	slices.SortFunc(out, automaton.CompareConstraints)
	return out
}

// eitherPrecedences returns, for each label B that no single label always
// precedes, a precedence with one alternative: B only after A1 or A2, where
// every session that visits B visits one of them before its first B (one of
// two tools that identify a customer, one of two searches before a
// booking). Of the labels that precede B in at least a fifth of its
// sessions, the maxAlternatives most frequent are candidates; the pair is
// chosen greedily, first the candidate that precedes B most often, then the
// one that covers most of the sessions left, and kept only when the two
// cover every session. B needs twice the sessions of a single precedence:
// the pairs are many hypotheses, and some cover a few sessions by chance
// (learned from 16 sessions, "the product lookup only after the order or
// the user lookup" denied 9% of the agent truth's held-out sessions; three
// alternatives did the same).
func (b *builder) eitherPrecedences(labels []uint32, idx map[uint32]int, sessions map[uint32]int, before []int, prec []bool) []automaton.Constraint {
	const maxAlternatives = 8
	n := len(labels)
	cands := map[int][]int{} // B -> candidate labels, most frequent first
	for bl := 0; bl < n; bl++ {
		sb := sessions[labels[bl]]
		if sb < 2*b.support() {
			continue // a choice among pairs needs more sessions than one rule
		}
		single := false
		var as []int
		for a := 0; a < n; a++ {
			if prec[a*n+bl] {
				single = true
				break
			}
			if a != bl && 5*before[a*n+bl] >= sb {
				as = append(as, a)
			}
		}
		if single || len(as) < 2 {
			continue
		}
		sort.Slice(as, func(i, j int) bool {
			if before[as[i]*n+bl] != before[as[j]*n+bl] {
				return before[as[i]*n+bl] > before[as[j]*n+bl]
			}
			return as[i] < as[j]
		})
		if len(as) > maxAlternatives {
			as = as[:maxAlternatives]
		}
		cands[bl] = as
	}
	if len(cands) == 0 {
		return nil
	}
	// For each B, the sessions visiting it by which candidates precede its
	// first visit (a bit per candidate).
	type group struct {
		mask  uint8
		count int
	}
	seenBy := map[int]map[uint8]int{}
	pos := make([]int, n)
	for _, v := range b.vars {
		for i := range pos {
			pos[i] = -1
		}
		for p, mv := range v.moves[:len(v.moves)-1] {
			if i, ok := idx[mv.label()]; ok && pos[i] < 0 {
				pos[i] = p
			}
		}
		for bl, as := range cands {
			if pos[bl] < 0 {
				continue
			}
			var mask uint8
			for k, a := range as {
				if pos[a] >= 0 && pos[a] < pos[bl] {
					mask |= 1 << k
				}
			}
			if seenBy[bl] == nil {
				seenBy[bl] = map[uint8]int{}
			}
			seenBy[bl][mask] += v.count
		}
	}
	var out []automaton.Constraint
	name := func(i int) string { return b.lg.names[labels[i]] }
	for bl := 0; bl < n; bl++ {
		as := cands[bl]
		if as == nil {
			continue
		}
		var groups []group
		for m, c := range seenBy[bl] {
			groups = append(groups, group{m, c})
		}
		var chosen uint8
		covered := func(g group) bool { return g.mask&chosen != 0 }
		for len(as) > 0 && countBits(chosen) < 2 {
			bestK, bestN := -1, 0
			for k := range as {
				if chosen&(1<<k) != 0 {
					continue
				}
				gain := 0
				for _, g := range groups {
					if !covered(g) && g.mask&(1<<k) != 0 {
						gain += g.count
					}
				}
				if gain > bestN {
					bestK, bestN = k, gain
				}
			}
			if bestK < 0 {
				break
			}
			chosen |= 1 << bestK
			all := true
			for _, g := range groups {
				all = all && covered(g)
			}
			if all {
				break
			}
		}
		all := true
		for _, g := range groups {
			all = all && covered(g)
		}
		if !all || countBits(chosen) < 2 {
			continue
		}
		var names []string
		for k, a := range as {
			if chosen&(1<<k) != 0 {
				names = append(names, name(a))
			}
		}
		sort.Strings(names)
		out = append(out, automaton.Constraint{Kind: automaton.ConstraintPrecedence, A: names[0], B: name(bl), Or: names[1:],
			Support: sessions[labels[bl]], Confidence: 1})
	}
	return out
}

func countBits(x uint8) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// runStats count, per label, the sessions that left it for another label
// and those that came back to it, and the labels every return passed
// through (for the run constraints).
type runStats struct {
	left, rerun []int
	gap         [][]bool // per label: labels on every way back to it; nil before the first
	none        []bool   // per label: no label is on every way back
	// Scratch per variant.
	last    []int  // per label: position of its last visit, -1 for none
	counted []bool // per label: the variant's left counted
	back    []bool // per label: the variant came back to it
}

func newRunStats(n int) *runStats {
	return &runStats{left: make([]int, n), rerun: make([]int, n), gap: make([][]bool, n), none: make([]bool, n),
		last: make([]int, n), counted: make([]bool, n), back: make([]bool, n)}
}

// add counts the variant v: for each visit of an indexed label A that
// returns to A after other labels, the indexed labels visited in between
// (those whose last visit is after A's) narrow A's gap set.
func (r *runStats) add(v variant, idx map[uint32]int) {
	for i := range r.last {
		r.last[i], r.back[i], r.counted[i] = -1, false, false
	}
	mvs := v.moves[:len(v.moves)-1]
	for pos, mv := range mvs {
		a, ok := idx[mv.label()]
		if !ok {
			continue
		}
		if q := r.last[a]; q >= 0 && q < pos-1 {
			r.back[a] = true
			switch {
			case r.none[a]:
			case r.gap[a] == nil:
				r.gap[a] = make([]bool, len(r.last))
				for x, p := range r.last {
					r.gap[a][x] = p > q
				}
			default:
				any := false
				for x, p := range r.last {
					r.gap[a][x] = r.gap[a][x] && p > q
					any = any || r.gap[a][x]
				}
				r.none[a] = !any
			}
		}
		r.last[a] = pos
	}
	// A was left when a visit of A has another label after it.
	for p := 0; p+1 < len(mvs); p++ {
		a, ok := idx[mvs[p].label()]
		if ok && !r.counted[a] && mvs[p+1].label() != mvs[p].label() {
			r.counted[a] = true
			r.left[a] += v.count
		}
	}
	for a, back := range r.back {
		if back {
			r.rerun[a] += v.count
		}
	}
}
