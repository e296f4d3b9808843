package mine

import (
	"hash/fnv"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// TestArgsReal learns argument rules from real tau logs (arguments in the
// raw tau2 and tau-bench files; the sources with ImportOptions.Seen) and
// measures, held out by session in five folds, how many of their benign
// sessions the rules flag. It skips without ../shared/data.
func TestArgsReal(t *testing.T) {
	sets := []struct {
		name  string
		files []string
		// maxFlagged is the share of held-out sessions the rules may flag.
		maxFlagged float64
	}{
		{"tau2 retail", []string{"raw/tau2/gpt-4.1_retail_default_gpt-4.1_1trials.json", "raw/tau2/ft-gpt-4.1_retail_default_gpt-4.1_1trials.json"}, 0.10},
		{"tau2 airline", []string{"raw/tau2/gpt-4.1_airline_default_gpt-4.1_1trials.json"}, 0.10},
		{"taubench airline", []string{"raw/tau-bench/gpt-4o-airline.json"}, 0.10},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			var inputs []Input
			for _, f := range set.files {
				inputs = append(inputs, realInput(t, f))
			}
			sessions, err := ReadArgSessions(inputs, ReadOptions{Import: ImportOptions{Seen: true}})
			if err != nil {
				t.Fatal(err)
			}
			rules := LearnArgs(sessions, ArgOptions{})
			if len(rules) == 0 {
				t.Fatalf("%d sessions give no argument rule", len(sessions))
			}
			for _, r := range rules {
				t.Logf("rule %s(%s) %s: %d calls in %d sessions, %d values, from %v", r.Tool, r.Arg, r.Kind, r.Steps, r.Sessions, len(r.Values), r.From)
			}
			const folds = 5
			flagged, byKind := 0, map[string]int{}
			foldRules := 0
			for k := 0; k < folds; k++ {
				var train, test []ArgSession
				for _, s := range sessions {
					h := fnv.New32a()
					h.Write([]byte(s.ID))
					if int(h.Sum32()%folds) == k {
						test = append(test, s)
					} else {
						train = append(train, s)
					}
				}
				rs := LearnArgs(train, ArgOptions{})
				foldRules += len(rs)
				for _, f := range CheckArgs(test, rs) {
					flagged++
					byKind[f.Kind]++
					t.Logf("fold %d: held-out %s", k, f)
				}
			}
			share := float64(flagged) / float64(len(sessions))
			t.Logf("%s: %d sessions, %d rules on all; held out (%d folds, %.1f rules a fold): %d flagged (%.1f%%; %s %d, %s %d)",
				set.name, len(sessions), len(rules), folds, float64(foldRules)/folds, flagged, 100*share,
				automaton.KindUnseenValue, byKind[automaton.KindUnseenValue], automaton.KindValueWithoutSource, byKind[automaton.KindValueWithoutSource])
			if share > set.maxFlagged {
				t.Errorf("held out, the rules flag %.1f%% of benign sessions, want at most %.0f%%", 100*share, 100*set.maxFlagged)
			}
		})
	}
}
