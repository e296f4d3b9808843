package automaton

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/internal/goldenfile"
)

// edge is one transition for buildModel: "from event to count", with
// rare marking it rare.
type edge struct {
	from, event, to string
	count           int
	rare            bool
}

// buildModel makes a valid model from its edges: states are the edges' ends
// (label = id), visits the inflow, prob count over the source's outflow.
func buildModel(t testing.TB, version int, es []edge) *Model {
	t.Helper()
	m := buildModelUnchecked(version, es)
	if err := m.Validate(); err != nil {
		t.Fatalf("buildModel: %v", err)
	}
	return m
}

// buildModelUnchecked is buildModel without Validate, for counts whose sums
// overflow, which no valid model holds.
func buildModelUnchecked(version int, es []edge) *Model {
	m := &Model{Schema: Schema, Version: version, Initial: StartID, Trunk: []string{}}
	visits := map[string]int{StartID: 0, EndID: 0}
	out := map[string]int{}
	for _, e := range es {
		out[e.from] += e.count
		visits[e.to] += e.count
		if _, ok := visits[e.from]; !ok {
			visits[e.from] = 0
		}
	}
	visits[StartID] = out[StartID]
	for id, v := range visits {
		m.States = append(m.States, State{ID: id, Label: id, Visits: v, Sessions: v})
	}
	for _, e := range es {
		m.Transitions = append(m.Transitions, Transition{
			From: e.from, Event: e.event, To: e.to, Count: e.count, Sessions: e.count,
			Prob: float64(e.count) / float64(out[e.from]), Rare: e.rare,
		})
	}
	m.Source.Sessions = out[StartID]
	m.Sort()
	m.Digest = m.ComputeDigest()
	return m
}

// branch is a model where every session goes start -> plan, then to a (a
// of them) or b (b of them), then ends.
func branch(t testing.TB, a, b int) *Model {
	return buildModel(t, 1, []edge{
		{StartID, "", "plan", a + b, false},
		{"plan", "ok", "a", a, false},
		{"plan", "ok", "b", b, false},
		{"a", "done", EndID, a, false},
		{"b", "done", EndID, b, false},
	})
}

func TestTwoProportionZ(t *testing.T) {
	// Hand-computed: pooled p = (x1+x2)/(n1+n2), se = sqrt(p(1-p)(1/n1+1/n2)),
	// z = (x2/n2 - x1/n1)/se, p-value = erfc(|z|/sqrt 2).
	tests := []struct {
		name           string
		x1, n1, x2, n2 int
		z, p           float64
	}{
		// p = .65, se = sqrt(.65*.35*.02) = .067454, z = -.3/.067454.
		{"80/100 vs 50/100", 80, 100, 50, 100, -4.447495899966608, 8.687711677000018e-06},
		// The same shares with a tenth of the counts: se grows by sqrt(10).
		{"8/10 vs 5/10", 8, 10, 5, 10, -1.4064216928154865, 0.15959894244264872},
		{"30/110 vs 25/75", 30, 110, 25, 75, 0.8854741218285586, 0.3759009708007847},
		{"5/110 vs 10/75", 5, 110, 10, 75, 2.1499423087784146, 0.0315597784456283},
		{"both zero", 0, 10, 0, 20, 0, 1},
		{"both all", 10, 10, 20, 20, 0, 1},
		{"empty side", 0, 0, 3, 5, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z, p := twoProportionZ(tt.x1, tt.n1, tt.x2, tt.n2)
			if !near(z, tt.z) || !near(p, tt.p) {
				t.Errorf("twoProportionZ(%d, %d, %d, %d) = %v, %v, want %v, %v", tt.x1, tt.n1, tt.x2, tt.n2, z, p, tt.z, tt.p)
			}
		})
	}
}

