package automaton

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultAlpha is the family-wise significance level Compare uses when
// DiffOptions.Alpha is zero.
const DefaultAlpha = 0.01

// DiffOptions tunes Compare.
type DiffOptions struct {
	// Alpha is the family-wise significance level of the share and outflow
	// tests, in (0, 1); zero means DefaultAlpha. Each family of tests (one
	// z-test per shared transition, one chi-square test per shared state) is
	// Bonferroni-corrected: a test is significant when its p-value is below
	// Alpha divided by the number of tests in its family.
	Alpha float64
}

// Diff is the structural and statistical difference between two models, as
// Compare finds it. Every slice is non-nil and sorted (states by id with
// StartID first and EndID last, transitions by from, event, to, loops by
// their state set), so that a Diff encodes to the same bytes for the same
// pair of models. Only significant share and outflow changes are listed:
// counts that moved by sampling noise alone are not differences.
type Diff struct {
	Old        Side    `json:"old"`
	New        Side    `json:"new"`
	SameDigest bool    `json:"same_digest"`
	Alpha      float64 `json:"alpha"`
	// Correction names the multiple-testing correction: "bonferroni".
	Correction string `json:"correction"`
	// TransitionTests is how many transitions present in both models were
	// z-tested, TransitionThreshold the p-value below which one counts as
	// changed (Alpha / TransitionTests). StateTests and StateThreshold are the
	// same for the chi-square tests of whole outflow distributions.
	TransitionTests     int     `json:"transition_tests"`
	TransitionThreshold float64 `json:"transition_threshold"`
	StateTests          int     `json:"state_tests"`
	StateThreshold      float64 `json:"state_threshold"`

	StatesAdded        []StateRef      `json:"states_added"`
	StatesRemoved      []StateRef      `json:"states_removed"`
	StatesRelabeled    []Relabel       `json:"states_relabeled"`
	TransitionsAdded   []TransitionRef `json:"transitions_added"`
	TransitionsRemoved []TransitionRef `json:"transitions_removed"`
	ShareChanges       []ShareChange   `json:"share_changes"`
	OutflowShifts      []OutflowShift  `json:"outflow_shifts"`
	RareFlips          []RareFlip      `json:"rare_flips"`
	// GeneralizedFlips are transitions in both models that no session took
	// in one (see Transition.Generalized) and sessions took in the other,
	// or generalised by another kind.
	GeneralizedFlips []GeneralizedFlip `json:"generalized_flips"`
	Loops            []LoopChange      `json:"loops"`
	Trunk            *TrunkChange      `json:"trunk"`
	// ConstraintsAdded and ConstraintsRemoved are the constraints (see
	// Constraint) one model has and the other has not, matched by kind and
	// labels; left out of the JSON when there are none.
	ConstraintsAdded   []Constraint `json:"constraints_added,omitempty"`
	ConstraintsRemoved []Constraint `json:"constraints_removed,omitempty"`
	// ArgsAdded and ArgsRemoved are the argument rules (see ArgRule) one
	// model has and the other has not, matched by tool, argument, kind,
	// value hashes and From (a rule whose values changed is one removed
	// and one added); left out of the JSON when there are none.
	ArgsAdded   []ArgRule `json:"args_added,omitempty"`
	ArgsRemoved []ArgRule `json:"args_removed,omitempty"`
	// StateChanges are the states in both models whose run cap (MaxRun)
	// or slot fields differ; BackEdgeFlips the transitions in both marked a
	// back edge in one only (a loop's cap counts the marked moves); By the
	// change of a conditioned model's sub-maps. What check and the guard
	// enforce, as the digest covers it; each left out of the JSON when
	// there is none.
	StateChanges  []StateChange  `json:"state_changes,omitempty"`
	BackEdgeFlips []BackEdgeFlip `json:"back_edge_flips,omitempty"`
	By            *ByChange      `json:"by,omitempty"`
}

// StateChange is a state in both models whose run cap or slot fields
// differ.
type StateChange struct {
	ID        string   `json:"id"`
	Label     string   `json:"label"`
	OldMaxRun int      `json:"old_max_run"`
	NewMaxRun int      `json:"new_max_run"`
	OldFields []string `json:"old_fields"`
	NewFields []string `json:"new_fields"`
}

