// Package design reads flows that people designed (a Mermaid stateDiagram-v2,
// an SCXML document, an XState machine, LangGraph's graph JSON or a STAR
// task graph) into fsmine models, so that the designed machine can be
// checked against logs, enforced at run time and compared with the mined
// one. It works on bytes and values: no flags, no printing.
//
// fsmine's own exports read back. render.SCXML and render.XState (full or
// summary) carry all that the model's digest covers (visits, max_run,
// counts, probabilities, rare and generalised marks, loops with their caps
// and back edges, constraints, argument rules): the model read back has the digest of the
// model written, and rendering it again gives the same bytes. render.Mermaid
// (full) carries what it draws (states, labels, moves, events and counts)
// and reads back to a model that renders to the same Mermaid bytes but has
// no visits, probabilities, loop caps or constraints, so another digest: to
// move a mined model through a design tool and keep what the guard
// enforces, use SCXML or XState. Other exports (the Mermaid summary map,
// DOT, LangGraph) are pictures or code and do not read back to the model.
//
// A designed model is an ordinary automaton.Model whose Params.Design names
// the format it came from; its counts are 0 unless the flow carries them
// (fsmine's exports do). Every flow is held to the same rules before it
// becomes a model: every target is a node of the flow, the flow has a
// start, every node is reachable from the start and can reach the end (no
// dead end, no cycle without exit), a label map names only nodes of the
// flow, and the machine is deterministic (a state, an event and the label
// of the next state pick one transition).
package design

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/jsondup"
	"github.com/fsmine/fsmine/internal/walk"
	"github.com/fsmine/fsmine/mine"
)

// Format names, as Options.Format and Params.Design take them.
const (
	FormatMermaid   = "mermaid"
	FormatSCXML     = "scxml"
	FormatXState    = "xstate"
	FormatLangGraph = "langgraph"
	FormatSTAR      = "star"
)

// Formats lists the formats Read takes, sorted.
func Formats() []string {
	return []string{FormatLangGraph, FormatMermaid, FormatSCXML, FormatSTAR, FormatXState}
}

// maxNesting bounds the composite states a reader follows from a ref to
// the leaf it enters (each one's initial child): deeper, or round a cycle
// of initial children, is errNesting, not a missing state.
const maxNesting = 64

// maxStates and maxMoves bound a flow: a design a person drew has tens of
// states, a mined model read back from an export hundreds to thousands, and
// checking a flow costs about 3 KB a state and 1 KB a move (a 20 MB Mermaid
// chain of a million states took 3.2 GB).
const (
	maxStates = 100_000
	maxMoves  = 100_000
)

var (
	errNesting = errors.New("composite states nested more than 64 deep, or initial children that lead round in a cycle")
	errNoState = errors.New("no such state")
)

// errWildcard words an event that stands for others ("*" for any, "go.*"
// for go and the events under it in SCXML and XState): a move of the model
// is on one event, the one the log's record carries.
var errWildcard = errors.New("a wildcard event is not supported: name the events it stands for")

// wildcard says whether an event of SCXML or XState stands for others.
func wildcard(event string) bool {
	return event == "*" || strings.HasSuffix(event, ".*")
}

// ErrFlow is wrapped by every error about the content of a flow or of its
// label map (as opposed to reading the file), for errors.Is.
var ErrFlow = errors.New("bad flow")

// Error is a problem of a flow: the file, the node it concerns (empty when
// it concerns the whole flow) and what is wrong. It wraps ErrFlow.
type Error struct {
	Path string
	Node string
	Msg  string
}

func (e *Error) Error() string {
	if e.Node == "" {
		return e.Path + ": " + e.Msg
	}
	return fmt.Sprintf("%s: node %q: %s", e.Path, e.Node, e.Msg)
}

func (e *Error) Unwrap() error { return ErrFlow }

// Options say how to read a flow.
type Options struct {
	// Path is the flow's file name, for error messages and the model's
	// source.
	Path string
	// Format is one of Formats, or empty to recognise it by Path's
	// extension and then by content (see Detect).
	Format string
	// Labels maps a node name of the design to the label of the log's
	// records that the node stands for, where the two differ. Every key
	// must name a node of the flow. LabelsPath names the map's file in
	// errors.
	Labels     map[string]string
	LabelsPath string
	// Event is the event given to designed moves that name none (a
	// Mermaid transition without a caption, a LangGraph edge without a
	// condition, the move into __end__ out of a final state): the event
	// the logs' records of that step carry. Empty by default.
	Event string
	// Note, when not nil, is told what a reader took as it read that the
	// flow does not say outright (a STAR key read as an answer word of the
	// task's own).
	Note func(msg string)
}

