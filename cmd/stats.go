package cmd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/render/text"
)

func init() { register(newStatsCmd) }

// statsDefaultMeasures are the numeric record fields stats reports per state
// when the records carry them.
var statsDefaultMeasures = []string{"tokens.prompt", "tokens.completion", "cost", "duration_ms"}

type statsOptions struct {
	model    string
	inputs   []string
	format   string
	top      int
	measures []string
	logs     logFlags
}

func newStatsCmd(streams IO) *cobra.Command {
	opts := &statsOptions{}
	c := &cobra.Command{
		Use:   "stats M.json [LOG...]",
		Short: "Where the flow hurts: per-state traffic, dwell, endings, hot back edges, loop iterations, tokens and latency",
		Long: `stats summarises a model, and the logs run through it when given, to show
where the flow hurts:

- per state: visits, sessions, dwell p50 and p95, and where the sessions
  that pass through the state end (the share ending in each end state, the
  state before __end__);
- the hottest back edges (count, sessions);
- loops: max and p95 iterations per stay and, with logs, the histogram of
  stays that iterated 1, 2, 3... times;
- with logs, numeric record fields per state (--measure; by default
  tokens.prompt, tokens.completion and duration_ms, those the records carry):
  total, mean, p50 and p95 per visit.

Without logs, everything comes from the model: its states' counts and dwell,
its back edges and loops, and endings estimated from its top variants (the
report says what share of sessions they cover). With logs, every figure is
computed from the logs, read as the model was built from them (--labels,
--field and --from override): each session is replayed through the model as
fsmine replay does, and a record counts toward the state it was placed in
(records after a deviation that cannot be placed are counted apart). A
record that is not a visit of its own (folded, dropped or a detour) counts
its tokens and latency toward the visit before it.

--format text (default) or json.

Exit status: 0 ok; 2 trouble (bad flags, unreadable model or logs).`,
		Example: `  fsmine stats v4.json
  fsmine stats v4.json logs/today.jsonl.gz
  fsmine stats --format json v4.json logs/*.jsonl | jq '.states[] | select(.dwell_ms.p95 > 30000)'`,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("stats needs a model file M.json (and optionally logs)")
			}
			opts.model, opts.inputs = args[0], args[1:]
			return runStats(c.Context(), opts, streams)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.format, "format", "text", "output format: text or json")
	f.IntVar(&opts.top, "top", 10, "hottest back edges to list (0: all)")
	f.StringArrayVar(&opts.measures, "measure", statsDefaultMeasures, "numeric record field `PATH` to sum per state (repeatable; dotted path)")
	opts.logs.bind(f)
	return c
}

func runStats(_ context.Context, opts *statsOptions, streams IO) error {
	switch opts.format {
	case "text", "json":
	default:
		return usagef("unknown --format %q: want text or json", opts.format)
	}
	if opts.top < 0 {
		return usagef("--top must be 0 or more, got %d", opts.top)
	}
	if err := checkMeasurePaths(opts.measures); err != nil {
		return err
	}
	var r *statsReport
	if len(opts.inputs) == 0 {
		m, err := loadDiffModel(opts.model)
		if err != nil {
			return err
		}
		r = modelStats(m)
	} else {
		var err error
		if r, err = statsFromLogs(opts, streams); err != nil {
			return err
		}
	}
	r.Model = checkModelRef{Path: opts.model, Version: r.m.Version, Digest: r.m.Digest}
	r.limitBackEdges(opts.top)
	out := bufio.NewWriter(streams.Out)
	var err error
	if opts.format == "json" {
		err = writeJSON(out, r)
	} else {
		err = r.text(termSafe(out))
	}
	if err != nil {
		return err
	}
	return out.Flush()
}

// checkMeasurePaths checks --measure values.
func checkMeasurePaths(paths []string) error {
	for _, p := range paths {
		if p == "" || strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") || strings.Contains(p, "..") {
			return usagef("--measure %q: want a dotted field path such as tokens.prompt", p)
		}
	}
	return nil
}

// statsFromLogs reads the logs for the model and replays them.
func statsFromLogs(opts *statsOptions, streams IO) (*statsReport, error) {
	m, lg, ms, err := measuredLogs(opts.model, opts.inputs, &opts.logs, opts.measures, streams)
	if err != nil {
		return nil, err
	}
	return logStats(m, lg, ms), nil
}

