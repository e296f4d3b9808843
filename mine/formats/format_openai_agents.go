package formats

// OpenAI Agents SDK traces: the items its tracing processors export
// (Trace.export() and Span.export() in openai-agents-python's
// src/agents/tracing), written one a line or as a JSON array. A trace is
// {"object": "trace", "id", "workflow_name", "group_id", "metadata"}; a
// span is {"object": "trace.span", "id", "trace_id", "parent_id",
// "started_at", "ended_at", "span_data": {"type", ...}, "error":
// {"message", "data"} or null}, with span_data per type
// (src/agents/tracing/span_data.py): agent {name, handoffs, tools,
// output_type}, function {name, input, output, mcp_data}, generation
// {model, usage, ...}, response {response_id}, handoff {from_agent,
// to_agent}, guardrail {name, triggered}, custom {name, data},
// mcp_tools {server, result}, transcription, speech, speech_group.
// group_id links the traces of one conversation (the SDK's tracing guide).

import (
	"fmt"
	"io"
	"slices"

	json "github.com/goccy/go-json"
)

// FormatOpenAIAgents is OpenAI Agents SDK trace exports.
const FormatOpenAIAgents = "openai-agents"

func init() {
	Register(&Format{
		Name:     FormatOpenAIAgents,
		Detect:   detectOpenAIAgents,
		Priority: 10,
		Convert:  convertOpenAIAgents,
	})
}

func detectOpenAIAgents(head []byte) bool {
	s := sniffJSON(head)
	if s == nil || s.isRecord() {
		return false
	}
	item := func(p, obj string) bool {
		return s.has(p, "span_data") || s.has(p, "workflow_name") || s.str(obj) == "trace.span"
	}
	return item("", "object") || item("data[]", "data[].object")
}

type oaItem struct {
	Object       string          `json:"object"`
	ID           string          `json:"id"`
	TraceID      string          `json:"trace_id"`
	ParentID     string          `json:"parent_id"`
	StartedAt    json.RawMessage `json:"started_at"`
	EndedAt      json.RawMessage `json:"ended_at"`
	SpanData     json.RawMessage `json:"span_data"`
	Error        json.RawMessage `json:"error"`
	WorkflowName string          `json:"workflow_name"`
	GroupID      string          `json:"group_id"`
	Data         json.RawMessage `json:"data"`
}

type oaSpanData struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	FromAgent string `json:"from_agent"`
	ToAgent   string `json:"to_agent"`
	Triggered bool   `json:"triggered"`
	Model     string `json:"model"`
	Server    string `json:"server"`
}

