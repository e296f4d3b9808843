package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/atomicfile"
	"github.com/fsmine/fsmine/internal/text"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/render"
)

func init() { register(newBuildCmd) }

type buildOptions struct {
	inputs  []string
	input   inputFlags
	partial string
	window  int
	// evidence writes the sessions' evidence beside the model; update
	// mines from a model's evidence and new logs.
	evidence bool
	update   string
	// changed says whether a flag was given (nil in tests that call
	// runBuild directly: none was).
	changed func(name string) bool
	model   modelOptions
}

// importFlags say how the importers read event logs (XES, CSV): shared by
// build and the commands that read logs for a model (check, replay,
// stats).
type importFlags struct {
	sort       string
	lifecycle  string
	classifier string
	keepSpans  bool
	seen       bool
}

// bindForModel binds the flags for a command that reads logs for a
// model, which reads them with the model's params.import by default.
func (f *importFlags) bindForModel(fs *pflag.FlagSet) {
	fs.StringVar(&f.sort, "sort", "", "order of a case's XES and CSV events: time or file (default: the model's, else time)")
	fs.StringVar(&f.lifecycle, "lifecycle", "", "keep the XES and CSV events of one lifecycle:transition: complete, start, or all (default: the model's, else all)")
	fs.StringVar(&f.classifier, "classifier", "", "make an XES event's node from the keys of the log's classifier `NAME` (default: the model's, else the activity)")
	fs.BoolVar(&f.seen, "seen", false, "tau: write the text each message brings into the session as attrs.seen (on by itself for a model with argument rules)")
	fs.BoolVar(&f.keepSpans, "keep-spans", false, "make every span of a trace a step (default: the model's, else off)")
}

func (f *importFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.sort, "sort", mine.SortTime, "order of a case's XES and CSV events: time (as pm4py orders them: by time, events without one last, ties in file order) or file")
	fs.StringVar(&f.lifecycle, "lifecycle", mine.LifecycleAll, "keep the XES and CSV events of one lifecycle:transition: complete, start, or all (events without one are always kept)")
	fs.StringVar(&f.classifier, "classifier", "", "make an XES event's node from the keys of the log's classifier `NAME` (default: the activity, concept:name)")
	fs.BoolVar(&f.seen, "seen", false, "tau: write the text each message brings into the session (the user's words, a tool's answer) as attrs.seen, the sources of argument rules (see build --args)")
	fs.BoolVar(&f.keepSpans, "keep-spans", false, "make every span of a trace (Langfuse, LangSmith, Phoenix, OTLP, OpenAI Agents) a step: by default the LLM calls inside an agent, tool or graph node and the wrapper spans around steps are left out")
}

// inputFlags say how logs are read, for the commands that read them without
// a model (build, eval, labels suggest).
type inputFlags struct {
	labels  string
	fields  []string
	strict  bool
	from    string
	imports importFlags
}

// bind binds the flags; withLabels adds --labels.
func (in *inputFlags) bind(f *pflag.FlagSet, withLabels bool) {
	if withLabels {
		f.StringVar(&in.labels, "labels", "", "label rules `FILE` (JSON; see docs/labels.md)")
	}
	f.StringArrayVar(&in.fields, "field", nil, "read a record field from another path, `NAME=PATH` (repeatable), e.g. session_id=conversation_id")
	f.BoolVar(&in.strict, "strict", false, "fail on the first bad line instead of skipping and counting it")
	f.StringVar(&in.from, "from", mine.FormatAuto, "input format: "+strings.Join(mine.Formats(), ", ")+" (auto recognises each file's format from its content)")
	in.imports.bind(f)
}

// readOptions checks the flags and returns them as mine's read options.
func (in *inputFlags) readOptions() (mine.ReadOptions, error) {
	return newReadOptions(in.from, in.fields, in.labels, in.strict, &in.imports)
}

// newReadOptions checks the input flags of the commands that read logs
// without a model (build, eval, labels suggest, diff --by) and returns them
// as mine's read options: the format, the field map, the import options and
// the label rules of the file labels names ("" for none).
func newReadOptions(from string, fields []string, labels string, strict bool, imports *importFlags) (mine.ReadOptions, error) {
	ropt := mine.ReadOptions{Strict: strict, Format: from}
	if !slices.Contains(mine.Formats(), from) {
		return ropt, usagef("--from %q: want one of %s", from, strings.Join(mine.Formats(), ", "))
	}
	var err error
	if ropt.Fields, err = mine.ParseFieldMap(fields); err != nil {
		return ropt, usageError{err}
	}
	if ropt.Import, err = imports.options(); err != nil {
		return ropt, err
	}
	if labels != "" {
		data, err := os.ReadFile(labels)
		if err != nil {
			return ropt, err
		}
		if ropt.Rules, err = mine.ParseRules(data); err != nil {
			return ropt, fmt.Errorf("%s: %w", labels, err)
		}
	}
	return ropt, nil
}

