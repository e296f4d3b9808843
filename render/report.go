package render

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsmine/fsmine/automaton/measure"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// DiagramMode says which transitions the picture of a report draws.
type DiagramMode string

// Diagram modes. DiagramAuto is also the zero value.
const (
	// DiagramAuto draws every transition of a model with at most
	// AutoDiagramLimit transitions, only the common ones (as DiagramCommon)
	// of a larger model, and no picture at all, but a note saying why, when
	// even those are more than twice AutoDiagramLimit.
	DiagramAuto DiagramMode = "auto"
	// DiagramAll draws every transition.
	DiagramAll DiagramMode = "all"
	// DiagramCommon leaves rare transitions out of the picture, as
	// Options.HideRare does; the report's tables still list them all.
	DiagramCommon DiagramMode = "common"
	// DiagramNone leaves the picture out.
	DiagramNone DiagramMode = "none"
)

// DiagramModes lists the modes in the order the command line documents them.
var DiagramModes = []DiagramMode{DiagramAuto, DiagramAll, DiagramCommon, DiagramNone}

// AutoDiagramLimit is the number of transitions above which DiagramAuto
// leaves rare transitions out of the picture; above twice as many, it
// draws none. Laying out every one of the 470 transitions of a model of the
// BPI 2012 log took the builtin Graphviz 35 to 80 seconds of CPU (on a
// loaded two-core machine) and gives a picture 28,500 by 6,600 points; its
// 250 common ones take half a second.
// An overlay of 590 transitions (two models of that log, mined with
// different merges) took 62 seconds, and would not read. The tables of the
// report list every transition either way.
const AutoDiagramLimit = 200

// ReportOptions shape Report.
type ReportOptions struct {
	// Title is the page's heading; empty means "fsmine model vN".
	Title string
	// File names the model file as the user gave it, shown under the
	// heading; it may be empty.
	File string
	// Diagram says which transitions the picture draws; empty means
	// DiagramAuto.
	Diagram DiagramMode
	// ClusterSep groups the picture's states as Options.ClusterSep does.
	ClusterSep string
	// Engine lays the picture out, as Options.Engine does for SVG.
	Engine Engine
	// Timeout limits each picture's layout, as Options.Timeout does; a
	// picture that takes longer is left out with a note saying so.
	Timeout time.Duration
	// Detail is DetailFull (also the zero value: the picture Diagram
	// asks for) or DetailSummary: the summary DOT draws (Diagram none
	// still draws none), and a Stages section where each stage opens to
	// its states, its transitions and a picture of the transitions inside
	// it.
	Detail Detail
	// Measures, when not nil, adds the Cost and latency section: what logs
	// say of each state and transition (see Measures).
	Measures *Measures
	// Failures, when not nil, adds the Where sessions fail section: the
	// states and moves whose sessions fail more often than the log's (see
	// stats.Failures).
	Failures *measure.FailureReport
	// Design, when not nil, adds the Design vs reality section: the
	// designed model (fsmine import) drawn beside the map, and its moves
	// held against the ones the model's sessions took
	// (automaton.CompareDesign). DesignFile names its file.
	Design     *automaton.Model
	DesignFile string
}

// DiffReportOptions shape DiffReport.
type DiffReportOptions struct {
	// OldFile and NewFile name the two model files as the user gave them.
	OldFile, NewFile string
	// Diagram says which transitions the overlay draws. DiagramCommon (and
	// DiagramAuto, for a union of more than AutoDiagramLimit transitions)
	// leaves out the transitions that are rare in both models and did not
	// change, and the states left without a transition that did not change
	// either; every change is drawn. DiagramAuto draws no overlay, but a
	// note, when that still leaves more than twice AutoDiagramLimit;
	// DiagramCommon draws it anyway.
	Diagram DiagramMode
	// Engine lays the overlay out, as Options.Engine does for SVG.
	Engine Engine
	// Timeout limits the overlay's layout, as Options.Timeout does; past
	// it the overlay is left out with a note saying so.
	Timeout time.Duration
}

// errUnknownMode is returned for a DiagramMode that is not one of
// DiagramModes.
var errUnknownMode = errors.New("unknown diagram mode")

func checkMode(mode DiagramMode) (DiagramMode, error) {
	if mode == "" {
		return DiagramAuto, nil
	}
	if !slices.Contains(DiagramModes, mode) {
		return "", fmt.Errorf("%w %q", errUnknownMode, mode)
	}
	return mode, nil
}

