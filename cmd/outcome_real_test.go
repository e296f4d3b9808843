package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutcomeSTAR scores the risk of STAR's dialogues against their
// completion (a dialogue the user left is a failure), as a new user would:
// labels suggest, then eval --outcome 'attrs.completion=Complete' on 5
// folds. Failures here are short (a user who leaves early), so length as
// a failure score is far below 0.5 and issue #20's floor, length + 0.05,
// is easily met; the fairer baseline is 1 − length (the shorter the
// riskier). The selected score must reach 0.70, beat length by 0.05, and
// come within 0.03 of 1 − length (held where it stands: above it on
// four tasks, 0.014 below on plane_book, 3 failures). Dialogues the rules leave without a
// step (a user who left before the wizard acted) are not scored; eval
// counts them. go test -v prints the table docs/check-replay-eval.md
// quotes.
func TestOutcomeSTAR(t *testing.T) {
	data := filepath.Join("..", "..", "shared", "data", "star")
	if _, err := os.Stat(data); err != nil {
		t.Skip("no ../shared/data/star")
	}
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	tmp := t.TempDir()
	var table []string
	for _, task := range []string{"ride_book", "trip_directions", "apartment_schedule", "plane_book", "doctor_followup"} {
		t.Run(task, func(t *testing.T) {
			logs := filepath.Join(data, task+".jsonl")
			rules := filepath.Join(tmp, task+".rules.json")
			var out, errb bytes.Buffer
			io := IO{In: strings.NewReader(""), Out: &out, Err: &errb}
			if code := Run(context.Background(), []string{"labels", "suggest", "-q", "-o", rules, logs}, io); code != exitOK {
				t.Fatalf("labels suggest: exit %d: %s", code, errb.String())
			}
			out.Reset()
			if code := Run(context.Background(), []string{"eval", "-q", "--labels", rules, "--outcome", "attrs.completion=Complete", "--format", "json", logs}, io); code != exitOK {
				t.Fatalf("eval: exit %d: %s", code, errb.String())
			}
			var rep struct {
				Outcome struct {
					Sessions, Failed int
					Emptied          int `json:"emptied"`
					Scores           []struct {
						Name    string
						Overall struct {
							AUC    *float64 `json:"auc"`
							Pooled *float64 `json:"pooled_auc"`
						}
					}
				}
			}
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			auc, pooled := map[string]float64{}, map[string]float64{}
			for _, s := range rep.Outcome.Scores {
				if s.Overall.AUC != nil {
					auc[s.Name] = *s.Overall.AUC
				}
				if s.Overall.Pooled != nil {
					pooled[s.Name] = *s.Overall.Pooled
				}
			}
			sel, length := auc["selected by inner"], auc["length"]
			table = append(table, fmtRow(task, "%d | %d | %d | %.3f | %.3f (%.3f) | %.3f | %.3f | %.3f | %.3f", rep.Outcome.Sessions, rep.Outcome.Failed, rep.Outcome.Emptied,
				sel, auc["end"], pooled["end"], auc["risk/move"], auc["ratio/move"], length, 1-length))
			// The dialogues the user left before the wizard acted: no
			// step once the user turns are dropped, counted apart.
			if want := map[string]int{"ride_book": 8, "trip_directions": 15, "apartment_schedule": 23, "plane_book": 8, "doctor_followup": 0}[task]; rep.Outcome.Emptied != want {
				t.Errorf("emptied %d, want %d", rep.Outcome.Emptied, want)
			}
			if sel < 0.70 || sel < length+0.05 || sel < 1-length-0.03 {
				t.Errorf("selected auc %.3f, length %.3f: want at least 0.70, length + 0.05 and 1 − length − 0.03", sel, length)
			}
		})
	}
	t.Logf("\n| STAR task | sessions | failed | left out (failed, no step) | selected by inner | end (pooled) | risk/move | ratio/move | length | 1 − length |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n%s", strings.Join(table, "\n"))
}
