package formats

// The rule every span-tree format (Langfuse, LangSmith, Phoenix, OTLP,
// OpenAI Agents) follows to turn a tree of spans into steps: a step is
// what a person would name — an agent, a tool, a graph node, a handoff. The importers
// classify each span by what its format says of it (Langfuse's observation
// type, LangSmith's run_type, OpenInference's span kind, the GenAI
// conventions' gen_ai.operation.name, LangGraph's langgraph_node), and
// fold the tree:
//
//   - agents, tools, graph nodes and handoffs are steps;
//   - the spans inside a graph node that are not the node itself (the
//     model call, prompt, parser and routing runs LangGraph records under
//     the node) are left out, as are LangGraph's __start__, __end__ and
//     Koog's __finish__;
//   - an LLM call (a generation, chat, embedding) under a step is part of
//     that step and left out; one with no step above it is a step itself;
//   - a wrapper (a chain, workflow, invocation or turn) that holds other
//     spans is left out, its children standing for it; a wrapper with
//     nothing under it, and under no step, is a step;
//   - any other span (a plain span, an event) is a step when it holds no
//     other span and is not inside a tool call (the HTTP request a tool
//     makes); one that holds spans is left out, its steps standing for it
//     (pydantic-ai's "running 3 tools") or its model calls being part of
//     the step above it (a "turn").
//
// ImportOptions.KeepSpans keeps every span. Names carry no ids: a UUID or
// a long hex run in a span's name is cut out ("agent.f9f77d1a-…" is
// "agent"), and an agent or tool name that is itself an id is not used.

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// spanKind is what a span is, as far as folding goes.
type spanKind uint8

const (
	kindSpan    spanKind = iota // a plain span or event: a step unless it holds one
	kindAgent                   // an agent run
	kindTool                    // a tool call
	kindNode                    // a graph node (set by fold from graphNode)
	kindHandoff                 // a handoff to another agent
	kindLLM                     // a model call
	kindWrapper                 // a chain, workflow, invocation, turn
)

var spanKindNames = [...]string{"span", "agent", "tool", "node", "handoff", "llm", "wrapper"}

func (k spanKind) String() string { return spanKindNames[k] }

// treeSpan is a span of a span-tree format before folding. The importer
// fills the facts and body (the record without session_id, node, ts and
// duration_ms, as {"event":...,...}); fold sets the node and decides
// whether the span is a step.
type treeSpan struct {
	spanItem
	kind      spanKind
	name      string // the span's own name
	agent     string // the agent's name, when the span says
	tool      string // the tool's name, when the span says
	handoffTo string // the agent a handoff hands to
	graphNode string // LangGraph's langgraph_node (or graph.node.id)
	graphStep string // LangGraph's langgraph_step
	where     string // names the span in errors ("line 3: span s1 of trace t1")
	line      int    // the input line the span was read from
	end       int64
	hasEnd    bool

	own      int64  // a moved handoff's own start
	why      string // why fold left the span out
	label    string // the node; an importer may set it to name a span its own way
	inner    bool   // inside a graph node, not the node itself
	step     bool
	children []*treeSpan
	up       *treeSpan
}