// optionsOver returns the options of the flags given (changed; nil: none)
// over those p, a model's params.import, records: the logs read as the
// model's were but for what the flags say.
func (f *importFlags) optionsOver(p *automaton.Import, changed func(string) bool) (mine.ImportOptions, error) {
	given := func(name string) bool { return changed != nil && changed(name) }
	o := mine.WithImportParams(mine.ImportOptions{Seen: f.seen}, p)
	if given("sort") {
		o.Sort = f.sort
	}
	if given("lifecycle") {
		o.Lifecycle = f.lifecycle
	}
	if given("classifier") {
		o.Classifier = f.classifier
	}
	if given("keep-spans") {
		o.KeepSpans = f.keepSpans
	}
	if err := o.Check(); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

// options checks the flags and returns them as mine's import options.
func (f *importFlags) options() (mine.ImportOptions, error) {
	return f.optionsOver(nil, func(string) bool { return true })
}

// modelOptions are the flags that shape and write a model, shared by build
// and merge.
type modelOptions struct {
	out                   string
	dot                   string
	detail                string // of the --dot diagram
	merge                 string
	alpha                 float64
	priorMove, priorState float64
	rareCount             int
	rareRatio             float64
	general               string
	support               int // --constraint-support
	examples              int
	link                  string
	version               int
	parent                string
	quiet                 bool
	// slots records each state's fields (build --slots): recordFields
	// finds them in the model mined from a log.
	slots        bool
	recordFields func(*mine.Log, *automaton.Model) (*mine.FieldReport, error)
	// outcome is build --outcome's expression; tallyOutcomes counts the
	// sessions by it in the model mined from a log.
	outcome       string
	tallyOutcomes func(*mine.Log, *automaton.Model) (*mine.OutcomeTally, error)
	// args learns argument rules (build --args): learnArgs finds them in
	// the logs again.
	args      bool
	learnArgs func() ([]automaton.ArgRule, error)
	// beforeWrite, when not nil, is called with the finished model just
	// before it is written, and the batch the outputs are written in
	// (build --evidence writes the evidence there).
	beforeWrite func(*automaton.Model, *atomicfile.Batch) error
	// by is build --by's field, byMin --by-min and byMode --by-mode;
	// byValues reads each session's value of the field.
	by       string
	byMin    int
	byMode   string
	byValues func() (map[string]string, error)

	parentModel *automaton.Model // loaded by prepare
}

// prepare checks the options and loads the parent model, so that a bad flag
// fails before a long read.
func (o *modelOptions) prepare() error {
	if !slices.Contains(mine.Merges, o.merge) {
		return usagef("--merge %q: want one of %s", o.merge, strings.Join(mine.Merges, ", "))
	}
	if !slices.Contains(mine.Generalizes, o.general) {
		return usagef("--generalize %q: want one of %s", o.general, strings.Join(mine.Generalizes, ", "))
	}
	if o.merge == mine.MergeAlergia && !(o.alpha > 0 && o.alpha < 1) {
		return usagef("--alpha %v: want a number between 0 and 1", o.alpha)
	}
	if o.merge == mine.MergeBayes {
		opt := mine.DefaultOptions()
		opt.BayesMovePrior, opt.BayesStatePrior = o.priorMove, o.priorState
		if err := opt.CheckBayesPriors(); err != nil {
			return usagef("%v", err)
		}
	}
	if o.rareCount < 0 || !(o.rareRatio >= 0 && o.rareRatio < 1) {
		return usagef("--rare-count must be >= 0 and --rare-ratio in [0, 1)")
	}
	if o.version < 0 {
		return usagef("--version %d: want 1 or more (0: the default)", o.version)
	}
	if _, err := detailOf(o.detail); err != nil {
		return err
	}
	if o.examples < 0 || o.examples > mine.MaxExamples {
		return usagef("--examples %d: want 0 to %d", o.examples, mine.MaxExamples)
	}
	if o.support < 1 || o.support > maxSupport {
		return usagef("--constraint-support %d: want 1 to %d", o.support, maxSupport)
	}
	if o.link != "" && !validLink(o.link) {
		return usagef("--link %q: want an http or https URL with {session} where the session id goes, e.g. https://cloud.langfuse.com/project/P/traces/{session}", o.link)
	}
	if o.parent != "" {
		m, err := automaton.Load(o.parent)
		if err != nil {
			return err
		}
		if m.Version == math.MaxInt {
			return fmt.Errorf("--parent %s has version %d, the last there is: no version comes after it", o.parent, m.Version)
		}
		if o.version != 0 && o.version <= m.Version {
			return usagef("--version %d: the parent %s is version %d, and a model comes after its parent: give more, or leave --version out for %d", o.version, o.parent, m.Version, m.Version+1)
		}
		o.parentModel = m
	}
	return nil
}

// idle refuses a flag given (given: nil, none was) where the other options
// leave it nothing to do: the build would take it, store nothing of it and
// mine as without it, and whoever gave it would think it had counted.
// Called once the options are final (an updated model's inherited).
func (o *modelOptions) idle(given func(string) bool) error {
	if given == nil {
		return nil
	}
	switch {
	case given("alpha") && o.merge != mine.MergeAlergia:
		return usagef("--alpha is the alergia merge's significance level: not with --merge %s", o.merge)
	case (given("prior-move") || given("prior-state")) && o.merge != mine.MergeBayes:
		return usagef("--prior-move and --prior-state are the bayes merge's: not with --merge %s", o.merge)
	case given("constraint-support") && o.general == mine.GeneralizeNone:
		return usagef("--constraint-support: --generalize none learns no constraints")
	case (given("by-min") || given("by-mode")) && o.by == "":
		return usagef("--by-min and --by-mode shape the sub-maps of --by FIELD: give --by")
	case given("detail") && o.dot == "":
		return usagef("--detail says what the --dot diagram draws: give --dot FILE")
	}
	return nil
}

// modelFlags are the flags of the model a build mines (bindModelFlags),
// which a partial result (build --partial) holds none of: fsmine merge
// takes them.
var modelFlags = []string{"output", "dot", "detail", "merge", "alpha", "prior-move", "prior-state", "rare-count",
	"rare-ratio", "generalize", "constraint-support", "examples", "link", "version", "parent"}

// outputs are the files the options write, as flag and path.
func (o *modelOptions) outputs() [][2]string {
	return [][2]string{{"--output", o.out}, {"--dot", o.dot}}
}

func bindModelFlags(f *pflag.FlagSet, opts *modelOptions) {
	def := mine.DefaultOptions()
	f.StringVarP(&opts.out, "output", "o", "-", "write the model JSON to `FILE` (atomically); - is standard output")
	f.StringVar(&opts.dot, "dot", "", "also write a Graphviz diagram to `FILE`")
	f.StringVar(&opts.detail, "detail", string(render.DetailSummary), "the --dot diagram: summary (stages, the trunk and the busiest edges) or full (every state and transition)")
	f.StringVar(&opts.merge, "merge", def.Merge, "state merging: "+strings.Join(mine.Merges, " or "))
	f.Float64Var(&opts.alpha, "alpha", def.Alpha, "significance level of the alergia merge test (smaller merges more)")
	f.Float64Var(&opts.priorMove, "prior-move", def.BayesMovePrior, "bayes merge: what a transition costs, in ln(moves)/2 (higher merges more)")
	f.Float64Var(&opts.priorState, "prior-state", def.BayesStatePrior, "bayes merge: what a state costs, in ln(moves)/2 (higher merges more)")
	f.IntVar(&opts.rareCount, "rare-count", def.RareCount, "flag transitions taken fewer than `N` times as rare (0: off)")
	f.Float64Var(&opts.rareRatio, "rare-ratio", def.RareRatio, "flag transitions below this share of their source's outflow as rare (0: off)")
	f.StringVar(&opts.general, "generalize", def.Generalize, "generalise beyond the sessions' paths where the log supports it: "+strings.Join(mine.Generalizes, " or ")+" (any-order: any order of the stages, only the learned constraints and run caps deciding; loose: any-order less the moves the log argues against)")
	f.IntVar(&opts.support, "constraint-support", mine.MinConstraintSupport, "learn a constraint over whole sessions (generalize auto, constraints, loose, any-order) only where at least `N` sessions show it")
	f.IntVar(&opts.examples, "examples", def.Examples, fmt.Sprintf("keep up to `N` example session ids per state and per transition (0: none; at most %d)", mine.MaxExamples))
	f.StringVar(&opts.link, "link", "", "URL `TEMPLATE` of a session in the tool that wrote the logs, {session} standing for its id: report, replay and stats link the examples")
	f.IntVar(&opts.version, "version", 0, "model version `N` (default 1, or the parent's + 1; above the parent's)")
	f.StringVar(&opts.parent, "parent", "", "the previous model `FILE`: records lineage, version defaults to its + 1")
	f.BoolVarP(&opts.quiet, "quiet", "q", false, "no summary on standard error")
}

func newBuildCmd(streams IO) *cobra.Command {
	opts := &buildOptions{}
	c := &cobra.Command{
		Use:   "build [flags] LOG...",
		Short: "Mine a versioned automaton from trajectory logs",
		Long: `Build reads trajectory records (JSONL, one step a line; gzip read transparently;
"-" is standard input; globs are expanded), labels them with task stages,
merges the sessions into a compact deterministic automaton and writes it as
JSON (schema fsmine.automaton/v1). A summary goes to standard error.

--outcome EXPR tests every session's outcome, such as attrs.reward>=1,
attrs.termination=user_stop or attrs.status!=error (= != < <= > >=; numbers
compare with numbers, true and false with booleans, anything else with
strings), on the first of its records that carries the field, and stores
per state and per transition the sessions through it and how many of them
succeeded; sessions without the field are counted apart. stats and report
then show where sessions fail. A model built without it is unchanged.

--by FIELD, such as attrs.task_id, also makes a sub-map for each value of
the field that --by-min sessions carry: with --by-mode paths, mined from
those sessions alone; with --by-mode stages, the shared map of every
session restricted to the stages those sessions visit (a stage the value
never needs is denied, any order the shared map takes between its stages is
not). check, replay and the guard judge a session by its value's map, and
by the shared map when its value has none (see docs/build.md).

--generalize any-order is the permissive end: every stage may follow every
stage, and only what the log shows over whole sessions decides (a stage's
prerequisites, once-only stages, run caps, the stages sessions start with,
the outcomes each stage ends with). It accepts the most unseen sessions and
rejects the fewest wrong ones; compare with eval before guarding with it.
--generalize loose is any-order less the moves the log argues against: a
stage never followed by another in so many visits that chance alone would
do so less than 5% of the time, while other stages often lead to it, keeps
that gap.

Exit status: 0 ok; 2 trouble (bad flags, unreadable input, an outcome
expression that does not parse, names a field no record has or compares a
string with a number, a --by field no session has, a value with a control
character or an unknown --by-mode, or with --strict any bad line).`,
		Example: `  fsmine build logs/*.jsonl -o v4.json --dot v4.dot
  fsmine build --labels rules.json --parent v3.json logs/today.jsonl.gz -o v4.json
  fsmine build --field session_id=conversation_id --field node=tool.name - < log.jsonl
  fsmine build --by attrs.task_id logs/*.jsonl -o v4.json`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("build needs at least one LOG (a file, a glob, or - for standard input)")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.inputs = args
			opts.changed = c.Flags().Changed
			return runBuild(c.Context(), opts, streams)
		},
	}
	f := c.Flags()
	bindModelFlags(f, &opts.model)
	c.MarkFlagFilename("labels", "json")
	c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"jsonl", "gz", "json", "xes", "csv"}, cobra.ShellCompDirectiveFilterFileExt
	}
	opts.input.bind(f, true)
	f.BoolVar(&opts.evidence, "evidence", false, "also write the sessions the model is mined from beside the model, to its path + "+evidenceExt+", for build --update")
	f.StringVar(&opts.update, "update", "", "mine from the evidence of model `FILE` (FILE"+evidenceExt+") and the new logs, without the old logs; the model is FILE's next version")
	f.StringVar(&opts.partial, "partial", "", "write this shard's partial result to `FILE` instead of a model (see fsmine merge)")
	f.IntVar(&opts.window, "window", mine.DefaultWindow, "records a session may sit idle before its path is tallied and its records let go; 0 holds every session to the end")
	f.BoolVar(&opts.model.args, "args", false, "learn rules for the arguments of tool calls (attrs.args): few stable values, or values that appeared earlier in the session (attrs.seen); reads the logs twice; see docs/model-file.md")
	f.BoolVar(&opts.model.slots, "slots", false, "record per state the record fields present on every visit that leaves it (reads the logs twice; see serve --check --suggest)")
	f.StringVar(&opts.model.by, "by", "", "also mine a sub-map per value of the record `FIELD` (such as attrs.task_id) that --by-min sessions carry; other values use the shared map of every session (reads the logs twice)")
	f.IntVar(&opts.model.byMin, "by-min", mine.DefaultByMin, "sessions a --by value needs for a sub-map of its own")
	f.StringVar(&opts.model.byMode, "by-mode", mine.DefaultByMode, byModeUsage)
	f.StringVar(&opts.model.outcome, "outcome", "", "count per state and transition the sessions through it and how many succeeded, by `EXPR`, a test of a record field such as attrs.reward>=1 or attrs.status!=error (reads the logs twice; see stats)")
	return c
}

