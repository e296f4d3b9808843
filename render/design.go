package render

import (
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/emicklei/dot"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/render/text"
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
