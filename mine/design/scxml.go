package design

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// W3C SCXML 1.0: <state> and <final> elements with <transition event
// target>; the document's initial attribute (or an <initial> element, or
// its first state) is where the flow starts, and a <final> ends it. Compound
// states are flattened as XState's are. A transition with several event
// descriptors is one move per descriptor; one without an event takes
// Options.Event. A transition's cond is not kept: the move is read as one
// the flow may take, and Options.Note is told. The document is read as
// SCXML's schema has it: the root is <scxml> in SCXML's namespace (or in
// none, the namespace of its elements then), a transition is a move only
// as a child of a <state> (or <initial>), and executable content and data
// (<onentry>, <onexit>, <datamodel>, <script>, <invoke>, <donedata> and
// what a transition runs) are skipped whole, their SCXML elements held to
// SCXML's (a <transition> or <state> in them, or an element SCXML does not
// have, is an error naming its line). Elements of other namespaces are
// extensions, skipped whole. The attributes of fsmine's namespace that
// render.SCXML writes (fsmine:id, fsmine:label, fsmine:visits,
// fsmine:sessions, fsmine:max_run, fsmine:event, fsmine:count,
// fsmine:rare, fsmine:prob, fsmine:back_edge, fsmine:generalized), its
// <fsmine:constraint>, <fsmine:loop> and <fsmine:arg> elements and its
// version comment are read back, so that an export reads back to its model.

const fsmineNS = "https://github.com/fsmine/fsmine"

var scxmlVersion = regexp.MustCompile(`fsmine model version (\d+)`)

type scxmlState struct {
	xmlID    string
	id       string // the model's id
	label    string
	visits   int
	sessions int
	maxRun   int
	final    bool
	compound bool
	initial  string // of a compound state: its initial child's xml id
	children []string
	line     int
	moves    []scxmlMove
}

type scxmlMove struct {
	events, target, fsmEvent string
	hasFsmEvent              bool
	count                    int
	prob                     float64
	rare, backEdge           bool
	generalized              string
}

func readSCXML(data []byte, opt Options) (*flow, error) {
	r := &scxmlReader{f: newFlow(opt.Path), opt: opt, states: map[string]*scxmlState{}}
	if err := r.read(xml.NewDecoder(bytes.NewReader(data))); err != nil {
		return nil, err
	}
	if err := r.build(); err != nil {
		return r.f, err
	}
	r.unescapeRefs()
	return r.f, nil
}

// scxmlReader reads an SCXML document: read collects its states and
// transitions, build turns them into the flow.
type scxmlReader struct {
	f       *flow
	opt     Options
	states  map[string]*scxmlState // by xml id
	order   []string               // xml ids in document order
	stack   []*scxmlState          // the states open at the current element
	initial string                 // the xml id the document starts in
	inInit  bool                   // inside an <initial> element
	ns      string                 // the root's namespace: SCXML's, or none
	loop    *automaton.Loop        // the <fsmine:loop> open, if any
	cons    int                    // 1 + the index of the <fsmine:constraint> open, 0 for none
	arg     int                    // 1 + the index of the <fsmine:arg> open, 0 for none
}

// unescape undoes the Go escapes render.SCXML writes, in fsmine's
// attributes, for characters XML cannot carry (an ANSI colour's ESC). It
// writes a text's own backslash that would begin one as \x5c, so every
// escape decodes: no guess by the names the document holds.
func unescape(v string) string {
	out, _ := text.HexUnescape(v, scxmlEscaped)
	return out
}