func runBuild(ctx context.Context, opts *buildOptions, streams IO) error {
	ropt, err := opts.input.readOptions()
	if err != nil {
		return err
	}
	var old *mine.Log
	var oldFields *mine.FieldEvidence
	if opts.update != "" {
		if opts.partial != "" || opts.model.parent != "" {
			return usagef("--update: not with --partial or --parent (the updated model is the parent)")
		}
		opts.model.parent, opts.evidence = opts.update, true
	}
	if opts.evidence && (opts.model.out == "-" || opts.model.out == "" || opts.partial != "") {
		return usagef("--evidence and --update write beside the model: give -o FILE, and no --partial")
	}
	if opts.partial != "" && opts.changed != nil {
		for _, name := range modelFlags {
			if opts.changed(name) {
				return usagef("--partial writes the shard's sessions, not a model: give --%s to fsmine merge, which mines the model", name)
			}
		}
	}
	if opts.evidence && (opts.model.args || opts.model.by != "" || opts.model.outcome != "") {
		// The evidence holds each session's path, not its records: the
		// next version could learn none of these again.
		return usagef("--evidence and --update: not with --args, --by or --outcome, which read the records the evidence does not keep; build the next version from all the logs")
	}
	if err := opts.model.prepare(); err != nil {
		return err
	}
	if opts.update != "" {
		if what := recordsOnly(opts.model.parentModel); what != "" {
			return fmt.Errorf("--update %s: the model has %s, learned from the logs' records, which its evidence does not keep (the next version would lose them): build it from all the logs", opts.update, what)
		}
		if err := inheritModelFlags(&opts.model, opts.model.parentModel.Params, opts.changed); err != nil {
			return fmt.Errorf("--update %s: params: %w", opts.update, err)
		}
		if ropt.Import, err = opts.input.imports.optionsOver(opts.model.parentModel.Params.Import, opts.changed); err != nil {
			return err
		}
	}
	if err := opts.model.idle(opts.changed); err != nil {
		return err
	}
	if opts.update != "" {
		if opts.model.slots {
			if oldFields, err = readFieldEvidence(opts.update, opts.model.parentModel); err != nil {
				return err
			}
		}
		if old, err = readEvidence(opts.update, opts.model.parentModel, ropt); err != nil {
			return err
		}
	}
	inputs, err := expandInputs(opts.inputs, streams.In, opts.input.from)
	if err != nil {
		return err
	}
	read := []string{opts.input.labels, opts.model.parent}
	if opts.update != "" {
		read = append(read, opts.update+evidenceExt, opts.update+fieldsExt)
	}
	for _, in := range inputs {
		read = append(read, in.Name)
	}
	outputs := opts.model.outputs()
	if opts.partial != "" {
		// The partial result is written instead of the model and its
		// diagram: -o's default (-) does not compete for standard output.
		outputs = [][2]string{{"--partial", opts.partial}}
	}
	if opts.evidence {
		outputs = append(outputs, [2]string{"--evidence", opts.model.out + evidenceExt})
		if opts.model.slots {
			outputs = append(outputs, [2]string{"--evidence", opts.model.out + fieldsExt})
		}
	}
	if err := checkOutputs(read, outputs); err != nil {
		return err
	}
	outcome, err := opts.secondReads(inputs, &ropt)
	if err != nil {
		return err
	}
	// A model needs only the distinct paths; a partial result holds every
	// session, --slots walks each through the model and --by splits them.
	window := opts.window
	if opts.partial != "" || opts.evidence || opts.model.slots || outcome != nil || opts.model.by != "" {
		window = 0
	}
	if err := streamReads(&ropt, inputs, window, nil); err != nil {
		return err
	}
	var done func()
	ropt.Progress, done = startProgress(streams, opts.model.quiet)
	lg, err := mine.Read(inputs, ropt)
	done()
	if err != nil {
		return err
	}
	formats := lg.Format()
	if opts.update != "" {
		formats += "+" + opts.model.parentModel.Params.Format
	}
	if err := idleImports(opts.changed, formats); err != nil {
		return err
	}
	if opts.partial != "" {
		if err := writeOutput(opts.partial, streams.Out, lg.WritePartial); err != nil {
			return err
		}
		if !opts.model.quiet {
			fmt.Fprintf(streams.Err, "partial %s: sessions %d, records %d (skipped %d, duplicates %d, dropped %d%s)\n",
				opts.partial, len(lg.Sessions), lg.Records, lg.Skipped, lg.Duplicates, lg.Dropped, leftOutText(lg))
			if lg.Emptied > 0 {
				fmt.Fprintf(streams.Err, "  %s had every record dropped by the label rules, left out of the model\n", text.Count(lg.Emptied, "session"))
			}
			printWarnings(streams.Err, lg)
		}
		return nil
	}
	if old != nil {
		// Logs of formats the model was mined from: a build of the old logs
		// and these reads them alike (csv+jsonl takes new jsonl alone).
		if f, g := opts.model.parentModel.Params.Format, lg.Format(); lg.NumSessions() > 0 && !formatsWithin(g, f) {
			return fmt.Errorf("--update %s: the model was mined from %s logs, these are %s", opts.update, f, g)
		}
		// What the importers said of the new logs, read now, is said as a
		// build says it; the evidence's read said its own.
		warnings, warned := lg.Warnings, lg.Warned
		// The rules as given now: they label as the model's did (checked),
		// and may name or explain a rule anew.
		rules := lg.Rules
		if lg, err = mine.MergeLogs([]*mine.Log{old, lg}, []string{opts.update + evidenceExt, strings.Join(opts.inputs, ", ")}); err != nil {
			return fmt.Errorf("--update: %w", err)
		}
		lg.Warnings, lg.Warned, lg.Rules = warnings, warned, rules
	}
	opts.afterRead(lg, inputs, ropt, oldFields, outcome, streams)
	return buildModel(lg, strings.Join(opts.inputs, ", "), &opts.model, streams)
}