func TestChiSquareHomogeneity(t *testing.T) {
	tests := []struct {
		name       string
		row1, row2 []int
		chi2       float64
		df         int
		p          float64
		ok         bool
	}{
		// A 2x2 table: chi2 is the square of the z of the same data and p
		// matches the z-test's (erfc(sqrt(chi2/2)) for df = 1).
		{"2x2 is z squared", []int{80, 20}, []int{50, 50}, 19.78021978021978, 1, 8.687711677000045e-06, true},
		// df = 2: the survival function is exp(-x/2).
		{"3 columns", []int{30, 30, 40}, []int{50, 30, 20}, 11.666666666666668, 2, 0.002928299694818186, true},
		// df = 3: erfc(sqrt(x/2)) + sqrt(2x/pi) exp(-x/2).
		{"4 columns", []int{20, 30, 40, 10}, []int{40, 30, 20, 10}, 13.333333333333334, 3, 0.003968500465847954, true},
		// Columns 2 and 3 expect fewer than 5: they are pooled into [3, 4].
		{"small columns pooled", []int{100, 2, 1}, []int{100, 1, 3}, 0.13802944628187352, 1, 0.7102479213401509, true},
		{"empty column dropped", []int{80, 0, 20}, []int{50, 0, 50}, 19.78021978021978, 1, 8.687711677000045e-06, true},
		{"one column", []int{10}, []int{30}, 0, 0, 1, false},
		{"all pooled", []int{1, 2}, []int{2, 1}, 0, 0, 1, false},
		{"empty row", []int{0, 0}, []int{5, 6}, 0, 0, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chi2, df, p, ok := chiSquareHomogeneity(tt.row1, tt.row2)
			if !near(chi2, tt.chi2) || df != tt.df || !near(p, tt.p) || ok != tt.ok {
				t.Errorf("chiSquareHomogeneity(%v, %v) = %v, %d, %v, %v, want %v, %d, %v, %v",
					tt.row1, tt.row2, chi2, df, p, ok, tt.chi2, tt.df, tt.p, tt.ok)
			}
		})
	}
}

func TestChiSquareSurvival(t *testing.T) {
	tests := []struct {
		x    float64
		df   int
		want float64
	}{
		{3.841458820694124, 1, 0.05}, // the 5% critical value of df = 1
		{2 * math.Log(100), 2, 0.01}, // exp(-x/2) = 1/100
		{0, 4, 1},
		{-1, 4, 1},
	}
	for _, tt := range tests {
		if got := chiSquareSurvival(tt.x, tt.df); !near(got, tt.want) {
			t.Errorf("chiSquareSurvival(%v, %d) = %v, want %v", tt.x, tt.df, got, tt.want)
		}
	}
}