// BackEdgeFlip is a transition in both models marked a back edge in one
// only.
type BackEdgeFlip struct {
	From    string `json:"from"`
	Event   string `json:"event"`
	To      string `json:"to"`
	OldBack bool   `json:"old_back_edge"`
	NewBack bool   `json:"new_back_edge"`
}

// ByChange is how two models' conditioning differs: the field, mode or
// least sessions of a sub-map ("" and 0 for a model without one), and
// the values whose sub-map one model has and the other has not, or both
// have with other behaviour (a difference Compare finds between the two
// sub-maps).
type ByChange struct {
	OldField       string   `json:"old_field"`
	NewField       string   `json:"new_field"`
	OldMode        string   `json:"old_mode"`
	NewMode        string   `json:"new_mode"`
	OldMinSessions int      `json:"old_min_sessions"`
	NewMinSessions int      `json:"new_min_sessions"`
	Added          []string `json:"added"`
	Removed        []string `json:"removed"`
	Changed        []string `json:"changed"`
}

// count is how many differences c makes: each value, and the field, mode
// or least sessions as one.
func (c *ByChange) count() int {
	if c == nil {
		return 0
	}
	n := len(c.Added) + len(c.Removed) + len(c.Changed)
	if c.OldField != c.NewField || c.OldMode != c.NewMode || c.OldMinSessions != c.NewMinSessions {
		n++
	}
	return n
}

// Side identifies one of the two models of a Diff. Digest is the model's
// stored digest, or its computed one when the file has none.
type Side struct {
	Version  int    `json:"version"`
	Digest   string `json:"digest"`
	Sessions int    `json:"sessions"`
}

// StateRef is a state that exists in one model only.
type StateRef struct {
	ID     string `json:"id"`
	Label  string `json:"label"`
	Visits int    `json:"visits"`
}

// Relabel is a state whose id is in both models with different labels.
type Relabel struct {
	ID       string `json:"id"`
	OldLabel string `json:"old_label"`
	NewLabel string `json:"new_label"`
}

// TransitionRef is a transition that exists in one model only, with its
// count and share of its source's outflow in that model.
type TransitionRef struct {
	From  string  `json:"from"`
	Event string  `json:"event"`
	To    string  `json:"to"`
	Count int     `json:"count"`
	Share float64 `json:"share"`
	Rare  bool    `json:"rare"`
	// Generalized is the transition's kind of generalisation, when no
	// session took it.
	Generalized string `json:"generalized,omitempty"`
}

// GeneralizedFlip is a transition in both models whose Generalized mark
// differs: Old and New are the kinds, "" where sessions took it.
type GeneralizedFlip struct {
	From     string `json:"from"`
	Event    string `json:"event"`
	To       string `json:"to"`
	Old      string `json:"old"`
	New      string `json:"new"`
	OldCount int    `json:"old_count"`
	NewCount int    `json:"new_count"`
}

// ShareChange is a transition in both models whose share of its source's
// outflow changed significantly: a two-proportion z-test of
// OldCount/OldOutflow against NewCount/NewOutflow gave P below the
// Diff's TransitionThreshold. Z is positive when the share grew.
type ShareChange struct {
	From       string  `json:"from"`
	Event      string  `json:"event"`
	To         string  `json:"to"`
	OldCount   int     `json:"old_count"`
	NewCount   int     `json:"new_count"`
	OldOutflow int     `json:"old_outflow"`
	NewOutflow int     `json:"new_outflow"`
	OldShare   float64 `json:"old_share"`
	NewShare   float64 `json:"new_share"`
	Z          float64 `json:"z"`
	P          float64 `json:"p"`
}

// OutflowShift is a state in both models whose distribution over outgoing
// transitions (the union of both models' edges out of it) changed
// significantly: a chi-square test of homogeneity on the 2 x k table of
// counts gave P below the Diff's StateThreshold. Edges whose expected count
// is below 5 in either model are pooled into one column before the test.
type OutflowShift struct {
	State      string  `json:"state"`
	OldOutflow int     `json:"old_outflow"`
	NewOutflow int     `json:"new_outflow"`
	Chi2       float64 `json:"chi2"`
	DF         int     `json:"df"`
	P          float64 `json:"p"`
}

