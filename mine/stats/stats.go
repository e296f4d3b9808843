// Package stats summarises a model, and the logs run through it, to show
// where the flow hurts: per state its visits, sessions, dwell and where the
// sessions through it end; the hottest back edges; loop iterations; and,
// with logs, numeric record fields (tokens, latency, cost) per visit.
// FromModel reads what the model alone says; FromLogs replays every
// session of a log through the model, as conform.Checker does, and
// counts. A Report is fsmine stats's JSON object, and WriteText its text.
// The package never prints.
package stats

import (
	"math"
	"sort"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/internal/text"
	"github.com/fsmine/fsmine/mine"
)

// DefaultMeasures are the numeric record fields fsmine stats reports per
// state when the records carry them.
var DefaultMeasures = []string{"tokens.prompt", "tokens.completion", "cost", "duration_ms"}

// A Report is what stats found, as fsmine stats --format json writes it.
// Its slices are never nil (encoded as [], not null) apart from those the
// comments name.
type Report struct {
	// Model names the model: FromModel and FromLogs set its version and
	// digest; the caller sets Path.
	Model ModelRef `json:"model"`
	// From is "logs" when the figures come from replaying logs, "model"
	// when from the model alone.
	From     string `json:"from"`
	Sessions int    `json:"sessions"`
	Events   int    `json:"events"`
	// Fit counts the sessions that fit the model (logs only); Unplaced the
	// visits the replay could not place in a state.
	Fit      int `json:"fit,omitempty"`
	Unplaced int `json:"unplaced,omitempty"`
	// Emptied counts the sessions of the logs the label rules left
	// without a step (logs only; see mine.Log.Emptied): not counted in.
	Emptied int `json:"emptied,omitempty"`
	// EndsFrom says where the endings come from: "logs", or "top_variants"
	// covering EndsCoverage of the model's sessions.
	EndsFrom     string  `json:"ends_from"`
	EndsCoverage float64 `json:"ends_coverage"`
	// Measures are the record fields measured that some record carries,
	// in the order asked.
	Measures []string `json:"measures"`
	// Unusable counts, per measured field, the records that carry it as
	// something else than a number a float64 holds (text, true, 1e400):
	// left out of the figures.
	Unusable map[string]int `json:"unusable,omitempty"`
	// UnusableAt names, per field of Unusable, the first such record as
	// file:line.
	UnusableAt map[string]string `json:"unusable_at,omitempty"`
	// States are the model's states but __start__ and __end__, by visits
	// (most first), then by id.
	States []State `json:"states"`
	// BackEdges are the hottest back edges (by count, most first), at most
	// the top asked; BackEdgesAll counts them all.
	BackEdges    []BackEdge `json:"back_edges"`
	BackEdgesAll int        `json:"back_edges_total"`
	// Loops are the model's loops, in its order.
	Loops []Loop `json:"loops"`
	// Failures are where sessions fail under an outcome (see Failures);
	// nil, and left out, without one.
	Failures *FailureReport `json:"failures,omitempty"`

	m *automaton.Model
}

// ModelRef names a model: the file it was read from, its version and its
// digest.
type ModelRef struct {
	Path    string `json:"path"`
	Version int    `json:"version"`
	Digest  string `json:"digest"`
}

// State is what stats found of one state.
type State struct {
	ID       string `json:"id"`
	Label    string `json:"label"`
	Visits   int    `json:"visits"`
	Sessions int    `json:"sessions"`
	// DwellMS is nil when no visit has a dwell time.
	DwellMS *automaton.Dwell `json:"dwell_ms"`
	// Ends are where the sessions through the state end, most first.
	Ends []End `json:"ends"`
	// Measures summarise, by field path, the visits that carry the field;
	// nil when none does.
	Measures map[string]*Summary `json:"measures,omitempty"`
	// Examples are sessions the model was mined from that visited the
	// state (see fsmine build --examples); nil for none.
	Examples []automaton.Example `json:"examples,omitempty"`
}

// End is the share of the sessions passing through a state that end in
// State (the state before __end__; "?" when the replay lost track).
type End struct {
	State    string  `json:"state"`
	Sessions int     `json:"sessions"`
	Share    float64 `json:"share"`
}

