package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/emicklei/dot"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// Colours of the DOT picture.
const (
	backEdgeColor = "#d9480f" // orange: an edge that closes a loop
	rareColor     = "#868e96" // grey: a rare branch
	// generalizedColor is a lighter grey: a transition no session took.
	generalizedColor = "#adb5bd"
	fontName         = "Helvetica"
)

// DOT writes m as a Graphviz digraph: with opt.Detail DetailFull laid out
// left to right as below, with DetailSummary the review map, top down (see
// DetailSummary).
//
// Conventions: a state is a rounded box labelled with its id, its label when
// that differs from the id ("label: plan") and its visits; __start__ is a
// small filled point and __end__ a double circle. Every node's tooltip is
// its exact id. An edge is captioned "event · count (share%)", where share is
// Prob as a percentage with one decimal ("ok · 40 (66.7%)"; the empty event
// out of __start__ shows "40 (66.7%)"). Its penwidth is 1 + 4·count/max,
// max being the largest count of any transition of the model. Rare edges are
// dashed and grey, back edges orange (a rare back edge is dashed and
// orange), and the trunk's edges bold and one point wider: for each pair of
// consecutive states of __start__, the trunk, __end__, the most frequent
// transition between them. opt.HideRare, opt.ClusterSep and opt.Title are described on Options.
//
// Graphviz node names are n1, n2, ... in the order of the model file
// (__start__, the states by id, __end__), clusters are numbered first in
// the order of their names, and ids and events are quoted by dotString, so
// the output is byte-stable and any id, quotes, backslashes and newlines
// included, is safe.
func DOT(w io.Writer, m *automaton.Model, opt Options) error {
	g, err := dotGraph(m, opt)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	g.Write(&buf)
	_, err = w.Write(buf.Bytes())
	return err
}