// measuredLogs loads the model, reads the logs for it holding every
// session, and measures the record fields at paths per visit.
func measuredLogs(model string, args []string, lf *logFlags, paths []string, streams IO) (*automaton.Model, *mine.Log, *mine.Measures, error) {
	// Measure reads the logs a second time: hold standard input.
	stdin := streams.In
	var data []byte
	if slices.Contains(args, "-") {
		var err error
		if data, err = io.ReadAll(stdin); err != nil {
			return nil, nil, nil, fmt.Errorf("reading standard input: %w", err)
		}
		stdin = bytes.NewReader(data)
	}
	m, lg, inputs, ropt, err := readModelLogs(model, args, lf, stdin, streams)
	if err != nil {
		return nil, nil, nil, err
	}
	for i := range inputs {
		if inputs[i].Name == "-" {
			inputs[i].Open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		}
	}
	ms, err := mine.Measure(inputs, ropt, lg, paths)
	if err != nil {
		return nil, nil, nil, err
	}
	return m, lg, ms, nil
}

// statsReport is the --format json object.
type statsReport struct {
	Model checkModelRef `json:"model"`
	// From is "logs" when the figures come from replaying logs, "model"
	// when from the model alone.
	From     string `json:"from"`
	Sessions int    `json:"sessions"`
	Events   int    `json:"events"`
	// Fit counts the sessions that fit the model (logs only); Unplaced the
	// visits the replay could not place in a state.
	Fit      int `json:"fit,omitempty"`
	Unplaced int `json:"unplaced,omitempty"`
	// EndsFrom says where the endings come from: "logs", or "top_variants"
	// covering EndsCoverage of the model's sessions.
	EndsFrom     string       `json:"ends_from"`
	EndsCoverage float64      `json:"ends_coverage"`
	Measures     []string     `json:"measures"`
	States       []statsState `json:"states"`
	BackEdges    []statsBack  `json:"back_edges"`
	BackEdgesAll int          `json:"back_edges_total"`
	Loops        []statsLoop  `json:"loops"`

	m *automaton.Model
}

type statsState struct {
	ID       string             `json:"id"`
	Label    string             `json:"label"`
	Visits   int                `json:"visits"`
	Sessions int                `json:"sessions"`
	DwellMS  *automaton.Dwell   `json:"dwell_ms"`
	Ends     []statsEnd         `json:"ends"`
	Measures map[string]*statsQ `json:"measures,omitempty"`
	// Examples are sessions the model was mined from that visited the
	// state (see fsmine build --examples).
	Examples []exampleRef `json:"examples,omitempty"`
}

// statsEnd is the share of the sessions passing through a state that end in
// State (the state before __end__; "?" when the replay lost track).
type statsEnd struct {
	State    string  `json:"state"`
	Sessions int     `json:"sessions"`
	Share    float64 `json:"share"`
}

// statsQ summarises a numeric field over the visits of a state that carry
// it.
type statsQ struct {
	Visits int     `json:"visits"`
	Total  float64 `json:"total"`
	Mean   float64 `json:"mean"`
	P50    float64 `json:"p50"`
	P95    float64 `json:"p95"`
}

type statsBack struct {
	From     string `json:"from"`
	Event    string `json:"event"`
	To       string `json:"to"`
	Count    int    `json:"count"`
	Sessions int    `json:"sessions"`
	// Examples are sessions the model was mined from that took the edge.
	Examples []exampleRef `json:"examples,omitempty"`
}

type statsLoop struct {
	States        []string `json:"states"`
	Count         int      `json:"count"`
	Sessions      int      `json:"sessions"`
	MaxIterations int      `json:"max_iterations"`
	P95Iterations int      `json:"p95_iterations"`
	// Histogram counts, with logs, the stays that iterated 1, 2, 3...
	// times; nil from the model alone.
	Histogram []statsBin `json:"histogram"`
}

type statsBin struct {
	Iterations int `json:"iterations"`
	Stays      int `json:"stays"`
}

// modelStats is what the model alone says.
func modelStats(m *automaton.Model) *statsReport {
	r := &statsReport{m: m, From: "model", Sessions: m.Source.Sessions, Events: m.Source.Events, EndsFrom: "top_variants", Measures: []string{}}
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
	r.EndsCoverage = roundTo6(text.Share(covered, m.Source.Sessions))
	for _, s := range m.States {
		if s.ID == automaton.StartID || s.ID == automaton.EndID {
			continue
		}
		r.States = append(r.States, statsState{
			ID: s.ID, Label: s.Label, Visits: s.Visits, Sessions: s.Sessions, DwellMS: s.DwellMS,
			Ends: endList(ends[s.ID], through[s.ID]),
		})
	}
	for _, t := range m.Transitions {
		// A generalised back edge was never taken: no heat to report.
		if t.BackEdge && t.Generalized == "" {
			r.BackEdges = append(r.BackEdges, statsBack{From: t.From, Event: t.Event, To: t.To, Count: t.Count, Sessions: t.Sessions})
		}
	}
	for _, l := range m.Loops {
		r.Loops = append(r.Loops, statsLoop{States: l.States, Count: l.Count, Sessions: l.Sessions, MaxIterations: l.MaxIterations, P95Iterations: l.P95Iterations})
	}
	r.addExamples()
	r.sort()
	return r
}

