package eval

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/mine"
)

func TestAUC(t *testing.T) {
	s := func(v float64, failed bool) scored { return scored{v, failed} }
	tests := []struct {
		name string
		ss   []scored
		want float64
		ok   bool
	}{
		{"separated", []scored{s(1, false), s(2, false), s(3, true), s(4, true)}, 1, true},
		{"reversed", []scored{s(1, true), s(2, true), s(3, false)}, 0, true},
		{"all tied", []scored{s(1, true), s(1, false), s(1, false)}, 0.5, true},
		// failures 2 and 4, successes 1 and 3: pairs (2>1) (2<3) (4>1) (4>3).
		{"interleaved", []scored{s(1, false), s(2, true), s(3, false), s(4, true)}, 0.75, true},
		{"a tie counts half", []scored{s(1, false), s(2, true), s(2, false)}, 0.75, true},
		{"no failure", []scored{s(1, false), s(2, false)}, 0, false},
	}
	for _, tt := range tests {
		got, ok := auc(tt.ss)
		if ok != tt.ok || math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: auc = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestYouden(t *testing.T) {
	s := func(v float64, failed bool) scored { return scored{v, failed} }
	tests := []struct {
		name string
		ss   []scored
		want float64
	}{
		{"separated", []scored{s(1, false), s(2, false), s(3, true), s(4, true)}, 2.5},
		{"one overlap", []scored{s(1, false), s(2, true), s(3, false), s(4, true), s(5, true)}, 3.5},
		{"no failure", []scored{s(1, false)}, math.Inf(1)},
	}
	for _, tt := range tests {
		if got := youden(tt.ss); got != tt.want {
			t.Errorf("%s: youden = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// outcomeLog is a log of 60 sessions: the succeeded ones go a-b-c, the
// failed ones (every third) a-x-x-c.
func outcomeLog(t *testing.T) (*mine.Log, map[string]bool) {
	var b strings.Builder
	ok := map[string]bool{}
	for i := 0; i < 60; i++ {
		id := fmt.Sprintf("s%02d", i)
		path := []string{"a", "b", "c"}
		ok[id] = i%3 != 0
		if !ok[id] {
			path = []string{"a", "x", "x", "c"}
		}
		for j, n := range path {
			fmt.Fprintf(&b, `{"session_id":%q,"step":%d,"node":%q,"event":"ok"}`+"\n", id, j, n)
		}
	}
	return readLog(t, "outcome.jsonl", b.String(), nil), ok
}

func TestOutcome(t *testing.T) {
	lg, ok := outcomeLog(t)
	opt := Options{Folds: 3, Base: mine.DefaultOptions()}
	rep, err := Outcome(lg, "ok=true", ok, opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sessions != 60 || rep.Failed != 20 || rep.Unknown != 0 {
		t.Errorf("sessions %d, failed %d, unknown %d; want 60, 20, 0", rep.Sessions, rep.Failed, rep.Unknown)
	}
	byName := map[string]OutcomeResult{}
	for _, r := range rep.Scores {
		byName[r.Name] = r
	}
	for _, name := range []string{ScoreRisk, ScoreRatio, ScoreSelected} {
		r := byName[name]
		if r.Overall.AUC == nil || *r.Overall.AUC != 1 || r.Overall.Flagged != 1 || r.Overall.Passed != 1 {
			t.Errorf("%s: auc %v, flagged %v, passed %v; want 1, 1, 1 (the failures take moves the successes never do)", name, r.Overall.AUC, r.Overall.Flagged, r.Overall.Passed)
		}
	}
	if r := byName[ScoreLength]; *r.Overall.AUC != 1 {
		t.Errorf("length: auc %v, want 1 (failures are longer)", *r.Overall.AUC)
	}

	// Sessions without an outcome are left out and counted.
	delete(ok, "s01")
	if rep, err = Outcome(lg, "ok=true", ok, opt); err != nil || rep.Unknown != 1 || rep.Sessions != 59 {
		t.Errorf("one session without outcome: %v, unknown %d, sessions %d; want nil, 1, 59", err, rep.Unknown, rep.Sessions)
	}
	all := map[string]bool{}
	for id := range ok {
		all[id] = true
	}
	_, err = Outcome(lg, "ok=true", all, opt)
	if !errors.Is(err, ErrOneOutcome) || !strings.Contains(err.Error(), "every one of the 59 sessions with an outcome succeeded under ok=true") {
		t.Errorf("all succeeded: error %v, want ErrOneOutcome saying so", err)
	}
}

// TestOutcomeAirline holds the risk score to its target on taubench
// airline (chat turns dropped): the score the inner cross-validation
// selects reaches an AUC for failure of 0.80, at least 0.05 above the
// session length's.
func TestOutcomeAirline(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the real log")
	}
	const path = "../../../shared/data/jsonl/taubench_airline.jsonl"
	lg := readFile(t, path, "../../testdata/taubench_airline.labels.json")
	o, err := mine.ParseOutcome("attrs.reward>=1")
	if err != nil {
		t.Fatal(err)
	}
	in := mine.Input{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
	outs, err := mine.SessionOutcomes([]mine.Input{in}, mine.ReadOptions{}, o)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Outcome(lg, o.Expr, outs.Succeeded, Options{Folds: 5, Base: mine.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	var sel, length float64
	for _, r := range rep.Scores {
		switch r.Name {
		case ScoreSelected:
			sel = *r.Overall.AUC
		case ScoreLength:
			length = *r.Overall.AUC
		}
	}
	if sel < 0.80 || sel < length+0.05 {
		t.Errorf("selected auc %.3f, length %.3f: want at least 0.80 and length + 0.05", sel, length)
	}
}
