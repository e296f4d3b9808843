package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/render/text"
)

func init() { register(newCheckCmd) }

type checkOptions struct {
	model     string
	inputs    []string
	format    string
	minFit    float64
	rareIsDev bool
	genIsDev  bool
	outside   string
	maxAlign  int
	list      int
	window    int
	logs      logFlags
}

func newCheckCmd(streams IO) *cobra.Command {
	opts := &checkOptions{}
	c := &cobra.Command{
		Use:   "check --model M.json [flags] LOG...",
		Short: "Check new sessions against a model: fit, first deviation, alignment fitness",
		Long: `check replays every session of the logs through the model, for CI jobs and
cron. Logs are read as the model was built from them: its label rules, field
map and input format (--labels, --field and --from override).

A session fits when each of its moves is a transition of the model, ending in
__end__, and no loop is iterated beyond its cap. Otherwise it deviates at its
first deviating step, of one kind:
  unknown_state       the record's label is no state of the model
  illegal_transition  the model has no such move (event, next label) from the
                      current state
  loop_cap            a loop's back edges taken more often in one stay than
                      the model's max_iterations for that loop
  incomplete          the session ends where (or with an event that) the
                      model never ends
  repeat_cap          more visits of one stage in a row than any session the
                      model was mined from made (the state's max_run)
  rare                a transition flagged rare (only with --rare-is-deviation;
                      otherwise rare transitions pass and are counted)
  generalized         a generalised transition, one no session the model was
                      mined from took (only with --generalized-is-deviation;
                      otherwise they pass and are counted)

Each session also gets an alignment fitness: the fewest moves to skip in the
session (log moves) or to add from the model (model moves) so that the
session becomes a path of the model, normalised as pm4py does:
1 - cost / (moves in the session + moves in the model's shortest path). The
log fitness is pm4py's log-level figure, 1 - sum(cost) / sum(max cost); the
mean of the sessions' fitness is reported too. A session is outside the
model when its cost is above 0 (loop_cap and rare deviations are still paths
of the model): a growing share outside is the signal to mine a new model.
The alignment search stops after --max-align-states nodes for a session; its
cost is then that of a greedy alignment (an upper bound), and the output says
how many sessions were bounded.

--format text (default), json (one object with the summary and every
deviation) or jsonl (one verdict per session, as they are checked).

Exit status: 0 ok (the share of fitting sessions is at least --min-fit);
1 below --min-fit; 2 trouble (bad flags, unreadable model or logs, no
sessions).`,
		Example: `  fsmine check --model v4.json logs/today.jsonl.gz
  fsmine check --model v4.json --min-fit 0.95 --format json logs/*.jsonl > report.json
  fsmine check --model v4.json --format jsonl logs/today.jsonl | jq 'select(.fits|not)'`,
		RunE: func(c *cobra.Command, args []string) error {
			if opts.model == "" {
				return usagef("check needs --model M.json")
			}
			if len(args) == 0 {
				return usagef("check needs at least one LOG (a file, a glob, or - for standard input)")
			}
			opts.inputs = args
			return runCheck(c.Context(), opts, streams)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.model, "model", "", "the model `FILE` to check against (required)")
	f.StringVar(&opts.format, "format", "text", "output format: text, json or jsonl")
	f.Float64Var(&opts.minFit, "min-fit", 0, "exit 1 when the share of fitting sessions is below `X` (0 to 1)")
	f.BoolVar(&opts.rareIsDev, "rare-is-deviation", false, "count taking a rare transition as a deviation (kind rare)")
	f.BoolVar(&opts.genIsDev, "generalized-is-deviation", false, "count taking a generalised transition as a deviation (kind generalized): check against the sessions' own paths")
	f.IntVar(&opts.maxAlign, "max-align-states", automaton.DefaultMaxAlignStates, "alignment search nodes per session before a greedy alignment stands in")
	f.IntVar(&opts.window, "window", mine.DefaultWindow, "records a session may sit idle before it is checked and its records let go; 0 holds every session to the end")
	f.IntVar(&opts.list, "list", 20, "deviating sessions listed in the text report (0: all)")
	f.StringVar(&opts.outside, "outside", "", "write every record of the sessions that do not fit to `FILE` (JSONL, atomically), to mine the next model from")
	opts.logs.bind(f)
	return c
}

func runCheck(_ context.Context, opts *checkOptions, streams IO) error {
	switch opts.format {
	case "text", "json", "jsonl":
	default:
		return usagef("unknown --format %q: want text, json or jsonl", opts.format)
	}
	if !(opts.minFit >= 0 && opts.minFit <= 1) {
		return usagef("--min-fit must be between 0 and 1, got %v", opts.minFit)
	}
	if opts.maxAlign <= 0 {
		return usagef("--max-align-states must be at least 1, got %d", opts.maxAlign)
	}
	if opts.list < 0 {
		return usagef("--list must be 0 or more, got %d", opts.list)
	}
	m, err := loadDiffModel(opts.model)
	if err != nil {
		return err
	}
	run := &checkCollector{
		c:    automaton.NewChecker(m, automaton.CheckOptions{RareIsDeviation: opts.rareIsDev, GeneralizedIsDeviation: opts.genIsDev, MaxAlignStates: opts.maxAlign}),
		keep: opts.format == "json" || opts.format == "text", verdicts: opts.format == "jsonl",
	}
	// Sessions are checked as the read finishes them; a read that starts
	// over holding every session gives them all again.
	if opts.outside != "" {
		for _, in := range opts.inputs {
			if in == "-" {
				return usagef("--outside reads the logs again: give files, not standard input")
			}
			if samePath(in, opts.outside) {
				return usagef("--outside %s is one of the logs", opts.outside)
			}
		}
	}
	lg, inputs, ropt, err := readLogs(m, opts.model, opts.inputs, &opts.logs, streams.In, streams, &sessionSink{
		window:  opts.window,
		each:    run.session,
		restart: func() { run.results = nil },
	})
	if err != nil {
		return err
	}
	for si := range lg.Sessions {
		run.session(lg, &lg.Sessions[si])
	}

	out := bufio.NewWriterSize(streams.Out, 1<<16)
	var emit func(*checkVerdict) error
	if opts.format == "jsonl" {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		emit = func(v *checkVerdict) error { return enc.Encode(v) }
	}
	sum, err := run.summary(lg, emit)
	if err != nil {
		return err
	}
	if opts.outside != "" {
		if err := writeOutside(opts.outside, inputs, ropt, run.results, streams, opts.logs.quiet); err != nil {
			return err
		}
	}
	sum.Model = checkModelRef{Path: opts.model, Version: m.Version, Digest: m.Digest}
	sum.RareIsDeviation = opts.rareIsDev
	sum.GeneralizedIsDeviation = opts.genIsDev
	if opts.minFit > 0 {
		mf := opts.minFit
		sum.MinFit = &mf
	}
	sum.Pass = sum.FitShare >= opts.minFit
	switch opts.format {
	case "json":
		err = writeJSON(out, sum)
	case "text":
		err = sum.text(termSafe(out), m, lg, opts.list)
	}
	if err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if !sum.Pass {
		if opts.format == "jsonl" {
			fmt.Fprintf(streams.Err, "fit %d of %d sessions (%s), below --min-fit %g\n", sum.Fit, sum.Sessions, text.Percent(sum.FitShare), opts.minFit)
		}
		return errFound
	}
	return nil
}

// checkVerdict is one session's verdict, a line of --format jsonl.
type checkVerdict struct {
	SessionID string          `json:"session_id"`
	Fits      bool            `json:"fits"`
	Moves     int             `json:"moves"`
	Cost      int             `json:"cost"`
	Fitness   float64         `json:"fitness"`
	Rare      int             `json:"rare"`
	General   int             `json:"generalized,omitempty"`
	Bounded   bool            `json:"bounded,omitempty"`
	Deviation *checkDeviation `json:"deviation"`
}

// checkDeviation is where a session first leaves the model.
type checkDeviation struct {
	SessionID string `json:"session_id"`
	// Step is the record's step, or its 0-based position in the session
	// when the log has no steps; Move the index of the move (0 is the move
	// out of __start__).
	Step       int64   `json:"step"`
	Move       int     `json:"move"`
	Kind       string  `json:"kind"`
	State      string  `json:"state"`
	Event      string  `json:"event"`
	Label      string  `json:"label"`
	File       string  `json:"file"`
	Line       int     `json:"line"`
	Cost       int     `json:"cost"`
	Fitness    float64 `json:"fitness"`
	Iterations int     `json:"iterations,omitempty"`
	Cap        int     `json:"cap,omitempty"`
}

type checkModelRef struct {
	Path    string `json:"path"`
	Version int    `json:"version"`
	Digest  string `json:"digest"`
}

// checkPlace groups deviations of one kind at one place: the state, the
// event and the label the session moved to.
type checkPlace struct {
	Kind  string `json:"kind"`
	State string `json:"state"`
	Event string `json:"event"`
	Label string `json:"label"`
	Count int    `json:"count"`
}

// checkSummary is the --format json object.
type checkSummary struct {
	Model           checkModelRef `json:"model"`
	Records         int           `json:"records"`
	Skipped         int           `json:"skipped"`
	Sessions        int           `json:"sessions"`
	Events          int           `json:"events"`
	Fit             int           `json:"fit"`
	FitShare        float64       `json:"fit_share"`
	LogFitness      float64       `json:"log_fitness"`
	MeanFitness     float64       `json:"mean_fitness"`
	Outside         int           `json:"outside"`
	OutsideShare    float64       `json:"outside_share"`
	RareMoves       int           `json:"rare_moves"`
	RareSessions    int           `json:"rare_sessions"`
	RareIsDeviation bool          `json:"rare_is_deviation"`
	// Generalised transitions taken (see automaton.Transition.Generalized).
	GeneralizedMoves       int               `json:"generalized_moves"`
	GeneralizedSessions    int               `json:"generalized_sessions"`
	GeneralizedIsDeviation bool              `json:"generalized_is_deviation"`
	Bounded                int               `json:"bounded"`
	MinFit                 *float64          `json:"min_fit,omitempty"`
	Pass                   bool              `json:"pass"`
	ByKind                 map[string]int    `json:"by_kind"`
	ByPlace                []checkPlace      `json:"by_place"`
	Deviations             []*checkDeviation `json:"deviations"`

	costSum, maxSum int
	fitnessSum      float64
	files           []automaton.SourceFile
	bad             []mine.BadLine
}

// checkKinds lists the deviation kinds in the order reports show them.
var checkKinds = []string{automaton.KindUnknownState, automaton.KindIllegalTransition, automaton.KindLoopCap, automaton.KindIncomplete,
	automaton.KindRepeatCap, automaton.KindRare, automaton.KindGeneralized}

// checkKindsAlways are the kinds every report lists, with 0 when none; the
// others only when some session deviates so.
var checkKindsAlways = checkKinds[:4]

// checkLog checks every session of lg, in session id order. It calls emit
// (when not nil) with each session's verdict, and keeps the deviations in
// the summary only when keep is set; fitting sessions leave nothing behind
// but counters.
func checkLog(lg *mine.Log, c *automaton.Checker, keep bool, emit func(*checkVerdict) error) (*checkSummary, error) {
	run := &checkCollector{c: c, keep: keep, verdicts: emit != nil}
	for si := range lg.Sessions {
		run.session(lg, &lg.Sessions[si])
	}
	return run.summary(lg, emit)
}

// checkCollector checks sessions one at a time as a read finishes them, in any
// order, and sums them up in session id order, so that a streaming read and
// one that holds every session give the same report.
type checkCollector struct {
	c        *automaton.Checker
	keep     bool // keep the deviations for the summary
	verdicts bool // keep every session's verdict for emit
	results  []checkResult
	buf      []automaton.Move
}

// checkResult is what a session leaves behind: its verdict when verdicts
// are kept or it deviates, else only its id and figures.
type checkResult struct {
	id      string
	verdict *checkVerdict
	place   *checkPlace // nil when the session fits
	fitness float64
	events  int32
	cost    int32
	maxCost int32
	rare    int32
	general int32
	bounded bool
	outside bool
}

func (r *checkCollector) session(lg *mine.Log, s *mine.Session) {
	r.buf = sessionMoves(lg, s, r.buf)
	v := r.c.Check(r.buf)
	res := checkResult{id: s.ID, fitness: v.Fitness, events: int32(len(s.Visits)), cost: int32(v.Cost), maxCost: int32(v.MaxCost),
		rare: int32(v.Rare), general: int32(v.Generalized), bounded: v.Bounded, outside: v.Outside()}
	var dev *checkDeviation
	if !v.Fits() {
		d := v.Deviation
		res.place = &checkPlace{Kind: d.Kind, State: d.State, Event: d.Event, Label: d.Label}
		if r.keep || r.verdicts {
			rec := moveRecord(s, d.Move)
			pos := min(d.Move, len(s.Visits)-1)
			dev = &checkDeviation{
				SessionID: s.ID, Step: visitStep(rec, pos), Move: d.Move, Kind: d.Kind,
				State: d.State, Event: d.Event, Label: d.Label,
				File: lg.Files[rec.File].Path, Line: int(rec.Line),
				Cost: v.Cost, Fitness: roundTo6(v.Fitness),
			}
			if d.Kind == automaton.KindLoopCap || d.Kind == automaton.KindRepeatCap {
				dev.Iterations, dev.Cap = d.Iterations, d.Cap
			}
		}
	}
	if r.verdicts || dev != nil {
		res.verdict = &checkVerdict{SessionID: s.ID, Fits: v.Fits(), Moves: v.Moves, Cost: v.Cost,
			Fitness: roundTo6(v.Fitness), Rare: v.Rare, General: v.Generalized, Bounded: v.Bounded, Deviation: dev}
	}
	r.results = append(r.results, res)
}

// summary sums the sessions up in id order, calling emit (when not nil)
// with each one's verdict.
func (r *checkCollector) summary(lg *mine.Log, emit func(*checkVerdict) error) (*checkSummary, error) {
	sum := &checkSummary{
		Records:  lg.Records,
		Skipped:  lg.Skipped,
		Sessions: len(r.results),
		ByKind:   map[string]int{},
		files:    lg.Files,
		bad:      lg.Bad,
	}
	for _, k := range checkKindsAlways {
		sum.ByKind[k] = 0
	}
	slices.SortFunc(r.results, func(a, b checkResult) int { return strings.Compare(a.id, b.id) })
	places := map[checkPlace]int{}
	for i := range r.results {
		res := &r.results[i]
		sum.Events += int(res.events)
		sum.costSum += int(res.cost)
		sum.maxSum += int(res.maxCost)
		sum.fitnessSum += res.fitness
		sum.RareMoves += int(res.rare)
		if res.rare > 0 {
			sum.RareSessions++
		}
		sum.GeneralizedMoves += int(res.general)
		if res.general > 0 {
			sum.GeneralizedSessions++
		}
		if res.bounded {
			sum.Bounded++
		}
		if res.outside {
			sum.Outside++
		}
		if res.place == nil {
			sum.Fit++
		} else {
			sum.ByKind[res.place.Kind]++
			places[*res.place]++
			if r.keep {
				sum.Deviations = append(sum.Deviations, res.verdict.Deviation)
			}
		}
		if emit != nil {
			if err := emit(res.verdict); err != nil {
				return nil, err
			}
		}
	}
	n := len(r.results)
	sum.FitShare = roundTo6(text.Share(sum.Fit, n))
	sum.OutsideShare = roundTo6(text.Share(sum.Outside, n))
	if sum.maxSum > 0 {
		sum.LogFitness = roundTo6(1 - float64(sum.costSum)/float64(sum.maxSum))
	} else {
		sum.LogFitness = 1
	}
	if n > 0 {
		sum.MeanFitness = roundTo6(sum.fitnessSum / float64(n))
	}
	sum.ByPlace = make([]checkPlace, 0, len(places))
	for p, k := range places {
		p.Count = k
		sum.ByPlace = append(sum.ByPlace, p)
	}
	sort.Slice(sum.ByPlace, func(i, j int) bool {
		a, b := sum.ByPlace[i], sum.ByPlace[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Kind != b.Kind {
			return kindRank(a.Kind) < kindRank(b.Kind)
		}
		if a.State != b.State {
			return a.State < b.State
		}
		if a.Event != b.Event {
			return a.Event < b.Event
		}
		return a.Label < b.Label
	})
	if sum.Deviations == nil {
		sum.Deviations = []*checkDeviation{}
	}
	return sum, nil
}

func kindRank(k string) int {
	for i, kk := range checkKinds {
		if k == kk {
			return i
		}
	}
	return len(checkKinds)
}

func roundTo6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// text writes the report for people: what was checked, the verdict figures,
// deviations by kind and by place, and the first deviating sessions.
func (s *checkSummary) text(w io.Writer, m *automaton.Model, lg *mine.Log, list int) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("model       %s  v%d %s  (%d states, %d transitions)\n", s.Model.Path, s.Model.Version, text.ShortDigest(s.Model.Digest), len(m.States), len(m.Transitions))
	p("logs        %s, %d records (%d skipped), %d sessions, %d events\n", filesText(s.files), s.Records, s.Skipped, s.Sessions, s.Events)
	for _, bl := range s.bad {
		p("            skipped %s\n", bl)
	}
	if s.Skipped > len(s.bad) {
		p("            ... and %d more skipped lines\n", s.Skipped-len(s.bad))
	}
	p("fit         %d of %d sessions (%s)", s.Fit, s.Sessions, text.Percent(s.FitShare))
	if s.MinFit != nil {
		verdict := "ok"
		if !s.Pass {
			verdict = "BELOW"
		}
		p("  min %s: %s", text.Percent(*s.MinFit), verdict)
	}
	p("\n")
	p("outside     %s (%s) off every path of the model; re-mine when this grows\n", text.Count(s.Outside, "session"), text.Percent(s.OutsideShare))
	p("fitness     log %.4f (1 - sum cost / sum max cost, as pm4py), mean per session %.4f\n", s.LogFitness, s.MeanFitness)
	rareNote := "pass"
	if s.RareIsDeviation {
		rareNote = "count as deviations"
	}
	p("rare        %s taken in %s (%s)\n", text.Count(s.RareMoves, "rare transition"), text.Count(s.RareSessions, "session"), rareNote)
	if s.GeneralizedMoves > 0 || s.GeneralizedIsDeviation {
		genNote := "pass"
		if s.GeneralizedIsDeviation {
			genNote = "count as deviations"
		}
		p("generalised %s taken in %s (%s)\n", text.Count(s.GeneralizedMoves, "generalised transition"), text.Count(s.GeneralizedSessions, "session"), genNote)
	}
	if s.Bounded > 0 {
		p("bounded     %s hit --max-align-states: their cost is a greedy alignment's (an upper bound)\n", text.Count(s.Bounded, "session"))
	}
	dev := s.Sessions - s.Fit
	if dev == 0 {
		p("\nno deviations\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	p("\ndeviations by kind\n")
	for _, k := range checkKinds {
		if n, ok := s.ByKind[k]; ok && (n > 0 || slices.Contains(checkKindsAlways, k)) {
			p("  %-20s %6d\n", k, n)
		}
	}
	p("\ndeviations by place\n")
	const maxPlaces = 20
	for i, pl := range s.ByPlace {
		if i == maxPlaces {
			p("  ... and %d more places (--format json lists all)\n", len(s.ByPlace)-maxPlaces)
			break
		}
		p("  %6d  %-20s %s\n", pl.Count, pl.Kind, placeText(pl.Kind, pl.State, pl.Event, pl.Label))
	}
	shown := len(s.Deviations)
	if list > 0 && shown > list {
		shown = list
	}
	p("\ndeviating sessions (%d of %d", shown, dev)
	if shown < dev {
		p("; --list 0 or --format json for all")
	}
	p(")\n")
	idw, locw := 0, 0
	for _, d := range s.Deviations[:shown] {
		idw = max(idw, len(d.SessionID))
		locw = max(locw, len(fmt.Sprintf("%s:%d", d.File, d.Line)))
	}
	for _, d := range s.Deviations[:shown] {
		p("  %-*s  step %-4d  %-*s  %-20s %s  fitness %.3f\n", idw, d.SessionID, d.Step, locw, fmt.Sprintf("%s:%d", d.File, d.Line),
			d.Kind, placeText(d.Kind, d.State, d.Event, d.Label), d.Fitness)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// placeText shows where a deviation happened.
func placeText(kind, state, event, label string) string {
	s := moveText(state, event, label)
	if kind == automaton.KindUnknownState {
		s += "  (unknown)"
	}
	return s
}

// filesText names the files read: one by name, several by count.
func filesText(files []automaton.SourceFile) string {
	if len(files) == 1 {
		return files[0].Path
	}
	return fmt.Sprintf("%d files", len(files))
}

// writeOutside writes every record of the sessions that do not fit to path,
// read again from the inputs as check read them.
func writeOutside(path string, inputs []mine.Input, ropt mine.ReadOptions, results []checkResult, streams IO, quiet bool) error {
	out := map[string]bool{}
	for i := range results {
		if results[i].place != nil {
			out[results[i].id] = true
		}
	}
	lines := 0
	err := automaton.WriteFileAtomic(path, func(w io.Writer) error {
		var err error
		lines, err = mine.Extract(inputs, ropt, func(id string) bool { return out[id] }, w)
		return err
	})
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if !quiet {
		fmt.Fprintf(streams.Err, "outside: %d records of %d sessions that do not fit written to %s\n", lines, len(out), path)
	}
	return nil
}