// unescapeRefs decodes the names in the constraints, loops and argument
// rules.
func (r *scxmlReader) unescapeRefs() {
	fix := func(v *string) { *v = unescape(*v) }
	for i := range r.f.args {
		a := &r.f.args[i]
		fix(&a.Tool)
		fix(&a.Arg)
		fix(&a.Kind)
		for j := range a.Values {
			fix(&a.Values[j])
		}
		for j := range a.From {
			fix(&a.From[j])
		}
	}
	for i := range r.f.constraints {
		c := &r.f.constraints[i]
		fix(&c.A)
		fix(&c.B)
		for j := range c.Or {
			fix(&c.Or[j])
		}
	}
	for i := range r.f.loops {
		l := &r.f.loops[i]
		for j := range l.States {
			fix(&l.States[j])
		}
		for j := range l.BackEdges {
			fix(&l.BackEdges[j].From)
			fix(&l.BackEdges[j].Event)
			fix(&l.BackEdges[j].To)
		}
	}
}

// scxmlAttr is the value of the attribute space:name of se.
func scxmlAttr(se xml.StartElement, space, name string) (string, bool) {
	for _, a := range se.Attr {
		if a.Name.Local == name && a.Name.Space == space {
			return a.Value, true
		}
	}
	return "", false
}

// scxmlNS is the namespace of SCXML's elements.
const scxmlNS = "http://www.w3.org/2005/07/scxml"

// scxmlChildren are the elements SCXML allows as children of the elements
// read as structure: true for an element of the flow, false for one of
// executable content or data, skipped whole (checked by skip). <parallel>
// and <history> are refused where they stand.
var scxmlChildren = map[string]map[string]bool{
	"scxml":   {"state": true, "parallel": true, "final": true, "initial": true, "datamodel": false, "script": false},
	"state":   {"state": true, "parallel": true, "final": true, "history": true, "initial": true, "transition": true, "onentry": false, "onexit": false, "datamodel": false, "invoke": false},
	"final":   {"onentry": false, "onexit": false, "donedata": false},
	"initial": {"transition": true},
}

// scxmlContent are the elements of executable content and data that SCXML
// allows inside the elements skip skips; the values say whether their
// children are free XML (not SCXML's to check).
var scxmlContent = map[string]bool{
	"raise": false, "if": false, "elseif": false, "else": false, "foreach": false, "log": false,
	"send": false, "cancel": false, "param": false, "finalize": false, "data": true, "script": true,
	"assign": true, "content": true, "donedata": false, "datamodel": false, "invoke": false,
	"onentry": false, "onexit": false,
}

func (r *scxmlReader) read(dec *xml.Decoder) error {
	root, err := r.root(dec)
	if err != nil {
		return err
	}
	r.ns = root.Name.Space
	r.initial, _ = scxmlAttr(root, "", "initial")
	return r.children(dec, "scxml")
}

// root reads up to the document's root element, which must be <scxml> in
// SCXML's namespace (or in none, as hand-written documents often are).
func (r *scxmlReader) root(dec *xml.Decoder) (xml.StartElement, error) {
	for {
		tok, err := r.token(dec)
		if err != nil {
			return xml.StartElement{}, err
		}
		switch t := tok.(type) {
		case nil:
			return xml.StartElement{}, r.f.errorf("", "not an SCXML document: no <scxml> element")
		case xml.StartElement:
			line, _ := dec.InputPos()
			if t.Name.Local != "scxml" {
				return t, r.f.errorf("", "line %d: not an SCXML document: the root element is <%s>, not <scxml>", line, t.Name.Local)
			}
			if t.Name.Space != "" && t.Name.Space != scxmlNS {
				return t, r.f.errorf("", "line %d: not an SCXML document: <scxml> is in the namespace %q, not SCXML's %q", line, t.Name.Space, scxmlNS)
			}
			return t, nil
		}
	}
}

// token is the next token of dec, reading fsmine's version comment; nil at
// the end of the document.
func (r *scxmlReader) token(dec *xml.Decoder) (xml.Token, error) {
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, r.f.errorf("", "not an SCXML document: %v", err)
	}
	if c, ok := tok.(xml.Comment); ok {
		if v := scxmlVersion.FindSubmatch(c); v != nil && !r.f.versioned {
			n, err := strconv.Atoi(string(v[1]))
			if err != nil || n < 0 {
				return nil, r.f.errorf("", "the comment's model version %s is not a version (too large)", v[1])
			}
			r.f.version = n
			r.f.versioned = true
		}
	}
	return tok, nil
}

