package render

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	// encoding/json, not go-json (v0.10.5), whose Indent fails on valid
	// numbers past float64's range (TestReportLabelsIndented).
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/render/text"
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
	// Detail is DetailFull (also the zero value: the picture Diagram
	// asks for) or DetailSummary: the summary DOT draws (Diagram none
	// still draws none), and a Stages section where each stage opens to
	// its states, its transitions and a picture of the transitions inside
	// it.
	Detail Detail
	// Measures, when not nil, adds the Cost and latency section: what logs
	// say of each state and transition (see Measures).
	Measures *Measures
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

// dotSVG lays DOT source out as an SVG document with engine, for the diff
// overlay.
func dotSVG(src []byte, engine Engine) ([]byte, error) {
	switch engine {
	case "", EngineBuiltin:
		return layoutBuiltin(src, "svg")
	case EngineDot:
		return layoutDot(src, "svg")
	}
	return nil, fmt.Errorf("unknown layout engine %q: want %s or %s", engine, EngineBuiltin, EngineDot)
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
	rare := 0
	for _, t := range m.Transitions {
		if t.Rare {
			rare++
		}
	}
	if opt.Detail == DetailSummary {
		if mode != DiagramNone {
			doc, err := modelSVG(m, Options{Detail: DetailSummary, Engine: opt.Engine})
			if err != nil {
				return fmt.Errorf("drawing the model: %w", err)
			}
			dg, err := newDiagram(doc)
			if err != nil {
				return err
			}
			dg.Summary = true
			page.Diagram = dg
		}
		stages, err := stageViews(m, opt.Engine)
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
	if mode != DiagramNone {
		ropt := Options{HideRare: mode == DiagramCommon, ClusterSep: opt.ClusterSep, Engine: opt.Engine}
		doc, err := modelSVG(m, ropt)
		if err != nil {
			return fmt.Errorf("drawing the model: %w", err)
		}
		dg, err := newDiagram(doc)
		if err != nil {
			return err
		}
		if mode == DiagramCommon {
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
		doc, err := dotSVG(src.Bytes(), opt.Engine)
		if err != nil {
			return fmt.Errorf("drawing the overlay: %w", err)
		}
		dg, err := newDiagram(doc)
		if err != nil {
			return err
		}
		if o != old {
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
	if err := reportTemplates.ExecuteTemplate(&buf, name, page); err != nil {
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
	States   []stateRow
	Edges    []linkedEdge
	// HasExamples shows the examples columns: the model keeps example
	// sessions.
	HasExamples bool
	// Measures is the Cost and latency section, when logs were given.
	Measures *measuresView

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
	v.Facts = []fact{
		{"sessions", thousands(m.Source.Sessions)},
		{"events", thousands(m.Source.Events)},
		{"states", fmt.Sprintf("%s (+ start and end)", thousands(states))},
		{"transitions", fmt.Sprintf("%s (%s rare, %s back edges)", thousands(len(m.Transitions)), thousands(rare), thousands(back))},
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
		v.Variants = append(v.Variants, variantRow{i + 1, x.Count, ratio(x.Count, m.Source.Sessions), x.States, isTrunk})
		covered += x.Count
		if isTrunk && v.TrunkExact < 0 {
			v.TrunkExact = x.Count
			v.TrunkShare = ratio(x.Count, m.Source.Sessions)
		}
	}
	v.VariantsTotal = m.Variants
	v.VariantsShown = ratio(covered, m.Source.Sessions)

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
	v.HasExamples = hasExamples(m)
	v.Prov = provenanceOf(m)
	return v
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
	switch {
	case m.Digest == "":
		p.DigestClass = "muted"
		p.DigestCheck = "No digest stored; the content's digest is " + computed + "."
	case m.Digest == computed:
		p.DigestClass = "ok"
		p.DigestCheck = "Matches the model's content."
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
	}
	return p
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func ratio(n, of int) float64 {
	if of <= 0 {
		return 0
	}
	return float64(n) / float64(of)
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

// percent shows a share with one decimal, but never rounds a share that is
// not 0 or 1 to "0.0%" or "100.0%".
func percent(share float64) string {
	return Percent(share)
}

// percent2 is percent with two decimals, for shares that are compared with
// the rare threshold: 4.96% is rare under a 5% rule, and "5.0%" would not
// say so.
func percent2(share float64) string {
	switch pc := 100 * share; {
	case pc > 0 && pc < 0.005:
		return "<0.01%"
	case pc < 100 && pc >= 99.995:
		return ">99.99%"
	default:
		return strconv.FormatFloat(pc, 'f', 2, 64) + "%"
	}
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
	"id":        shownText,
	"int":       thousands,
	"pct":       percent,
	"pct2":      percent2,
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
}

// reportScript sorts a table by the column whose heading is clicked: by the
// cells' data-v numbers when they have one (largest first), else by their
// text. It scrolls each picture's canvas to the start state, which in a
// large picture is far from the top left corner (the model's nodes carry
// their id as their link's title, the overlay's as the node's title), and
// does so again when the zoom changes. Last, it marks the page as ready
// (data-sortable on <html>: the number of tables it serves), which the
// browser test reads. It holds no comments: html/template strips comments
// from scripts, and the page's Content-Security-Policy allows the script
// by the hash of its exact text.
const reportScript = `
(function () {
  var tables = document.querySelectorAll("table.sortable");
  tables.forEach(function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.tabIndex = 0;
      function sort() {
        var numeric = table.tBodies[0].rows.length > 0 && table.tBodies[0].rows[0].cells[col].hasAttribute("data-v");
        var was = th.getAttribute("aria-sort");
        var desc = was ? was === "ascending" : numeric;
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", desc ? "descending" : "ascending");
        var rows = Array.prototype.slice.call(table.tBodies[0].rows);
        rows.sort(function (a, b) {
          var x = a.cells[col], y = b.cells[col], c;
          if (numeric) {
            c = parseFloat(x.getAttribute("data-v")) - parseFloat(y.getAttribute("data-v"));
          } else {
            c = x.textContent.localeCompare(y.textContent);
          }
          return desc ? -c : c;
        });
        rows.forEach(function (r) { table.tBodies[0].appendChild(r); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sort(); } });
    });
  });
  document.querySelectorAll(".canvas").forEach(function (canvas) {
    function toStart() {
      var nodes = canvas.querySelectorAll("g.node");
      for (var i = 0; i < nodes.length; i++) {
        var a = nodes[i].querySelector("a"), t = nodes[i].querySelector("title");
        var name = (a && a.getAttribute("xlink:title")) || (t && t.textContent);
        if (name === "__start__") {
          var r = nodes[i].getBoundingClientRect(), c = canvas.getBoundingClientRect();
          canvas.scrollLeft += r.left - c.left - 24;
          canvas.scrollTop += r.top - c.top - canvas.clientHeight / 2;
          return;
        }
      }
    }
    toStart();
    canvas.parentNode.querySelectorAll("input").forEach(function (input) {
      input.addEventListener("change", toStart);
    });
  });
  document.documentElement.setAttribute("data-sortable", String(tables.length));
})();
`

// reportCSP is the page's Content-Security-Policy: nothing may be fetched
// or run but the page's own style and reportScript.
var reportCSP = func() string {
	sum := sha256.Sum256([]byte(reportScript))
	return "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" +
		base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'"
}()

const reportStyle = `
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --zebra: #f6f8fa;
  --rare: #868e96; --back: #d9480f; --add: #1a7f37; --del: #cf222e; --chg: #bc4c00; }
* { box-sizing: border-box; }
body { margin: 0; padding: 0 24px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--fg); background: #fff; }
header { padding: 20px 0 8px; border-bottom: 1px solid var(--line); }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 20px 0 6px; }
p { margin: 6px 0; max-width: 72em; }
code, pre, .id { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 12.5px; }
.id { overflow-wrap: anywhere; }
.muted { color: var(--muted); }
.file { color: var(--muted); margin: 0 0 8px; }
nav { margin: 10px 0 0; }
nav a { margin-right: 14px; color: #0969da; text-decoration: none; }
nav a:hover { text-decoration: underline; }
dl.facts { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 10px 0 4px; }
dl.facts div { display: flex; flex-direction: column; }
dl.facts dt { font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
dl.facts dd { margin: 0; font-size: 16px; font-weight: 600; }
table { border-collapse: collapse; margin: 6px 0 10px; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { font-size: 12.5px; color: var(--muted); font-weight: 600; white-space: nowrap; background: #fff; position: sticky; top: 0; }
tbody tr:nth-child(even) { background: var(--zebra); }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.sortable th { cursor: pointer; }
table.sortable th:hover { color: var(--fg); }
th[aria-sort=ascending]::after { content: " ▲"; }
th[aria-sort=descending]::after { content: " ▼"; }
table.kv th { position: static; text-align: left; padding-right: 24px; background: transparent; }
.path { max-width: 90em; }
.path .id + .arrow { margin: 0 4px; }
.arrow { color: var(--muted); }
.tag { display: inline-block; font-size: 11px; padding: 0 5px; border-radius: 8px; border: 1px solid var(--line); color: var(--muted); margin-left: 4px; white-space: nowrap; }
.tag.rare { border-color: var(--rare); }
.tag.back { border-color: var(--back); color: var(--back); }
.tag.trunk { border-color: var(--fg); color: var(--fg); }
.tag.gen { border-style: dotted; }
.tag.add { border-color: var(--add); color: var(--add); }
.tag.del { border-color: var(--del); color: var(--del); }
.tag.chg { border-color: var(--chg); color: var(--chg); }
.ok { color: var(--add); }
.bad { color: var(--del); font-weight: 600; }
.note { background: #fff8c5; border: 1px solid #d4a72c66; padding: 6px 10px; border-radius: 6px; max-width: 72em; }
.legend span { margin-right: 16px; white-space: nowrap; }
.legend .swatch { display: inline-block; width: 28px; height: 0; vertical-align: middle; margin-right: 5px; border-top: 2px solid #000; }
.legend .trunk { border-top-width: 4px; }
.legend .rare { border-top: 2px dashed var(--rare); }
.legend .gen { border-top: 2px dotted #adb5bd; }
.legend .back { border-top-color: var(--back); }
.legend .add { border-top-color: var(--add); }
.legend .del { border-top: 2px dashed var(--del); }
.legend .chg { border-top-color: var(--chg); }
.legend .same { border-top-color: #8c959f; }
.zoom { margin: 4px 0; }
.zoom input { margin-left: 10px; }
.zoom label { margin-right: 4px; }
.canvas { overflow: auto; max-height: 70vh; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
.canvas svg { display: block; height: auto; width: min(var(--w), max(100%, calc(var(--w) / 2))); }
.z-fit:checked ~ .canvas svg { width: min(var(--w), 100%); }
.z-full:checked ~ .canvas svg { width: var(--w); }
pre { background: var(--zebra); border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; overflow: auto; max-height: 40em; }
details summary { cursor: pointer; color: #0969da; margin: 6px 0; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
`

// reportHTML holds the page templates; reportStyle, reportCSP and
// reportScript are spliced in as literal template text.
var reportHTML = `
{{define "head"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="` + reportCSP + `">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="fsmine">
<title>{{.Head}}</title>
<style>` + reportStyle + `</style>
</head>
<body>
{{end}}

{{define "foot"}}
<footer>Written by fsmine. This page is self-contained: it loads nothing from the network. Click a column's heading to sort its table.</footer>
<script>` + reportScript + `</script>
</body>
</html>
{{end}}

{{define "state"}}<code class="id">{{id .}}</code>{{end}}

{{define "event"}}{{if .}}<code class="id">{{id .}}</code>{{else}}<span class="muted">(none)</span>{{end}}{{end}}

{{define "path"}}<span class="path">{{range $i, $s := .}}{{if $i}}<span class="arrow"> → </span>{{end}}{{template "state" $s}}{{end}}</span>{{end}}

{{define "zoom"}}{{if .SVG}}
<div class="zoom muted">Zoom:
<input type="radio" name="zoom" id="zoom-auto" class="z-auto" checked><label for="zoom-auto">readable</label>
<input type="radio" name="zoom" id="zoom-fit" class="z-fit"><label for="zoom-fit">fit to width</label>
<input type="radio" name="zoom" id="zoom-full" class="z-full"><label for="zoom-full">100%</label>
<div class="canvas" style="--w: {{.Width}}px">
{{.SVG}}</div>
</div>
{{end}}{{with .Note}}<p class="note">{{.}}</p>{{end}}
{{end}}

{{define "examples"}}{{range $i, $e := .}}{{if $i}} {{end}}{{if $e.URL}}<a class="ex" href="{{$e.URL}}" rel="noopener noreferrer" target="_blank"><code class="id">{{id $e.ID}}</code></a>{{else}}<code class="id">{{id $e.ID}}</code>{{end}}{{end}}{{end}}

{{define "flags"}}{{if .Trunk}}<span class="tag trunk">trunk</span>{{end}}{{if .Rare}}<span class="tag rare">rare</span>{{end}}{{if .Back}}<span class="tag back">back edge</span>{{end}}{{with .Generalized}}<span class="tag gen">generalized: {{.}}</span>{{end}}{{end}}

{{define "model"}}{{template "head" .}}
<header>
<h1>{{.Title}}</h1>
{{with .File}}<p class="file"><code class="id">{{id .}}</code></p>{{end}}
<dl class="facts">{{range .Facts}}<div><dt>{{.Name}}</dt><dd>{{.Value}}</dd></div>{{end}}</dl>
<nav>{{if .Diagram}}<a href="#diagram">Diagram</a>{{end}}{{if .Stages}}<a href="#stages">Stages</a>{{end}}<a href="#trunk">Trunk</a><a href="#variants">Variants</a><a href="#rare">Rare branches</a><a href="#loops">Loops</a><a href="#states">States</a><a href="#transitions">Transitions</a>{{if .Measures}}<a href="#cost">Cost and latency</a>{{end}}<a href="#provenance">Provenance</a></nav>
</header>

{{with .Diagram}}
<section id="diagram">
<h2>Diagram</h2>
{{if .SVG}}{{if .Summary}}<p class="legend muted"><span><i class="swatch trunk"></i>trunk (bold, the spine)</span><span><i class="swatch back"></i>back edge (closes a loop)</span><span>a box drawn in depth stands for several states; a grey frame is a stage (see Stages below) · edges: event · count, or how many transitions an edge stands for · rare, generalized and minor edges are not drawn but counted on their box</span></p>
{{else}}<p class="legend muted"><span><i class="swatch trunk"></i>trunk (bold)</span><span><i class="swatch rare"></i>rare</span><span><i class="swatch back"></i>back edge (closes a loop)</span><span><i class="swatch gen"></i>generalized (no session took it)</span><span>line width ∝ count · edge labels: event · count (share of the source's outflow)</span></p>
{{end}}{{end}}{{template "zoom" .}}
</section>
{{end}}

{{if .Stages}}
<section id="stages">
<h2>Stages</h2>
<p>The diagram groups states into stages; open one to see its states and every transition that touches it.</p>
{{range .Stages}}<details class="stage">
<summary>{{.Name}} <span class="muted">· {{int (len .States)}} states · {{int .Visits}} visits · {{int .Inside}} transitions inside, {{int .In}} in, {{int .Out}} out</span></summary>
{{with .Diagram}}{{if .SVG}}<div class="canvas" style="--w: {{.Width}}px">
{{.SVG}}</div>
{{end}}{{with .Note}}<p class="note">{{.}}</p>{{end}}{{end}}
<table class="sortable">
<thead><tr><th>state</th><th>label</th><th class="n">visits</th><th class="n">sessions</th></tr></thead>
<tbody>
{{range .States}}<tr><td>{{template "state" .ID}}{{if .Trunk}}<span class="tag trunk">trunk</span>{{end}}</td><td>{{if ne .Label .ID}}<code class="id">{{id .Label}}</code>{{end}}</td><td class="n" data-v="{{.Visits}}">{{int .Visits}}</td><td class="n" data-v="{{.Sessions}}">{{int .Sessions}}</td></tr>
{{end}}</tbody>
</table>
<table class="sortable">
<thead><tr><th>from</th><th>event</th><th>to</th><th class="n">count</th><th class="n">share</th><th class="n">sessions</th><th></th></tr></thead>
<tbody>
{{range .Edges}}<tr><td>{{template "state" .From}}</td><td>{{template "event" .Event}}</td><td>{{template "state" .To}}</td><td class="n" data-v="{{.Count}}">{{int .Count}}</td><td class="n" data-v="{{num .Prob}}">{{pct .Prob}}</td><td class="n" data-v="{{.Sessions}}">{{int .Sessions}}</td><td>{{template "flags" .}}</td></tr>
{{end}}</tbody>
</table>
</details>
{{end}}
</section>
{{end}}

<section id="trunk">
<h2>Trunk</h2>
{{if .Trunk}}
<p>The main road: the path through the states most sessions enter, from start to end{{if ge .TrunkExact 0}}: {{int .TrunkExact}} sessions ({{pct .TrunkShare}}) took exactly this path{{end}}.</p>
<p>{{template "path" .TrunkPath}}</p>
<table class="sortable">
<thead><tr><th class="n">#</th><th>from</th><th>event</th><th>to</th><th class="n">count</th><th class="n">sessions</th><th class="n">share</th></tr></thead>
<tbody>
{{range $i, $e := .Trunk}}<tr><td class="n" data-v="{{add $i 1}}">{{add $i 1}}</td><td>{{template "state" $e.From}}</td><td>{{template "event" $e.Event}}</td><td>{{template "state" $e.To}}</td>{{if ge $e.Count 0}}<td class="n" data-v="{{$e.Count}}">{{int $e.Count}}</td><td class="n" data-v="{{$e.Sessions}}">{{int $e.Sessions}}</td><td class="n" data-v="{{num $e.Prob}}">{{pct $e.Prob}}</td>{{else}}<td class="n" data-v="-1">–</td><td class="n" data-v="-1">–</td><td class="n" data-v="-1">–</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{else}}
<p class="muted">The model has no trunk.</p>
{{end}}
</section>

<section id="variants">
<h2>Top variants</h2>
<p>{{int .VariantsTotal}} distinct paths{{if .Variants}}; the {{len .Variants}} most frequent cover {{pct .VariantsShown}} of {{int .Sessions}} sessions{{end}}.</p>
{{if .Variants}}
<table class="sortable">
<thead><tr><th class="n">#</th><th class="n">sessions</th><th class="n">share</th><th class="n">steps</th><th>path</th></tr></thead>
<tbody>
{{range .Variants}}<tr><td class="n" data-v="{{.Rank}}">{{.Rank}}</td><td class="n" data-v="{{.Count}}">{{int .Count}}</td><td class="n" data-v="{{num .Share}}">{{pct .Share}}</td><td class="n" data-v="{{len .States}}">{{len .States}}</td><td>{{template "path" .States}}{{if .Trunk}}<span class="tag trunk">trunk</span>{{end}}</td></tr>
{{end}}</tbody>
</table>
{{end}}
</section>

<section id="rare">
<h2>Rare branches</h2>
<p>{{.RareRule}} Rare transitions are kept in the model, never deleted: {{int (len .Rare)}} of {{int (len .Edges)}}.</p>
{{if .Rare}}
<table class="sortable">
<thead><tr><th>from</th><th>event</th><th>to</th><th class="n">count</th><th class="n">share</th><th class="n">sessions</th><th></th>{{if $.HasExamples}}<th>example sessions</th>{{end}}</tr></thead>
<tbody>
{{range .Rare}}<tr><td>{{template "state" .From}}</td><td>{{template "event" .Event}}</td><td>{{template "state" .To}}</td><td class="n" data-v="{{.Count}}">{{int .Count}}</td><td class="n" data-v="{{num .Prob}}">{{pct2 .Prob}}</td><td class="n" data-v="{{.Sessions}}">{{int .Sessions}}</td><td>{{if .Back}}<span class="tag back">back edge</span>{{end}}</td>{{if $.HasExamples}}<td>{{template "examples" .Examples}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{end}}
</section>

<section id="loops">
<h2>Loops</h2>
<p>A loop is a strongly connected group of states; an iteration is one pass along a back edge during one stay in the loop. Max and p95 are per stay: the data for retry caps.</p>
{{if .Loops}}
<table class="sortable">
<thead><tr><th>states</th><th>back edges</th><th class="n">iterations</th><th class="n">sessions</th><th class="n">max</th><th class="n">p95</th></tr></thead>
<tbody>
{{range .Loops}}<tr><td>{{range $i, $s := .States}}{{if $i}}, {{end}}{{template "state" $s}}{{end}}</td><td>{{range .BackEdges}}<div class="edge">{{template "state" .From}} <span class="arrow">−[</span>{{template "event" .Event}}<span class="arrow">]→</span> {{template "state" .To}}</div>{{end}}</td><td class="n" data-v="{{.Count}}">{{int .Count}}</td><td class="n" data-v="{{.Sessions}}">{{int .Sessions}}</td><td class="n" data-v="{{.Max}}">{{int .Max}}</td><td class="n" data-v="{{.P95}}">{{int .P95}}</td></tr>
{{end}}</tbody>
</table>
{{else}}
<p class="muted">The model has no loops.</p>
{{end}}
</section>

<section id="states">
<h2>States</h2>
<p>Visits: how often sessions entered the state; dwell: time from its record to the next.</p>
<table class="sortable">
<thead><tr><th>state</th><th>label</th><th class="n">visits</th><th class="n">sessions</th><th class="n">dwell p50</th><th class="n">dwell p95</th><th class="n">dwell max</th>{{if $.HasExamples}}<th>example sessions</th>{{end}}</tr></thead>
<tbody>
{{range .States}}<tr><td>{{template "state" .ID}}{{if .Trunk}}<span class="tag trunk">trunk</span>{{end}}</td><td>{{if ne .Label .ID}}<code class="id">{{id .Label}}</code>{{end}}</td><td class="n" data-v="{{.Visits}}">{{int .Visits}}</td><td class="n" data-v="{{.Sessions}}">{{int .Sessions}}</td>{{with .Dwell}}<td class="n" data-v="{{num .P50}}">{{ms .P50}}</td><td class="n" data-v="{{num .P95}}">{{ms .P95}}</td><td class="n" data-v="{{num .Max}}">{{ms .Max}}</td>{{else}}<td class="n" data-v="-1">–</td><td class="n" data-v="-1">–</td><td class="n" data-v="-1">–</td>{{end}}{{if $.HasExamples}}<td>{{template "examples" .Examples}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
</section>

<section id="transitions">
<h2>Transitions</h2>
<details{{if le (len .Edges) 60}} open{{end}}>
<summary>All {{int (len .Edges)}} transitions</summary>
<table class="sortable">
<thead><tr><th>from</th><th>event</th><th>to</th><th class="n">count</th><th class="n">share</th><th class="n">sessions</th><th></th>{{if $.HasExamples}}<th>example sessions</th>{{end}}</tr></thead>
<tbody>
{{range .Edges}}<tr><td>{{template "state" .From}}</td><td>{{template "event" .Event}}</td><td>{{template "state" .To}}</td><td class="n" data-v="{{.Count}}">{{int .Count}}</td><td class="n" data-v="{{num .Prob}}">{{pct .Prob}}</td><td class="n" data-v="{{.Sessions}}">{{int .Sessions}}</td><td>{{template "flags" .}}</td>{{if $.HasExamples}}<td>{{template "examples" .Examples}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
</details>
</section>

{{with .Measures}}
<section id="cost">
<h2>Cost and latency</h2>
<p>From the logs given with the model: {{int .Sessions}} sessions, {{int .Fit}} of them fit the model. A state's figures are over the visits to it; a transition's over the visits that left along it (the step whose outcome took the transition). Dwell is a visit's time; {{if .Paths}}{{range $i, $p := .Paths}}{{if $i}}, {{end}}<code class="id">{{id $p}}</code>{{end}} are summed per visit (a record folded, dropped or taken out as a detour counts toward the visit before it), then summarised over the visits that carry them: total, mean and p95{{else}}no measured field (tokens, cost, duration) was found in the records{{end}}.</p>
<h3>States</h3>
<table class="sortable">
<thead><tr><th>state</th><th class="n">visits</th><th class="n">dwell p50</th><th class="n">dwell p95</th>{{range .Paths}}<th class="n">{{id .}} total</th><th class="n">mean</th><th class="n">p95</th>{{end}}</tr></thead>
<tbody>
{{range .States}}<tr><td>{{template "state" .ID}}</td><td class="n" data-v="{{.Count}}">{{int .Count}}</td>{{template "measurecells" .}}</tr>
{{end}}</tbody>
</table>
<h3>Transitions</h3>
<table class="sortable">
<thead><tr><th>from</th><th>event</th><th>to</th><th class="n">taken</th><th class="n">dwell p50</th><th class="n">dwell p95</th>{{range .Paths}}<th class="n">{{id .}} total</th><th class="n">mean</th><th class="n">p95</th>{{end}}</tr></thead>
<tbody>
{{range .Edges}}<tr><td>{{template "state" .From}}</td><td>{{template "event" .Event}}</td><td>{{template "state" .To}}</td><td class="n" data-v="{{.Count}}">{{int .Count}}</td>{{template "measurecells" .}}</tr>
{{end}}</tbody>
</table>
</section>
{{end}}{{with .Prov}}
<section id="provenance">
<h2>Provenance</h2>
<table class="kv">
<tr><th>schema</th><td><code>{{.Schema}}</code></td></tr>
<tr><th>version</th><td>{{.Version}}</td></tr>
<tr><th>parent</th><td>{{if hasParent .Parent}}v{{.Parent.Version}} <code class="id">{{.Parent.Digest}}</code>{{else}}<span class="muted">none</span>{{end}}</td></tr>
<tr><th>digest</th><td><code class="id">{{if .Digest}}{{.Digest}}{{else}}(none){{end}}</code><br><span class="{{.DigestClass}}">{{.DigestCheck}}</span></td></tr>
<tr><th>created</th><td>{{if .Created}}{{.Created}}{{else}}<span class="muted">unknown</span>{{end}}</td></tr>
<tr><th>generator</th><td>{{if .Generator}}{{.Generator}}{{else}}<span class="muted">unknown</span>{{end}}</td></tr>
</table>
<h3>Source files</h3>
{{if .Files}}
<table class="sortable">
<thead><tr><th>path</th><th>format</th><th>sha256</th><th class="n">records</th><th class="n">skipped</th><th class="n">duplicates</th></tr></thead>
<tbody>
{{range .Files}}<tr><td><code class="id">{{id .Path}}</code></td><td>{{.Format}}</td><td><code class="id">{{.SHA256}}</code></td><td class="n" data-v="{{.Records}}">{{int .Records}}</td><td class="n" data-v="{{.Skipped}}">{{int .Skipped}}</td><td class="n" data-v="{{.Duplicates}}">{{int .Duplicates}}</td></tr>
{{end}}</tbody>
</table>
{{else}}
<p class="muted">The model lists no source files.</p>
{{end}}
<h3>Counters</h3>
<table class="kv">{{range .Counters}}<tr><th>{{.Name}}</th><td class="n">{{.Value}}</td></tr>{{end}}</table>
<h3>Parameters</h3>
<table class="kv">{{range .Params}}<tr><th>{{.Name}}</th><td><code class="id">{{id .Value}}</code></td></tr>{{end}}</table>
<h3>Label rules</h3>
{{if .Labels}}<pre>{{.Labels}}</pre>{{else}}<p class="muted">None: every record's node was its state.</p>{{end}}
</section>
{{end}}
{{template "foot" .}}{{end}}

{{define "diff"}}{{template "head" .}}
<header>
<h1>{{.Title}}</h1>
<p class="file"><code class="id">{{id .OldFile}}</code> <span class="arrow">→</span> <code class="id">{{id .NewFile}}</code></p>
<p><strong>{{.Summary}}</strong>{{if .D.SameDigest}} (same digest){{end}}</p>
<table class="kv">
<thead><tr><th></th><th>file</th><th class="n">version</th><th>digest</th><th class="n">sessions</th><th class="n">states</th><th class="n">transitions</th><th>created</th></tr></thead>
<tbody>
<tr><th>old</th><td><code class="id">{{id .OldFile}}</code></td><td class="n">{{.Old.Version}}</td><td><code title="{{.Old.Digest}}">{{short .Old.Digest}}</code></td><td class="n">{{int .Old.Sessions}}</td><td class="n">{{int .Old.States}}</td><td class="n">{{int .Old.Edges}}</td><td>{{.Old.Created}}</td></tr>
<tr><th>new</th><td><code class="id">{{id .NewFile}}</code></td><td class="n">{{.New.Version}}</td><td><code title="{{.New.Digest}}">{{short .New.Digest}}</code></td><td class="n">{{int .New.Sessions}}</td><td class="n">{{int .New.States}}</td><td class="n">{{int .New.Edges}}</td><td>{{.New.Created}}</td></tr>
</tbody>
</table>
</header>

{{with .Diagram}}
<section id="diagram">
<h2>Overlay</h2>
{{if .SVG}}<p class="legend muted"><span><i class="swatch add"></i>added</span><span><i class="swatch del"></i>removed</span><span><i class="swatch chg"></i>share changed (old% → new%) or rare flipped; outlined states: relabeled or outflow shifted</span><span><i class="swatch same"></i>unchanged</span></p>
{{end}}{{template "zoom" .}}
</section>
{{end}}

{{with .D}}
{{if or .StatesAdded .StatesRemoved .StatesRelabeled}}
<section id="states">
<h2>States</h2>
<table class="sortable">
<thead><tr><th>change</th><th>state</th><th>label</th><th class="n">visits</th></tr></thead>
<tbody>
{{range .StatesAdded}}<tr><td><span class="tag add">added</span></td><td>{{template "state" .ID}}</td><td><code class="id">{{id .Label}}</code></td><td class="n" data-v="{{.Visits}}">{{int .Visits}}</td></tr>
{{end}}{{range .StatesRemoved}}<tr><td><span class="tag del">removed</span></td><td>{{template "state" .ID}}</td><td><code class="id">{{id .Label}}</code></td><td class="n" data-v="{{.Visits}}">{{int .Visits}}</td></tr>
{{end}}{{range .StatesRelabeled}}<tr><td><span class="tag chg">relabeled</span></td><td>{{template "state" .ID}}</td><td><code class="id">{{id .OldLabel}}</code> <span class="arrow">→</span> <code class="id">{{id .NewLabel}}</code></td><td class="n" data-v="-1"></td></tr>
{{end}}</tbody>
</table>
</section>
{{end}}

{{if or .TransitionsAdded .TransitionsRemoved}}
<section id="transitions">
<h2>Transitions</h2>
<table class="sortable">
<thead><tr><th>change</th><th>from</th><th>event</th><th>to</th><th class="n">count</th><th class="n">share</th><th></th></tr></thead>
<tbody>
{{range .TransitionsAdded}}<tr><td><span class="tag add">added</span></td><td>{{template "state" .From}}</td><td>{{template "event" .Event}}</td><td>{{template "state" .To}}</td><td class="n" data-v="{{.Count}}">{{int .Count}}</td><td class="n" data-v="{{num .Share}}">{{pct .Share}}</td><td>{{if .Rare}}<span class="tag rare">rare</span>{{end}}</td></tr>
{{end}}{{range .TransitionsRemoved}}<tr><td><span class="tag del">removed</span></td><td>{{template "state" .From}}</td><td>{{template "event" .Event}}</td><td>{{template "state" .To}}</td><td class="n" data-v="{{.Count}}">{{int .Count}}</td><td class="n" data-v="{{num .Share}}">{{pct .Share}}</td><td>{{if .Rare}}<span class="tag rare">rare</span>{{end}}</td></tr>
{{end}}</tbody>
</table>
</section>
{{end}}

{{if .ShareChanges}}
<section id="shares">
<h2>Share changes</h2>
<p>Two-proportion z-test per transition in both models, significant at p &lt; {{sci .TransitionThreshold}}.</p>
<table class="sortable">
<thead><tr><th>from</th><th>event</th><th>to</th><th class="n">old share</th><th class="n">new share</th><th class="n">old count</th><th class="n">new count</th><th class="n">z</th><th class="n">p</th></tr></thead>
<tbody>
{{range .ShareChanges}}<tr><td>{{template "state" .From}}</td><td>{{template "event" .Event}}</td><td>{{template "state" .To}}</td><td class="n" data-v="{{num .OldShare}}">{{pct .OldShare}}</td><td class="n" data-v="{{num .NewShare}}">{{pct .NewShare}}</td><td class="n" data-v="{{.OldCount}}">{{int .OldCount}}/{{int .OldOutflow}}</td><td class="n" data-v="{{.NewCount}}">{{int .NewCount}}/{{int .NewOutflow}}</td><td class="n" data-v="{{num .Z}}">{{signed2 .Z}}</td><td class="n" data-v="{{num .P}}">{{sci .P}}</td></tr>
{{end}}</tbody>
</table>
</section>
{{end}}

{{if .OutflowShifts}}
<section id="outflow">
<h2>Outflow shifts</h2>
<p>Chi-square test of each shared state's whole outflow distribution, significant at p &lt; {{sci .StateThreshold}}.</p>
<table class="sortable">
<thead><tr><th>state</th><th class="n">old outflow</th><th class="n">new outflow</th><th class="n">χ²</th><th class="n">df</th><th class="n">p</th></tr></thead>
<tbody>
{{range .OutflowShifts}}<tr><td>{{template "state" .State}}</td><td class="n" data-v="{{.OldOutflow}}">{{int .OldOutflow}}</td><td class="n" data-v="{{.NewOutflow}}">{{int .NewOutflow}}</td><td class="n" data-v="{{num .Chi2}}">{{fixed2 .Chi2}}</td><td class="n" data-v="{{.DF}}">{{.DF}}</td><td class="n" data-v="{{num .P}}">{{sci .P}}</td></tr>
{{end}}</tbody>
</table>
</section>
{{end}}

{{if .RareFlips}}
<section id="flips">
<h2>Rare flips</h2>
<table class="sortable">
<thead><tr><th>from</th><th>event</th><th>to</th><th>was</th><th>now</th><th class="n">old share</th><th class="n">new share</th><th class="n">old count</th><th class="n">new count</th><th class="n">p</th></tr></thead>
<tbody>
{{range .RareFlips}}<tr><td>{{template "state" .From}}</td><td>{{template "event" .Event}}</td><td>{{template "state" .To}}</td><td>{{rareword .OldRare}}</td><td>{{rareword .NewRare}}</td><td class="n" data-v="{{num .OldShare}}">{{pct .OldShare}}</td><td class="n" data-v="{{num .NewShare}}">{{pct .NewShare}}</td><td class="n" data-v="{{.OldCount}}">{{int .OldCount}}</td><td class="n" data-v="{{.NewCount}}">{{int .NewCount}}</td><td class="n" data-v="{{num .P}}">{{sci .P}}</td></tr>
{{end}}</tbody>
</table>
</section>
{{end}}

{{if .Loops}}
<section id="loops">
<h2>Loops</h2>
<table class="sortable">
<thead><tr><th>states</th><th>change</th><th class="n">max iterations</th><th class="n">p95 iterations</th><th class="n">sessions</th></tr></thead>
<tbody>
{{range .Loops}}<tr><td>{{range $i, $s := .States}}{{if $i}}, {{end}}{{template "state" $s}}{{end}}</td><td>{{.Change}}{{if .Joined}}<br>joined: {{range $i, $s := .Joined}}{{if $i}}, {{end}}{{template "state" $s}}{{end}}{{end}}{{if .Left}}<br>left: {{range $i, $s := .Left}}{{if $i}}, {{end}}{{template "state" $s}}{{end}}{{end}}</td>{{template "loopcells" .}}</tr>
{{end}}</tbody>
</table>
</section>
{{end}}

{{with .Trunk}}
<section id="trunk">
<h2>Trunk</h2>
<table class="kv">
<tr><th>old</th><td>{{if .Old}}{{template "path" .Old}}{{else}}<span class="muted">(none)</span>{{end}}</td></tr>
<tr><th>new</th><td>{{if .New}}{{template "path" .New}}{{else}}<span class="muted">(none)</span>{{end}}</td></tr>
</table>
</section>
{{end}}

<p class="muted">Tested at α = {{num .Alpha}} ({{.Correction}}): {{int .TransitionTests}} shared transitions (z-test, p &lt; {{sci .TransitionThreshold}}), {{int .StateTests}} shared states (chi-square, p &lt; {{sci .StateThreshold}}). Counts always differ between two samples; only significant share changes are listed.</p>
{{end}}
{{template "foot" .}}{{end}}

{{define "measurecells"}}{{with .Dwell}}<td class="n" data-v="{{num .P50}}">{{ms .P50}}</td><td class="n" data-v="{{num .P95}}">{{ms .P95}}</td>{{else}}<td class="n" data-v="-1">–</td><td class="n" data-v="-1">–</td>{{end}}{{range .Cells}}{{if .}}<td class="n" data-v="{{num .Total}}">{{measure .Total}}</td><td class="n" data-v="{{num .Mean}}">{{measure .Mean}}</td><td class="n" data-v="{{num .P95}}">{{measure .P95}}</td>{{else}}<td class="n" data-v="-1">–</td><td class="n" data-v="-1">–</td><td class="n" data-v="-1">–</td>{{end}}{{end}}{{end}}

{{define "loopcells"}}{{if and .Old .New}}<td class="n" data-v="{{.New.MaxIterations}}">{{.Old.MaxIterations}} → {{.New.MaxIterations}}</td><td class="n" data-v="{{.New.P95Iterations}}">{{.Old.P95Iterations}} → {{.New.P95Iterations}}</td><td class="n" data-v="{{.New.Sessions}}">{{int .Old.Sessions}} → {{int .New.Sessions}}</td>{{else if .New}}<td class="n" data-v="{{.New.MaxIterations}}">{{.New.MaxIterations}}</td><td class="n" data-v="{{.New.P95Iterations}}">{{.New.P95Iterations}}</td><td class="n" data-v="{{.New.Sessions}}">{{int .New.Sessions}}</td>{{else}}<td class="n" data-v="{{.Old.MaxIterations}}">was {{.Old.MaxIterations}}</td><td class="n" data-v="{{.Old.P95Iterations}}">was {{.Old.P95Iterations}}</td><td class="n" data-v="{{.Old.Sessions}}">was {{int .Old.Sessions}}</td>{{end}}{{end}}
`

var reportTemplates = template.Must(template.New("report").Funcs(reportFuncs).Parse(reportHTML))
