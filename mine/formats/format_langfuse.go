package formats

// Langfuse trace exports: traces as the Langfuse public API returns them
// from GET /api/public/traces/{traceId} (TraceWithFullDetails: "id",
// "timestamp", "name", "sessionId", "userId", "tags", and "observations":
// [{"id", "traceId", "type" (SPAN, GENERATION, EVENT, AGENT, TOOL, ...),
// "name", "startTime", "endTime", "parentObservationId", "level" (DEBUG,
// DEFAULT, WARNING, ERROR), "statusMessage", "model", ...}]), one a line,
// as a JSON array, or in the list endpoints' {"data": [...]}; observations
// on their own (GET /api/public/observations, or a JSON array of them) are
// read too, and so is the UI's trace download, {"trace": {...},
// "observations": [...]}. The v2 observations API (GET
// /api/public/v2/observations, ObservationV2), which Langfuse v4 reads
// spans and traces through in place of the deprecated trace and v1
// observation endpoints, returns no traces: each observation carries its
// trace's "sessionId" itself. An observation's "metadata" (an object, or JSON
// text of one) carries LangGraph's langgraph_node and langgraph_step and
// LangChain's thread_id, and under "attributes" the OpenTelemetry
// attributes the span came with (gen_ai.*, openinference.span.kind,
// session.id). Followed: the API definitions in langfuse/langfuse
// fern/apis/server/definition/commons.yml (Trace, TraceWithFullDetails,
// Observation, ObservationsView, ObservationV2, ObservationLevel,
// ObservationType), observations.yml (ObservationsV2Response) and the
// framework traces under packages/shared/scripts/seeder/utils/framework-traces/.

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/internal/jsondup"
)

// FormatLangfuse is Langfuse trace exports.
const FormatLangfuse = "langfuse"

func init() {
	Register(&Format{
		Name:     FormatLangfuse,
		Detect:   detectLangfuse,
		Priority: 10,
		Convert:  convertLangfuse,
	})
}

func detectLangfuse(head []byte) bool {
	s := sniffJSON(head)
	if s == nil || s.isRecord() {
		return false
	}
	item := func(p string) bool {
		trace := s.has(p, "observations") || s.has(p, "htmlPath")
		obs := s.has(p, "parentObservationId") || (s.has(p, "traceId") && s.has(p, "startTime") && s.has(p, "type") && s.has(p, "level"))
		return trace || obs
	}
	download := s.has("trace", "id") && (s.has("trace", "projectId") || s.has("trace", "timestamp"))
	return item("") || item("data[]") || download
}

type lfItem struct {
	// A trace.
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	SessionID    string          `json:"sessionId"`
	UserID       string          `json:"userId"`
	Timestamp    json.RawMessage `json:"timestamp"`
	Observations json.RawMessage `json:"observations"`
	Metadata     json.RawMessage `json:"metadata"`
	// A list page.
	Data json.RawMessage `json:"data"`
	// A download: the trace beside its observations.
	Trace json.RawMessage `json:"trace"`
	// An observation.
	TraceID             string          `json:"traceId"`
	Type                string          `json:"type"`
	StartTime           json.RawMessage `json:"startTime"`
	EndTime             json.RawMessage `json:"endTime"`
	ParentObservationID string          `json:"parentObservationId"`
	Level               string          `json:"level"`
	StatusMessage       string          `json:"statusMessage"`
	Model               string          `json:"model"`
}

// lfMeta is an observation's or a trace's metadata: an object, or JSON
// text of one (the UI's download writes the trace's as text).
type lfMeta struct {
	top   map[string]json.RawMessage
	attrs map[string]json.RawMessage
}

func parseLfMeta(raw json.RawMessage) lfMeta {
	var m lfMeta
	if jsonKind(raw) == '"' {
		raw = json.RawMessage(jsonText(raw))
	}
	if jsonKind(raw) != '{' || json.Unmarshal(raw, &m.top) != nil {
		return lfMeta{}
	}
	if a := m.top["attributes"]; a != nil {
		if jsonKind(a) == '"' {
			a = json.RawMessage(jsonText(a))
		}
		if jsonKind(a) == '{' {
			json.Unmarshal(a, &m.attrs)
		}
	}
	return m
}

// lfInnerText is the jsonReader's innerText for Langfuse: metadata given
// as JSON text (or its attributes, so given) is parsed only once the item
// is read, and an escape in it of half a UTF-16 surrogate pair ("\\ud800"
// in the item) would become U+FFFD unseen. It looks at the metadata of
// the item raw and of the traces, observations and page items within it,
// as read looks for them, and returns the offset of the first that is not
// as written and why.
func lfInnerText(raw json.RawMessage) (off int, reason string) {
	// A backslash and u in the text come from \\u (or \\\u0075), or
	// \u005c: most items have neither, and are not decoded again.
	if !bytes.Contains(raw, []byte(`\\u`)) && !bytes.Contains(raw, []byte(`\u005`)) {
		return 0, ""
	}
	meta, what := lfBadMeta(raw, 0)
	if meta == nil {
		return 0, ""
	}
	return indexRaw(raw, meta), "metadata holds JSON text with " + what
}

