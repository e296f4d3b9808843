package render

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/emicklei/dot"
	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// Detail says how much of a model a picture draws.
type Detail string

const (
	// DetailFull draws every state and transition (as opt.HideRare and
	// opt.ClusterSep allow); the zero value of Options means it.
	DetailFull Detail = "full"
	// DetailSummary draws a map a reviewer can read: at most MaxStages
	// stages (see Stages) besides __start__ and __end__, at most MaxEdges
	// edges, and the trunk as a straight top-down spine; the rest is
	// counted on the boxes. The map is laid out by the builtin engine to
	// keep its crossings down (see untangle), in every format that draws
	// it (DOT, Mermaid, SVG, PNG), which fail with that layout's error.
	// Machine exports (SCXML, XState) nest the states
	// of each stage in a compound state and keep every transition.
	DetailSummary Detail = "summary"
)

// Details lists the values of Detail, the command line's default first.
var Details = []Detail{DetailSummary, DetailFull}

// The limits of a summary. A reviewer reads five to twelve boxes: ten
// stages, __start__ and __end__.
const (
	// MaxStages is the most stages Stages forms.
	MaxStages = 10
	// MaxEdges is the most edges a summary draws.
	MaxEdges = 30
	// maxSpine is the most trunk states a summary draws one by one; a
	// longer trunk is drawn as one box per stage.
	maxSpine = 12
	// An edge off the trunk is minor, and counted rather than drawn, when
	// the busiest edge carries more than minorShare times its count.
	minorShare = 40
	// minDrawn is the fewest times an edge off the trunk must have been
	// taken to be drawn: below it, an anecdote, counted on its box (on a
	// log of 43 sessions a fortieth of the busiest edge is one step).
	minDrawn = 5
)

// Stage is a group of states that a summary draws as one box.
type Stage struct {
	// Name is the labels of its trunk states ("lookup_order, lookup_product";
	// the first and last when there are more than three), a label, or
	// "other states".
	Name string
	// States are the stage's state ids, in the model file's order.
	States []string
	// Trunk holds the stage's trunk states, in the trunk's order: a stage
	// is either a segment of the trunk or off it (Trunk empty).
	Trunk []string
}

// otherStage is the name of the stage that holds the states of the
// lightest groups when there are more than MaxStages.
const otherStage = "other states"

// maxSegments is the most stages the trunk is cut into.
const maxSegments = 6

// Stages groups the states of m (__start__ and __end__ aside) into at most
// MaxStages stages, deterministically, so that the trunk runs through them
// in order:
//
//  1. the trunk is cut into segments where the family of its states'
//     labels changes (a label's family is the part before its first "_",
//     ".", ":" or "/", as BPI's A_, O_ and W_, or the label itself); while
//     there are more than six, the two neighbouring segments with the
//     fewest trunk states together merge (the first such pair on a tie);
//  2. a state off the trunk joins the segment where the trunk first passes
//     a state of its label;
//  3. the other states are grouped by label; when that makes more than
//     MaxStages stages in all, the groups whose busiest state most sessions
//     entered (then most visits, then by name) keep their own stage and the
//     rest share one, "other states".
//
// Stages come in the trunk's order, then the groups off the trunk as in
// step 3. A nil model has no stages.
func Stages(m *automaton.Model) []Stage {
	m, err := sorted(m)
	if err != nil {
		return nil
	}
	return stagesOf(m)
}

// group is a stage in the making.
type group struct {
	labels   []string // of its trunk states, in order, without repeats
	trunk    []string
	states   []*automaton.State
	name     string
	sessions int // of its busiest state
	visits   int
}

func (g *group) add(s *automaton.State) {
	g.states = append(g.states, s)
	g.sessions = max(g.sessions, s.Sessions)
	g.visits += s.Visits
}

