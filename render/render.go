package render

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// Options shape a rendering. The zero value draws every state and
// transition, and lays pictures out with the builtin engine.
type Options struct {
	// HideRare leaves rare transitions out of the picture (DOT, SVG, PNG and
	// Mermaid) and, with them, states left without any transition;
	// __start__ and __end__ are always drawn. The machine exports (SCXML,
	// XState, LangGraph) always keep every transition.
	HideRare bool

	// ClusterSep, when not empty, groups states into clusters by the part of
	// their label before the first ClusterSep ("order" for "order_pay" with
	// ClusterSep "_"). States whose label lacks ClusterSep, or starts with
	// it, stay outside any cluster. DOT, SVG and PNG only.
	ClusterSep string

	// Title, when not empty, is drawn as the graph's label (DOT, SVG, PNG)
	// or the diagram's title (Mermaid).
	Title string

	// Engine lays SVG and PNG out: EngineBuiltin (also the zero value) or
	// EngineDot.
	Engine Engine

	// Detail is DetailFull (also the zero value) or DetailSummary, which
	// groups states into stages (see Stages); HideRare and ClusterSep do
	// not apply to a summary, which never draws rare transitions.
	Detail Detail

	// Failures colours each transition of a model mined with an outcome
	// (build --outcome) by the share of the sessions that took it and
	// failed, and adds that share to its caption: red above the log's
	// share, green below, grey at it. DetailFull DOT, SVG and PNG only;
	// ErrNoOutcomes without outcome counts.
	Failures bool

	// Timeout, when not zero, is the most time SVG and PNG lay a picture
	// out for; past it they return ErrLayoutTimeout. The builtin engine
	// does not limit a summary's layout (its few boxes take well under a
	// second).
	Timeout time.Duration
}

// ErrNoOutcomes is returned for Options.Failures on a model mined without
// an outcome.
var ErrNoOutcomes = errors.New("the model has no outcome counts: mine it with build --outcome")

// Engine names the Graphviz that lays out SVG and PNG.
type Engine string

const (
	// EngineBuiltin is Graphviz compiled to WebAssembly and run inside
	// fsmine (github.com/goccy/go-graphviz, patched in internal/graphviz):
	// nothing needs installing.
	EngineBuiltin Engine = "builtin"
	// EngineDot runs Graphviz's dot program found on PATH.
	EngineDot Engine = "dot"
)

// builtin says whether e is EngineBuiltin, the zero value included.
func (e Engine) builtin() bool { return e == "" || e == EngineBuiltin }

// ErrNilModel is returned by the writers in Formats given a nil model.
var ErrNilModel = errors.New("nil model")

// Func is the shape of the writers in Formats.
type Func func(w io.Writer, m *automaton.Model, opt Options) error

// Formats maps the format names the command line accepts to their writers.
var Formats = map[string]Func{
	"dot":       DOT,
	"svg":       SVG,
	"png":       PNG,
	"mermaid":   Mermaid,
	"scxml":     SCXML,
	"xstate":    XState,
	"langgraph": LangGraph,
}