// Read reads the designed flow data (the bytes of the file opt.Path) into a
// validated model with its digest. Version, counts and provenance that the
// flow carries are kept (fsmine's exports carry them); otherwise the model
// is version 1 with counts of 0. Created and Generator are left for the
// caller. Errors about the flow are *Error.
func Read(data []byte, opt Options) (*automaton.Model, error) {
	// The model would hold a text its own file cannot write.
	if !utf8.ValidString(opt.Event) {
		return nil, fmt.Errorf("the event of moves the flow names none for, %q, is not valid UTF-8", opt.Event)
	}
	for _, k := range sortedKeys(opt.Labels) {
		if v := opt.Labels[k]; !utf8.ValidString(v) {
			return nil, &Error{Path: opt.LabelsPath, Node: k, Msg: fmt.Sprintf("the label map gives it %q, which is not valid UTF-8", v)}
		}
	}
	// An editor's byte-order mark is no part of any of the formats.
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if err := notModel(data, opt.Path); err != nil {
		return nil, err
	}
	format := opt.Format
	if format == "" {
		var could []string
		format, could = detect(opt.Path, data)
		if len(could) > 1 {
			return nil, &Error{Path: opt.Path, Msg: fmt.Sprintf("ambiguous: its keys %s fit %s: name its format with --from",
				strings.Join(formatKeys(could), ", "), andList(formatNames(could)))}
		}
		if format == "" {
			msg := "unknown syntax: not a Mermaid stateDiagram-v2, SCXML, XState, LangGraph or STAR flow (name one with --from)"
			if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
				// JSON that does not parse: say where, not only what it is not
				var v any
				if err := stdjson.Unmarshal(data, &v); err != nil {
					msg = "not JSON: " + jsonError(data, err)
				}
			}
			return nil, &Error{Path: opt.Path, Msg: msg}
		}
	}
	var (
		f   *flow
		err error
	)
	switch format {
	case FormatMermaid:
		f, err = readMermaid(data, opt)
	case FormatSCXML:
		f, err = readSCXML(data, opt)
	case FormatXState:
		f, err = readXState(data, opt)
	case FormatLangGraph:
		f, err = readLangGraph(data, opt)
	case FormatSTAR:
		f, err = readSTAR(data, opt)
	default:
		return nil, fmt.Errorf("unknown design format %q: want one of %s", format, strings.Join(Formats(), ", "))
	}
	if err != nil {
		return nil, err
	}
	m, err := f.model(opt)
	if err != nil {
		return nil, err
	}
	m.Params.Design = format
	sum := sha256.Sum256(data)
	m.Source.Files = []automaton.SourceFile{{Path: opt.Path, SHA256: hex.EncodeToString(sum[:]), Format: format}}
	return m, nil
}

// Detect names the format of a flow from its file name (.mmd, .mermaid,
// .scxml, .flow.json) and then from its content; "" when neither tells, or
// the content could be more than one (JSON with the keys of two formats).
func Detect(path string, data []byte) string {
	format, _ := detect(path, data)
	return format
}

// detect is Detect, with the formats JSON content could be when it is
// more than one.
func detect(path string, data []byte) (string, []string) {
	lower := strings.ToLower(path)
	switch {
	case strings.HasSuffix(lower, ".flow.json"):
		return FormatSTAR, nil
	case strings.HasSuffix(lower, ".mmd"), strings.HasSuffix(lower, ".mermaid"):
		return FormatMermaid, nil
	case strings.HasSuffix(lower, ".scxml"):
		return FormatSCXML, nil
	}
	text := strings.TrimSpace(string(data))
	switch {
	case strings.HasPrefix(text, "<"):
		if strings.Contains(text, "<scxml") {
			return FormatSCXML, nil
		}
	case strings.HasPrefix(text, "{"):
		return detectJSON(data)
	default:
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "%%") || line == "---" {
				continue
			}
			if strings.HasPrefix(line, "stateDiagram") {
				return FormatMermaid, nil
			}
			if !strings.HasPrefix(line, "title:") {
				break
			}
		}
	}
	return "", nil
}

