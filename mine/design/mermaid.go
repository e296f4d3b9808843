package design

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// A Mermaid stateDiagram-v2: "A --> B : caption" moves, [*] as the start
// (on the left) and the end (on the right), states declared bare or as
// `state "name" as A`. The quoted name is the state's name in the model
// (render.Mermaid writes a state's id there when it is not a Mermaid id),
// with render.Mermaid's hex escapes (\x1b for an ESC) and Mermaid's
// entity codes (#35; for #, #92; for a backslash of its own) decoded, as
// in captions and labels, and a description
// "A : label: X" gives the state the label X (render.Mermaid writes one for
// a state whose label is not its id); a caption is the move's
// event, "event · N" an event and a count as render.Mermaid writes them. A
// move without a caption takes Options.Event. Composite states (state A {
// ... }) are flattened as stages: a move into one enters the states its
// "[*] --> X" names, a move out of one leaves from every state that has an
// "X --> [*]" in it, with the one event the two moves give (the caption of
// either; a caption on both, unless the same, is refused: one move cannot
// take two events, and the composite's own moves apply only to the states
// that end it). A composite of one state stands for it without a [*]; a
// move into a composite of several with no "[*] --> X" (no start), out of
// one with no "X --> [*]", a caption on "[*] --> X" inside one, and states
// that end a composite no move leaves, are refused, naming the composite.
// Directions, notes, comments, styling and accessible titles and
// descriptions (accTitle:, accDescr: and accDescr { }) are skipped;
// choice, fork and join pseudo-states, and concurrency (--), are refused,
// and so is render.Mermaid's summary map, which counts moves it does not
// draw.

var (
	mermaidDeclare   = regexp.MustCompile(`^state\s+"([^"]*)"\s+as\s+(\S+?)\s*(\{)?$`)
	mermaidComposite = regexp.MustCompile(`^state\s+(\S+?)\s*\{$`)
	mermaidStereo    = regexp.MustCompile(`<<\s*(\w+)\s*>>`)
	mermaidCount     = regexp.MustCompile(`(?s)^(?:(.*) · )?(\d+)(?: \([0-9.]+%\))?$`)
	mermaidGen       = regexp.MustCompile(`(?s)^(?:(.*) · )?generalized \((.*)\)$`)
	mermaidVisits    = regexp.MustCompile(` · \d+ visits?( · .*)?$`)
	mermaidEntity    = regexp.MustCompile(`#(\d+);`)
	mermaidWord      = regexp.MustCompile(`^[^\s:{}"]+$`)
	// Mermaid's accessible title and description: "accTitle: text",
	// "accDescr: text", and "accDescr { text }" over lines up to its }.
	mermaidAcc      = regexp.MustCompile(`(?i)^acc(?:title|descr)\s*:`)
	mermaidAccBlock = regexp.MustCompile(`(?i)^accdescr\s*\{`)
)

// mermaidGroup is a composite state: the states and composites first met
// inside it, and its moves out of and into its own [*].
type mermaidGroup struct {
	name     string
	children []string
	starts   []mermaidMove // [*] --> X
	exits    []mermaidMove // X --> [*]
	left     bool          // a move left it through its exits
	// entered and leaving are what enter and leave found, once; in and
	// out mark it while they look (a start or exit that leads round to it
	// is errNesting, not a walk round the cycle on every way).
	entered, leaving []mermaidEnd
	in, out          bool
}

type mermaidReader struct {
	f      *flow
	opt    Options
	names  map[string]string // Mermaid id -> model id
	owner  map[string]string // model id -> Mermaid id
	groups map[string]*mermaidGroup
	placed map[string]bool // Mermaid ids that are some composite's child, or at the top
	stack  []*mermaidGroup
	moves  []mermaidMove
	err    error // the first conflict a declaration met
	forgot bool  // forget removed a node: compact the order
}

type mermaidMove struct {
	from, to, caption string
	captioned         bool
	line              int
}

// maxMermaidLine bounds a line of a Mermaid flow.
const maxMermaidLine = 16 << 20

