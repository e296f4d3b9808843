package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	json "github.com/goccy/go-json"
	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/atomicfile"
	"github.com/fsmine/fsmine/internal/text"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/render"
)

func init() { register(newDiffCmd) }

type diffOptions struct {
	oldPath, newPath string
	mapValue         string // --map
	format           string
	dot              string
	alpha            float64
	layoutTimeout    time.Duration // --layout-timeout, for --format html's overlay

	// --by: one model per value of a record field, from logs.
	by         string
	logs       []string
	labels     string
	fields     []string
	from       string
	imports    importFlags
	generalize string
	support    int // --constraint-support
}

func newDiffCmd(streams IO) *cobra.Command {
	opts := &diffOptions{}
	c := &cobra.Command{
		Use:   "diff OLD.json NEW.json",
		Short: "Compare two models: structure, significant share changes, loops, trunk",
		Long: `diff compares two fsmine models, as a reviewer needs it in a pull request.

States are matched by id, transitions by (from, event, to), loops by their
set of states. It reports states and transitions added and removed, states
relabeled, transitions that flipped between rare and common, loops that
appeared, disappeared, were reshaped (states joined or left), grew or shrank
(max or p95 iterations), and a changed trunk. Counts always differ between two samples, so a transition's share of
its source's outflow is reported as changed only when a two-proportion
z-test finds the change significant, and a state's whole outflow
distribution only when a chi-square test does. Each family of tests is
Bonferroni-corrected: significant means p < alpha / number of tests.

--format text (default; coloured on a terminal unless NO_COLOR is set),
json (one object; docs/diff-stats-report-render.md lists its fields),
markdown (a summary line and tables, for a pull-request comment) or html
(one self-contained page: the overlay drawn as SVG and a table per kind
of change; it loads nothing from the network). --dot FILE also writes a Graphviz
overlay of both models: added in green, removed in red and dashed, changed
shares in orange as "old% -> new%", the rest grey.

When OLD is a design (a model from fsmine import) and NEW a mined model,
--format text and json hold the design against what the sessions did, move
by move, a move being the label of the state left, the event and the label
of the state entered: the designed moves no session took, and the moves
sessions took that the design lacks, with counts and example sessions
(those NEW keeps: build --examples). The design goes first, the output is
text or json, and there is no --dot: report NEW --design OLD draws both.

Exit status, as diff(1): 0 no differences; 1 differences; 2 trouble (an
unreadable file, a file that is not a model or has a newer schema, bad
flags).`,
		Example: `  fsmine diff model-v3.json model-v4.json
  fsmine diff design.json mined.json
  fsmine diff --format markdown --dot diff.dot old.json new.json
  fsmine diff --format html old.json new.json > diff.html`,
		RunE: func(c *cobra.Command, args []string) error {
			if opts.by != "" {
				if len(args) == 0 {
					return usagef("diff --by needs at least one LOG")
				}
				opts.logs = args
				return runDiffBy(c.Context(), opts, streams)
			}
			if len(args) != 2 {
				return usagef("diff needs two model files, OLD and NEW; got %d argument(s)", len(args))
			}
			opts.oldPath, opts.newPath = args[0], args[1]
			return runDiff(c.Context(), opts, streams)
		},
	}
	f := c.Flags()
	bindMapFlag(f, &opts.mapValue)
	f.StringVar(&opts.format, "format", "text", "output format: text, json, markdown or html")
	bindLayoutTimeout(f, &opts.layoutTimeout)
	f.StringVar(&opts.dot, "dot", "", "also write a Graphviz DOT overlay of both models to `FILE`")
	f.Float64Var(&opts.alpha, "alpha", automaton.DefaultAlpha, "family-wise significance level of the share and outflow tests, in (0, 1)")
	f.StringVar(&opts.by, "by", "", "mine one model per value of the record field `PATH` (e.g. attrs.prompt_version) from the LOGs and diff them in value order; an outcome (attrs.reward>=1) diffs the map of the sessions that succeeded with the map of those that failed")
	f.StringVar(&opts.labels, "labels", "", "with --by: label rules `FILE`")
	f.StringArrayVar(&opts.fields, "field", nil, "with --by: read a record field from another path, `NAME=PATH` (repeatable)")
	f.StringVar(&opts.from, "from", mine.FormatAuto, "with --by: input format: "+strings.Join(mine.Formats(), ", "))
	f.StringVar(&opts.generalize, "generalize", mine.GeneralizeNone, "with --by: generalisation of the models (none compares what the sessions did)")
	f.IntVar(&opts.support, "constraint-support", mine.MinConstraintSupport, "with --by and a generalisation: learn a constraint only where at least `N` sessions show it")
	opts.imports.bind(f)
	return c
}