// modelSVG lays m out as an SVG document: the one place the report asks for
// a picture.
func modelSVG(m *automaton.Model, opt Options) ([]byte, error) {
	var buf bytes.Buffer
	if err := SVG(&buf, m, opt); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// dotSVG lays DOT source of a picture in full out as an SVG document with
// lay's engine and timeout, for the diff overlay and the design.
func dotSVG(src []byte, lay Options) ([]byte, error) {
	return layOut(src, "svg", lay, true)
}

// picture is the report's diagram of what, the SVG document doc that
// modelSVG or dotSVG gave with err: where the layout took longer than its
// timeout, a note saying so and that tables (what below lists its
// contents) hold the rest.
func picture(what string, doc []byte, err error, tables string) (*diagram, error) {
	if errors.Is(err, ErrLayoutTimeout) {
		return &diagram{Note: fmt.Sprintf("No picture: %v. %s", err, tables)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("drawing %s: %w", what, err)
	}
	return newDiagram(doc)
}

// Report writes m as one self-contained HTML page for a reviewer to read
// offline: a summary, the picture (SVG inline, laid out as SVG lays it out),
// the trunk edge by edge, the top variants, every rare transition with its
// count, share and sessions, the loops with their iterations and back edges,
// per-state visits, sessions and dwell, every transition, and the model's
// provenance (version, parent, digest and whether it matches the content,
// created, generator, source files, counters and parameters, the label rules
// included).
//
// The page fetches nothing: its style is inline, its one script (which
// sorts a table when its heading is clicked) is inline and allowed by its
// hash in the page's Content-Security-Policy, which allows nothing else.
// Every id, label, event and path is escaped by html/template, and the SVG
// is checked to hold only drawing elements (see inlineSVG), so a model's
// text is shown, never run. The output depends on the model's content only:
// the same model gives the same bytes whatever the order of its states and
// transitions as read. It is buffered and written to w once.
func Report(w io.Writer, m *automaton.Model, opt ReportOptions) error {
	mode, err := checkMode(opt.Diagram)
	if err != nil {
		return err
	}
	m, err = sorted(m)
	if err != nil {
		return err
	}
	page := modelPage(m, opt)
	page.Measures = measuresPage(opt.Measures)
	page.Failures = opt.Failures
	if opt.Design != nil {
		if page.Design, err = designPage(opt.Design, opt.DesignFile, m, Options{Engine: opt.Engine, Timeout: opt.Timeout}); err != nil {
			return err
		}
	}
	rare := 0
	for _, t := range m.Transitions {
		if t.Rare {
			rare++
		}
	}
	if opt.Detail == DetailSummary {
		if mode != DiagramNone {
			doc, err := modelSVG(m, Options{Detail: DetailSummary, Engine: opt.Engine, Timeout: opt.Timeout})
			dg, err := picture("the model", doc, err, "The tables below list every transition.")
			if err != nil {
				return err
			}
			dg.Summary = dg.SVG != ""
			page.Diagram = dg
		}
		stages, err := stageViews(m, Options{Engine: opt.Engine, Timeout: opt.Timeout})
		if err != nil {
			return err
		}
		page.Stages = stages
		return execute(w, "model", page)
	}
	if mode == DiagramAuto {
		mode = DiagramAll
		if len(m.Transitions) > AutoDiagramLimit {
			mode = DiagramCommon
		}
		if common := len(m.Transitions) - rare; common > 2*AutoDiagramLimit {
			mode = DiagramNone
			page.Diagram = &diagram{Note: fmt.Sprintf("No picture: even without its rare transitions the model has %s, "+
				"more than a picture can show (%d); ask for the common diagram to draw it anyway. The tables below list every transition.",
				thousands(common), 2*AutoDiagramLimit)}
		}
	}
	if mode != DiagramNone && opt.Engine.builtin() {
		if err := checkTangle(tangle(m, mode == DiagramCommon), uncounted(m)); err != nil {
			mode = DiagramNone
			page.Diagram = &diagram{Note: fmt.Sprintf("No picture: %v. The tables below list every transition.", err)}
		}
	}
	if mode != DiagramNone {
		ropt := Options{HideRare: mode == DiagramCommon, ClusterSep: opt.ClusterSep, Engine: opt.Engine, Timeout: opt.Timeout}
		doc, err := modelSVG(m, ropt)
		dg, err := picture("the model", doc, err, "The tables below list every transition.")
		if err != nil {
			return err
		}
		if mode == DiagramCommon && dg.SVG != "" {
			dg.Note = fmt.Sprintf("Rare transitions are not drawn (%s of %s): the Rare branches table lists every one.",
				thousands(rare), thousands(len(m.Transitions)))
		}
		page.Diagram = dg
	}
	return execute(w, "model", page)
}

// DiffReport writes the difference d between old and new as one
// self-contained HTML page, made as Report's is: the two versions, a
// summary, the overlay of DiffDOT laid out as SVG, and a table for each
// kind of change (states, transitions, share changes, outflow shifts, rare
// flips, loops, trunk) with the tests' thresholds. d must be
// automaton.Compare(old, new, ...).
func DiffReport(w io.Writer, old, new *automaton.Model, d *automaton.Diff, opt DiffReportOptions) error {
	if old == nil || new == nil {
		return ErrNilModel
	}
	mode, err := checkMode(opt.Diagram)
	if err != nil {
		return err
	}
	page := diffPageFor(old, new, d, opt)
	if mode != DiagramNone {
		o, n := old, new
		union := unionSize(old, new)
		if mode == DiagramCommon || mode == DiagramAuto && union > AutoDiagramLimit {
			o, n = quietRare(old, d), quietRare(new, d)
		}
		if drawn := unionSize(o, n); mode == DiagramAuto && drawn > 2*AutoDiagramLimit {
			page.Diagram = &diagram{Note: fmt.Sprintf("No overlay: without the unchanged rare transitions it would still have %s transitions, "+
				"more than a picture can show (%d). The tables below list every change.",
				thousands(drawn), 2*AutoDiagramLimit)}
			return execute(w, "diff", page)
		}
		var src bytes.Buffer
		if err := DiffDOT(&src, o, n, d); err != nil {
			return err
		}
		doc, err := dotSVG(src.Bytes(), Options{Engine: opt.Engine, Timeout: opt.Timeout})
		dg, err := picture("the overlay", doc, err, "The tables below list every change.")
		if err != nil {
			return err
		}
		if o != old && dg.SVG != "" {
			dg.Note = fmt.Sprintf("Transitions rare in both models that did not change are not drawn (the overlay has %s of %s); every change is.",
				thousands(unionSize(o, n)), thousands(union))
		}
		page.Diagram = dg
	}
	return execute(w, "diff", page)
}

// unionSize is the number of distinct (from, event, to) of both models.
func unionSize(a, b *automaton.Model) int {
	seen := make(map[automaton.EdgeRef]bool, len(a.Transitions)+len(b.Transitions))
	for _, m := range []*automaton.Model{a, b} {
		for _, t := range m.Transitions {
			seen[automaton.EdgeRef{From: t.From, Event: t.Event, To: t.To}] = true
		}
	}
	return len(seen)
}

// quietRare returns a copy of m without the rare transitions that d does not
// name (added, removed, changed share or flipped), and without the states
// left untouched by any transition that d does not name either; __start__
// and __end__ stay.
func quietRare(m *automaton.Model, d *automaton.Diff) *automaton.Model {
	named := map[automaton.EdgeRef]bool{}
	for _, t := range d.TransitionsAdded {
		named[automaton.EdgeRef{From: t.From, Event: t.Event, To: t.To}] = true
	}
	for _, t := range d.TransitionsRemoved {
		named[automaton.EdgeRef{From: t.From, Event: t.Event, To: t.To}] = true
	}
	for _, c := range d.ShareChanges {
		named[automaton.EdgeRef{From: c.From, Event: c.Event, To: c.To}] = true
	}
	for _, f := range d.RareFlips {
		named[automaton.EdgeRef{From: f.From, Event: f.Event, To: f.To}] = true
	}
	namedState := map[string]bool{automaton.StartID: true, automaton.EndID: true}
	for _, s := range d.StatesAdded {
		namedState[s.ID] = true
	}
	for _, s := range d.StatesRemoved {
		namedState[s.ID] = true
	}
	for _, s := range d.StatesRelabeled {
		namedState[s.ID] = true
	}
	for _, s := range d.OutflowShifts {
		namedState[s.State] = true
	}
	c := *m
	c.Transitions = nil
	touched := map[string]bool{}
	for _, t := range m.Transitions {
		if t.Rare && !named[automaton.EdgeRef{From: t.From, Event: t.Event, To: t.To}] {
			continue
		}
		c.Transitions = append(c.Transitions, t)
		touched[t.From], touched[t.To] = true, true
	}
	c.States = nil
	for _, s := range m.States {
		if touched[s.ID] || namedState[s.ID] {
			c.States = append(c.States, s)
		}
	}
	c.Reindex()
	return &c
}

// execute runs the named page template and writes the result to w once.
func execute(w io.Writer, name string, page any) error {
	var buf bytes.Buffer
	if err := reportTemplates().ExecuteTemplate(&buf, name, page); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// diagram is a picture ready to inline: the SVG element and its natural
// width in CSS pixels, which the page's zoom control needs.
type diagram struct {
	SVG     template.HTML
	Width   string
	Note    string
	Summary bool // the picture is a summary (DetailSummary)
}

func newDiagram(doc []byte) (*diagram, error) {
	svg, width, err := inlineSVG(doc)
	if err != nil {
		return nil, err
	}
	return &diagram{SVG: svg, Width: strconv.FormatFloat(width, 'f', 1, 64)}, nil
}

const (
	svgNS   = "http://www.w3.org/2000/svg"
	xlinkNS = "http://www.w3.org/1999/xlink"
)

// svgElements are the elements an inlined picture may hold: what Graphviz
// draws with. Anything else (script, foreignObject, style, image, use,
// animate...) makes inlineSVG refuse the picture.
var svgElements = map[string]bool{
	"svg": true, "g": true, "title": true, "desc": true, "a": true,
	"path": true, "polygon": true, "polyline": true, "ellipse": true, "circle": true,
	"rect": true, "line": true, "text": true, "tspan": true,
	"defs": true, "linearGradient": true, "radialGradient": true, "stop": true,
}

// inlineSVG makes an SVG document fit to stand inside an HTML page: the XML
// declaration, doctype, comments and processing instructions go, and what
// remains, the svg element, is returned byte for byte as the layout wrote
// it, with its width in CSS pixels (from its viewBox, in points). It refuses
// a document whose root is not svg or that holds an element outside
// svgElements, an attribute named on... (an event handler), any href or
// style attribute, or an attribute in a namespace other than xlink's: only
// drawing is let through, so whatever the model's ids say stays text.
func inlineSVG(doc []byte) (template.HTML, float64, error) {
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Entity = xml.HTMLEntity // Graphviz passes entity references in labels through
	var out bytes.Buffer
	depth := 0
	width := 0.0
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", 0, fmt.Errorf("reading the SVG: %w", err)
		}
		end := dec.InputOffset()
		switch t := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if t.Name.Local != "svg" || out.Len() > 0 {
					return "", 0, fmt.Errorf("reading the SVG: the root element is <%s>, not <svg>", t.Name.Local)
				}
				width = viewBoxWidth(t) * 96 / 72
			}
			if t.Name.Space != svgNS || !svgElements[t.Name.Local] {
				return "", 0, fmt.Errorf("the SVG holds a <%s> element, which a report does not inline", t.Name.Local)
			}
			for _, a := range t.Attr {
				name := strings.ToLower(a.Name.Local)
				switch {
				case a.Name.Space == "xmlns" || a.Name.Space == "" && name == "xmlns":
				case strings.HasPrefix(name, "on"), name == "href", name == "style",
					a.Name.Space != "" && a.Name.Space != xlinkNS:
					return "", 0, fmt.Errorf("the SVG's <%s> has a %q attribute, which a report does not inline", t.Name.Local, a.Name.Local)
				}
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.Comment, xml.ProcInst, xml.Directive:
			continue
		case xml.CharData:
			if depth == 0 {
				continue // the line breaks around the prolog
			}
		}
		if depth > 0 || isEnd(tok) {
			out.Write(doc[start:end])
		}
		if depth == 0 && isEnd(tok) {
			out.WriteByte('\n')
		}
	}
	if out.Len() == 0 {
		return "", 0, errors.New("reading the SVG: no <svg> element")
	}
	return template.HTML(out.String()), width, nil
}

