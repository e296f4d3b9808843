package serve

import (
	"bytes"
	"fmt"
	"io"
	"sort"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/guard"
	"github.com/fsmine/fsmine/internal/text"
)

// WriteCheck writes, as serve --check prints it, what the guard will
// enforce: the model (named model), the policy (named policy, or the
// built-in defaults), the watchdog, the loop caps (each capped transition's,
// then each loop's together), the states with a max_run, how generalised
// transitions are treated, and the policy's slots, states and rules.
func (s *Server) WriteCheck(w io.Writer, model, policy string) error {
	g := s.Guard()
	m, p := g.Model(), g.Policy()
	var b bytes.Buffer
	fmt.Fprintf(&b, "model    %s: version %d, %s, %s, %s, %s\n", model, m.Version, s.Info().Digest,
		text.Count(len(m.States), "state"), text.Count(len(m.Transitions), "transition"), text.Count(len(m.Loops), "loop"))
	mode := guard.ModeEnforce
	if p.Monitor() {
		mode = guard.ModeMonitor
	}
	fmt.Fprintf(&b, "policy   %s: %s mode", policy, mode)
	if p.RareIsDeviation {
		b.WriteString(", rare transitions are deviations")
	}
	if p.MaxUnusual > 0 {
		fmt.Fprintf(&b, ", at most %d rare or generalised steps a session", p.MaxUnusual)
	}
	if p.MaxUnusualRun > 0 {
		fmt.Fprintf(&b, ", at most %d rare or generalised steps in a row", p.MaxUnusualRun)
	}
	b.WriteByte('\n')
	if w := p.Watchdog; w != nil {
		fmt.Fprintf(&b, "watchdog %d turns in one state", w.MaxTurns)
		if fb := g.Fallback(); fb != nil {
			fmt.Fprintf(&b, ", then %s (%s)", text.Arrow(fb.Event, fb.To), text.Cell(fb.Label))
		} else {
			b.WriteString(", then deny")
		}
		b.WriteByte('\n')
	} else {
		b.WriteString("watchdog none\n")
	}
	caps := g.LoopCaps()
	fmt.Fprintf(&b, "caps     %d\n", len(caps))
	for _, c := range caps {
		fmt.Fprintf(&b, "  %s  max %d\n", text.Move(c.From, c.Event, c.To), c.Max)
	}
	capped, runs := 0, 0
	for _, l := range m.Loops {
		if l.MaxIterations > 0 {
			capped++
		}
	}
	for _, st := range m.States {
		if st.MaxRun > 0 {
			runs++
		}
	}
	fmt.Fprintf(&b, "loops    %d capped: a loop's back edges together at most its max_iterations a stay\n", capped)
	for _, l := range m.Loops {
		if l.MaxIterations > 0 {
			fmt.Fprintf(&b, "  {%s}  max %d\n", text.Path(l.States, ", "), l.MaxIterations)
		}
	}
	fmt.Fprintf(&b, "max_run  %s: at most its max_run visits of a state's label in a row\n", text.Count(runs, "state"))
	writeSlotPolicy(&b, m, p)
	_, err := w.Write(b.Bytes())
	return err
}

// writeSlotPolicy writes, for WriteCheck, how the guard treats
// generalised transitions and the policy's slots, states and rules.
func writeSlotPolicy(b *bytes.Buffer, m *automaton.Model, p *guard.Policy) {
	gen := 0
	for _, t := range m.Transitions {
		if t.Generalized != "" {
			gen++
		}
	}
	verdict := "allowed and marked"
	if p.Generalized == guard.GeneralizedDeny {
		verdict = "denied"
	}
	fmt.Fprintf(b, "generalized %s: %s\n", text.Count(gen, "transition"), verdict)
	declared := make(map[string]bool)
	for _, sp := range p.Slots {
		declared[sp.Name] = true
	}
	keys := make([]string, 0, len(p.States))
	for k, st := range p.States {
		keys = append(keys, k)
		for _, sp := range st.RequiredSlots {
			declared[sp.Name] = true
		}
	}
	sort.Strings(keys)
	names := make([]string, 0, len(declared))
	for n := range declared {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(b, "slots    %d", len(names))
	if len(names) > 0 {
		fmt.Fprintf(b, ": %s", text.Path(names, ", "))
	}
	fmt.Fprintf(b, "\nstates   %d\n", len(keys))
	for _, k := range keys {
		st := p.States[k]
		fmt.Fprintf(b, "  %s", text.Cell(k))
		for i, sp := range st.RequiredSlots {
			sep := ", "
			if i == 0 {
				sep = "  requires "
			}
			b.WriteString(sep + text.Cell(sp.Name))
			if sp.Pattern != "" {
				fmt.Fprintf(b, " ~ %s", text.Cell(sp.Pattern))
			}
		}
		if st.Instructions != "" {
			fmt.Fprintf(b, "  instructions: %d bytes", len(st.Instructions))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(b, "rules    %d\n", len(p.Transitions))
	for _, r := range p.Transitions {
		ev := "*"
		if r.Event != nil {
			ev = *r.Event
		}
		fmt.Fprintf(b, "  %s", text.Move(r.From, ev, r.To))
		if r.Keep != nil {
			fmt.Fprintf(b, "  keep %s", text.Path(r.Keep, ", "))
		}
		if r.Clear != nil {
			fmt.Fprintf(b, "  clear %s", text.Path(r.Clear, ", "))
		}
		if len(r.When) > 0 {
			fmt.Fprintf(b, "  %s", text.Count(len(r.When), "condition"))
		}
		b.WriteByte('\n')
	}
}
