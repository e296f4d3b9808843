package cmd

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/check"
)

func init() { register(newReplayCmd) }

type replayOptions struct {
	model     string
	session   string
	inputs    []string
	format    string
	rareIsDev bool
	genIsDev  bool
	unusual   int
	oddRun    int
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
stage in a row than the state's max_run); unusual_cap (one rare or generalised
transition more than --max-unusual allows); unusual_run (one more in a row
than --max-unusual-run allows); illegal (the model has no such move
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

A model built with --args has rules for the arguments of tool calls: replay
reads the logs again and names the session's first call whose argument
breaks one (an "argument" line; "arg" in json), without its value.

--format text (default) or json.

Exit status: 0 the session fits; 1 it deviates, or a call breaks an argument
rule; 2 trouble (bad flags, unreadable model or logs, the session is not in
the logs).`,
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
	f.IntVar(&opts.unusual, "max-unusual", 0, "a session may take at most `N` rare or generalised transitions; the next is a deviation (kind unusual_cap); 0: no cap")
	f.IntVar(&opts.oddRun, "max-unusual-run", 0, "a session may take at most `N` rare or generalised transitions in a row; the next is a deviation (kind unusual_run); 0: no cap")
	f.IntVar(&opts.maxAlign, "max-align-states", conform.DefaultMaxAlignStates, "alignment search nodes before a greedy alignment stands in")
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
	if opts.unusual < 0 {
		return usagef("--max-unusual must be at least 0 (0: no cap), got %d", opts.unusual)
	}
	if opts.oddRun < 0 {
		return usagef("--max-unusual-run must be at least 0 (0: no cap), got %d", opts.oddRun)
	}
	if slices.Contains(opts.inputs, "-") {
		// A conditioned model's sessions are judged by the map of their
		// value, and argument rules by the calls' arguments: both are read
		// again from the logs.
		if m, err := automaton.Load(opts.model); err == nil && m.By != nil {
			return usagef("%s is conditioned on %s: replay reads the logs twice for the value; give files, not standard input", opts.model, m.By.Field)
		} else if err == nil && len(m.Args) > 0 {
			return usagef("the model has argument rules, which read the logs again: give files, not standard input")
		}
	}
	m, err := loadDiffModel(opts.model)
	if err != nil {
		return err
	}
	// The read keeps the session asked for alone, where it can (see
	// readLogs).
	lg, inputs, ropt, err := readLogs(m, opts.model, opts.inputs, &opts.logs, streams.In, streams, nil, opts.session)
	if err != nil {
		return err
	}
	s := check.FindSession(lg, opts.session)
	if s == nil && slices.Contains(lg.EmptiedIDs, opts.session) {
		return fmt.Errorf("session %q in %s has no step to replay: the label rules drop every record of it", opts.session, strings.Join(opts.inputs, ", "))
	}
	if s == nil {
		return fmt.Errorf("session %q not found in %s (%d sessions; %s)", opts.session, strings.Join(opts.inputs, ", "), len(lg.Sessions), check.SimilarIDs(lg, opts.session))
	}
	// The reads again, for the map's value and the calls, keep the
	// session alone too.
	ropt.Session = s.ID
	mapName := ""
	if m.By != nil {
		vals, err := mine.SessionValues(inputs, ropt, m.By.Field)
		if err != nil {
			return err
		}
		v, ok := vals[s.ID]
		if ok {
			m, mapName = m.For(v), m.MapName(v)
		} else {
			mapName = automaton.SharedMap
		}
	}
	c := conform.New(m, conform.Options{RareIsDeviation: opts.rareIsDev, GeneralizedIsDeviation: opts.genIsDev, MaxUnusual: opts.unusual, MaxUnusualRun: opts.oddRun, MaxAlignStates: opts.maxAlign})
	r := check.Replay(lg, s, c)
	r.Model = check.ModelRef{Path: opts.model, Version: m.Version, Digest: m.Digest}
	r.Map = mapName
	if len(m.Args) > 0 {
		ropt.Import.Seen = true
		sessions, err := mine.ReadArgSessions(inputs, ropt)
		if err != nil {
			return err
		}
		for _, as := range sessions {
			if as.ID == s.ID {
				if f := mine.CheckArgs([]mine.ArgSession{as}, m.Args); len(f) > 0 {
					r.Arg = &f[0]
				}
			}
		}
	}
	out := bufio.NewWriter(streams.Out)
	if opts.format == "json" {
		err = writeJSON(out, r)
	} else {
		err = r.WriteText(termSafe(out))
	}
	if err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if !r.Fits || r.Arg != nil {
		return errFound
	}
	return nil
}
