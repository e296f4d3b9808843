package stats

// Where sessions fail: the states and moves whose sessions fail more often
// than the log's do. For each state (but __start__ and __end__) and each
// transition that some but not all sessions with an outcome pass through,
// the sessions through it are a draw from the log's: under the hypothesis
// that passing through it says nothing about the outcome, the number of
// failures among them follows the hypergeometric distribution, and the
// one-sided Fisher exact test gives the chance of at least as many. So many
// places are tested at once that some would stand out by chance; the
// p-values are adjusted by the Benjamini-Hochberg procedure (Benjamini &
// Hochberg, "Controlling the false discovery rate", 1995), which bounds the
// expected share of false discoveries among those reported at Alpha. The
// places share sessions, so their tests are not independent; the procedure
// still holds under the positive dependence of such overlapping counts
// (Benjamini & Yekutieli 2001), and the report says it is a screen, not
// proof.

import (
	"math"
	"sort"

	"github.com/fsmine/fsmine/automaton/measure"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
)

// DefaultFailureAlpha is the false discovery rate Failures reports at.
const DefaultFailureAlpha = 0.05

// FailureReport is where sessions fail, under an outcome expression, and
// FailurePlace one state or move of it (see package automaton/measure).
type (
	FailureReport = measure.FailureReport
	FailurePlace  = measure.FailurePlace
)

// Failures finds where the sessions of a tally fail (see the comment at the
// top of failures.go), listing at most top places (0: all) at false
// discovery rate alpha (0: DefaultFailureAlpha). m is the model the tally
// was made on, for the labels.
func Failures(m *automaton.Model, t *mine.OutcomeTally, top int, alpha float64) *FailureReport {
	if alpha <= 0 {
		alpha = DefaultFailureAlpha
	}
	n, k := t.Log.Sessions, t.Log.Failed()
	r := &FailureReport{Expr: t.Expr, Sessions: n, Failed: k, Unknown: t.Log.Unknown, Alpha: alpha, Places: []FailurePlace{}}
	if n > 0 {
		r.LogRate = mine.Round6(float64(k) / float64(n))
	}
	switch {
	case n == 0:
		r.Note = "no session has an outcome"
		return r
	case k == 0:
		r.Note = "every session with an outcome succeeded: no failure rates to compare"
		return r
	case k == n:
		r.Note = "every session with an outcome failed: no failure rates to compare"
		return r
	}
	var all []FailurePlace
	label := func(id string) string {
		if s := m.State(id); s != nil {
			return s.Label
		}
		return id
	}
	place := func(p FailurePlace, it *mine.ItemOutcome) {
		s := it.Sessions
		if s == 0 || s == n {
			return // a place every session passes tells nothing apart
		}
		p.Sessions, p.Failed = s, it.Failed()
		p.P = fisherUpper(n, k, s, p.Failed)
		p.Examples = it.FailedExamples
		if p.Examples == nil {
			p.Examples = []string{}
		}
		all = append(all, p)
	}
	for id, it := range t.States {
		if id == automaton.StartID || id == automaton.EndID {
			continue
		}
		place(FailurePlace{Kind: "state", State: id, Label: label(id)}, it)
	}
	for e, it := range t.Transitions {
		place(FailurePlace{Kind: "move", State: e.From, Event: e.Event, To: e.To, Label: label(e.To)}, it)
	}
	r.Tested = len(all)
	// Benjamini-Hochberg: q of the i-th smallest p is the least of
	// p_j * tested / j over j >= i.
	sort.Slice(all, func(i, j int) bool { return placeLess(&all[i], &all[j]) })
	q := 1.0
	for i := len(all) - 1; i >= 0; i-- {
		q = math.Min(q, all[i].P*float64(len(all))/float64(i+1))
		all[i].Q = q
	}
	logRate := float64(k) / float64(n)
	for i := range all {
		p := &all[i]
		rate := float64(p.Failed) / float64(p.Sessions)
		if rate <= logRate {
			continue
		}
		p.Rate, p.Lift, p.Diff = mine.Round6(rate), mine.Round6(rate/logRate), mine.Round6(rate-logRate)
		p.Significant = p.Q <= alpha
		p.P, p.Q = roundP(p.P), roundP(p.Q)
		r.Places = append(r.Places, *p)
		if top > 0 && len(r.Places) == top {
			break
		}
	}
	return r
}

