package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/eval"
	"github.com/fsmine/fsmine/mine/gen"
)

// TestMergeQuality measures the merge strategies against a known automaton:
// sessions are sampled from the built-in returns-flow truth (a stage used in
// two contexts, retry loops, rare escalation and complaint paths) with
// off-topic drift, mined with the bundled label rules, and scored on
// sessions held out from mining:
//   - recall: share of held-out sessions the mined model accepts;
//   - precision: share of sessions sampled from the mined model that the
//     truth accepts (detour self-loops taken out first);
//   - states: how many states a reviewer reads.
//
// Run with -v to see the table the README quotes.
func TestMergeQuality(t *testing.T) {
	truth, rules := returnsTruthAndRules(t)
	heldOut := readGenerated(t, truth, 1000, 99, rules)
	type result struct {
		recall, precision float64
		states            int
	}
	configs := []struct {
		name  string
		merge string
		alpha float64
	}{
		{"label", mine.MergeLabel, 0},
		{"alergia a=0.001", mine.MergeAlergia, 0.001},
		{"alergia a=0.01", mine.MergeAlergia, 0.01},
		{"alergia a=0.05", mine.MergeAlergia, 0.05},
		{"bayes", mine.MergeBayes, 0},
	}
	results := map[string]result{}
	t.Logf("%-16s %6s %8s %10s %7s", "merge", "train", "recall", "precision", "states")
	for _, n := range []int{100, 400, 2000, 8000} {
		train := readGenerated(t, truth, n, uint64(n), rules)
		for _, c := range configs {
			o := mine.DefaultOptions()
			o.Merge, o.Alpha = c.merge, c.alpha
			m, err := mine.Build(train, o)
			if err != nil {
				t.Fatal(err)
			}
			r := result{states: len(m.States) - 2}
			acc := 0
			for i := range heldOut.Sessions {
				if m.Accepts(heldOut.Moves(&heldOut.Sessions[i])) {
					acc++
				}
			}
			r.recall = float64(acc) / float64(len(heldOut.Sessions))
			rng := rand.New(rand.NewPCG(7, 7))
			const samples = 2000
			real := 0
			for i := 0; i < samples; i++ {
				var mvs []automaton.Move
				for _, mv := range m.Sample(rng, 1000) {
					if !strings.HasPrefix(mv.Event, "detour:") {
						mvs = append(mvs, mv)
					}
				}
				if truth.Accepts(mvs) {
					real++
				}
			}
			r.precision = float64(real) / samples
			results[fmt.Sprintf("%s/%d", c.name, n)] = r
			t.Logf("%-16s %6d %8.3f %10.3f %7d", c.name, n, r.recall, r.precision, r.states)
		}
	}
	// What the default rests on; each could turn false if the miner broke.
	def := results["alergia a=0.01/8000"]
	lbl := results["label/8000"]
	if def.recall < 0.97 {
		t.Errorf("alergia recall at 8000 sessions = %.3f, want >= 0.97", def.recall)
	}
	if def.precision <= lbl.precision {
		t.Errorf("alergia precision %.3f not above label merge %.3f", def.precision, lbl.precision)
	}
	if truthStates := len(truth.States) - 2; def.states > 2*truthStates {
		t.Errorf("alergia: %d states, want at most twice the truth's %d", def.states, truthStates)
	}
	// The Bayesian merge with its default priors keeps the two contexts of
	// a stage apart at every size, as alergia does, and is as precise.
	for _, n := range []int{100, 400, 2000, 8000} {
		b, a := results[fmt.Sprintf("bayes/%d", n)], results[fmt.Sprintf("alergia a=0.01/%d", n)]
		if b.precision < a.precision || b.states != a.states {
			t.Errorf("bayes at %d sessions: precision %.3f, %d states; alergia %.3f, %d", n, b.precision, b.states, a.precision, a.states)
		}
	}
}

// readGenerated samples n sessions from truth with 5% drift and reads them
// back as a log.
func readGenerated(t *testing.T, truth *automaton.Model, n int, seed uint64, rules *mine.Rules) *mine.Log {
	return sampleLog(t, truth, n, seed, 0.05, rules)
}