func isEnd(tok xml.Token) bool {
	_, ok := tok.(xml.EndElement)
	return ok
}

// viewBoxWidth is the width of an svg element's viewBox, or 0.
func viewBoxWidth(svg xml.StartElement) float64 {
	for _, a := range svg.Attr {
		if a.Name.Local == "viewBox" {
			f := strings.Fields(strings.ReplaceAll(a.Value, ",", " "))
			if len(f) == 4 {
				if w, err := strconv.ParseFloat(f[2], 64); err == nil && w > 0 && !math.IsInf(w, 0) {
					return w
				}
			}
		}
	}
	return 0
}

// fact is one labelled value of a summary or a key-value table.
type fact struct {
	Name, Value string
}

// edgeRow is a transition as the tables show it.
type edgeRow struct {
	From, Event, To string
	Count, Sessions int
	Prob            float64
	Rare, Back      bool
	Trunk           bool
	Generalized     string
}

type stateRow struct {
	ID, Label string
	Visits    int
	Sessions  int
	Dwell     *automaton.Dwell
	Trunk     bool
	Pseudo    bool
	Examples  []exampleLink
}

// linkedEdge is a transition row with its example sessions.
type linkedEdge struct {
	edgeRow
	Examples []exampleLink
}

type variantRow struct {
	Rank, Count int
	Share       float64
	States      []string
	Trunk       bool
}

