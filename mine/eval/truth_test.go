package eval

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/gen"
)

// sampleTruth reads n sessions sampled from truth with seed as a log.
func sampleTruth(t testing.TB, truth *automaton.Model, n int, seed uint64) *mine.Log {
	t.Helper()
	g, err := gen.New(truth, gen.Options{Seed: seed, Start: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)})
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
	}}}, mine.ReadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	return lg
}

// TruthScore is what a model mined from a sample of a truth scores on
// held-out sessions of the same truth.
type TruthScore struct {
	Accepted      float64 // held-out sessions the model accepts
	TruthRejected float64 // removal and swap perturbations the truth rejects that the model rejects
	EventRejected float64 // event perturbations the truth rejects that the model rejects
	GenTotal      int     // generalised transitions
	GenOutside    int     // of them not in the truth, as (label, event, label)
}

// scoreTruth mines train with opt and scores it on held.
func scoreTruth(t testing.TB, truth *automaton.Model, train, held *mine.Log, opt mine.Options) TruthScore {
	t.Helper()
	m, err := mine.Build(train, opt)
	if err != nil {
		t.Fatal(err)
	}
	var sc TruthScore
	tl := labelTriples(truth)
	label := map[string]string{}
	for _, s := range m.States {
		label[s.ID] = s.Label
	}
	for _, tr := range m.Transitions {
		if tr.Generalized != "" {
			sc.GenTotal++
			if !tl[triple{label[tr.From], tr.Event, label[tr.To]}] {
				sc.GenOutside++
				if testing.Verbose() {
					t.Logf("  outside the truth: %s --%s--> %s (%s)", label[tr.From], tr.Event, label[tr.To], tr.Generalized)
				}
			}
		}
	}
	c := conform.New(m, conform.Options{})
	tc := conform.New(truth, conform.Options{})
	events := map[string][]string{}
	for _, s := range truth.States {
		seen := map[string]bool{}
		for _, tr := range truth.Transitions {
			if tr.From == s.ID && !seen[tr.Event] {
				seen[tr.Event] = true
				events[s.Label] = append(events[s.Label], tr.Event)
			}
		}
	}
	acc, neg, caught, eneg, ecaught := 0, 0, 0, 0, 0
	why := map[string]int{}
	for i := range held.Sessions {
		mvs := held.Moves(&held.Sessions[i])
		if c.Fits(mvs) {
			acc++
		} else if testing.Verbose() {
			v := c.Check(mvs)
			k := v.Deviation.Kind
			if v.Deviation.Constraint != nil {
				k += " " + v.Deviation.Constraint.String()
			} else {
				k += " " + v.Deviation.State + " -" + v.Deviation.Event + "-> " + v.Deviation.Label
			}
			why[k]++
		}
		for kind, ps := range movesOf(perturb(mvs, nil, events)) {
			for _, p := range ps {
				if tc.Fits(p) {
					continue
				}
				rej := !c.Fits(p)
				switch kind {
				case KindRemove, KindSwap:
					neg++
					if rej {
						caught++
					}
				case KindEvent:
					eneg++
					if rej {
						ecaught++
					}
				}
			}
		}
	}
	for k, n := range why {
		if n >= 10 {
			t.Logf("  rejected held-out: %4d %s", n, k)
		}
	}
	sc.Accepted = float64(acc) / float64(len(held.Sessions))
	sc.TruthRejected = float64(caught) / float64(max(neg, 1))
	sc.EventRejected = float64(ecaught) / float64(max(eneg, 1))
	return sc
}