// lfBadMeta returns the first metadata of the Langfuse item raw, or of
// an item within it (depth levels down: a page's item, a download's
// trace, a trace's observation), whose JSON text is not as written, and
// what is wrong there.
func lfBadMeta(raw json.RawMessage, depth int) (json.RawMessage, string) {
	if depth > 3 || jsonKind(raw) != '{' {
		return nil, ""
	}
	var it struct {
		Metadata     json.RawMessage `json:"metadata"`
		Trace        json.RawMessage `json:"trace"`
		Observations json.RawMessage `json:"observations"`
		Data         json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &it) != nil {
		return nil, ""
	}
	if what := lfMetaText(it.Metadata); what != "" {
		return it.Metadata, what
	}
	within := []json.RawMessage{it.Trace}
	for _, list := range []json.RawMessage{it.Observations, it.Data} {
		var els []json.RawMessage
		if jsonKind(list) == '[' && json.Unmarshal(list, &els) == nil {
			within = append(within, els...)
		}
	}
	for _, w := range within {
		if meta, what := lfBadMeta(w, depth+1); meta != nil {
			return meta, what
		}
	}
	return nil, ""
}

// lfMetaText says what is wrong in the JSON text parseLfMeta would parse
// from metadata raw (given as text, or its attributes so given), "" when
// nothing is.
func lfMetaText(raw json.RawMessage) string {
	for range 2 { // the metadata, then its attributes
		if jsonKind(raw) == '"' {
			raw = json.RawMessage(jsonText(raw))
			if jsonKind(raw) == '{' && json.Valid(raw) {
				if _, what, bad := jsondup.BadText(raw); bad {
					return what
				}
			}
		}
		var top map[string]json.RawMessage
		if jsonKind(raw) != '{' || json.Unmarshal(raw, &top) != nil {
			return ""
		}
		raw = top["attributes"]
	}
	return ""
}

// attr is an OpenTelemetry attribute as text, "" when absent or not a
// scalar.
func (m lfMeta) attr(k string) string { return jsonText(m.attrs[k]) }

// lfThreadKeys name a conversation in an observation's metadata (as
// LangSmith's threads read them) or its attributes, in the order looked up.
var lfThreadKeys = []string{"thread_id", "session_id", "conversation_id"}

// conversation is the conversation the metadata names: its
// gen_ai.conversation.id, a thread key, or its session.id.
func (m lfMeta) conversation() string {
	if c := m.attr("gen_ai.conversation.id"); c != "" {
		return c
	}
	for _, k := range lfThreadKeys {
		if c := jsonText(m.top[k]); c != "" {
			return c
		}
	}
	return m.attr("session.id")
}

// lfTrace is what a trace gives its observations.
type lfTrace struct {
	id, name, session, user, conv string
	// sessionBy names what gave the session and its line, for the error
	// of another that gives a different one.
	sessionBy string
}

// convertLangfuse writes a record per observation that is a step (see
// foldSpans; ImportOptions.KeepSpans writes every one). The session is the
// sessionId of the trace or of its observations (which must agree), else
// the first conversation its observations name
// (gen_ai.conversation.id, a thread_id, session_id or conversation_id in
// their metadata, session.id), else the trace id. The node is the agent's,
// tool's or graph node's name (langgraph_node), else the observation's
// name without ids, else its type in lower case; the event error for level
// ERROR, warning for WARNING, else ok. Observations are ordered by
// startTime within their session, parents before children at equal times.
// An observation needs an id and a traceId (or a trace around it); its
// parent, when not in the input, is taken as absent.
func convertLangfuse(r io.Reader, w io.Writer, opt ImportOptions) error {
	lr := &lfReader{jr: newJSONReader(r), traces: map[string]*lfTrace{}}
	lr.jr.streamItems(opt.maxItem)
	lr.jr.skipBadText = true
	lr.jr.innerText = lfInnerText
	defer lr.jr.release()
	if err := lr.jr.items(lr.item); err != nil {
		return err
	}
	for _, s := range lr.spans {
		t := lr.traces[s.trace]
		s.session = firstOf(t.session, t.conv, s.trace)
	}
	rw := newRecordWriter(w)
	defer rw.release()
	if err := lr.jr.writeSkipped(rw); err != nil {
		return err
	}
	return writeTreeSpansTo(rw, lr.spans, opt, nil)
}