func readMermaid(data []byte, opt Options) (*flow, error) {
	r := &mermaidReader{f: newFlow(opt.Path), opt: opt, names: map[string]string{}, owner: map[string]string{}, groups: map[string]*mermaidGroup{}, placed: map[string]bool{}}
	f := r.f
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), maxMermaidLine)
	lineNo, header, front, inNote, inDescr := 0, false, false, false, false
	for sc.Scan() {
		lineNo++
		// render.Mermaid writes a text's own spaces other than ASCII's as
		// entity codes, so a line indented by a pasted no-break space reads.
		line := strings.TrimSpace(sc.Text())
		if inDescr {
			line, inDescr = afterDescr(line)
		}
		switch {
		case !header && lineNo == 1 && line == "---":
			front = true
			continue
		case front:
			if line == "---" {
				front = false
			}
			continue
		case inNote:
			if line == "end note" {
				inNote = false
			}
			continue
		case line == "" || strings.HasPrefix(line, "%%"):
			continue
		case !header:
			if line != "stateDiagram-v2" && line != "stateDiagram" {
				return nil, f.errorf("", "line %d: unknown syntax: want a Mermaid stateDiagram-v2, got %q", lineNo, line)
			}
			header = true
			continue
		case mermaidAccBlock.MatchString(line):
			line, inDescr = afterDescr(line[strings.IndexByte(line, '{')+1:])
			if line == "" {
				continue
			}
		}
		if err := r.line(line, lineNo, &inNote); err != nil {
			return nil, err
		}
		if r.err != nil {
			return nil, f.errorf("", "line %d: %v", lineNo, r.err)
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, f.errorf("", "line %d: longer than %d MiB", lineNo+1, maxMermaidLine>>20)
	} else if err != nil {
		return nil, f.errorf("", "%v", err)
	}
	if !header {
		return nil, f.errorf("", "unknown syntax: no stateDiagram-v2 line")
	}
	if len(r.stack) > 0 {
		return nil, f.errorf(r.stack[len(r.stack)-1].name, "its composite state is not closed with }")
	}
	r.compact()
	return f, r.resolve()
}

func (r *mermaidReader) line(line string, n int, inNote *bool) error {
	f := r.f
	if strings.IndexByte(line, 0) >= 0 {
		// innerEnd relies on no id holding a NUL.
		return f.errorf("", "line %d: a NUL byte", n)
	}
	if !utf8.ValidString(line) {
		// the model would hold a name its own file cannot write
		return f.errorf("", "line %d: bytes that are not UTF-8", n)
	}
	lower := strings.ToLower(line)
	switch {
	case strings.HasPrefix(lower, "direction "), strings.HasPrefix(lower, "classdef "),
		strings.HasPrefix(lower, "class "), strings.HasPrefix(lower, "style "),
		mermaidAcc.MatchString(line),
		strings.HasPrefix(lower, "hide empty description"), strings.HasPrefix(lower, "scale "):
		return nil
	case strings.HasPrefix(lower, "note "):
		if !strings.Contains(line, ":") {
			*inNote = true
		}
		return nil
	case line == "--":
		return f.errorf("", "line %d: concurrent regions (--) are not supported: a designed flow is one state at a time", n)
	case line == "}":
		if len(r.stack) == 0 {
			return f.errorf("", "line %d: } closes no composite state", n)
		}
		r.stack = r.stack[:len(r.stack)-1]
		return nil
	}
	if m := mermaidStereo.FindStringSubmatch(line); m != nil {
		return f.errorf("", "line %d: <<%s>> pseudo-states are not supported: draw the decision as moves from the state that decides", n, m[1])
	}
	if m := mermaidDeclare.FindStringSubmatch(line); m != nil {
		// The summary writes its " · N visits" as it is; a full export
		// writes a name's own "·" as an entity code.
		if mermaidVisits.MatchString(m[1]) {
			return f.errorf("", "line %d: an fsmine summary map (render --detail summary), a picture that leaves moves out: import the model's --detail full export, or its SCXML or XState", n)
		}
		name := mermaidDecode(unshown(m[1]))
		if m[3] != "" {
			return r.open(m[2], name, n)
		}
		r.declare(m[2], name)
		return nil
	}
	if m := mermaidComposite.FindStringSubmatch(line); m != nil {
		return r.open(m[1], m[1], n)
	}
	if from, rest, ok := strings.Cut(line, "-->"); ok {
		from = strings.TrimSpace(from)
		to, caption, captioned := strings.Cut(rest, ":")
		to = strings.TrimSpace(to)
		if !mermaidWord.MatchString(from) || !mermaidWord.MatchString(to) {
			return f.errorf("", "line %d: unknown syntax: a move is A --> B, got %q", n, line)
		}
		r.moves = append(r.moves, mermaidMove{from: r.end(from, true), to: r.end(to, false), caption: strings.TrimSpace(caption), captioned: captioned, line: n})
		return nil
	}
	if strings.HasPrefix(line, "[*]") {
		return f.errorf("", "line %d: unknown syntax: [*] stands only at either end of a move, got %q", n, line)
	}
	if id, desc, ok := strings.Cut(line, ":"); ok && mermaidWord.MatchString(strings.TrimSpace(id)) {
		id = strings.TrimSpace(id)
		r.declare(id, "")
		// render.Mermaid describes a state whose label is not its id so.
		label, ok := strings.CutPrefix(mermaidDecode(unshown(strings.TrimSpace(desc))), "label:")
		if !ok || r.err != nil { // a clash of names: the caller reports r.err
			return nil
		}
		name, ok := r.names[id]
		if !ok {
			// A composite state is flattened away: no node to label.
			return f.errorf(id, "line %d: a label for a composite state: only a state of the flow has one", n)
		}
		r.f.nodes[name].label = strings.TrimPrefix(label, " ")
		return nil
	}
	if mermaidWord.MatchString(line) {
		r.declare(line, "")
		return nil
	}
	return f.errorf("", "line %d: unknown syntax: %q", n, line)
}

// afterDescr reads s, inside an accDescr { } block: the text after the }
// that closes it, and whether it is still open (s has none).
func afterDescr(s string) (rest string, open bool) {
	i := strings.IndexByte(s, '}')
	if i < 0 {
		return "", true
	}
	return strings.TrimSpace(s[i+1:]), false
}

// errEmpty is a move into or out of a composite state with no state in it.
var errEmpty = errors.New("an empty composite state")

// innerEnd marks [*] inside a composite state: no Mermaid id holds a NUL.
const innerEnd = "\x00[*]"

// end is the Mermaid id of a move's end: [*] inside a composite state is
// that state's own start or end, written as innerEnd and the group's name.
func (r *mermaidReader) end(id string, left bool) string {
	if id != "[*]" {
		r.declare(id, "")
		return id
	}
	if len(r.stack) == 0 {
		if left {
			return automaton.StartID
		}
		return automaton.EndID
	}
	return innerEnd + r.stack[len(r.stack)-1].name
}

func (r *mermaidReader) declare(id, name string) {
	if _, group := r.groups[id]; group {
		return
	}
	if old, ok := r.names[id]; ok && (name == "" || old == name) {
		r.noteChild(id)
		return
	}
	if name == "" {
		name = id
	}
	if other, ok := r.owner[name]; ok && other != id {
		// Two ids, one node: the moves of both would run through it.
		if r.err == nil {
			r.err = fmt.Errorf("the states %s and %s are both named %s", strconv.Quote(other), strconv.Quote(id), strconv.Quote(name))
		}
		return
	}
	if old, ok := r.names[id]; ok {
		if old != id {
			if r.err == nil {
				r.err = fmt.Errorf("the state %s is named twice, %s and %s", strconv.Quote(id), strconv.Quote(old), strconv.Quote(name))
			}
			return
		}
		// A later `state "name" as id` renames a state first met bare.
		r.forget(old)
		delete(r.owner, old)
	}
	r.names[id] = name
	r.owner[name] = id
	r.f.add(name)
	r.noteChild(id)
}

// noteChild places id in the composite open where it is first met.
func (r *mermaidReader) noteChild(id string) {
	if r.placed[id] {
		return
	}
	r.placed[id] = true
	if n := len(r.stack); n > 0 {
		g := r.stack[n-1]
		g.children = append(g.children, id)
	}
}

func (r *mermaidReader) open(id, name string, line int) error {
	if _, ok := r.groups[id]; ok {
		return r.f.errorf(name, "two composite states have the id %q", id)
	}
	if old, ok := r.names[id]; ok {
		if r.f.nodes[old].label != "" {
			return r.f.errorf(id, "line %d: a composite state, labelled before as a state: only a state of the flow has a label", line)
		}
		// Met in a move before its braces: a composite, not a state.
		r.forget(old)
		delete(r.names, id)
		delete(r.owner, old)
	}
	r.noteChild(id) // a composite may be its parent's only child
	g := &mermaidGroup{name: id}
	r.groups[id] = g
	r.stack = append(r.stack, g)
	return nil
}

// mermaidEnd is a state a flattened move leaves or enters, with the
// caption of the move into a composite's [*] it came through, if any.
type mermaidEnd struct {
	id   string // the model's id, or __start__ or __end__
	exit *mermaidMove
}