// scxml says whether name is an element of SCXML: in its namespace, or in
// the document's when the root is in none.
func (r *scxmlReader) scxml(name xml.Name) bool {
	return name.Space == scxmlNS || name.Space == r.ns
}

// children reads the children of the SCXML element parent, up to its end:
// the flow's elements, fsmine's, and executable content skipped whole.
// Elements of other namespaces (extensions) are skipped whole, as SCXML
// processors skip them.
func (r *scxmlReader) children(dec *xml.Decoder, parent string) error {
	for {
		tok, err := r.token(dec)
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case nil:
			return r.f.errorf("", "not an SCXML document: <%s> is not closed", parent)
		case xml.EndElement:
			return nil
		case xml.StartElement:
			line, _ := dec.InputPos()
			if t.Name.Space == fsmineNS {
				if err := r.fsmine(dec, t, line); err != nil {
					return err
				}
				continue
			}
			if !r.scxml(t.Name) {
				if err := r.skipWhole(dec); err != nil {
					return err
				}
				continue
			}
			flow, ok := scxmlChildren[parent][t.Name.Local]
			if !ok {
				return r.misplaced(t.Name.Local, parent, line)
			}
			if !flow {
				if err := r.skip(dec, t.Name.Local); err != nil {
					return err
				}
				continue
			}
			if err := r.start(dec, t, line); err != nil {
				return err
			}
		}
	}
}

// misplaced words an SCXML element name where SCXML has no such child:
// unknown syntax when SCXML has no such element at all.
func (r *scxmlReader) misplaced(name, parent string, line int) error {
	_, child := scxmlChildren[name]
	_, content := scxmlContent[name]
	if child || content || name == "transition" || name == "parallel" || name == "history" {
		return r.f.errorf("", "line %d: a <%s> inside <%s>: SCXML has none there", line, name, parent)
	}
	return r.f.errorf("", "line %d: unknown syntax: <%s> is no element of SCXML", line, name)
}

// skipWhole skips the rest of the element just started, whatever it holds.
func (r *scxmlReader) skipWhole(dec *xml.Decoder) error {
	if err := dec.Skip(); err != nil {
		return r.f.errorf("", "not an SCXML document: %v", err)
	}
	return nil
}

// skip skips the rest of the executable content or data element parent,
// holding its SCXML elements to SCXML's (a <transition> or <state> in an
// <onentry> is no move or state of the flow, and a typo is not skipped);
// what <data>, <assign>, <content> and <script> hold is free.
func (r *scxmlReader) skip(dec *xml.Decoder, parent string) error {
	if scxmlContent[parent] {
		return r.skipWhole(dec)
	}
	for {
		tok, err := r.token(dec)
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case nil:
			return r.f.errorf("", "not an SCXML document: <%s> is not closed", parent)
		case xml.EndElement:
			return nil
		case xml.StartElement:
			line, _ := dec.InputPos()
			if !r.scxml(t.Name) {
				if err := r.skipWhole(dec); err != nil {
					return err
				}
				continue
			}
			if _, ok := scxmlContent[t.Name.Local]; !ok {
				return r.misplaced(t.Name.Local, parent, line)
			}
			if err := r.skip(dec, t.Name.Local); err != nil {
				return err
			}
		}
	}
}