// lfReader reads the items of a Langfuse export into tree spans.
type lfReader struct {
	jr     *jsonReader
	spans  []*treeSpan
	traces map[string]*lfTrace
	obj    jsonObject
}

func (lr *lfReader) trace(id string) *lfTrace {
	t := lr.traces[id]
	if t == nil {
		t = &lfTrace{id: id}
		lr.traces[id] = t
	}
	return t
}

// item reads one item of the input: a download, a list page, a trace with
// its observations, an observation, or a trace alone.
func (lr *lfReader) item(raw json.RawMessage, at int64) error { return lr.read(raw, at, false) }

// pageItem reads an item of a list page: anything item reads but a page.
// The API's pages are the top of its responses; a page in a page would be
// read by a call per level, each holding a copy of all below it (150
// levels of a 2 MB file took 1 GB).
func (lr *lfReader) pageItem(raw json.RawMessage, at int64) error { return lr.read(raw, at, true) }

// read reads an item found at offset at, inPage when it is in a list page.
func (lr *lfReader) read(raw json.RawMessage, at int64, inPage bool) error {
	jr := lr.jr
	if jsonKind(raw) != '{' {
		return jr.errorAt(at, "want a Langfuse trace or observation object, found %s", jsonKindName(jsonKind(raw)))
	}
	var it lfItem
	if err := jr.unmarshal(raw, at, &it); err != nil {
		return err
	}
	switch {
	case it.Trace != nil && it.ID == "":
		return lr.download(&it, raw, at)
	case it.Data != nil && it.ID == "":
		if inPage {
			return jr.errorAt(at, "a list page ({\"data\": [...]}) inside a list page, want a Langfuse trace or observation")
		}
		return jr.elements(it.Data, at+int64(indexRaw(raw, it.Data)), lr.pageItem)
	case it.Observations != nil:
		return lr.traceItem(&it, at, it.Observations, at+int64(indexRaw(raw, it.Observations)))
	case it.TraceID != "" || it.ParentObservationID != "" || it.StartTime != nil:
		return lr.observation(&it, at)
	case it.ID != "" && (it.Timestamp != nil || it.SessionID != ""):
		// A trace without observations: nothing happened in it, but it
		// may name the session of observations listed elsewhere.
		return lr.traceItem(&it, at, nil, 0)
	}
	return jr.errorAt(at, "neither a Langfuse trace (no \"observations\"), a download (no \"trace\") nor an observation (no \"traceId\")")
}

// download reads the UI's download: {"trace": {...}, "observations": [...]}
// (it found at offset at, raw its text).
func (lr *lfReader) download(it *lfItem, raw json.RawMessage, at int64) error {
	jr := lr.jr
	if jsonKind(it.Trace) != '{' {
		return jr.errorAt(at, "\"trace\" is %s, want a Langfuse trace object", jsonKindName(jsonKind(it.Trace)))
	}
	tAt := at + int64(indexRaw(raw, it.Trace))
	var t lfItem
	if err := jr.unmarshal(it.Trace, tAt, &t); err != nil {
		return err
	}
	if t.Observations != nil && it.Observations != nil {
		return jr.errorAt(at, "trace %s: observations both inside and beside the trace", t.ID)
	}
	obs, obsAt := it.Observations, at+int64(indexRaw(raw, it.Observations))
	if obs == nil {
		obs, obsAt = t.Observations, tAt+int64(indexRaw(it.Trace, t.Observations))
	}
	return lr.traceItem(&t, tAt, obs, obsAt)
}

// traceItem reads a trace (at offset at) and its observations (obs, at
// obsAt; nil when there are none).
func (lr *lfReader) traceItem(it *lfItem, at int64, obs json.RawMessage, obsAt int64) error {
	jr := lr.jr
	if it.ID == "" {
		return jr.errorAt(at, "a trace without an id")
	}
	t := lr.trace(it.ID)
	t.name = it.Name
	if it.UserID != "" {
		t.user = it.UserID
	}
	if err := lr.session(t, it.SessionID, at, "trace "+it.ID); err != nil {
		return err
	}
	if c := parseLfMeta(it.Metadata).conversation(); c != "" && t.conv == "" {
		t.conv = c
	}
	if obs == nil {
		return nil
	}
	if jsonKind(obs) != '[' {
		return jr.errorAt(at, "trace %s: observations is not an array", it.ID)
	}
	return jr.elements(obs, obsAt, func(raw json.RawMessage, at int64) error {
		if jsonKind(raw) == '"' {
			return jr.errorAt(at, "trace %s lists observation ids only: export traces with their observations (GET /api/public/traces/{traceId}, or the UI's download)", it.ID)
		}
		if jsonKind(raw) != '{' {
			return jr.errorAt(at, "trace %s: an observation is %s, want an object", it.ID, jsonKindName(jsonKind(raw)))
		}
		var o lfItem
		if err := jr.unmarshal(raw, at, &o); err != nil {
			return err
		}
		if o.TraceID == "" {
			o.TraceID = it.ID
		} else if o.TraceID != it.ID {
			return jr.errorAt(at, "observation %s: traceId %s, but it is listed in trace %s", o.ID, o.TraceID, it.ID)
		}
		return lr.observation(&o, at)
	})
}