// logStats replays every session of lg through m and counts.
func logStats(m *automaton.Model, lg *mine.Log, ms *mine.Measures) *statsReport {
	r := &statsReport{m: m, From: "logs", Sessions: len(lg.Sessions), EndsFrom: "logs", EndsCoverage: 1}
	c := automaton.NewChecker(m, automaton.CheckOptions{})
	idx := map[string]int{}
	type acc struct {
		visits, sessions, stamp int
		dwell                   mine.DwellStats
		ends                    map[string]int
		meas                    [][]float64
	}
	accs := make([]acc, len(m.States))
	for i, s := range m.States {
		idx[s.ID] = i
		accs[i].ends = map[string]int{}
		accs[i].meas = make([][]float64, len(ms.Paths))
	}
	type backAcc struct{ count, sessions, stamp int }
	backs := map[*automaton.Transition]*backAcc{}
	hist := make([]map[int]int, len(m.Loops))
	loopCount := make([]int, len(m.Loops))
	loopSess := make([]int, len(m.Loops))
	for i := range hist {
		hist[i] = map[int]int{}
	}
	var buf []automaton.Move
	var through []int
	for si := range lg.Sessions {
		s := &lg.Sessions[si]
		r.Events += len(s.Visits)
		buf = sessionMoves(lg, s, buf)
		if v := c.Check(buf); v.Fits() {
			r.Fit++
		}
		steps := c.Replay(buf)
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
			vis := &s.Visits[st.Move]
			if vis.HasDwell {
				a.dwell.Add(vis.DwellMS)
			}
			for p := range ms.Paths {
				if x, ok := ms.Value(si, st.Move, p); ok {
					a.meas[p] = append(a.meas[p], x)
				}
			}
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
	}
	if r.Measures == nil {
		r.Measures = []string{}
	}
	for i, s := range m.States {
		if s.ID == automaton.StartID || s.ID == automaton.EndID {
			continue
		}
		a := &accs[i]
		st := statsState{ID: s.ID, Label: s.Label, Visits: a.visits, Sessions: a.sessions, Ends: endList(a.ends, a.sessions)}
		st.DwellMS = a.dwell.Summary()
		for p, path := range ms.Paths {
			xs := a.meas[p]
			if len(xs) == 0 {
				continue
			}
			if st.Measures == nil {
				st.Measures = map[string]*statsQ{}
			}
			sort.Float64s(xs)
			total := 0.0
			for _, x := range xs {
				total += x
			}
			st.Measures[path] = &statsQ{Visits: len(xs), Total: statsRound3(total), Mean: statsRound3(total / float64(len(xs))),
				P50: statsRound3(statsQuantile(xs, 0.5)), P95: statsRound3(statsQuantile(xs, 0.95))}
		}
		r.States = append(r.States, st)
	}
	for t, b := range backs {
		r.BackEdges = append(r.BackEdges, statsBack{From: t.From, Event: t.Event, To: t.To, Count: b.count, Sessions: b.sessions})
	}
	for li, l := range m.Loops {
		sl := statsLoop{States: l.States, Count: loopCount[li], Sessions: loopSess[li], Histogram: []statsBin{}}
		var stays []int
		for it, n := range hist[li] {
			sl.Histogram = append(sl.Histogram, statsBin{Iterations: it, Stays: n})
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
	r.addExamples()
	r.sort()
	return r
}

// addExamples gives the states and back edges the model's example sessions.
func (r *statsReport) addExamples() {
	for i := range r.States {
		if s := r.m.State(r.States[i].ID); s != nil {
			r.States[i].Examples = exampleRefs(r.m, s.Examples)
		}
	}
	for i := range r.BackEdges {
		e := &r.BackEdges[i]
		for _, t := range r.m.Out(e.From) {
			if t.Event == e.Event && t.To == e.To {
				e.Examples = transitionExamples(r.m, t)
				break
			}
		}
	}
}

// endList turns end-state counts into shares of total, most frequent first.
func endList(ends map[string]int, total int) []statsEnd {
	out := make([]statsEnd, 0, len(ends))
	for s, n := range ends {
		out = append(out, statsEnd{State: s, Sessions: n, Share: roundTo6(text.Share(n, total))})
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
func (r *statsReport) sort() {
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
		r.BackEdges = []statsBack{}
	}
	if r.Loops == nil {
		r.Loops = []statsLoop{}
	}
}

func (r *statsReport) limitBackEdges(top int) {
	if top > 0 && len(r.BackEdges) > top {
		r.BackEdges = r.BackEdges[:top]
	}
}

func statsQuantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

func statsRound3(x float64) float64 { return math.Round(x*1e3) / 1e3 }

// text writes the report for people.
func (r *statsReport) text(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	m := r.m
	p("model     %s  v%d %s  (%d states, %d transitions, %d loops)\n", r.Model.Path, r.Model.Version, text.ShortDigest(r.Model.Digest), len(m.States), len(m.Transitions), len(m.Loops))
	if r.From == "logs" {
		p("logs      %d sessions (%d fit the model), %d events", r.Sessions, r.Fit, r.Events)
		if r.Unplaced > 0 {
			p("; %s after a deviation could not be placed in a state", text.Count(r.Unplaced, "event"))
		}
		p("\n")
	} else {
		p("source    the model alone: %d sessions, %d events when mined (give logs for exact endings, loop histograms, tokens and latency)\n", r.Sessions, r.Events)
	}

	p("\nstates (by visits)\n")
	rows := [][]string{{"  state", "visits", "sessions", "dwell p50", "dwell p95", "sessions through it end in"}}
	for _, s := range r.States {
		p50, p95 := "-", "-"
		if s.DwellMS != nil {
			p50, p95 = text.Duration(s.DwellMS.P50), text.Duration(s.DwellMS.P95)
		}
		rows = append(rows, []string{"  " + s.ID, strconv.Itoa(s.Visits), strconv.Itoa(s.Sessions), p50, p95, endsText(s.Ends, 3)})
	}
	writeTable(&b, rows, map[int]bool{1: true, 2: true, 3: true, 4: true})
	if r.EndsFrom == "top_variants" {
		p("  (endings from the model's %d top variants, %s of its sessions)\n", len(m.TopVariants), text.Percent(r.EndsCoverage))
	}

	if len(r.Measures) > 0 {
		p("\nper visit, by state\n")
		head := []string{"  state"}
		for _, mp := range r.Measures {
			head = append(head, mp+" total", "mean", "p95")
		}
		rows = [][]string{head}
		right := map[int]bool{}
		for i := 1; i < len(head); i++ {
			right[i] = true
		}
		for _, s := range r.States {
			row := []string{"  " + s.ID}
			for _, mp := range r.Measures {
				q := s.Measures[mp]
				if q == nil {
					row = append(row, "-", "-", "-")
					continue
				}
				row = append(row, text.Num(q.Total), text.Num(q.Mean), text.Num(q.P95))
			}
			rows = append(rows, row)
		}
		writeTable(&b, rows, right)
	}

	var ex [][]string
	for _, s := range r.States {
		if len(s.Examples) > 0 {
			ex = append(ex, []string{"  " + idText(s.ID), examplesText(s.Examples)})
		}
	}
	if len(ex) > 0 {
		p("\nexample sessions, by state\n")
		writeTable(&b, ex, nil)
		b.WriteString(linkLine(m))
	}

	p("\nhottest back edges")
	if r.BackEdgesAll > len(r.BackEdges) {
		p(" (top %d of %d)", len(r.BackEdges), r.BackEdgesAll)
	}
	p("\n")
	if len(r.BackEdges) == 0 {
		p("  none\n")
	} else {
		rows = [][]string{{"  edge", "count", "sessions"}}
		for _, e := range r.BackEdges {
			rows = append(rows, []string{"  " + moveText(e.From, e.Event, e.To), strconv.Itoa(e.Count), strconv.Itoa(e.Sessions)})
		}
		writeTable(&b, rows, map[int]bool{1: true, 2: true})
	}

	p("\nloops (iterations per stay)\n")
	if len(r.Loops) == 0 {
		p("  none\n")
	}
	for _, l := range r.Loops {
		p("  {%s}\n", statesText(l.States, 4))
		p("    %s in %s; max %d, p95 %d", text.Count(l.Count, "iteration"), text.Count(l.Sessions, "session"), l.MaxIterations, l.P95Iterations)
		switch {
		case l.Histogram == nil:
		case len(l.Histogram) == 0:
			p("; no stay iterated")
		default:
			var parts []string
			for _, h := range l.Histogram {
				parts = append(parts, fmt.Sprintf("%d:%d", h.Iterations, h.Stays))
			}
			p("; stays by iterations %s", strings.Join(parts, " "))
		}
		p("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// endsText shows the first n endings as "state share".
func endsText(ends []statsEnd, n int) string {
	if len(ends) == 0 {
		return "-"
	}
	var parts []string
	for i, e := range ends {
		if i == n {
			parts = append(parts, fmt.Sprintf("+%d more", len(ends)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s", e.State, text.Percent(e.Share)))
	}
	return strings.Join(parts, ", ")
}

// statesText lists up to n states and how many more.
func statesText(states []string, n int) string {
	if len(states) <= n {
		return strings.Join(states, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(states[:n], ", "), len(states)-n)
}
