package stats

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fsmine/fsmine/internal/text"
)

// ErrNoModel is WriteText's error for a Report that FromModel or FromLogs
// did not make (one decoded from JSON): the text needs the model.
var ErrNoModel = errors.New("stats: the report has no model; make it with FromModel or FromLogs")

// WriteText writes the report for people: aligned tables of the states
// (and, with measures, the fields per visit), example sessions, the
// hottest back edges and the loops. Example session ids and the link
// template are escaped for a table cell (control characters, newline and
// tab as Go escapes); state ids, events and the model's path are written
// as they are, so a caller writing to a terminal escapes control
// characters (fsmine stats does). It makes one Write to w, and returns
// ErrNoModel for a Report FromModel or FromLogs did not make.
func (r *Report) WriteText(w io.Writer) error {
	if r.m == nil {
		return ErrNoModel
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	m := r.m
	p("model     %s  v%d %s  (%d states, %d transitions, %s)\n", r.Model.Path, r.Model.Version, text.ShortDigest(r.Model.Digest), len(m.States), len(m.Transitions), text.Count(len(m.Loops), "loop"))
	if r.From == "logs" {
		p("logs      %d sessions (%d fit the model), %d events", r.Sessions, r.Fit, r.Events)
		if r.Unplaced > 0 {
			p("; %s after a deviation could not be placed in a state", text.Count(r.Unplaced, "event"))
		}
		if r.Emptied > 0 {
			p("; %s with every record dropped by the label rules, left out", text.Count(r.Emptied, "more session"))
		}
		p("\n")
		for _, path := range slices.Sorted(maps.Keys(r.Unusable)) {
			p("          %s with %s not a number from 0 to 1e290 (text, true, negative or larger), left out", text.Count(r.Unusable[path], "record"), text.Cell(path))
			if at := r.UnusableAt[path]; at != "" {
				p(" (the first at %s)", text.Line(at))
			}
			p("\n")
		}
	} else {
		p("source    the model alone: %d sessions, %d events when mined (give logs for exact endings, loop histograms, tokens and latency)\n", r.Sessions, r.Events)
	}

	p("\nstates (by visits)\n")
	rows := [][]string{{"  state", "visits", "sessions", "dwell p50", "dwell p95", "sessions through it end in"}}
	for _, s := range r.States {
		p50, p95 := "-", "-"
		if s.DwellMS != nil {
			p50, p95 = text.Duration(s.DwellMS.P50), text.Duration(s.DwellMS.P95)
		}
		rows = append(rows, []string{"  " + text.Cell(s.ID), strconv.Itoa(s.Visits), strconv.Itoa(s.Sessions), p50, p95, endsText(s.Ends, 3)})
	}
	b.WriteString(text.Table(rows, map[int]bool{1: true, 2: true, 3: true, 4: true}))
	if r.EndsFrom == "top_variants" {
		p("  (endings from the model's %d top variants, %s of its sessions)\n", len(m.TopVariants), text.Percent(r.EndsCoverage))
	}

	if len(r.Measures) > 0 {
		p("\nper visit, by state\n")
		head := []string{"  state"}
		for _, mp := range r.Measures {
			head = append(head, mp+" total", "mean", "p95")
		}
		rows = [][]string{head}
		right := map[int]bool{}
		for i := 1; i < len(head); i++ {
			right[i] = true
		}
		for _, s := range r.States {
			row := []string{"  " + text.Cell(s.ID)}
			for _, mp := range r.Measures {
				q := s.Measures[mp]
				if q == nil {
					row = append(row, "-", "-", "-")
					continue
				}
				row = append(row, text.Num(q.Total), text.Num(q.Mean), text.Num(q.P95))
			}
			rows = append(rows, row)
		}
		b.WriteString(text.Table(rows, right))
	}

	var ex [][]string
	for _, s := range r.States {
		if len(s.Examples) > 0 {
			ex = append(ex, []string{"  " + text.Cell(s.ID), examplesText(s.Examples)})
		}
	}
	if len(ex) > 0 {
		p("\nexample sessions, by state\n")
		b.WriteString(text.Table(ex, nil))
		b.WriteString(linkLine(m))
	}

	p("\nhottest back edges")
	if r.BackEdgesAll > len(r.BackEdges) {
		p(" (top %d of %d)", len(r.BackEdges), r.BackEdgesAll)
	}
	p("\n")
	if len(r.BackEdges) == 0 {
		p("  none\n")
	} else {
		rows = [][]string{{"  edge", "count", "sessions"}}
		for _, e := range r.BackEdges {
			rows = append(rows, []string{"  " + text.Move(e.From, e.Event, e.To), strconv.Itoa(e.Count), strconv.Itoa(e.Sessions)})
		}
		b.WriteString(text.Table(rows, map[int]bool{1: true, 2: true}))
	}

	p("\nloops (iterations per stay)\n")
	if len(r.Loops) == 0 {
		p("  none\n")
	}
	for _, l := range r.Loops {
		p("  {%s}\n", statesText(l.States, 4))
		// From the model alone its max_iterations is the loop's cap, which
		// under generalisation may exceed the most a stay made.
		most := "max"
		if l.Histogram == nil {
			most = "cap"
		}
		p("    %s in %s; %s %d, p95 %d", text.Count(l.Count, "iteration"), text.Count(l.Sessions, "session"), most, l.MaxIterations, l.P95Iterations)
		switch {
		case l.Histogram == nil:
		case len(l.Histogram) == 0:
			p("; no stay iterated")
		default:
			var parts []string
			for _, h := range l.Histogram {
				parts = append(parts, fmt.Sprintf("%d:%d", h.Iterations, h.Stays))
			}
			p("; stays by iterations %s", strings.Join(parts, " "))
		}
		p("\n")
	}
	if r.Failures != nil {
		writeFailures(&b, r.Failures)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFailures writes where sessions fail, as fsmine stats prints it.
func writeFailures(b *strings.Builder, f *FailureReport) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("\nwhere sessions fail (outcome %s)\n", f.Expr)
	p("  %d of %d sessions failed (%s)", f.Failed, f.Sessions, text.Percent(f.LogRate))
	if f.Unknown > 0 {
		p("; %s without the field counted apart", text.Count(f.Unknown, "session"))
	}
	p("\n")
	if f.Note != "" {
		p("  %s\n", f.Note)
		return
	}
	sig := 0
	for _, pl := range f.Places {
		if pl.Significant {
			sig++
		}
	}
	p("  %d places tested (one-sided Fisher exact, Benjamini-Hochberg at false discovery rate %g); %d of those listed stand out\n", f.Tested, f.Alpha, sig)
	if len(f.Places) == 0 {
		p("  no place fails more often than the log\n")
		return
	}
	rows := [][]string{{"  place", "failed", "rate", "log", "lift", "p", "q", "", "examples"}}
	for _, pl := range f.Places {
		name := text.Cell(pl.State)
		if pl.Kind == "move" {
			name = text.Move(pl.State, pl.Event, pl.To)
		}
		mark := ""
		if pl.Significant {
			mark = "*"
		}
		rows = append(rows, []string{"  " + name, fmt.Sprintf("%d/%d", pl.Failed, pl.Sessions), text.Percent(pl.Rate), text.Percent(f.LogRate),
			fmt.Sprintf("%.2fx", pl.Lift), fmt.Sprintf("%.2g", pl.P), fmt.Sprintf("%.2g", pl.Q), mark, text.Path(pl.Examples, " ")})
	}
	b.WriteString(text.Table(rows, map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true}))
	p("  * stands out: q at most %g (a screen over many places, not proof of cause)\n", f.Alpha)
}

// endsText shows the first n endings as "state share".
func endsText(ends []End, n int) string {
	if len(ends) == 0 {
		return "-"
	}
	var parts []string
	for i, e := range ends {
		if i == n {
			parts = append(parts, fmt.Sprintf("+%d more", len(ends)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s", text.Cell(e.State), text.Percent(e.Share)))
	}
	return strings.Join(parts, ", ")
}

// statesText lists up to n states and how many more.
func statesText(states []string, n int) string {
	if len(states) <= n {
		return text.Path(states, ", ")
	}
	return fmt.Sprintf("%s and %d more", text.Path(states[:n], ", "), len(states)-n)
}