// observation reads an observation found at offset at.
func (lr *lfReader) observation(o *lfItem, at int64) error {
	jr := lr.jr
	switch {
	case o.ID == "":
		return jr.errorAt(at, "observation %q (type %s) has no id", o.Name, o.Type)
	case o.TraceID == "":
		return jr.errorAt(at, "observation %s has no traceId", o.ID)
	case o.Type == "" && o.StartTime == nil:
		return jr.errorAt(at, "observation %s: not a Langfuse observation: no \"type\" and no \"startTime\"", o.ID)
	}
	start, hasStart := jsonTime(o.StartTime)
	if !hasStart && jsonKind(o.StartTime) != 0 && jsonKind(o.StartTime) != 'n' {
		return jr.errorAt(at, "observation %s: startTime %s is not a time", o.ID, o.StartTime)
	}
	end, hasEnd := jsonTime(o.EndTime)
	meta := parseLfMeta(o.Metadata)
	t := lr.trace(o.TraceID)
	if err := lr.session(t, o.SessionID, at, "observation "+o.ID+" of trace "+o.TraceID); err != nil {
		return err
	}
	if t.user == "" {
		t.user = o.UserID // the v2 API's observations carry it, with no trace
	}
	event := "ok"
	switch strings.ToUpper(o.Level) {
	case "ERROR":
		event = "error"
	case "WARNING":
		event = "warning"
	}
	obj := &lr.obj
	obj.reset()
	obj.str(FieldEvent, event)
	obj.open("attrs")
	obj.strNonEmpty("observation_id", o.ID)
	obj.strNonEmpty("name", o.Name)
	obj.strNonEmpty("type", o.Type)
	obj.strNonEmpty("level", o.Level)
	obj.strNonEmpty("status_message", o.StatusMessage)
	obj.strNonEmpty("model", o.Model)
	obj.strNonEmpty("trace_id", o.TraceID)
	obj.strNonEmpty("trace_name", t.name)
	obj.strNonEmpty("parent_observation_id", o.ParentObservationID)
	obj.strNonEmpty("user_id", t.user)
	for _, k := range []string{"langgraph_node", "langgraph_step"} {
		obj.raw(k, meta.top[k])
	}
	// Nested as OTLP's are, so that a path (attrs.gen_ai.tool.name)
	// reaches them: a key "gen_ai.tool.name" is out of every path's reach.
	var nest attrTree
	for _, k := range []string{"gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.tool.name", "openinference.span.kind"} {
		if v := meta.attr(k); v != "" {
			nest.set(k, appendJSONString(nil, v))
		}
	}
	nest.write(obj)
	obj.close()
	line, _ := jr.pr.pos(at)
	s := &treeSpan{
		spanItem: spanItem{trace: o.TraceID, id: o.ID, parent: o.ParentObservationID,
			start: start, hasTime: hasStart, seq: len(lr.spans), body: append([]byte(nil), obj.bytes()...)},
		name: o.Name, end: end, hasEnd: hasEnd, line: line,
		graphNode: jsonText(meta.top["langgraph_node"]), graphStep: jsonText(meta.top["langgraph_step"]),
		where: "line " + itoa(line) + ": observation " + o.ID + " of trace " + o.TraceID,
	}
	s.classify(o.Type, meta.attr)
	if s.name == "" && s.kind == kindSpan {
		s.name = strings.ToLower(o.Type)
	}
	lr.spans = append(lr.spans, s)
	if c := meta.conversation(); c != "" && t.conv == "" {
		t.conv = c
	}
	return nil
}

// session gives trace t the sessionId s (none when ""), which what, found
// at offset at, carries. The trace and each of its observations carry the
// trace's session in the v2 API; two that differ would make the session up
// to the order of the input, and stop the read naming both lines.
func (lr *lfReader) session(t *lfTrace, s string, at int64, what string) error {
	if s == "" {
		return nil
	}
	line, _ := lr.jr.pr.pos(at)
	switch t.session {
	case "":
		t.session, t.sessionBy = s, what+" (line "+itoa(line)+")"
	case s:
	default:
		return lr.jr.errorAt(at, "%s: sessionId %q, but %s has sessionId %q", what, s, t.sessionBy, t.session)
	}
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }
