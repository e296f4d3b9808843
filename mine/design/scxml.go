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
)

// W3C SCXML 1.0: <state> and <final> elements with <transition event
// target>; the document's initial attribute (or an <initial> element, or
// its first state) is where the flow starts, and a <final> ends it. Compound
// states are flattened as XState's are. A transition with several event
// descriptors is one move per descriptor; one without an event takes
// Options.Event. The attributes of fsmine's namespace that render.SCXML
// writes (fsmine:id, fsmine:label, fsmine:visits, fsmine:sessions,
// fsmine:max_run,
// fsmine:event, fsmine:count, fsmine:rare, fsmine:back_edge,
// fsmine:generalized) and its version comment
// are read back, so that an export reads back to its model.

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
	rare, backEdge           bool
	generalized              string
}

func readSCXML(data []byte, opt Options) (*flow, error) {
	f := newFlow(opt.Path)
	dec := xml.NewDecoder(bytes.NewReader(data))
	var (
		states  = map[string]*scxmlState{}
		order   []string
		stack   []*scxmlState
		initial string
		sawRoot bool
		inInit  bool
	)
	attr := func(se xml.StartElement, space, name string) (string, bool) {
		for _, a := range se.Attr {
			if a.Name.Local == name && a.Name.Space == space {
				return a.Value, true
			}
		}
		return "", false
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, f.errorf("", "not an SCXML document: %v", err)
		}
		line, _ := dec.InputPos()
		switch t := tok.(type) {
		case xml.Comment:
			if v := scxmlVersion.FindSubmatch(t); v != nil && !f.versioned {
				f.version, _ = strconv.Atoi(string(v[1]))
				f.versioned = true
			}
		case xml.StartElement:
			switch t.Name.Local {
			case "scxml":
				sawRoot = true
				initial, _ = attr(t, "", "initial")
			case "state", "final":
				id, _ := attr(t, "", "id")
				if id == "" {
					return nil, f.errorf("", "line %d: a <%s> without an id", line, t.Name.Local)
				}
				if _, dup := states[id]; dup {
					return nil, f.errorf(id, "line %d: two states have this id", line)
				}
				s := &scxmlState{xmlID: id, id: id, final: t.Name.Local == "final", line: line}
				if v, ok := attr(t, fsmineNS, "id"); ok {
					s.id = v
				}
				s.label, _ = attr(t, fsmineNS, "label")
				if v, ok := attr(t, fsmineNS, "visits"); ok {
					s.visits, _ = strconv.Atoi(v)
				}
				if v, ok := attr(t, fsmineNS, "sessions"); ok {
					s.sessions, _ = strconv.Atoi(v)
				}
				if v, ok := attr(t, fsmineNS, "max_run"); ok {
					s.maxRun, _ = strconv.Atoi(v)
				}
				s.initial, _ = attr(t, "", "initial")
				if n := len(stack); n > 0 {
					stack[n-1].compound = true
					stack[n-1].children = append(stack[n-1].children, id)
				}
				states[id] = s
				order = append(order, id)
				stack = append(stack, s)
			case "parallel", "history":
				return nil, f.errorf("", "line %d: <%s> is not supported: a designed flow is one state at a time", line, t.Name.Local)
			case "initial":
				inInit = true
			case "transition":
				target, _ := attr(t, "", "target")
				if inInit {
					if len(stack) == 0 {
						initial = target
					} else {
						stack[len(stack)-1].initial = target
					}
					continue
				}
				if len(stack) == 0 {
					return nil, f.errorf("", "line %d: a <transition> outside a state", line)
				}
				mv := scxmlMove{target: target}
				mv.events, _ = attr(t, "", "event")
				mv.fsmEvent, mv.hasFsmEvent = attr(t, fsmineNS, "event")
				if v, ok := attr(t, fsmineNS, "count"); ok {
					mv.count, _ = strconv.Atoi(v)
				}
				mv.generalized, _ = attr(t, fsmineNS, "generalized")
				if v, _ := attr(t, fsmineNS, "rare"); v == "true" {
					mv.rare = true
				}
				if v, _ := attr(t, fsmineNS, "back_edge"); v == "true" {
					mv.backEdge = true
				}
				s := stack[len(stack)-1]
				s.moves = append(s.moves, mv)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "state", "final":
				stack = stack[:len(stack)-1]
			case "initial":
				inInit = false
			}
		}
	}
	if !sawRoot {
		return nil, f.errorf("", "not an SCXML document: no <scxml> element")
	}
	// resolve follows compound states to the leaf they enter.
	resolve := func(xmlID string) (*scxmlState, bool) {
		for range 64 {
			s, ok := states[xmlID]
			if !ok {
				return nil, false
			}
			if !s.compound {
				return s, true
			}
			xmlID = s.initial
			if xmlID == "" {
				xmlID = s.children[0]
			}
		}
		return nil, false
	}
	for _, x := range order {
		s := states[x]
		if s.compound {
			if len(s.moves) > 0 {
				return nil, f.errorf(s.id, "a compound state with transitions of its own: not supported; give its children the transitions")
			}
			continue
		}
		if _, dup := f.nodes[s.id]; dup {
			return nil, f.errorf(s.id, "two states have this id")
		}
		n := f.add(s.id)
		n.label, n.visits, n.sessions, n.maxRun = s.label, s.visits, s.sessions, s.maxRun
		n.final = s.final && s.id != automaton.EndID
	}
	if initial == "" && len(order) > 0 {
		initial = order[0]
	}
	start, ok := resolve(initial)
	if !ok {
		return nil, f.errorf(initial, "no start: the initial state is no state of the document")
	}
	if start.id != automaton.StartID {
		f.start = start.id
	}
	for _, x := range order {
		s := states[x]
		for _, mv := range s.moves {
			if strings.TrimSpace(mv.target) == "" {
				return nil, f.errorf(s.id, "a transition without a target (one that stays put, or runs only actions) is not supported: name the state it goes to")
			}
			if strings.ContainsAny(strings.TrimSpace(mv.target), " \t\n") {
				return nil, f.errorf(s.id, "a transition with several targets (%q) is not supported", mv.target)
			}
			to, ok := resolve(mv.target)
			if !ok {
				return nil, f.errorf(s.id, "line %d: its transition goes to %q, which is no state of the document (a dangling target)", s.line, mv.target)
			}
			events := strings.Fields(mv.events)
			if mv.hasFsmEvent {
				events = []string{mv.fsmEvent}
			} else if len(events) == 0 {
				events = []string{opt.Event}
			}
			for _, ev := range events {
				f.edges = append(f.edges, edge{from: s.id, event: ev, to: to.id, count: mv.count, rare: mv.rare, backEdge: mv.backEdge, generalized: mv.generalized})
			}
		}
	}
	return f, nil
}
