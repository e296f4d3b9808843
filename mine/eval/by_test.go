package eval

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
)

// TestByRealLogs holds the target of conditioned maps on the real logs of
// ../../../shared/data: conditioned on attrs.task_id, whose values are
// rare (2 sessions each in tau2 retail, 4 in taubench airline), the model
// accepts held-out sessions within 0.02 of the unconditioned map in every
// --by-mode, as rare values are judged by the shared map; and sub-maps of
// too few sessions (--by-min 1 and 3) are logged, to show what the
// threshold keeps away, the shared map on a value's stages accepting at
// least what it accepts on the value's moves, and that at least what the
// value's own paths do. It skips when the data is absent.
func TestByRealLogs(t *testing.T) {
	data := filepath.Join("..", "..", "..", "shared", "data", "jsonl")
	chat := filepath.Join(t.TempDir(), "chat.json")
	if err := os.WriteFile(chat, []byte(`{"rules": [{"name": "text turns carry no stage", "match": {"node": "^(agent_msg|user_msg)$"}, "drop": true}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ log, labels string }{
		{"tau2_retail.jsonl", ""},
		{"tau2_retail.jsonl", chat},
		{"taubench_airline.jsonl", ""},
		{"taubench_airline.jsonl", chat},
	} {
		t.Run(tt.log+"+"+filepath.Base(tt.labels), func(t *testing.T) {
			path := filepath.Join(data, tt.log)
			lg := readFile(t, path, tt.labels)
			in := []mine.Input{{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}}
			ropt := mine.ReadOptions{}
			if tt.labels != "" {
				b, err := os.ReadFile(tt.labels)
				if err != nil {
					t.Fatal(err)
				}
				if ropt.Rules, err = mine.ParseRules(b); err != nil {
					t.Fatal(err)
				}
			}
			vals, err := mine.SessionValues(in, ropt, "attrs.task_id")
			if err != nil {
				t.Fatal(err)
			}
			def := mine.DefaultOptions()
			plain := Setting{Merge: def.Merge, Alpha: def.Alpha, Generalize: def.Generalize}
			settings := []Setting{plain}
			for _, min := range []int{mine.DefaultByMin, 1, 3} {
				for _, mode := range automaton.ByModes {
					s := plain
					s.By, s.ByMin, s.ByMode = "attrs.task_id", min, mode
					settings = append(settings, s)
				}
			}
			rep, err := Run(lg, Options{Folds: 5, Base: def, Settings: settings, By: vals})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				t.Logf("%-70s accepted %.3f rejected %.3f", r.Name, r.Overall.Accepted, r.Overall.Rejected)
			}
			a, n := rep.Results[0].Overall.Accepted, len(automaton.ByModes)
			for _, r := range rep.Results[1 : 1+n] {
				if b := r.Overall.Accepted; math.Abs(a-b) > 0.02 {
					t.Errorf("%s accepts %.3f, unconditioned %.3f: want within 0.02", r.Name, b, a)
				}
			}
			// Sparse values: the shared map on a value's stages accepts at
			// least what it accepts on the value's moves (a restriction of
			// it), and that at least what the value's own paths accept.
			for i := 1 + n; i < len(rep.Results); i += n {
				for j := i; j < i+n-1; j++ {
					narrow, wide := rep.Results[j], rep.Results[j+1]
					if wide.Overall.Accepted < narrow.Overall.Accepted {
						t.Errorf("%s accepts %.3f, fewer than %s's %.3f", wide.Name, wide.Overall.Accepted, narrow.Name, narrow.Overall.Accepted)
					}
				}
			}

			// Every training session is a path of its own value's map.
			m, err := mine.BuildBy(lg, def, mine.ByOptions{Field: "attrs.task_id", MinSessions: 2}, vals)
			if err != nil {
				t.Fatal(err)
			}
			for i := range lg.Sessions {
				s := &lg.Sessions[i]
				if !m.For(vals[s.ID]).Accepts(lg.Moves(s)) {
					t.Fatalf("training session %s is not a path of the map of %q", s.ID, vals[s.ID])
				}
			}
		})
	}
}