// TestTruthTable measures generalisation where what is legal is known
// exactly, and holds what the default gives: on the returns truth at 3,000
// sessions no generalised move outside the truth and every perturbation the
// truth rejects caught; on the agent truth at 30 and 100 sessions (2,000
// held-out sessions each) at least 0.95 and 0.98 of the perturbations the
// truth rejects caught and at least 0.90 and 0.98 of held-out sessions
// accepted (the targets), and at most 10% of the generalised moves,
// pooled over the runs, outside the truth (precision 0.90, the issue's
// target).
// Seeds 3, 5 and 8 are the issue's, on which the rules were chosen; 11, 13,
// 17, 21 and 24 were added after every choice, so that the figures are not
// those of three samples alone. Run with -v for the table docs/build.md
// quotes.
func TestTruthTable(t *testing.T) {
	if testing.Short() {
		t.Skip("truth table: skipped in -short mode")
	}
	agent := gen.AgentTruth()
	gens, outside := 0, 0
	for _, g := range []string{mine.GeneralizeNone, mine.GeneralizeAuto} {
		for _, n := range []int{30, 100} {
			for _, seed := range []uint64{3, 5, 8, 11, 13, 17, 21, 24} {
				train := sampleTruth(t, agent, n, seed)
				held := sampleTruth(t, agent, 2000, 1000+seed)
				o := mine.DefaultOptions()
				o.Generalize = g
				sc := scoreTruth(t, agent, train, held, o)
				t.Logf("agent %-5s n=%3d seed=%d accepted %.3f truth-rejected %.3f event %.3f gen %d outside %d", g, n, seed, sc.Accepted, sc.TruthRejected, sc.EventRejected, sc.GenTotal, sc.GenOutside)
				if g != mine.GeneralizeAuto {
					continue
				}
				gens, outside = gens+sc.GenTotal, outside+sc.GenOutside
				if want := map[int]float64{30: 0.95, 100: 0.98}[n]; sc.TruthRejected < want {
					t.Errorf("agent, %d sessions, seed %d: %.3f of the truth's negatives rejected, want at least %.2f", n, seed, sc.TruthRejected, want)
				}
				if want := map[int]float64{30: 0.90, 100: 0.98}[n]; sc.Accepted < want {
					t.Errorf("agent, %d sessions, seed %d: %.3f of held-out sessions accepted, want at least %.2f", n, seed, sc.Accepted, want)
				}
			}
		}
	}
	if 10*outside > gens {
		t.Errorf("agent: %d of %d generalised moves outside the truth, want at most 10%% (precision 0.90)", outside, gens)
	}
	ret := gen.ReturnsTruth()
	train := sampleTruth(t, ret, 3000, 3)
	held := sampleTruth(t, ret, 2000, 1003)
	for _, g := range []string{mine.GeneralizeNone, mine.GeneralizeAuto} {
		o := mine.DefaultOptions()
		o.Generalize = g
		sc := scoreTruth(t, ret, train, held, o)
		t.Logf("returns %-5s n=3000 accepted %.3f truth-rejected %.3f event %.3f gen %d outside %d", g, sc.Accepted, sc.TruthRejected, sc.EventRejected, sc.GenTotal, sc.GenOutside)
		if sc.GenOutside > 0 || sc.TruthRejected < 1 {
			t.Errorf("returns, %s: %d generalised moves outside the truth, %.3f of its negatives rejected; want none and all", g, sc.GenOutside, sc.TruthRejected)
		}
	}
}

// TestTruthEvalPrecision: eval --truth's generalisation precision, pooled
// over 5 folds of 30 and of 100 sessions of the agent truth (seeds 3, 5, 8),
// is at least 0.90, the generalisation issue's target. The folds' models are
// mined from 24 and 80 sessions, where a rule the log shows is thinner than
// in the table above.
func TestTruthEvalPrecision(t *testing.T) {
	if testing.Short() {
		t.Skip("eval on truths: skipped in -short mode")
	}
	agent := gen.AgentTruth()
	total, in := 0, 0
	for _, n := range []int{30, 100} {
		for _, seed := range []uint64{3, 5, 8} {
			rep, err := Run(sampleTruth(t, agent, n, seed), Options{Folds: 5, Base: mine.DefaultOptions(), Truth: agent,
				Settings: []Setting{{Merge: mine.MergeAlergia, Alpha: 0.01, Generalize: mine.GeneralizeAuto}}})
			if err != nil {
				t.Fatal(err)
			}
			o := rep.Results[0].Overall
			t.Logf("agent n=%3d seed=%d accepted %.3f t-rej %.3f generalised %d, %d in the truth", n, seed, o.Accepted, *o.TruthRejected, o.GenTotal, o.GenInTruth)
			total, in = total+o.GenTotal, in+o.GenInTruth
		}
	}
	if total == 0 || 10*(total-in) > total {
		t.Errorf("%d of %d generalised moves in the truth, want at least 0.90", in, total)
	}
}