// RareFlip is a transition in both models that is rare in one and common in
// the other. P is the share test's p-value, so a reader can tell a flip
// across the rare threshold by noise from a real change.
type RareFlip struct {
	From     string  `json:"from"`
	Event    string  `json:"event"`
	To       string  `json:"to"`
	OldRare  bool    `json:"old_rare"`
	NewRare  bool    `json:"new_rare"`
	OldCount int     `json:"old_count"`
	NewCount int     `json:"new_count"`
	OldShare float64 `json:"old_share"`
	NewShare float64 `json:"new_share"`
	P        float64 `json:"p"`
}

// Loop changes, as LoopChange.Change.
const (
	LoopAppeared    = "appeared"
	LoopDisappeared = "disappeared"
	LoopReshaped    = "reshaped"
	LoopGrew        = "grew"
	LoopShrank      = "shrank"
)

// LoopChange is a loop that appeared, disappeared, was reshaped (states
// joined or left it), grew (its max or p95 iterations rose) or shrank
// (neither rose and one fell). Loops are matched by their sorted state set;
// loops left unmatched are then paired by the most states in common, so a
// component that gained or lost a state reads as one reshaped loop rather
// than as one that disappeared and one that appeared. States is the loop's
// sorted state set (the old one for a disappeared loop); Joined and Left
// list the states a reshaped loop gained and lost, and are empty
// otherwise. Old is nil for an appeared loop, New for a disappeared one.
type LoopChange struct {
	States []string   `json:"states"`
	Change string     `json:"change"`
	Joined []string   `json:"joined"`
	Left   []string   `json:"left"`
	Old    *LoopStats `json:"old"`
	New    *LoopStats `json:"new"`
}

// LoopStats are the counted facts of a loop in one model.
type LoopStats struct {
	Count         int `json:"count"`
	Sessions      int `json:"sessions"`
	MaxIterations int `json:"max_iterations"`
	P95Iterations int `json:"p95_iterations"`
}

// TrunkChange holds both models' trunks when they differ.
type TrunkChange struct {
	Old []string `json:"old"`
	New []string `json:"new"`
}

// Empty reports whether d holds no structural change (states, transitions,
// labels, rare marks, loops, trunk) and no significant share or outflow
// change. Two models mined from different samples of the same behaviour
// give an empty Diff even though their counts and digests differ.
func (d *Diff) Empty() bool {
	return len(d.StatesAdded) == 0 && len(d.StatesRemoved) == 0 &&
		len(d.StatesRelabeled) == 0 &&
		len(d.TransitionsAdded) == 0 && len(d.TransitionsRemoved) == 0 &&
		len(d.ShareChanges) == 0 && len(d.OutflowShifts) == 0 &&
		len(d.RareFlips) == 0 && len(d.GeneralizedFlips) == 0 && len(d.Loops) == 0 && d.Trunk == nil &&
		len(d.ConstraintsAdded) == 0 && len(d.ConstraintsRemoved) == 0 &&
		len(d.ArgsAdded) == 0 && len(d.ArgsRemoved) == 0 &&
		len(d.StateChanges) == 0 && len(d.BackEdgeFlips) == 0 && d.By == nil
}

// Differences counts what d reports: every item of its lists, and a changed
// trunk as one.
func (d *Diff) Differences() int {
	n := len(d.StatesAdded) + len(d.StatesRemoved) + len(d.StatesRelabeled) +
		len(d.TransitionsAdded) + len(d.TransitionsRemoved) + len(d.ShareChanges) +
		len(d.OutflowShifts) + len(d.RareFlips) + len(d.GeneralizedFlips) + len(d.Loops) +
		len(d.ConstraintsAdded) + len(d.ConstraintsRemoved) + len(d.ArgsAdded) + len(d.ArgsRemoved) +
		len(d.StateChanges) + len(d.BackEdgeFlips) + d.By.count()
	if d.Trunk != nil {
		n++
	}
	return n
}