// fsmine reads an element of fsmine's namespace, which render.SCXML writes
// for the model's constraints, loops and argument rules (see
// render.SCXML), up to its end;
// other elements, of the namespace or not, are skipped, as SCXML
// processors skip them.
func (r *scxmlReader) fsmine(dec *xml.Decoder, t xml.StartElement, line int) error {
	if err := r.fsmineStart(t, line); err != nil {
		return err
	}
	for {
		tok, err := r.token(dec)
		if err != nil {
			return err
		}
		switch c := tok.(type) {
		case nil:
			return r.f.errorf("", "not an SCXML document: <fsmine:%s> is not closed", t.Name.Local)
		case xml.EndElement:
			switch t.Name.Local {
			case "loop":
				r.loop = nil
			case "constraint":
				r.cons = 0
			case "arg":
				r.arg = 0
			}
			return nil
		case xml.StartElement:
			line, _ := dec.InputPos()
			if c.Name.Space == fsmineNS {
				if err := r.fsmine(dec, c, line); err != nil {
					return err
				}
				continue
			}
			if err := r.skipWhole(dec); err != nil {
				return err
			}
		}
	}
}

// fsmineStart reads the attributes of an element of fsmine's namespace.
func (r *scxmlReader) fsmineStart(t xml.StartElement, line int) error {
	attr := func(name string) string { v, _ := scxmlAttr(t, "", name); return v }
	number := func(name string) (int, error) {
		v, ok := scxmlAttr(t, "", name)
		if !ok {
			return 0, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, r.f.errorf("", "line %d: <fsmine:%s> %s=%q is not a count", line, t.Name.Local, name, v)
		}
		return n, nil
	}
	var err error
	switch t.Name.Local {
	case "constraint":
		c := automaton.Constraint{Kind: attr("kind"), A: attr("a"), B: attr("b")}
		if c.Support, err = number("support"); err != nil {
			return err
		}
		if v, ok := scxmlAttr(t, "", "confidence"); ok {
			if c.Confidence, err = strconv.ParseFloat(v, 64); err != nil {
				return r.f.errorf("", "line %d: <fsmine:constraint> confidence=%q is not a number", line, v)
			}
		}
		r.f.constraints = append(r.f.constraints, c)
		r.cons = len(r.f.constraints)
	case "or":
		if r.cons == 0 {
			return r.f.errorf("", "line %d: a <fsmine:or> outside a <fsmine:constraint>", line)
		}
		c := &r.f.constraints[r.cons-1]
		c.Or = append(c.Or, attr("label"))
	case "loop":
		if r.loop != nil {
			return r.f.errorf("", "line %d: a <fsmine:loop> inside another", line)
		}
		l := automaton.Loop{States: []string{}, BackEdges: []automaton.EdgeRef{}}
		for _, a := range []struct {
			name string
			n    *int
		}{{"max_iterations", &l.MaxIterations}, {"count", &l.Count}, {"sessions", &l.Sessions}, {"p95_iterations", &l.P95Iterations}} {
			if *a.n, err = number(a.name); err != nil {
				return err
			}
		}
		r.f.loops = append(r.f.loops, l)
		r.loop = &r.f.loops[len(r.f.loops)-1]
	case "arg":
		if r.arg != 0 {
			return r.f.errorf("", "line %d: a <fsmine:arg> inside another", line)
		}
		a := automaton.ArgRule{Tool: attr("tool"), Arg: attr("arg"), Kind: attr("kind")}
		if a.Steps, err = number("steps"); err != nil {
			return err
		}
		if a.Sessions, err = number("sessions"); err != nil {
			return err
		}
		r.f.args = append(r.f.args, a)
		r.arg = len(r.f.args)
	case "value", "from":
		if r.arg == 0 {
			return r.f.errorf("", "line %d: a <fsmine:%s> outside a <fsmine:arg>", line, t.Name.Local)
		}
		a := &r.f.args[r.arg-1]
		if t.Name.Local == "value" {
			a.Values = append(a.Values, attr("hash"))
		} else {
			a.From = append(a.From, attr("label"))
		}
	case "loop_state", "back_edge":
		if r.loop == nil {
			return r.f.errorf("", "line %d: a <fsmine:%s> outside a <fsmine:loop>", line, t.Name.Local)
		}
		if t.Name.Local == "loop_state" {
			r.loop.States = append(r.loop.States, attr("id"))
		} else {
			r.loop.BackEdges = append(r.loop.BackEdges, automaton.EdgeRef{From: attr("from"), Event: attr("event"), To: attr("to")})
		}
	}
	return nil
}

