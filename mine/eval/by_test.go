package eval

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsmine/fsmine/mine"
)

// TestByRealLogs holds the target of conditioned maps on the real logs of
// ../../../shared/data: conditioned on attrs.task_id, whose values are
// rare (2 sessions each in tau2 retail, 4 in taubench airline), the model
// accepts held-out sessions within 0.02 of the unconditioned map, as rare
// values are judged by the shared map; and sub-maps mined from too few
// sessions (--by-min 2) are logged, to show what the threshold keeps
// away. It skips when the data is absent.
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
			by, sparse := plain, plain
			by.By, by.ByMin = "attrs.task_id", mine.DefaultByMin
			sparse.By, sparse.ByMin = "attrs.task_id", 2
			rep, err := Run(lg, Options{Folds: 5, Base: def, Settings: []Setting{plain, by, sparse}, By: vals})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				t.Logf("%-60s accepted %.3f rejected %.3f", r.Name, r.Overall.Accepted, r.Overall.Rejected)
			}
			a, b := rep.Results[0].Overall.Accepted, rep.Results[1].Overall.Accepted
			if math.Abs(a-b) > 0.02 {
				t.Errorf("conditioned accepts %.3f, unconditioned %.3f: want within 0.02", b, a)
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