// Summary summarises a numeric field over the visits of a state that carry
// it, each figure rounded to 3 decimals.
type Summary struct {
	Visits int     `json:"visits"`
	Total  float64 `json:"total"`
	Mean   float64 `json:"mean"`
	P50    float64 `json:"p50"`
	P95    float64 `json:"p95"`
}

// BackEdge is a transition back to an earlier state (a loop's way back)
// and how often it was taken.
type BackEdge struct {
	From     string `json:"from"`
	Event    string `json:"event"`
	To       string `json:"to"`
	Count    int    `json:"count"`
	Sessions int    `json:"sessions"`
	// Examples are sessions the model was mined from that took the edge;
	// nil for none.
	Examples []automaton.Example `json:"examples,omitempty"`
}

// Loop is one of the model's loops: its iterations and sessions, and how
// many times a stay in it iterated. MaxIterations is, with logs, the most a
// stay made; from the model alone, the model's max_iterations, the loop's
// cap, which a generalised model may raise above it.
type Loop struct {
	States        []string `json:"states"`
	Count         int      `json:"count"`
	Sessions      int      `json:"sessions"`
	MaxIterations int      `json:"max_iterations"`
	P95Iterations int      `json:"p95_iterations"`
	// Histogram counts, with logs, the stays that iterated 1, 2, 3...
	// times; nil from the model alone.
	Histogram []Bin `json:"histogram"`
}

// Bin counts the stays in a loop that iterated Iterations times.
type Bin struct {
	Iterations int `json:"iterations"`
	Stays      int `json:"stays"`
}

// FromModel returns what model m alone says: its states' counts and dwell,
// its back edges and loops, and endings estimated from its top variants.
// It lists the top back edges, or all of them when top is 0 or less.
func FromModel(m *automaton.Model, top int) *Report {
	r := &Report{m: m, From: "model", Sessions: m.Source.Sessions, Events: m.Source.Events, EndsFrom: "top_variants", Measures: []string{}}
	// Endings from the top variants: per state, the variants through it by
	// their last state.
	ends := map[string]map[string]int{}
	through := map[string]int{}
	covered := 0
	for _, v := range m.TopVariants {
		if len(v.States) == 0 {
			continue
		}
		covered += v.Count
		last := v.States[len(v.States)-1]
		seen := map[string]bool{}
		for _, s := range v.States {
			if seen[s] {
				continue
			}
			seen[s] = true
			if ends[s] == nil {
				ends[s] = map[string]int{}
			}
			ends[s][last] += v.Count
			through[s] += v.Count
		}
	}
	r.EndsCoverage = mine.Round6(text.Share(covered, m.Source.Sessions))
	for _, s := range m.States {
		if s.ID == automaton.StartID || s.ID == automaton.EndID {
			continue
		}
		r.States = append(r.States, State{
			ID: s.ID, Label: s.Label, Visits: s.Visits, Sessions: s.Sessions, DwellMS: s.DwellMS,
			Ends: endList(ends[s.ID], through[s.ID]),
		})
	}
	for _, t := range m.Transitions {
		// A generalised back edge was never taken: no heat to report.
		if t.BackEdge && t.Generalized == "" {
			r.BackEdges = append(r.BackEdges, BackEdge{From: t.From, Event: t.Event, To: t.To, Count: t.Count, Sessions: t.Sessions})
		}
	}
	for _, l := range m.Loops {
		r.Loops = append(r.Loops, Loop{States: l.States, Count: l.Count, Sessions: l.Sessions, MaxIterations: l.MaxIterations, P95Iterations: l.P95Iterations})
	}
	r.finish(top)
	return r
}

// Visits accumulates the dwell times and measured values of visits (of a
// state, or before a transition), as stats and the report's measures take
// them from logs.
type Visits struct {
	Dwell  mine.DwellStats
	Values [][]float64 // by index into the Measures' paths
}

// Add adds visit vi of session si of the log the Measures were read for.
func (a *Visits) Add(ms *mine.Measures, si, vi int, v *mine.Visit) {
	if v.HasDwell {
		a.Dwell.Add(v.DwellMS)
	}
	if a.Values == nil {
		a.Values = make([][]float64, len(ms.Paths))
	}
	for p := range ms.Paths {
		if x, ok := ms.Value(si, vi, p); ok {
			a.Values[p] = append(a.Values[p], x)
		}
	}
}

