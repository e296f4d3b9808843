package stages

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/eval"
)

// TestSuggestScoresRealLogs holds the suggested rules to the bar they were
// built for, on the tau logs of ../shared/data (skipped when absent, or
// with -short): in 5-fold cross-validation (mine/eval), models mined with
// them accept at least as many held-out sessions, and reject at least as
// many perturbed ones, as models mined with only the message turns
// dropped, under each merge and generalisation. Run with -v for the table
// the README quotes.
func TestSuggestScoresRealLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	dir := filepath.Join("..", "..", "..", "shared", "data", "jsonl")
	var settings []eval.Setting
	for _, m := range []string{mine.MergeLabel, mine.MergeAlergia} {
		for _, g := range mine.Generalizes {
			settings = append(settings, eval.Setting{Merge: m, Alpha: 0.01, Generalize: g})
		}
	}
	for _, file := range []string{"tau2_retail.jsonl", "taubench_airline.jsonl"} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join(dir, file)
			if _, err := os.Stat(path); err != nil {
				t.Skip(err)
			}
			in := []mine.Input{{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}}
			read := func(rules []byte) *mine.Log {
				ropt := mine.ReadOptions{Strict: true}
				if rules != nil {
					var err error
					if ropt.Rules, err = mine.ParseRules(rules); err != nil {
						t.Fatal(err)
					}
				}
				lg, err := mine.Read(in, ropt)
				if err != nil {
					t.Fatal(err)
				}
				return lg
			}
			s, err := Suggest(read(nil), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Chat) == 0 {
				t.Fatal("no message turns found")
			}
			chatOnly := `{"rules":[{"match":{"node":"` + strings.ReplaceAll(alternation(s.Chat), `\`, `\\`) + `"},"drop":true}]}`
			score := func(rules []byte) *eval.Report {
				rep, err := eval.Run(read(rules), eval.Options{Folds: 5, Settings: settings, Base: mine.DefaultOptions(), Workers: 1})
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			base, got := score([]byte(chatOnly)), score(s.JSON())
			t.Logf("%-36s %-22s %-22s", "setting", "chat turns dropped", "suggested rules")
			t.Logf("%-36s %-22s %-22s", "", "accepted rejected", "accepted rejected")
			for i, r := range got.Results {
				b := base.Results[i].Overall
				o := r.Overall
				t.Logf("%-36s %8.3f %8.3f      %8.3f %8.3f", r.Name, b.Accepted, b.Rejected, o.Accepted, o.Rejected)
				if o.Accepted < b.Accepted || o.Rejected < b.Rejected {
					t.Errorf("%s: suggested rules accept %.3f and reject %.3f; message turns dropped only: %.3f and %.3f",
						r.Name, o.Accepted, o.Rejected, b.Accepted, b.Rejected)
				}
			}
		})
	}
}
