package eval

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/mine"
)

// TestNestedRealLogs measures choosing settings with eval as a method,
// held out (Options.Nested, eval --nested): for each of the five folds of a
// real log (chat turns dropped),
// eval runs on the other four (four inner folds) over 288 settings (the
// alergia merge and three bayes priors; auto, constraints, loose and
// any-order; constraint support 12, 30 and 40; --max-unusual 0, 3 and 4;
// --max-unusual-run 0 and 2), recommends as fsmine eval does with
// --min-rejected at the generalisation issue's target (0.55 tau2 retail,
// 0.45 airline), and the recommended setting, mined on those four folds, is
// scored on the fifth. Measured: tau2 retail 0.875 / 0.566, tau-bench
// airline 0.901 / 0.457 (the 0.90 / 0.45 reached there, held out;
// not on tau2 retail). Held less a margin of a held-out session and 0.01.
func TestNestedRealLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	data, chat := realData(t)
	var settings []Setting
	type mp struct {
		merge string
		m, s  float64
	}
	for _, m := range []mp{{mine.MergeAlergia, 0, 0}, {mine.MergeBayes, 4, 0.5}, {mine.MergeBayes, 8, 0.5}, {mine.MergeBayes, 8, 1.5}} {
		for _, g := range []string{mine.GeneralizeAuto, mine.GeneralizeConstraints, mine.GeneralizeLoose, mine.GeneralizeAnyOrder} {
			for _, cs := range []int{0, 30, 40} {
				for _, u := range []int{0, 3, 4} {
					for _, r := range []int{0, 2} {
						s := Setting{Merge: m.merge, Generalize: g, ConstraintSupport: cs, MaxUnusual: u, MaxUnusualRun: r}
						if m.merge == mine.MergeAlergia {
							s.Alpha = 0.01
						} else {
							s.PriorMove, s.PriorState = m.m, m.s
						}
						settings = append(settings, s)
					}
				}
			}
		}
	}
	for _, tt := range []struct {
		log                string
		thr                float64
		accepted, rejected float64
	}{{"tau2_retail.jsonl", 0.55, 0.86, 0.556}, {"taubench_airline.jsonl", 0.45, 0.895, 0.447}} {
		lg := readFile(t, filepath.Join(data, tt.log), chat)
		rep, err := Run(lg, Options{Folds: 5, Base: mine.DefaultOptions(), Settings: settings, MinRejected: tt.thr, Nested: true})
		if err != nil {
			t.Fatal(err)
		}
		for f, name := range rep.Nested.Chosen {
			t.Logf("%s fold %d: chose %s", tt.log, f+1, name)
		}
		o := rep.Nested.Overall
		t.Logf("%s, chosen on the other folds: accepted %.3f rejected %.3f", tt.log, o.Accepted, o.Rejected)
		if o.Accepted < tt.accepted || o.Rejected < tt.rejected {
			t.Errorf("%s: %.3f / %.3f held out, want at least %.3f / %.3f", tt.log, o.Accepted, o.Rejected, tt.accepted, tt.rejected)
		}
	}
}

// TestNested: Options.Nested scores, for each fold, the setting Run
// recommends on the other folds, mined on them: as computed here by hand.
func TestNested(t *testing.T) {
	lg := readFile(t, filepath.Join("..", "..", "testdata", "returns.jsonl"), filepath.Join("..", "..", "testdata", "returns.labels.json"))
	var settings []Setting
	for _, g := range []string{mine.GeneralizeNone, mine.GeneralizeAuto, mine.GeneralizeAnyOrder} {
		for _, r := range []int{0, 1} {
			settings = append(settings, Setting{Merge: mine.MergeAlergia, Alpha: 0.01, Generalize: g, MaxUnusualRun: r})
		}
	}
	opt := Options{Folds: 4, Base: mine.DefaultOptions(), Settings: settings, MinRejected: 0.97, Nested: true}
	rep, err := Run(lg, opt)
	if err != nil {
		t.Fatal(err)
	}
	fold := make([]int, len(lg.Sessions))
	for i := range lg.Sessions {
		fold[i] = Fold(lg.Sessions[i].ID, 4)
	}
	tests := heldOut(lg, fold, 4, nil)
	var want []Scores
	var chosen []string
	for f := range 4 {
		train := lg.Subset(func(s *mine.Session) bool { return Fold(s.ID, 4) != f })
		inner := opt
		inner.Folds, inner.Nested = 3, false
		r, err := Run(train, inner)
		if err != nil {
			t.Fatal(err)
		}
		s := r.Results[r.Recommended].Setting
		m, sc, err := mineFold(train, &tests[f], s, opt.Base, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, judge(m, sc, &tests[f], s, nil))
		chosen = append(chosen, s.String())
	}
	w := overall(want)
	got := rep.Nested.Overall
	if got.Accepted != w.Accepted || got.Rejected != w.Rejected || !slices.Equal(rep.Nested.Chosen, chosen) {
		t.Errorf("nested %.4f / %.4f chose %v; by hand %.4f / %.4f chose %v", got.Accepted, got.Rejected, rep.Nested.Chosen, w.Accepted, w.Rejected, chosen)
	}
	if _, err := Run(lg, Options{Folds: 2, Base: mine.DefaultOptions(), Settings: settings, Nested: true}); err == nil || !strings.Contains(err.Error(), "want at least 3 folds") {
		t.Errorf("nested on 2 folds: %v, want an error", err)
	}
}