type loopRow struct {
	States                    []string
	BackEdges                 []automaton.EdgeRef
	Count, Sessions, Max, P95 int
}

type modelView struct {
	Head        string // the page's <title>
	Title, File string
	Facts       []fact
	Diagram     *diagram

	TrunkPath     []string // __start__, the trunk, __end__
	Trunk         []edgeRow
	TrunkExact    int // sessions that took exactly the trunk, or -1 when not known
	TrunkShare    float64
	Variants      []variantRow
	VariantsTotal int
	VariantsShown float64 // share of sessions the listed variants cover
	Sessions      int

	RareRule string
	Rare     []linkedEdge
	Loops    []loopRow
	// Constraints are the model's rules over whole sessions.
	Constraints []constraintRow
	States      []stateRow
	Edges       []linkedEdge
	// HasExamples shows the examples columns: the model keeps example
	// sessions.
	HasExamples bool
	// Measures is the Cost and latency section, when logs were given.
	Measures *measuresView
	// Failures is the Where sessions fail section, when asked for.
	Failures *measure.FailureReport
	// Design is the Design vs reality section, when a design was given.
	Design *designView

	Stages []stageView

	Prov provenance
}

type provenance struct {
	Schema      string
	Version     int
	Parent      *automaton.Parent
	Digest      string
	DigestCheck string
	DigestClass string // ok, muted (no digest stored) or bad (a mismatch)
	Created     string
	Generator   string
	Files       []automaton.SourceFile
	Counters    []fact
	Params      []fact
	Labels      string
}