func near(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// withLoop adds a loop through states to m, seen in 5 sessions.
func withLoop(m *Model, max, p95 int, states ...string) *Model {
	m.Loops = append(m.Loops, Loop{States: states, Count: 10, Sessions: 5, MaxIterations: max, P95Iterations: p95})
	return m
}

// withTrunk sets m's trunk.
func withTrunk(m *Model, trunk ...string) *Model {
	m.Trunk = trunk
	return m
}

// relabel gives state id of m a new label and refreshes m's index and digest.
func relabel(m *Model, id, label string) *Model {
	for i := range m.States {
		if m.States[i].ID == id {
			m.States[i].Label = label
		}
	}
	m.Reindex()
	m.Digest = m.ComputeDigest()
	return m
}

// branchPlusRetry is branch plus a third way out of plan, through a new
// state c (c sessions).
func branchPlusRetry(t testing.TB, a, b, c int) *Model {
	return buildModel(t, 2, []edge{
		{StartID, "", "plan", a + b + c, false},
		{"plan", "ok", "a", a, false},
		{"plan", "ok", "b", b, false},
		{"plan", "retry", "c", c, false},
		{"a", "done", EndID, a, false},
		{"b", "done", EndID, b, false},
		{"c", "done", EndID, c, false},
	})
}

// rareBranch is branch with the way through b marked rare when bRare.
func rareBranch(t testing.TB, a, b int, bRare bool) *Model {
	return buildModel(t, 1, []edge{
		{StartID, "", "plan", a + b, false},
		{"plan", "ok", "a", a, false},
		{"plan", "ok", "b", b, bRare},
		{"a", "done", EndID, a, false},
		{"b", "done", EndID, b, bRare},
	})
}

// compareWant is what TestCompare expects of a Diff; checkDiff compares the
// lists by key, sorted as the Diff sorts them.
type compareWant struct {
	empty                          bool
	sameDigest                     bool
	added, removed                 []string // state ids
	relabeled                      []string
	edgesAdded, edgesRemoved       []string // "from event to"
	shares                         []string
	shifts                         []string
	flips                          []string
	loops                          []string // "change states"
	trunk                          bool
	transitionTests, stateTests    int
	transitionThreshold, threshold float64
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name     string
		old, new *Model
		opt      DiffOptions
		want     compareWant
	}{
		{
			name: "identical",
			old:  branch(t, 80, 20), new: branch(t, 80, 20),
			want: compareWant{empty: true, sameDigest: true, transitionTests: 5, stateTests: 1,
				transitionThreshold: 0.002, threshold: 0.01},
		},
		{
			name: "same shares, twice the data",
			old:  branch(t, 80, 20), new: branch(t, 160, 40),
			want: compareWant{empty: true, transitionTests: 5, stateTests: 1, transitionThreshold: 0.002, threshold: 0.01},
		},
		{
			name: "insignificant share change: 8/10 -> 5/10",
			old:  branch(t, 8, 2), new: branch(t, 5, 5),
			// z = -1.41, p = .16; b expects 3.5 in each row and is pooled, so
			// the chi-square test is the 2x2 one, with the same p.
			want: compareWant{empty: true, transitionTests: 5, stateTests: 1, transitionThreshold: 0.002, threshold: 0.01},
		},
		{
			name: "significant share change: 80/100 -> 50/100",
			old:  branch(t, 80, 20), new: branch(t, 50, 50),
			want: compareWant{shares: []string{"plan ok a", "plan ok b"}, shifts: []string{"plan"},
				transitionTests: 5, stateTests: 1, transitionThreshold: 0.002, threshold: 0.01},
		},
		{
			name: "looser alpha makes the small change significant",
			old:  branch(t, 8, 2), new: branch(t, 2, 8),
			opt: DiffOptions{Alpha: 0.5},
			// z = -2.683, p = .0073 < .5/5; chi2 = z^2 on plan, p < .5.
			want: compareWant{shares: []string{"plan ok a", "plan ok b"}, shifts: []string{"plan"},
				transitionTests: 5, stateTests: 1, transitionThreshold: 0.1, threshold: 0.5},
		},
		{
			name: "state and transitions added",
			old:  branch(t, 80, 20), new: branchPlusRetry(t, 80, 20, 1),
			want: compareWant{added: []string{"c"}, edgesAdded: []string{"c done __end__", "plan retry c"},
				transitionTests: 5, stateTests: 1, transitionThreshold: 0.002, threshold: 0.01},
		},
		{
			name: "state and transitions removed",
			old:  branchPlusRetry(t, 80, 20, 1), new: branch(t, 80, 20),
			want: compareWant{removed: []string{"c"}, edgesRemoved: []string{"c done __end__", "plan retry c"},
				transitionTests: 5, stateTests: 1, transitionThreshold: 0.002, threshold: 0.01},
		},
		{
			name: "state relabeled",
			old:  branch(t, 80, 20), new: relabel(branch(t, 80, 20), "b", "bee"),
			want: compareWant{relabeled: []string{"b"}, transitionTests: 5, stateTests: 1,
				transitionThreshold: 0.002, threshold: 0.01},
		},
		{
			name: "rare flip without a significant share change",
			old:  rareBranch(t, 95, 5, true), new: rareBranch(t, 92, 8, false),
			want: compareWant{flips: []string{"b done __end__", "plan ok b"}, transitionTests: 5, stateTests: 1,
				transitionThreshold: 0.002, threshold: 0.01},
		},
		{
			name: "loop grew",
			old:  withLoop(branch(t, 80, 20), 3, 2, "a"), new: withLoop(branch(t, 80, 20), 3, 3, "a"),
			want: compareWant{loops: []string{"grew a"}, sameDigest: true, transitionTests: 5, stateTests: 1,
				transitionThreshold: 0.002, threshold: 0.01},
		},
		{
			name: "loop shrank",
			old:  withLoop(branch(t, 80, 20), 5, 2, "a"), new: withLoop(branch(t, 80, 20), 4, 2, "a"),
			want: compareWant{loops: []string{"shrank a"}, sameDigest: true, transitionTests: 5, stateTests: 1,
				transitionThreshold: 0.002, threshold: 0.01},
		},
		{
			name: "loop unchanged, state order differs",
			old:  withLoop(branch(t, 80, 20), 5, 2, "a", "b"), new: withLoop(branch(t, 80, 20), 5, 2, "b", "a"),
			want: compareWant{empty: true, sameDigest: true, transitionTests: 5, stateTests: 1,
				transitionThreshold: 0.002, threshold: 0.01},
		},
		{
			name: "loops appeared and disappeared",
			old:  withLoop(branch(t, 80, 20), 2, 1, "a"), new: withLoop(branch(t, 80, 20), 2, 1, "b"),
			want: compareWant{loops: []string{"disappeared a", "appeared b"}, sameDigest: true, transitionTests: 5,
				stateTests: 1, transitionThreshold: 0.002, threshold: 0.01},
		},
		{
			name: "loop reshaped: a state joined",
			old:  withLoop(branch(t, 80, 20), 5, 2, "plan", "a"), new: withLoop(branch(t, 80, 20), 5, 2, "b", "a", "plan"),
			want: compareWant{loops: []string{"reshaped a b plan"}, sameDigest: true, transitionTests: 5, stateTests: 1,
				transitionThreshold: 0.002, threshold: 0.01},
		},
		{
			name: "loop split: the larger part is the reshaped loop",
			old:  withLoop(branch(t, 80, 20), 5, 2, "a", "b", "c", "d"),
			new:  withLoop(withLoop(branch(t, 80, 20), 5, 2, "c"), 5, 2, "b", "a"),
			want: compareWant{loops: []string{"reshaped a b", "appeared c"}, sameDigest: true, transitionTests: 5, stateTests: 1,
				transitionThreshold: 0.002, threshold: 0.01},
		},
		{
			name: "trunk changed",
			old:  withTrunk(branch(t, 80, 20), "plan", "a"), new: withTrunk(branch(t, 80, 20), "plan", "b"),
			want: compareWant{trunk: true, sameDigest: true, transitionTests: 5, stateTests: 1,
				transitionThreshold: 0.002, threshold: 0.01},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDiff(t, Compare(tt.old, tt.new, tt.opt), tt.want)
		})
	}
}

