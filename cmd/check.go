package cmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	json "github.com/goccy/go-json"
	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/internal/atomicfile"
	"github.com/fsmine/fsmine/internal/text"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/check"
)

func init() { register(newCheckCmd) }

type checkOptions struct {
	model     string
	inputs    []string
	format    string
	minFit    float64
	rareIsDev bool
	genIsDev  bool
	unusual   int
	oddRun    int
	outside   string
	maxAlign  int
	list      int
	rank      int
	rankBy    string
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
  unusual_cap         one rare or generalised transition more than
                      --max-unusual N allows a session (a session may leave
                      the common paths a little, not at every step)
  unusual_run         one rare or generalised transition more in a row than
                      --max-unusual-run N allows (a session may step off the
                      common paths and back, not run along their margins)

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

Every session also gets a risk: its surprisal under the model, the sum over
its moves of -log2 of each move's probability (a transition's share of its
state's outflow, Witten-Bell smoothed so that a move the model never saw
costs a finite amount, backing off to how often sessions entered the move's
label). A session with a high risk took moves the mined sessions rarely or
never took; in json and jsonl it is "risk": total bits, bits per move, and
the most surprising move, and "end", the cost of its move into __end__ (high
for a session that stops where sessions go on). --rank N lists the N
riskiest sessions for review, by --rank-by: total (default), per_step or end.

--format text (default), json (one object with the summary and every
deviation) or jsonl (one verdict per session, as they are checked).

A model built with --args has rules for the arguments of tool calls
(attrs.args): check reads the logs again and flags a session at its first
call whose argument breaks one, of one kind:
  unseen_value          the argument took few, stable values in the logs the
                        model was mined from, and this is none of them
  value_without_source  the argument's value always appeared earlier in its
                        session (attrs.seen: the user's words, a tool's
                        answer), and this one did not
They are reported apart (names of sessions, tools and arguments, never
values) and do not change fit.