// convertOpenAIAgents writes a record per span that is a step (see
// foldSpans: generations and responses inside an agent, and custom spans
// around steps, such as the JS SDK's task and turn, are left out;
// ImportOptions.KeepSpans writes every one). The node is the span
// type, qualified by what the span is about: agent:<name>,
// function:<tool name>, handoff:<to_agent> (a handoff is the transition to
// another agent), guardrail:<name>, custom:<name>, mcp_tools:<server>;
// generation, response and the voice spans stand alone. The event is error
// when the span has an error, triggered for a guardrail that tripped, else
// ok. The session is the group_id of the span's trace (when the trace item
// is in the input), else the trace id (a trace given twice alike is read
// once; with another group_id or workflow_name it is an error naming both
// lines); spans are ordered by started_at,
// and spans that start at the same time (the JS SDK records milliseconds,
// and a handoff and the next agent's first span often share one) by the
// span tree: children after their parent, depth first (see spanTreeOrder).
func convertOpenAIAgents(r io.Reader, w io.Writer, opt ImportOptions) error {
	jr := newJSONReader(r)
	jr.streamItems(opt.maxItem)
	jr.skipBadText = true
	defer jr.release()
	var items []*treeSpan
	groups := map[string]string{}
	workflows := map[string]string{}
	traceLine := map[string]int{}
	var obj jsonObject
	// one reads an item of the input, or of an exporter's body {"data":
	// [...]} (inPage). A body is the top of what the exporter sends: one in
	// a body would be read by a call per level, each holding a copy of all
	// below it (150 levels of a 2 MB file took 1.1 GB), and is refused.
	var one func(raw json.RawMessage, at int64, inPage bool) error
	one = func(raw json.RawMessage, at int64, inPage bool) error {
		if jsonKind(raw) != '{' {
			return jr.errorAt(at, "want an OpenAI Agents trace or span object")
		}
		var it oaItem
		if err := jr.unmarshal(raw, at, &it); err != nil {
			return err
		}
		switch {
		case it.Data != nil && it.Object != "trace.span" && it.Object != "trace":
			if inPage {
				return jr.errorAt(at, "a {\"data\": [...]} body inside a body, want an OpenAI Agents trace or span")
			}
			return jr.elements(it.Data, at+int64(indexRaw(raw, it.Data)), func(raw json.RawMessage, at int64) error {
				return one(raw, at, true)
			})
		case it.Object == "trace" || (it.Object == "" && it.WorkflowName != ""):
			if it.ID == "" {
				return jr.errorAt(at, "a trace without an id")
			}
			// A trace given again (an exporter's retry) is one trace; given
			// again otherwise, which group and workflow hold would be up to
			// the order of the input.
			if first, seen := traceLine[it.ID]; seen {
				if it.GroupID != groups[it.ID] || it.WorkflowName != workflows[it.ID] {
					return jr.errorAt(at, "trace %s: a second trace with this id, of group_id %q and workflow_name %q (the first: line %d, of group_id %q and workflow_name %q)",
						it.ID, it.GroupID, it.WorkflowName, first, groups[it.ID], workflows[it.ID])
				}
				return nil
			}
			traceLine[it.ID], _ = jr.pr.pos(at)
			if it.GroupID != "" {
				groups[it.ID] = it.GroupID
			}
			workflows[it.ID] = it.WorkflowName
			return nil
		case it.Object == "trace.span" || (it.Object == "" && it.SpanData != nil):
		default:
			return jr.errorAt(at, "object %q is neither a trace nor a trace.span", it.Object)
		}
		if it.TraceID == "" {
			return jr.errorAt(at, "span %s has no trace_id", it.ID)
		}
		if it.ID == "" {
			return jr.errorAt(at, "a span of trace %s without an id", it.TraceID)
		}
		if jsonKind(it.SpanData) != '{' {
			return jr.errorAt(at, "span %s has no span_data object", it.ID)
		}
		var sd oaSpanData
		if err := jr.unmarshal(it.SpanData, at+int64(indexRaw(raw, it.SpanData)), &sd); err != nil {
			return err
		}
		if sd.Type == "" {
			return jr.errorAt(at, "span %s: span_data has no type", it.ID)
		}
		node := sd.Type
		q := ""
		switch sd.Type {
		case "agent", "function", "guardrail", "custom":
			q = sd.Name
		case "handoff":
			q = sd.ToAgent
		case "mcp_tools":
			q = sd.Server
		}
		if q != "" {
			node += ":" + q
		}
		start, hasStart := jsonTime(it.StartedAt)
		if !hasStart && jsonKind(it.StartedAt) != 0 && jsonKind(it.StartedAt) != 'n' {
			return jr.errorAt(at, "span %s: started_at %s is not a time", it.ID, it.StartedAt)
		}
		end, hasEnd := jsonTime(it.EndedAt)
		failed := jsonKind(it.Error) == '{' || (jsonKind(it.Error) == '"' && jsonText(it.Error) != "")
		event := "ok"
		switch {
		case failed:
			event = "error"
		case sd.Type == "guardrail" && sd.Triggered:
			event = "triggered"
		}
		obj.reset()
		obj.str(FieldEvent, event)
		obj.open("attrs")
		obj.strNonEmpty("span_id", it.ID)
		obj.str("trace_id", it.TraceID)
		obj.strNonEmpty("parent_id", it.ParentID)
		obj.str("type", sd.Type)
		obj.strNonEmpty("name", sd.Name)
		obj.strNonEmpty("from_agent", sd.FromAgent)
		obj.strNonEmpty("to_agent", sd.ToAgent)
		obj.strNonEmpty("model", sd.Model)
		if failed {
			var e struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(it.Error, &e) == nil && e.Message != "" {
				obj.str("error", e.Message)
			} else {
				obj.strNonEmpty("error", jsonText(it.Error))
			}
		}
		obj.close()
		line, _ := jr.pr.pos(at)
		ts := &treeSpan{
			spanItem: spanItem{trace: it.TraceID, id: it.ID, parent: it.ParentID,
				start: start, hasTime: hasStart, seq: len(items), body: append([]byte(nil), obj.bytes()...)},
			name: node, label: node, end: end, hasEnd: hasEnd, line: line,
			where: "line " + itoa(line) + ": span " + it.ID + " of trace " + it.TraceID,
		}
		switch sd.Type {
		case "agent":
			ts.kind, ts.agent = kindAgent, sd.Name
		case "function":
			ts.kind, ts.tool = kindTool, sd.Name
		case "handoff":
			ts.kind, ts.handoffTo = kindHandoff, sd.ToAgent
		case "generation", "response", "transcription", "speech", "speech_group":
			ts.kind = kindLLM
		case "custom":
			ts.kind = kindWrapper
		}
		items = append(items, ts)
		return nil
	}
	if err := jr.items(func(raw json.RawMessage, at int64) error { return one(raw, at, false) }); err != nil {
		return err
	}
	for _, it := range items {
		it.session = groups[it.trace]
		if it.session == "" {
			it.session = it.trace
		}
		if wf := workflows[it.trace]; wf != "" {
			// The workflow is known only now: add it to the attrs.
			it.body = append(it.body[:len(it.body)-2], []byte(`,"workflow":`)...)
			it.body = appendJSONString(it.body, wf)
			it.body = append(it.body, '}', '}')
		}
	}
	rw := newRecordWriter(w)
	defer rw.release()
	if err := jr.writeSkipped(rw); err != nil {
		return err
	}
	return writeTreeSpansTo(rw, items, opt, spanTreeOrder)
}