func runDiff(_ context.Context, opts *diffOptions, streams IO) error {
	if err := opts.checkReport(); err != nil {
		return err
	}
	if opts.dot == "-" {
		return usagef("--dot needs a file name: the report goes to stdout")
	}
	if err := checkOutputs([]string{opts.oldPath, opts.newPath}, [][2]string{{"--dot", opts.dot}}); err != nil {
		return err
	}
	old, err := loadDiffModel(opts.oldPath)
	if err != nil {
		return err
	}
	new, err := loadDiffModel(opts.newPath)
	if err != nil {
		return err
	}
	if old, err = pickMap(old, opts.oldPath, opts.mapValue, streams.Err); err != nil {
		return err
	}
	if new, err = pickMap(new, opts.newPath, opts.mapValue, streams.Err); err != nil {
		return err
	}
	switch {
	case old.Params.Design == "" && new.Params.Design != "":
		return usagef("%s is a design and %s a mined model: give the design first (fsmine diff %s %s)",
			opts.newPath, opts.oldPath, opts.newPath, opts.oldPath)
	case old.Params.Design != "" && new.Params.Design == "":
		if opts.format != "text" && opts.format != "json" {
			return usagef("a design held against a mined model is written as text or json, not %s; fsmine report %s --design %s draws both", opts.format, opts.newPath, opts.oldPath)
		}
		if opts.dot != "" {
			return usagef("--dot: a design held against a mined model has no overlay; fsmine report %s --design %s draws both", opts.newPath, opts.oldPath)
		}
		return writeDesignDiff(old, new, opts, streams)
	}
	return writeDiff(old, new, opts, streams)
}

// writeDesignDiff holds the designed model old against the mined model new,
// move by move (automaton.CompareDesign): the designed moves no session
// took and the moves sessions took that the design lacks.
func writeDesignDiff(old, new *automaton.Model, opts *diffOptions, streams IO) error {
	d := automaton.CompareDesign(old, new)
	if opts.format == "json" {
		b, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(streams.Out, "%s\n", b); err != nil {
			return err
		}
	} else {
		o := render.DiffTextOptions{OldFile: opts.oldPath, NewFile: opts.newPath, Escape: text.Terminal}
		if err := render.DesignDiffText(streams.Out, d, old.Params.Design, new.Source.Sessions, o); err != nil {
			return err
		}
	}
	if !d.Empty() {
		return errFound
	}
	return nil
}

// writeDiff compares old and new and writes the report as opts say.
func writeDiff(old, new *automaton.Model, opts *diffOptions, streams IO) error {
	d := automaton.Compare(old, new, automaton.DiffOptions{Alpha: opts.alpha})
	var err error
	if opts.dot != "" {
		err := atomicfile.Write(opts.dot, func(w io.Writer) error { return render.DiffDOT(w, old, new, d) })
		if err != nil {
			return fmt.Errorf("writing %s: %w", opts.dot, err)
		}
	}
	o := render.DiffTextOptions{OldFile: opts.oldPath, NewFile: opts.newPath}
	switch opts.format {
	case "json":
		err = render.DiffJSON(streams.Out, d, o)
	case "markdown":
		err = render.DiffMarkdown(streams.Out, d, o)
	case "html":
		err = render.DiffReport(streams.Out, old, new, d, render.DiffReportOptions{OldFile: opts.oldPath, NewFile: opts.newPath, Timeout: opts.layoutTimeout})
	default:
		// DiffText escapes each name (text.Cell); what else a line holds
		// is escaped for the terminal line by line, under the colours.
		o.Color, o.Escape = streams.IsTTY && os.Getenv("NO_COLOR") == "", text.Line
		err = render.DiffText(streams.Out, d, o)
	}
	if err != nil {
		return err
	}
	if !d.Empty() {
		return errFound
	}
	return nil
}

// checkReport checks the flags of the report: its format and the tests'
// level.
func (opts *diffOptions) checkReport() error {
	switch opts.format {
	case "text", "json", "markdown", "html":
	default:
		return usagef("unknown --format %q: want text, json, markdown or html", opts.format)
	}
	if !(opts.alpha > 0 && opts.alpha < 1) {
		return usagef("--alpha must be between 0 and 1, got %v", opts.alpha)
	}
	return checkLayoutTimeout(opts.layoutTimeout)
}