// TestConstraintsOfTheAgentTruth: the dependencies adjacency cannot see are
// learned from 100 sessions: the order lookup before the confirmation, one
// of the two identification tools before the order lookup, and the order
// lookups in one run until the (next request's) confirmation.
func TestConstraintsOfTheAgentTruth(t *testing.T) {
	m, err := mine.Build(sampleTruth(t, gen.AgentTruth(), 100, 3), mine.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []automaton.Constraint{
		{Kind: automaton.ConstraintPrecedence, A: "get_order_details", B: "confirm_with_user"},
		{Kind: automaton.ConstraintPrecedence, A: "find_user_id_by_email", B: "get_order_details", Or: []string{"find_user_id_by_name_zip"}},
		{Kind: automaton.ConstraintRun, A: "get_order_details", B: "confirm_with_user"},
	} {
		found := false
		for _, c := range m.Constraints {
			if c.String() == want.String() {
				found = true
				if c.Confidence != 1 || c.Support < 50 {
					t.Errorf("%s: support %d, confidence %v; want at least 50 and 1", c, c.Support, c.Confidence)
				}
			}
		}
		if !found {
			t.Errorf("no constraint %q among %v", want, m.Constraints)
		}
	}
}

// TestGenOutside: a generalised move the truth lacks is listed, by label
// and kind, in the report and its text.
func TestGenOutside(t *testing.T) {
	agent := gen.AgentTruth()
	cut := *agent
	cut.Transitions = nil
	for _, tr := range agent.Transitions {
		if agent.State(tr.From).Label == "find_user_id_by_email" && agent.State(tr.To).Label == "get_product_details" {
			continue
		}
		cut.Transitions = append(cut.Transitions, tr)
	}
	rep, err := Run(sampleTruth(t, agent, 30, 5), Options{Folds: 5, Base: mine.DefaultOptions(), Truth: &cut,
		Settings: []Setting{{Merge: mine.MergeAlergia, Alpha: 0.01, Generalize: mine.GeneralizeAuto}}})
	if err != nil {
		t.Fatal(err)
	}
	o := rep.Results[0].Overall
	const want = "find_user_id_by_email -[ok]-> get_product_details (swap)"
	g := GenMove{From: "find_user_id_by_email", Event: "ok", To: "get_product_details", Kind: mine.GenSwap}
	if len(o.GenOutside) != 1 || o.GenOutside[0].Count != o.GenTotal-o.GenInTruth || o.GenOutside[0].Count == 0 {
		t.Fatalf("outside the truth %+v (%d of %d in it), want only %+v", o.GenOutside, o.GenInTruth, o.GenTotal, g)
	}
	if g.Count = o.GenOutside[0].Count; o.GenOutside[0] != g {
		t.Fatalf("outside the truth %+v, want %+v", o.GenOutside[0], g)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "generalised outside the truth, ") || !strings.Contains(b.String(), want) {
		t.Errorf("text does not list the move:\n%s", b.String())
	}
}

// TestGenOutsideEscaped: a label from the log is written escaped, so that
// a control character in it cannot start a line or colour the terminal.
func TestGenOutsideEscaped(t *testing.T) {
	var b strings.Builder
	writeGenOutside(&b, []Result{{Name: "auto", Overall: Scores{GenOutside: []GenMove{{From: "a\x1b[31m", Event: "ok", To: "b\nfake line", Kind: mine.GenSkip, Count: 2}}}}})
	out := b.String()
	if strings.Contains(out, "\x1b") || strings.Contains(out, "\nfake line") {
		t.Errorf("raw control characters in %q", out)
	}
}

// TestConstraintSupport: mine.Options.ConstraintSupport raises the
// sessions a constraint needs: at 60 of the agent truth's 100 sessions
// every constraint learned holds in at least 60 and some of the default's
// are not learned; the model records the setting, and not the default.
func TestConstraintSupport(t *testing.T) {
	lg := sampleTruth(t, gen.AgentTruth(), 100, 3)
	def, err := mine.Build(lg, mine.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	opt := mine.DefaultOptions()
	opt.ConstraintSupport = 60
	m, err := mine.Build(lg, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Constraints) == 0 || len(m.Constraints) >= len(def.Constraints) {
		t.Errorf("%d constraints at 60, %d at the default: want fewer, and some", len(m.Constraints), len(def.Constraints))
	}
	for _, c := range m.Constraints {
		if c.Support < 60 {
			t.Errorf("%s: support %d, want at least 60", c, c.Support)
		}
	}
	if m.Params.ConstraintSupport != 60 || def.Params.ConstraintSupport != 0 {
		t.Errorf("params record %d and %d, want 60 and none for the default", m.Params.ConstraintSupport, def.Params.ConstraintSupport)
	}
}

// TestConstraintSupportNegative: a negative support is an error, not the
// default with a negative value recorded.
func TestConstraintSupportNegative(t *testing.T) {
	opt := mine.DefaultOptions()
	opt.ConstraintSupport = -3
	if _, err := mine.Build(sampleTruth(t, gen.AgentTruth(), 10, 3), opt); err == nil || !strings.Contains(err.Error(), "constraint support -3") {
		t.Errorf("support -3: %v, want an error naming it", err)
	}
}

// TestTruthFreshSeeds scores the default on 30 more samples of the agent
// truth at 30 and 100 sessions (seeds 40-69, drawn after every choice of
// the rules, none of them seen while choosing), as TestTruthTable does:
// the share of seeds below each of the targets, and the means.
// Run with -v for the figures docs/build.md quotes.
func TestTruthFreshSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("truth samples: skipped in -short mode")
	}
	agent := gen.AgentTruth()
	for _, n := range []int{30, 100} {
		wantAcc, wantRej := map[int]float64{30: 0.90, 100: 0.98}[n], map[int]float64{30: 0.95, 100: 0.98}[n]
		var acc, rej float64
		gens, outside, lowAcc, lowRej, k := 0, 0, 0, 0, 0
		for seed := uint64(40); seed < 70; seed++ {
			sc := scoreTruth(t, agent, sampleTruth(t, agent, n, seed), sampleTruth(t, agent, 2000, 1000+seed), mine.DefaultOptions())
			acc, rej, k = acc+sc.Accepted, rej+sc.TruthRejected, k+1
			gens, outside = gens+sc.GenTotal, outside+sc.GenOutside
			if sc.Accepted < wantAcc {
				lowAcc++
			}
			if sc.TruthRejected < wantRej {
				lowRej++
			}
		}
		t.Logf("agent auto n=%d, %d seeds: accepted %.3f (below %.2f: %d), truth-rejected %.4f (below %.2f: %d), generalised %d, outside the truth %d",
			n, k, acc/float64(k), wantAcc, lowAcc, rej/float64(k), wantRej, lowRej, gens, outside)
		if acc/float64(k) < wantAcc || rej/float64(k) < wantRej || 10*outside > gens {
			t.Errorf("%d sessions: means %.3f and %.4f, %d of %d moves outside the truth; want at least %.2f and %.2f, at most 10%%", n, acc/float64(k), rej/float64(k), outside, gens, wantAcc, wantRej)
		}
	}
}
