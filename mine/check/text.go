package check

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/internal/text"
)

// WriteText writes the report for people, as fsmine check prints it: what
// was checked, the verdict figures, deviations by kind and by place, and
// the first list deviating sessions (0: all). m is the model checked
// against, for its size.
func (s *Summary) WriteText(w io.Writer, m *automaton.Model, list int) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("model       %s  v%d %s  (%d states, %d transitions)\n", s.Model.Path, s.Model.Version, text.ShortDigest(s.Model.Digest), len(m.States), len(m.Transitions))
	p("logs        %s, %d records (%d skipped), %d sessions, %d events\n", filesText(s.files), s.Records, s.Skipped, s.Sessions, s.Events)
	if s.Emptied > 0 {
		p("            %s with every record dropped by the label rules: no step, not checked\n", text.Count(s.Emptied, "more session"))
	}
	for _, bl := range s.bad {
		p("            skipped %s\n", bl)
	}
	if s.Skipped > len(s.bad) {
		p("            ... and %d more skipped lines\n", s.Skipped-len(s.bad))
	}
	for _, w := range s.warnings {
		p("            warning %s\n", w)
	}
	if s.warned > len(s.warnings) {
		p("            ... and %d more warnings\n", s.warned-len(s.warnings))
	}
	p("fit         %d of %d sessions (%s)", s.Fit, s.Sessions, text.Percent(s.FitShare))
	if s.MinFit != nil {
		verdict := "ok"
		if !s.Pass {
			verdict = "BELOW"
		}
		p("  min %s: %s", text.Percent(*s.MinFit), verdict)
	}
	p("\n")
	if len(s.Maps) > 0 && m.By != nil {
		p("maps        %s\n", mapsText(m.By.Field, s.Maps))
	}
	p("outside     %s (%s) off every path of the model; re-mine when this grows\n", text.Count(s.Outside, "session"), text.Percent(s.OutsideShare))
	p("fitness     log %.4f (1 - sum cost / sum max cost, as pm4py), mean per session %.4f\n", s.LogFitness, s.MeanFitness)
	rareNote := "pass"
	if s.RareIsDeviation {
		rareNote = "count as deviations"
	}
	p("rare        %s taken in %s (%s)\n", text.Count(s.RareMoves, "rare transition"), text.Count(s.RareSessions, "session"), rareNote)
	if s.GeneralizedMoves > 0 || s.GeneralizedIsDeviation {
		genNote := "pass"
		if s.GeneralizedIsDeviation {
			genNote = "count as deviations"
		}
		p("generalised %s taken in %s (%s)\n", text.Count(s.GeneralizedMoves, "generalised transition"), text.Count(s.GeneralizedSessions, "session"), genNote)
	}
	if s.MaxUnusual > 0 {
		p("unusual     at most %s a session; more deviate (unusual_cap)\n", text.Count(s.MaxUnusual, "rare or generalised transition"))
	}
	if s.MaxUnusualRun > 0 {
		p("in a row    at most %s; more deviate (unusual_run)\n", text.Count(s.MaxUnusualRun, "rare or generalised transition"))
	}
	if s.Bounded > 0 {
		p("bounded     %s hit --max-align-states: their cost is a greedy alignment's (an upper bound)\n", text.Count(s.Bounded, "session"))
	}
	if len(s.Riskiest) > 0 {
		p("risk        mean %.2f bits per session (surprisal under the model)\n", s.MeanRisk)
		by := map[string]string{RankTotal: "surprisal in bits", RankPerStep: "surprisal per move", RankEnd: "the surprisal of ending there"}[s.RankedBy]
		p("\nriskiest sessions (%d of %d, by %s)\n", len(s.Riskiest), s.Sessions, by)
		idw := 0
		for _, v := range s.Riskiest {
			idw = max(idw, len(v.SessionID))
		}
		for _, v := range s.Riskiest {
			verdict := "fits"
			if !v.Fits {
				verdict = "deviates"
			}
			p("  %-*s  %8.2f bits  %5.2f per move  %5.2f at the end  %-8s", idw, v.SessionID, v.Risk.Total, v.Risk.PerStep, v.Risk.End, verdict)
			t := v.Risk.Top
			p("  most surprising: step %d %s (%.2f bits)\n", t.Step, text.Move(t.State, t.Event, t.Label), t.Bits)
		}
	}
	dev := s.Sessions - s.Fit
	if dev == 0 {
		p("\nno deviations\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	p("\ndeviations by kind\n")
	for _, k := range Kinds {
		if n, ok := s.ByKind[k]; ok && (n > 0 || slices.Contains(kindsAlways, k)) {
			p("  %-20s %6d\n", k, n)
		}
	}
	p("\ndeviations by place\n")
	const maxPlaces = 20
	for i, pl := range s.ByPlace {
		if i == maxPlaces {
			p("  ... and %d more places (--format json lists all)\n", len(s.ByPlace)-maxPlaces)
			break
		}
		p("  %6d  %-20s %s\n", pl.Count, pl.Kind, placeText(pl.Kind, pl.State, pl.Event, pl.Label))
	}
	shown := len(s.Deviations)
	if list > 0 && shown > list {
		shown = list
	}
	p("\ndeviating sessions (%d of %d", shown, dev)
	if shown < dev {
		p("; --list 0 or --format json for all")
	}
	p(")\n")
	idw, locw := 0, 0
	for _, d := range s.Deviations[:shown] {
		idw = max(idw, len(d.SessionID))
		locw = max(locw, len(fmt.Sprintf("%s:%d", d.File, d.Line)))
	}
	for _, d := range s.Deviations[:shown] {
		p("  %-*s  step %-4d  %-*s  %-20s %s  fitness %.3f", idw, d.SessionID, d.Step, locw, fmt.Sprintf("%s:%d", d.File, d.Line),
			d.Kind, placeText(d.Kind, d.State, d.Event, d.Label), d.Fitness)
		if d.Map != "" {
			p("  map %s", d.Map)
		}
		p("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// placeText shows where a deviation happened.
func placeText(kind, state, event, label string) string {
	s := text.Move(state, event, label)
	if kind == conform.KindUnknownState {
		s += "  (unknown)"
	}
	return s
}

// filesText names the files read: one by name, several by count.
func filesText(files []automaton.SourceFile) string {
	if len(files) == 1 {
		return files[0].Path
	}
	return fmt.Sprintf("%d files", len(files))
}

// mapsText says how many sessions the sub-maps and the shared map of a
// conditioned model judged and how many fit.
func mapsText(field string, maps []MapCount) string {
	var shared, sub MapCount
	subs := 0
	for _, c := range maps {
		if c.Map == automaton.SharedMap {
			shared = c
			continue
		}
		subs++
		sub.Sessions += c.Sessions
		sub.Fit += c.Fit
	}
	return fmt.Sprintf("by %s: %s judged by %s of their value (%d fit), %s by the shared map (%d fit)",
		field, text.Count(sub.Sessions, "session"), text.Count(subs, "sub-map"), sub.Fit, text.Count(shared.Sessions, "session"), shared.Fit)
}
