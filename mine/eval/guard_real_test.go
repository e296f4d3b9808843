package eval

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/automaton/guard"
	"github.com/fsmine/fsmine/mine"
)

// caps are the deviations of a cap, named alike by the guard's reasons and
// check's verdicts.
var capReasons = []string{guard.ReasonLoopCap, guard.ReasonRepeatCap, guard.ReasonUnusualCap, guard.ReasonUnusualRun}

// TestGuardAgreesRealLogs: eval's accepted is what a guard built from the
// model lets through. On the real logs with the chat turns dropped, models
// mined from each four of five folds, with and without the caps on unusual moves, the
// guard (enforcing the caps from its policy) allows every step of a
// held-out session or perturbation exactly when check fits it, and denies
// first the step check first calls a deviation, for the same cap where it
// is one, and in monitor mode names a cap at each step replay names it; the
// repeat kind (one visit
// more in a row than the log made, what max_run stops) included.
func TestGuardAgreesRealLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	data, chat := realData(t)
	for _, log := range []string{"tau2_retail.jsonl", "taubench_airline.jsonl"} {
		lg := readFile(t, filepath.Join(data, log), chat)
		fold := make([]int, len(lg.Sessions))
		for i := range lg.Sessions {
			fold[i] = Fold(lg.Sessions[i].ID, 5)
		}
		tests := heldOut(lg, fold, 5, nil)
		for f := range tests {
			train := lg.Subset(func(s *mine.Session) bool { return Fold(s.ID, 5) != f })
			for _, g := range []string{mine.GeneralizeAuto, mine.GeneralizeLoose, mine.GeneralizeAnyOrder} {
				opt := mine.DefaultOptions()
				opt.Generalize = g
				m, err := mine.Build(train, opt)
				if err != nil {
					t.Fatal(err)
				}
				for _, caps := range [][2]int{{0, 0}, {3, 0}, {0, 2}, {3, 2}} {
					c := conform.New(m, conform.Options{MaxUnusual: caps[0], MaxUnusualRun: caps[1]})
					gd, err := guard.New(m, &guard.Policy{MaxUnusual: caps[0], MaxUnusualRun: caps[1]}, guard.Options{History: -1})
					if err != nil {
						t.Fatal(err)
					}
					mon, err := guard.New(m, &guard.Policy{Mode: guard.ModeMonitor, MaxUnusual: caps[0], MaxUnusualRun: caps[1]}, guard.Options{History: -1})
					if err != nil {
						t.Fatal(err)
					}
					n, fits := 0, 0
					for _, mvs := range tests[f].sessions {
						seqs := [][]automaton.Move{mvs}
						for _, ps := range movesOf(perturb(mvs, tests[f].maxRun, tests[f].events)) {
							seqs = append(seqs, ps...)
						}
						for _, p := range seqs {
							n++
							id := fmt.Sprint(n)
							at, verdict := c.Miss(p)
							denied, reason := -1, ""
							for i, mv := range p {
								if d := gd.Step(id, mv.Event, mv.Label); !d.Allowed {
									denied, reason = i, d.Reason
									break
								}
							}
							gd.End(id)
							if at < 0 {
								fits++
							}
							if denied != at || at >= 0 && reason != verdict && (slices.Contains(capReasons, reason) || slices.Contains(capReasons, verdict)) {
								t.Fatalf("%s, fold %d, %s, caps %v: %v: the guard denies step %d (%s), check deviates at %d (%s)", log, f+1, g, caps, p, denied, reason, at, verdict)
							}
							// In monitor mode every step passes; the guard names
							// a cap where replay does (but where replay is lost).
							for i, st := range c.Replay(p) {
								d := mon.Step(id, p[i].Event, p[i].Label)
								if v := st.Verdict; v != conform.StepLost && d.Reason != v && (slices.Contains(capReasons, d.Reason) || slices.Contains(capReasons, v)) {
									t.Fatalf("%s, fold %d, %s, caps %v, monitor: %v: step %d is %q in the guard, %s in replay", log, f+1, g, caps, p, i, d.Reason, v)
								}
							}
							mon.End(id)
						}
					}
					t.Logf("%s, fold %d, %s, caps %v: %d sequences, %d fit", log, f+1, g, caps, n, fits)
				}
			}
		}
	}
}