// checkDiff reports where d differs from w.
func checkDiff(t *testing.T, d *Diff, w compareWant) {
	t.Helper()
	if got := d.Empty(); got != w.empty {
		t.Errorf("Empty() = %v, want %v", got, w.empty)
	}
	if d.SameDigest != w.sameDigest {
		t.Errorf("SameDigest = %v, want %v", d.SameDigest, w.sameDigest)
	}
	check := func(what string, got, want []string) {
		t.Helper()
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %q, want %q", what, got, want)
		}
	}
	stateIDs := func(rs []StateRef) (ids []string) {
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		return ids
	}
	edgeKeys := func(rs []TransitionRef) (ks []string) {
		for _, r := range rs {
			ks = append(ks, r.From+" "+r.Event+" "+r.To)
		}
		return ks
	}
	check("StatesAdded", stateIDs(d.StatesAdded), w.added)
	check("StatesRemoved", stateIDs(d.StatesRemoved), w.removed)
	var rel []string
	for _, r := range d.StatesRelabeled {
		rel = append(rel, r.ID)
	}
	check("StatesRelabeled", rel, w.relabeled)
	check("TransitionsAdded", edgeKeys(d.TransitionsAdded), w.edgesAdded)
	check("TransitionsRemoved", edgeKeys(d.TransitionsRemoved), w.edgesRemoved)
	var shares, shifts, flips, loops []string
	for _, c := range d.ShareChanges {
		shares = append(shares, c.From+" "+c.Event+" "+c.To)
	}
	for _, s := range d.OutflowShifts {
		shifts = append(shifts, s.State)
	}
	for _, f := range d.RareFlips {
		flips = append(flips, f.From+" "+f.Event+" "+f.To)
	}
	for _, l := range d.Loops {
		loops = append(loops, l.Change+" "+strings.Join(l.States, " "))
	}
	check("ShareChanges", shares, w.shares)
	check("OutflowShifts", shifts, w.shifts)
	check("RareFlips", flips, w.flips)
	check("Loops", loops, w.loops)
	if (d.Trunk != nil) != w.trunk {
		t.Errorf("Trunk = %v, want a change: %v", d.Trunk, w.trunk)
	}
	if d.TransitionTests != w.transitionTests || d.StateTests != w.stateTests {
		t.Errorf("tests = %d transitions, %d states, want %d, %d", d.TransitionTests, d.StateTests, w.transitionTests, w.stateTests)
	}
	if !near(d.TransitionThreshold, w.transitionThreshold) || !near(d.StateThreshold, w.threshold) {
		t.Errorf("thresholds = %v, %v, want %v, %v", d.TransitionThreshold, d.StateThreshold, w.transitionThreshold, w.threshold)
	}
}