func modelPage(m *automaton.Model, opt ReportOptions) *modelView {
	v := &modelView{
		Title:      opt.Title,
		File:       opt.File,
		Sessions:   m.Source.Sessions,
		TrunkExact: -1,
	}
	if v.Title == "" {
		v.Title = fmt.Sprintf("fsmine model v%d", m.Version)
	}
	v.Head = v.Title
	if v.File != "" {
		v.Head += " · " + shownText(v.File)
	}
	trunk := trunkEdges(m)
	onTrunk := map[string]bool{}
	for _, id := range m.Trunk {
		onTrunk[id] = true
	}

	rare, back := 0, 0
	for i := range m.Transitions {
		t := &m.Transitions[i]
		row := linkedEdge{edgeRow: edgeRow{t.From, t.Event, t.To, t.Count, t.Sessions, t.Prob, t.Rare, t.BackEdge, trunk[t], t.Generalized}}
		if t.Generalized == "" {
			row.Examples = examplesOf(m, t.Examples)
		}
		v.Edges = append(v.Edges, row)
		if t.Rare {
			rare++
			v.Rare = append(v.Rare, row)
		}
		if t.BackEdge {
			back++
		}
	}
	states := 0
	for _, s := range m.States {
		v.States = append(v.States, stateRow{s.ID, s.Label, s.Visits, s.Sessions, s.DwellMS, onTrunk[s.ID], isPseudo(s.ID), examplesOf(m, s.Examples)})
		if !isPseudo(s.ID) {
			states++
		}
	}
	backEdges := "back edges"
	if back == 1 {
		backEdges = "back edge"
	}
	v.Facts = []fact{
		{"sessions", thousands(m.Source.Sessions)},
		{"events", thousands(m.Source.Events)},
		{"states", fmt.Sprintf("%s (+ start and end)", thousands(states))},
		{"transitions", fmt.Sprintf("%s (%s rare, %s %s)", thousands(len(m.Transitions)), thousands(rare), thousands(back), backEdges)},
		{"loops", thousands(len(m.Loops))},
		{"variants", thousands(m.Variants)},
	}

	// The trunk, edge by edge, from __start__ to __end__.
	if len(m.Trunk) > 0 {
		path := append(append([]string{automaton.StartID}, m.Trunk...), automaton.EndID)
		v.TrunkPath = path
		for i := 0; i+1 < len(path); i++ {
			row := edgeRow{From: path[i], To: path[i+1], Count: -1}
			for _, t := range m.Out(path[i]) {
				if t.To == path[i+1] {
					row = edgeRow{t.From, t.Event, t.To, t.Count, t.Sessions, t.Prob, t.Rare, t.BackEdge, true, t.Generalized}
					break
				}
			}
			v.Trunk = append(v.Trunk, row)
		}
	}

	// Variants, most frequent first.
	vs := slices.Clone(m.TopVariants)
	slices.SortStableFunc(vs, func(a, b automaton.Variant) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return slices.Compare(a.States, b.States)
	})
	covered := 0
	for i, x := range vs {
		isTrunk := len(m.Trunk) > 0 && slices.Equal(x.States, m.Trunk)
		v.Variants = append(v.Variants, variantRow{i + 1, x.Count, text.Share(x.Count, m.Source.Sessions), x.States, isTrunk})
		covered += x.Count
		if isTrunk && v.TrunkExact < 0 {
			v.TrunkExact = x.Count
			v.TrunkShare = text.Share(x.Count, m.Source.Sessions)
		}
	}
	v.VariantsTotal = m.Variants
	v.VariantsShown = text.Share(covered, m.Source.Sessions)

	v.RareRule = rareRule(m.Params)
	for _, l := range m.Loops {
		states := slices.Clone(l.States)
		slices.SortFunc(states, automaton.CompareIDs)
		edges := slices.Clone(l.BackEdges)
		slices.SortFunc(edges, func(a, b automaton.EdgeRef) int {
			return automaton.CompareEdges(&automaton.Transition{From: a.From, Event: a.Event, To: a.To},
				&automaton.Transition{From: b.From, Event: b.Event, To: b.To})
		})
		v.Loops = append(v.Loops, loopRow{states, edges, l.Count, l.Sessions, l.MaxIterations, l.P95Iterations})
	}
	for _, c := range m.Constraints {
		v.Constraints = append(v.Constraints, constraintRow{Kind: c.Kind, A: c.A, B: c.B, Or: c.Or, Support: c.Support, Confidence: c.Confidence})
	}
	v.HasExamples = hasExamples(m)
	v.Prov = provenanceOf(m)
	return v
}

