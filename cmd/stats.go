package cmd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/stats"
)

func init() { register(newStatsCmd) }

type statsOptions struct {
	model    string
	mapValue string // --map
	inputs   []string
	format   string
	top      int
	measures []string
	outcome  string
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
  tokens.prompt, tokens.completion, cost and duration_ms, those the records
  carry): total, mean, p50 and p95 per visit.

Without logs, everything comes from the model: its states' counts and dwell,
its back edges and loops, and endings estimated from its top variants (the
report says what share of sessions they cover). With logs, every figure is
computed from the logs, read as the model was built from them (--labels,
--field and --from override): each session is replayed through the model as
fsmine replay does, and a record counts toward the state it was placed in
(records after a deviation that cannot be placed are counted apart). A
record that is not a visit of its own (folded, dropped or a detour) counts
its tokens and latency toward the visit before it.

With --outcome EXPR and logs (or for a model built with --outcome, from its
own counts), stats also shows where sessions fail: the states and moves whose
sessions fail more often than the log's. Each is tested by a one-sided Fisher
exact test of its failures against the log's; the p-values are adjusted for
the many places tested by Benjamini-Hochberg (false discovery rate 0.05),
and each place lists its failures, rate, lift over the log's rate, p, q and
example failed sessions. A log where every session succeeded (or failed) is
said to be so, with no rates.

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
	f.StringArrayVar(&opts.measures, "measure", stats.DefaultMeasures, "numeric record field `PATH` to sum per state (repeatable; dotted path)")
	f.StringVar(&opts.outcome, "outcome", "", "show where sessions fail by `EXPR`, a test of a record field such as attrs.reward>=1 (with logs; without, a model built with --outcome shows its own)")
	bindMapFlag(f, &opts.mapValue)
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
	var r *stats.Report
	if len(opts.inputs) == 0 {
		m, err := loadDiffModel(opts.model)
		if err != nil {
			return err
		}
		if m, err = pickMap(m, opts.model, opts.mapValue, streams.Err); err != nil {
			return err
		}
		r = stats.FromModel(m, opts.top)
		if opts.outcome != "" {
			return usagef("--outcome reads the sessions' outcomes from logs: give LOG files (a model built with --outcome shows its own without)")
		}
		if t := mine.TallyFromModel(m); t != nil {
			r.Failures = stats.Failures(m, t, opts.top, 0)
		}
	} else {
		var outcome *mine.Outcome
		if opts.outcome != "" {
			var err error
			if outcome, err = mine.ParseOutcome(opts.outcome); err != nil {
				return err
			}
		}
		m, lg, ms, inputs, ropt, err := measuredLogs(opts.model, opts.inputs, &opts.logs, opts.measures, opts.mapValue, streams)
		if err != nil {
			return err
		}
		r = stats.FromLogs(m, lg, ms, opts.top)
		if outcome != nil {
			outs, err := mine.SessionOutcomes(inputs, ropt, outcome)
			if err != nil {
				return err
			}
			r.Failures = stats.Failures(m, mine.TallyOutcomes(m, lg, outs, 3), opts.top, 0)
		}
	}
	r.Model.Path = opts.model
	out := bufio.NewWriter(streams.Out)
	var err error
	if opts.format == "json" {
		err = writeJSON(out, r)
	} else {
		err = r.WriteText(termSafe(out))
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

// measuredLogs loads the model, reads the logs for it holding every
// session, and measures the record fields at paths per visit. With
// mapValue (--map), the model is the sub-map of that value and the log its
// sessions alone (see pickMap).
func measuredLogs(model string, args []string, lf *logFlags, paths []string, mapValue string, streams IO) (*automaton.Model, *mine.Log, *mine.Measures, []mine.Input, mine.ReadOptions, error) {
	// Measure reads the logs a second time: hold standard input.
	stdin := streams.In
	var data []byte
	if slices.Contains(args, "-") {
		var err error
		if data, err = io.ReadAll(stdin); err != nil {
			return nil, nil, nil, nil, mine.ReadOptions{}, fmt.Errorf("reading standard input: %w", err)
		}
		stdin = bytes.NewReader(data)
	}
	m, lg, inputs, ropt, err := readModelLogs(model, args, lf, stdin, streams)
	if err != nil {
		return nil, nil, nil, nil, ropt, err
	}
	for i := range inputs {
		if inputs[i].Name == "-" {
			inputs[i].Open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		}
	}
	if shown, err := pickMap(m, model, mapValue, streams.Err); err != nil {
		return nil, nil, nil, nil, ropt, err
	} else if shown != m {
		vals, err := mine.SessionValues(inputs, ropt, m.By.Field)
		if err != nil {
			return nil, nil, nil, nil, ropt, err
		}
		of := func(id string) bool { v, ok := vals[id]; return ok && v == mapValue }
		emptied := lg.EmptiedIDs
		lg = lg.Subset(func(s *mine.Session) bool { return of(s.ID) })
		for _, id := range emptied {
			if of(id) {
				lg.EmptiedIDs = append(lg.EmptiedIDs, id)
			}
		}
		lg.Emptied = len(lg.EmptiedIDs)
		m = shown
	}
	ms, err := mine.Measure(inputs, ropt, lg, paths)
	if err != nil {
		return nil, nil, nil, nil, ropt, err
	}
	return m, lg, ms, inputs, ropt, nil
}