// secondReads checks the options that read the logs a second time (--args,
// --slots, --outcome, --by) and sets up those that mine calls back: each
// needs files it can read again, and no partial result.
func (opts *buildOptions) secondReads(inputs []mine.Input, ropt *mine.ReadOptions) (*mine.Outcome, error) {
	if opts.model.args {
		if opts.partial != "" || opts.update != "" || !twiceReadable(inputs) {
			return nil, usagef("--args reads the logs twice: give log files or folders (not standard input or a pipe), and no --partial or --update")
		}
		ropt.Import.Seen = true
		opts.model.learnArgs = func() ([]automaton.ArgRule, error) {
			sessions, err := mine.ReadArgSessions(inputs, *ropt)
			if err != nil {
				return nil, err
			}
			return mine.LearnArgs(sessions, mine.ArgOptions{}), nil
		}
	}
	if opts.model.slots && (opts.partial != "" || !twiceReadable(inputs)) {
		return nil, usagef("--slots reads the logs twice: give log files or folders (not standard input or a pipe), and no --partial")
	}
	var outcome *mine.Outcome
	if opts.model.outcome != "" {
		if opts.partial != "" || opts.update != "" || !twiceReadable(inputs) {
			return nil, usagef("--outcome reads the logs twice: give log files or folders (not standard input or a pipe), and no --partial or --update")
		}
		var err error
		if outcome, err = mine.ParseOutcome(opts.model.outcome); err != nil {
			return nil, err
		}
	}
	// Checked whether or not --by is given: a bad value is a mistake either way.
	if err := checkByMode(opts.model.byMode); err != nil {
		return nil, err
	}
	if opts.model.by != "" {
		if opts.partial != "" || opts.update != "" || opts.model.slots || outcome != nil || !twiceReadable(inputs) {
			return nil, usagef("--by reads the logs twice: give log files or folders (not standard input or a pipe), and no --partial, --update, --slots or --outcome")
		}
		if opts.model.byMin < 1 {
			return nil, usagef("--by-min %d: want 1 or more", opts.model.byMin)
		}
		opts.model.byValues = func() (map[string]string, error) {
			return mine.SessionValues(inputs, *ropt, opts.model.by)
		}
	}
	return outcome, nil
}

