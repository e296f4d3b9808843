package eval

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
)

func readLog(t *testing.T, name, data string, rules *mine.Rules) *mine.Log {
	t.Helper()
	lg, err := mine.Read([]mine.Input{{Name: name, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(data)), nil
	}}}, mine.ReadOptions{Rules: rules, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	return lg
}

func readFile(t *testing.T, path, labels string) *mine.Log {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s: %v", path, err)
	}
	var rules *mine.Rules
	if labels != "" {
		data, err := os.ReadFile(labels)
		if err != nil {
			t.Fatal(err)
		}
		if rules, err = mine.ParseRules(data); err != nil {
			t.Fatal(err)
		}
	}
	lg, err := mine.Read([]mine.Input{{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}}, mine.ReadOptions{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return lg
}

func mv(event, label string) automaton.Move { return automaton.Move{Event: event, Label: label} }

func TestPerturb(t *testing.T) {
	// Visits a/1 b/2 b/3 c/4: labels a, b, b, c ending with events 1..4.
	s := []automaton.Move{mv("", "a"), mv("1", "b"), mv("2", "b"), mv("3", "c"), mv("4", automaton.EndID)}
	got := movesOf(perturb(s, map[string]int{"a": 1, "b": 3, "c": 1}, map[string][]string{"a": {"1", "9"}}))
	text := func(ps [][]automaton.Move) []string {
		var out []string
		for _, p := range ps {
			var b []string
			for _, m := range p {
				b = append(b, m.Label+"/"+m.Event)
			}
			out = append(out, strings.Join(b, " "))
		}
		return out
	}
	want := map[string][]string{
		// Middle visits 1 and 2 (both b/…) removed: two different sessions.
		KindRemove: {
			"a/ b/1 c/3 __end__/4",
			"a/ b/1 c/2 __end__/4",
		},
		// a,b and b,c swap; b,b does not; events stay in place.
		KindSwap: {
			"b/ a/1 b/2 c/3 __end__/4",
			"a/ b/1 c/2 b/3 __end__/4",
		},
		// Runs a (1 of max 1), bb (2 of max 3), c (1 of max 1) grow to max+1.
		KindRepeat: {
			"a/ a/1 b/1 b/2 c/3 __end__/4",
			"a/ b/1 b/2 b/3 b/3 c/3 __end__/4",
			"a/ b/1 b/2 c/3 c/4 __end__/4",
		},
		// a's visit ends with 9 instead of 1; b and c have no other event.
		KindEvent: {
			"a/ b/9 b/2 c/3 __end__/4",
		},
	}
	for _, k := range Kinds {
		if g := text(got[k]); !reflect.DeepEqual(g, want[k]) {
			t.Errorf("%s: got %q, want %q", k, g, want[k])
		}
	}
}

func TestTooFew(t *testing.T) {
	line := func(id, node string) string {
		return `{"session_id":"` + id + `","step":0,"node":"` + node + `","event":"ok"}` + "\n"
	}
	tests := []struct {
		name  string
		log   string
		folds int
		want  string
	}{
		{"single", line("s0", "a"), 5, "the log has a single session; cross-validation needs at least 5"},
		{"fewer than folds", line("s0", "a") + line("s1", "a") + line("s2", "b"), 5, "the log has 3 sessions, fewer than the 5 folds"},
		// s0, s2 and s4 hash to fold 1 of 2.
		{"empty fold", line("s0", "a") + line("s2", "a") + line("s4", "b"), 2, "fold 2 of 2 holds no session (the log has 3)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lg := readLog(t, "x.jsonl", tt.log, nil)
			_, err := Run(lg, Options{Folds: tt.folds, Settings: []Setting{{Merge: mine.MergeLabel}}, Base: mine.DefaultOptions()})
			if !errors.Is(err, ErrTooFew) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrTooFew saying %q", err, tt.want)
			}
		})
	}
}