// start reads an element of the flow, up to its end.
func (r *scxmlReader) start(dec *xml.Decoder, t xml.StartElement, line int) error {
	switch t.Name.Local {
	case "state", "final":
		if err := r.state(t, line); err != nil {
			return err
		}
		if err := r.children(dec, t.Name.Local); err != nil {
			return err
		}
		r.stack = r.stack[:len(r.stack)-1]
		return nil
	case "parallel", "history":
		return r.f.errorf("", "line %d: <%s> is not supported: a designed flow is one state at a time", line, t.Name.Local)
	case "initial":
		r.inInit = true
		err := r.children(dec, "initial")
		r.inInit = false
		return err
	case "transition":
		if err := r.transition(t, line); err != nil {
			return err
		}
		return r.skip(dec, "transition")
	}
	return nil
}

func (r *scxmlReader) state(t xml.StartElement, line int) error {
	id, _ := scxmlAttr(t, "", "id")
	if id == "" {
		return r.f.errorf("", "line %d: a <%s> without an id", line, t.Name.Local)
	}
	if _, dup := r.states[id]; dup {
		return r.f.errorf(id, "line %d: two states have this id", line)
	}
	s := &scxmlState{xmlID: id, id: id, final: t.Name.Local == "final", line: line}
	if v, ok := scxmlAttr(t, fsmineNS, "id"); ok {
		if v == "" {
			return r.f.errorf(id, "line %d: its fsmine:id is empty: a state needs a name", line)
		}
		s.id = unescape(v)
	}
	s.label, _ = scxmlAttr(t, fsmineNS, "label")
	s.label = unescape(s.label)
	for _, a := range []struct {
		name string
		n    *int
	}{{"visits", &s.visits}, {"sessions", &s.sessions}, {"max_run", &s.maxRun}} {
		if v, ok := scxmlAttr(t, fsmineNS, a.name); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return r.f.errorf(id, "line %d: fsmine:%s=%q is not a count", line, a.name, v)
			}
			*a.n = n
		}
	}
	s.initial, _ = scxmlAttr(t, "", "initial")
	if n := len(r.stack); n > 0 {
		r.stack[n-1].compound = true
		r.stack[n-1].children = append(r.stack[n-1].children, id)
	}
	r.states[id] = s
	r.order = append(r.order, id)
	r.stack = append(r.stack, s)
	return nil
}

func (r *scxmlReader) transition(t xml.StartElement, line int) error {
	target, _ := scxmlAttr(t, "", "target")
	if r.inInit {
		if len(r.stack) == 0 {
			r.initial = target
		} else {
			r.stack[len(r.stack)-1].initial = target
		}
		return nil
	}
	if len(r.stack) == 0 {
		return r.f.errorf("", "line %d: a <transition> outside a state", line)
	}
	mv := scxmlMove{target: target}
	mv.events, _ = scxmlAttr(t, "", "event")
	mv.fsmEvent, mv.hasFsmEvent = scxmlAttr(t, fsmineNS, "event")
	mv.fsmEvent = unescape(mv.fsmEvent)
	if v, ok := scxmlAttr(t, fsmineNS, "count"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return r.f.errorf("", "line %d: fsmine:count=%q is not a count", line, v)
		}
		mv.count = n
	}
	if v, ok := scxmlAttr(t, fsmineNS, "prob"); ok {
		var err error
		if mv.prob, err = strconv.ParseFloat(v, 64); err != nil {
			return r.f.errorf("", "line %d: fsmine:prob=%q is not a number", line, v)
		}
	}
	mv.generalized, _ = scxmlAttr(t, fsmineNS, "generalized")
	v, _ := scxmlAttr(t, fsmineNS, "rare")
	mv.rare = v == "true"
	v, _ = scxmlAttr(t, fsmineNS, "back_edge")
	mv.backEdge = v == "true"
	s := r.stack[len(r.stack)-1]
	if cond, ok := scxmlAttr(t, "", "cond"); ok && r.opt.Note != nil {
		// A guarded move is still a move the flow may take.
		r.opt.Note(r.f.errorf(s.id, "line %d: the guard cond=%q of its transition on %q is not kept: the model allows the move whatever the guard says", line, cond, mv.events).Error())
	}
	s.moves = append(s.moves, mv)
	return nil
}

