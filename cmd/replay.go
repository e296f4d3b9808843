package cmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/render/text"
)

func init() { register(newReplayCmd) }

type replayOptions struct {
	model     string
	session   string
	inputs    []string
	format    string
	rareIsDev bool
	genIsDev  bool
	maxAlign  int
	logs      logFlags
}

func newReplayCmd(streams IO) *cobra.Command {
	opts := &replayOptions{}
	c := &cobra.Command{
		Use:   "replay --model M.json --session ID [flags] LOG...",
		Short: "Walk one session through a model step by step: the debugging view",
		Long: `replay walks one session through the model and shows every step: the record
(step, file:line), the state it left, the event, the state it entered, the
transition's count and share in the model, a verdict and the time spent in
the state it left. Logs are read as the model was built from them (its label
rules, field map and input format; --labels, --field and --from override).

Verdicts: ok; rare (a transition flagged rare; a deviation only with
--rare-is-deviation); generalized (a transition no session the model was
mined from took, added on the log's evidence; a deviation only with
--generalized-is-deviation); loop_cap (a loop's back edges taken more often
in one stay than the model's max_iterations); repeat_cap (more visits of one
stage in a row than the state's max_run); illegal (the model has no such move
from the state); unknown (the label is no state of the model); incomplete
(the session ends where, or with an event that, the model never ends); lost
(not checked, see below).

The first unexpected step is marked with ">" and explained: what the model
expected there instead, the legal moves from that state with counts and
shares. After a step the model has no transition for, replay continues from
the one state that carries the record's label, if exactly one state does
(marked "resync"); if none or several do, the following steps are not
checked (lost) until a record's label belongs to exactly one state. The
optimal alignment (as fsmine check computes it) closes the report: which
records the model has no place for and which of its moves the session
skipped.

--format text (default) or json.

Exit status: 0 the session fits; 1 it deviates; 2 trouble (bad flags,
unreadable model or logs, the session is not in the logs).`,
		Example: `  fsmine replay --model v4.json --session s-000017 logs/today.jsonl
  fsmine replay --model v4.json --session s-000017 --format json logs/*.jsonl.gz`,
		RunE: func(c *cobra.Command, args []string) error {
			if opts.model == "" {
				return usagef("replay needs --model M.json")
			}
			if opts.session == "" {
				return usagef("replay needs --session ID")
			}
			if len(args) == 0 {
				return usagef("replay needs at least one LOG (a file, a glob, or - for standard input)")
			}
			opts.inputs = args
			return runReplay(c.Context(), opts, streams)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.model, "model", "", "the model `FILE` (required)")
	f.StringVar(&opts.session, "session", "", "the session `ID` to replay (required)")
	f.StringVar(&opts.format, "format", "text", "output format: text or json")
	f.BoolVar(&opts.rareIsDev, "rare-is-deviation", false, "count taking a rare transition as a deviation")
	f.BoolVar(&opts.genIsDev, "generalized-is-deviation", false, "count taking a generalised transition as a deviation")
	f.IntVar(&opts.maxAlign, "max-align-states", automaton.DefaultMaxAlignStates, "alignment search nodes before a greedy alignment stands in")
	opts.logs.bind(f)
	return c
}

func runReplay(_ context.Context, opts *replayOptions, streams IO) error {
	switch opts.format {
	case "text", "json":
	default:
		return usagef("unknown --format %q: want text or json", opts.format)
	}
	if opts.maxAlign <= 0 {
		return usagef("--max-align-states must be at least 1, got %d", opts.maxAlign)
	}
	m, lg, _, _, err := readModelLogs(opts.model, opts.inputs, &opts.logs, streams.In, streams)
	if err != nil {
		return err
	}
	i := sort.Search(len(lg.Sessions), func(i int) bool { return lg.Sessions[i].ID >= opts.session })
	if i == len(lg.Sessions) || lg.Sessions[i].ID != opts.session {
		return fmt.Errorf("session %q not found in %s (%d sessions; %s)", opts.session, strings.Join(opts.inputs, ", "), len(lg.Sessions), someIDs(lg, opts.session))
	}
	c := automaton.NewChecker(m, automaton.CheckOptions{RareIsDeviation: opts.rareIsDev, GeneralizedIsDeviation: opts.genIsDev, MaxAlignStates: opts.maxAlign})
	r := newReplayReport(m, lg, &lg.Sessions[i], c)
	r.Model = checkModelRef{Path: opts.model, Version: m.Version, Digest: m.Digest}
	out := bufio.NewWriter(streams.Out)
	if opts.format == "json" {
		err = writeJSON(out, r)
	} else {
		err = r.text(termSafe(out))
	}
	if err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if !r.Fits {
		return errFound
	}
	return nil
}

// someIDs names a few session ids of lg: those containing want, else those
// within a small edit distance of it, else the first ones.
func someIDs(lg *mine.Log, want string) string {
	const n = 5
	var like []string
	for i := range lg.Sessions {
		if id := lg.Sessions[i].ID; strings.Contains(id, want) || strings.Contains(want, id) {
			like = append(like, id)
			if len(like) == n {
				break
			}
		}
	}
	if len(like) == 0 {
		type cand struct {
			id string
			d  int
		}
		var near []cand
		limit := max(1, len(want)/3)
		for i := range lg.Sessions {
			id := lg.Sessions[i].ID
			if d := editDistance(id, want, limit); d <= limit {
				near = append(near, cand{id, d})
			}
		}
		sort.SliceStable(near, func(i, j int) bool { return near[i].d < near[j].d })
		for i := 0; i < n && i < len(near); i++ {
			like = append(like, near[i].id)
		}
	}
	if len(like) > 0 {
		return "similar: " + strings.Join(like, ", ")
	}
	for i := 0; i < n && i < len(lg.Sessions); i++ {
		like = append(like, lg.Sessions[i].ID)
	}
	return "e.g. " + strings.Join(like, ", ")
}

// editDistance is the Levenshtein distance of a and b in bytes, or a value
// above limit as soon as it is sure to exceed it.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c = 1 + min(prev[j-1], prev[j], cur[j-1])
			}
			cur[j] = c
			best = min(best, c)
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// replayReport is the --format json object.
type replayReport struct {
	m *automaton.Model

	SessionID string          `json:"session_id"`
	Model     checkModelRef   `json:"model"`
	Fits      bool            `json:"fits"`
	Deviation *checkDeviation `json:"deviation"`
	// Explanation says in words what went wrong at the deviation.
	Explanation string `json:"explanation,omitempty"`
	// Expected are the model's moves out of the deviation's state.
	Expected  []replayMove        `json:"expected"`
	Records   int                 `json:"records"`
	Cost      int                 `json:"cost"`
	MaxCost   int                 `json:"max_cost"`
	Fitness   float64             `json:"fitness"`
	Bounded   bool                `json:"bounded"`
	Rare      int                 `json:"rare"`
	Steps     []replayStep        `json:"steps"`
	Alignment []automaton.AlignOp `json:"alignment"`

	deviationRow int
}