// idPattern matches the ids that tracers put into span names: UUIDs, and
// runs of 16 or more hex digits (OTel trace and span ids) that hold a
// digit.
var idPattern = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|\b[0-9a-fA-F]*[0-9][0-9a-fA-F]*\b`)

// isID reports whether s is an id and nothing else.
func isID(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	for _, m := range idPattern.FindAllStringIndex(s, -1) {
		if m[0] == 0 && m[1] == len(s) && isIDMatch(s[m[0]:m[1]]) {
			return true
		}
	}
	return false
}

// isIDMatch tells a UUID or a long hex id from a short number ("gpt-4o",
// "step 2" keep theirs).
func isIDMatch(m string) bool {
	return len(m) == 36 && strings.Count(m, "-") == 4 || len(m) >= 16
}

// stripIDs cuts the ids out of a span name and tidies what they leave:
// "agent.f9f77d1a-437f-4ba6-890e-b592a50cbd21" is "agent", "invoke_agent
// 99981f6a-…" is "invoke_agent", "run [0123456789abcdef]" is "run".
func stripIDs(name string) string {
	if !strings.ContainsAny(name, "0123456789") {
		return name
	}
	out := idPattern.ReplaceAllStringFunc(name, func(m string) string {
		if isIDMatch(m) {
			return "\x00"
		}
		return m
	})
	if !strings.Contains(out, "\x00") {
		return name
	}
	for _, empty := range []string{"[\x00]", "(\x00)", "{\x00}", "<\x00>", "\"\x00\"", "'\x00'"} {
		out = strings.ReplaceAll(out, empty, "\x00")
	}
	// An id takes one separator next to it along.
	var b strings.Builder
	parts := strings.Split(out, "\x00")
	for i, p := range parts {
		if i > 0 {
			p = strings.TrimLeft(p, ".:/_- ")
		}
		if i < len(parts)-1 {
			p = strings.TrimRight(p, ".:/_- #=")
			if p != "" && b.Len() > 0 {
				b.WriteByte(' ')
			}
		} else if p != "" && b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p)
	}
	return strings.TrimSpace(b.String())
}

// named returns s when it names something (is not empty and not an id).
func named(s string) string {
	if s == "" || isID(s) {
		return ""
	}
	return s
}

// ownLabel is the node a span has for its kind: an agent's or a tool's
// name, a graph node's; else the span's name without ids, else its kind.
func (s *treeSpan) ownLabel() string {
	var l string
	switch s.kind {
	case kindAgent:
		l = named(s.agent)
	case kindTool:
		l = named(s.tool)
	case kindNode:
		l = s.graphNode
	}
	if l == "" {
		l = stripIDs(s.name)
	}
	if l == "" {
		l = s.kind.String()
	}
	return l
}

// graphEdge reports whether a LangGraph node name is one of the graph's
// own start and end markers rather than a node of the user's.
func graphEdge(node string) bool {
	switch node {
	case "__start__", "__end__", "__finish__":
		return true
	}
	return false
}

// foldSpans links spans into trees by (trace, parent), decides which are
// steps (see the comment at the top of this file, or all of them when
// keep is set) and returns the steps, each with its node written into its
// body, and the spans left out. A span whose parent is not among spans (a
// parent in another file, or none) is a root. It fails when two spans of
// a trace share an id or parent links form a cycle, naming a span.
func foldSpans(spans []*treeSpan, keep bool) (steps, leftOut []*treeSpan, err error) {
	if err := linkSpans(spans); err != nil {
		return nil, nil, err
	}
	placeSpans(spans)
	decideSteps(spans, keep)
	for _, s := range spans {
		if s.step {
			steps = append(steps, s)
		} else {
			leftOut = append(leftOut, s)
		}
	}
	orderHandoffs(steps)
	var obj jsonObject
	for _, s := range steps {
		obj.reset()
		obj.str(FieldNode, s.label)
		end := s.end
		if s.first {
			// A handoff moved to its agent's start keeps its length.
			end = s.start + (s.end - s.own)
		}
		obj.span(s.start, end, s.hasTime, s.hasEnd)
		b := append([]byte(nil), obj.bytes()...)
		if len(s.body) > 2 {
			b = append(b[:len(b)-1], ',')
			b = append(b, s.body[1:]...)
		}
		s.spanItem.body = b
	}
	return steps, leftOut, nil
}

// linkSpans sets each span's up and children, and fails on a duplicate
// id, a span that is its own parent, or a cycle of parent links.
func linkSpans(spans []*treeSpan) error {
	byID := make(map[[2]string]*treeSpan, len(spans))
	for _, s := range spans {
		if s.id == "" {
			continue
		}
		k := [2]string{s.trace, s.id}
		if prev, dup := byID[k]; dup {
			return fmt.Errorf("%s: a second span with this id (the first: %s)", s.where, prev.where)
		}
		byID[k] = s
	}
	for _, s := range spans {
		switch {
		case s.parent == "":
		case s.parent == s.id:
			return fmt.Errorf("%s: it is its own parent", s.where)
		default:
			if p := byID[[2]string{s.trace, s.parent}]; p != nil {
				s.up = p
				p.children = append(p.children, s)
			}
		}
	}
	// A walk up from any span must end. state 1 is on the current walk,
	// 2 known to end.
	state := make(map[*treeSpan]uint8, len(spans))
	var path []*treeSpan
	for _, s := range spans {
		path = path[:0]
		for p := s; p != nil && state[p] != 2; p = p.up {
			if state[p] == 1 {
				return fmt.Errorf("%s: its parent links form a cycle", p.where)
			}
			state[p] = 1
			path = append(path, p)
		}
		for _, p := range path {
			state[p] = 2
		}
	}
	return nil
}

// placeSpans settles what the tree tells of a span beyond its own facts:
// an agent span that names no agent and holds agents only is the workflow
// around them (OpenInference's OpenAI Agents root span); the outermost
// span of a graph node and step is the node, the spans under it with the
// same node and step its inner workings (a tool excepted), and the
// graph's own markers inner too. Then it names each span not yet named.
func placeSpans(spans []*treeSpan) {
	for _, s := range spans {
		if s.kind == kindAgent && named(s.agent) == "" && holdsAgentsOnly(s) {
			s.kind = kindWrapper
		}
	}
	for _, s := range spans {
		switch {
		case s.graphNode == "":
		case s.up != nil && s.up.graphNode == s.graphNode && s.up.graphStep == s.graphStep:
			s.inner = s.kind != kindTool
		case graphEdge(s.graphNode):
			s.inner = true
		default:
			s.kind = kindNode
		}
	}
	for _, s := range spans {
		switch {
		case s.label != "": // the format's own name
		case s.inner:
			// Kept by --keep-spans, it is named by itself.
			s.label = firstOf(stripIDs(s.name), s.kind.String())
		default:
			s.label = s.ownLabel()
		}
	}
}

func (s *treeSpan) isStep() bool {
	return s.kind == kindAgent || s.kind == kindTool || s.kind == kindNode || s.kind == kindHandoff
}

// decideSteps sets each span's step (and why, when it is not one) by the
// rule at the top of this file, or makes every span a step when keep is
// set.
func decideSteps(spans []*treeSpan, keep bool) {
	// Whether a step, or a tool call, is above each span: filled top
	// down along each span's path to its root, once per span, without
	// recursion (a hostile input may nest spans deeper than recursion
	// should go).
	type above struct{ step, tool bool }
	ab := make(map[*treeSpan]*above, len(spans))
	var path []*treeSpan
	for _, s := range spans {
		path = path[:0]
		for p := s; p != nil && ab[p] == nil; p = p.up {
			path = append(path, p)
		}
		for i := len(path) - 1; i >= 0; i-- {
			p, a := path[i], &above{}
			if up := p.up; up != nil {
				ua := ab[up]
				a.step = ua.step || up.isStep()
				a.tool = ua.tool || up.kind == kindTool
			}
			ab[p] = a
		}
	}
	for _, s := range spans {
		a, leaf := ab[s], len(s.children) == 0
		switch {
		case keep:
			s.step = true
		case s.inner:
			s.why = "a span inside graph node " + s.graphNode
			if graphEdge(s.graphNode) {
				s.why = "graph marker " + s.graphNode
			}
		case s.isStep():
			s.step = true
		case s.kind == kindLLM:
			s.step = !a.step
			s.why = "an LLM call inside a step"
		case s.kind == kindWrapper:
			s.step = leaf && !a.step
			s.why = "a wrapper span"
		case a.tool:
			s.why = "a span inside a tool call"
		default:
			s.step = leaf
			s.why = "a span holding others"
		}
	}
}

func holdsAgentsOnly(s *treeSpan) bool {
	for _, c := range s.children {
		if c.kind != kindAgent {
			return false
		}
	}
	return len(s.children) > 0
}

// orderHandoffs puts a handoff before the agent it hands to: tracers start
// the next agent's span in the same millisecond as the handoff, or a
// little before it (OpenInference's OpenAI Agents instrumentation ends the
// handoff span after the next agent has started), and a handoff that
// sorts after its agent reads as a step back. A handoff to X takes the
// start of the first agent step X of its trace that starts no earlier than
// the handoff's parent, when that is before the handoff's own, as its ts,
// and sorts first among the spans that start then. Each list of agent
// steps is sorted by start (input order among ties) and searched, so that
// a trace of many handoffs takes n log n, not n² (40,000 took 6 s).
func orderHandoffs(steps []*treeSpan) {
	agents := map[[2]string][]*treeSpan{} // (trace, agent) -> its agent steps, by start
	for _, a := range steps {
		if a.kind == kindAgent && a.hasTime {
			for _, n := range []string{a.label, named(a.agent)} {
				if n != "" {
					k := [2]string{a.trace, n}
					agents[k] = append(agents[k], a)
				}
			}
		}
	}
	for _, list := range agents {
		slices.SortStableFunc(list, func(a, b *treeSpan) int { return cmp.Compare(a.start, b.start) })
	}
	for _, h := range steps {
		if h.kind != kindHandoff || h.handoffTo == "" || !h.hasTime {
			continue
		}
		from := int64(-1 << 63)
		if h.up != nil && h.up.hasTime {
			from = h.up.start
		}
		// The earliest agent step from the parent's start on, the first
		// in input order among those of its start.
		list := agents[[2]string{h.trace, h.handoffTo}]
		i, _ := slices.BinarySearchFunc(list, from, func(a *treeSpan, t int64) int { return cmp.Compare(a.start, t) })
		if i < len(list) && list[i].start <= h.start {
			h.own, h.start, h.first = h.start, list[i].start, true
		}
	}
}

// writeTreeSpansTo folds spans (foldSpans), notes the spans left out on
// the lines where they were read (read counts them in Log.LeftOut), and
// writes the steps in order (writeSpanItems) to rw, which notes may
// already have been written to. order, when not nil, is given every span
// once the steps are known (and handoffs moved) to set the order keys
// writeSpanItems sorts by.
func writeTreeSpansTo(rw *recordWriter, spans []*treeSpan, opt ImportOptions, order func([]*spanItem)) error {
	steps, out, err := foldSpans(spans, opt.KeepSpans)
	if err != nil {
		return err
	}
	// A span whose parent is in no span of the input is read as a root:
	// its trace was cut (a rotated export), and what it would take from
	// the spans above it (the conversation's id, the step around it) is
	// not there. Said once, at the first such span.
	var first *treeSpan
	orphans := 0
	for _, s := range spans {
		if s.parent != "" && s.up == nil {
			if orphans++; first == nil || s.line < first.line {
				first = s
			}
		}
	}
	if orphans > 0 {
		what := "1 span"
		if orphans > 1 {
			what = fmt.Sprintf("%d spans", orphans)
		}
		why := fmt.Sprintf("%s whose parent span is in no span of this input, read as roots (the first: %s): a trace split across files (a rotated export) reads as more sessions; read its files as one stream, as with cat FILES | fsmine build -",
			what, strings.TrimPrefix(first.where, fmt.Sprintf("line %d: ", first.line)))
		if err := writeWarning(rw, first.line, why); err != nil {
			return err
		}
	}
	for _, s := range out {
		if err := writeNote(rw, false, s.line, "", s.why+" (--keep-spans keeps it)"); err != nil {
			return err
		}
	}
	if order != nil {
		all := make([]*spanItem, len(spans))
		for i, s := range spans {
			all[i] = &s.spanItem
		}
		order(all)
	}
	items := make([]*spanItem, len(steps))
	for i, s := range steps {
		s.spanItem.at = s.line
		items[i] = &s.spanItem
	}
	return writeSpanItems(rw, items)
}

// classify sets a span's kind and the names it carries from what its
// format says: hint is the format's own kind (Langfuse's observation type,
// LangSmith's run_type, Phoenix's span_kind; any case), attr reads an
// attribute by its dotted name ("" when absent). The GenAI conventions'
// gen_ai.operation.name decides first (both the v1.36-era operations and
// the 2026 ones: invoke_agent, create_agent, invoke_workflow, plan,
// execute_tool, chat, text_completion, generate_content, embeddings), then
// OpenInference's openinference.span.kind, then hint; a span none of them
// places is placed by its attributes: a tool name (gen_ai.tool.name,
// tool.name) makes a tool, an agent name (gen_ai.agent.name, agent.name)
// an agent, a model (gen_ai.request.model, gen_ai.provider.name,
// gen_ai.system, llm.model_name) an LLM call. A span named "handoff to X"
// is a handoff to X.
func (s *treeSpan) classify(hint string, attr func(string) string) {
	s.tool = firstOf(attr("gen_ai.tool.name"), attr("tool.name"))
	s.agent = firstOf(attr("gen_ai.agent.name"), attr("agent.name"))
	if to, ok := strings.CutPrefix(s.name, "handoff to "); ok {
		s.kind, s.handoffTo = kindHandoff, strings.TrimSpace(to)
		return
	}
	kind, ok := opKind(attr("gen_ai.operation.name"))
	if !ok {
		kind, ok = hintKind(attr("openinference.span.kind"))
	}
	if !ok {
		kind, ok = hintKind(hint)
	}
	if !ok || kind == kindSpan {
		switch {
		case s.tool != "":
			kind = kindTool
		case s.agent != "":
			kind = kindAgent
		case attr("gen_ai.request.model") != "" || attr("gen_ai.provider.name") != "" || attr("gen_ai.system") != "" || attr("llm.model_name") != "":
			kind = kindLLM
		default:
			kind = kindSpan
		}
	}
	s.kind = kind
	if node := attr("graph.node.id"); node != "" {
		if kind == kindAgent {
			s.agent = firstOf(s.agent, node)
		} else if s.graphNode == "" {
			s.graphNode = node
		}
	}
	if kind == kindAgent && s.agent == "" {
		s.agent = nameInName(s.name, "invoke_agent ", "agent_run ", "agent ")
	}
	if kind == kindTool && s.tool == "" {
		s.tool = nameInName(s.name, "execute_tool ", "running tool: ", "tool ")
	}
}

// nameInName finds the name of an agent or tool inside a span name that
// tracers build around it: "execute_tool get_weather", "agent_run
// [hello_agent]", "running tool: get_pun"; "" when the name has none of
// those shapes.
func nameInName(name string, prefixes ...string) string {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(name, p); ok {
			rest = strings.TrimSpace(rest)
			if len(rest) > 2 && rest[0] == '[' && rest[len(rest)-1] == ']' {
				rest = rest[1 : len(rest)-1]
			}
			return rest
		}
	}
	return ""
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// opKind places a gen_ai.operation.name.
func opKind(op string) (spanKind, bool) {
	switch op {
	case "":
		return 0, false
	case "invoke_agent":
		return kindAgent, true
	case "execute_tool":
		return kindTool, true
	case "create_agent", "invoke_workflow":
		return kindWrapper, true
	case "chat", "text_completion", "generate_content", "embeddings", "retrieval":
		return kindLLM, true
	}
	// plan and operations to come: a span of its own.
	return kindSpan, true
}

// hintKind places a format's kind of span: Langfuse's observation types,
// OpenInference's span kinds, LangSmith's run types.
func hintKind(h string) (spanKind, bool) {
	switch strings.ToUpper(h) {
	case "":
		return 0, false
	case "AGENT":
		return kindAgent, true
	case "TOOL":
		return kindTool, true
	case "GENERATION", "LLM", "EMBEDDING":
		return kindLLM, true
	case "CHAIN", "PROMPT", "PARSER":
		return kindWrapper, true
	}
	// SPAN, EVENT, RETRIEVER, RERANKER, GUARDRAIL, EVALUATOR, UNKNOWN.
	return kindSpan, true
}