// placeLess orders places by p, then failures (most first), kind, state,
// event and target.
func placeLess(a, b *FailurePlace) bool {
	if a.P != b.P {
		return a.P < b.P
	}
	if a.Failed != b.Failed {
		return a.Failed > b.Failed
	}
	if a.Kind != b.Kind {
		return a.Kind > b.Kind // states first
	}
	if a.State != b.State {
		return a.State < b.State
	}
	if a.Event != b.Event {
		return a.Event < b.Event
	}
	return a.To < b.To
}

// roundP rounds a p-value to 4 significant digits, so that small ones keep
// their size.
func roundP(p float64) float64 {
	if p <= 0 {
		return 0
	}
	e := math.Pow(10, math.Floor(math.Log10(p))-3)
	return math.Round(p/e) * e
}

// fisherUpper is the one-sided Fisher exact test: the chance that a draw of
// s sessions out of n, k of which failed, holds at least x failures (the
// upper tail of the hypergeometric distribution). Up to maxFisherTerms
// terms it sums the tail; past that (millions of sessions, or a model
// file's counts), see fisherTail.
func fisherUpper(n, k, s, x int) float64 {
	if min(s, k)-x >= maxFisherTerms {
		return fisherTail(n, k, s, x)
	}
	total := logChoose(n, s)
	p := 0.0
	for i := x; i <= min(s, k); i++ {
		if s-i > n-k {
			continue
		}
		p += math.Exp(logChoose(k, i) + logChoose(n-k, s-i) - total)
	}
	return math.Min(p, 1)
}

// maxFisherTerms is the most terms fisherUpper sums one by one.
const maxFisherTerms = 10_000

// logChoose is the log of a choose b.
func logChoose(a, b int) float64 {
	la, _ := math.Lgamma(float64(a) + 1)
	lb, _ := math.Lgamma(float64(b) + 1)
	lab, _ := math.Lgamma(float64(a-b) + 1)
	return la - lb - lab
}

// fisherTail is fisherUpper's tail for large counts, in work that does not
// grow with them: the terms fall away from the distribution's mode on both
// sides, so the sum runs from x away from the mode (the tail above x when
// x is past the mode, else one less the tail below x) until a term no
// longer changes it. Where the spread (standard deviation) is past 1,000
// that would still be thousands of terms: the normal approximation, with
// continuity correction, stands in.
func fisherTail(n, k, s, x int) float64 {
	lo, hi := max(0, s-(n-k)), min(s, k)
	if x <= lo {
		return 1
	}
	if x > hi {
		return 0
	}
	fn, fk, fs := float64(n), float64(k), float64(s)
	mean := fs * fk / fn
	if sd := math.Sqrt(mean * (fn - fk) / fn * (fn - fs) / math.Max(fn-1, 1)); sd > 1000 {
		return 0.5 * math.Erfc((float64(x)-0.5-mean)/sd/math.Sqrt2)
	}
	total := logChoose(n, s)
	term := func(i int) float64 { return math.Exp(logChoose(k, i) + logChoose(n-k, s-i) - total) }
	mode := min(max(int(math.Floor((fs+1)*(fk+1)/(fn+2))), lo), hi)
	if x > mode {
		p := 0.0
		for i := x; i <= hi; i++ {
			t := term(i)
			p += t
			if t <= p*1e-17 {
				break
			}
		}
		return math.Min(p, 1)
	}
	q := 0.0
	for i := x - 1; i >= lo; i-- {
		t := term(i)
		q += t
		if t <= q*1e-17 {
			break
		}
	}
	return math.Max(0, 1-q)
}