// formatNames and formatKeys word the formats JSON could be, and the keys
// that tell each.
func formatNames(formats []string) []string {
	names := map[string]string{FormatSTAR: "STAR", FormatXState: "XState", FormatLangGraph: "LangGraph"}
	out := make([]string, len(formats))
	for i, f := range formats {
		out[i] = names[f] + " (--from " + f + ")"
	}
	return out
}

// andList joins words as "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

func formatKeys(formats []string) []string {
	keys := map[string]string{FormatSTAR: `"graph"`, FormatXState: `"states"`, FormatLangGraph: `"nodes" and "edges"`}
	out := make([]string, len(formats))
	for i, f := range formats {
		out[i] = keys[f]
	}
	return out
}

// notModel refuses a model file of fsmine's own (mined, or imported
// before) given as a flow: a design is read from a flow, and the model is
// one already.
func notModel(data []byte, path string) error {
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return nil
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(data, &head) != nil || !strings.HasPrefix(head.Schema, "fsmine.automaton/") {
		return nil
	}
	return &Error{Path: path, Msg: fmt.Sprintf("already an fsmine model (schema %s), not a designed flow: a design is read from a flow; to edit the model in a design tool, render it as mermaid, scxml or xstate (fsmine render --format xstate) and import that", head.Schema)}
}

// flow is a designed flow as a reader found it, before the rules are
// checked: nodes, edges, and where it starts.
type flow struct {
	path string
	// version is the model version the flow names (fsmine's exports do),
	// when versioned.
	version   int
	versioned bool
	// start is the first designed node, joined to __start__ by a move on
	// the empty event; empty when the flow has __start__ as a node.
	start string
	nodes map[string]*node
	order []string // node ids in the order the flow names them
	edges []edge
	// labels is the label rules file the model keeps in Params.Labels.
	labels []byte
	// loops and constraints are the model's, as fsmine's SCXML and XState
	// exports carry them.
	loops       []automaton.Loop
	constraints []automaton.Constraint
	args        []automaton.ArgRule
}

type node struct {
	id       string
	label    string // "" for the id
	visits   int
	sessions int
	maxRun   int
	// final marks a node the flow ends in: a move into __end__ on
	// Options.Event is added.
	final bool
}

type edge struct {
	from, event, to string
	count, sessions int
	prob            float64
	rare, backEdge  bool
	generalized     string
}

func newFlow(path string) *flow {
	return &flow{path: path, nodes: map[string]*node{}}
}

// add returns the node id, creating it.
func (f *flow) add(id string) *node {
	if n, ok := f.nodes[id]; ok {
		return n
	}
	n := &node{id: id}
	f.nodes[id] = n
	f.order = append(f.order, id)
	return n
}

func (f *flow) errorf(node, format string, args ...any) error {
	return &Error{Path: f.path, Node: node, Msg: fmt.Sprintf(format, args...)}
}

// forgiven refuses what JSON decoders forgive in the flow's file data: a
// key given twice (the first value would be lost), and a string they would
// read as U+FFFD (two names would become one).
func (f *flow) forgiven(data []byte) error {
	if err := jsondup.Check(data); err != nil {
		return f.errorf("", "%v", err)
	}
	if err := jsondup.Text(data); err != nil {
		return f.errorf("", "%v", err)
	}
	return nil
}

