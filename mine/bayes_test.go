package mine

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// TestBayesMerge holds the Bayesian merge to what its posterior says: a
// stage reached from two contexts with the same future is one state (the
// merge saves the moves the two share), with opposite futures two (the
// merge saves none and costs the likelihood of telling them apart), where
// Alergia at its least count merges both.
func TestBayesMerge(t *testing.T) {
	states := func(merge string, sessions ...string) int {
		t.Helper()
		o := DefaultOptions()
		o.Merge, o.Generalize = merge, GeneralizeNone
		m := mustBuild(t, o, ReadOptions{}, strInput("log.jsonl", sessionsJSONL(sessions...)))
		n := 0
		for _, s := range m.States {
			if s.Label == "x" {
				n++
			}
		}
		return n
	}
	repeat := func(n int, s ...string) []string {
		var out []string
		for range n {
			out = append(out, s...)
		}
		return out
	}
	same := repeat(20, "a:ok x:ok c:ok", "b:ok x:ok c:ok")
	apart := repeat(6, "a:ok x:ok c:ok", "b:ok x:ok d:ok")
	if got := states(MergeBayes, same...); got != 1 {
		t.Errorf("same future: %d states of x, want 1", got)
	}
	if got := states(MergeBayes, apart...); got != 2 {
		t.Errorf("opposite futures: %d states of x, want 2", got)
	}
	// Six arrivals each are below Alergia's least count: it merges them.
	if got := states(MergeAlergia, apart...); got != 1 {
		t.Errorf("alergia, opposite futures seen 6 times each: %d states of x, want 1", got)
	}
}

// TestBayesGain checks the posterior change of one fold against the sums
// done by hand: folding x after b (x -ok-> d, 6 times) into x after a
// (x -ok-> c, 6 times).
func TestBayesGain(t *testing.T) {
	p, lg := prefixTree(t,
		"a:ok x:ok c:ok", "a:ok x:ok c:ok", "a:ok x:ok c:ok", "a:ok x:ok c:ok", "a:ok x:ok c:ok", "a:ok x:ok c:ok",
		"b:ok x:ok d:ok", "b:ok x:ok d:ok", "b:ok x:ok d:ok", "b:ok x:ok d:ok", "b:ok x:ok d:ok", "b:ok x:ok d:ok",
	)
	x := lg.intern("x")
	var xs []int32
	for i, n := range p.nodes {
		if n.label == x {
			xs = append(xs, int32(i))
		}
	}
	if len(xs) != 2 {
		t.Fatalf("%d tree nodes of x, want 2", len(xs))
	}
	// Folding one x into the other: x's moves become c 6, d 6 (two
	// transitions before, two after); the folded x's subtree (d, then the
	// end) is taken along, so one state goes.
	const mp, sp = 3.0, 0.5
	want := 12*math.Log(0.5) + sp
	if got := bayesGain(p, xs[0], xs[1], mp, sp); math.Abs(got-want) > 1e-9 {
		t.Errorf("gain %.6f, want %.6f", got, want)
	}
}