// replayStep is one row: the move into a record's label.
type replayStep struct {
	Move int `json:"move"`
	// Step is the record's step (or its position when the log has none);
	// End marks the move into __end__, whose record is the session's last.
	Step  int64  `json:"step"`
	End   bool   `json:"end,omitempty"`
	File  string `json:"file"`
	Line  int    `json:"line"`
	State string `json:"state"`
	Event string `json:"event"`
	Label string `json:"label"`
	Next  string `json:"next"`
	// Transition is the model's transition taken, nil when none.
	Transition *replayMove `json:"transition"`
	Verdict    string      `json:"verdict"`
	Resync     bool        `json:"resync,omitempty"`
	Iteration  int         `json:"loop_iteration,omitempty"`
	Cap        int         `json:"loop_cap,omitempty"`
	Run        int         `json:"run,omitempty"`
	MaxRun     int         `json:"max_run,omitempty"`
	// DwellMS is the time spent in State, nil when not known.
	DwellMS *float64 `json:"dwell_ms"`
}

// replayMove is a transition of the model as replay shows it.
type replayMove struct {
	Event    string  `json:"event"`
	To       string  `json:"to"`
	Count    int     `json:"count"`
	Share    float64 `json:"share"`
	Rare     bool    `json:"rare"`
	BackEdge bool    `json:"back_edge"`
	// Generalized is the kind of generalisation of a move no session took.
	Generalized string `json:"generalized,omitempty"`
	// Examples are sessions the model was mined from that took the move
	// (see fsmine build --examples).
	Examples []exampleRef `json:"examples,omitempty"`
}

func toReplayMove(m *automaton.Model, t *automaton.Transition) *replayMove {
	return &replayMove{Event: t.Event, To: t.To, Count: t.Count, Share: t.Prob, Rare: t.Rare, BackEdge: t.BackEdge, Generalized: t.Generalized,
		Examples: transitionExamples(m, t)}
}

