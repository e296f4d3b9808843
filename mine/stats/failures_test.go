package stats

import (
	"math"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
)

func TestFisherUpper(t *testing.T) {
	tests := []struct {
		n, k, s, x int
		want       float64
	}{
		{10, 5, 5, 5, 1.0 / 252},        // all five failures drawn: 1 / C(10,5)
		{10, 5, 5, 0, 1},                // at least none
		{10, 5, 5, 4, (25.0 + 1) / 252}, // C(5,4)C(5,1) + C(5,5)C(5,0)
		{4, 2, 2, 1, 1 - 1.0/6},         // all but drawing both successes
		{6, 1, 3, 1, 0.5},               // the one failure in half the draw
		{8, 6, 4, 2, 1},                 // 2 failures is the least a draw of 4 can hold
	}
	for _, tt := range tests {
		if got := fisherUpper(tt.n, tt.k, tt.s, tt.x); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("fisherUpper(%d, %d, %d, %d) = %v, want %v", tt.n, tt.k, tt.s, tt.x, got, tt.want)
		}
	}
}

// failTally is a tally of 40 sessions, 10 failed: state bad holds 8 of the
// failures in 9 sessions; state mid 20 sessions, 5 failed (the log's rate).
func failTally() (*automaton.Model, *mine.OutcomeTally) {
	m := &automaton.Model{States: []automaton.State{{ID: automaton.StartID, Label: automaton.StartID}, {ID: "bad", Label: "b"}, {ID: "mid", Label: "m"}, {ID: automaton.EndID, Label: automaton.EndID}}}
	m.Reindex()
	it := func(s, ok int, ex ...string) *mine.ItemOutcome {
		return &mine.ItemOutcome{Outcome: automaton.Outcome{Sessions: s, Succeeded: ok}, FailedExamples: ex}
	}
	t := &mine.OutcomeTally{Expr: "ok=true", Log: automaton.Outcome{Sessions: 40, Succeeded: 30, Unknown: 2},
		States:      map[string]*mine.ItemOutcome{automaton.StartID: it(40, 30), "bad": it(9, 1, "s1", "s2"), "mid": it(20, 15), automaton.EndID: it(40, 30)},
		Transitions: map[automaton.EdgeRef]*mine.ItemOutcome{{From: "bad", Event: "ok", To: automaton.EndID}: it(9, 1)},
	}
	return m, t
}

func TestFailures(t *testing.T) {
	m, tally := failTally()
	r := Failures(m, tally, 0, 0)
	if r.Tested != 3 || r.Failed != 10 || r.Unknown != 2 || r.LogRate != 0.25 {
		t.Fatalf("tested %d, failed %d, unknown %d, log rate %v; want 3, 10, 2, 0.25", r.Tested, r.Failed, r.Unknown, r.LogRate)
	}
	if len(r.Places) != 2 {
		t.Fatalf("%d places, want 2 (bad and its move; mid fails at the log's rate): %+v", len(r.Places), r.Places)
	}
	bad := r.Places[0]
	if bad.Kind != "state" || bad.State != "bad" || bad.Failed != 8 || bad.Sessions != 9 || !bad.Significant || bad.Label != "b" {
		t.Errorf("first place %+v, want state bad, 8 of 9 failed, significant", bad)
	}
	// p: the chance of 8 or 9 of 10 failures among 9 of 40 sessions.
	p := fisherUpper(40, 10, 9, 8)
	if math.Abs(bad.P-p)/p > 1e-3 || math.Abs(bad.Q-roundP(math.Min(p*3/2, 1)))/p > 1e-3 {
		t.Errorf("p %v, q %v; want %v and %v (Benjamini-Hochberg: the two tied at rank 2 of 3)", bad.P, bad.Q, p, p*3/2)
	}
	if got := strings.Join(bad.Examples, " "); got != "s1 s2" {
		t.Errorf("examples %q, want s1 s2", got)
	}
	if r := Failures(m, tally, 1, 0); len(r.Places) != 1 {
		t.Errorf("top 1: %d places", len(r.Places))
	}
	tally.Log.Succeeded = 40
	tally.Log.Sessions = 40
	if r := Failures(m, tally, 0, 0); r.Note != "every session with an outcome succeeded: no failure rates to compare" || len(r.Places) != 0 {
		t.Errorf("all succeeded: note %q, %d places", r.Note, len(r.Places))
	}
}

// TestFisherTail holds fisherUpper's tail for large counts to the sum of
// every term, and wants an answer from counts of billions (a place in a
// log of millions of sessions, or a model file's outcome counts): the sum
// ran over every value from x up, and stats and report hung.
func TestFisherTail(t *testing.T) {
	n, k, s := 100_000, 30_000, 40_000 // mode 12,000, spread about 77
	for _, x := range []int{0, 10_000, 11_900, 12_000, 12_100, 12_400, 13_000, 30_000} {
		want := 0.0
		for i := x; i <= min(s, k); i++ {
			want += math.Exp(logChoose(k, i) + logChoose(n-k, s-i) - logChoose(n, s))
		}
		want = math.Min(want, 1)
		if got := fisherTail(n, k, s, x); math.Abs(got-want) > 1e-12+1e-9*want {
			t.Errorf("fisherTail(%d, %d, %d, %d) = %v, want %v", n, k, s, x, got, want)
		}
	}
	tests := []struct {
		n, k, s, x int
		lo, hi     float64
	}{
		{2e9, 1e9, 1e9, 5e8, 0.49, 0.51},
		{2e9, 1e9, 1e9, 4.99e8, 1 - 1e-9, 1},
		{2e9, 1e9, 1e9, 5.01e8, 0, 1e-9},
		{1 << 62, 1 << 61, 1 << 60, 1 << 59, 0, 1},
	}
	for _, tt := range tests {
		if got := fisherUpper(tt.n, tt.k, tt.s, tt.x); got < tt.lo || got > tt.hi || math.IsNaN(got) {
			t.Errorf("fisherUpper(%d, %d, %d, %d) = %v, want it in [%v, %v]", tt.n, tt.k, tt.s, tt.x, got, tt.lo, tt.hi)
		}
	}
}