// TestDeterministic runs the same evaluation with one and with four workers
// and wants the same report, build times aside.
func TestDeterministic(t *testing.T) {
	lg := readFile(t, filepath.Join("..", "..", "testdata", "returns.jsonl"), filepath.Join("..", "..", "testdata", "returns.labels.json"))
	opt := Options{Folds: 4, Base: mine.DefaultOptions(), Settings: []Setting{
		{Merge: mine.MergeLabel, Generalize: mine.GeneralizeNone},
		{Merge: mine.MergeAlergia, Alpha: 0.01, Generalize: mine.GeneralizeAuto},
		{Merge: mine.MergeAlergia, Alpha: 0.01, Generalize: mine.GeneralizeAuto, MaxUnusual: 1},
		{Merge: mine.MergeAlergia, Alpha: 0.01, Generalize: mine.GeneralizeAuto, MaxUnusualRun: 1},
	}}
	run := func(workers int) *Report {
		o := opt
		o.Workers = workers
		rep, err := Run(lg, o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rep.Results {
			rep.Results[i].Overall.BuildMS = 0
			for f := range rep.Results[i].Folds {
				rep.Results[i].Folds[f].BuildMS = 0
			}
		}
		return rep
	}
	a, b := run(1), run(4)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("reports differ between 1 and 4 workers:\n%+v\n%+v", a.Results, b.Results)
	}
	if a.Sessions != 400 || a.Results[0].Overall.Test != 400 {
		t.Errorf("sessions %d, held out %d; want 400 each", a.Sessions, a.Results[0].Overall.Test)
	}
}