// model checks the flow's rules and makes the model.
func (f *flow) model(opt Options) (*automaton.Model, error) {
	if err := f.close(opt); err != nil {
		return nil, err
	}
	// counted as build and check count them, __start__ and __end__ included
	if n := len(f.nodes); n > maxStates {
		return nil, f.errorf("", "%d states, more than %d: not a designed flow", n, maxStates)
	}
	if n := len(f.edges); n > maxMoves {
		return nil, f.errorf("", "%d moves, more than %d: not a designed flow", n, maxMoves)
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	if err := f.checkLabels(opt); err != nil {
		return nil, err
	}
	m := f.build(opt)
	if err := m.Validate(); err != nil {
		return nil, &Error{Path: f.path, Msg: err.Error()}
	}
	m.Trunk = mine.Trunk(m)
	m.Digest = m.ComputeDigest()
	return m, nil
}

// close adds __start__ and __end__, the move into the start, and the moves
// out of the final nodes.
func (f *flow) close(opt Options) error {
	for _, id := range []string{automaton.StartID, automaton.EndID} {
		f.add(id)
	}
	if f.start != "" {
		if _, ok := f.nodes[f.start]; !ok {
			return f.errorf(f.start, "the start is no node of the flow")
		}
		f.edges = append([]edge{{from: automaton.StartID, to: f.start}}, f.edges...)
	}
	for _, id := range f.order {
		if n := f.nodes[id]; n.final && id != automaton.EndID {
			f.edges = append(f.edges, edge{from: id, event: opt.Event, to: automaton.EndID})
		}
	}
	return nil
}

// check holds the flow to its rules: no dangling target, a start, every
// node reachable from it and able to reach the end.
func (f *flow) check() error {
	out := map[string][]string{}
	in := map[string][]string{}
	seen := map[[3]string]bool{}
	for _, e := range f.edges {
		if _, ok := f.nodes[e.from]; !ok {
			return f.errorf(e.from, "a move out of it, but it is no node of the flow")
		}
		if _, ok := f.nodes[e.to]; !ok {
			return f.errorf(e.from, "its move on %q goes to %q, which is no node of the flow (a dangling target)", e.event, e.to)
		}
		if e.from == automaton.EndID {
			return f.errorf(e.from, "the end has a move out of it, to %q", e.to)
		}
		if e.to == automaton.StartID {
			return f.errorf(e.from, "a move into the start")
		}
		k := [3]string{e.from, e.event, e.to}
		if seen[k] {
			return f.errorf(e.from, "the move on %q to %q appears twice", e.event, e.to)
		}
		seen[k] = true
		out[e.from] = append(out[e.from], e.to)
		in[e.to] = append(in[e.to], e.from)
	}
	if len(out[automaton.StartID]) == 0 {
		return f.errorf("", "no start: no node is marked as where the flow begins")
	}
	reach := walk.Reach(automaton.StartID, out)
	for _, id := range sortedIDs(f.order) {
		if !reach[id] && id != automaton.EndID {
			return f.errorf(id, "unreachable from the start")
		}
	}
	back := walk.Reach(automaton.EndID, in)
	var stuck []string // nodes that never reach the end, __start__ aside
	for _, id := range sortedIDs(f.order) {
		if !back[id] && id != automaton.StartID {
			stuck = append(stuck, id)
		}
	}
	if len(stuck) == 0 {
		return nil
	}
	for _, id := range stuck {
		if len(out[id]) == 0 {
			return f.errorf(id, "a dead end: no move out of it and it does not end the flow")
		}
	}
	return f.errorf(stuck[0], "in a cycle without exit: %s never reach the end", strings.Join(quoteAll(stuck), ", "))
}

// checkLabels holds the label map to the flow: every name a node of it,
// every label not empty. The start and the end keep their own labels, which
// no other node takes (the flow's or the map's): no record of a log carries
// them, so check and the guard could never enter such a node.
func (f *flow) checkLabels(opt Options) error {
	for _, k := range sortedKeys(opt.Labels) {
		if _, ok := f.nodes[k]; !ok || k == automaton.StartID || k == automaton.EndID {
			return &Error{Path: opt.LabelsPath, Node: k, Msg: fmt.Sprintf("the label map names a node that %s does not have", f.path)}
		}
		if opt.Labels[k] == "" {
			return &Error{Path: opt.LabelsPath, Node: k, Msg: "the label map gives it an empty label"}
		}
	}
	for _, id := range sortedIDs(f.order) {
		label, path := f.nodes[id].label, f.path
		if l, ok := opt.Labels[id]; ok {
			label, path = l, opt.LabelsPath
		}
		pseudo := id == automaton.StartID || id == automaton.EndID
		switch {
		case pseudo && label != "" && label != id:
			return &Error{Path: path, Node: id, Msg: fmt.Sprintf("labelled %q: the start and the end keep their own labels", label)}
		case !pseudo && (label == automaton.StartID || label == automaton.EndID):
			return &Error{Path: path, Node: id, Msg: fmt.Sprintf("labelled %q, the label of the flow's start or end, which no record of a log carries", label)}
		}
	}
	return nil
}

// build makes the model of a checked flow, sorted, its labels as the map
// says.
func (f *flow) build(opt Options) *automaton.Model {
	m := &automaton.Model{
		Schema:  automaton.Schema,
		Version: 1,
		Initial: automaton.StartID,
		Params:  automaton.Params{Labels: f.labels},
	}
	if f.versioned {
		m.Version = f.version
	}
	for _, id := range f.order {
		n := f.nodes[id]
		label := n.label
		if label == "" {
			label = id
		}
		if l, ok := opt.Labels[id]; ok {
			label = l
		}
		m.States = append(m.States, automaton.State{ID: id, Label: label, Visits: n.visits, Sessions: n.sessions, MaxRun: n.maxRun})
	}
	for _, e := range f.edges {
		m.Transitions = append(m.Transitions, automaton.Transition{
			From: e.from, Event: e.event, To: e.to,
			Count: e.count, Sessions: e.sessions, Prob: e.prob,
			Rare: e.rare, BackEdge: e.backEdge, Generalized: e.generalized,
		})
	}
	m.Loops, m.Constraints, m.Args = f.loops, f.constraints, f.args
	markBackEdges(m)
	m.Sort()
	return m
}

func sortedIDs(ids []string) []string {
	s := slices.Clone(ids)
	sort.Strings(s)
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func quoteAll(ids []string) []string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return q
}

// markBackEdges marks, in a model whose flow says nothing of back edges or
// counts (a design rather than an fsmine export), the transitions that
// close a cycle as the miner does: inside a strongly connected component,
// to a state no farther from __start__ than the source. Pictures draw them
// as loops. The model gets no Loops: a loop's max_iterations caps what
// check and serve allow, and a design sets no cap.
func markBackEdges(m *automaton.Model) {
	for _, t := range m.Transitions {
		if t.BackEdge || t.Count > 0 || t.Generalized != "" {
			return
		}
	}
	out := map[string][]string{}
	for _, t := range m.Transitions {
		out[t.From] = append(out[t.From], t.To)
	}
	dist := map[string]int{automaton.StartID: 0}
	queue := []string{automaton.StartID}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, next := range out[n] {
			if _, ok := dist[next]; !ok {
				dist[next] = dist[n] + 1
				queue = append(queue, next)
			}
		}
	}
	// t.To reaches t.From exactly when the two share a component: one
	// walk, not one per move (a flow of 20,000 loops took 48 s).
	comp := walk.Components(out)
	for i := range m.Transitions {
		t := &m.Transitions[i]
		if dist[t.To] <= dist[t.From] && comp[t.To] == comp[t.From] {
			t.BackEdge = true
		}
	}
}