// sampleLog samples n sessions from truth with the given drift and reads
// them back as a log, labelled by rules.
func sampleLog(t *testing.T, truth *automaton.Model, n int, seed uint64, drift float64, rules *mine.Rules) *mine.Log {
	t.Helper()
	g, err := gen.New(truth, gen.Options{Seed: seed, Drift: drift, Start: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := g.Write(context.Background(), &buf, n); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	lg, err := mine.Read([]mine.Input{{Name: "gen", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}}, mine.ReadOptions{Rules: rules, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	return lg
}

// TestHalvesDiffClean mines two disjoint halves of one log (6,000 sessions
// sampled from the returns truth with drift, split by a hash of the session
// id) with default options and diffs them: state ids must match (no state
// or transition added, removed or relabelled) and no share or outflow may
// change significantly. It guards the stability of state ids.
func TestHalvesDiffClean(t *testing.T) {
	truth, rules := returnsTruthAndRules(t)
	g, err := gen.New(truth, gen.Options{Seed: 11, Drift: 0.05, Start: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	if err := g.Write(context.Background(), &all, 6000); err != nil {
		t.Fatal(err)
	}
	var halves [2]bytes.Buffer
	for _, line := range bytes.SplitAfter(all.Bytes(), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		// s-000123: split on the last digit's parity.
		i := bytes.Index(line, []byte(`"session_id":"`)) + len(`"session_id":"`)
		end := i + bytes.IndexByte(line[i:], '"')
		halves[line[end-1]%2].Write(line)
	}
	var models [2]*automaton.Model
	for h := range halves {
		data := halves[h].Bytes()
		lg, err := mine.Read([]mine.Input{{Name: fmt.Sprint("half", h), Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		}}}, mine.ReadOptions{Rules: rules, Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		// Generalised moves depend on which rare contexts each half saw;
		// this test guards the merge and the state ids.
		o := mine.DefaultOptions()
		o.Generalize = mine.GeneralizeNone
		if models[h], err = mine.Build(lg, o); err != nil {
			t.Fatal(err)
		}
	}
	d := automaton.Compare(models[0], models[1], automaton.DiffOptions{Alpha: 0.01})
	if n := len(d.StatesAdded) + len(d.StatesRemoved) + len(d.StatesRelabeled); n > 0 {
		t.Errorf("halves differ in states: added %v, removed %v, relabelled %v", d.StatesAdded, d.StatesRemoved, d.StatesRelabeled)
	}
	if n := len(d.TransitionsAdded) + len(d.TransitionsRemoved); n > 0 {
		t.Errorf("halves differ in transitions: added %v, removed %v", d.TransitionsAdded, d.TransitionsRemoved)
	}
	if len(d.ShareChanges)+len(d.OutflowShifts) > 0 {
		t.Errorf("halves differ significantly: shares %v, outflows %v", d.ShareChanges, d.OutflowShifts)
	}
}

// returnsTruthAndRules returns the built-in returns-flow truth model and the bundled
// sample's label rules.
func returnsTruthAndRules(t *testing.T) (*automaton.Model, *mine.Rules) {
	t.Helper()
	truth, err := loadGenModel("", "returns")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../testdata/returns.labels.json")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := mine.ParseRules(data)
	if err != nil {
		t.Fatal(err)
	}
	return truth, rules
}

// TestSparseAgentTruth measures generalisation where what is legal is known
// exactly: sessions sampled from the built-in tool-calling agent truth
// (gen --truth agent: sparse, every session a combination of the same
// tools) are mined from 30, 100 and 300 sessions and scored on 2,000
// held-out ones: the share the mined model accepts, and the share it
// rejects of their perturbations (a middle step removed, two adjacent steps
// swapped) that the truth itself rejects. Run with -v for the README table.
func TestSparseAgentTruth(t *testing.T) {
	truth := gen.AgentTruth()
	sample := func(n int, seed uint64) *mine.Log { return sampleLog(t, truth, n, seed, 0, nil) }
	held := sample(2000, 99)
	var sessions, negatives [][]automaton.Move
	for i := range held.Sessions {
		mvs := held.Moves(&held.Sessions[i])
		sessions = append(sessions, mvs)
		ps := eval.Perturb(mvs, nil)
		for _, kind := range []string{eval.KindRemove, eval.KindSwap} {
			for _, p := range ps[kind] {
				if !truth.Accepts(p) {
					negatives = append(negatives, p)
				}
			}
		}
	}
	type score struct{ accepted, rejected float64 }
	got := map[string]score{}
	t.Logf("%-9s %6s %9s %9s %12s", "generalize", "train", "accepted", "rejected", "transitions")
	for _, n := range []int{30, 100, 300} {
		train := sample(n, uint64(n))
		for _, g := range []string{mine.GeneralizeNone, mine.GeneralizeAuto} {
			o := mine.DefaultOptions()
			o.Generalize = g
			m, err := mine.Build(train, o)
			if err != nil {
				t.Fatal(err)
			}
			c := conform.New(m, conform.Options{})
			acc, rej := 0, 0
			for _, s := range sessions {
				if c.Fits(s) {
					acc++
				}
			}
			for _, p := range negatives {
				if !c.Fits(p) {
					rej++
				}
			}
			s := score{float64(acc) / float64(len(sessions)), float64(rej) / float64(len(negatives))}
			got[fmt.Sprintf("%s/%d", g, n)] = s
			t.Logf("%-10s %6d %9.3f %9.3f %12d", g, n, s.accepted, s.rejected, len(m.Transitions))
		}
	}
	t.Logf("%d held-out sessions, %d perturbations the truth rejects", len(sessions), len(negatives))
	// What the default gives today (the README's table); each could turn
	// false if generalisation broke or grew looser. The targets
	// (0.90 accepted at 30 sessions, 0.95 of the truth's negatives
	// rejected) are not reached: see the README.
	for _, n := range []int{100, 300} {
		if s := got[fmt.Sprintf("auto/%d", n)]; s.accepted < 0.99 {
			t.Errorf("%d sessions: default accepts %.3f of held-out sessions, want at least 0.99", n, s.accepted)
		}
	}
	for _, n := range []int{30, 100, 300} {
		if s := got[fmt.Sprintf("auto/%d", n)]; s.rejected < 0.8 {
			t.Errorf("%d sessions: default rejects %.3f of the truth's negatives, want at least 0.8", n, s.rejected)
		}
	}
}