// prefixTree reads sessions (see sessionsJSONL) and returns the prefix tree
// Build merges, and the log that names its labels.
func prefixTree(t *testing.T, sessions ...string) (*pta, *Log) {
	t.Helper()
	lg, err := Read([]Input{strInput("log.jsonl", sessionsJSONL(sessions...))}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := &builder{lg: lg, opt: DefaultOptions()}
	b.startLabel = lg.intern(automaton.StartID)
	b.variants()
	return buildPTA(b.vars, b.startLabel, b.lessMove), lg
}

// logPosterior is learnBayes's objective over the live nodes of p: each
// state's log-likelihood, less mp per transition and sp per state.
func logPosterior(p *pta, mp, sp float64) float64 {
	l := 0.0
	for i := range p.nodes {
		if !p.nodes[i].dead {
			l += logLikelihood(p.nodes[i].edges) - mp*float64(len(p.nodes[i].edges)) - sp
		}
	}
	return l
}

func (p *pta) clone() *pta {
	c := &pta{nodes: append([]ptaNode(nil), p.nodes...)}
	for i := range c.nodes {
		c.nodes[i].edges = append([]ptaEdge(nil), c.nodes[i].edges...)
		c.nodes[i].byMove = maps.Clone(c.nodes[i].byMove)
	}
	return c
}

// TestBayesGainFolds checks bayesGain against the merge it predicts, on
// random small logs with retries and loops: for every candidate merge of a
// red-blue run, the log posterior after the merge, less the one before, is
// the predicted gain.
func TestBayesGainFolds(t *testing.T) {
	const mp, sp = 1.0, 0.5
	r := rand.New(rand.NewPCG(1, 2))
	checked := 0
	for trial := range 300 {
		var sessions []string
		for range 2 + r.IntN(12) {
			var steps []string
			for range 1 + r.IntN(6) {
				steps = append(steps, []string{"x", "y", "z"}[r.IntN(3)]+":"+[]string{"ok", "err"}[r.IntN(2)])
			}
			sessions = append(sessions, strings.Join(steps, " "))
		}
		p, _ := prefixTree(t, sessions...)
		redBlue(p, func(blue int32, reds []int32) int32 {
			par := int32(-1)
			for i := range p.nodes {
				for _, e := range p.nodes[i].edges {
					if e.to == blue && !p.nodes[i].dead {
						par = int32(i)
					}
				}
			}
			best, bestGain := int32(-1), 0.0
			for _, red := range reds {
				want := bayesGain(p, red, blue, mp, sp)
				c := p.clone()
				before := logPosterior(c, mp, sp)
				c.merge(red, blue, par, func(int32, int32) {})
				if got := logPosterior(c, mp, sp) - before; math.Abs(got-want) > 1e-9 {
					t.Fatalf("trial %d (%q): merging %d into %d changes the log posterior by %.6f, bayesGain says %.6f", trial, sessions, blue, red, got, want)
				}
				checked++
				if best < 0 && want >= 0 || best >= 0 && want > bestGain {
					best, bestGain = red, want
				}
			}
			return best
		})
	}
	if checked < 1000 {
		t.Errorf("%d merges checked, want at least 1000", checked)
	}
}

// TestBayesPickerScan holds learnBayes's picker to what trying every red
// state of the label with bayesGain picks, on random logs whose events
// carry ids (so that red states pile up and have many moves), with some
// events shared, at several priors (a state prior of 0 and of 1000 make
// ties): the automata must be the same.
func TestBayesPickerScan(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	priors := [][2]float64{{1, 0.5}, {0.1, 0}, {1, 0}, {8, 2}, {1, 1000}}
	trials := 60
	if testing.Short() {
		trials = 15
	}
	for trial := range trials {
		labels, events := 1+r.IntN(4), 2+r.IntN(2000)
		var sessions []string
		for range 20 + r.IntN(400) {
			var steps []string
			for range r.IntN(5) {
				ev := fmt.Sprintf("e%d", r.IntN(events))
				if r.IntN(3) == 0 {
					ev = fmt.Sprintf("ok%d", r.IntN(2))
				}
				steps = append(steps, fmt.Sprintf("l%d:%s", r.IntN(labels), ev))
			}
			sessions = append(sessions, strings.Join(steps, " "))
		}
		for _, pr := range priors {
			p, _ := prefixTree(t, sessions...)
			got := learnBayes(p.clone(), pr[0], pr[1])
			want := learnBayesScan(p, pr[0], pr[1])
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, priors %v: the picker's automaton (%d states) differs from the scan's (%d states)", trial, pr, len(got.label), len(want.label))
			}
		}
	}
}

// learnBayesScan is learnBayes trying every red state of the label with
// bayesGain, as it did before its picker.
func learnBayesScan(p *pta, movePrior, statePrior float64) *dfa {
	moves := 0
	for i := range p.nodes {
		for _, e := range p.nodes[i].edges {
			moves += e.count
		}
	}
	unit := math.Log(float64(max(moves, 2))) / 2
	mp, sp := movePrior*unit, statePrior*unit
	return redBlue(p, func(b int32, reds []int32) int32 {
		best, bestGain := int32(-1), 0.0
		for _, r := range reds {
			if g := bayesGain(p, r, b, mp, sp); best < 0 && g >= 0 || best >= 0 && g > bestGain {
				best, bestGain = r, g
			}
		}
		return best
	})
}

// TestChildIndex holds the move index of nodes with many moves to the list
// it indexes, after the tree is built and after Alergia folds it: child
// finds each move where a scan of the list does, and no other.
func TestChildIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var sessions []string
	for range 600 {
		var steps []string
		for range 1 + r.IntN(4) {
			steps = append(steps, fmt.Sprintf("l%d:e%d", r.IntN(3), r.IntN(300)))
		}
		sessions = append(sessions, strings.Join(steps, " "))
	}
	check := func(when string, p *pta) {
		t.Helper()
		indexed := 0
		for n := range p.nodes {
			nd := &p.nodes[n]
			if nd.byMove != nil {
				indexed++
				if len(nd.byMove) != len(nd.edges) {
					t.Fatalf("%s: node %d indexes %d moves of %d", when, n, len(nd.byMove), len(nd.edges))
				}
			}
			for i := range nd.edges {
				if got := p.child(int32(n), nd.edges[i].mv); got != &nd.edges[i] {
					t.Fatalf("%s: node %d: child of move %d is not its edge %d", when, n, nd.edges[i].mv, i)
				}
			}
			if p.child(int32(n), mkMove(1<<31, 1<<31)) != nil {
				t.Fatalf("%s: node %d has a move it lacks", when, n)
			}
		}
		if indexed == 0 {
			t.Fatalf("%s: no node indexed", when)
		}
	}
	p, _ := prefixTree(t, sessions...)
	check("built", p)
	learnAlergia(p, 0.05)
	check("merged", p)
}