// resolve turns the moves into edges, through composite states.
func (r *mermaidReader) resolve() error {
	f := r.f
	for _, mv := range r.moves {
		if g, inner := strings.CutPrefix(mv.from, innerEnd); inner {
			if strings.HasPrefix(mv.to, innerEnd) {
				return f.errorf(g, "line %d: a move from its [*] to its [*]: not supported; flatten it by hand", mv.line)
			}
			if mv.captioned {
				return f.errorf(g, "line %d: a caption on the move out of its [*]: the move into the composite state gives the event; caption that one", mv.line)
			}
			r.groups[g].starts = append(r.groups[g].starts, mv)
			continue
		}
		if g, inner := strings.CutPrefix(mv.to, innerEnd); inner {
			r.groups[g].exits = append(r.groups[g].exits, mv)
		}
	}
	// A caption is a count only in a counted export (render.Mermaid of a
	// mined model), which captions the moves out of [*] with their counts
	// and every move with a count or "generalized (kind)"; a design's
	// captions are events, "404" included.
	counted, startCounted := true, false
	for _, mv := range r.moves {
		if !mv.captioned {
			continue
		}
		c := mermaidDecode(mv.caption)
		count := mermaidCount.MatchString(c)
		startCounted = startCounted || count && mv.from == automaton.StartID
		counted = counted && (count || mermaidGen.MatchString(c)) // else a design that captions its start with a number
	}
	counted = counted && startCounted
	for _, mv := range r.moves {
		if strings.HasPrefix(mv.from, innerEnd) || strings.HasPrefix(mv.to, innerEnd) {
			continue
		}
		froms, err := r.leave(mv.from, mv.line, 0)
		if err != nil {
			return r.wrap(err, mv.from, mv.line)
		}
		tos, err := r.enter(mv.to, mv.line, 0)
		if err != nil {
			return r.wrap(err, mv.to, mv.line)
		}
		if n := len(froms) * len(tos); n > 1 && len(f.edges)+n > maxMoves {
			return f.errorf("", "line %d: more than %d moves: not a designed flow", mv.line, maxMoves)
		}
		for _, from := range froms {
			caption := mv
			if ex := from.exit; ex != nil && ex.captioned {
				if mv.captioned && mv.caption != ex.caption {
					return f.errorf(mv.from, "line %d: its move on %q, and the move from %q into its [*] on %q (line %d): one flattened move cannot take both events; flatten it by hand, or caption one of the two",
						mv.line, mermaidDecode(unshown(mv.caption)), ex.from, mermaidDecode(unshown(ex.caption)), ex.line)
				}
				caption = *ex
			}
			for _, to := range tos {
				e := edge{from: from.id, to: to.id, event: r.opt.Event}
				if caption.captioned {
					e.event = mermaidDecode(unshown(caption.caption))
					if m := mermaidGen.FindStringSubmatch(e.event); counted && m != nil {
						e.event, e.generalized = m[1], m[2]
					} else if m := mermaidCount.FindStringSubmatch(e.event); counted && m != nil {
						e.event = m[1]
						e.count, _ = strconv.Atoi(m[2])
					}
				}
				if from.id == automaton.StartID {
					e.event = ""
				}
				f.edges = append(f.edges, e)
			}
		}
	}
	for _, id := range sortedKeys(r.groups) {
		if g := r.groups[id]; len(g.exits) > 0 && !g.left {
			ex := g.exits[0]
			return f.errorf(id, "line %d: %q ends the composite state, but no move leaves it (a dead end)", ex.line, ex.from)
		}
	}
	return nil
}

// wrap words err, met following a move's end id on line: a sentinel
// (errEmpty, errNesting) names id, an *Error is returned as it is.
func (r *mermaidReader) wrap(err error, id string, line int) error {
	var fe *Error
	if errors.As(err, &fe) {
		return err
	}
	return r.f.errorf(id, "line %d: %v", line, err)
}

// through is what enter and leave start from: id's composite state, or (nil)
// the end id is itself, a pseudo-state or a node, or the error why it is
// none; depth composites deep.
func (r *mermaidReader) through(id string, depth int) (*mermaidGroup, []mermaidEnd, error) {
	if depth == maxNesting {
		return nil, nil, errNesting
	}
	if id == automaton.StartID || id == automaton.EndID {
		return nil, []mermaidEnd{{id: id}}, nil
	}
	if g, ok := r.groups[id]; ok {
		return g, nil, nil
	}
	if name, ok := r.names[id]; ok {
		return nil, []mermaidEnd{{id: name}}, nil
	}
	return nil, nil, errEmpty
}