func TestCompareLoopReshaped(t *testing.T) {
	old := branch(t, 80, 20)
	old.Loops = []Loop{{States: []string{"a", "b", "c"}, MaxIterations: 11, P95Iterations: 5}}
	new := branch(t, 80, 20)
	new.Loops = []Loop{{States: []string{"a", "b", "d"}, MaxIterations: 9, P95Iterations: 4}}
	got := Compare(old, new, DiffOptions{}).Loops
	want := []LoopChange{{
		States: []string{"a", "b", "d"}, Change: LoopReshaped, Joined: []string{"d"}, Left: []string{"c"},
		Old: &LoopStats{MaxIterations: 11, P95Iterations: 5}, New: &LoopStats{MaxIterations: 9, P95Iterations: 4},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Loops = %+v, want %+v", got, want)
	}
}

func TestCompareShareChangeValues(t *testing.T) {
	d := Compare(branch(t, 80, 20), branch(t, 50, 50), DiffOptions{})
	if len(d.ShareChanges) != 2 {
		t.Fatalf("ShareChanges = %+v, want 2", d.ShareChanges)
	}
	got := d.ShareChanges[0]
	want := ShareChange{From: "plan", Event: "ok", To: "a", OldCount: 80, NewCount: 50, OldOutflow: 100, NewOutflow: 100,
		OldShare: 0.8, NewShare: 0.5, Z: -4.447495899966608, P: 8.687711677000018e-06}
	if got.From != want.From || got.To != want.To || got.OldCount != want.OldCount || got.NewCount != want.NewCount ||
		got.OldOutflow != want.OldOutflow || got.NewOutflow != want.NewOutflow ||
		!near(got.OldShare, want.OldShare) || !near(got.NewShare, want.NewShare) || !near(got.Z, want.Z) || !near(got.P, want.P) {
		t.Errorf("ShareChanges[0] = %+v, want %+v", got, want)
	}
	shift := d.OutflowShifts[0]
	if shift.State != "plan" || shift.DF != 1 || !near(shift.Chi2, 19.78021978021978) || !near(shift.P, 8.687711677000045e-06) {
		t.Errorf("OutflowShifts[0] = %+v, want plan, chi2 19.78, df 1", shift)
	}
	if d.Old.Sessions != 100 || d.New.Sessions != 100 || d.Old.Digest == d.New.Digest {
		t.Errorf("sides = %+v, %+v", d.Old, d.New)
	}
}

func TestCompareSortsStates(t *testing.T) {
	old := branch(t, 80, 20)
	new := buildModel(t, 2, []edge{
		{StartID, "", "z", 10, false}, {StartID, "", "y", 10, false}, {StartID, "", "x", 10, false},
		{"z", "", EndID, 10, false}, {"y", "", EndID, 10, false}, {"x", "", EndID, 10, false},
	})
	slices.Reverse(new.States)
	d := Compare(old, new, DiffOptions{})
	var added, removed []string
	for _, s := range d.StatesAdded {
		added = append(added, s.ID)
	}
	for _, s := range d.StatesRemoved {
		removed = append(removed, s.ID)
	}
	if !reflect.DeepEqual(added, []string{"x", "y", "z"}) || !reflect.DeepEqual(removed, []string{"a", "b", "plan"}) {
		t.Errorf("StatesAdded = %v, StatesRemoved = %v, want [x y z], [a b plan]", added, removed)
	}
}

// TestCompareDeterministic shuffles the models' slices: the Diff must not
// depend on their order.
func TestCompareDeterministic(t *testing.T) {
	old, new := loadFixture(t, "old.json"), loadFixture(t, "new.json")
	want := Compare(old, new, DiffOptions{})
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20; i++ {
		o, n := *old, *new
		o.States = shuffled(rng, old.States)
		o.Transitions = shuffled(rng, old.Transitions)
		o.Loops = shuffled(rng, old.Loops)
		n.States = shuffled(rng, new.States)
		n.Transitions = shuffled(rng, new.Transitions)
		n.Loops = shuffled(rng, new.Loops)
		o.Reindex()
		n.Reindex()
		if got := Compare(&o, &n, DiffOptions{}); !reflect.DeepEqual(got, want) {
			t.Fatalf("shuffle %d: Compare = %+v, want %+v", i, got, want)
		}
	}
}

func shuffled[T any](rng *rand.Rand, s []T) []T {
	c := append([]T(nil), s...)
	rng.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
	return c
}

func loadFixture(t *testing.T, name string) *Model {
	t.Helper()
	m, err := Load(filepath.Join("testdata", "diff", name))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The fixtures in testdata/diff are a small tool-using agent before and
// after a change: a verify step is added after search, the human hand-off
// is gone, plan sends more sessions straight to answer, the search retry
// loop grew and the timeout edge is no longer rare. TestDiffFixtures keeps
// the files equal to what these functions build (go test -update rewrites
// them).
func fixtureOld(t testing.TB) *Model {
	m := buildModel(t, 3, []edge{
		{StartID, "", "plan", 100, false},
		{"plan", "ok", "search", 80, false},
		{"plan", "ok", "answer", 20, false},
		{"search", "error", "search", 30, false},
		{"search", "ok", "answer", 75, false},
		{"search", "timeout", EndID, 5, true},
		{"answer", "done", EndID, 90, false},
		{"answer", "handoff", "human", 5, true},
		{"human", "done", EndID, 5, true},
	})
	return finishFixture(m, 4, 2, []string{"plan", "search", "answer"})
}

func fixtureNew(t testing.TB) *Model {
	m := buildModel(t, 4, []edge{
		{StartID, "", "plan", 100, false},
		{"plan", "ok", "search", 50, false},
		{"plan", "ok", "answer", 50, false},
		{"search", "error", "search", 25, false},
		{"search", "ok", "verify", 40, false},
		{"search", "timeout", EndID, 10, false},
		{"verify", "ok", "answer", 40, false},
		{"answer", "done", EndID, 90, false},
	})
	m.Parent = &Parent{Version: 3, Digest: fixtureOld(t).Digest}
	return finishFixture(m, 6, 3, []string{"plan", "search", "verify", "answer"})
}

func finishFixture(m *Model, max, p95 int, trunk []string) *Model {
	m.Created = "2025-01-01T00:00:00Z"
	m.Generator = "fsmine test fixture"
	m.Params = Params{Format: "jsonl", Merge: "label", RareCount: 10, RareRatio: 0.05}
	for i := range m.Transitions {
		if t := &m.Transitions[i]; t.From == "search" && t.To == "search" {
			t.BackEdge = true
		}
	}
	var back *Transition
	for i := range m.Transitions {
		if m.Transitions[i].BackEdge {
			back = &m.Transitions[i]
		}
	}
	m.Loops = []Loop{{
		States:    []string{"search"},
		BackEdges: []EdgeRef{{back.From, back.Event, back.To}},
		Count:     back.Count, Sessions: back.Count / 2,
		MaxIterations: max, P95Iterations: p95,
	}}
	m.Trunk = trunk
	m.Variants = 3
	m.TopVariants = []Variant{{Count: 50, States: trunk}}
	m.Digest = m.ComputeDigest() // the loop is part of it
	return m
}

func TestDiffFixtures(t *testing.T) {
	for name, m := range map[string]*Model{"old.json": fixtureOld(t), "new.json": fixtureNew(t)} {
		var buf bytes.Buffer
		if err := m.Write(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "diff", name)
		if goldenfile.Update() {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(got, buf.Bytes()) {
			t.Errorf("%s differs from the fixture the test builds; run go test -update", path)
		}
	}
}

func TestCompareFixtures(t *testing.T) {
	d := Compare(loadFixture(t, "old.json"), loadFixture(t, "new.json"), DiffOptions{})
	if d.Empty() {
		t.Fatal("Empty() = true for the fixtures, want differences")
	}
	got := []int{len(d.StatesAdded), len(d.StatesRemoved), len(d.TransitionsAdded), len(d.TransitionsRemoved),
		len(d.ShareChanges), len(d.OutflowShifts), len(d.RareFlips), len(d.Loops)}
	// verify added; human removed; search->verify, verify->answer added;
	// search->answer, answer->human, human->end removed; plan's two edges
	// moved 80/20 -> 50/50; plan and search shifted (answer's 90/5 vs 90/0
	// is not significant); the timeout edge flipped; the search loop grew.
	want := []int{1, 1, 2, 3, 2, 2, 1, 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("counts (states +/-, transitions +/-, shares, shifts, flips, loops) = %v, want %v", got, want)
	}
	if d.Trunk == nil {
		t.Error("Trunk = nil, want a change")
	}
}

// FuzzCompare feeds Compare any two models Read accepts: it must not panic,
// must find a model identical to itself, and must give a Diff that encodes
// as JSON (no NaN or infinity).
func FuzzCompare(f *testing.F) {
	for _, name := range []string{"old.json", "new.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "diff", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, b)
	}
	old, _ := os.ReadFile(filepath.Join("testdata", "diff", "old.json"))
	zero := bytes.ReplaceAll(old, []byte(`"count":5,`), []byte(`"count":0,`))
	f.Add(old, zero)
	// Decode, not Read: a mutated model fails its digest, and Compare must
	// hold for any valid model.
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ma, err := Decode(bytes.NewReader(a))
		if err != nil {
			return
		}
		mb, err := Decode(bytes.NewReader(b))
		if err != nil {
			return
		}
		if d := Compare(ma, ma, DiffOptions{}); !d.Empty() {
			t.Errorf("Compare(m, m) is not empty: %+v", d)
		}
		d := Compare(ma, mb, DiffOptions{})
		if _, err := json.Marshal(d); err != nil {
			t.Errorf("encoding the Diff: %v", err)
		}
	})
}

// TestCompareHugeCounts: counts whose sums overflow int are not tested and
// must not make NaN statistics (which JSON cannot encode) or a panic.
func TestCompareHugeCounts(t *testing.T) {
	const big = math.MaxInt64/2 + 1 // two of them overflow
	fork := func(a, b int) *Model {
		return buildModelUnchecked(1, []edge{
			{StartID, "", "a", a, false},
			{StartID, "", "b", b, false},
			{"a", "done", EndID, a, false},
			{"b", "done", EndID, b, false},
		})
	}
	d := Compare(fork(1, 1), fork(big, big), DiffOptions{})
	if _, err := json.Marshal(d); err != nil {
		t.Fatalf("encoding the Diff: %v", err)
	}
}

// TestCompareGeneralized: a move no session took in the old model and that
// sessions took in the new one is a generalised flip; a generalised move
// added is listed with its kind.
func TestCompareGeneralized(t *testing.T) {
	old := branch(t, 50, 50)
	for i := range old.Transitions {
		if old.Transitions[i].From == "plan" && old.Transitions[i].To == "b" {
			old.Transitions[i].Count, old.Transitions[i].Sessions, old.Transitions[i].Prob = 0, 0, 0
			old.Transitions[i].Generalized = "skip"
		}
	}
	old.Transitions = append(old.Transitions, Transition{From: "a", Event: "done", To: "b", Generalized: "follow"})
	old.Sort()
	if err := old.Validate(); err != nil {
		t.Fatal(err)
	}
	old.Digest = old.ComputeDigest()
	d := Compare(old, branch(t, 50, 50), DiffOptions{})
	want := []GeneralizedFlip{{From: "plan", Event: "ok", To: "b", Old: "skip", New: "", OldCount: 0, NewCount: 50}}
	if !reflect.DeepEqual(d.GeneralizedFlips, want) {
		t.Errorf("generalised flips %+v, want %+v", d.GeneralizedFlips, want)
	}
	if len(d.TransitionsRemoved) != 1 || d.TransitionsRemoved[0].Generalized != "follow" {
		t.Errorf("removed %+v, want a -done-> b generalised by follow", d.TransitionsRemoved)
	}
	if !strings.Contains(d.Summary(), "1 generalised flip") {
		t.Errorf("summary %q lacks the flip", d.Summary())
	}
}

// TestCompareEnforced: what the digest covers and check enforces beyond
// states, moves and counts is a difference: a state's run cap and slot
// fields, a back edge mark, and a conditioned model's sub-maps. Each read
// "no differences" (exit 0) between models of different digests.
func TestCompareEnforced(t *testing.T) {
	base := func() *Model { return branch(t, 30, 20) }
	old := base()
	capped := base()
	for i := range capped.States {
		if capped.States[i].ID == "plan" {
			capped.States[i].MaxRun = 2
			capped.States[i].Fields = []string{"attrs.order_id"}
		}
	}
	d := Compare(old, capped, DiffOptions{})
	if d.Empty() || len(d.StateChanges) != 1 || d.StateChanges[0].NewMaxRun != 2 || !slices.Equal(d.StateChanges[0].NewFields, []string{"attrs.order_id"}) {
		t.Errorf("run cap and fields: %+v", d.StateChanges)
	}
	if got := d.Summary(); got != "1 difference: 1 state's run cap or slot fields changed" {
		t.Errorf("summary %q", got)
	}

	back := base()
	for i := range back.Transitions {
		if back.Transitions[i].From == "plan" && back.Transitions[i].To == "a" {
			back.Transitions[i].BackEdge = true
		}
	}
	d = Compare(old, back, DiffOptions{})
	if d.Empty() || len(d.BackEdgeFlips) != 1 || d.BackEdgeFlips[0] != (BackEdgeFlip{"plan", "ok", "a", false, true}) {
		t.Errorf("back edge: %+v", d.BackEdgeFlips)
	}

	by := base()
	sub := branch(t, 10, 1)
	by.By = &By{Field: "attrs.task", MinSessions: 5, Values: 1, Maps: []SubMap{NewSubMap("t1", sub)}}
	d = Compare(old, by, DiffOptions{})
	if d.Empty() || d.By == nil || d.By.NewField != "attrs.task" || !slices.Equal(d.By.Added, []string{"t1"}) || d.Differences() != 2 {
		t.Errorf("by: %+v, %d differences", d.By, d.Differences())
	}
	other := base()
	other.By = &By{Field: "attrs.task", MinSessions: 5, Values: 1, Maps: []SubMap{NewSubMap("t1", branch(t, 1, 10))}}
	d = Compare(by, other, DiffOptions{})
	if d.By == nil || !slices.Equal(d.By.Changed, []string{"t1"}) || d.Differences() != 1 {
		t.Errorf("a sub-map's behaviour: %+v", d.By)
	}
	if d = Compare(by, by, DiffOptions{}); !d.Empty() {
		t.Errorf("a conditioned model against itself: %s", d.Summary())
	}
	// Another sample of the same behaviour: counts differ, no test finds
	// it, the sub-map is unchanged (its digest, which holds counts, was).
	resampled := base()
	resampled.By = &By{Field: "attrs.task", MinSessions: 5, Values: 1, Maps: []SubMap{NewSubMap("t1", branch(t, 11, 1))}}
	if d = Compare(by, resampled, DiffOptions{}); !d.Empty() {
		t.Errorf("a resampled sub-map: %s", d.Summary())
	}
}
