package render

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/emicklei/dot"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// DesignDOT writes the designed model design as Graphviz DOT with what the
// sessions did on it, from d (automaton.CompareDesign of design and a
// mined model): each designed move is captioned with its event and how
// often sessions took it, its width growing with that count, and the moves
// no session took are drawn red and dashed, captioned "never taken". The
// moves sessions took outside the design are not drawn: the report lists
// them. States and transitions are drawn in the model's sorted order, so
// the same input gives the same bytes.
func DesignDOT(w io.Writer, design *automaton.Model, d automaton.DesignDiff) error {
	m, err := sorted(design)
	if err != nil {
		return err
	}
	taken := map[automaton.EdgeRef]automaton.DesignMove{}
	maxCount := 0
	for _, mv := range d.Followed {
		taken[automaton.EdgeRef{From: mv.From, Event: mv.Event, To: mv.To}] = mv
		maxCount = max(maxCount, mv.Count)
	}
	label := func(id string) string { return m.State(id).Label }

	g := dot.NewGraph(dot.Directed)
	g.Attr("rankdir", "LR")
	g.Attr("fontname", fontName)
	nodes := make(map[string]dot.Node, len(m.States))
	ids := make([]string, 0, len(m.States))
	for _, s := range m.States {
		ids = append(ids, s.ID)
	}
	sort.Strings(ids)
	for _, id := range ids {
		s := m.State(id)
		n := g.Node(s.ID)
		n.Attr("tooltip", dotString(s.ID))
		n.Attr("fontname", fontName)
		switch s.ID {
		case automaton.StartID:
			n.Attr("shape", "point")
			n.Attr("width", "0.15")
			n.Attr("height", "0.15")
			n.Attr("label", dotString(""))
		case automaton.EndID:
			n.Attr("shape", "doublecircle")
			n.Attr("fontsize", "9")
			n.Attr("label", dotString(s.ID))
		default:
			n.Attr("shape", "box")
			n.Attr("style", "rounded")
			lines := []string{s.ID}
			if s.Label != s.ID {
				lines = append(lines, "label: "+s.Label)
			}
			n.Attr("label", dotLines(lines...))
		}
		nodes[s.ID] = n
	}
	for _, t := range m.Transitions {
		e := g.Edge(nodes[t.From], nodes[t.To])
		e.Attr("fontname", fontName)
		mv, ok := taken[automaton.EdgeRef{From: label(t.From), Event: t.Event, To: label(t.To)}]
		caption := t.Event
		if caption != "" {
			caption += " · "
		}
		if !ok {
			e.Attr("label", dotString(caption+"never taken"))
			e.Attr("color", diffRemoved)
			e.Attr("fontcolor", diffRemoved)
			e.Attr("style", "dashed")
			continue
		}
		e.Attr("label", dotString(fmt.Sprintf("%s%d in %s", caption, mv.Count, text.Count(mv.Sessions, "session"))))
		width := 1.0
		if maxCount > 0 {
			width += 4 * float64(mv.Count) / float64(maxCount)
		}
		e.Attr("penwidth", strconv.FormatFloat(width, 'f', 2, 64))
		if t.BackEdge {
			e.Attr("color", backEdgeColor)
			e.Attr("fontcolor", backEdgeColor)
		}
	}
	_, err = io.WriteString(w, g.String())
	return err
}

// DesignDiffText writes d, a design held against a mined model
// (automaton.CompareDesign), as text: a summary line per model, then the
// designed moves never taken and the taken moves never designed, one a
// line with counts and example sessions, each name escaped by text.Cell.
// o.OldFile names the design and o.NewFile the mined model; o.Escape, when
// not nil, rewrites each line (cmd's terminal escaping); o.Color is not
// used. format is the design's
// format (Params.Design) and sessions the mined model's session count.
func DesignDiffText(w io.Writer, d automaton.DesignDiff, format string, sessions int, o DiffTextOptions) error {
	esc := o.Escape
	if esc == nil {
		esc = func(s string) string { return s }
	}
	var b strings.Builder
	line := func(format string, args ...any) { b.WriteString(esc(fmt.Sprintf(format, args...)) + "\n") }
	line("design %s (%s): %d moves; mined %s: %d moves taken by %s", o.OldFile, format, d.Designed, o.NewFile, d.Taken, text.Count(sessions, "session"))
	line("followed %d of %d designed moves", len(d.Followed), d.Designed)
	for _, sec := range []struct {
		title string
		mvs   []automaton.DesignMove
	}{{"designed moves never taken", d.NeverTaken}, {"taken moves never designed", d.NeverDesigned}} {
		b.WriteString("\n")
		line("%s (%d)", sec.title, len(sec.mvs))
		for _, mv := range sec.mvs {
			s := fmt.Sprintf("  %s -[%s]-> %s", text.Cell(mv.From), text.Cell(mv.Event), text.Cell(mv.To))
			if mv.Count > 0 {
				s += fmt.Sprintf("  %d in %s", mv.Count, text.Count(mv.Sessions, "session"))
			}
			if len(mv.Examples) > 0 {
				s += "  e.g. " + text.Path(mv.Examples, " ")
			}
			line("%s", s)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
