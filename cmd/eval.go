package cmd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/eval"
)

func init() { register(newEvalCmd) }

type evalOptions struct {
	inputs        []string
	input         inputFlags
	folds         int
	merges        []string
	alphas        []string
	priorMoves    []string
	priorStates   []string
	maxUnusual    []string
	maxUnusualRun []string
	support       []string
	generalize    []string
	rareCount     int
	rareRatio     float64
	minRejected   float64
	nested        bool
	args          bool
	format        string
	outcome       string
	quiet         bool
	truth         string
	by            string
	byMin         int
	byMode        string
}

func newEvalCmd(streams IO) *cobra.Command {
	opts := &evalOptions{}
	def := mine.DefaultOptions()
	c := &cobra.Command{
		Use:   "eval [flags] LOG...",
		Short: "Cross-validate mining settings: held-out sessions accepted, perturbed ones rejected",
		Long: `eval measures how well the models of a log generalise, to choose settings.
The sessions are split into --folds folds by a hash of their id; for each
fold a model is mined from the other folds and the fold's sessions are
replayed through it:

  accepted   share of held-out sessions that are paths of the model within
             its loop caps (what a guard built from it lets through)
  fitness    mean alignment fitness of the held-out sessions (see check)
  rejected   share of perturbed held-out sessions the model refuses: one
             middle step removed, or two adjacent steps of different labels
             swapped (events stay in place); perturbations equal to a real
             session of the log are not counted
  repeat     (apart) a step repeated once more than any session of the log
             did in a row, which run caps reject by construction
  event      (apart) a step ending with another event its label ends with
             in the log, the next step kept
  at-real    of the rejected, the share whose first refused move is none
             of the model's and is taken by a held-out session of the fold:
             refusals that begin at real behaviour, on a log where
             perturbations are only presumed wrong

With --truth MODEL (the model the log was sampled from, gen --truth-out, or
a designed flow), also:

  t-rej      share of the removal and swap perturbations the truth rejects
             that the mined model rejects too
  gen-prec   share of the mined model's generalised transitions, as (label,
             event, label), that the truth has

and the model's size: states, transitions, common (not rare) transitions,
generalised transitions, and the time to mine it.

--merge, --alpha, --prior-move, --prior-state, --generalize,
--constraint-support, --max-unusual and --max-unusual-run take comma-separated
lists; every combination is scored on the same folds (alpha applies to the
alergia merge only, the priors to the bayes merge; the caps judge the
held-out sessions as check's flags of the same names do, on one model per
fold). The settings on the Pareto front of accepted and rejected are marked with *,
and one is recommended: of those rejecting at least --min-rejected
of the perturbed sessions, the one accepting the most held-out sessions.

With --args, argument rules (build --args) are learned on each fold's
training sessions too, and a held-out session, or a perturbation, is
refused also at a call that breaks one: a perturbed session's records move
with its steps, so a removed lookup takes the text a later call's value
came from, and that call breaks its rule (see docs/arguments.md).

Logs are read as build reads them (--labels, --field, --from), whole.

Exit status: 0 ok; 2 trouble (bad flags, unreadable logs, fewer sessions than
folds, a fold without sessions, a truth that is not a model file or has no
label in common with the log).`,
		Example: `  fsmine eval --labels rules.json logs/*.jsonl
  fsmine eval --merge label,alergia --alpha 0.001,0.01,0.05 --generalize none,auto logs/*.jsonl
  fsmine eval --merge alergia,bayes --prior-move 1,4 --generalize none,constraints,auto logs/*.jsonl
  fsmine eval --generalize none,constraints,auto,loose,any-order logs/*.jsonl
  fsmine eval --folds 10 --format json logs/today.jsonl.gz > eval.json
  fsmine eval --truth agent/truth.json agent/sessions.jsonl`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("eval needs at least one LOG (a file, a glob, or - for standard input)")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.inputs = args
			return runEval(c.Context(), opts, streams)
		},
	}
	f := c.Flags()
	opts.input.bind(f, true)
	f.IntVar(&opts.folds, "folds", 5, "number of folds `K` (at least 2)")
	f.StringSliceVar(&opts.merges, "merge", []string{def.Merge}, "state merging, a list: "+strings.Join(mine.Merges, ", "))
	f.StringSliceVar(&opts.alphas, "alpha", []string{strconv.FormatFloat(def.Alpha, 'g', -1, 64)}, "alergia significance levels, a list")
	f.StringSliceVar(&opts.priorMoves, "prior-move", []string{strconv.FormatFloat(def.BayesMovePrior, 'g', -1, 64)}, "bayes merge: what a transition costs, in ln(moves)/2, a list")
	f.StringSliceVar(&opts.priorStates, "prior-state", []string{strconv.FormatFloat(def.BayesStatePrior, 'g', -1, 64)}, "bayes merge: what a state costs, in ln(moves)/2, a list")
	f.StringSliceVar(&opts.generalize, "generalize", []string{def.Generalize}, "generalisation, a list: "+strings.Join(mine.Generalizes, ", "))
	f.StringSliceVar(&opts.maxUnusual, "max-unusual", []string{"0"}, "judge held-out sessions as check --max-unusual N does (at most N rare or generalised transitions a session; 0: no cap), a list")
	f.StringSliceVar(&opts.support, "constraint-support", []string{strconv.Itoa(mine.MinConstraintSupport)}, "learn constraints only where at least N sessions show them, as build --constraint-support N does, a list")
	f.StringSliceVar(&opts.maxUnusualRun, "max-unusual-run", []string{"0"}, "judge held-out sessions as check --max-unusual-run N does (at most N rare or generalised transitions in a row; 0: no cap), a list")
	f.IntVar(&opts.rareCount, "rare-count", def.RareCount, "flag transitions taken fewer than `N` times as rare (0: off)")
	f.Float64Var(&opts.rareRatio, "rare-ratio", def.RareRatio, "flag transitions below this share of their source's outflow as rare (0: off)")
	f.Float64Var(&opts.minRejected, "min-rejected", eval.DefaultMinRejected, "share of perturbed sessions a recommended setting must reject")
	f.BoolVar(&opts.nested, "nested", false, "also measure the recommendation held out: for each fold, the setting recommended on the other folds (at least 2), mined on them and scored on it (mines each setting that many times more)")
	f.BoolVar(&opts.args, "args", false, "also learn argument rules on each fold (build --args) and refuse held-out sessions and perturbations at a call that breaks one (reads the logs twice)")
	f.StringVar(&opts.format, "format", "text", "output: text or json")
	f.StringVar(&opts.truth, "truth", "", "a model `FILE` that is right about the log (gen --truth-out, or a designed flow): also score truth-rejected perturbations rejected and generalisation precision")
	f.StringVar(&opts.outcome, "outcome", "", "score each held-out session's risk (surprisal) against its outcome, `EXPR`, a test of a record field such as attrs.reward>=1: ROC AUC for failure beside the session-length baseline, failures flagged and successes passed")
	f.StringVar(&opts.by, "by", "", "also score every setting conditioned on the record `FIELD` (build --by), each held-out session judged by its value's map, beside the setting unconditioned; with --outcome, also the risk under those maps (reads the logs twice)")
	f.IntVar(&opts.byMin, "by-min", mine.DefaultByMin, "sessions of the training folds a --by value needs for a sub-map of its own")
	f.StringVar(&opts.byMode, "by-mode", mine.DefaultByMode, byModeUsage)
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "no progress on standard error")
	return c
}