// jsonError words err, from decoding data, with the line and column of
// its offset when it has one.
func jsonError(data []byte, err error) string {
	var se *stdjson.SyntaxError
	if errors.As(err, &se) {
		if line, col, ok := jsondup.Place(data, err); ok {
			return fmt.Sprintf("line %d, column %d: %v", line, col, err)
		}
	}
	return err.Error()
}

// whyJSON words err, from decoding data as a format's JSON: the syntax
// error with its line and column when data is not JSON, else err.
func whyJSON(data []byte, err error) string {
	var v any
	if serr := stdjson.Unmarshal(data, &v); serr != nil {
		return jsonError(data, serr)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Offset > 0 {
		if line, col, ok := jsondup.Place(data, err); ok {
			return fmt.Sprintf("line %d, column %d: %s", line, col, typeError(err))
		}
	}
	return typeError(err)
}

// typeError words err, from decoding JSON, in the flow's terms where it is
// a value of the wrong kind ("edges[1].conditional is a string, want a
// boolean"), not the decoder's Go types.
func typeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" && te.Type != nil {
		return fmt.Sprintf("%s is %s, want %s", fieldPath(te.Field), valueWord(te.Value), typeWord(te.Type))
	}
	return err.Error()
}

// fieldPath writes a decoder's path to a field (edges.1.conditional) as
// the flow's readers know it (edges[1].conditional).
func fieldPath(field string) string {
	var b strings.Builder
	for i, part := range strings.Split(field, ".") {
		if _, err := strconv.Atoi(part); err == nil {
			fmt.Fprintf(&b, "[%s]", part)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(part)
	}
	return b.String()
}

// valueWord names the kind of JSON value a decoder's type error names
// ("number -5" is a number).
func valueWord(v string) string {
	kind, n, _ := strings.Cut(v, " ")
	switch kind {
	case "object", "array":
		return "an " + kind
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	case "number":
		if n != "" {
			return "the number " + n
		}
		return "a number"
	}
	return v
}

// typeWord names the JSON kind a Go type takes.
func typeWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct, reflect.Pointer:
		return "an object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return t.String()
}