// enter is the states a move on line into id enters: id's own node, or
// through a composite state its "[*] --> X" children, depth composites deep.
func (r *mermaidReader) enter(id string, line, depth int) ([]mermaidEnd, error) {
	g, self, err := r.through(id, depth)
	if g == nil {
		return self, err
	}
	if len(g.starts) == 0 {
		switch len(g.children) {
		case 0:
			return nil, errEmpty
		case 1:
			return r.enter(g.children[0], line, depth+1)
		}
		return nil, r.f.errorf(id, "line %d: no start: a move enters the composite state, but none of its states follows its [*] (write [*] --> X inside it)", line)
	}
	if g.entered != nil {
		return g.entered, nil
	}
	if g.in {
		return nil, errNesting
	}
	g.in = true
	defer func() { g.in = false }()
	var out []mermaidEnd
	for _, mv := range g.starts {
		ends, err := r.enter(mv.to, mv.line, depth+1)
		if err != nil {
			return nil, err
		}
		if len(out)+len(ends) > maxMoves {
			return nil, r.f.errorf(id, "line %d: entering the composite state enters more than %d states: not a designed flow", line, maxMoves)
		}
		out = append(out, ends...)
	}
	g.entered = out
	return out, nil
}

// leave is the states a move on line out of id leaves from: id's own
// node, or through a composite state every state that moves to its [*],
// with the caption of that move, depth composites deep.
func (r *mermaidReader) leave(id string, line, depth int) ([]mermaidEnd, error) {
	g, self, err := r.through(id, depth)
	if g == nil {
		return self, err
	}
	if len(g.exits) == 0 {
		switch len(g.children) {
		case 0:
			return nil, errEmpty
		case 1:
			return r.leave(g.children[0], line, depth+1)
		}
		return nil, r.f.errorf(id, "line %d: a move leaves the composite state, but none of its states moves to its [*] (write X --> [*] inside it)", line)
	}
	g.left = true
	if g.leaving != nil {
		return g.leaving, nil
	}
	if g.out {
		return nil, errNesting
	}
	g.out = true
	defer func() { g.out = false }()
	var out []mermaidEnd
	for i := range g.exits {
		mv := &g.exits[i]
		ends, err := r.leave(mv.from, mv.line, depth+1)
		if err != nil {
			return nil, err
		}
		if len(out)+len(ends) > maxMoves {
			return nil, r.f.errorf(id, "line %d: leaving the composite state leaves from more than %d states: not a designed flow", line, maxMoves)
		}
		for _, e := range ends {
			if e.exit != nil && e.exit.captioned {
				// a nested composite's exit: its caption and this one's
				if mv.captioned && mv.caption != e.exit.caption {
					return nil, r.f.errorf(mv.from, "line %d: its move into the [*] of %q on %q, and the move from %q into its own [*] on %q (line %d): one flattened move cannot take both events; flatten it by hand, or caption one of the two",
						mv.line, id, mermaidDecode(unshown(mv.caption)), e.exit.from, mermaidDecode(unshown(e.exit.caption)), e.exit.line)
				}
				out = append(out, e)
				continue
			}
			out = append(out, mermaidEnd{id: e.id, exit: mv})
		}
	}
	g.leaving = out
	return out, nil
}

// mermaidDecode undoes Mermaid's entity codes (#35; is "#").
func mermaidDecode(s string) string {
	return mermaidEntity.ReplaceAllStringFunc(s, func(m string) string {
		n, err := strconv.Atoi(m[1 : len(m)-1])
		if err != nil || n > 0x10FFFF {
			return m
		}
		return string(rune(n))
	})
}

// unshown undoes the escapes render.Mermaid writes for the characters it
// does not show (text.Unshown: an ANSI colour's ESC, a newline), in hex
// only; any other backslash, a hand-written one, stays as it is.
func unshown(s string) string {
	out, _ := text.HexUnescape(s, text.Unshown)
	return out
}

// forget removes the node name, met before a declaration that renames it
// or makes it a composite state. Its place in the flow's order goes at
// compact, once: removing it here cost a pass over the order per rename.
func (r *mermaidReader) forget(name string) {
	delete(r.f.nodes, name)
	r.forgot = true
}

// compact drops from the flow's order the nodes forget removed, keeping a
// node added again at its last place.
func (r *mermaidReader) compact() {
	if !r.forgot {
		return
	}
	seen := map[string]bool{}
	var keep []string
	for i := len(r.f.order) - 1; i >= 0; i-- {
		id := r.f.order[i]
		if _, ok := r.f.nodes[id]; ok && !seen[id] {
			seen[id] = true
			keep = append(keep, id)
		}
	}
	slices.Reverse(keep)
	r.f.order = keep
}