// Summary is one line for people: "14 differences: 1 state added, 2
// transitions added, ..., trunk changed", or "no differences".
func (d *Diff) Summary() string {
	var parts []string
	add := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n, many))
		}
	}
	add(len(d.StatesAdded), "state added", "states added")
	add(len(d.StatesRemoved), "state removed", "states removed")
	add(len(d.StatesRelabeled), "state relabeled", "states relabeled")
	add(len(d.TransitionsAdded), "transition added", "transitions added")
	add(len(d.TransitionsRemoved), "transition removed", "transitions removed")
	add(len(d.ShareChanges), "share change", "share changes")
	add(len(d.OutflowShifts), "outflow shift", "outflow shifts")
	add(len(d.RareFlips), "rare flip", "rare flips")
	add(len(d.GeneralizedFlips), "generalised flip", "generalised flips")
	add(len(d.Loops), "loop changed", "loops changed")
	add(len(d.ConstraintsAdded), "constraint added", "constraints added")
	add(len(d.ConstraintsRemoved), "constraint removed", "constraints removed")
	add(len(d.ArgsAdded), "argument rule added", "argument rules added")
	add(len(d.ArgsRemoved), "argument rule removed", "argument rules removed")
	add(len(d.StateChanges), "state's run cap or slot fields changed", "states' run caps or slot fields changed")
	add(len(d.BackEdgeFlips), "back edge flip", "back edge flips")
	add(d.By.count(), "sub-map change", "sub-map changes")
	if d.Trunk != nil {
		parts = append(parts, "trunk changed")
	}
	switch n := d.Differences(); n {
	case 0:
		return "no differences"
	case 1:
		return "1 difference: " + strings.Join(parts, ", ")
	default:
		return fmt.Sprintf("%d differences: %s", n, strings.Join(parts, ", "))
	}
}

// edgeKey names a transition by from, event, to.
type edgeKey struct{ from, event, to string }