// constraintRow is one constraint of the report's Constraints section.
type constraintRow struct {
	Kind       string
	A, B       string
	Or         []string // a precedence's alternatives to A
	Support    int
	Confidence float64
}

// rareRule says in words which transitions the miner flagged rare.
func rareRule(p automaton.Params) string {
	var parts []string
	if p.RareRatio > 0 {
		parts = append(parts, "its share of its source's outflow is below "+strconv.FormatFloat(100*p.RareRatio, 'g', 6, 64)+"%")
	}
	switch {
	case p.RareCount == 1:
		parts = append(parts, "it was never taken")
	case p.RareCount > 1:
		parts = append(parts, fmt.Sprintf("it was taken fewer than %s times", thousands(p.RareCount)))
	}
	if len(parts) == 0 {
		return "The model records no rule for rare transitions."
	}
	return "A transition is rare when " + strings.Join(parts, " or ") + "."
}

func provenanceOf(m *automaton.Model) provenance {
	p := provenance{
		Schema:    m.Schema,
		Version:   m.Version,
		Parent:    m.Parent,
		Digest:    m.Digest,
		Created:   m.Created,
		Generator: m.Generator,
		Files:     slices.Clone(m.Source.Files),
	}
	computed := m.ComputeDigest()
	legacy := m.Digest != computed && m.VerifyDigest() == nil
	switch {
	case m.Digest == "":
		p.DigestClass = "muted"
		p.DigestCheck = "No digest stored; the content's digest is " + computed + "."
	case m.Digest == computed:
		p.DigestClass = "ok"
		p.DigestCheck = "Matches the model's content."
	case legacy:
		p.DigestClass = "muted"
		p.DigestCheck = "A digest of an earlier fsmine, which matches the model's content but leaves out some of what is enforced (back-edge marks; in the first kind, visits, probabilities and loops too); fsmine seal gives it one that covers them, " + computed + "."
	default:
		p.DigestClass = "bad"
		p.DigestCheck = "Does not match the model's content, whose digest is " + computed + ": the file was edited after it was written."
	}
	s := m.Source
	p.Counters = []fact{
		{"sessions", thousands(s.Sessions)},
		{"events (visits after labelling)", thousands(s.Events)},
		{"records", thousands(s.Records)},
		{"skipped (bad lines)", thousands(s.Skipped)},
		{"duplicates", thousands(s.Duplicates)},
		{"dropped (by label rules)", thousands(s.Dropped)},
		{"folded", thousands(s.Folded)},
		{"detours", thousands(s.Detours)},
		{"step gaps", thousands(s.StepGaps)},
	}
	if s.LeftOut > 0 {
		p.Counters = append(p.Counters, fact{"left out (by --lifecycle or span folding)", thousands(s.LeftOut)})
	}
	pr := m.Params
	p.Params = []fact{{"format", orNone(pr.Format)}}
	fields := make([]string, 0, len(pr.Fields))
	for k := range pr.Fields {
		fields = append(fields, k)
	}
	slices.Sort(fields)
	var fs []string
	for _, k := range fields {
		fs = append(fs, k+"="+pr.Fields[k])
	}
	p.Params = append(p.Params, fact{"fields", orNone(strings.Join(fs, ", "))})
	p.Params = append(p.Params, fact{"merge", orNone(pr.Merge)})
	if pr.Alpha != 0 {
		p.Params = append(p.Params, fact{"alpha", strconv.FormatFloat(pr.Alpha, 'g', -1, 64)})
	}
	if pr.K != 0 {
		p.Params = append(p.Params, fact{"k", strconv.Itoa(pr.K)})
	}
	p.Params = append(p.Params,
		fact{"rare_count", strconv.Itoa(pr.RareCount)},
		fact{"rare_ratio", strconv.FormatFloat(pr.RareRatio, 'g', -1, 64)})
	if pr.Examples != 0 {
		p.Params = append(p.Params, fact{"examples", strconv.Itoa(pr.Examples)})
	}
	if pr.Link != "" {
		p.Params = append(p.Params, fact{"link", pr.Link})
	}
	if len(pr.Labels) > 0 {
		var buf bytes.Buffer
		if err := json.Indent(&buf, pr.Labels, "", "  "); err == nil {
			p.Labels = buf.String()
		} else {
			p.Labels = string(pr.Labels)
		}
		// A JSON string may hold control and bidi characters as they are;
		// the page shows them escaped, its lines kept.
		p.Labels = text.Terminal(p.Labels)
	}
	return p
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// diffView is what the diff page shows.
type diffView struct {
	Head             string // the page's <title>
	Title            string
	OldFile, NewFile string
	Old, New         sideView
	Summary          string
	Empty            bool
	D                *automaton.Diff
	Diagram          *diagram
}

type sideView struct {
	Version  int
	Digest   string
	Sessions int
	Created  string
	States   int
	Edges    int
}

func diffPageFor(old, new *automaton.Model, d *automaton.Diff, opt DiffReportOptions) *diffView {
	side := func(m *automaton.Model, s automaton.Side) sideView {
		return sideView{s.Version, s.Digest, s.Sessions, m.Created, len(m.States), len(m.Transitions)}
	}
	v := &diffView{
		OldFile: opt.OldFile,
		NewFile: opt.NewFile,
		Old:     side(old, d.Old),
		New:     side(new, d.New),
		Summary: diffSummary(d),
		Empty:   d.Empty(),
		D:       d,
	}
	v.Title = fmt.Sprintf("fsmine diff: v%d → v%d", d.Old.Version, d.New.Version)
	v.Head = v.Title
	return v
}

// diffSummary is the diff's summary line, as a sentence.
func diffSummary(d *automaton.Diff) string {
	sum := d.Summary()
	return strings.ToUpper(sum[:1]) + sum[1:]
}

// reportFuncs are the helpers the templates call.
var reportFuncs = template.FuncMap{
	"id":        shownText, // the stylesheet isolates each (.id: unicode-bidi: isolate)
	"int":       thousands,
	"pct":       text.Percent,
	"pct2":      func(share float64) string { return text.PercentTo(share, 2) }, // shares compared with the rare threshold: 4.96% is rare under a 5% rule
	"ms":        text.Duration,
	"short":     text.ShortDigest,
	"rareword":  diffRareWord,
	"sci":       func(p float64) string { return strconv.FormatFloat(p, 'g', 2, 64) },
	"fixed2":    func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) },
	"signed2":   func(f float64) string { return fmt.Sprintf("%+.2f", f) },
	"num":       func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) },
	"measure":   measureText,
	"add":       func(a, b int) int { return a + b },
	"hasParent": func(p *automaton.Parent) bool { return p != nil },
	"genword":   diffGenWord,
	"backword":  diffBackWord,
	"statechange": func(s automaton.StateChange) string {
		return diffStateChangeText(s, shownText)
	},
	"bylines": func(c *automaton.ByChange) []string { return diffByLines(c, shownText) },
}