// spanTreeOrder gives each item an order key that sorts by start time
// (items without one last) and breaks ties by the item's place in a
// depth-first walk of its trace's span tree, parents before children and
// siblings by start time, then input order. This is the order the SDK's
// own tests hold spans to on a tied timestamp ("every span must appear
// after its parent", openai-agents-python tests/tracing/test_span_ordering.py),
// extended to spans of different branches: a span belongs with the
// subtree it is in, not before it because it is shallower.
func spanTreeOrder(items []*spanItem) {
	type key struct{ trace, id string }
	byID := make(map[key]*spanItem, len(items))
	for _, it := range items {
		if it.id != "" {
			if _, dup := byID[key{it.trace, it.id}]; !dup {
				byID[key{it.trace, it.id}] = it
			}
		}
	}
	children := map[*spanItem][]*spanItem{}
	var roots []*spanItem
	for _, it := range items {
		if par, ok := byID[key{it.trace, it.parent}]; ok && it.parent != "" && par != it {
			children[par] = append(children[par], it)
		} else {
			roots = append(roots, it)
		}
	}
	before := func(a, b *spanItem) int {
		if a.hasTime != b.hasTime {
			if a.hasTime {
				return -1
			}
			return 1
		}
		if a.hasTime && a.start != b.start {
			if a.start < b.start {
				return -1
			}
			return 1
		}
		return a.seq - b.seq
	}
	// Depth first with a stack of its own: a hostile input may chain
	// spans deeper than recursion should go.
	rank := make(map[*spanItem]int, len(items))
	var stack []*spanItem
	walk := func(root *spanItem) {
		stack = append(stack[:0], root)
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if _, seen := rank[it]; seen {
				continue
			}
			rank[it] = len(rank)
			kids := children[it]
			slices.SortFunc(kids, before)
			for i := len(kids) - 1; i >= 0; i-- {
				stack = append(stack, kids[i])
			}
		}
	}
	slices.SortFunc(roots, before)
	for _, r := range roots {
		walk(r)
	}
	// Spans in a cycle of parents have no root: after the others, in input
	// order.
	for _, it := range items {
		walk(it)
	}
	for _, it := range items {
		t := "1" + "0000000000000000"
		if it.hasTime {
			t = fmt.Sprintf("0%016x", uint64(it.start)^1<<63)
		}
		it.order = fmt.Sprintf("%s%08x", t, rank[it])
	}
}
