package check

import (
	"fmt"
	"io"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
)

// ArgReport is what check finds in the arguments of tool calls, for a
// model with argument rules (automaton.ArgRule). It names sessions, tools
// and arguments, never values.
type ArgReport struct {
	Rules    int `json:"rules"`
	Sessions int `json:"sessions"`
	// Flagged counts the sessions with a call whose argument breaks a
	// rule; ByKind counts them by the kind of their first such call.
	Flagged int            `json:"flagged"`
	ByKind  map[string]int `json:"by_kind"`
	// Findings are each flagged session's first finding, in the order the
	// sessions were read.
	Findings []mine.ArgFinding `json:"findings"`
}

// Args judges the arguments of sessions by the model's rules.
func Args(m *automaton.Model, sessions []mine.ArgSession) *ArgReport {
	r := &ArgReport{Rules: len(m.Args), Sessions: len(sessions), ByKind: map[string]int{
		automaton.KindUnseenValue: 0, automaton.KindValueWithoutSource: 0}}
	r.Findings = mine.CheckArgs(sessions, m.Args)
	if r.Findings == nil {
		r.Findings = []mine.ArgFinding{}
	}
	for _, f := range r.Findings {
		r.ByKind[f.Kind]++
	}
	r.Flagged = len(r.Findings)
	return r
}

// WriteText writes the report for people, listing the first list findings
// (0: all). Session ids, tools and arguments are written as they are;
// callers writing to a terminal filter control characters.
func (r *ArgReport) WriteText(w io.Writer, list int) error {
	_, err := fmt.Fprintf(w, "arguments   %d of %d sessions break an argument rule (%d rules): %s %d, %s %d\n",
		r.Flagged, r.Sessions, r.Rules, automaton.KindUnseenValue, r.ByKind[automaton.KindUnseenValue],
		automaton.KindValueWithoutSource, r.ByKind[automaton.KindValueWithoutSource])
	if err != nil {
		return err
	}
	for i, f := range r.Findings {
		if list > 0 && i == list {
			_, err = fmt.Fprintf(w, "  ... and %d more\n", len(r.Findings)-list)
			return err
		}
		if _, err := fmt.Fprintf(w, "  %q step %d: %s %q argument %q\n", f.Session, f.Step, f.Kind, f.Tool, f.Arg); err != nil {
			return err
		}
	}
	return nil
}