// evalSettings is every combination of the listed settings, in the order
// given, alpha only for alergia, the priors only for bayes.
func evalSettings(opts *evalOptions) ([]eval.Setting, error) {
	numbers := func(flag string, list []string, ok func(float64) bool, want string) ([]float64, error) {
		var out []float64
		for _, a := range list {
			x, err := strconv.ParseFloat(strings.TrimSpace(a), 64)
			if err != nil || !ok(x) {
				return nil, usagef("--%s %q: want %s", flag, a, want)
			}
			out = append(out, x)
		}
		return out, nil
	}
	alphas, err := numbers("alpha", opts.alphas, func(x float64) bool { return x > 0 && x < 1 }, "numbers between 0 and 1")
	if err != nil {
		return nil, err
	}
	prior := func(lo float64) func(float64) bool {
		return func(x float64) bool { return x >= lo && x <= mine.MaxBayesPrior }
	}
	moves, err := numbers("prior-move", opts.priorMoves, prior(mine.MinBayesMovePrior), fmt.Sprintf("numbers from %g to %d", mine.MinBayesMovePrior, mine.MaxBayesPrior))
	if err != nil {
		return nil, err
	}
	states, err := numbers("prior-state", opts.priorStates, prior(0), fmt.Sprintf("numbers from 0 to %d", mine.MaxBayesPrior))
	if err != nil {
		return nil, err
	}
	whole := func(x float64) bool { return x >= 0 && x == math.Trunc(x) && x <= 1e6 }
	unusual, err := numbers("max-unusual", opts.maxUnusual, whole, "whole numbers from 0")
	if err != nil {
		return nil, err
	}
	oddRuns, err := numbers("max-unusual-run", opts.maxUnusualRun, whole, "whole numbers from 0")
	if err != nil {
		return nil, err
	}
	supports, err := numbers("constraint-support", opts.support, func(x float64) bool { return x >= 1 && x == math.Trunc(x) && x <= maxSupport }, fmt.Sprintf("whole numbers from 1 to %d", maxSupport))
	if err != nil {
		return nil, err
	}
	var out []eval.Setting
	for _, m := range opts.merges {
		m = strings.TrimSpace(m)
		if !slices.Contains(mine.Merges, m) {
			return nil, usagef("--merge %q: want one of %s", m, strings.Join(mine.Merges, ", "))
		}
		for _, g := range opts.generalize {
			g = strings.TrimSpace(g)
			if !slices.Contains(mine.Generalizes, g) {
				return nil, usagef("--generalize %q: want one of %s", g, strings.Join(mine.Generalizes, ", "))
			}
			var merged []eval.Setting
			switch m {
			case mine.MergeAlergia:
				for _, a := range alphas {
					merged = append(merged, eval.Setting{Merge: m, Alpha: a, Generalize: g})
				}
			case mine.MergeBayes:
				for _, mp := range moves {
					for _, sp := range states {
						merged = append(merged, eval.Setting{Merge: m, PriorMove: mp, PriorState: sp, Generalize: g})
					}
				}
			default:
				merged = append(merged, eval.Setting{Merge: m, Generalize: g})
			}
			for _, st := range merged {
				for i, cs := range supports {
					if g == mine.GeneralizeNone {
						if i > 0 {
							break // no constraints to learn: one model
						}
						cs = 0
					}
					if cs == mine.MinConstraintSupport {
						cs = 0 // the default, as models record it
					}
					for _, u := range unusual {
						for _, r := range oddRuns {
							st.ConstraintSupport, st.MaxUnusual, st.MaxUnusualRun = int(cs), int(u), int(r)
							out = append(out, st)
						}
					}
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, usagef("no settings to evaluate")
	}
	// A setting listed twice (--merge label,label, --alpha 0.01,0.010) is
	// scored once: its rows would be the same.
	seen := make(map[eval.Setting]bool, len(out))
	out = slices.DeleteFunc(out, func(st eval.Setting) bool {
		dup := seen[st]
		seen[st] = true
		return dup
	})
	return out, nil
}

func runEval(ctx context.Context, opts *evalOptions, streams IO) error {
	if opts.format != "text" && opts.format != "json" {
		return usagef("--format %q: want text or json", opts.format)
	}
	if opts.folds < 2 {
		return usagef("--folds %d: want at least 2", opts.folds)
	}
	if opts.nested && opts.folds < 3 {
		return usagef("--nested: --folds %d leaves %d to choose on; want at least 3 folds", opts.folds, opts.folds-1)
	}
	if opts.rareCount < 0 || !(opts.rareRatio >= 0 && opts.rareRatio < 1) {
		return usagef("--rare-count must be >= 0 and --rare-ratio in [0, 1)")
	}
	if !(opts.minRejected >= 0 && opts.minRejected <= 1) {
		return usagef("--min-rejected %v: want a share between 0 and 1", opts.minRejected)
	}
	settings, err := evalSettings(opts)
	if err != nil {
		return err
	}
	var truth *automaton.Model
	if opts.truth != "" {
		if truth, err = automaton.Load(opts.truth); err != nil {
			return fmt.Errorf("--truth: %w", err)
		}
	}
	ropt, err := opts.input.readOptions()
	if err != nil {
		return err
	}
	inputs, err := expandInputs(opts.inputs, streams.In, opts.input.from)
	if err != nil {
		return err
	}
	if opts.args {
		if !twiceReadable(inputs) {
			return usagef("--args reads the logs twice: give log files or folders (not standard input or a pipe)")
		}
		ropt.Import.Seen = true
	}
	var done func()
	ropt.Progress, done = startProgress(streams, opts.quiet)
	lg, err := mine.Read(inputs, ropt)
	done()
	if err != nil {
		return err
	}
	if len(lg.Sessions) == 0 {
		return noSessionsError(strings.Join(opts.inputs, ", "), lg)
	}
	base := mine.DefaultOptions()
	base.RareCount, base.RareRatio = opts.rareCount, opts.rareRatio
	eopt := eval.Options{Folds: opts.folds, Settings: settings, Base: base, MinRejected: opts.minRejected, Truth: truth, Nested: opts.nested}
	if opts.args {
		ropt.Progress = nil
		if eopt.Args, err = mine.ReadArgSessions(inputs, ropt); err != nil {
			return err
		}
	}
	// Checked whether or not --by is given: a bad value is a mistake either way.
	if err := checkByMode(opts.byMode); err != nil {
		return err
	}
	if opts.by != "" {
		if !twiceReadable(inputs) {
			return usagef("--by reads the logs twice: give log files or folders (not standard input or a pipe)")
		}
		if opts.byMin < 1 {
			return usagef("--by-min %d: want 1 or more", opts.byMin)
		}
		if eopt.By, err = mine.SessionValues(inputs, ropt, opts.by); err != nil {
			return err
		}
		for _, s := range settings {
			s.By, s.ByMin, s.ByMode = opts.by, opts.byMin, opts.byMode
			eopt.Settings = append(eopt.Settings, s)
		}
	}
	if opts.outcome != "" {
		o, err := mine.ParseOutcome(opts.outcome)
		if err != nil {
			return err
		}
		outs, err := mine.SessionOutcomes(inputs, ropt, o)
		if err != nil {
			return err
		}
		eopt.Outcome, eopt.OutcomeExpr = outs.Succeeded, o.Expr
	}
	if streams.ErrTTY && !opts.quiet {
		tty := rawWriter(streams.Err) // the progress line's own escapes
		eopt.Progress = func(done, total int) {
			fmt.Fprintf(tty, "\r\033[Kmining and scoring %d/%d models", done, total)
			if done == total {
				fmt.Fprint(tty, "\r\033[K")
			}
		}
	}
	rep, err := eval.Run(lg, eopt)
	if err != nil {
		if errors.Is(err, eval.ErrTooFew) {
			return fmt.Errorf("%s: %w", strings.Join(opts.inputs, ", "), err)
		}
		if errors.Is(err, eval.ErrTruth) {
			return fmt.Errorf("%s: %w", opts.truth, err)
		}
		return err
	}
	if opts.format == "json" {
		return writeJSON(streams.Out, rep)
	}
	return rep.WriteText(streams.Out)
}