// Compare returns the difference from old to new. States are matched by id,
// transitions by (from, event, to), loops by their sorted state set and then
// by the most states in common (see LoopChange). Shares are recomputed from
// counts (a transition's count over the summed counts out of its source), so
// a stale Prob field cannot mislead the tests. Compare does not change the
// models' content and its result does not depend on the order of their
// slices; like every lookup, it indexes a model that was not indexed yet
// (Read, Validate and the miner return indexed models).
func Compare(old, new *Model, opt DiffOptions) *Diff {
	alpha := opt.Alpha
	if alpha == 0 {
		alpha = DefaultAlpha
	}
	d := &Diff{
		Old:                side(old),
		New:                side(new),
		Alpha:              alpha,
		Correction:         "bonferroni",
		StatesAdded:        []StateRef{},
		StatesRemoved:      []StateRef{},
		StatesRelabeled:    []Relabel{},
		TransitionsAdded:   []TransitionRef{},
		TransitionsRemoved: []TransitionRef{},
		ShareChanges:       []ShareChange{},
		OutflowShifts:      []OutflowShift{},
		RareFlips:          []RareFlip{},
		GeneralizedFlips:   []GeneralizedFlip{},
		Loops:              []LoopChange{},
	}
	d.SameDigest = d.Old.Digest == d.New.Digest
	d.ConstraintsAdded, d.ConstraintsRemoved = constraintChanges(old.Constraints, new.Constraints)
	d.ArgsAdded, d.ArgsRemoved = argChanges(old.Args, new.Args)

	// States.
	oldStates := make(map[string]State, len(old.States))
	for _, s := range old.States {
		oldStates[s.ID] = s
	}
	newStates := make(map[string]State, len(new.States))
	for _, s := range new.States {
		newStates[s.ID] = s
		o, ok := oldStates[s.ID]
		switch {
		case !ok:
			d.StatesAdded = append(d.StatesAdded, StateRef{s.ID, s.Label, s.Visits})
		case o.Label != s.Label:
			d.StatesRelabeled = append(d.StatesRelabeled, Relabel{s.ID, o.Label, s.Label})
		}
		if ok && (o.MaxRun != s.MaxRun || !slices.Equal(o.Fields, s.Fields)) {
			d.StateChanges = append(d.StateChanges, StateChange{s.ID, s.Label, o.MaxRun, s.MaxRun, o.Fields, s.Fields})
		}
	}
	for _, s := range old.States {
		if _, ok := newStates[s.ID]; !ok {
			d.StatesRemoved = append(d.StatesRemoved, StateRef{s.ID, s.Label, s.Visits})
		}
	}

	byID := func(a, b StateRef) int { return CompareIDs(a.ID, b.ID) }
	slices.SortFunc(d.StatesAdded, byID)
	slices.SortFunc(d.StatesRemoved, byID)
	slices.SortFunc(d.StatesRelabeled, func(a, b Relabel) int { return CompareIDs(a.ID, b.ID) })
	slices.SortFunc(d.StateChanges, func(a, b StateChange) int { return CompareIDs(a.ID, b.ID) })
	d.By = byChange(old, new, opt)

	// Transitions.
	oldOut, newOut := outflows(old), outflows(new)
	oldEdges := edges(old)
	newEdges := edges(new)
	type pair struct {
		key      edgeKey
		old, new *Transition
	}
	var shared []pair
	for _, t := range sortedEdges(newEdges) {
		k := edgeKey{t.From, t.Event, t.To}
		if o, ok := oldEdges[k]; ok {
			shared = append(shared, pair{k, o, t})
			continue
		}
		d.TransitionsAdded = append(d.TransitionsAdded, ref(t, newOut[t.From]))
	}
	for _, t := range sortedEdges(oldEdges) {
		if _, ok := newEdges[edgeKey{t.From, t.Event, t.To}]; !ok {
			d.TransitionsRemoved = append(d.TransitionsRemoved, ref(t, oldOut[t.From]))
		}
	}
	for _, p := range shared {
		if oldOut[p.key.from] > 0 && newOut[p.key.from] > 0 {
			d.TransitionTests++
		}
	}
	d.TransitionThreshold = threshold(alpha, d.TransitionTests)
	for _, p := range shared {
		n1, n2 := oldOut[p.key.from], newOut[p.key.from]
		z, pv := twoProportionZ(p.old.Count, n1, p.new.Count, n2)
		s1, s2 := share(p.old.Count, n1), share(p.new.Count, n2)
		if n1 > 0 && n2 > 0 && pv < d.TransitionThreshold {
			d.ShareChanges = append(d.ShareChanges, ShareChange{
				From: p.key.from, Event: p.key.event, To: p.key.to,
				OldCount: p.old.Count, NewCount: p.new.Count,
				OldOutflow: n1, NewOutflow: n2,
				OldShare: s1, NewShare: s2,
				Z: z, P: pv,
			})
		}
		if p.old.Generalized != p.new.Generalized {
			d.GeneralizedFlips = append(d.GeneralizedFlips, GeneralizedFlip{
				From: p.key.from, Event: p.key.event, To: p.key.to,
				Old: p.old.Generalized, New: p.new.Generalized,
				OldCount: p.old.Count, NewCount: p.new.Count,
			})
		}
		if p.old.BackEdge != p.new.BackEdge {
			d.BackEdgeFlips = append(d.BackEdgeFlips, BackEdgeFlip{p.key.from, p.key.event, p.key.to, p.old.BackEdge, p.new.BackEdge})
		}
		if p.old.Rare != p.new.Rare {
			d.RareFlips = append(d.RareFlips, RareFlip{
				From: p.key.from, Event: p.key.event, To: p.key.to,
				OldRare: p.old.Rare, NewRare: p.new.Rare,
				OldCount: p.old.Count, NewCount: p.new.Count,
				OldShare: s1, NewShare: s2, P: pv,
			})
		}
	}

	// Whole outflow distributions of the states in both models.
	type test struct {
		state string
		chi2  float64
		df    int
		p     float64
	}
	var tests []test
	for _, id := range sortedIDs(oldStates) {
		if _, ok := newStates[id]; !ok {
			continue
		}
		oldRow, newRow := outflowRows(old.Out(id), new.Out(id))
		chi2, df, p, ok := chiSquareHomogeneity(oldRow, newRow)
		if ok {
			tests = append(tests, test{id, chi2, df, p})
		}
	}
	d.StateTests = len(tests)
	d.StateThreshold = threshold(alpha, d.StateTests)
	for _, t := range tests {
		if t.p < d.StateThreshold {
			d.OutflowShifts = append(d.OutflowShifts, OutflowShift{
				State: t.state, OldOutflow: oldOut[t.state], NewOutflow: newOut[t.state],
				Chi2: t.chi2, DF: t.df, P: t.p,
			})
		}
	}

	d.Loops = compareLoops(old.Loops, new.Loops)
	if !slices.Equal(old.Trunk, new.Trunk) {
		d.Trunk = &TrunkChange{Old: nonNil(slices.Clone(old.Trunk)), New: nonNil(slices.Clone(new.Trunk))}
	}
	return d
}

func side(m *Model) Side {
	dg := m.Digest
	if dg == "" {
		dg = m.ComputeDigest()
	}
	return Side{Version: m.Version, Digest: dg, Sessions: m.Source.Sessions}
}