// The report's pages, style sheet and script are files under assets/:
// page.html.tmpl (the head and foot and the partials both pages use),
// report.html.tmpl (the model page), diff.html.tmpl (the diff page),
// report.css and report.js.
//
//go:embed assets/*.html.tmpl
var reportPages embed.FS

// reportStyle is the page's style sheet.
//
//go:embed assets/report.css
var reportStyle string

// reportJS sorts a table by the column whose heading is clicked: by the
// cells' data-v numbers when they have one (largest first), else by their
// text. It scrolls each picture's canvas to the start state, which in a
// large picture is far from the top left corner (the model's nodes carry
// their id as their link's title, the overlay's as the node's title), and
// does so again when the zoom changes. Last, it marks the page as ready
// (data-sortable on <html>: the number of tables it serves), which the
// browser test reads. It holds no comments: html/template strips comments
// from scripts, and the page's Content-Security-Policy allows the script
// by the hash of its exact text.
//
//go:embed assets/report.js
var reportJS string

// reportScript is the text of the page's <script> element: a new line,
// then report.js.
var reportScript = "\n" + reportJS

// reportCSP is the page's Content-Security-Policy: nothing may be fetched
// or run but the page's own style and reportScript.
var reportCSP = func() string {
	sum := sha256.Sum256([]byte(reportScript))
	return "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" +
		base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'"
}()

