package eval

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/automaton/guard"
	"github.com/fsmine/fsmine/mine"
)

// TestGuardAgreesRealLogs: eval's accepted is what a guard built from the
// model lets through. On the real logs with the chat turns dropped, a model
// mined from four folds, with and without the caps on unusual moves, the
// guard (enforcing the caps from its policy) allows every step of a
// held-out session or perturbation exactly when check fits it, and denies
// first the step check first calls a deviation; the repeat kind (one visit
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
		train := lg.Subset(func(s *mine.Session) bool { return Fold(s.ID, 5) != 0 })
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
				n, fits := 0, 0
				for _, mvs := range tests[0].sessions {
					seqs := [][]automaton.Move{mvs}
					for _, ps := range perturb(mvs, tests[0].maxRun, tests[0].events) {
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
						if denied != at {
							t.Fatalf("%s, %s, caps %v: %v: the guard denies step %d (%s), check deviates at %d (%s)", log, g, caps, p, denied, reason, at, verdict)
						}
					}
				}
				t.Logf("%s, %s, caps %v: %d sequences, %d fit", log, g, caps, n, fits)
			}
		}
	}
}