// threshold is the Bonferroni-corrected level for n tests; with no test it
// is alpha itself.
func threshold(alpha float64, n int) float64 {
	if n <= 1 {
		return alpha
	}
	return alpha / float64(n)
}

func share(count, outflow int) float64 {
	if outflow == 0 {
		return 0
	}
	return float64(count) / float64(outflow)
}

func ref(t *Transition, outflow int) TransitionRef {
	return TransitionRef{t.From, t.Event, t.To, t.Count, share(t.Count, outflow), t.Rare, t.Generalized}
}

// outflows sums the counts out of every state.
func outflows(m *Model) map[string]int {
	out := make(map[string]int, len(m.States))
	for _, t := range m.Transitions {
		out[t.From] += t.Count
	}
	return out
}

func edges(m *Model) map[edgeKey]*Transition {
	es := make(map[edgeKey]*Transition, len(m.Transitions))
	for i := range m.Transitions {
		t := &m.Transitions[i]
		es[edgeKey{t.From, t.Event, t.To}] = t
	}
	return es
}

// CompareIDs orders state ids as model files do: StartID first, EndID last,
// the rest by byte order. It returns -1, 0 or +1.
func CompareIDs(a, b string) int {
	rank := func(id string) int {
		switch id {
		case StartID:
			return 0
		case EndID:
			return 2
		}
		return 1
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	return strings.Compare(a, b)
}

// CompareEdges orders transitions as model files do: by from (CompareIDs),
// event, then to (CompareIDs).
func CompareEdges(a, b *Transition) int {
	if c := CompareIDs(a.From, b.From); c != 0 {
		return c
	}
	if c := strings.Compare(a.Event, b.Event); c != 0 {
		return c
	}
	return CompareIDs(a.To, b.To)
}

func sortedEdges(es map[edgeKey]*Transition) []*Transition {
	ts := make([]*Transition, 0, len(es))
	for _, t := range es {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, CompareEdges)
	return ts
}

func sortedIDs(states map[string]State) []string {
	ids := make([]string, 0, len(states))
	for id := range states {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, CompareIDs)
	return ids
}

// outflowRows lines up the counts of the union of both models' edges out of
// one state, in (event, to) order.
func outflowRows(oldTs, newTs []*Transition) (oldRow, newRow []int) {
	type col struct{ event, to string }
	counts := make(map[col][2]int)
	for _, t := range oldTs {
		c := counts[col{t.Event, t.To}]
		c[0] += t.Count
		counts[col{t.Event, t.To}] = c
	}
	for _, t := range newTs {
		c := counts[col{t.Event, t.To}]
		c[1] += t.Count
		counts[col{t.Event, t.To}] = c
	}
	cols := make([]col, 0, len(counts))
	for c := range counts {
		cols = append(cols, c)
	}
	sort.Slice(cols, func(i, j int) bool {
		if cols[i].event != cols[j].event {
			return cols[i].event < cols[j].event
		}
		return CompareIDs(cols[i].to, cols[j].to) < 0
	})
	for _, c := range cols {
		oldRow = append(oldRow, counts[c][0])
		newRow = append(newRow, counts[c][1])
	}
	return oldRow, newRow
}

func compareLoops(old, new []Loop) []LoopChange {
	type loop struct {
		key    string
		states []string // sorted
		stats  *LoopStats
	}
	prep := func(ls []Loop) []loop {
		out := make([]loop, 0, len(ls))
		seen := map[string]bool{}
		for _, l := range ls {
			states := nonNil(slices.Clone(l.States))
			slices.SortFunc(states, CompareIDs)
			states = slices.Compact(states)
			k := strings.Join(states, "\x00")
			if seen[k] {
				continue // an invalid model may list a loop twice
			}
			seen[k] = true
			out = append(out, loop{k, states, &LoopStats{l.Count, l.Sessions, l.MaxIterations, l.P95Iterations}})
		}
		slices.SortFunc(out, func(a, b loop) int { return strings.Compare(a.key, b.key) })
		return out
	}
	olds, news := prep(old), prep(new)
	out := []LoopChange{}
	change := func(states []string, kind string, joined, left []string, o, n *LoopStats) {
		out = append(out, LoopChange{states, kind, nonNil(joined), nonNil(left), o, n})
	}
	iterations := func(o, n *LoopStats) string {
		switch {
		case n.MaxIterations > o.MaxIterations || n.P95Iterations > o.P95Iterations:
			return LoopGrew
		case n.MaxIterations < o.MaxIterations || n.P95Iterations < o.P95Iterations:
			return LoopShrank
		}
		return ""
	}

	// Exact matches first.
	oldUsed, newUsed := make([]bool, len(olds)), make([]bool, len(news))
	for i, o := range olds {
		for j, n := range news {
			if !newUsed[j] && o.key == n.key {
				oldUsed[i], newUsed[j] = true, true
				if kind := iterations(o.stats, n.stats); kind != "" {
					change(n.states, kind, nil, nil, o.stats, n.stats)
				}
				break
			}
		}
	}
	// Then the pairs with the most states in common, greedily; ties go to
	// the earlier old, then new, loop in key order.
	type pair struct{ i, j, common int }
	var pairs []pair
	for i, o := range olds {
		if oldUsed[i] {
			continue
		}
		for j, n := range news {
			if newUsed[j] {
				continue
			}
			if c := len(intersect(o.states, n.states)); c > 0 {
				pairs = append(pairs, pair{i, j, c})
			}
		}
	}
	sort.SliceStable(pairs, func(a, b int) bool { return pairs[a].common > pairs[b].common })
	for _, p := range pairs {
		if oldUsed[p.i] || newUsed[p.j] {
			continue
		}
		oldUsed[p.i], newUsed[p.j] = true, true
		o, n := olds[p.i], news[p.j]
		change(n.states, LoopReshaped, minus(n.states, o.states), minus(o.states, n.states), o.stats, n.stats)
	}
	for j, n := range news {
		if !newUsed[j] {
			change(n.states, LoopAppeared, nil, nil, nil, n.stats)
		}
	}
	for i, o := range olds {
		if !oldUsed[i] {
			change(o.states, LoopDisappeared, nil, nil, o.stats, nil)
		}
	}
	slices.SortStableFunc(out, func(a, b LoopChange) int {
		return slices.CompareFunc(a.States, b.States, CompareIDs)
	})
	return out
}

// intersect returns the ids in both sorted lists, sorted.
func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, ok := slices.BinarySearchFunc(b, x, CompareIDs); ok {
			out = append(out, x)
		}
	}
	return out
}

