package eval

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
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

	// Sessions with an outcome but no step in the log (label rules
	// dropped every record) are left out and counted, failed ones apart.
	withEmpty := maps.Clone(ok)
	withEmpty["gone1"], withEmpty["gone2"] = false, true
	if rep, err := Outcome(lg, "ok=true", withEmpty, opt); err != nil || rep.Emptied != 2 || rep.EmptiedFailed != 1 || rep.Sessions != 60 {
		t.Errorf("two sessions without steps: %v, emptied %d (%d failed), sessions %d; want nil, 2 (1), 60", err, rep.Emptied, rep.EmptiedFailed, rep.Sessions)
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

// TestOutcomeBy: in a log of two tasks, each task's failures take the path
// the other task's successes take. Under the shared map every path is
// common, so only the map of a session's own task tells the failures
// apart; the conditioned scores are reported only with a field.
func TestOutcomeBy(t *testing.T) {
	var b strings.Builder
	ok := map[string]bool{}
	task := map[string]string{}
	for i := 0; i < 80; i++ {
		id := fmt.Sprintf("s%02d", i)
		task[id] = []string{"A", "B"}[i%2]
		ok[id] = i%8 >= 2
		path := []string{"a", "b", "c"}
		if (task[id] == "B") == ok[id] {
			path = []string{"a", "x", "c"}
		}
		for j, n := range path {
			fmt.Fprintf(&b, `{"session_id":%q,"step":%d,"node":%q,"event":"ok"}`+"\n", id, j, n)
		}
	}
	lg := readLog(t, "by.jsonl", b.String(), nil)
	base := mine.DefaultOptions()
	plain := Setting{Merge: base.Merge, Alpha: base.Alpha, Generalize: base.Generalize}
	by := plain
	by.By, by.ByMin, by.ByMode = "attrs.task", 1, automaton.ByMoves

	rep, err := Outcome(lg, "ok=true", ok, Options{Folds: 4, Base: base, Settings: []Setting{plain, by}, By: task})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	var names []string
	for _, r := range rep.Scores {
		names = append(names, r.Name)
		if r.Overall.Pooled != nil {
			got[r.Name] = *r.Overall.Pooled
		}
	}
	want := slices.Insert(slices.Clone(OutcomeScoreNames), len(OutcomeScoreNames)-1, ScoreRiskBy, ScoreRiskAllBy)
	if want = append(want, ScoreSelected); !slices.Equal(names, want) {
		t.Errorf("scores %q, want %q", names, want)
	}
	if got[ScoreRiskBy] != 1 || got[ScoreRisk] > 0.75 {
		t.Errorf("pooled auc: %s %v, %s %v; want 1 and at most 0.75 (only the task's map tells)", ScoreRiskBy, got[ScoreRiskBy], ScoreRisk, got[ScoreRisk])
	}
	if rep.By != "attrs.task" || rep.ByMin != 1 || rep.ByMode != automaton.ByMoves {
		t.Errorf("by %q min %d mode %q; want attrs.task, 1, moves", rep.By, rep.ByMin, rep.ByMode)
	}

	// Without a setting to condition on, the values alone add nothing.
	rep, err = Outcome(lg, "ok=true", ok, Options{Folds: 4, Base: base, Settings: []Setting{plain}, By: task})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rep.Scores); n != len(OutcomeScoreNames)+1 || rep.By != "" {
		t.Errorf("no conditioned setting: %d scores, by %q; want %d, none", n, rep.By, len(OutcomeScoreNames)+1)
	}
}

// TestOutcomeAirline holds the risk score to its target on taubench
// airline (chat turns dropped): the score the inner cross-validation
// selects reaches an AUC for failure of 0.80, at least 0.05 above the
// session length's, with the maps of each task's sessions (0.812) and
// without (0.801).
func TestOutcomeAirline(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the real log")
	}
	for _, by := range []bool{false, true} {
		sel, length := realOutcome(t, "taubench_airline.jsonl", by)
		if sel < 0.80 || sel < length+0.05 {
			t.Errorf("by task %v: selected auc %.3f, length %.3f: want at least 0.80 and length + 0.05", by, sel, length)
		}
	}
}

// TestOutcomeRetail holds the risk score on tau2 retail (chat turns
// dropped), where failed and solved sessions take much the same tool
// sequences but differ in where they end: three of the twelve failures
// end right after an action's error. The inner cross-validation selects
// the end score in every fold, 0.739 against the length's 0.588 (issue
// #20's target: 0.70 and length + 0.05). With the maps of each session's
// own task it selects a conditioned score in three folds and end in two,
// where end fails: 0.587, held here as a floor, not a target.
func TestOutcomeRetail(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the real log")
	}
	sel, length := realOutcome(t, "tau2_retail.jsonl", false)
	if sel < 0.70 || sel < length+0.05 {
		t.Errorf("selected auc %.3f, length %.3f: want at least 0.70 and length + 0.05", sel, length)
	}
	if sel, _ = realOutcome(t, "tau2_retail.jsonl", true); sel < 0.55 {
		t.Errorf("by task: selected auc %.3f: want at least 0.55", sel)
	}
}

