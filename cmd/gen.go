package cmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/atomicfile"
	"github.com/fsmine/fsmine/mine/gen"
	"github.com/spf13/cobra"
)

// The bundled sample testdata/returns.jsonl is this command's output; the
// test TestReturnsSampleIsCurrent keeps the two in step.
//go:generate go run .. gen -n 400 --seed 7 --drift 0.05 -o ../testdata/returns.jsonl

// defaultGenStart is --start's default, gen.DefaultStart.
var defaultGenStart = gen.DefaultStart.Format(time.RFC3339Nano)

type genOptions struct {
	model     string
	sessions  int
	seed      uint64
	drift     float64
	start     string
	output    string
	truthAttr bool
	truth     string
	truthSet  bool // --truth was given
	truthOut  string
	scenario  string
	share     float64
	shareSet  bool // --hijack-share was given
}

func init() { register(newGenCmd) }

func newGenCmd(streams IO) *cobra.Command {
	opts := genOptions{}
	c := &cobra.Command{
		Use:   "gen [flags]",
		Short: "Generate synthetic agent logs by sampling sessions from a model",
		Long: `gen writes synthetic trajectory logs in fsmine's JSONL record form, one step a
line, by sampling sessions from a model: the built-in truth model of a
customer-service returns flow, or the model file given with --model (a mined
model works too). Use it for a realistic sample to try fsmine on, as ground
truth for measuring the miner (sample, mine, compare), and as load for
benchmarks.

Each session is a random walk from __start__ to __end__ that follows the
transitions' probabilities. A record's node is the label of the state the
session entered, its event the outcome that led out of it. Timestamps advance
by dwell times drawn per state (a log-normal fitted to the state's dwell_ms
p50 and p95 when the model has them); sessions arrive at random and their
steps interleave by time, as a log shipper writes them. --drift P inserts,
with probability P per step, an off-topic detour: the step ends with event
off_topic, one to three "smalltalk" records follow, and the session returns
to the same stage. --truth-attr adds attrs.truth_state, the id of the state
each record was sampled in (detour records have none). --truth-out writes
the model sampled from as a model file, the truth for eval --truth. When -o
names a directory (one that exists, a path ending in /, or a new path
without an extension), gen writes sessions.jsonl and truth.json into it. A session still going
after 1000 steps is cut off there, as an abandoned log is.

The same flags give the same bytes, on every run.

Exit status: 0 ok; 2 trouble (bad flags, unreadable model).`,
		Example: `  fsmine gen -n 400 --seed 7 --drift 0.05 -o returns.jsonl
  fsmine gen --model model.json -n 100000 --truth-attr > sample.jsonl
  fsmine gen --truth agent -n 300 -o agent.jsonl --truth-out agent.truth.json
  fsmine gen --truth agent -n 30 --seed 3 -o agent/`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts.truthSet = c.Flags().Changed("truth")
			opts.shareSet = c.Flags().Changed("hijack-share")
			return runGen(c.Context(), opts, streams)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.model, "model", "", "model file to sample from (default: the built-in truth model --truth names)")
	f.StringVar(&opts.truth, "truth", "returns", "built-in truth model to sample from without --model: returns (a customer-service returns flow) or agent (a tool-calling agent whose sessions are sparse)")
	f.IntVarP(&opts.sessions, "sessions", "n", 100, "number of sessions to generate")
	f.Uint64Var(&opts.seed, "seed", 1, "random seed")
	f.Float64Var(&opts.drift, "drift", 0, "probability per step of an off-topic detour, in [0, 1]")
	f.StringVar(&opts.start, "start", defaultGenStart, "time of the first session, RFC 3339")
	f.StringVarP(&opts.output, "output", "o", "-", "file to write, atomically (- for stdout)")
	f.BoolVar(&opts.truthAttr, "truth-attr", false, "add attrs.truth_state, the id of the true state, to each record")
	f.StringVar(&opts.truthOut, "truth-out", "", "also write the model sampled from to `FILE`, a model file (for eval --truth)")
	f.StringVar(&opts.scenario, "scenario", "", "write a scenario instead of sampling a model: hijack (a mail and payments assistant with arguments and sources, some sessions hijacked by an instruction a tool read; see docs/gen.md)")
	f.Float64Var(&opts.share, "hijack-share", 0.25, "with --scenario hijack: the probability that a session is hijacked, in [0, 1]")
	return c
}