// TestSharedModels: settings that differ only in their caps
// (Setting.MaxUnusual, MaxUnusualRun) share one model per fold, and each
// scores as it would alone.
func TestSharedModels(t *testing.T) {
	lg := readFile(t, filepath.Join("..", "..", "testdata", "returns.jsonl"), filepath.Join("..", "..", "testdata", "returns.labels.json"))
	loose := Setting{Merge: mine.MergeAlergia, Alpha: 0.01, Generalize: mine.GeneralizeLoose}
	capped := loose
	capped.MaxUnusual = 1
	run := func(settings ...Setting) []Result {
		rep, err := Run(lg, Options{Folds: 4, Base: mine.DefaultOptions(), Settings: settings})
		if err != nil {
			t.Fatal(err)
		}
		for i := range rep.Results {
			rep.Results[i].Overall.BuildMS = 0
			rep.Results[i].Pareto = false
			for f := range rep.Results[i].Folds {
				rep.Results[i].Folds[f].BuildMS = 0
			}
		}
		return rep.Results
	}
	inRow := loose
	inRow.MaxUnusualRun = 1
	auto := loose
	auto.Generalize = mine.GeneralizeAuto
	if got, want := shareModels([]Setting{loose, capped, auto, inRow}), [][]int{{0, 1, 3}, {2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("models shared %v, want %v", got, want)
	}
	both := run(loose, capped, inRow)
	alone := []Result{run(loose)[0], run(capped)[0], run(inRow)[0]}
	if !reflect.DeepEqual(both, alone) {
		t.Errorf("scored together:\n%+v\nalone:\n%+v", both, alone)
	}
	for _, r := range both[1:] {
		if r.Overall.Rejected <= both[0].Overall.Rejected {
			t.Errorf("%s rejects %.3f, loose alone %.3f: want more", r.Name, r.Overall.Rejected, both[0].Overall.Rejected)
		}
	}
}

// TestRealLogs holds what generalisation gives on the real logs of
// ../../../shared/data with default settings: held-out sessions accepted,
// and perturbed ones (removal and swap) still rejected, at the figures
// measured when it was written less a margin of noise. The targets of the
// generalisation issue (accepted 0.90 with rejected 0.55 on tau2 retail,
// 0.45 on taubench airline) are not reached: see docs/build.md. It skips
// when the data is absent.
func TestRealLogs(t *testing.T) {
	data := filepath.Join("..", "..", "..", "shared", "data", "jsonl")
	chat := filepath.Join(t.TempDir(), "chat.json")
	if err := os.WriteFile(chat, []byte(`{"rules": [{"name": "text turns carry no stage", "match": {"node": "^(agent_msg|user_msg)$"}, "drop": true}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// real, where set: the band of the default's rejections at a move a
	// held-out session takes (measured 0.157 and 0.431 with the chat
	// turns dropped, 0.004 on help desk).
	tests := []struct {
		log, labels        string
		accepted, rejected float64
		real               *[2]float64
	}{
		{"tau2_retail.jsonl", filepath.Join("..", "..", "testdata", "tau2_retail.labels.json"), 0.82, 0.82, nil},
		{"tau2_retail.jsonl", chat, 0.80, 0.61, &[2]float64{0.10, 0.22}},
		{"taubench_airline.jsonl", chat, 0.85, 0.43, &[2]float64{0.35, 0.50}},
		{"helpdesk.jsonl.gz", "", 0.99, 0.95, &[2]float64{0, 0.02}},
	}
	for _, tt := range tests {
		t.Run(tt.log+"+"+filepath.Base(tt.labels), func(t *testing.T) {
			lg := readFile(t, filepath.Join(data, tt.log), tt.labels)
			def := mine.DefaultOptions()
			none := Setting{Merge: def.Merge, Alpha: def.Alpha, Generalize: mine.GeneralizeNone}
			dflt := Setting{Merge: def.Merge, Alpha: def.Alpha, Generalize: def.Generalize}
			rep, err := Run(lg, Options{Folds: 5, Base: def, Settings: []Setting{none, dflt}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				t.Logf("%-36s accepted %.3f rejected %.3f transitions %.1f (generalised %.1f)",
					r.Name, r.Overall.Accepted, r.Overall.Rejected, r.Overall.Transitions, r.Overall.Generalized)
			}
			o := rep.Results[1].Overall
			if o.Accepted < tt.accepted || o.Rejected < tt.rejected {
				t.Errorf("default: accepted %.3f, rejected %.3f; want at least %.2f and %.2f", o.Accepted, o.Rejected, tt.accepted, tt.rejected)
			}
			if tt.real != nil && (o.RejectedReal < tt.real[0] || o.RejectedReal > tt.real[1]) {
				t.Errorf("default: rejected at a real move %.3f; want %.2f to %.2f", o.RejectedReal, tt.real[0], tt.real[1])
			}
			if o.Accepted <= rep.Results[0].Overall.Accepted && o.Accepted < 1 {
				t.Errorf("generalising accepts %.3f, no more than without (%.3f)", o.Accepted, rep.Results[0].Overall.Accepted)
			}
		})
	}
}

// fiveFolds scores settings on lg over 5 folds from the default options,
// as eval does, and logs each one's overall figures.
func fiveFolds(t *testing.T, lg *mine.Log, settings []Setting) []Result {
	t.Helper()
	rep, err := Run(lg, Options{Folds: 5, Base: mine.DefaultOptions(), Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		o := r.Overall
		t.Logf("%-52s accepted %.3f rejected %.3f states %.1f", r.Name, o.Accepted, o.Rejected, o.States)
	}
	return rep.Results
}

// TestBayesRealLogs holds the Bayesian merge on the real logs with the chat
// turns dropped. On tau-bench airline, with a transition's prior at 4 and
// no generalisation, it accepts as many held-out sessions as Alergia did in
// the generalisation issue's measurement (0.780) and rejects more (0.641):
// measured 0.780 / 0.649. With its default priors and auto it lies above
// the line from the alergia constraints map to the default on airline
// (measured 0.841 / 0.504, the line 0.495 there) and on it on tau2 retail
// (0.762 / 0.680, the line 0.679). With priors 8 and 1.5 and auto it
// dominates the default on both logs (measured 0.812 / 0.631 and
// 0.863 / 0.454), as the README's table says.
func TestBayesRealLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	data, chat := realData(t)
	for _, tt := range []struct {
		log    string
		margin float64 // how far above the line bayes+auto must lie
	}{
		{"taubench_airline.jsonl", 0.005},
		{"tau2_retail.jsonl", -0.005},
	} {
		t.Run(tt.log, func(t *testing.T) {
			lg := readFile(t, filepath.Join(data, tt.log), chat)
			def := mine.DefaultOptions()
			settings := []Setting{
				{Merge: mine.MergeBayes, PriorMove: 4, PriorState: def.BayesStatePrior, Generalize: mine.GeneralizeNone},
				{Merge: mine.MergeBayes, PriorMove: def.BayesMovePrior, PriorState: def.BayesStatePrior, Generalize: mine.GeneralizeAuto},
				{Merge: def.Merge, Alpha: def.Alpha, Generalize: mine.GeneralizeConstraints},
				{Merge: def.Merge, Alpha: def.Alpha, Generalize: def.Generalize},
				{Merge: mine.MergeBayes, PriorMove: 8, PriorState: 1.5, Generalize: mine.GeneralizeAuto},
			}
			o := make([]Scores, len(settings))
			for i, r := range fiveFolds(t, lg, settings) {
				o[i] = r.Overall
			}
			if tt.log == "taubench_airline.jsonl" && (o[0].Accepted < 0.780 || o[0].Rejected <= 0.641) {
				t.Errorf("bayes, move 4, none: %.3f / %.3f, want at least 0.780 accepted and more than 0.641 rejected (Alergia's point)", o[0].Accepted, o[0].Rejected)
			}
			if h := o[4]; h.Accepted < o[3].Accepted || h.Rejected <= o[3].Rejected {
				t.Errorf("bayes 8 / 1.5, auto: %.3f / %.3f, does not dominate the default's %.3f / %.3f", h.Accepted, h.Rejected, o[3].Accepted, o[3].Rejected)
			}
			c, d, b := o[2], o[3], o[1]
			if b.Accepted <= c.Accepted || b.Accepted >= d.Accepted {
				t.Fatalf("bayes, auto accepts %.3f: not between %.3f and %.3f", b.Accepted, c.Accepted, d.Accepted)
			}
			line := c.Rejected + (b.Accepted-c.Accepted)/(d.Accepted-c.Accepted)*(d.Rejected-c.Rejected)
			if b.Rejected < line+tt.margin {
				t.Errorf("bayes, auto: %.3f / %.3f, want at least %.3f (the alergia frontier there %+.3f)", b.Accepted, b.Rejected, line+tt.margin, tt.margin)
			}
		})
	}
}

// TestMaxUnusualRealLogs holds the rows of loose checked with a cap on
// unusual moves (check --max-unusual; README and docs/check-replay-eval.md)
// on the real logs with the chat
// turns dropped: with 3 it dominates the default on tau-bench airline
// (measured 0.890 / 0.456 against 0.863 / 0.437), with 2 on tau2 retail
// (0.812 / 0.646 against 0.812 / 0.622); each cap rejects more than loose
// without one.
func TestMaxUnusualRealLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	data, chat := realData(t)
	for _, tt := range []struct {
		log string
		cap int // the cap that dominates the default
	}{
		{"taubench_airline.jsonl", 3},
		{"tau2_retail.jsonl", 2},
	} {
		t.Run(tt.log, func(t *testing.T) {
			lg := readFile(t, filepath.Join(data, tt.log), chat)
			def := mine.DefaultOptions()
			loose := Setting{Merge: def.Merge, Alpha: def.Alpha, Generalize: mine.GeneralizeLoose}
			capped := loose
			capped.MaxUnusual = tt.cap
			settings := []Setting{{Merge: def.Merge, Alpha: def.Alpha, Generalize: def.Generalize}, loose, capped}
			res := fiveFolds(t, lg, settings)
			d, l, c := res[0].Overall, res[1].Overall, res[2].Overall
			if c.Accepted < d.Accepted || c.Rejected <= d.Rejected {
				t.Errorf("%s: %.3f / %.3f, does not dominate the default's %.3f / %.3f", res[2].Name, c.Accepted, c.Rejected, d.Accepted, d.Rejected)
			}
			if c.Rejected <= l.Rejected || c.Accepted > l.Accepted {
				t.Errorf("%s: %.3f / %.3f against loose's %.3f / %.3f: want more rejected, no more accepted", res[2].Name, c.Accepted, c.Rejected, l.Accepted, l.Rejected)
			}
		})
	}
}

// TestMaxUnusualRunRealLogs holds the README's rows of maps checked with a
// cap on unusual moves in a row (check --max-unusual-run 2) on the real logs
// with the chat turns dropped, measured: on tau2 retail the default map
// 0.812 / 0.653 (unchecked 0.812 / 0.622), loose 0.887 / 0.581 (with
// --max-unusual 3, 0.887 / 0.514), any-order 0.925 / 0.506 (loose unchecked
// 0.925 / 0.438, any-order 0.963 / 0.315); on tau-bench airline
// the default map 0.852 / 0.482 (0.863 / 0.437), loose 0.901 / 0.436 (0.918
// / 0.380). Each capped map rejects more than the same map unchecked; the
// dominations are held where measured, and airline's loose point less a
// margin of one held-out session and 0.01. The README's bayes row (prior 8,
// loose, --max-unusual 4 --max-unusual-run 2: 0.887 / 0.610 and 0.896 /
// 0.457) dominates loose with --max-unusual 3, which it replaced, on both.
// On airline any-order with constraints learned at a support of 40
// sessions, checked with --max-unusual 8 --max-unusual-run 4 (0.973 /
// 0.160), dominates the inductive miner on the same folds (0.973 / 0.108)
// and the figure the generalisation issue gives for it (0.973 / 0.158),
// which --max-unusual-run 4 alone only equals.
func TestMaxUnusualRunRealLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	data, chat := realData(t)
	def := mine.DefaultOptions()
	at := func(g string, unusual, run int) Setting {
		return Setting{Merge: def.Merge, Alpha: def.Alpha, Generalize: g, MaxUnusual: unusual, MaxUnusualRun: run}
	}
	settings := []Setting{
		at(mine.GeneralizeAuto, 0, 0), at(mine.GeneralizeAuto, 0, 2),
		at(mine.GeneralizeLoose, 0, 0), at(mine.GeneralizeLoose, 0, 2), at(mine.GeneralizeLoose, 3, 0),
		at(mine.GeneralizeAnyOrder, 0, 0), at(mine.GeneralizeAnyOrder, 0, 2),
		{Merge: mine.MergeBayes, PriorMove: 8, PriorState: 0.5, Generalize: mine.GeneralizeLoose, MaxUnusual: 4, MaxUnusualRun: 2},
		{Merge: def.Merge, Alpha: def.Alpha, Generalize: mine.GeneralizeAnyOrder, ConstraintSupport: 40, MaxUnusual: 8, MaxUnusualRun: 4},
	}
	dominates := func(t *testing.T, a, b Result) {
		t.Helper()
		if a.Overall.Accepted < b.Overall.Accepted || a.Overall.Rejected <= b.Overall.Rejected {
			t.Errorf("%s: %.3f / %.3f, does not dominate %s: %.3f / %.3f", a.Name, a.Overall.Accepted, a.Overall.Rejected, b.Name, b.Overall.Accepted, b.Overall.Rejected)
		}
	}
	t.Run("tau2_retail", func(t *testing.T) {
		r := fiveFolds(t, readFile(t, filepath.Join(data, "tau2_retail.jsonl"), chat), settings)
		dominates(t, r[1], r[0])
		dominates(t, r[3], r[4])
		dominates(t, r[6], r[2])
		dominates(t, r[7], r[4])
	})
	t.Run("taubench_airline", func(t *testing.T) {
		r := fiveFolds(t, readFile(t, filepath.Join(data, "taubench_airline.jsonl"), chat), settings)
		for _, i := range []int{0, 2, 5} {
			if r[i+1].Overall.Rejected <= r[i].Overall.Rejected {
				t.Errorf("%s rejects %.3f, no more than unchecked (%.3f)", r[i+1].Name, r[i+1].Overall.Rejected, r[i].Overall.Rejected)
			}
		}
		if o := r[3].Overall; o.Accepted < 0.895 || o.Rejected < 0.426 {
			t.Errorf("%s: %.3f / %.3f; want at least 0.895 / 0.426", r[3].Name, o.Accepted, o.Rejected)
		}
		dominates(t, r[7], r[4])
		// The inductive miner on these folds (testdata/bench/im.py):
		// 0.973 / 0.108; the figure for it 0.973 / 0.158 (177 of
		// 182 held-out sessions is 0.97253).
		if o := r[8].Overall; o.Accepted < 0.9725 || o.Rejected <= 0.158 {
			t.Errorf("%s: %.4f / %.4f; want to dominate the inductive miner's 0.973 / 0.158", r[8].Name, o.Accepted, o.Rejected)
		}
	})
}

// TestAnyOrderRealLogs holds the permissive end (generalize any-order) and
// its loose form on the real logs with the chat turns dropped, less a
// margin: on tau2 retail any-order accepts more and rejects no less than
// pm4py's inductive miner on the same folds (0.925 / 0.313), measured
// 0.963 / 0.315; on airline 0.951 / 0.190. Loose, measured 0.925 / 0.438
// and 0.918 / 0.380, rejects more than any-order while accepting at least
// 0.9.
func TestAnyOrderRealLogs(t *testing.T) {
	data, chat := realData(t)
	for _, tt := range []struct {
		log, generalize    string
		accepted, rejected float64
	}{
		{"tau2_retail.jsonl", mine.GeneralizeAnyOrder, 0.95, 0.31},
		{"taubench_airline.jsonl", mine.GeneralizeAnyOrder, 0.94, 0.18},
		{"tau2_retail.jsonl", mine.GeneralizeLoose, 0.91, 0.42},
		{"taubench_airline.jsonl", mine.GeneralizeLoose, 0.90, 0.36},
	} {
		t.Run(tt.generalize+"/"+tt.log, func(t *testing.T) {
			lg := readFile(t, filepath.Join(data, tt.log), chat)
			def := mine.DefaultOptions()
			rep, err := Run(lg, Options{Folds: 5, Base: def, Settings: []Setting{{Merge: def.Merge, Alpha: def.Alpha, Generalize: tt.generalize}}})
			if err != nil {
				t.Fatal(err)
			}
			if o := rep.Results[0].Overall; o.Accepted < tt.accepted || o.Rejected < tt.rejected {
				t.Errorf("%s: accepted %.3f, rejected %.3f; want at least %.2f and %.2f", tt.generalize, o.Accepted, o.Rejected, tt.accepted, tt.rejected)
			}
		})
	}
}

// TestRejectedReal holds Scores.RejectedReal: a perturbation refused at a
// move that a held-out session of the fold takes counts, one refused at a
// move no held-out session takes does not. Sessions a b c d everywhere, and
// one session a c x d: in its fold the removal of b (a c d) is refused at
// a -> c, a move that session makes; in the other folds that session is
// mined, a -> c is the model's, and every refusal is at a move no held-out
// session takes.
func TestRejectedReal(t *testing.T) {
	const folds = 3
	var b strings.Builder
	line := func(id string, i int, node string) {
		// Each step its own event, so that a move's event is told apart
		// from its neighbours'.
		fmt.Fprintf(&b, `{"session_id":%q,"step":%d,"node":%q,"event":"e%d"}`+"\n", id, i, node, i)
	}
	for i := range 30 {
		for j, n := range []string{"a", "b", "c", "d"} {
			line(fmt.Sprintf("s%d", i), j, n)
		}
	}
	for j, n := range []string{"a", "c", "x", "d"} {
		line("odd", j, n)
	}
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	lg := readFile(t, path, "")
	none := Setting{Merge: mine.MergeLabel, Generalize: mine.GeneralizeNone}
	rep, err := Run(lg, Options{Folds: folds, Base: mine.DefaultOptions(), Settings: []Setting{none}})
	if err != nil {
		t.Fatal(err)
	}
	odd := Fold("odd", folds)
	for f, sc := range rep.Results[0].Folds {
		t.Logf("fold %d: rejected %.3f, at a real move %.3f", f, sc.Rejected, sc.RejectedReal)
		if f == odd && sc.RejectedReal == 0 {
			t.Errorf("fold %d holds a c x d: the removal of b is refused at a -> c, which it takes; got rejected at a real move 0", f)
		}
		if f != odd && sc.RejectedReal != 0 {
			t.Errorf("fold %d: rejected at a real move %.3f; want 0 (a -> c is the model's)", f, sc.RejectedReal)
		}
	}
}

// TestOracleFrontier measures how far adding moves to the mined map can go
// on the real logs (chat turns dropped): each fold's model is given every
// move its held-out sessions take (addOracle), which no method can know.
// On tau2 retail the constraints map so completed accepts 0.950 and
// rejects 0.588, past the generalisation issue's 0.90 / 0.55: the moves
// real sessions need cost little rejection there, and the gap is in
// choosing them. On airline it rejects 0.379 at 0.962 (0.336 at 0.995
// without constraints), under the 0.45: a third of what the mined
// map refuses is refused only at moves held-out sessions take. The band
// is the test; the two checks per setting guard addOracle itself (it adds
// moves, so it can only accept more and reject less).
func TestOracleFrontier(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	data, chat := realData(t)
	for _, tt := range []struct {
		log string
		// the constraints map with the oracle's moves: at least accepted
		// and rejected lo, at most rejected hi
		accepted, lo, hi float64
	}{
		{"tau2_retail.jsonl", 0.93, 0.56, 0.62},
		{"taubench_airline.jsonl", 0.94, 0.35, 0.41},
	} {
		t.Run(tt.log, func(t *testing.T) {
			lg := readFile(t, filepath.Join(data, tt.log), chat)
			def := mine.DefaultOptions()
			var settings []Setting
			for _, g := range []string{mine.GeneralizeNone, mine.GeneralizeConstraints, mine.GeneralizeAuto} {
				settings = append(settings, Setting{Merge: def.Merge, Alpha: def.Alpha, Generalize: g})
			}
			plain, err := Run(lg, Options{Folds: 5, Base: def, Settings: settings})
			if err != nil {
				t.Fatal(err)
			}
			oracle, err := Run(lg, Options{Folds: 5, Base: def, Settings: settings, oracle: true})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range oracle.Results {
				p, o := plain.Results[i].Overall, r.Overall
				t.Logf("%-36s %.3f / %.3f, with the held-out sessions' moves %.3f / %.3f", r.Name, p.Accepted, p.Rejected, o.Accepted, o.Rejected)
				if o.Accepted < p.Accepted || o.Rejected > p.Rejected {
					t.Errorf("%s: the oracle's moves give %.3f / %.3f from %.3f / %.3f; adding moves can only accept more and reject less", r.Name, o.Accepted, o.Rejected, p.Accepted, p.Rejected)
				}
				if o.RejectedReal != 0 {
					t.Errorf("%s: rejected at a real move %.3f with every real move added; want 0", r.Name, o.RejectedReal)
				}
			}
			o := oracle.Results[1].Overall
			if o.Accepted < tt.accepted || o.Rejected < tt.lo || o.Rejected > tt.hi {
				t.Errorf("constraints with the held-out moves: %.3f / %.3f; want accepted >= %.2f, rejected %.2f to %.2f", o.Accepted, o.Rejected, tt.accepted, tt.lo, tt.hi)
			}
		})
	}
}

// TestNeededMoves measures how far the log can tell which moves a new
// session will need. Per fold, the moves (label, event, label) that the
// held-out sessions take and the constraints map (no added move) lacks are
// the needed ones; the candidates are the moves the any-order setting
// adds (every label after every label, with the log's outcomes). It logs,
// pooled over the folds, how many candidates are needed (the base rate) and
// how many of the moves auto adds are, and holds that auto's moves are
// needed at least twice as often as a candidate drawn at random: its
// evidence picks, but the base rate is what bounds any rule that adds
// moves (docs/build.md).
func TestNeededMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	data, chat := realData(t)
	for _, name := range []string{"tau2_retail.jsonl", "taubench_airline.jsonl"} {
		t.Run(name, func(t *testing.T) {
			lg := readFile(t, filepath.Join(data, name), chat)
			const folds = 5
			fold := make([]int, len(lg.Sessions))
			for i := range lg.Sessions {
				fold[i] = Fold(lg.Sessions[i].ID, folds)
			}
			tests := heldOut(lg, fold, folds, nil)
			var needed, cands, neededCands, added, neededAdded int
			var perFold []int
			for f := range folds {
				train := lg.Subset(func(s *mine.Session) bool { return Fold(s.ID, folds) != f })
				build := func(g string) map[triple]bool {
					opt := mine.DefaultOptions()
					opt.Generalize = g
					m, err := mine.Build(train, opt)
					if err != nil {
						t.Fatal(err)
					}
					return labelTriples(m)
				}
				cons, auto, anyOrder := build(mine.GeneralizeConstraints), build(mine.GeneralizeAuto), build(mine.GeneralizeAnyOrder)
				need := func(mv triple) bool { return tests[f].realMoves[mv] && !cons[mv] }
				n := 0
				for mv := range tests[f].realMoves {
					if need(mv) {
						n++
					}
				}
				needed += n
				perFold = append(perFold, n)
				for mv := range anyOrder {
					if !cons[mv] {
						cands++
						if need(mv) {
							neededCands++
						}
					}
				}
				for mv := range auto {
					if !cons[mv] {
						added++
						if need(mv) {
							neededAdded++
						}
					}
				}
			}
			if cands == 0 || added == 0 || neededCands == 0 {
				t.Fatalf("%d candidates (%d needed), auto adds %d: nothing to compare", cands, neededCands, added)
			}
			base, picked := float64(neededCands)/float64(cands), float64(neededAdded)/float64(added)
			t.Logf("needed %d moves over %d folds (per fold %v), %d of them among any-order's %d candidates (%.3f); auto's moves %d, %d needed (%.3f)",
				needed, folds, perFold, neededCands, cands, base, added, neededAdded, picked)
			if picked < 2*base {
				t.Errorf("auto's moves are needed at %.3f, a candidate's base rate %.3f: want at least twice it", picked, base)
			}
		})
	}
}

// realData returns the shared data's jsonl directory and a labels file that
// drops the chat turns, as the generalisation issue measured.
func realData(t *testing.T) (data, chat string) {
	t.Helper()
	chat = filepath.Join(t.TempDir(), "chat.json")
	if err := os.WriteFile(chat, []byte(`{"rules": [{"match": {"node": "^(agent_msg|user_msg)$"}, "drop": true}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join("..", "..", "..", "shared", "data", "jsonl"), chat
}

// TestEmptiedRealLog: tau-bench airline has 18 sessions of chat turns only.
// With the turns dropped they are no sessions of the log, and eval says it
// left them out rather than losing them.
func TestEmptiedRealLog(t *testing.T) {
	data, chat := realData(t)
	lg := readFile(t, filepath.Join(data, "taubench_airline.jsonl"), chat)
	if lg.Emptied != 18 || len(lg.EmptiedIDs) != 18 || lg.NumSessions() != 182 {
		t.Fatalf("emptied %d (%d ids), sessions %d; want 18, 18, 182", lg.Emptied, len(lg.EmptiedIDs), lg.NumSessions())
	}
	rep, err := Run(lg, Options{Folds: 2, Base: mine.DefaultOptions(), Settings: []Setting{{Merge: mine.MergeLabel, Generalize: mine.GeneralizeNone}}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if rep.Emptied != 18 || rep.Sessions != 182 || !strings.Contains(b.String(), "\n18 more sessions with every record dropped by the label rules, left out\n") {
		t.Errorf("emptied %d, sessions %d, text:\n%s", rep.Emptied, rep.Sessions, b.String())
	}
}

// TestUnseenRealLogs holds the figures of three real logs no setting was
// chosen on: tau2-bench's telecom (40 sessions) and airline (20) runs, read
// from their raw exports with the chat turns dropped, and pm4py's receipt
// log (1,434 cases, CSV) (docs/check-replay-eval.md, "Logs no setting was
// chosen on"). Each setting must keep at least what it measured, less 0.01.
func TestUnseenRealLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	data, chat := realData(t)
	raw := filepath.Join(data, "..", "raw")
	def := mine.DefaultOptions()
	var settings []Setting
	for _, g := range []string{mine.GeneralizeNone, mine.GeneralizeAuto, mine.GeneralizeLoose, mine.GeneralizeAnyOrder} {
		settings = append(settings, Setting{Merge: def.Merge, Alpha: def.Alpha, Generalize: g})
	}
	for _, tt := range []struct {
		file, labels string
		want         [][2]float64 // per setting: accepted, rejected as measured
	}{
		{"tau2/gpt-4.1_telecom_default_gpt-4.1_1trials.json", chat, [][2]float64{{0.275, 0.939}, {0.275, 0.869}, {0.675, 0.392}, {0.800, 0.226}}},
		{"tau2/gpt-4.1_airline_default_gpt-4.1_1trials.json", chat, [][2]float64{{0.250, 0.876}, {0.300, 0.856}, {0.500, 0.536}, {0.650, 0.402}}},
		{"csv/receipt.csv", "", [][2]float64{{0.976, 0.838}, {0.987, 0.820}, {0.993, 0.807}, {0.998, 0.692}}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			lg := readFile(t, filepath.Join(raw, tt.file), tt.labels)
			for i, r := range fiveFolds(t, lg, settings) {
				o, w := r.Overall, tt.want[i]
				if o.Accepted < w[0]-0.01 || o.Rejected < w[1]-0.01 {
					t.Errorf("%s: accepted %.3f, rejected %.3f; measured %.3f and %.3f", r.Name, o.Accepted, o.Rejected, w[0], w[1])
				}
			}
		})
	}
}
