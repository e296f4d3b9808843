package render

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// DiffTextOptions shape DiffText, DiffMarkdown and DiffJSON.
type DiffTextOptions struct {
	// OldFile and NewFile name the two models as the user gave them.
	OldFile, NewFile string
	// Color marks lines with ANSI colours (DiffText only): added green,
	// removed red, changed yellow, headings bold.
	Color bool
	// Escape, when not nil, rewrites each line of DiffText before it is
	// coloured: cmd passes its terminal escaping (text.Line), so that no
	// escape sequence in the file names reaches the terminal while the
	// colours do. The models' names DiffText escapes itself (text.Cell),
	// whatever Escape is.
	Escape func(string) string
}

const (
	diffBold   = "\x1b[1m"
	diffRed    = "\x1b[31m"
	diffGreen  = "\x1b[32m"
	diffYellow = "\x1b[33m"
	diffReset  = "\x1b[0m"
)

// DiffText writes d for people, as fsmine diff prints it: a header like
// diff -u's, a summary, the tests' level, then one section per kind of
// change, each line marked + (added), - (removed) or ~ (changed).
func DiffText(w io.Writer, d *automaton.Diff, opt DiffTextOptions) error {
	var b strings.Builder
	paint := func(code, s string) string {
		if opt.Escape != nil {
			s = opt.Escape(s)
		}
		if !opt.Color || code == "" {
			return s
		}
		return code + s + diffReset
	}
	line := func(code, format string, args ...any) {
		b.WriteString(paint(code, fmt.Sprintf(format, args...)) + "\n")
	}
	section := func(title string) { b.WriteString("\n" + paint(diffBold, title) + "\n") }
	same := ""
	if d.SameDigest {
		same = "  (same digest)"
	}
	line(diffRed, "--- %s  v%d  %s  %d sessions", opt.OldFile, d.Old.Version, text.ShortDigest(d.Old.Digest), d.Old.Sessions)
	line(diffGreen, "+++ %s  v%d  %s  %d sessions%s", opt.NewFile, d.New.Version, text.ShortDigest(d.New.Digest), d.New.Sessions, same)
	line(diffBold, "%s", d.Summary())
	line("", "tested at alpha %g (Bonferroni): %s (z-test, p < %.3g), %s (chi-square, p < %.3g)",
		d.Alpha, text.Count(d.TransitionTests, "shared transition"), d.TransitionThreshold,
		text.Count(d.StateTests, "state"), d.StateThreshold)

	if len(d.StatesAdded)+len(d.StatesRemoved)+len(d.StatesRelabeled) > 0 {
		section("states")
		for _, s := range d.StatesAdded {
			line(diffGreen, "  + %s  (%s)", diffStateText(s), text.Count(s.Visits, "visit"))
		}
		for _, s := range d.StatesRemoved {
			line(diffRed, "  - %s  (%s)", diffStateText(s), text.Count(s.Visits, "visit"))
		}
		for _, s := range d.StatesRelabeled {
			line(diffYellow, "  ~ %s  label %q -> %q", text.Cell(s.ID), s.OldLabel, s.NewLabel)
		}
	}
	if len(d.TransitionsAdded)+len(d.TransitionsRemoved) > 0 {
		section("transitions")
		for _, t := range d.TransitionsAdded {
			line(diffGreen, "  + %s  %d (%s%s)", text.Move(t.From, t.Event, t.To), t.Count, text.Percent(t.Share), diffRareNote(t.Rare, t.Generalized))
		}
		for _, t := range d.TransitionsRemoved {
			line(diffRed, "  - %s  %d (%s%s)", text.Move(t.From, t.Event, t.To), t.Count, text.Percent(t.Share), diffRareNote(t.Rare, t.Generalized))
		}
	}
	if len(d.ShareChanges) > 0 {
		section(fmt.Sprintf("share changes  (two-proportion z-test, p < %.3g)", d.TransitionThreshold))
		for _, c := range d.ShareChanges {
			line(diffYellow, "  ~ %s  %s -> %s  (%d/%d -> %d/%d)  z=%+.2f  p=%.2g", text.Move(c.From, c.Event, c.To),
				text.Percent(c.OldShare), text.Percent(c.NewShare), c.OldCount, c.OldOutflow, c.NewCount, c.NewOutflow, c.Z, c.P)
		}
	}
	if len(d.OutflowShifts) > 0 {
		section(fmt.Sprintf("outflow shifts  (chi-square, p < %.3g)", d.StateThreshold))
		for _, s := range d.OutflowShifts {
			line(diffYellow, "  ~ %s  chi2=%.2f  df=%d  p=%.2g  (outflow %d -> %d)", text.Cell(s.State), s.Chi2, s.DF, s.P, s.OldOutflow, s.NewOutflow)
		}
	}
	if len(d.RareFlips) > 0 {
		section("rare flips")
		for _, f := range d.RareFlips {
			line(diffYellow, "  ~ %s  %s -> %s  %s -> %s  (%d -> %d, p=%.2g)", text.Move(f.From, f.Event, f.To),
				diffRareWord(f.OldRare), diffRareWord(f.NewRare), text.Percent(f.OldShare), text.Percent(f.NewShare), f.OldCount, f.NewCount, f.P)
		}
	}
	if len(d.ConstraintsAdded)+len(d.ConstraintsRemoved) > 0 {
		section("constraints")
		for _, c := range d.ConstraintsAdded {
			line(diffGreen, "  + %s  (support %d)", text.Cell(c.String()), c.Support)
		}
		for _, c := range d.ConstraintsRemoved {
			line(diffRed, "  - %s  (support %d)", text.Cell(c.String()), c.Support)
		}
	}
	if len(d.ArgsAdded)+len(d.ArgsRemoved) > 0 {
		section("argument rules")
		for _, r := range d.ArgsAdded {
			line(diffGreen, "  + %s  (%d sessions)", text.Cell(r.String()), r.Sessions)
		}
		for _, r := range d.ArgsRemoved {
			line(diffRed, "  - %s  (%d sessions)", text.Cell(r.String()), r.Sessions)
		}
	}
	if len(d.GeneralizedFlips) > 0 {
		section("generalised flips")
		for _, f := range d.GeneralizedFlips {
			line(diffYellow, "  ~ %s  %s -> %s  (%d -> %d)", text.Move(f.From, f.Event, f.To), diffGenWord(f.Old), diffGenWord(f.New), f.OldCount, f.NewCount)
		}
	}
	if len(d.StateChanges) > 0 {
		section("run caps and slot fields")
		for _, s := range d.StateChanges {
			line(diffYellow, "  ~ %s  %s", diffStateText(automaton.StateRef{ID: s.ID, Label: s.Label}), diffStateChangeText(s, text.Cell))
		}
	}
	if len(d.BackEdgeFlips) > 0 {
		section("back edges  (a loop's cap counts them)")
		for _, f := range d.BackEdgeFlips {
			line(diffYellow, "  ~ %s  %s -> %s", text.Move(f.From, f.Event, f.To), diffBackWord(f.OldBack), diffBackWord(f.NewBack))
		}
	}
	if c := d.By; c != nil {
		section("sub-maps")
		for _, l := range diffByLines(c, text.Cell) {
			line(diffYellow, "  %s", l)
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
			line(code, "  %s {%s} %s  %s", mark, text.Path(l.States, ", "), l.Change, diffLoopDetail(l))
		}
	}
	if d.Trunk != nil {
		section("trunk")
		line(diffRed, "  - %s", text.Path(d.Trunk.Old, " > "))
		line(diffGreen, "  + %s", text.Path(d.Trunk.New, " > "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func diffStateText(s automaton.StateRef) string {
	if s.Label == s.ID || s.Label == "" {
		return text.Cell(s.ID)
	}
	return fmt.Sprintf("%s (label %q)", text.Cell(s.ID), s.Label)
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

func diffLoopDetail(l automaton.LoopChange) string {
	switch l.Change {
	case automaton.LoopAppeared:
		return fmt.Sprintf("max %d, p95 %d", l.New.MaxIterations, l.New.P95Iterations)
	case automaton.LoopDisappeared:
		return fmt.Sprintf("was max %d, p95 %d", l.Old.MaxIterations, l.Old.P95Iterations)
	}
	its := fmt.Sprintf("max %d -> %d, p95 %d -> %d",
		l.Old.MaxIterations, l.New.MaxIterations, l.Old.P95Iterations, l.New.P95Iterations)
	if m := diffMembership(l, text.Cell); m != "" {
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

// DiffJSONReport is fsmine diff's --format json object: the files as
// given, whether the models differ and how many differences, then every
// field of automaton.Diff.
type DiffJSONReport struct {
	OldFile     string `json:"old_file"`
	NewFile     string `json:"new_file"`
	Empty       bool   `json:"empty"`
	Differences int    `json:"differences"`
	*automaton.Diff
}

// DiffJSON writes d as one indented DiffJSONReport object.
//
// A float from 1e-10 to 1e-6 is written with a one-digit exponent
// ("2.3132563827331445e-7"), as fsmine always wrote it; p-values that
// small are common in diffs of real logs (TestDiffJSONSmallFloats; go-json
// v0.10.5 wrote "e-07").
func DiffJSON(w io.Writer, d *automaton.Diff, opt DiffTextOptions) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(DiffJSONReport{opt.OldFile, opt.NewFile, d.Empty(), d.Differences(), d})
}

// DiffMarkdown writes d as a pull-request comment: a heading, a summary
// line, the two versions, then a table per kind of change and a footnote
// on the tests. Names are shown as code spans (mdCode), with their control
// and bidi characters escaped as text.Cell escapes them, so that none makes
// a link, an image, HTML or a column.
func DiffMarkdown(w io.Writer, d *automaton.Diff, opt DiffTextOptions) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("### fsmine diff: %s (v%d) → %s (v%d)\n\n", mdCode(opt.OldFile), d.Old.Version, mdCode(opt.NewFile), d.New.Version)
	if d.Differences() == 0 {
		p("**No differences.**\n\n")
	} else {
		head, rest, _ := strings.Cut(d.Summary(), ": ")
		p("**%s**: %s\n\n", head, rest)
	}
	p("| | version | digest | sessions |\n|---|---:|---|---:|\n")
	p("| old | %d | %s | %d |\n", d.Old.Version, mdCell(text.ShortDigest(d.Old.Digest)), d.Old.Sessions)
	p("| new | %d | %s | %d |\n", d.New.Version, mdCell(text.ShortDigest(d.New.Digest)), d.New.Sessions)

	if len(d.StatesAdded)+len(d.StatesRemoved)+len(d.StatesRelabeled) > 0 {
		p("\n#### States\n\n| change | state | label | visits |\n|---|---|---|---:|\n")
		for _, s := range d.StatesAdded {
			p("| added | %s | %s | %d |\n", mdCell(s.ID), mdCell(s.Label), s.Visits)
		}
		for _, s := range d.StatesRemoved {
			p("| removed | %s | %s | %d |\n", mdCell(s.ID), mdCell(s.Label), s.Visits)
		}
		for _, s := range d.StatesRelabeled {
			p("| relabeled | %s | %s → %s | |\n", mdCell(s.ID), mdCell(s.OldLabel), mdCell(s.NewLabel))
		}
	}
	if len(d.TransitionsAdded)+len(d.TransitionsRemoved) > 0 {
		p("\n#### Transitions\n\n| change | from | event | to | count | share |\n|---|---|---|---|---:|---:|\n")
		row := func(change string, t automaton.TransitionRef) {
			p("| %s | %s | %s | %s | %d | %s%s |\n", change, mdCell(t.From), mdCell(t.Event), mdCell(t.To),
				t.Count, text.Percent(t.Share), mdRareNote(t.Rare, t.Generalized))
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
			p("| %s | %s | %s | %s | %s | %d/%d | %d/%d | %+.2f | %.2g |\n", mdCell(c.From), mdCell(c.Event), mdCell(c.To),
				text.Percent(c.OldShare), text.Percent(c.NewShare), c.OldCount, c.OldOutflow, c.NewCount, c.NewOutflow, c.Z, c.P)
		}
	}
	if len(d.OutflowShifts) > 0 {
		p("\n#### Outflow shifts\n\n| state | outflow | χ² | df | p |\n|---|---:|---:|---:|---:|\n")
		for _, s := range d.OutflowShifts {
			p("| %s | %d → %d | %.2f | %d | %.2g |\n", mdCell(s.State), s.OldOutflow, s.NewOutflow, s.Chi2, s.DF, s.P)
		}
	}
	if len(d.RareFlips) > 0 {
		p("\n#### Rare flips\n\n| from | event | to | was | now | share | count | p |\n|---|---|---|---|---|---:|---:|---:|\n")
		for _, f := range d.RareFlips {
			p("| %s | %s | %s | %s | %s | %s → %s | %d → %d | %.2g |\n", mdCell(f.From), mdCell(f.Event), mdCell(f.To),
				diffRareWord(f.OldRare), diffRareWord(f.NewRare), text.Percent(f.OldShare), text.Percent(f.NewShare), f.OldCount, f.NewCount, f.P)
		}
	}
	if len(d.ConstraintsAdded)+len(d.ConstraintsRemoved) > 0 {
		p("\n#### Constraints\n\n| change | constraint | support |\n|---|---|---:|\n")
		for _, c := range d.ConstraintsAdded {
			p("| added | %s | %d |\n", mdCell(c.String()), c.Support)
		}
		for _, c := range d.ConstraintsRemoved {
			p("| removed | %s | %d |\n", mdCell(c.String()), c.Support)
		}
	}
	if len(d.ArgsAdded)+len(d.ArgsRemoved) > 0 {
		p("\n#### Argument rules\n\n| change | rule | sessions |\n|---|---|---:|\n")
		for _, r := range d.ArgsAdded {
			p("| added | %s | %d |\n", mdCell(r.String()), r.Sessions)
		}
		for _, r := range d.ArgsRemoved {
			p("| removed | %s | %d |\n", mdCell(r.String()), r.Sessions)
		}
	}
	if len(d.GeneralizedFlips) > 0 {
		p("\n#### Generalised flips\n\n| from | event | to | was | now | count |\n|---|---|---|---|---|---:|\n")
		for _, f := range d.GeneralizedFlips {
			p("| %s | %s | %s | %s | %s | %d → %d |\n", mdCell(f.From), mdCell(f.Event), mdCell(f.To),
				mdGenWord(f.Old), mdGenWord(f.New), f.OldCount, f.NewCount)
		}
	}
	if len(d.StateChanges) > 0 {
		p("\n#### Run caps and slot fields\n\n| state | label | change |\n|---|---|---|\n")
		for _, s := range d.StateChanges {
			p("| %s | %s | %s |\n", mdCell(s.ID), mdCell(s.Label), diffStateChangeText(s, mdCell))
		}
	}
	if len(d.BackEdgeFlips) > 0 {
		p("\n#### Back edges\n\n| from | event | to | was | now |\n|---|---|---|---|---|\n")
		for _, f := range d.BackEdgeFlips {
			p("| %s | %s | %s | %s | %s |\n", mdCell(f.From), mdCell(f.Event), mdCell(f.To), diffBackWord(f.OldBack), diffBackWord(f.NewBack))
		}
	}
	if c := d.By; c != nil {
		p("\n#### Sub-maps\n\n")
		for _, l := range diffByLines(c, mdCell) {
			p("- %s\n", l)
		}
	}
	if len(d.Loops) > 0 {
		p("\n#### Loops\n\n| states | change | max iterations | p95 iterations |\n|---|---|---:|---:|\n")
		for _, l := range d.Loops {
			codes := make([]string, len(l.States))
			for i, s := range l.States {
				codes[i] = mdCell(s)
			}
			kind := l.Change
			if m := diffMembership(l, mdCell); m != "" {
				kind += " (" + m + ")"
			}
			p("| %s | %s | %s | %s |\n", strings.Join(codes, ", "), kind,
				mdLoopCell(l, func(s *automaton.LoopStats) int { return s.MaxIterations }),
				mdLoopCell(l, func(s *automaton.LoopStats) int { return s.P95Iterations }))
		}
	}
	if d.Trunk != nil {
		p("\n#### Trunk\n\n- old: %s\n- new: %s\n", mdPath(d.Trunk.Old), mdPath(d.Trunk.New))
	}
	p("\n<sub>Share changes: two-proportion z-test per shared transition, significant at p < %.3g (α = %g, Bonferroni over %s). "+
		"Outflow shifts: chi-square test per shared state, p < %.3g (over %s).</sub>\n",
		d.TransitionThreshold, d.Alpha, text.Count(d.TransitionTests, "transition"), d.StateThreshold, text.Count(d.StateTests, "state"))
	_, err := io.WriteString(w, b.String())
	return err
}

// mdRareNote is diffRareNote in a table cell: the generalised kind, which
// a model file may set to anything, as free text.
func mdRareNote(rare bool, generalized string) string {
	if generalized != "" {
		return ", generalised (" + mdText(generalized) + ")"
	}
	return diffRareNote(rare, "")
}

// mdGenWord is diffGenWord in a table cell, the kind as free text.
func mdGenWord(kind string) string {
	if kind == "" {
		return diffGenWord(kind)
	}
	return "generalised (" + mdText(kind) + ")"
}

func mdLoopCell(l automaton.LoopChange, v func(*automaton.LoopStats) int) string {
	switch {
	case l.Old == nil:
		return fmt.Sprint(v(l.New))
	case l.New == nil:
		return fmt.Sprint(v(l.Old))
	}
	return fmt.Sprintf("%d → %d", v(l.Old), v(l.New))
}

func mdPath(ids []string) string {
	if len(ids) == 0 {
		return "(none)"
	}
	codes := make([]string, len(ids))
	for i, id := range ids {
		codes[i] = mdCode(id)
	}
	return strings.Join(codes, " → ")
}

// mdText is free text from a model (a generalised kind) in a table cell:
// escaped as a name is (text.Cell), then every ASCII punctuation character
// backslash-escaped, so that it can make no link, image, emphasis, HTML or
// column.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range text.Cell(s) {
		if r < 0x80 && (unicode.IsPunct(r) || unicode.IsSymbol(r)) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdCell shows a name as a code span in a table cell (mdCode), its pipes
// escaped, which would end the cell even inside the span (GitHub reads
// \| there as |).
func mdCell(s string) string {
	return strings.ReplaceAll(mdCode(s), "|", `\|`)
}

// mdCode shows a name as a code span, where Markdown and HTML are text:
// escaped as text.Cell escapes it (control and bidi characters, newlines
// and tabs), fenced by more backticks than it holds in a row, and padded
// where a space would be cut (a span that starts and ends with one loses
// one of each) or a backtick would touch the fence. An empty s is "".
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	s = text.Cell(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") ||
		strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") && strings.Trim(s, " ") != "" {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// diffStateChangeText says how a state's run cap and slot fields changed,
// names escaped by esc.
func diffStateChangeText(s automaton.StateChange, esc func(string) string) string {
	var parts []string
	if s.OldMaxRun != s.NewMaxRun {
		parts = append(parts, fmt.Sprintf("run cap %s -> %s", diffRunCap(s.OldMaxRun), diffRunCap(s.NewMaxRun)))
	}
	if !slices.Equal(s.OldFields, s.NewFields) {
		parts = append(parts, fmt.Sprintf("fields [%s] -> [%s]", diffList(s.OldFields, esc), diffList(s.NewFields, esc)))
	}
	return strings.Join(parts, ", ")
}

// diffRunCap writes a run cap, 0 being none.
func diffRunCap(n int) string {
	if n == 0 {
		return "none"
	}
	return strconv.Itoa(n)
}

// diffList joins names escaped by esc.
func diffList(names []string, esc func(string) string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = esc(n)
	}
	return strings.Join(out, ", ")
}

// diffBackWord names a transition's back edge mark.
func diffBackWord(back bool) string {
	if back {
		return "back edge"
	}
	return "forward"
}

// diffByLines says how the models' conditioning differs, a line each:
// field, mode and least sessions, then the values, names escaped by esc.
func diffByLines(c *automaton.ByChange, esc func(string) string) []string {
	var out []string
	by := func(field, mode string, min int) string {
		if field == "" {
			return "not conditioned"
		}
		if mode == "" {
			mode = automaton.ByPaths
		}
		return fmt.Sprintf("by %s (%s, %d sessions a value)", esc(field), mode, min)
	}
	if c.OldField != c.NewField || c.OldMode != c.NewMode || c.OldMinSessions != c.NewMinSessions {
		out = append(out, by(c.OldField, c.OldMode, c.OldMinSessions)+" -> "+by(c.NewField, c.NewMode, c.NewMinSessions))
	}
	for _, v := range c.Added {
		out = append(out, "+ sub-map "+esc(v))
	}
	for _, v := range c.Removed {
		out = append(out, "- sub-map "+esc(v))
	}
	for _, v := range c.Changed {
		out = append(out, "~ sub-map "+esc(v)+" (its behaviour differs)")
	}
	return out
}