// resolve follows compound states to the leaf they enter.
func (r *scxmlReader) resolve(xmlID string) (*scxmlState, error) {
	for range maxNesting {
		s, ok := r.states[xmlID]
		if !ok {
			return nil, errNoState
		}
		if !s.compound {
			return s, nil
		}
		xmlID = s.initial
		if xmlID == "" {
			xmlID = s.children[0]
		}
	}
	return nil, errNesting
}

// build makes the flow's nodes and edges.
func (r *scxmlReader) build() error {
	f := r.f
	for _, x := range r.order {
		s := r.states[x]
		if s.compound {
			if len(s.moves) > 0 {
				return f.errorf(s.id, "a compound state with transitions of its own: not supported; give its children the transitions")
			}
			continue
		}
		if _, dup := f.nodes[s.id]; dup {
			return f.errorf(s.id, "two states have this id")
		}
		n := f.add(s.id)
		n.label, n.visits, n.sessions, n.maxRun = s.label, s.visits, s.sessions, s.maxRun
		n.final = s.final && s.id != automaton.EndID
	}
	initial := r.initial
	if initial == "" && len(r.order) > 0 {
		initial = r.order[0]
	}
	start, err := r.resolve(initial)
	if errors.Is(err, errNesting) {
		return f.errorf(initial, "the initial state: %v", err)
	}
	if err != nil {
		return f.errorf(initial, "no start: the initial state is no state of the document")
	}
	if start.id != automaton.StartID {
		f.start = start.id
	}
	for _, x := range r.order {
		s := r.states[x]
		for _, mv := range s.moves {
			if err := r.edges(s, mv); err != nil {
				return err
			}
		}
	}
	return nil
}

// edges adds the edges of transition mv of state s: one per event
// descriptor.
func (r *scxmlReader) edges(s *scxmlState, mv scxmlMove) error {
	f := r.f
	if strings.TrimSpace(mv.target) == "" {
		return f.errorf(s.id, "a transition without a target (one that stays put, or runs only actions) is not supported: name the state it goes to")
	}
	if strings.ContainsAny(strings.TrimSpace(mv.target), " \t\n") {
		return f.errorf(s.id, "a transition with several targets (%q) is not supported", mv.target)
	}
	to, err := r.resolve(mv.target)
	if errors.Is(err, errNesting) {
		return f.errorf(s.id, "line %d: its transition goes to %q: %v", s.line, mv.target, err)
	}
	if err != nil {
		return f.errorf(s.id, "line %d: its transition goes to %q, which is no state of the document (a dangling target)", s.line, mv.target)
	}
	events := strings.Fields(mv.events)
	if mv.hasFsmEvent {
		events = []string{mv.fsmEvent}
	} else if len(events) == 0 {
		events = []string{r.opt.Event}
	}
	for _, ev := range events {
		if !mv.hasFsmEvent && wildcard(ev) {
			return f.errorf(s.id, "line %d: event %q: %s", s.line, ev, errWildcard)
		}
	}
	for _, ev := range events {
		f.edges = append(f.edges, edge{from: s.id, event: ev, to: to.id, count: mv.count, prob: mv.prob, rare: mv.rare, backEdge: mv.backEdge, generalized: mv.generalized})
	}
	return nil
}

// scxmlEscaped says which runes render.SCXML writes escaped: those XML
// cannot carry, and a text's own backslash where it would begin one.
func scxmlEscaped(r rune) bool { return !text.XMLChar(r) || r == '\\' }