// loadDiffModel reads a model file; every error names the file.
func loadDiffModel(path string) (*automaton.Model, error) {
	m, err := automaton.Load(path)
	if errors.Is(err, automaton.ErrNewerSchema) {
		return nil, fmt.Errorf("%w; a newer fsmine wrote it", err)
	}
	return m, err
}

// runDiffBy mines one model per value of the field opts.by from the logs and
// diffs the models of consecutive values, in value order: which prompt or
// model version takes which path.
func runDiffBy(_ context.Context, opts *diffOptions, streams IO) error {
	if err := opts.checkReport(); err != nil {
		return err
	}
	if !slices.Contains(mine.Generalizes, opts.generalize) {
		return usagef("--generalize %q: want one of %s", opts.generalize, strings.Join(mine.Generalizes, ", "))
	}
	if opts.support < 1 || opts.support > maxSupport {
		return usagef("--constraint-support %d: want 1 to %d", opts.support, maxSupport)
	}
	ropt, err := newReadOptions(opts.from, opts.fields, opts.labels, false, &opts.imports)
	if err != nil {
		return err
	}
	for _, a := range opts.logs {
		if a == "-" {
			return usagef("diff --by reads the logs twice: give files, not standard input")
		}
	}
	if err := checkOutputs(append([]string{opts.labels}, opts.logs...), [][2]string{{"--dot", opts.dot}}); err != nil {
		return err
	}
	inputs, err := expandInputs(opts.logs, streams.In, opts.from)
	if err != nil {
		return err
	}
	what := strings.Join(opts.logs, ", ")
	lg, err := mine.Read(inputs, ropt)
	if err != nil {
		return err
	}
	if lg.NumSessions() == 0 {
		return noSessionsError(what, lg)
	}
	var vals map[string]string
	outcome := strings.ContainsAny(opts.by, "=<>!")
	if outcome {
		// An outcome: the map of the sessions that succeeded against the
		// map of those that failed.
		o, err := mine.ParseOutcome(opts.by)
		if err != nil {
			return err
		}
		outs, err := mine.SessionOutcomes(inputs, ropt, o)
		if err != nil {
			return err
		}
		vals = mine.OutcomeValues(outs)
	} else if vals, err = mine.SessionValues(inputs, ropt, opts.by); err != nil {
		return err
	}
	bopt := mine.DefaultOptions()
	bopt.Generalize, bopt.ConstraintSupport = opts.generalize, opts.support
	g, err := mine.BuildEach(lg, bopt, vals)
	if err != nil {
		return fmt.Errorf("--by %s: %w", opts.by, err)
	}
	values, models := g.Values, g.Models
	if outcome {
		slices.Reverse(values) // succeeded, then failed
		slices.Reverse(models)
	}
	if len(values) < 2 {
		return fmt.Errorf("%s: --by %s: %d value(s) among the sessions (%d without the field); a diff needs two", what, opts.by, len(values), g.Missing)
	}
	if len(values) > 2 && (opts.format == "html" || opts.dot != "") {
		return usagef("--by %s has %d values: --format html and --dot draw one pair; choose the sessions of two", opts.by, len(values))
	}
	if g.Missing > 0 {
		fmt.Fprintf(streams.Err, "%d of %d sessions have no %s and are left out\n", g.Missing, lg.NumSessions(), opts.by)
	}
	if lg.Emptied > 0 {
		fmt.Fprintf(streams.Err, "%s with every record dropped by the label rules, left out\n", text.Count(lg.Emptied, "more session"))
	}
	found := false
	// More than one pair in JSON is an array of their objects: one JSON
	// value, as a reader of the output takes it.
	array := len(values) > 2 && opts.format == "json"
	if array {
		fmt.Fprint(streams.Out, "[\n")
	}
	for i := 0; i+1 < len(values); i++ {
		if array && i > 0 {
			fmt.Fprint(streams.Out, ",\n")
		}
		o := *opts
		o.oldPath, o.newPath = opts.by+"="+values[i], opts.by+"="+values[i+1]
		if outcome {
			o.oldPath, o.newPath = values[i]+" ("+opts.by+")", values[i+1]+" ("+opts.by+")"
		}
		if len(values) > 2 && opts.format == "text" {
			fmt.Fprintf(streams.Out, "== %s -> %s (%d -> %d sessions)\n", text.Cell(o.oldPath), text.Cell(o.newPath), models[i].Source.Sessions, models[i+1].Source.Sessions)
		}
		switch err := writeDiff(models[i], models[i+1], &o, streams); {
		case errors.Is(err, errFound):
			found = true
		case err != nil:
			return err
		}
	}
	if array {
		fmt.Fprint(streams.Out, "]\n")
	}
	if found {
		return errFound
	}
	return nil
}