// minus returns the ids of sorted a that are not in sorted b, sorted.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, ok := slices.BinarySearchFunc(b, x, CompareIDs); !ok {
			out = append(out, x)
		}
	}
	return out
}

// twoProportionZ is the pooled two-proportion z-test of x1 successes in n1
// trials against x2 in n2: z = (p2 - p1) / sqrt(p(1-p)(1/n1 + 1/n2)) with
// p = (x1+x2)/(n1+n2), and the two-sided p-value erfc(|z|/sqrt 2) of the
// normal approximation. It returns z = 0 and p = 1 when either n is zero or
// both proportions are 0 or both 1, where there is nothing to test.
func twoProportionZ(x1, n1, x2, n2 int) (z, p float64) {
	if n1 <= 0 || n2 <= 0 {
		return 0, 1
	}
	p1 := float64(x1) / float64(n1)
	p2 := float64(x2) / float64(n2)
	pool := float64(x1+x2) / float64(n1+n2)
	se := math.Sqrt(pool * (1 - pool) * (1/float64(n1) + 1/float64(n2)))
	if se == 0 || math.IsNaN(se) {
		return 0, 1
	}
	z = (p2 - p1) / se
	if math.IsNaN(z) || math.IsInf(z, 0) {
		return 0, 1
	}
	return z, math.Erfc(math.Abs(z) / math.Sqrt2)
}