// FormatNames returns the keys of Formats, sorted.
func FormatNames() []string {
	names := make([]string, 0, len(Formats))
	for name := range Formats {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// sorted returns a copy of m, sharing nothing that Sort changes, whose
// States and Transitions are in the model file's order, so that output does
// not depend on how the model was put together.
func sorted(m *automaton.Model) (*automaton.Model, error) {
	if m == nil {
		return nil, ErrNilModel
	}
	c := *m
	c.States = slices.Clone(m.States)
	c.Transitions = slices.Clone(m.Transitions)
	c.Loops = slices.Clone(m.Loops)
	c.Sort()
	return &c, nil
}

// isPseudo reports whether id is __start__ or __end__.
func isPseudo(id string) bool {
	return id == automaton.StartID || id == automaton.EndID
}

// edgeCaption is a transition's caption in pictures: "ok · 40 (66.7%)", or
// "40 (66.7%)" for the empty event out of __start__; a generalised
// transition, which no session took, shows its kind: "ok · generalized
// (skip)".
func edgeCaption(t *automaton.Transition) string {
	s := fmt.Sprintf("%d (%s)", t.Count, text.Percent(t.Prob))
	if t.Generalized != "" {
		s = "generalized (" + t.Generalized + ")"
	}
	if t.Event != "" {
		s = t.Event + " · " + s
	}
	return s
}

// trunkEdges returns the transitions that draw the trunk: for each pair of
// consecutive states of __start__, m.Trunk..., __end__, the most frequent
// transition between them (Model.Out's order breaks ties). An empty trunk
// has no trunk edges.
func trunkEdges(m *automaton.Model) map[*automaton.Transition]bool {
	edges := make(map[*automaton.Transition]bool)
	if len(m.Trunk) == 0 {
		return edges
	}
	path := make([]string, 0, len(m.Trunk)+2)
	path = append(path, automaton.StartID)
	path = append(path, m.Trunk...)
	path = append(path, automaton.EndID)
	for i := 0; i+1 < len(path); i++ {
		for _, t := range m.Out(path[i]) {
			if t.To == path[i+1] {
				edges[t] = true
				break
			}
		}
	}
	return edges
}

// visible returns the transitions and states a picture draws under opt: all
// of them, or without rare transitions and the states that only those
// touched (__start__ and __end__ stay). Both keep the model's order.
func visible(m *automaton.Model, opt Options) ([]*automaton.Transition, []*automaton.State) {
	var ts []*automaton.Transition
	touched := make(map[string]bool)
	for i := range m.Transitions {
		t := &m.Transitions[i]
		if opt.HideRare && t.Rare {
			continue
		}
		ts = append(ts, t)
		touched[t.From] = true
		touched[t.To] = true
	}
	var ss []*automaton.State
	for i := range m.States {
		s := &m.States[i]
		if !opt.HideRare || touched[s.ID] || isPseudo(s.ID) {
			ss = append(ss, s)
		}
	}
	return ts, ss
}

// uniqueNames gives each id a distinct name made by clean, in the order of
// ids. An id that clean leaves as it is keeps its name; the others get
// clean's result with "_2", "_3", ... appended when that is taken, so that
// the mapping is deterministic and one to one.
func uniqueNames(ids []string, clean func(string) string) map[string]string {
	names := make(map[string]string, len(ids))
	used := make(map[string]bool, len(ids))
	for _, id := range ids {
		if clean(id) == id {
			names[id] = id
			used[id] = true
		}
	}
	for _, id := range ids {
		if _, ok := names[id]; ok {
			continue
		}
		base := clean(id)
		name := base
		for n := 2; used[name]; n++ {
			name = base + "_" + strconv.Itoa(n)
		}
		names[id] = name
		used[name] = true
	}
	return names
}

// asciiWord replaces every character of s that is not an ASCII letter,
// digit or underscore with an underscore.
func asciiWord(s string) string {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r < 0x80 && (r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			out = append(out, byte(r))
		} else {
			out = append(out, '_')
		}
	}
	return string(out)
}

// stateIDs returns the ids of states, in their order.
func stateIDs(states []*automaton.State) []string {
	ids := make([]string, len(states))
	for i, s := range states {
		ids[i] = s.ID
	}
	return ids
}

// shownText is s with invalid UTF-8 replaced and control characters written
// as their Go escapes (a newline becomes \n), for formats that cannot carry
// them; so are U+FFFE and U+FFFF, which XML cannot carry (SVG, SCXML), and
// the bidi controls (text.BidiControl), which would make a name read as
// another (a right-to-left override shows "gpj.exe" as "exe.jpg"). A
// backslash of s's own that would read as such an escape
// (text.ReadsAsEscape) is written \x5c, so that two names never show alike
// ("x\x1by" with ESC is x\x1by, the seven characters x\x1by are
// x\x5cx1by); other backslashes stay (C:\Users).
func shownText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	for i, r := range s {
		switch {
		case text.Unshown(r):
			b.WriteString(goEscape(r))
		case text.ReadsAsEscape(s, i):
			b.WriteString(`\x5c`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// uncounted reports whether m is a design without counts
// (automaton.Model.Uncounted): pictures draw it in full with events only. A
// design read back from an export of a mined model is drawn as that model
// was.
func uncounted(m *automaton.Model) bool { return m.Uncounted() }

// goEscape is r as a Go escape: \n, \t and \r by name, any other in hex
// (text.HexEscape: \x07, not \a), the escapes text.ReadsAsEscape knows,
// which shownText tells from a text's own backslash (fsmine import decodes
// only the hex forms).
func goEscape(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\t':
		return `\t`
	case '\r':
		return `\r`
	}
	return text.HexEscape(r)
}
