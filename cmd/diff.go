package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/render"
	"github.com/fsmine/fsmine/render/text"
)

func init() { register(newDiffCmd) }

type diffOptions struct {
	oldPath, newPath string
	format           string
	dot              string
	alpha            float64

	// --by: one model per value of a record field, from logs.
	by         string
	logs       []string
	labels     string
	fields     []string
	from       string
	imports    importFlags
	generalize string
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
json (one object; see README.md for its fields), markdown (a summary line
and tables, for a pull-request comment) or html (one self-contained page:
the overlay drawn as SVG and a table per kind of change; it loads nothing
from the network). --dot FILE also writes a Graphviz
overlay of both models: added in green, removed in red and dashed, changed
shares in orange as "old% -> new%", the rest grey.

Exit status, as diff(1): 0 no differences; 1 differences; 2 trouble (an
unreadable file, a file that is not a model or has a newer schema, bad
flags).`,
		Example: `  fsmine diff model-v3.json model-v4.json
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
	f.StringVar(&opts.format, "format", "text", "output format: text, json, markdown or html")
	f.StringVar(&opts.dot, "dot", "", "also write a Graphviz DOT overlay of both models to `FILE`")
	f.Float64Var(&opts.alpha, "alpha", automaton.DefaultAlpha, "family-wise significance level of the share and outflow tests, in (0, 1)")
	f.StringVar(&opts.by, "by", "", "mine one model per value of the record field `PATH` (e.g. attrs.prompt_version) from the LOGs and diff them in value order")
	f.StringVar(&opts.labels, "labels", "", "with --by: label rules `FILE`")
	f.StringArrayVar(&opts.fields, "field", nil, "with --by: read a record field from another path, `NAME=PATH` (repeatable)")
	f.StringVar(&opts.from, "from", mine.FormatAuto, "with --by: input format: "+strings.Join(mine.Formats(), ", "))
	f.StringVar(&opts.generalize, "generalize", mine.GeneralizeNone, "with --by: generalisation of the models (none compares what the sessions did)")
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
	old, err := loadDiffModel(opts.oldPath)
	if err != nil {
		return err
	}
	new, err := loadDiffModel(opts.newPath)
	if err != nil {
		return err
	}
	return writeDiff(old, new, opts, streams)
}

// writeDiff compares old and new and writes the report as opts say.
func writeDiff(old, new *automaton.Model, opts *diffOptions, streams IO) error {
	d := automaton.Compare(old, new, automaton.DiffOptions{Alpha: opts.alpha})
	var err error
	if opts.dot != "" {
		err := automaton.WriteFileAtomic(opts.dot, func(w io.Writer) error { return render.DiffDOT(w, old, new, d) })
		if err != nil {
			return fmt.Errorf("writing %s: %w", opts.dot, err)
		}
	}
	r := diffReport{oldPath: opts.oldPath, newPath: opts.newPath, d: d}
	switch opts.format {
	case "json":
		err = r.json(streams.Out)
	case "markdown":
		err = r.markdown(streams.Out)
	case "html":
		err = render.DiffReport(streams.Out, old, new, d, render.DiffReportOptions{OldFile: opts.oldPath, NewFile: opts.newPath})
	default:
		err = r.text(streams.Out, streams.IsTTY && os.Getenv("NO_COLOR") == "")
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
	return nil
}

// loadDiffModel reads a model file; every error names the file.
func loadDiffModel(path string) (*automaton.Model, error) {
	m, err := automaton.Load(path)
	if errors.Is(err, automaton.ErrNewerSchema) {
		return nil, fmt.Errorf("%w; a newer fsmine wrote it", err)
	}
	return m, err
}

type diffReport struct {
	oldPath, newPath string
	d                *automaton.Diff
}

// count is the number of differences: one per listed item, one for the trunk.
func (r diffReport) count() int { return r.d.Differences() }

// summary is "N differences: 1 state added, ..." or "no differences".
func (r diffReport) summary() string { return r.d.Summary() }

func (r diffReport) testsLine() string {
	d := r.d
	return fmt.Sprintf("tested at alpha %g (Bonferroni): %s (z-test, p < %.3g), %s (chi-square, p < %.3g)",
		d.Alpha, text.Count(d.TransitionTests, "shared transition"), d.TransitionThreshold,
		text.Count(d.StateTests, "state"), d.StateThreshold)
}

func diffEdge(from, event, to string) string {
	if event == "" {
		return from + " --> " + to
	}
	return from + " -[" + event + "]-> " + to
}

func diffRareWord(rare bool) string {
	if rare {
		return "rare"
	}
	return "common"
}

func diffLoopDetail(l automaton.LoopChange) string {
	switch l.Change {
	case automaton.LoopAppeared:
		return fmt.Sprintf("max %d, p95 %d", l.New.MaxIterations, l.New.P95Iterations)
	case automaton.LoopDisappeared:
		return fmt.Sprintf("was max %d, p95 %d", l.Old.MaxIterations, l.Old.P95Iterations)
	}
	its := fmt.Sprintf("max %d -> %d, p95 %d -> %d",
		l.Old.MaxIterations, l.New.MaxIterations, l.Old.P95Iterations, l.New.P95Iterations)
	if m := diffMembership(l, func(s string) string { return s }); m != "" {
		return m + "; " + its
	}
	return its
}

// diffMembership is "joined: a, b; left: c" for a reshaped loop, with
// each id passed through show.
func diffMembership(l automaton.LoopChange, show func(string) string) string {
	list := func(ids []string) string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = show(id)
		}
		return strings.Join(out, ", ")
	}
	var parts []string
	if len(l.Joined) > 0 {
		parts = append(parts, "joined: "+list(l.Joined))
	}
	if len(l.Left) > 0 {
		parts = append(parts, "left: "+list(l.Left))
	}
	return strings.Join(parts, "; ")
}