func newReplayReport(m *automaton.Model, lg *mine.Log, s *mine.Session, c *automaton.Checker) *replayReport {
	moves := sessionMoves(lg, s, nil)
	v := c.Check(moves)
	al := c.Align(moves)
	r := &replayReport{
		SessionID: s.ID, Fits: v.Fits(), Records: len(s.Visits),
		Cost: al.Cost, MaxCost: al.MaxCost, Fitness: roundTo6(al.Fitness), Bounded: al.Bounded, Rare: v.Rare,
		Alignment: al.Ops, Expected: []replayMove{}, deviationRow: -1, m: m,
	}
	if r.Alignment == nil {
		r.Alignment = []automaton.AlignOp{}
	}
	for _, st := range c.Replay(moves) {
		rec := moveRecord(s, st.Move)
		pos := min(st.Move, len(s.Visits)-1)
		row := replayStep{
			Move: st.Move, Step: visitStep(rec, pos), End: st.Move == len(s.Visits),
			File: lg.Files[rec.File].Path, Line: int(rec.Line),
			State: st.From, Event: moves[st.Move].Event, Label: moves[st.Move].Label, Next: st.To,
			Verdict: st.Verdict, Resync: st.Resync,
		}
		if st.Transition != nil {
			row.Transition = toReplayMove(m, st.Transition)
			if st.Loop >= 0 {
				row.Iteration, row.Cap = st.Iteration, st.Cap
			}
			row.Run, row.MaxRun = st.Run, st.MaxRun
		}
		if st.Move > 0 {
			if prev := &s.Visits[st.Move-1]; prev.HasDwell {
				d := prev.DwellMS
				row.DwellMS = &d
			}
		}
		r.Steps = append(r.Steps, row)
	}
	if d := v.Deviation; d != nil {
		rec := moveRecord(s, d.Move)
		r.Deviation = &checkDeviation{
			SessionID: s.ID, Step: visitStep(rec, min(d.Move, len(s.Visits)-1)), Move: d.Move, Kind: d.Kind,
			State: d.State, Event: d.Event, Label: d.Label,
			File: lg.Files[rec.File].Path, Line: int(rec.Line), Cost: v.Cost, Fitness: roundTo6(v.Fitness),
		}
		if d.Kind == automaton.KindLoopCap || d.Kind == automaton.KindRepeatCap {
			r.Deviation.Iterations, r.Deviation.Cap = d.Iterations, d.Cap
		}
		r.deviationRow = d.Move
		if d.State != "" {
			for _, t := range m.Out(d.State) {
				r.Expected = append(r.Expected, *toReplayMove(m, t))
			}
		}
		r.Explanation = explainDeviation(m, d)
	}
	return r
}

// explainDeviation says in words what the model has against the move.
func explainDeviation(m *automaton.Model, d *automaton.Deviation) string {
	mv := moveText(d.State, d.Event, d.Label)
	switch d.Kind {
	case automaton.KindUnknownState:
		return fmt.Sprintf("%q is no state of the model (%s)", d.Label, mv)
	case automaton.KindIllegalTransition:
		return fmt.Sprintf("the model has no move %s; %s", mv, expectedWords(m, d.State))
	case automaton.KindIncomplete:
		for _, t := range m.Out(d.State) {
			if t.To == automaton.EndID {
				return fmt.Sprintf("the session ends in %s with event %q; the model ends there only with other events; %s", d.State, d.Event, expectedWords(m, d.State))
			}
		}
		return fmt.Sprintf("the session ends in %s; no session of the model ends there; %s", d.State, expectedWords(m, d.State))
	case automaton.KindLoopCap:
		l := m.Loops[d.Loop]
		return fmt.Sprintf("%s is iteration %d of loop {%s} in this stay; the model's cap is %d (max_iterations %d, p95 %d)",
			mv, d.Iterations, strings.Join(l.States, ", "), d.Cap, l.MaxIterations, l.P95Iterations)
	case automaton.KindGeneralized:
		if t := m.Next(d.State, automaton.Move{Event: d.Event, Label: d.Label}); t != nil {
			return fmt.Sprintf("%s is a generalised transition (%s): no session the model was mined from took it", mv, t.Generalized)
		}
	case automaton.KindRepeatCap:
		return fmt.Sprintf("%s is visit %d of %q in a row; no session the model was mined from made more than %d (max_run)",
			mv, d.Iterations, d.Label, d.Cap)
	case automaton.KindRare:
		if t := m.Next(d.State, automaton.Move{Event: d.Event, Label: d.Label}); t != nil {
			return fmt.Sprintf("%s is a rare transition: %d times, %s of %s's outflow", mv, t.Count, text.Percent(t.Prob), d.State)
		}
	}
	return mv
}

func expectedWords(m *automaton.Model, state string) string {
	n := len(m.Out(state))
	switch n {
	case 0:
		return "the model has no move out of " + state
	case 1:
		return "it expected the one move below"
	}
	return fmt.Sprintf("it expected one of the %d moves below", n)
}