// FromLogs replays every session of lg (read holding every session) through
// model m and counts; a record counts toward the state the replay placed it
// in, and records after a deviation that cannot be placed are counted
// apart (Report.Unplaced). ms, when not nil, must be mine.Measure's result
// for lg: its fields are summarised per state. It lists the top back
// edges, or all of them when top is 0 or less.
func FromLogs(m *automaton.Model, lg *mine.Log, ms *mine.Measures, top int) *Report {
	if ms == nil {
		ms = &mine.Measures{}
	}
	r := &Report{m: m, From: "logs", Sessions: len(lg.Sessions), Emptied: lg.Emptied, EndsFrom: "logs", EndsCoverage: 1}
	c := conform.New(m, conform.Options{})
	idx := map[string]int{}
	type acc struct {
		visits, sessions, stamp int
		Visits
		ends map[string]int
	}
	accs := make([]acc, len(m.States))
	for i, s := range m.States {
		idx[s.ID] = i
		accs[i].ends = map[string]int{}
	}
	type backAcc struct{ count, sessions, stamp int }
	backs := map[*automaton.Transition]*backAcc{}
	hist := make([]map[int]int, len(m.Loops))
	loopCount := make([]int, len(m.Loops))
	loopSess := make([]int, len(m.Loops))
	for i := range hist {
		hist[i] = map[int]int{}
	}
	var through []int
	var moves []automaton.Move
	for si := range lg.Sessions {
		s := &lg.Sessions[si]
		r.Events += len(s.Visits)
		moves = lg.AppendMoves(moves[:0], s)
		if c.Fits(moves) {
			r.Fit++
		}
		steps := c.Replay(moves)
		through = through[:0]
		stayLoop, stayIters := -1, 0
		loopSeen := map[int]bool{}
		flush := func() {
			if stayLoop >= 0 && stayIters > 0 {
				hist[stayLoop][stayIters]++
			}
			stayLoop, stayIters = -1, 0
		}
		for _, st := range steps {
			if st.Transition != nil && st.Transition.BackEdge {
				b := backs[st.Transition]
				if b == nil {
					b = &backAcc{}
					backs[st.Transition] = b
				}
				b.count++
				if b.stamp != si+1 {
					b.stamp = si + 1
					b.sessions++
				}
			}
			if st.Loop != stayLoop {
				flush()
			}
			if st.Loop >= 0 {
				if st.Iteration > stayIters {
					loopCount[st.Loop]++
					if !loopSeen[st.Loop] {
						loopSeen[st.Loop] = true
						loopSess[st.Loop]++
					}
				}
				stayLoop, stayIters = st.Loop, st.Iteration
			}
			if st.Move >= len(s.Visits) {
				continue // the move into __end__
			}
			if st.To == "" {
				r.Unplaced++
				continue
			}
			k := idx[st.To]
			a := &accs[k]
			a.visits++
			if a.stamp != si+1 {
				a.stamp = si + 1
				a.sessions++
				through = append(through, k)
			}
			a.Add(ms, si, st.Move, &s.Visits[st.Move])
		}
		flush()
		end := "?"
		if n := len(s.Visits); n > 0 && steps[n-1].To != "" {
			end = steps[n-1].To
		}
		for _, k := range through {
			accs[k].ends[end]++
		}
	}
	for p, path := range ms.Paths {
		if ms.Found[p] > 0 {
			r.Measures = append(r.Measures, path)
		}
		if p < len(ms.Unusable) && ms.Unusable[p] > 0 {
			if r.Unusable == nil {
				r.Unusable, r.UnusableAt = map[string]int{}, map[string]string{}
			}
			r.Unusable[path] = ms.Unusable[p]
			if p < len(ms.UnusableAt) {
				r.UnusableAt[path] = ms.UnusableAt[p]
			}
		}
	}
	if r.Measures == nil {
		r.Measures = []string{}
	}
	for i, s := range m.States {
		if s.ID == automaton.StartID || s.ID == automaton.EndID {
			continue
		}
		a := &accs[i]
		st := State{ID: s.ID, Label: s.Label, Visits: a.visits, Sessions: a.sessions, Ends: endList(a.ends, a.sessions)}
		st.DwellMS = a.Dwell.Summary()
		for p, path := range ms.Paths {
			if a.Values == nil || len(a.Values[p]) == 0 {
				continue
			}
			if st.Measures == nil {
				st.Measures = map[string]*Summary{}
			}
			st.Measures[path] = Summarize(a.Values[p])
		}
		r.States = append(r.States, st)
	}
	for t, b := range backs {
		r.BackEdges = append(r.BackEdges, BackEdge{From: t.From, Event: t.Event, To: t.To, Count: b.count, Sessions: b.sessions})
	}
	for li, l := range m.Loops {
		sl := Loop{States: l.States, Count: loopCount[li], Sessions: loopSess[li], Histogram: []Bin{}}
		var stays []int
		for it, n := range hist[li] {
			sl.Histogram = append(sl.Histogram, Bin{Iterations: it, Stays: n})
			for range n {
				stays = append(stays, it)
			}
		}
		sort.Slice(sl.Histogram, func(i, j int) bool { return sl.Histogram[i].Iterations < sl.Histogram[j].Iterations })
		if len(stays) > 0 {
			sort.Ints(stays)
			sl.MaxIterations = stays[len(stays)-1]
			sl.P95Iterations = stays[int(math.Ceil(0.95*float64(len(stays))))-1]
		}
		r.Loops = append(r.Loops, sl)
	}
	r.finish(top)
	return r
}