func runGen(ctx context.Context, opts genOptions, streams IO) error {
	if opts.sessions < 0 {
		return usagef("-n must be 0 or more, not %d", opts.sessions)
	}
	if !(opts.drift >= 0 && opts.drift <= 1) {
		return usagef("--drift must be a probability in [0, 1], not %v", opts.drift)
	}
	start, err := time.Parse(time.RFC3339Nano, opts.start)
	if err != nil {
		return usagef("--start: %q is not an RFC 3339 time such as %s", opts.start, defaultGenStart)
	}
	if y := start.UTC().Year(); y < 1 || y > 9000 {
		return usagef("--start: year %d is out of range", y)
	}
	if opts.scenario != "" {
		return runScenario(ctx, opts, streams)
	}
	if opts.shareSet {
		return usagef("--hijack-share is the share of --scenario hijack's sessions: add --scenario hijack")
	}
	if opts.truth != "returns" && opts.truth != "agent" {
		return usagef("--truth %q: want returns or agent", opts.truth)
	}
	if opts.model != "" && opts.truthSet {
		return usagef("--truth and --model: give one")
	}
	if err := checkOutputs([]string{opts.model}, [][2]string{{"--output", opts.output}}); err != nil {
		return err
	}
	m, err := loadGenModel(opts.model, opts.truth)
	if err != nil {
		return err
	}
	g, err := gen.New(m, gen.Options{
		Seed:      opts.seed,
		Drift:     opts.drift,
		Start:     start,
		TruthAttr: opts.truthAttr,
	})
	if err != nil {
		if opts.model != "" {
			return fmt.Errorf("%s: %w", opts.model, err)
		}
		return err
	}
	output, folder, err := genOutput(opts.output)
	if err != nil {
		return err
	}
	truthOut := opts.truthOut
	if folder && truthOut == "" {
		truthOut = filepath.Join(filepath.Dir(output), "truth.json")
	}
	if truthOut == "-" {
		return usagef("--truth-out -: the truth is a model file; give it a file name")
	}
	if err := checkOutputs([]string{opts.model}, [][2]string{{"--output", output}, {"--truth-out", truthOut}}); err != nil {
		return err
	}
	// The truth and the sessions change together, or neither does.
	var batch atomicfile.Batch
	defer batch.Abort()
	if truthOut != "" {
		t := *m
		t.Digest = t.ComputeDigest()
		if err := writeOutputIn(&batch, truthOut, streams.Out, t.Write); err != nil {
			return err
		}
	}
	write := func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		if err := g.Write(ctx, bw, opts.sessions); err != nil {
			return err
		}
		return bw.Flush()
	}
	if err := writeOutputIn(&batch, output, streams.Out, write); err != nil {
		return err
	}
	if err := batch.Commit(); err != nil {
		return fmt.Errorf("writing the outputs: %w", err) // the error names the file
	}
	return nil
}

// runScenario writes gen --scenario's sessions.
func runScenario(ctx context.Context, opts genOptions, streams IO) error {
	if opts.scenario != "hijack" {
		return usagef("--scenario %q: want hijack", opts.scenario)
	}
	if opts.model != "" || opts.truthSet || opts.truthAttr || opts.truthOut != "" || opts.drift != 0 {
		return usagef("--scenario hijack samples no model: no --model, --truth, --truth-attr, --truth-out or --drift")
	}
	if !(opts.share >= 0 && opts.share <= 1) {
		return usagef("--hijack-share must be a probability in [0, 1], not %v", opts.share)
	}
	output, _, err := genOutput(opts.output)
	if err != nil {
		return err
	}
	if err := checkOutputs(nil, [][2]string{{"--output", output}}); err != nil {
		return err
	}
	write := func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		if err := gen.WriteHijack(ctx, bw, opts.sessions, gen.HijackOptions{Seed: opts.seed, Share: opts.share}); err != nil {
			return err
		}
		return bw.Flush()
	}
	if output == "-" || output == "" {
		return write(streams.Out)
	}
	if err := atomicfile.Write(output, write); err != nil {
		return fmt.Errorf("writing %s: %w", output, err)
	}
	return nil
}

// loadGenModel reads the model file at path, or the built-in truth model
// named truth ("returns" or "agent") when path is empty.
func loadGenModel(path, truth string) (*automaton.Model, error) {
	switch {
	case path != "":
		return automaton.Load(path)
	case truth == "agent":
		return gen.AgentTruth(), nil
	}
	return gen.ReturnsTruth(), nil
}

// genOutput is where gen writes its sessions for -o output: output itself,
// or, for a folder (one that exists, a path ending in a separator, or a new
// path without an extension: a data set's folder), sessions.jsonl in it,
// made if need be (folder is then set).
func genOutput(output string) (path string, folder bool, err error) {
	if output == "-" || output == "" {
		return output, false, nil
	}
	fi, err := os.Stat(output)
	isDir := err == nil && fi.IsDir()
	if err != nil && !strings.Contains(filepath.Base(output), ".") {
		isDir = true
	}
	if !isDir && !strings.HasSuffix(output, "/") && !strings.HasSuffix(output, string(os.PathSeparator)) {
		return output, false, nil
	}
	if err := os.MkdirAll(output, 0o755); err != nil {
		return "", false, err
	}
	return filepath.Join(output, "sessions.jsonl"), true, nil
}