// dotBytes returns the DOT text of m, for the layout engines.
func dotBytes(m *automaton.Model, opt Options) ([]byte, error) {
	var buf bytes.Buffer
	if err := DOT(&buf, m, opt); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func dotGraph(m *automaton.Model, opt Options) (*dot.Graph, error) {
	m, err := sorted(m)
	if err != nil {
		return nil, err
	}
	logFailed := 0.0
	if opt.Failures {
		o := m.Source.Outcome
		if o == nil || o.Sessions == 0 {
			return nil, ErrNoOutcomes
		}
		if opt.Detail == DetailSummary {
			return nil, errors.New("failure colours draw every transition: use the full detail")
		}
		logFailed = float64(o.Failed()) / float64(o.Sessions)
	}
	// A design has no counts to rank its moves by: it is drawn in full,
	// as the designers drew it.
	if opt.Detail == DetailSummary && !uncounted(m) {
		return summaryGraph(m, opt)
	}
	transitions, states := visible(m, opt)

	g := dot.NewGraph(dot.Directed)
	g.Attr("rankdir", "LR")
	g.Attr("fontname", fontName)
	if opt.Title != "" {
		g.Attr("label", dotString(opt.Title))
		g.Attr("labelloc", "t")
	}

	// Clusters first, by name, so that their numbers do not depend on which
	// state happens to come first.
	clusterOf := make(map[string]string)
	var names []string
	if opt.ClusterSep != "" {
		seen := make(map[string]bool)
		for _, s := range states {
			if isPseudo(s.ID) {
				continue
			}
			if i := strings.Index(s.Label, opt.ClusterSep); i > 0 {
				name := s.Label[:i]
				clusterOf[s.ID] = name
				if !seen[name] {
					seen[name] = true
					names = append(names, name)
				}
			}
		}
		sort.Strings(names)
	}
	clusters := make(map[string]*dot.Graph, len(names))
	for _, name := range names {
		c := g.Subgraph(name, dot.ClusterOption{})
		c.Attr("label", dotString(name))
		c.Attr("style", "rounded")
		c.Attr("color", rareColor)
		clusters[name] = c
	}

	nodes := make(map[string]dot.Node, len(states))
	for _, s := range states {
		parent := g
		if name, ok := clusterOf[s.ID]; ok {
			parent = clusters[name]
		}
		n := parent.Node(s.ID)
		n.Attr("tooltip", dotString(s.ID))
		n.Attr("fontname", fontName)
		switch s.ID {
		case automaton.StartID:
			n.Attr("shape", "point")
			n.Attr("width", "0.15")
			n.Attr("height", "0.15") // a point takes the smaller of the two
			n.Attr("label", dotString(""))
		case automaton.EndID:
			n.Attr("shape", "doublecircle")
			n.Attr("fontsize", "9")
			n.Attr("label", dotString(s.ID))
		default:
			n.Attr("shape", "box")
			n.Attr("style", "rounded")
			lines := stateLines(s)
			if uncounted(m) {
				lines = lines[:len(lines)-1] // a design has no visits
			}
			n.Attr("label", dotLines(lines...))
		}
		nodes[s.ID] = n
	}

	maxCount := 0
	for _, t := range m.Transitions {
		maxCount = max(maxCount, t.Count)
	}
	trunk := trunkEdges(m)
	for _, t := range transitions {
		e := g.Edge(nodes[t.From], nodes[t.To])
		caption := edgeCaption(t)
		if uncounted(m) {
			caption = t.Event // a design has no counts
		}
		fcolor := ""
		if opt.Failures && t.Outcome != nil && t.Outcome.Sessions > 0 {
			share := float64(t.Outcome.Failed()) / float64(t.Outcome.Sessions)
			caption += " · " + text.Percent(share) + " failed"
			fcolor = failureColor(share, logFailed)
		}
		e.Attr("label", dotString(caption))
		e.Attr("fontname", fontName)
		width := 1.0
		if maxCount > 0 {
			width += 4 * float64(t.Count) / float64(maxCount)
		}
		var style []string
		if trunk[t] {
			// Graphviz draws penwidth over bold: widen the trunk by hand.
			style = append(style, "bold")
			width++
		}
		e.Attr("penwidth", strconv.FormatFloat(width, 'f', 2, 64))
		switch {
		case t.Generalized != "":
			e.Attr("color", generalizedColor)
			e.Attr("fontcolor", generalizedColor)
			style = append(style, "dotted")
		case t.BackEdge:
			e.Attr("color", backEdgeColor)
			e.Attr("fontcolor", backEdgeColor)
		case t.Rare:
			e.Attr("color", rareColor)
			e.Attr("fontcolor", rareColor)
		}
		if fcolor != "" {
			e.Attr("color", fcolor)
			e.Attr("fontcolor", fcolor)
		}
		if t.Rare {
			style = append(style, "dashed")
		}
		if len(style) > 0 {
			e.Attr("style", strings.Join(style, ","))
		}
	}
	return g, nil
}

// failureColor is an edge's colour for a failure share against the log's:
// grey at the log's share, shading to red as the share rises to 1 and to
// green as it falls to 0.
func failureColor(share, logShare float64) string {
	const grey = 0x88
	var r, gr, b float64
	switch {
	case share > logShare:
		f := (share - logShare) / max(1-logShare, 1e-9)
		r, gr, b = grey+float64(f*(0xd6-grey)), grey-float64(f*(grey-0x27)), grey-float64(f*(grey-0x28))
	default:
		f := (logShare - share) / max(logShare, 1e-9)
		r, gr, b = grey-float64(f*(grey-0x2c)), grey+float64(f*(0xa0-grey)), grey-float64(f*(grey-0x2c))
	}
	return fmt.Sprintf("#%02x%02x%02x", int(r+0.5), int(gr+0.5), int(b+0.5))
}

// stateLines are the lines of a state's node label: its id, its label when
// that differs, and its visits.
func stateLines(s *automaton.State) []string {
	lines := []string{s.ID}
	if s.Label != s.ID {
		lines = append(lines, "label: "+s.Label)
	}
	return append(lines, visits(s.Visits))
}

// visits is "1 visit" or "n visits".
func visits(n int) string { return text.CountForm(n, "visit", "visits") }

// dotString quotes s as a DOT string whose label shows s as it is. Graphviz
// reads backslash escapes in labels (\n, \l, \N, ...), so backslashes are
// doubled; quotes are escaped; control characters, newlines included, are
// drawn as their Go escapes (a newline shows as \n) so that an id never
// reads as two lines; invalid UTF-8 becomes U+FFFD.
func dotString(s string) dot.Literal {
	return dotLines(s)
}

// maxShownRunes is the most of a line a picture shows, its last rune an
// ellipsis: a name of a megabyte (an id, a careless export) made a box no
// screen holds and Graphviz's layout take minutes. The model, the exports
// and the report's tables keep the whole name.
const maxShownRunes = 200

// clipped cuts each of s's lines (a tooltip lists ids a line each) at
// maxShownRunes, its last rune an ellipsis.
func clipped(s string) string {
	if len(s) < maxShownRunes {
		return s
	}
	var b strings.Builder
	shown := 0
	for _, r := range s {
		switch {
		case r == '\n':
			shown = 0
		case shown == maxShownRunes-1:
			b.WriteRune('…')
			shown++
			continue
		case shown >= maxShownRunes:
			continue
		default:
			shown++
		}
		b.WriteRune(r)
	}
	return b.String()
}

// dotLines quotes lines, each as dotString does, joined by Graphviz's
// centred line break.
func dotLines(lines ...string) dot.Literal {
	var b strings.Builder
	b.WriteByte('"')
	for i, line := range lines {
		if i > 0 {
			b.WriteString(`\n`)
		}
		for _, r := range shownText(clipped(line)) {
			switch r {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '&':
				b.WriteString("&amp;") // Graphviz reads entities in strings
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return dot.Literal(b.String())
}