const (
	diffBold   = "\x1b[1m"
	diffRed    = "\x1b[31m"
	diffGreen  = "\x1b[32m"
	diffYellow = "\x1b[33m"
	diffReset  = "\x1b[0m"
)

// text writes the report for people: a header like diff -u's, a summary,
// then one section per kind of change, each line marked + (added), -
// (removed) or ~ (changed).
func (r diffReport) text(w io.Writer, color bool) error {
	var b strings.Builder
	paint := func(code, s string) string {
		s = termText(s) // names from the models: no escape sequence of theirs reaches the terminal
		if !color || code == "" {
			return s
		}
		return code + s + diffReset
	}
	line := func(code, format string, args ...any) {
		b.WriteString(paint(code, fmt.Sprintf(format, args...)) + "\n")
	}
	section := func(title string) { b.WriteString("\n" + paint(diffBold, title) + "\n") }
	d := r.d
	same := ""
	if d.SameDigest {
		same = "  (same digest)"
	}
	line(diffRed, "--- %s  v%d  %s  %d sessions", r.oldPath, d.Old.Version, text.ShortDigest(d.Old.Digest), d.Old.Sessions)
	line(diffGreen, "+++ %s  v%d  %s  %d sessions%s", r.newPath, d.New.Version, text.ShortDigest(d.New.Digest), d.New.Sessions, same)
	line(diffBold, "%s", r.summary())
	line("", "%s", r.testsLine())

	if len(d.StatesAdded)+len(d.StatesRemoved)+len(d.StatesRelabeled) > 0 {
		section("states")
		for _, s := range d.StatesAdded {
			line(diffGreen, "  + %s  (%d visits)", diffStateText(s), s.Visits)
		}
		for _, s := range d.StatesRemoved {
			line(diffRed, "  - %s  (%d visits)", diffStateText(s), s.Visits)
		}
		for _, s := range d.StatesRelabeled {
			line(diffYellow, "  ~ %s  label %q -> %q", s.ID, s.OldLabel, s.NewLabel)
		}
	}
	if len(d.TransitionsAdded)+len(d.TransitionsRemoved) > 0 {
		section("transitions")
		for _, t := range d.TransitionsAdded {
			line(diffGreen, "  + %s  %d (%s%s)", diffEdge(t.From, t.Event, t.To), t.Count, render.Percent(t.Share), diffRareNote(t.Rare, t.Generalized))
		}
		for _, t := range d.TransitionsRemoved {
			line(diffRed, "  - %s  %d (%s%s)", diffEdge(t.From, t.Event, t.To), t.Count, render.Percent(t.Share), diffRareNote(t.Rare, t.Generalized))
		}
	}
	if len(d.ShareChanges) > 0 {
		section(fmt.Sprintf("share changes  (two-proportion z-test, p < %.3g)", d.TransitionThreshold))
		for _, c := range d.ShareChanges {
			line(diffYellow, "  ~ %s  %s -> %s  (%d/%d -> %d/%d)  z=%+.2f  p=%.2g", diffEdge(c.From, c.Event, c.To),
				render.Percent(c.OldShare), render.Percent(c.NewShare), c.OldCount, c.OldOutflow, c.NewCount, c.NewOutflow, c.Z, c.P)
		}
	}
	if len(d.OutflowShifts) > 0 {
		section(fmt.Sprintf("outflow shifts  (chi-square, p < %.3g)", d.StateThreshold))
		for _, s := range d.OutflowShifts {
			line(diffYellow, "  ~ %s  chi2=%.2f  df=%d  p=%.2g  (outflow %d -> %d)", s.State, s.Chi2, s.DF, s.P, s.OldOutflow, s.NewOutflow)
		}
	}
	if len(d.RareFlips) > 0 {
		section("rare flips")
		for _, f := range d.RareFlips {
			line(diffYellow, "  ~ %s  %s -> %s  %s -> %s  (%d -> %d, p=%.2g)", diffEdge(f.From, f.Event, f.To),
				diffRareWord(f.OldRare), diffRareWord(f.NewRare), render.Percent(f.OldShare), render.Percent(f.NewShare), f.OldCount, f.NewCount, f.P)
		}
	}
	if len(d.GeneralizedFlips) > 0 {
		section("generalised flips")
		for _, f := range d.GeneralizedFlips {
			line(diffYellow, "  ~ %s  %s -> %s  (%d -> %d)", diffEdge(f.From, f.Event, f.To), diffGenWord(f.Old), diffGenWord(f.New), f.OldCount, f.NewCount)
		}
	}
	if len(d.Loops) > 0 {
		section("loops")
		for _, l := range d.Loops {
			mark, code := "~", diffYellow
			switch l.Change {
			case automaton.LoopAppeared:
				mark, code = "+", diffGreen
			case automaton.LoopDisappeared:
				mark, code = "-", diffRed
			}
			line(code, "  %s {%s} %s  %s", mark, strings.Join(l.States, ", "), l.Change, diffLoopDetail(l))
		}
	}
	if d.Trunk != nil {
		section("trunk")
		line(diffRed, "  - %s", strings.Join(d.Trunk.Old, " > "))
		line(diffGreen, "  + %s", strings.Join(d.Trunk.New, " > "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func diffStateText(s automaton.StateRef) string {
	if s.Label == s.ID || s.Label == "" {
		return s.ID
	}
	return fmt.Sprintf("%s (label %q)", s.ID, s.Label)
}

func diffRareNote(rare bool, generalized string) string {
	switch {
	case generalized != "":
		return ", generalised (" + generalized + ")"
	case rare:
		return ", rare"
	}
	return ""
}

// diffGenWord names a transition's origin in a generalised flip.
func diffGenWord(kind string) string {
	if kind == "" {
		return "taken"
	}
	return "generalised (" + kind + ")"
}

// diffJSON is the --format json object: the files as given, whether the
// models differ and how many differences, then every field of
// automaton.Diff.
type diffJSON struct {
	OldFile     string `json:"old_file"`
	NewFile     string `json:"new_file"`
	Empty       bool   `json:"empty"`
	Differences int    `json:"differences"`
	*automaton.Diff
}

func (r diffReport) json(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(diffJSON{r.oldPath, r.newPath, r.d.Empty(), r.count(), r.d})
}

// markdown writes the report as a pull-request comment: a heading, a
// summary line, the two versions, then a table per kind of change.
func (r diffReport) markdown(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	d := r.d
	p("### fsmine diff: %s (v%d) → %s (v%d)\n\n", diffMDCode(r.oldPath), d.Old.Version, diffMDCode(r.newPath), d.New.Version)
	if n := r.count(); n == 0 {
		p("**No differences.**\n\n")
	} else {
		s := r.summary()
		head, rest, _ := strings.Cut(s, ": ")
		p("**%s**: %s\n\n", head, rest)
	}
	p("| | version | digest | sessions |\n|---|---:|---|---:|\n")
	p("| old | %d | %s | %d |\n", d.Old.Version, diffMDCode(text.ShortDigest(d.Old.Digest)), d.Old.Sessions)
	p("| new | %d | %s | %d |\n", d.New.Version, diffMDCode(text.ShortDigest(d.New.Digest)), d.New.Sessions)

	if len(d.StatesAdded)+len(d.StatesRemoved)+len(d.StatesRelabeled) > 0 {
		p("\n#### States\n\n| change | state | label | visits |\n|---|---|---|---:|\n")
		for _, s := range d.StatesAdded {
			p("| added | %s | %s | %d |\n", diffMDCode(s.ID), diffMDText(s.Label), s.Visits)
		}
		for _, s := range d.StatesRemoved {
			p("| removed | %s | %s | %d |\n", diffMDCode(s.ID), diffMDText(s.Label), s.Visits)
		}
		for _, s := range d.StatesRelabeled {
			p("| relabeled | %s | %s → %s | |\n", diffMDCode(s.ID), diffMDText(s.OldLabel), diffMDText(s.NewLabel))
		}
	}
	if len(d.TransitionsAdded)+len(d.TransitionsRemoved) > 0 {
		p("\n#### Transitions\n\n| change | from | event | to | count | share |\n|---|---|---|---|---:|---:|\n")
		row := func(change string, t automaton.TransitionRef) {
			p("| %s | %s | %s | %s | %d | %s%s |\n", change, diffMDCode(t.From), diffMDCode(t.Event), diffMDCode(t.To),
				t.Count, render.Percent(t.Share), diffRareNote(t.Rare, t.Generalized))
		}
		for _, t := range d.TransitionsAdded {
			row("added", t)
		}
		for _, t := range d.TransitionsRemoved {
			row("removed", t)
		}
	}
	if len(d.ShareChanges) > 0 {
		p("\n#### Share changes\n\n| from | event | to | old share | new share | old count | new count | z | p |\n")
		p("|---|---|---|---:|---:|---:|---:|---:|---:|\n")
		for _, c := range d.ShareChanges {
			p("| %s | %s | %s | %s | %s | %d/%d | %d/%d | %+.2f | %.2g |\n", diffMDCode(c.From), diffMDCode(c.Event), diffMDCode(c.To),
				render.Percent(c.OldShare), render.Percent(c.NewShare), c.OldCount, c.OldOutflow, c.NewCount, c.NewOutflow, c.Z, c.P)
		}
	}
	if len(d.OutflowShifts) > 0 {
		p("\n#### Outflow shifts\n\n| state | outflow | χ² | df | p |\n|---|---:|---:|---:|---:|\n")
		for _, s := range d.OutflowShifts {
			p("| %s | %d → %d | %.2f | %d | %.2g |\n", diffMDCode(s.State), s.OldOutflow, s.NewOutflow, s.Chi2, s.DF, s.P)
		}
	}
	if len(d.RareFlips) > 0 {
		p("\n#### Rare flips\n\n| from | event | to | was | now | share | count | p |\n|---|---|---|---|---|---:|---:|---:|\n")
		for _, f := range d.RareFlips {
			p("| %s | %s | %s | %s | %s | %s → %s | %d → %d | %.2g |\n", diffMDCode(f.From), diffMDCode(f.Event), diffMDCode(f.To),
				diffRareWord(f.OldRare), diffRareWord(f.NewRare), render.Percent(f.OldShare), render.Percent(f.NewShare), f.OldCount, f.NewCount, f.P)
		}
	}
	if len(d.GeneralizedFlips) > 0 {
		p("\n#### Generalised flips\n\n| from | event | to | was | now | count |\n|---|---|---|---|---|---:|\n")
		for _, f := range d.GeneralizedFlips {
			p("| %s | %s | %s | %s | %s | %d → %d |\n", diffMDCode(f.From), diffMDCode(f.Event), diffMDCode(f.To),
				diffGenWord(f.Old), diffGenWord(f.New), f.OldCount, f.NewCount)
		}
	}
	if len(d.Loops) > 0 {
		p("\n#### Loops\n\n| states | change | max iterations | p95 iterations |\n|---|---|---:|---:|\n")
		for _, l := range d.Loops {
			codes := make([]string, len(l.States))
			for i, s := range l.States {
				codes[i] = diffMDCode(s)
			}
			kind := l.Change
			if m := diffMembership(l, diffMDCode); m != "" {
				kind += " (" + m + ")"
			}
			p("| %s | %s | %s | %s |\n", strings.Join(codes, ", "), kind,
				diffLoopCell(l, func(s *automaton.LoopStats) int { return s.MaxIterations }),
				diffLoopCell(l, func(s *automaton.LoopStats) int { return s.P95Iterations }))
		}
	}
	if d.Trunk != nil {
		p("\n#### Trunk\n\n- old: %s\n- new: %s\n", diffMDPath(d.Trunk.Old), diffMDPath(d.Trunk.New))
	}
	p("\n<sub>Share changes: two-proportion z-test per shared transition, significant at p < %.3g (α = %g, Bonferroni over %s). "+
		"Outflow shifts: chi-square test per shared state, p < %.3g (over %s).</sub>\n",
		d.TransitionThreshold, d.Alpha, text.Count(d.TransitionTests, "transition"), d.StateThreshold, text.Count(d.StateTests, "state"))
	_, err := io.WriteString(w, b.String())
	return err
}

func diffLoopCell(l automaton.LoopChange, v func(*automaton.LoopStats) int) string {
	switch {
	case l.Old == nil:
		return fmt.Sprint(v(l.New))
	case l.New == nil:
		return fmt.Sprint(v(l.Old))
	}
	return fmt.Sprintf("%d → %d", v(l.Old), v(l.New))
}

func diffMDPath(ids []string) string {
	if len(ids) == 0 {
		return "(none)"
	}
	codes := make([]string, len(ids))
	for i, id := range ids {
		codes[i] = diffMDCode(id)
	}
	return strings.Join(codes, " → ")
}

// diffMDText makes s safe inside a Markdown table cell.
func diffMDText(s string) string {
	s = strings.NewReplacer("\r", "", "\n", " ", "|", `\|`).Replace(s)
	return s
}

// diffMDCode shows s as inline code in a table cell; an empty s is shown as
// an empty cell. A backtick in s widens the fence, as CommonMark allows.
func diffMDCode(s string) string {
	if s == "" {
		return ""
	}
	s = diffMDText(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
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
	ropt, err := newReadOptions(opts.from, opts.fields, opts.labels, false, &opts.imports)
	if err != nil {
		return err
	}
	for _, a := range opts.logs {
		if a == "-" {
			return usagef("diff --by reads the logs twice: give files, not standard input")
		}
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
	vals, err := mine.SessionValues(inputs, ropt, opts.by)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var values []string
	missing := 0
	for i := range lg.Sessions {
		v, ok := vals[lg.Sessions[i].ID]
		if !ok {
			missing++
			continue
		}
		if !seen[v] {
			seen[v] = true
			values = append(values, v)
		}
	}
	slices.Sort(values)
	if len(values) < 2 {
		return fmt.Errorf("%s: --by %s: %d value(s) among the sessions (%d without the field); a diff needs two", what, opts.by, len(values), missing)
	}
	if len(values) > 2 && (opts.format == "html" || opts.dot != "") {
		return usagef("--by %s has %d values: --format html and --dot draw one pair; choose the sessions of two", opts.by, len(values))
	}
	bopt := mine.DefaultOptions()
	bopt.Generalize = opts.generalize
	models := make([]*automaton.Model, len(values))
	for i, v := range values {
		sub := lg.Subset(func(s *mine.Session) bool { x, ok := vals[s.ID]; return ok && x == v })
		if models[i], err = mine.Build(sub, bopt); err != nil {
			return fmt.Errorf("%s=%s: %w", opts.by, v, err)
		}
	}
	if missing > 0 {
		fmt.Fprintf(streams.Err, "%d of %d sessions have no %s and are left out\n", missing, lg.NumSessions(), opts.by)
	}
	found := false
	for i := 0; i+1 < len(values); i++ {
		o := *opts
		o.oldPath, o.newPath = opts.by+"="+values[i], opts.by+"="+values[i+1]
		if len(values) > 2 && opts.format == "text" {
			fmt.Fprintf(streams.Out, "== %s -> %s (%d -> %d sessions)\n", o.oldPath, o.newPath, models[i].Source.Sessions, models[i+1].Source.Sessions)
		}
		switch err := writeDiff(models[i], models[i+1], &o, streams); {
		case errors.Is(err, errFound):
			found = true
		case err != nil:
			return err
		}
	}
	if found {
		return errFound
	}
	return nil
}