Exit status: 0 ok (the share of fitting sessions is at least --min-fit, and
no session breaks an argument rule); 1 below --min-fit, or a session breaks
an argument rule; 2 trouble (bad flags, unreadable model or logs, no
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
			if c.Flags().Changed("rank-by") && opts.rank == 0 {
				return usagef("--rank-by says what --rank N ranks by: give --rank too")
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
	f.IntVar(&opts.unusual, "max-unusual", 0, "a session may take at most `N` rare or generalised transitions; the next is a deviation (kind unusual_cap); 0: no cap")
	f.IntVar(&opts.oddRun, "max-unusual-run", 0, "a session may take at most `N` rare or generalised transitions in a row; the next is a deviation (kind unusual_run); 0: no cap")
	f.IntVar(&opts.maxAlign, "max-align-states", conform.DefaultMaxAlignStates, "alignment search nodes per session before a greedy alignment stands in")
	f.IntVar(&opts.window, "window", mine.DefaultWindow, "records a session may sit idle before it is checked and its records let go; 0 holds every session to the end")
	f.IntVar(&opts.list, "list", 20, "deviating sessions listed in the text report (0: all)")
	f.IntVar(&opts.rank, "rank", 0, "rank sessions by risk (surprisal under the model) and list the `N` riskiest; with --format jsonl, write only their verdicts, riskiest first")
	f.StringVar(&opts.rankBy, "rank-by", check.RankTotal, "the risk --rank ranks by: "+strings.Join(check.RankBys, ", ")+" (end: the surprisal of ending where the session ended; see eval --outcome)")
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
	if opts.unusual < 0 {
		return usagef("--max-unusual must be at least 0 (0: no cap), got %d", opts.unusual)
	}
	if opts.oddRun < 0 {
		return usagef("--max-unusual-run must be at least 0 (0: no cap), got %d", opts.oddRun)
	}
	if opts.list < 0 {
		return usagef("--list must be 0 or more, got %d", opts.list)
	}
	if opts.rank < 0 {
		return usagef("--rank must be 0 or more, got %d", opts.rank)
	}
	if !slices.Contains(check.RankBys, opts.rankBy) {
		return usagef("--rank-by takes %s, got %q", strings.Join(check.RankBys, ", "), opts.rankBy)
	}
	m, err := loadDiffModel(opts.model)
	if err != nil {
		return err
	}
	if opts.rank > 0 && m.Uncounted() {
		return usagef("--rank: %s is a design without counts, under which every session's risk is alike; rank against a mined model", opts.model)
	}
	copt := conform.Options{RareIsDeviation: opts.rareIsDev, GeneralizedIsDeviation: opts.genIsDev, MaxUnusual: opts.unusual, MaxUnusualRun: opts.oddRun, MaxAlignStates: opts.maxAlign}
	window := opts.window
	if m.By != nil {
		// Each session is judged by its value's map: the values are read
		// first, so every session is held to the end of the read.
		if slices.Contains(opts.inputs, "-") {
			return usagef("%s is conditioned on %s: check reads the logs twice for the values; give files, not standard input", opts.model, m.By.Field)
		}
		window = 0
	}
	run := check.NewCollector(
		conform.New(m, copt),
		check.Options{Deviations: opts.format == "json" || opts.format == "text", Verdicts: opts.format == "jsonl", Rank: opts.rank, RankBy: opts.rankBy})
	// Sessions are checked as the read finishes them; a read that starts
	// over holding every session gives them all again.
	if opts.outside != "" {
		if opts.outside == "-" {
			return usagef("--outside needs a file name: the report goes to standard output")
		}
		if slices.Contains(opts.inputs, "-") {
			return usagef("--outside reads the logs again: give files, not standard input")
		}
		read := append([]string{opts.model, opts.logs.labels}, opts.inputs...)
		if err := checkOutputs(read, [][2]string{{"--outside", opts.outside}}); err != nil {
			return err
		}
	}
	if len(m.Args) > 0 && slices.Contains(opts.inputs, "-") {
		return usagef("the model has argument rules, which read the logs again: give files, not standard input")
	}
	lg, inputs, ropt, err := readLogs(m, opts.model, opts.inputs, &opts.logs, streams.In, streams, &sessionSink{
		window:  window,
		each:    run.Add,
		restart: run.Reset,
	}, "")
	if err != nil {
		return err
	}
	if m.By != nil {
		vals, err := mine.SessionValues(inputs, ropt, m.By.Field)
		if err != nil {
			return err
		}
		run.ConditionOn(m, vals, copt)
	}
	for si := range lg.Sessions {
		run.Add(lg, &lg.Sessions[si])
	}

	out := bufio.NewWriterSize(streams.Out, 1<<16)
	var emit func(*check.Verdict) error
	if opts.format == "jsonl" {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		emit = func(v *check.Verdict) error { return enc.Encode(v) }
	}
	sum, err := run.Summary(lg, emit)
	if err != nil {
		return err
	}
	if opts.outside != "" {
		if err := writeOutside(opts.outside, inputs, ropt, run.Deviating(), streams, opts.logs.quiet); err != nil {
			return err
		}
	}
	if len(m.Args) > 0 {
		ropt.Import.Seen = true
		sessions, err := mine.ReadArgSessions(inputs, ropt)
		if err != nil {
			return err
		}
		sum.Args = check.Args(m, sessions)
	}
	sum.Model = check.ModelRef{Path: opts.model, Version: m.Version, Digest: m.Digest}
	sum.RareIsDeviation = opts.rareIsDev
	sum.GeneralizedIsDeviation = opts.genIsDev
	sum.MaxUnusual = opts.unusual
	sum.MaxUnusualRun = opts.oddRun
	sum.SetMinFit(opts.minFit)
	switch opts.format {
	case "json":
		err = writeJSON(out, sum)
	case "text":
		err = sum.WriteText(termSafe(out), m, opts.list)
		if err == nil && sum.Args != nil {
			err = sum.Args.WriteText(termSafe(out), opts.list)
		}
	}
	if err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if sum.Args != nil && sum.Args.Flagged > 0 {
		if opts.format == "jsonl" {
			fmt.Fprintf(streams.Err, "%d of %d sessions break an argument rule\n", sum.Args.Flagged, sum.Args.Sessions)
		}
		return errFound
	}
	if !sum.Pass {
		if opts.format == "jsonl" {
			fmt.Fprintf(streams.Err, "fit %d of %d sessions (%s), below --min-fit %g\n", sum.Fit, sum.Sessions, text.Percent(sum.FitShare), opts.minFit)
		}
		return errFound
	}
	return nil
}

// writeOutside writes every record of the sessions out (the ids of those
// that do not fit) to path, read again from the inputs as check read them.
func writeOutside(path string, inputs []mine.Input, ropt mine.ReadOptions, out map[string]bool, streams IO, quiet bool) error {
	lines := 0
	err := atomicfile.Write(path, func(w io.Writer) error {
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