// chiSquareHomogeneity is Pearson's chi-square test that two rows of counts
// over the same columns come from one distribution: the sum over cells of
// (observed - expected)^2 / expected, with df = columns - 1, and the p-value
// from the chi-square survival function (the regularized upper incomplete
// gamma function). Columns empty in both rows are dropped; columns whose
// expected count is below 5 in either row are pooled into one, the usual
// guard for the approximation (Cochran 1954). ok is false when fewer than
// two columns remain or a row is all zero: there is nothing to test. It
// panics if the rows differ in length.
func chiSquareHomogeneity(row1, row2 []int) (chi2 float64, df int, p float64, ok bool) {
	if len(row1) != len(row2) {
		panic("automaton: chiSquareHomogeneity rows differ in length")
	}
	var n1, n2 int
	for i := range row1 {
		n1 += row1[i]
		n2 += row2[i]
	}
	if n1 == 0 || n2 == 0 {
		return 0, 0, 1, false
	}
	n := float64(n1 + n2)
	f1, f2 := float64(n1)/n, float64(n2)/n
	var a, b []int
	pooledA, pooledB, pooled := 0, 0, false
	for i := range row1 {
		col := float64(row1[i] + row2[i])
		switch {
		case col == 0:
		case col*f1 < 5 || col*f2 < 5:
			pooledA += row1[i]
			pooledB += row2[i]
			pooled = true
		default:
			a = append(a, row1[i])
			b = append(b, row2[i])
		}
	}
	if pooled {
		a = append(a, pooledA)
		b = append(b, pooledB)
	}
	if len(a) < 2 {
		return 0, 0, 1, false
	}
	for i := range a {
		col := float64(a[i] + b[i])
		e1, e2 := col*f1, col*f2
		chi2 += (float64(a[i])-e1)*(float64(a[i])-e1)/e1 + (float64(b[i])-e2)*(float64(b[i])-e2)/e2
	}
	if math.IsNaN(chi2) || math.IsInf(chi2, 0) {
		return 0, 0, 1, false // counts beyond float64's precision
	}
	df = len(a) - 1
	return chi2, df, chiSquareSurvival(chi2, df), true
}

// chiSquareSurvival returns P(X >= x) for X chi-square distributed with df
// degrees of freedom. It panics if df < 1.
func chiSquareSurvival(x float64, df int) float64 {
	if df < 1 {
		panic("automaton: chiSquareSurvival needs df >= 1")
	}
	if x <= 0 {
		return 1
	}
	return distuv.ChiSquared{K: float64(df)}.Survival(x)
}

// constraintChanges returns the constraints of new that old has not and
// those of old that new has not, matched by kind and labels, sorted.
func constraintChanges(old, new []Constraint) (added, removed []Constraint) {
	type key struct{ kind, a, b, or string }
	k := func(c Constraint) key { return key{c.Kind, c.A, c.B, strings.Join(c.Or, "\x00")} }
	in := func(cs []Constraint) map[key]bool {
		m := make(map[key]bool, len(cs))
		for _, c := range cs {
			m[k(c)] = true
		}
		return m
	}
	o, n := in(old), in(new)
	for _, c := range new {
		if !o[k(c)] {
			added = append(added, c)
		}
	}
	for _, c := range old {
		if !n[k(c)] {
			removed = append(removed, c)
		}
	}
	slices.SortFunc(added, CompareConstraints)
	slices.SortFunc(removed, CompareConstraints)
	return added, removed
}

// byChange is how new's conditioning differs from old's, nil when it does
// not: a value's sub-maps differ when Compare finds a difference between
// them (counts by its tests, not by sampling noise), argument rules aside
// (the sub-maps share the models' own, which Compare lists once).
func byChange(old, new *Model, opt DiffOptions) *ByChange {
	if old.By == nil && new.By == nil {
		return nil
	}
	c := &ByChange{Added: []string{}, Removed: []string{}, Changed: []string{}}
	maps := func(m *Model, field, mode *string, min *int) map[string]bool {
		out := map[string]bool{}
		if m.By == nil {
			return out
		}
		*field, *mode, *min = m.By.Field, m.By.Mode, m.By.MinSessions
		for _, sm := range m.By.Maps {
			out[sm.Value] = true
		}
		return out
	}
	om := maps(old, &c.OldField, &c.OldMode, &c.OldMinSessions)
	nm := maps(new, &c.NewField, &c.NewMode, &c.NewMinSessions)
	for v := range nm {
		if !om[v] {
			c.Added = append(c.Added, v)
			continue
		}
		d := Compare(old.For(v), new.For(v), opt)
		d.ArgsAdded, d.ArgsRemoved = nil, nil
		if !d.Empty() {
			c.Changed = append(c.Changed, v)
		}
	}
	for v := range om {
		if _, ok := nm[v]; !ok {
			c.Removed = append(c.Removed, v)
		}
	}
	slices.Sort(c.Added)
	slices.Sort(c.Removed)
	slices.Sort(c.Changed)
	if c.count() == 0 {
		return nil
	}
	return c
}