func stagesOf(m *automaton.Model) []Stage {
	// 1. Segments of the trunk.
	var segs []*group
	onTrunk := map[string]bool{}
	for _, id := range m.Trunk {
		s := m.State(id)
		if s == nil || isPseudo(id) || onTrunk[id] {
			continue
		}
		onTrunk[id] = true
		if n := len(segs); n == 0 || family(segs[n-1].labels[len(segs[n-1].labels)-1]) != family(s.Label) {
			segs = append(segs, &group{})
		}
		g := segs[len(segs)-1]
		g.trunk = append(g.trunk, id)
		if !slices.Contains(g.labels, s.Label) {
			g.labels = append(g.labels, s.Label)
		}
		g.add(s)
	}
	for len(segs) > maxSegments {
		best := 0
		for i := 1; i+1 < len(segs); i++ {
			if len(segs[i].trunk)+len(segs[i+1].trunk) < len(segs[best].trunk)+len(segs[best+1].trunk) {
				best = i
			}
		}
		a, b := segs[best], segs[best+1]
		a.trunk = append(a.trunk, b.trunk...)
		for _, l := range b.labels {
			if !slices.Contains(a.labels, l) {
				a.labels = append(a.labels, l)
			}
		}
		for _, s := range b.states {
			a.add(s)
		}
		segs = slices.Delete(segs, best+1, best+2)
	}
	for _, g := range segs {
		g.name = strings.Join(g.labels, ", ")
		if len(g.labels) > 3 {
			g.name = g.labels[0] + " … " + g.labels[len(g.labels)-1]
		}
	}

	// 2. States off the trunk join the segment of their label.
	byLabel := map[string]*group{}
	for _, g := range segs {
		for _, l := range g.labels {
			if byLabel[l] == nil {
				byLabel[l] = g
			}
		}
	}
	// 3. The rest by label.
	var off []*group
	offByLabel := map[string]*group{}
	for i := range m.States {
		s := &m.States[i]
		if isPseudo(s.ID) || onTrunk[s.ID] {
			continue
		}
		g := byLabel[s.Label]
		if g == nil {
			g = offByLabel[s.Label]
			if g == nil {
				g = &group{name: s.Label}
				offByLabel[s.Label] = g
				off = append(off, g)
			}
		}
		g.add(s)
	}
	slices.SortFunc(off, func(a, b *group) int {
		if c := cmp.Compare(b.sessions, a.sessions); c != 0 {
			return c
		}
		if c := cmp.Compare(b.visits, a.visits); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	if room := MaxStages - len(segs); len(off) > room {
		other := &group{name: otherStage}
		for _, g := range off[room-1:] {
			for _, s := range g.states {
				other.add(s)
			}
		}
		off = append(off[:room-1:room-1], other)
	}

	groups := append(segs, off...)
	stages := make([]Stage, len(groups))
	for i, g := range groups {
		ids := make([]string, len(g.states))
		for j, s := range g.states {
			ids[j] = s.ID
		}
		slices.SortFunc(ids, automaton.CompareIDs)
		stages[i] = Stage{Name: g.name, States: ids, Trunk: g.trunk}
	}
	return stages
}

// family is the part of a label before its first "_", ".", ":" or "/",
// with that separator ("A_" for "A_SUBMITTED"), or the label when it has
// none or starts with one.
func family(label string) string {
	if i := strings.IndexAny(label, "_.:/"); i > 0 {
		return label[:i+1]
	}
	return label
}

// nodeKind is what a box of a summary stands for.
type nodeKind int

const (
	kindPseudo nodeKind = iota // __start__ or __end__
	kindState                  // one state
	kindRun                    // the trunk states of one stage
	kindRest                   // the states of a stage that are not on the trunk
	kindStage                  // a whole stage off the trunk
)

// sumNode is a box of a summary.
type sumNode struct {
	key    string // unique among the summary's nodes
	kind   nodeKind
	stage  int // index into summary.stages; -1 for __start__ and __end__
	states []*automaton.State
	trunk  bool
	// What the box stands for but the picture does not draw.
	inside int // transitions between its own states
	hidden hiddenCount
}

// hiddenCount tallies transitions a summary does not draw, by why: rare,
// generalized, seldom (an edge taken fewer than minDrawn times), minor
// (outweighed by the busiest edge, or past MaxEdges) or crossing (an edge
// untangle took out of the picture).
type hiddenCount struct {
	n, rare, generalized, seldom, minor, crossing int
}

// Why an edge of the summary is not drawn, besides its transitions' flags.
type hiddenWhy int

const (
	hiddenMinor    hiddenWhy = iota // outweighed, or past MaxEdges
	hiddenSeldom                    // taken fewer than minDrawn times
	hiddenCrossing                  // untangle took it out
)

func (h *hiddenCount) add(t *automaton.Transition, why hiddenWhy) {
	h.n++
	switch {
	case t.Generalized != "":
		h.generalized++
	case t.Rare:
		h.rare++
	case why == hiddenCrossing:
		h.crossing++
	case why == hiddenSeldom:
		h.seldom++
	default:
		h.minor++
	}
}

// sumEdge is an edge of a summary: every transition from one box to another.
type sumEdge struct {
	from, to int
	ts       []*automaton.Transition
	count    int  // of all its transitions
	common   int  // of its observed transitions that are not rare
	trunk    bool // it carries a step of the trunk
}

// summary is the map DetailSummary draws.
type summary struct {
	stages  []Stage
	nodes   []sumNode
	edges   []sumEdge // drawn, in the order they are drawn
	cluster []bool    // per stage: drawn as a cluster of its nodes
}

// summarize builds the summary of a sorted model.
func summarize(m *automaton.Model) *summary {
	sm := &summary{stages: stagesOf(m)}
	// The trunk's boxes: one per state, or one per stage when the trunk
	// is too long to draw state by state.
	long := 0
	for _, st := range sm.stages {
		long += len(st.Trunk)
	}
	nodeOf := map[string]int{}
	addNode := func(n sumNode) int {
		sm.nodes = append(sm.nodes, n)
		for _, s := range n.states {
			nodeOf[s.ID] = len(sm.nodes) - 1
		}
		return len(sm.nodes) - 1
	}
	addNode(sumNode{key: automaton.StartID, kind: kindPseudo, stage: -1, states: []*automaton.State{m.State(automaton.StartID)}, trunk: true})
	sm.cluster = make([]bool, len(sm.stages))
	for si, st := range sm.stages {
		var onT, off []*automaton.State
		for _, id := range st.Trunk {
			onT = append(onT, m.State(id))
		}
		for _, id := range st.States {
			if !slices.Contains(st.Trunk, id) {
				off = append(off, m.State(id))
			}
		}
		switch {
		case len(onT) == 0:
		case long > maxSpine && len(onT) > 1:
			addNode(sumNode{key: fmt.Sprintf("trunk %d", si), kind: kindRun, stage: si, states: onT, trunk: true})
		default:
			for _, s := range onT {
				addNode(sumNode{key: "state " + s.ID, kind: kindState, stage: si, states: []*automaton.State{s}, trunk: true})
			}
		}
		switch {
		case len(off) == 0:
		case len(off) == 1:
			addNode(sumNode{key: "state " + off[0].ID, kind: kindState, stage: si, states: off})
		case len(onT) == 0:
			addNode(sumNode{key: fmt.Sprintf("stage %d", si), kind: kindStage, stage: si, states: off})
		default:
			addNode(sumNode{key: fmt.Sprintf("rest %d", si), kind: kindRest, stage: si, states: off})
		}
		sm.cluster[si] = len(st.States) > 1 && len(onT) > 0
	}
	addNode(sumNode{key: automaton.EndID, kind: kindPseudo, stage: -1, states: []*automaton.State{m.State(automaton.EndID)}, trunk: true})

	// Every transition joins the edge between its boxes, or is counted
	// inside its box.
	onTrunkEdge := trunkEdges(m)
	type pair struct{ from, to int }
	byPair := map[pair]int{}
	var all []sumEdge
	for i := range m.Transitions {
		t := &m.Transitions[i]
		u, v := nodeOf[t.From], nodeOf[t.To]
		if u == v {
			sm.nodes[u].inside++
			continue
		}
		k, ok := byPair[pair{u, v}]
		if !ok {
			k = len(all)
			byPair[pair{u, v}] = k
			all = append(all, sumEdge{from: u, to: v})
		}
		e := &all[k]
		e.ts = append(e.ts, t)
		e.count += t.Count
		if !t.Rare && t.Generalized == "" && t.Count > 0 {
			e.common += t.Count
		}
		e.trunk = e.trunk || onTrunkEdge[t]
	}

	// The trunk's edges, then the common ones into __end__ (where sessions
	// stop, as a flowchart's terminals show), then the busiest common ones,
	// up to MaxEdges.
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, y := &all[a], &all[b]
		if x.trunk != y.trunk {
			if x.trunk {
				return -1
			}
			return 1
		}
		if xe, ye := sm.nodes[x.to].key == automaton.EndID, sm.nodes[y.to].key == automaton.EndID; xe != ye {
			if xe {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(y.common, x.common); c != 0 {
			return c
		}
		if c := cmp.Compare(x.from, y.from); c != 0 {
			return c
		}
		return cmp.Compare(x.to, y.to)
	})
	busiest := 0
	for _, e := range all {
		busiest = max(busiest, e.common)
	}
	drawn := make([]bool, len(all))
	n := 0
	for _, k := range order {
		e := &all[k]
		minor := e.common*minorShare < busiest || e.common < minDrawn
		if e.trunk || (e.common > 0 && !minor && n < MaxEdges) {
			drawn[k] = true
			n++
		}
	}
	for k := range all {
		e := &all[k]
		if drawn[k] {
			sm.edges = append(sm.edges, *e)
			continue
		}
		why := hiddenMinor
		if e.common < minDrawn {
			why = hiddenSeldom
		}
		sm.hide(e, why)
	}
	slices.SortStableFunc(sm.edges, func(a, b sumEdge) int {
		if c := cmp.Compare(a.from, b.from); c != 0 {
			return c
		}
		return cmp.Compare(a.to, b.to)
	})
	return sm
}

// hide counts e's transitions on the box it leaves (on the box it enters
// when it leaves __start__).
func (sm *summary) hide(e *sumEdge, why hiddenWhy) {
	at := e.from
	if sm.nodes[at].key == automaton.StartID {
		at = e.to
	}
	for _, t := range e.ts {
		sm.nodes[at].hidden.add(t, why)
	}
}

// lines are the lines of a box's label.
func (n *sumNode) lines(sm *summary) []string {
	var lines []string
	visitsOf := func() int {
		v := 0
		for _, s := range n.states {
			v += s.Visits
		}
		return v
	}
	switch n.kind {
	case kindPseudo:
		return []string{n.states[0].ID}
	case kindState:
		lines = stateLines(n.states[0])
	case kindRun:
		lines = []string{n.states[0].ID, fmt.Sprintf("… %d trunk states …", len(n.states)), n.states[len(n.states)-1].ID}
	case kindRest:
		lines = []string{fmt.Sprintf("+ %s", text.CountForm(len(n.states), "more state", "more states")), visits(visitsOf())}
	case kindStage:
		lines = []string{sm.stages[n.stage].Name, text.CountForm(len(n.states), "state", "states"), visits(visitsOf())}
	}
	if n.inside > 0 {
		lines = append(lines, text.CountForm(n.inside, "transition", "transitions")+" inside")
	}
	if h := n.hidden; h.n > 0 {
		var why []string
		for _, p := range []struct {
			n    int
			what string
		}{{h.rare, "rare"}, {h.generalized, "generalized"}, {h.seldom, "seldom"}, {h.minor, "minor"}, {h.crossing, "crossing"}} {
			if p.n > 0 {
				why = append(why, fmt.Sprintf("%d %s", p.n, p.what))
			}
		}
		line := fmt.Sprintf("+ %s not drawn", text.CountForm(h.n, "edge", "edges"))
		if len(why) > 0 {
			line += " (" + strings.Join(why, ", ") + ")"
		}
		lines = append(lines, line)
	}
	return lines
}

// caption is the caption of a summary edge: the transition's caption when
// it stands for one, else how many transitions it stands for and their
// count.
func (e *sumEdge) caption() string {
	if len(e.ts) == 1 {
		return edgeCaption(e.ts[0])
	}
	return fmt.Sprintf("%d transitions · %d", len(e.ts), e.count)
}

// summaryGraph is the DOT graph of DetailSummary, drawn top down with
// straight segments, every label at Graphviz's default 14 points so that a
// map fitted to a screen stays legible (MeasureLayout). An edge that goes
// back up the spine (spinePositions) is written from its head to its tail
// with dir=back. Stages drawn as clusters are named s1, s2, ... in the
// order of Stages; boxes are created in the summary's order, so node names
// are stable too.
func summaryGraph(m *automaton.Model, opt Options) (*dot.Graph, error) {
	sm, err := drawnSummary(m)
	if err != nil {
		return nil, err
	}
	return sm.graph(opt, false), nil
}

// graph is the DOT graph of sm (see summaryGraph); with ids, each drawn
// edge carries its index in sm.edges as its id, e0, e1, ..., for reading
// a layout back (untangle).
func (sm *summary) graph(opt Options, ids bool) *dot.Graph {
	g := dot.NewGraph(dot.Directed)
	// Top down, as process-mining tools draw, with straight segments: on
	// the real logs this crosses fewer edges than curves do (docs).
	g.Attr("rankdir", "TB")
	g.Attr("splines", "polyline")
	g.Attr("fontname", fontName)
	if opt.Title != "" {
		g.Attr("label", dotString(opt.Title))
		g.Attr("labelloc", "t")
	}
	clusters := make([]*dot.Graph, len(sm.stages))
	for i, st := range sm.stages {
		if !sm.cluster[i] {
			continue
		}
		c := g.Subgraph(fmt.Sprintf("stage %d", i), dot.ClusterOption{})
		c.Attr("label", dotLines(st.Name, text.CountForm(len(st.States), "state", "states")))
		c.Attr("style", "rounded")
		c.Attr("color", rareColor)
		c.Attr("fontname", fontName)
		clusters[i] = c
	}
	nodes := make([]dot.Node, len(sm.nodes))
	for i := range sm.nodes {
		sn := &sm.nodes[i]
		parent := g
		if sn.stage >= 0 && clusters[sn.stage] != nil {
			parent = clusters[sn.stage]
		}
		n := parent.Node(sn.key)
		n.Attr("fontname", fontName)
		ids := make([]string, len(sn.states))
		for j, s := range sn.states {
			ids[j] = s.ID
		}
		n.Attr("tooltip", dotString(strings.Join(ids, "\n")))
		if sn.trunk {
			n.Attr("group", "trunk")
		}
		switch {
		case sn.key == automaton.StartID:
			n.Attr("shape", "point")
			n.Attr("width", "0.15")
			n.Attr("height", "0.15")
			n.Attr("label", dotString(""))
		case sn.key == automaton.EndID:
			n.Attr("shape", "doublecircle")
			n.Attr("label", dotString(automaton.EndID))
		case sn.kind == kindState || sn.kind == kindRun:
			n.Attr("shape", "box")
			n.Attr("style", "rounded")
			n.Attr("label", dotLines(sn.lines(sm)...))
		default: // several states folded into one box
			n.Attr("shape", "box3d")
			n.Attr("color", rareColor)
			n.Attr("label", dotLines(sn.lines(sm)...))
		}
		nodes[i] = n
	}
	maxCount := 0
	for _, e := range sm.edges {
		maxCount = max(maxCount, e.count)
	}
	// An edge that goes back up the spine is drawn from its head to its
	// tail with the arrow reversed, so that Graphviz ranks an acyclic
	// graph and routes loops beside the spine rather than across it.
	pos := sm.spinePositions()
	before := func(a, b int) bool { return pos[a] < pos[b] || pos[a] == pos[b] && a < b }
	// A box that no drawn edge ties to the spine hangs from __start__ by an
	// invisible edge: in the row below it, beside the first box, rather
	// than in a row of its own beside the start's dot.
	for i, p := range pos {
		if p < 0 && sm.nodes[i].kind != kindPseudo {
			g.Edge(nodes[0], nodes[i]).Attr("style", "invis")
		}
	}
	for i := range sm.edges {
		se := &sm.edges[i]
		var e dot.Edge
		up := pos[se.to] < pos[se.from] // drawn orange: back up the spine
		if before(se.to, se.from) {
			e = g.Edge(nodes[se.to], nodes[se.from])
			e.Attr("dir", "back")
		} else {
			e = g.Edge(nodes[se.from], nodes[se.to])
		}
		e.Attr("label", dotString(se.caption()))
		e.Attr("fontname", fontName)
		if ids {
			e.Attr("id", edgeID(i))
		}
		width := 1.0
		if maxCount > 0 {
			width += 4 * float64(se.count) / float64(maxCount)
		}
		var style []string
		if se.trunk {
			style = append(style, "bold")
			width++
			e.Attr("weight", "100") // keep the spine straight
		}
		e.Attr("penwidth", strconv.FormatFloat(width, 'f', 2, 64))
		// Orange is what the picture shows: an edge back up the spine, not
		// one between two boxes at one place on it, nor a model's back
		// edge (by distance from __start__) that runs down it.
		if up && !se.trunk {
			e.Attr("color", backEdgeColor)
			e.Attr("fontcolor", backEdgeColor)
		}
		if len(style) > 0 {
			e.Attr("style", strings.Join(style, ","))
		}
	}
	return g
}

// spinePositions places each box of sm along the spine, for drawing edges
// that go back up it: the trunk's boxes at 0, 1, 2, ... in the trunk's
// order (__start__ first, __end__ last), and a box off the trunk half a
// step below the box whose drawn edge into it is busiest (of the boxes
// already placed; then half a step above the one its busiest drawn edge
// leads to). A box that no drawn edge ties to the spine is at -1.
func (sm *summary) spinePositions() []float64 {
	pos := make([]float64, len(sm.nodes))
	placed := make([]bool, len(sm.nodes))
	k := 0
	for i := range sm.nodes {
		if sm.nodes[i].trunk {
			pos[i], placed[i] = float64(k), true
			k++
		}
	}
	byCount := make([]*sumEdge, len(sm.edges))
	for i := range sm.edges {
		byCount[i] = &sm.edges[i]
	}
	slices.SortStableFunc(byCount, func(a, b *sumEdge) int { return cmp.Compare(b.count, a.count) })
	for changed := true; changed; {
		changed = false
		for _, e := range byCount {
			if placed[e.from] && !placed[e.to] {
				pos[e.to], placed[e.to] = math.Floor(pos[e.from])+0.5, true
				changed = true
				break // the busiest edge first, whatever placed its tail
			}
		}
		if changed {
			continue
		}
		for _, e := range byCount {
			if placed[e.to] && !placed[e.from] {
				pos[e.from], placed[e.from] = math.Ceil(pos[e.to])-0.5, true
				changed = true
				break
			}
		}
	}
	for i := range pos {
		if !placed[i] {
			pos[i] = -1
		}
	}
	return pos
}

// mermaidSummary is the Mermaid text of DetailSummary: the boxes of the
// summary as states (a box of several states shows what it stands for in
// its description), each stage drawn as a cluster a composite state, and
// the drawn edges as transitions. Mermaid ids are made from the boxes' keys
// as Mermaid's own writer makes them from state ids.
func mermaidSummary(m *automaton.Model, opt Options) ([]byte, error) {
	sm, err := drawnSummary(m)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(sm.nodes)+len(sm.stages))
	for _, n := range sm.nodes {
		keys = append(keys, n.key)
	}
	for i := range sm.stages {
		keys = append(keys, fmt.Sprintf("stage %d", i)+" cluster")
	}
	names := uniqueNames(keys, mermaidID)
	var b strings.Builder
	if opt.Title != "" {
		title, _ := json.Marshal(shownText(opt.Title)) // as Mermaid writes it; a string always marshals
		fmt.Fprintf(&b, "---\ntitle: %s\n---\n", title)
	}
	b.WriteString("stateDiagram-v2\n    direction LR\n")
	declare := func(indent string, n *sumNode) {
		fmt.Fprintf(&b, "%sstate \"%s\" as %s\n", indent, mermaidText(strings.Join(n.lines(sm), " · ")), names[n.key])
	}
	for si, st := range sm.stages {
		if sm.cluster[si] {
			fmt.Fprintf(&b, "    state \"%s\" as %s {\n", mermaidText(st.Name), names[fmt.Sprintf("stage %d", si)+" cluster"])
			for i := range sm.nodes {
				if sm.nodes[i].stage == si {
					declare("        ", &sm.nodes[i])
				}
			}
			b.WriteString("    }\n")
			continue
		}
		for i := range sm.nodes {
			if sm.nodes[i].stage == si {
				declare("    ", &sm.nodes[i])
			}
		}
	}
	// Mermaid draws no transition between states inside two different
	// composite states, so an edge that leaves or enters a composite state
	// is drawn from or to the composite state itself, and edges that then
	// join the same two ends are drawn as one.
	end := func(i, other int) string {
		n, o := &sm.nodes[i], &sm.nodes[other]
		switch {
		case n.kind == kindPseudo:
			return "[*]"
		case sm.cluster[n.stage] && n.stage != o.stage:
			return names[fmt.Sprintf("stage %d", n.stage)+" cluster"]
		}
		return names[n.key]
	}
	type line struct {
		from, to string
		edge     sumEdge
	}
	var lines []*line
	byEnds := map[[2]string]*line{}
	for i := range sm.edges {
		e := sm.edges[i]
		ends := [2]string{end(e.from, e.to), end(e.to, e.from)}
		if l := byEnds[ends]; l != nil {
			l.edge.ts = append(slices.Clone(l.edge.ts), e.ts...)
			l.edge.count += e.count
			continue
		}
		l := &line{ends[0], ends[1], e}
		byEnds[ends] = l
		lines = append(lines, l)
	}
	for _, l := range lines {
		fmt.Fprintf(&b, "    %s --> %s : %s\n", l.from, l.to, mermaidText(l.edge.caption()))
	}
	return []byte(b.String()), nil
}

// stageView is a stage as the report's Stages section shows it.
type stageView struct {
	Name            string
	States          []stageRow
	Edges           []edgeRow // every transition that touches the stage
	Visits          int
	Inside, In, Out int
	Diagram         *diagram // the transitions inside the stage, or a note
}

type stageRow struct {
	ID, Label        string
	Visits, Sessions int
	Trunk            bool
}

// maxStageEdges is the most transitions inside a stage that the report
// draws; above it, the common ones only, and above it again none.
const maxStageEdges = 60

// stageViews lays out the report's Stages section for a sorted model.
func stageViews(m *automaton.Model, lay Options) ([]stageView, error) {
	trunk := trunkEdges(m)
	onTrunk := map[string]bool{}
	for _, id := range m.Trunk {
		onTrunk[id] = true
	}
	var views []stageView
	for _, st := range stagesOf(m) {
		in := map[string]bool{}
		v := stageView{Name: st.Name}
		sub := &automaton.Model{Schema: m.Schema, Initial: automaton.StartID}
		for _, id := range st.States {
			in[id] = true
			s := m.State(id)
			v.States = append(v.States, stageRow{s.ID, s.Label, s.Visits, s.Sessions, onTrunk[id]})
			v.Visits += s.Visits
			sub.States = append(sub.States, *s)
		}
		common := 0
		for i := range m.Transitions {
			t := &m.Transitions[i]
			if !in[t.From] && !in[t.To] {
				continue
			}
			v.Edges = append(v.Edges, edgeRow{t.From, t.Event, t.To, t.Count, t.Sessions, t.Prob, t.Rare, t.BackEdge, trunk[t], t.Generalized})
			switch {
			case in[t.From] && in[t.To]:
				v.Inside++
				sub.Transitions = append(sub.Transitions, *t)
				if !t.Rare {
					common++
				}
			case in[t.To]:
				v.In++
			default:
				v.Out++
			}
		}
		if len(st.States) > 1 && v.Inside > 0 {
			sub.Reindex()
			opt := Options{Engine: lay.Engine, Timeout: lay.Timeout}
			note := ""
			switch {
			case common > maxStageEdges:
				v.Diagram = &diagram{Note: fmt.Sprintf("No picture: %s common transitions inside this stage are more than a picture can show (%d); the table lists them.", thousands(common), maxStageEdges)}
			case v.Inside > maxStageEdges:
				opt.HideRare = true
				note = fmt.Sprintf("Rare transitions are not drawn (%s of %s).", thousands(v.Inside-common), thousands(v.Inside))
			}
			if v.Diagram == nil {
				doc, err := modelSVG(sub, opt)
				dg, err := picture("stage "+st.Name, doc, err, "The table lists its transitions.")
				if err != nil {
					return nil, err
				}
				if dg.SVG != "" {
					dg.Note = note
				}
				v.Diagram = dg
			}
		}
		views = append(views, v)
	}
	return views, nil
}
