package formats

// Arize Phoenix spans: the spans Phoenix's REST API returns (GET
// /v1/projects/{project}/spans: {"data": [...], "next_cursor"}) and its
// client writes, as a JSON array, one a line, or in the API's page. A span
// is {"id", "name", "context": {"trace_id", "span_id"}, "span_kind" (LLM,
// CHAIN, TOOL, AGENT, RETRIEVER, EMBEDDING, RERANKER, GUARDRAIL,
// EVALUATOR, UNKNOWN), "parent_id", "start_time", "end_time",
// "status_code" (OK, ERROR, UNSET), "status_message", "attributes",
// "events"}, its attributes OpenInference's (session.id, tool.name,
// agent.name, graph.node.id, llm.model_name, ...) either flat ("tool.name":
// "x") or nested ({"tool": {"name": "x"}}). The flat layout of
// get_spans_dataframe() written as JSON records ("context.trace_id",
// "attributes.session.id") is read too. Followed: Phoenix's span schema
// (src/phoenix/server/api/routers/v1/spans.py, Span and SpanContext) and
// the OpenInference semantic conventions (openinference-semantic-
// conventions: SpanAttributes, OpenInferenceSpanKindValues); the test
// fixtures in Arize-ai/phoenix tests/unit/pxi/evals/online_evals/fixtures/
// show the layout.

import (
	"io"
	"strings"

	json "github.com/goccy/go-json"
)

// FormatPhoenix is Arize Phoenix span exports.
const FormatPhoenix = "phoenix"

func init() {
	Register(&Format{
		Name:     FormatPhoenix,
		Detect:   detectPhoenix,
		Priority: 10,
		Convert:  convertPhoenix,
	})
}

func detectPhoenix(head []byte) bool {
	s := sniffJSON(head)
	if s == nil || s.isRecord() {
		return false
	}
	item := func(p string) bool {
		return s.has(p, "span_kind") && (s.has(p, "context") || s.has(p, "context.trace_id") || s.has(p, "parent_id"))
	}
	return item("") || item("data[]")
}

type pxSpan struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Context *struct {
		TraceID string `json:"trace_id"`
		SpanID  string `json:"span_id"`
	} `json:"context"`
	FlatTraceID   string                     `json:"context.trace_id"`
	FlatSpanID    string                     `json:"context.span_id"`
	SpanKind      string                     `json:"span_kind"`
	ParentID      string                     `json:"parent_id"`
	StartTime     json.RawMessage            `json:"start_time"`
	EndTime       json.RawMessage            `json:"end_time"`
	StatusCode    string                     `json:"status_code"`
	StatusMessage string                     `json:"status_message"`
	Attributes    map[string]json.RawMessage `json:"attributes"`
	Data          json.RawMessage            `json:"data"`
	raw           map[string]json.RawMessage // the span's own keys, for the flat layout
}

// attr reads an attribute by its dotted name: a flat key, a nested path,
// or the dataframe's "attributes.<name>" column.
func (s *pxSpan) attr(name string) string {
	if v, ok := s.Attributes[name]; ok {
		return jsonText(v)
	}
	if v, ok := s.raw["attributes."+name]; ok {
		return jsonText(v)
	}
	// Nested: walk the longest flat prefix that is a key, then the rest.
	parts := strings.Split(name, ".")
	for i := len(parts) - 1; i >= 1; i-- {
		v, ok := s.Attributes[strings.Join(parts[:i], ".")]
		if !ok {
			continue
		}
		for _, p := range parts[i:] {
			var m map[string]json.RawMessage
			if jsonKind(v) != '{' || json.Unmarshal(v, &m) != nil {
				return ""
			}
			if v, ok = m[p]; !ok {
				return ""
			}
		}
		return jsonText(v)
	}
	return ""
}