// text writes the report for people: a verdict line, the steps as a
// table, the explanation of the first deviation and the alignment.
func (r *replayReport) text(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("session  %s  (%d records)\n", r.SessionID, r.Records)
	p("model    %s  v%d %s\n", r.Model.Path, r.Model.Version, text.ShortDigest(r.Model.Digest))
	if d := r.Deviation; d != nil {
		p("verdict  deviates at step %d (%s:%d): %s %s\n", d.Step, d.File, d.Line, d.Kind, placeText(d.Kind, d.State, d.Event, d.Label))
	} else {
		p("verdict  fits\n")
	}
	bounded := ""
	if r.Bounded {
		bounded = " (search bounded: greedy alignment, an upper bound)"
	}
	p("fitness  %.3f  (alignment cost %d of %d)%s\n\n", r.Fitness, r.Cost, r.MaxCost, bounded)

	rows := [][]string{{"", "step", "record", "state", "event", "next", "count", "share", "verdict", "dwell"}}
	for i, s := range r.Steps {
		mark := ""
		if i == r.deviationRow {
			mark = ">"
		}
		step := strconv.FormatInt(s.Step, 10)
		if s.End {
			step = "end"
		}
		state := s.State
		if state == "" {
			state = "?"
		}
		next := s.Next
		switch {
		case s.Verdict == automaton.StepUnknown:
			next = s.Label + " (unknown)"
		case next == "":
			next = s.Label + "?"
		case s.Resync:
			next += " (resync)"
		}
		count, shr := "-", "-"
		if t := s.Transition; t != nil {
			count, shr = strconv.Itoa(t.Count), text.Percent(t.Share)
		}
		verdict := s.Verdict
		if s.MaxRun > 0 {
			verdict += fmt.Sprintf(" (%d/%d)", s.Run, s.MaxRun)
		} else if s.Cap > 0 && s.Iteration > 0 {
			verdict += fmt.Sprintf(" (%d/%d)", s.Iteration, s.Cap)
		}
		dwell := "-"
		if s.DwellMS != nil {
			dwell = text.Duration(*s.DwellMS)
		}
		rows = append(rows, []string{mark, step, fmt.Sprintf("%s:%d", s.File, s.Line), state, s.Event, next, count, shr, verdict, dwell})
	}
	writeTable(&b, rows, map[int]bool{1: true, 6: true, 7: true, 9: true})

	shown := false // whether example sessions were listed
	if d := r.Deviation; d != nil {
		p("\n> step %d: %s\n", d.Step, r.Explanation)
		if d.Kind == automaton.KindRare && r.deviationRow >= 0 && r.deviationRow < len(r.Steps) {
			if t := r.Steps[r.deviationRow].Transition; t != nil && len(t.Examples) > 0 {
				p("  sessions that took it when the model was mined: %s\n", examplesText(t.Examples))
				shown = true
			}
		}
		if len(r.Expected) > 0 && d.Kind != automaton.KindLoopCap && d.Kind != automaton.KindRepeatCap && d.Kind != automaton.KindRare && d.Kind != automaton.KindGeneralized {
			p("  the model's moves from %s:\n", d.State)
			er := [][]string{}
			for _, e := range r.Expected {
				note := ""
				switch {
				case e.Generalized != "":
					note = "generalised (" + e.Generalized + ")"
				case e.Rare && e.BackEdge:
					note = "rare, back edge"
				case e.Rare:
					note = "rare"
				case e.BackEdge:
					note = "back edge"
				}
				er = append(er, []string{"   ", arrowText(e.Event, e.To), strconv.Itoa(e.Count), text.Percent(e.Share), note, egText(e.Examples)})
				shown = shown || len(e.Examples) > 0
			}
			writeTable(&b, er, map[int]bool{2: true, 3: true})
		}
	}
	if shown {
		b.WriteString(linkLine(r.m))
	}
	if r.Cost > 0 {
		p("\nalignment (cost %d): ", r.Cost)
		var parts []string
		for _, op := range r.Alignment {
			switch op.Op {
			case automaton.OpLog:
				parts = append(parts, fmt.Sprintf("skip the session's %s (%s)", r.stepName(op.Move), arrowText(op.Event, op.Label)))
			case automaton.OpModel:
				parts = append(parts, fmt.Sprintf("add the model's %s before the session's %s", moveText(op.From, op.Event, op.To), r.stepName(op.Move)))
			}
		}
		p("%s\n", strings.Join(parts, "; "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// stepName names move i of the session as the table does.
func (r *replayReport) stepName(i int) string {
	if i >= len(r.Steps) || r.Steps[i].End {
		return "end"
	}
	return fmt.Sprintf("step %d", r.Steps[i].Step)
}

// arrowText shows a move without its source: "-[event]-> to".
func arrowText(event, to string) string {
	if event == "" {
		return "--> " + to
	}
	return "-[" + event + "]-> " + to
}

// writeTable writes rows as columns separated by two spaces; right lists
// the columns aligned right. Trailing spaces are trimmed.
func writeTable(b *strings.Builder, rows [][]string, right map[int]bool) {
	var width []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len([]rune(cell)))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len([]rune(cell)))
			if right[i] {
				line.WriteString(pad + cell)
			} else {
				line.WriteString(cell + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}