// finish gives the report its examples, sorts it and keeps the top back
// edges.
func (r *Report) finish(top int) {
	r.Model = ModelRef{Version: r.m.Version, Digest: r.m.Digest}
	r.addExamples()
	r.sort()
	if top > 0 && len(r.BackEdges) > top {
		r.BackEdges = r.BackEdges[:top]
	}
}

// addExamples gives the states and back edges the model's example sessions.
func (r *Report) addExamples() {
	for i := range r.States {
		if s := r.m.State(r.States[i].ID); s != nil {
			r.States[i].Examples = r.m.Examples(s.Examples)
		}
	}
	for i := range r.BackEdges {
		e := &r.BackEdges[i]
		to := r.m.State(e.To)
		if to == nil {
			continue
		}
		// Looked up, not searched for among the state's moves: a state
		// of 100,000 outcomes made that the square of its moves.
		if t := r.m.Next(e.From, automaton.Move{Event: e.Event, Label: to.Label}); t != nil && t.To == e.To {
			e.Examples = transitionExamples(r.m, t)
		}
	}
}

// endList turns end-state counts into shares of total, most frequent first.
func endList(ends map[string]int, total int) []End {
	out := make([]End, 0, len(ends))
	for s, n := range ends {
		out = append(out, End{State: s, Sessions: n, Share: mine.Round6(text.Share(n, total))})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Sessions != out[j].Sessions {
			return out[i].Sessions > out[j].Sessions
		}
		return out[i].State < out[j].State
	})
	return out
}

// sort orders states by visits (most first), back edges by count.
func (r *Report) sort() {
	sort.SliceStable(r.States, func(i, j int) bool {
		if r.States[i].Visits != r.States[j].Visits {
			return r.States[i].Visits > r.States[j].Visits
		}
		return r.States[i].ID < r.States[j].ID
	})
	sort.Slice(r.BackEdges, func(i, j int) bool {
		a, b := r.BackEdges[i], r.BackEdges[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.From != b.From {
			return a.From < b.From
		}
		if a.Event != b.Event {
			return a.Event < b.Event
		}
		return a.To < b.To
	})
	r.BackEdgesAll = len(r.BackEdges)
	if r.BackEdges == nil {
		r.BackEdges = []BackEdge{}
	}
	if r.Loops == nil {
		r.Loops = []Loop{}
	}
}

// Summarize summarises xs: their number, total, mean, p50 and p95
// (Quantile), each rounded to 3 decimals; nil when xs is empty. It sorts
// xs in place.
func Summarize(xs []float64) *Summary {
	if len(xs) == 0 {
		return nil
	}
	sort.Float64s(xs)
	total := 0.0
	for _, x := range xs {
		total += x
	}
	return &Summary{Visits: len(xs), Total: mine.Round3(total), Mean: mine.Round3(total / float64(len(xs))),
		P50: mine.Round3(Quantile(xs, 0.5)), P95: mine.Round3(Quantile(xs, 0.95))}
}

// Quantile is the q-quantile (q in [0, 1]) of sorted, ascending and not
// empty, by the nearest-rank method: the smallest element at or above a
// share q of them. It panics when sorted is empty.
func Quantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}