// convertPhoenix writes a record per span that is a step (see foldSpans;
// ImportOptions.KeepSpans writes every one). The session is the span's
// session.id (or gen_ai.conversation.id), else the first one a span of its
// trace carries, else the trace id. The node is the agent's, tool's or
// graph node's name (agent.name, tool.name, graph.node.id), else the
// span's name without ids; the event error for status_code ERROR, else
// ok. A span needs a trace id and a span id.
func convertPhoenix(r io.Reader, w io.Writer, opt ImportOptions) error {
	jr := newJSONReader(r)
	jr.streamItems(opt.maxItem)
	jr.skipBadText = true
	defer jr.release()
	var spans []*treeSpan
	own := map[*treeSpan]string{}
	traceSession := map[string]string{}
	var obj jsonObject
	// one reads an item of the input, or of the API's page (inPage). A
	// page is the top of a response: a page in a page would be read by a
	// call per level, each holding a copy of all below it (150 levels of a
	// 2 MB file took 1 GB), and is refused.
	var one func(raw json.RawMessage, at int64, inPage bool) error
	one = func(raw json.RawMessage, at int64, inPage bool) error {
		if jsonKind(raw) != '{' {
			return jr.errorAt(at, "want a Phoenix span object, found %s", jsonKindName(jsonKind(raw)))
		}
		var sp pxSpan
		if err := jr.unmarshal(raw, at, &sp); err != nil {
			return err
		}
		if sp.Data != nil && sp.SpanKind == "" && sp.Context == nil {
			if inPage {
				return jr.errorAt(at, "a page of spans ({\"data\": [...]}) inside a page, want a Phoenix span")
			}
			return jr.elements(sp.Data, at+int64(indexRaw(raw, sp.Data)), func(raw json.RawMessage, at int64) error {
				return one(raw, at, true)
			})
		}
		if err := json.Unmarshal(raw, &sp.raw); err != nil {
			return jr.errorAt(at, "%v", err)
		}
		trace, id := sp.FlatTraceID, sp.FlatSpanID
		if sp.Context != nil {
			trace, id = firstOf(sp.Context.TraceID, trace), firstOf(sp.Context.SpanID, id)
		}
		label := firstOf(id, sp.ID, sp.Name)
		switch {
		case sp.SpanKind == "" && sp.Context == nil && trace == "":
			return jr.errorAt(at, "not a Phoenix span: no \"span_kind\" and no \"context\"")
		case trace == "":
			return jr.errorAt(at, "span %s has no context.trace_id", label)
		case id == "":
			return jr.errorAt(at, "span %s has no context.span_id", label)
		}
		start, hasStart := jsonTime(sp.StartTime)
		if !hasStart && jsonKind(sp.StartTime) != 0 && jsonKind(sp.StartTime) != 'n' {
			return jr.errorAt(at, "span %s: start_time %s is not a time", id, sp.StartTime)
		}
		end, hasEnd := jsonTime(sp.EndTime)
		line, _ := jr.pr.pos(at)
		event := "ok"
		if strings.EqualFold(sp.StatusCode, "ERROR") {
			event = "error"
		}
		obj.reset()
		obj.str(FieldEvent, event)
		obj.open("attrs")
		obj.str("trace_id", trace)
		obj.str("span_id", id)
		obj.strNonEmpty("parent_id", sp.ParentID)
		obj.strNonEmpty("name", sp.Name)
		obj.strNonEmpty("span_kind", sp.SpanKind)
		obj.strNonEmpty("status_code", sp.StatusCode)
		obj.strNonEmpty("status_message", sp.StatusMessage)
		// Nested as OTLP's are, so that a path (attrs.tool.name) reaches
		// them: a key "tool.name" is out of every path's reach.
		var nest attrTree
		for _, k := range []string{"tool.name", "agent.name", "graph.node.id", "llm.model_name"} {
			if v := sp.attr(k); v != "" {
				nest.set(k, appendJSONString(nil, v))
			}
		}
		nest.write(&obj)
		obj.close()
		s := &treeSpan{
			spanItem: spanItem{trace: trace, id: id, parent: sp.ParentID,
				start: start, hasTime: hasStart, seq: len(spans), body: append([]byte(nil), obj.bytes()...)},
			name: sp.Name, end: end, hasEnd: hasEnd, line: line,
			where: "line " + itoa(line) + ": span " + id + " of trace " + trace,
		}
		s.classify(sp.SpanKind, sp.attr)
		spans = append(spans, s)
		if c := firstOf(sp.attr("gen_ai.conversation.id"), sp.attr("session.id")); c != "" {
			own[s] = c
			if traceSession[trace] == "" {
				traceSession[trace] = c
			}
		}
		return nil
	}
	if err := jr.items(func(raw json.RawMessage, at int64) error { return one(raw, at, false) }); err != nil {
		return err
	}
	for _, s := range spans {
		s.session = firstOf(own[s], traceSession[s.trace], s.trace)
	}
	rw := newRecordWriter(w)
	defer rw.release()
	if err := jr.writeSkipped(rw); err != nil {
		return err
	}
	return writeTreeSpansTo(rw, spans, opt, nil)
}