// afterRead sets up what mine calls back once lg is read: the record
// fields of --slots, the outcomes of --outcome, and the evidence files,
// written before the model (see mine.WriteEvidence).
func (opts *buildOptions) afterRead(lg *mine.Log, inputs []mine.Input, ropt mine.ReadOptions, oldFields *mine.FieldEvidence, outcome *mine.Outcome, streams IO) {
	var fields *mine.FieldEvidence
	if opts.model.slots {
		opts.model.recordFields = func(lg *mine.Log, m *automaton.Model) (rep *mine.FieldReport, err error) {
			rep, fields, err = mine.RecordFields(lg, m, inputs, ropt, mine.FieldOptions{Evidence: oldFields, Keep: opts.evidence})
			return rep, err
		}
	}
	if outcome != nil {
		opts.model.tallyOutcomes = func(lg *mine.Log, m *automaton.Model) (*mine.OutcomeTally, error) {
			outs, err := mine.SessionOutcomes(inputs, ropt, outcome)
			if err != nil {
				return nil, err
			}
			t := mine.TallyOutcomes(m, lg, outs, 0)
			t.Apply(m)
			return t, nil
		}
	}
	if opts.evidence {
		// The evidence first: see mine.WriteEvidence.
		opts.model.beforeWrite = func(m *automaton.Model, batch *atomicfile.Batch) error {
			ev := &automaton.Evidence{}
			err := writeOutputIn(batch, opts.model.out+evidenceExt, streams.Out, func(w io.Writer) (err error) {
				ev.Sessions, err = lg.WriteEvidence(w, m.Digest)
				return err
			})
			if err != nil {
				return err
			}
			if fields != nil {
				err := writeOutputIn(batch, opts.model.out+fieldsExt, streams.Out, func(w io.Writer) (err error) {
					ev.Fields, err = mine.WriteFieldEvidence(w, fields, m.Digest)
					return err
				})
				if err != nil {
					return err
				}
			}
			m.Evidence = ev
			return nil
		}
	}
}

// evidenceExt ends the name of the file that build --evidence writes beside
// a model: the sessions it was mined from, as a partial result (see
// fsmine merge), so that build --update can mine the next version from it
// and new logs alone.
const evidenceExt = ".evidence"

// fieldsExt ends the name of the file that build --slots --evidence writes
// beside a model: the record fields of every visit of its evidence, so that
// build --update finds them without the old logs.
const fieldsExt = ".fields"

// readFieldEvidence reads the fields evidence of model m, read from path.
func readFieldEvidence(path string, m *automaton.Model) (*mine.FieldEvidence, error) {
	ev := path + fieldsExt
	f, err := os.Open(ev)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("--update %s --slots: %s not found: build %s with --slots --evidence, or update without fields (--slots=false)", path, ev, path)
		}
		return nil, err
	}
	defer f.Close()
	fe, err := mine.ReadFieldEvidenceOf(f, ev, m)
	if err != nil {
		return nil, fmt.Errorf("--update %s: %w", path, err)
	}
	return fe, nil
}

// readEvidence reads the evidence of model m, read from path, checks that
// it is m's (mine.ReadEvidence) and that the new logs are read as it was:
// the same label rules and field map.
func readEvidence(path string, m *automaton.Model, ropt mine.ReadOptions) (*mine.Log, error) {
	ev := path + evidenceExt
	f, err := os.Open(ev)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("--update %s: %s not found: build %s with --evidence", path, ev, path)
		}
		return nil, err
	}
	defer f.Close()
	old, err := mine.ReadEvidence(f, ev, m)
	if err != nil {
		return nil, fmt.Errorf("--update %s: %w", path, err)
	}
	switch err := mine.UpdateCompatible(m, ropt); {
	case errors.Is(err, mine.ErrOtherLabels):
		return nil, fmt.Errorf("--update %s: %w (--labels)", path, err)
	case errors.Is(err, mine.ErrOtherFields):
		return nil, fmt.Errorf("--update %s: %w (--field)", path, err)
	}
	return old, nil
}