// reportTemplates parses the templates on first use: at start they took
// about 4 ms of every fsmine command, most of which draw no page.
var reportTemplates = sync.OnceValue(func() *template.Template { return template.Must(parseReportTemplates()) })

// parseReportTemplates parses the page templates with the style sheet,
// the script and the Content-Security-Policy as the templates "style",
// "script" and "csp": literal text the pages call where they go.
func parseReportTemplates() (*template.Template, error) {
	t := template.New("report").Funcs(reportFuncs)
	for _, part := range []struct{ name, text string }{
		{"style", "\n" + reportStyle},
		{"script", reportScript},
		{"csp", reportCSP},
	} {
		if _, err := t.New(part.name).Parse(part.text); err != nil {
			return nil, err
		}
	}
	return t.ParseFS(reportPages, "assets/*.html.tmpl")
}

// designView is the Design vs reality section of the report.
type designView struct {
	File          string
	Format        string
	Diagram       *diagram
	Designed      int
	Taken         int
	Followed      int
	NeverTaken    []automaton.DesignMove
	NeverDesigned []automaton.DesignMove
	// More counts the taken moves never designed left out of the table.
	More int
}

// designRows bounds the table of taken moves never designed: the busiest
// ones; the rest are counted.
const designRows = 40

func designPage(design *automaton.Model, file string, m *automaton.Model, lay Options) (*designView, error) {
	d := automaton.CompareDesign(design, m)
	v := &designView{
		File: file, Format: design.Params.Design,
		Designed: d.Designed, Taken: d.Taken, Followed: len(d.Followed),
		NeverTaken: d.NeverTaken, NeverDesigned: d.NeverDesigned,
	}
	if n := len(v.NeverDesigned); n > designRows {
		v.More = n - designRows
		v.NeverDesigned = v.NeverDesigned[:designRows]
	}
	if lay.Engine.builtin() {
		if err := checkTangle(tangle(design, false), true); err != nil {
			v.Diagram = &diagram{Note: fmt.Sprintf("No picture: the design's %s for %s are more than the builtin Graphviz lays out; the tables below list its moves.",
				text.Count(len(design.Transitions), "move"), text.Count(len(design.States), "state"))}
			return v, nil
		}
	}
	var src bytes.Buffer
	if err := DesignDOT(&src, design, d); err != nil {
		return nil, err
	}
	doc, err := dotSVG(src.Bytes(), lay)
	if v.Diagram, err = picture("the design", doc, err, "The tables below list its moves."); err != nil {
		return nil, err
	}
	return v, nil
}