// realOutcome scores a real log's sessions against attrs.reward>=1, chat
// turns dropped, on 5 folds, with the maps of each attrs.task_id (at
// least one session, mode moves) when by is set, and returns the
// selected score's AUC and the length's.
func realOutcome(t *testing.T, name string, by bool) (sel, length float64) {
	t.Helper()
	path := "../../../shared/data/jsonl/" + name
	lg := readFile(t, path, "../../testdata/taubench_airline.labels.json")
	o, err := mine.ParseOutcome("attrs.reward>=1")
	if err != nil {
		t.Fatal(err)
	}
	in := []mine.Input{{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}}
	outs, err := mine.SessionOutcomes(in, mine.ReadOptions{}, o)
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Folds: 5, Base: mine.DefaultOptions()}
	if by {
		if opt.By, err = mine.SessionValues(in, mine.ReadOptions{}, "attrs.task_id"); err != nil {
			t.Fatal(err)
		}
		b := opt.Base
		plain := Setting{Merge: b.Merge, Alpha: b.Alpha, Generalize: b.Generalize}
		task := plain
		task.By, task.ByMin, task.ByMode = "attrs.task_id", 1, automaton.ByMoves
		opt.Settings = []Setting{plain, task}
	}
	rep, err := Outcome(lg, o.Expr, outs.Succeeded, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Scores {
		switch r.Name {
		case ScoreSelected:
			sel = *r.Overall.AUC
		case ScoreLength:
			length = *r.Overall.AUC
		}
	}
	return sel, length
}

// TestOutcomeEnd: the failures stop early (a user who leaves, an agent
// that gives up after an error), at a step where the successes go on.
// They are shorter, so their length points the wrong way; the surprisal
// of ending where they ended tells them apart. A fifth of the successes
// take a detour x as often as the failures stop after b, so the most
// surprising move of a session would not (both cost the same).
func TestOutcomeEnd(t *testing.T) {
	var b strings.Builder
	ok := map[string]bool{}
	for i := 0; i < 90; i++ {
		id := fmt.Sprintf("s%02d", i)
		ok[id] = i%6 != 0
		path := []string{"a", "b", "c", "d"}
		switch {
		case !ok[id]:
			path = path[:2] // stops after b, where the successes go on to c
		case i%6 == 1:
			path = []string{"a", "x", "b", "c", "d"}
		}
		for j, n := range path {
			fmt.Fprintf(&b, `{"session_id":%q,"step":%d,"node":%q,"event":"ok"}`+"\n", id, j, n)
		}
	}
	lg := readLog(t, "end.jsonl", b.String(), nil)
	rep, err := Outcome(lg, "ok=true", ok, Options{Folds: 3, Base: mine.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Scores {
		switch r.Name {
		case ScoreEnd:
			if r.Overall.AUC == nil || *r.Overall.AUC != 1 {
				t.Errorf("end: auc %v, want 1 (only the failures end after b)", r.Overall.AUC)
			}
		case ScoreLength:
			if r.Overall.AUC == nil || *r.Overall.AUC != 0 {
				t.Errorf("length: auc %v, want 0 (the failures are shorter)", r.Overall.AUC)
			}
		case ScoreSelected:
			if r.Overall.AUC == nil || *r.Overall.AUC != 1 {
				t.Errorf("selected: auc %v, want 1", r.Overall.AUC)
			}
		}
	}
}

// TestOutcomeSetting: risk is scored under the models of the first
// setting as given, the bayes merge's priors included, and without its
// cap on unusual moves, which judges sessions, not risk.
func TestOutcomeSetting(t *testing.T) {
	base := mine.DefaultOptions()
	s := Setting{Merge: mine.MergeBayes, PriorMove: 8, PriorState: 1.5, Generalize: mine.GeneralizeAuto, MaxUnusual: 3, MaxUnusualRun: 2}
	got, opt := outcomeSetting(Options{Base: base, Settings: []Setting{s}})
	if opt.Merge != mine.MergeBayes || opt.BayesMovePrior != 8 || opt.BayesStatePrior != 1.5 || opt.Examples != 0 {
		t.Errorf("mining options %+v: want the bayes merge with priors 8 and 1.5, no examples", opt)
	}
	if want := "bayes move=8 state=1.5 generalize=auto"; got.String() != want {
		t.Errorf("setting %q, want %q", got, want)
	}
	if got, opt := outcomeSetting(Options{Base: base}); got.Merge != base.Merge || opt.Merge != base.Merge || opt.BayesMovePrior != base.BayesMovePrior {
		t.Errorf("without settings: %+v, %+v; want the base options'", got, opt)
	}
}