// buildModel mines lg and writes the model, its diagram and the summary as
// the model options say. what names the input in errors.
func buildModel(lg *mine.Log, what string, opts *modelOptions, streams IO) error {
	bopt := mine.DefaultOptions()
	bopt.Merge, bopt.Alpha, bopt.RareCount, bopt.RareRatio = opts.merge, opts.alpha, opts.rareCount, opts.rareRatio
	bopt.BayesMovePrior, bopt.BayesStatePrior = opts.priorMove, opts.priorState
	bopt.Generalize, bopt.Examples, bopt.ConstraintSupport = opts.general, opts.examples, opts.support
	parent := opts.parentModel
	var m *automaton.Model
	var err error
	if opts.byValues != nil {
		var vals map[string]string
		if vals, err = opts.byValues(); err != nil {
			return err
		}
		m, err = mine.BuildBy(lg, bopt, mine.ByOptions{Field: opts.by, MinSessions: opts.byMin, Mode: opts.byMode}, vals)
	} else {
		m, err = mine.Build(lg, bopt)
	}
	if err != nil {
		if errors.Is(err, mine.ErrNoSessions) {
			return noSessionsError(what, lg)
		}
		return err
	}
	var fields *mine.FieldReport
	if opts.recordFields != nil {
		if fields, err = opts.recordFields(lg, m); err != nil {
			return err
		}
	}
	var outcomes *mine.OutcomeTally
	if opts.tallyOutcomes != nil {
		if outcomes, err = opts.tallyOutcomes(lg, m); err != nil {
			return err
		}
	}
	m.Generator = "fsmine " + version
	m.Created = created()
	m.Params.Link = opts.link
	m.Version = 1
	if parent != nil {
		m.Parent = &automaton.Parent{Version: parent.Version, Digest: parent.Digest}
		m.Version = parent.Version + 1
	}
	if opts.version > 0 {
		m.Version = opts.version
	}
	if opts.learnArgs != nil {
		if m.Args, err = opts.learnArgs(); err != nil {
			return err
		}
		m.Digest = m.ComputeDigest()
	}
	if err := m.Validate(); err != nil {
		return err
	}
	// The outputs change together: an output that cannot be written leaves
	// every one as it was (the model's evidence, its diagram, the model).
	var batch atomicfile.Batch
	defer batch.Abort()
	if opts.beforeWrite != nil {
		if err := opts.beforeWrite(m, &batch); err != nil {
			return err
		}
	}
	if opts.dot != "" {
		detail, _ := detailOf(opts.detail) // checked by prepare
		err := writeOutputIn(&batch, opts.dot, streams.Out, func(w io.Writer) error {
			return render.DOT(w, m, render.Options{Detail: detail})
		})
		if err != nil {
			return err
		}
	}
	if err := writeOutputIn(&batch, opts.out, streams.Out, m.Write); err != nil {
		return err
	}
	if err := batch.Commit(); err != nil {
		return fmt.Errorf("writing the outputs: %w", err) // the error names the file
	}
	if !opts.quiet {
		printBuildSummary(streams.Err, lg, m)
		printBySummary(streams.Err, m)
		if fields != nil {
			printFieldsSummary(streams.Err, m, fields)
		}
		if outcomes != nil {
			printOutcomeSummary(streams.Err, outcomes)
		}
	}
	return nil
}

// printOutcomeSummary says how the sessions came out under build --outcome,
// plainly when they all came out the same.
func printOutcomeSummary(w io.Writer, t *mine.OutcomeTally) {
	o := t.Log
	fmt.Fprintf(w, "outcome %s: %d of %d sessions succeeded (%s)", t.Expr, o.Succeeded, o.Sessions, text.Percent(text.Share(o.Succeeded, o.Sessions)))
	if o.Unknown > 0 {
		fmt.Fprintf(w, ", %s without the field counted apart", text.Count(o.Unknown, "session"))
	}
	fmt.Fprintln(w)
	switch {
	case o.Sessions > 0 && o.Succeeded == o.Sessions:
		fmt.Fprintln(w, "every session with an outcome succeeded: there are no failures to place on the map")
	case o.Sessions > 0 && o.Succeeded == 0:
		fmt.Fprintln(w, "every session with an outcome failed: no state or move fails more than another")
	}
}

// printFieldsSummary says what build --slots found, and what it could not
// track.
func printFieldsSummary(w io.Writer, m *automaton.Model, rep *mine.FieldReport) {
	states := 0
	for _, s := range m.States {
		if len(s.Fields) > 0 {
			states++
		}
	}
	fmt.Fprintf(w, "fields: %s with fields; %s looked at, %s, %d of them on every record (left out)\n",
		text.Count(states, "state"), text.Count(rep.Leaving, "visit"), text.Count(rep.Paths, "distinct path"), rep.Everywhere)
	if rep.FirstUntracked != "" {
		fmt.Fprintf(w, "  more than %d distinct paths: tracked the %d first by name, up to %q; %q and after not tracked\n",
			mine.MaxFieldPaths, mine.MaxFieldPaths, rep.LastTracked, rep.FirstUntracked)
	}
	if rep.TooLong > 0 {
		fmt.Fprintf(w, "  %s longer than %d bytes not tracked\n", text.Count(rep.TooLong, "path occurrence"), mine.MaxFieldPath)
	}
	if rep.Unnamed > 0 {
		fmt.Fprintf(w, "  %s with an empty name not tracked\n", text.Count(rep.Unnamed, "field"))
	}
	if rep.Unreadable > 0 {
		fmt.Fprintf(w, "  %s whose JSON could not be walked, counted as carrying no field\n", text.Count(rep.Unreadable, "record"))
	}
	if rep.Unplaced > 0 {
		fmt.Fprintf(w, "  %s the model does not take from start to end, left out\n", text.Count(rep.Unplaced, "session"))
	}
}

// noSessionsError is the error of a read that gave no session: what was
// read, skipped and dropped, and the first items skipped with their files,
// positions and reasons, which say what to change.
func noSessionsError(what string, lg *mine.Log) error {
	var b strings.Builder
	emptied := ""
	if lg.Emptied > 0 {
		emptied = ", every record of " + text.Count(lg.Emptied, "session")
	}
	fmt.Fprintf(&b, "%d records read, %d skipped, %d dropped by label rules%s%s)", lg.Records, lg.Skipped, lg.Dropped, emptied, leftOutText(lg))
	if len(lg.Bad) > 0 {
		b.WriteString("; skipped:")
	}
	for _, bad := range lg.Bad {
		fmt.Fprintf(&b, "\n  %s", bad)
	}
	if lg.Skipped > len(lg.Bad) {
		fmt.Fprintf(&b, "\n  ... and %d more", lg.Skipped-len(lg.Bad))
	}
	return fmt.Errorf("%s: %w (%s", what, mine.ErrNoSessions, b.String())
}

// leftOutText is ", N left out by --lifecycle or span folding" when the
// importers left events out (by --lifecycle, or spans folded into steps
// without --keep-spans), else "".
func leftOutText(lg *mine.Log) string {
	if lg.LeftOut == 0 {
		return ""
	}
	return fmt.Sprintf(", %d left out by --lifecycle or span folding", lg.LeftOut)
}

// created is the model's creation time: now, or SOURCE_DATE_EPOCH when set,
// for reproducible builds.
func created() string {
	t := time.Now()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			t = time.Unix(n, 0)
		}
	}
	return t.UTC().Format(time.RFC3339)
}

// writeOutput writes to path atomically, or to stdout for "-".
func writeOutput(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "-" || path == "" {
		return write(stdout)
	}
	if err := atomicfile.Write(path, write); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// writeOutputIn writes to path in batch b, to be committed with the
// batch's other files, or to stdout for "-" at once.
func writeOutputIn(b *atomicfile.Batch, path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "-" || path == "" {
		return write(stdout)
	}
	if err := b.Write(path, write); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// streamReads sets ropt to read inputs streaming with the given window
// (--window) when it is above 0 and the inputs are files, which the read
// can open again should it start over; restart, when not nil, is called if
// it does. A read that holds every session, from the start or after
// starting over, has the collector tuned for memory.
func streamReads(ropt *mine.ReadOptions, inputs []mine.Input, window int, restart func()) error {
	if window < 0 {
		return usagef("--window %d: want 0 or more records", window)
	}
	if window == 0 || !rereadable(inputs) {
		tuneGC(inputs)
		return nil
	}
	ropt.Stream, ropt.Window = true, window
	ropt.Reread = func(string) {
		if restart != nil {
			restart()
		}
		tuneGC(inputs)
	}
	return nil
}

// rereadable says whether every input is a regular file, which a streaming
// read can open a second time.
func rereadable(inputs []mine.Input) bool {
	for _, in := range inputs {
		fi, err := os.Stat(in.Name)
		if in.Name == "-" || err != nil || !fi.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// twiceReadable says whether every input is a regular file or a folder,
// which can be opened and read again.
func twiceReadable(inputs []mine.Input) bool {
	for _, in := range inputs {
		fi, err := os.Stat(in.Name)
		if in.Name == "-" || err != nil || !(fi.Mode().IsRegular() || fi.IsDir()) {
			return false
		}
	}
	return true
}

// expandInputs turns LOG arguments into inputs: "-" is stdin, arguments with
// glob characters are expanded (a glob matching nothing is an error), a
// folder is an input when it is in a format that is a folder (a tau2
// experiment; format is --from), and files are read in sorted order so that
// the result does not depend on the order they were named in.
func expandInputs(args []string, stdin io.Reader, format string) ([]mine.Input, error) {
	var files []string
	stdinUsed := false
	for _, a := range args {
		if a == "-" {
			stdinUsed = true
			continue
		}
		files = append(files, a)
	}
	paths, err := expandPaths(files)
	if err != nil {
		return nil, err
	}
	var inputs []mine.Input
	if stdinUsed {
		inputs = append(inputs, mine.Input{Name: "-", Open: func() (io.ReadCloser, error) { return io.NopCloser(stdin), nil }})
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if fi.IsDir() {
			in, ok, err := mine.DirInput(p, format)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fmt.Errorf("%s: is a directory, and no tau2 experiment folder (results.json and simulations/): name the files, e.g. %s/*.jsonl", p, p)
			}
			inputs = append(inputs, in)
			continue
		}
		inputs = append(inputs, mine.Input{Name: p, Open: func() (io.ReadCloser, error) { return os.Open(p) }})
	}
	return inputs, nil
}

// expandPaths expands the glob patterns among args (a pattern matching
// nothing is an error), drops repeats and sorts the result. A file is
// known by its absolute path, so that how it is spelled (./b.jsonl,
// /logs/b.jsonl) changes neither the order the files are read in, which
// orders the records of a session without step or ts, nor whether it is
// a repeat; it keeps the name it was first given, for messages.
func expandPaths(args []string) ([]string, error) {
	type named struct{ key, path string }
	var paths []named
	seen := map[string]bool{}
	for _, a := range args {
		matches := []string{a}
		if strings.ContainsAny(a, "*?[") {
			var err error
			matches, err = filepath.Glob(a)
			if err != nil {
				return nil, usagef("bad pattern %q: %v", a, err)
			}
			if len(matches) == 0 {
				return nil, fmt.Errorf("%s: no file matches", a)
			}
		}
		for _, p := range matches {
			key, err := filepath.Abs(p)
			if err != nil {
				key = filepath.Clean(p)
			}
			if !seen[key] {
				seen[key] = true
				paths = append(paths, named{key, p})
			}
		}
	}
	slices.SortFunc(paths, func(a, b named) int { return strings.Compare(a.key, b.key) })
	sorted := make([]string, len(paths))
	for i, p := range paths {
		sorted[i] = p.path
	}
	return sorted, nil
}

func printBuildSummary(w io.Writer, lg *mine.Log, m *automaton.Model) {
	rare, back, general := 0, 0, 0
	for _, t := range m.Transitions {
		if t.Rare {
			rare++
		}
		if t.BackEdge {
			back++
		}
		if t.Generalized != "" {
			general++
		}
	}
	fmt.Fprintf(w, "sessions %d, events %d (records %d, skipped %d, duplicates %d, dropped %d, folded %d, detours %d, step gaps %d%s)\n",
		m.Source.Sessions, m.Source.Events, lg.Records, lg.Skipped, lg.Duplicates, lg.Dropped, lg.Folded, lg.Detours, lg.StepGaps, leftOutText(lg))
	for _, f := range lg.Files {
		fmt.Fprintf(w, "  %s: %s, %d records, %d skipped\n", f.Path, f.Format, f.Records, f.Skipped)
	}
	for _, b := range lg.Bad {
		fmt.Fprintf(w, "  skipped %s\n", b)
	}
	if lg.Emptied > 0 {
		fmt.Fprintf(w, "  %s had every record dropped by the label rules, left out of the model\n", text.Count(lg.Emptied, "session"))
	}
	if lg.Reread != "" {
		fmt.Fprintf(w, "  read twice, holding every session the second time: %s\n", lg.Reread)
	}
	if lg.Skipped > len(lg.Bad) {
		fmt.Fprintf(w, "  ... and %d more skipped lines\n", lg.Skipped-len(lg.Bad))
	}
	printWarnings(w, lg)
	fmt.Fprintf(w, "model v%d %s: %d states, %d transitions (%d rare, %s, %d generalised), %s, %s\n",
		m.Version, m.Digest, len(m.States), len(m.Transitions), rare, text.Count(back, "back edge"), general, text.Count(len(m.Loops), "loop"), text.Count(m.Variants, "variant"))
	fmt.Fprintf(w, "trunk: %s\n", text.Path(m.Trunk, " -> "))
}

// idleImports refuses an import flag given (given: nil, none was) that no
// log read has a use for (formats as mine.Log.Format lists them, "+"
// between): the model would record it, and partials read with and without
// it would not merge, for nothing.
func idleImports(given func(string) bool, formats string) error {
	if given == nil {
		return nil
	}
	read := strings.Split(formats, "+")
	has := func(fs ...string) bool {
		return slices.ContainsFunc(fs, func(f string) bool { return slices.Contains(read, f) })
	}
	for _, f := range []struct {
		flag    string
		formats []string
		what    string
	}{
		{"sort", []string{mine.FormatXES, mine.FormatCSV}, "XES or CSV"},
		{"lifecycle", []string{mine.FormatXES, mine.FormatCSV}, "XES or CSV"},
		{"classifier", []string{mine.FormatXES}, "XES"},
		{"keep-spans", []string{mine.FormatLangfuse, mine.FormatLangSmith, mine.FormatOpenAIAgents, mine.FormatOTLP, mine.FormatPhoenix}, "trace (Langfuse, LangSmith, OpenAI Agents, OTLP, Phoenix)"},
	} {
		if given(f.flag) && !has(f.formats...) {
			return fmt.Errorf("--%s reads %s logs, and none was read (%s): leave it out", f.flag, f.what, strings.Trim(formats, "+"))
		}
	}
	return nil
}

// formatsWithin says whether every format of the "+"-joined list g (as
// mine.Log.Format gives) is among those of f.
func formatsWithin(g, f string) bool {
	have := strings.Split(f, "+")
	for _, x := range strings.Split(g, "+") {
		if !slices.Contains(have, x) {
			return false
		}
	}
	return true
}

// recordsOnly names what model m holds that only the logs' records give
// (argument rules, sub-maps, outcome counts), which a model's evidence,
// the sessions' paths, cannot give again; "" when none.
func recordsOnly(m *automaton.Model) string {
	var what []string
	if len(m.Args) > 0 {
		what = append(what, "argument rules (--args)")
	}
	if m.By != nil {
		what = append(what, "sub-maps by "+text.Terminal(m.By.Field)+" (--by)")
	}
	if m.Params.Outcome != "" {
		what = append(what, "outcome counts (--outcome)")
	}
	return strings.Join(what, ", ")
}

// maxSupport bounds --constraint-support.
const maxSupport = 1_000_000

// inheritModelFlags gives the mining options not given on the command line
// the values the updated model was mined with, so that its next version is
// mined as it was. The error is a value of the model's that is out of
// range.
func inheritModelFlags(o *modelOptions, p automaton.Params, changed func(string) bool) error {
	given := func(name string) bool { return changed != nil && changed(name) }
	if !given("merge") && p.Merge != "" {
		o.merge = p.Merge
	}
	if !given("alpha") && p.Alpha > 0 {
		o.alpha = p.Alpha
	}
	if p.Merge == mine.MergeBayes {
		// The priors taken from the model are checked before any log is
		// read; those given as flags are checked as build's own.
		taken := mine.DefaultOptions()
		if !given("prior-move") {
			o.priorMove, taken.BayesMovePrior = p.PriorMove, p.PriorMove
		}
		if !given("prior-state") {
			o.priorState, taken.BayesStatePrior = p.PriorState, p.PriorState
		}
		if err := taken.CheckBayesPriors(); err != nil {
			return err
		}
	}
	if !given("rare-count") {
		o.rareCount = p.RareCount
	}
	if !given("rare-ratio") {
		o.rareRatio = p.RareRatio
	}
	if !given("generalize") {
		o.general = mine.GeneralizeNone
		if p.Generalize != "" {
			o.general = p.Generalize
		}
	}
	if !given("examples") {
		o.examples = p.Examples
	}
	if !given("constraint-support") {
		o.support = mine.MinConstraintSupport
		if p.ConstraintSupport != 0 {
			if p.ConstraintSupport < 1 || p.ConstraintSupport > maxSupport {
				return fmt.Errorf("params.constraint_support %d: want 1 to %d", p.ConstraintSupport, maxSupport)
			}
			o.support = p.ConstraintSupport
		}
	}
	if !given("link") {
		o.link = p.Link
	}
	if !given("slots") {
		o.slots = p.Slots
	}
	// What the model gave is checked as the flags are, before any log is
	// read (a flag given is checked already and passes again).
	switch {
	case !slices.Contains(mine.Merges, o.merge):
		return fmt.Errorf("merge %q: want one of %s", o.merge, strings.Join(mine.Merges, ", "))
	case o.merge == mine.MergeAlergia && !(o.alpha > 0 && o.alpha < 1):
		return fmt.Errorf("alpha %v: want a number between 0 and 1", o.alpha)
	case !slices.Contains(mine.Generalizes, o.general):
		return fmt.Errorf("generalize %q: want one of %s", o.general, strings.Join(mine.Generalizes, ", "))
	case o.rareCount < 0:
		return fmt.Errorf("rare_count %d: want 0 or more", o.rareCount)
	case !(o.rareRatio >= 0 && o.rareRatio < 1):
		return fmt.Errorf("rare_ratio %v: want 0 or more, below 1", o.rareRatio)
	case o.examples < 0 || o.examples > mine.MaxExamples:
		return fmt.Errorf("examples %d: want 0 to %d", o.examples, mine.MaxExamples)
	case o.link != "" && !validLink(o.link):
		return fmt.Errorf("link %q: want an http or https URL with {session} where the session id goes", o.link)
	}
	return nil
}

// validLink says whether link is an http or https URL with {session} in it
// (build --link).
func validLink(link string) bool {
	return strings.Contains(link, "{session}") && automaton.SessionURL(link, "s") != ""
}

// printBySummary says how build --by split the sessions; nothing for a
// model that is not conditioned.
func printBySummary(w io.Writer, m *automaton.Model) {
	b := m.By
	if b == nil {
		return
	}
	own := "of their own"
	switch b.Mode {
	case automaton.ByStages:
		own = "of their own stages"
	case automaton.ByMoves:
		own = "of their own moves"
	}
	fmt.Fprintf(w, "by %s: %s, %s %s (%d+ sessions each); %s on the shared map",
		b.Field, text.Count(b.Values, "value"), text.Count(len(b.Maps), "sub-map"), own, b.MinSessions, text.Count(b.Shared, "session"))
	if b.Unvalued > 0 {
		fmt.Fprintf(w, " (%d without a value)", b.Unvalued)
	}
	fmt.Fprintln(w)
}

// printWarnings lists what the importers said of how they read the logs
// (lg.Warnings), as the summary lists skipped lines.
func printWarnings(w io.Writer, lg *mine.Log) {
	for _, b := range lg.Warnings {
		fmt.Fprintf(w, "  warning %s\n", b)
	}
	if lg.Warned > len(lg.Warnings) {
		fmt.Fprintf(w, "  ... and %d more warnings\n", lg.Warned-len(lg.Warnings))
	}
}
