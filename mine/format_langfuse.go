package mine

// Langfuse trace exports: traces as the Langfuse public API returns them
// from GET /api/public/traces/{traceId} (TraceWithFullDetails: "id",
// "timestamp", "name", "sessionId", "userId", "tags", and "observations":
// [{"id", "traceId", "type" (SPAN, GENERATION, EVENT, AGENT, TOOL, ...),
// "name", "startTime", "endTime", "parentObservationId", "level" (DEBUG,
// DEFAULT, WARNING, ERROR), "statusMessage", "model", ...}]), one a line,
// as a JSON array, or in the list endpoints' {"data": [...]}; observations
// on their own (GET /api/public/observations, or a JSON array of them) are
// read too, and so is the UI's trace download, {"trace": {...},
// "observations": [...]}. An observation's "metadata" (an object, or JSON
// text of one) carries LangGraph's langgraph_node and langgraph_step and
// LangChain's thread_id, and under "attributes" the OpenTelemetry
// attributes the span came with (gen_ai.*, openinference.span.kind,
// session.id). Followed: the API definitions in langfuse/langfuse
// fern/apis/server/definition/commons.yml (Trace, TraceWithFullDetails,
// Observation, ObservationsView, ObservationLevel, ObservationType) and the
// framework traces under packages/shared/scripts/seeder/utils/framework-traces/.

import (
	"io"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
)

// FormatLangfuse is Langfuse trace exports.
const FormatLangfuse = "langfuse"

func init() {
	registerFormat(&Format{
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
}

// convertLangfuse writes a record per observation that is a step (see
// foldSpans; ImportOptions.KeepSpans writes every one). The session is the
// trace's sessionId, else the first conversation its observations name
// (gen_ai.conversation.id, a thread_id, session_id or conversation_id in
// their metadata, session.id), else the trace id. The node is the agent's,
// tool's or graph node's name (langgraph_node), else the observation's
// name without ids, else its type in lower case; the event error for level
// ERROR, warning for WARNING, else ok. Observations are ordered by
// startTime within their session, parents before children at equal times.
// An observation needs an id and a traceId (or a trace around it); its
// parent, when not in the input, is taken as absent.
func convertLangfuse(r io.Reader, w io.Writer, opt ImportOptions) error {
	jr := newJSONReader(r)
	var spans []*treeSpan
	traces := map[string]*lfTrace{}
	var obj jsonObject
	traceOf := func(id string) *lfTrace {
		t := traces[id]
		if t == nil {
			t = &lfTrace{id: id}
			traces[id] = t
		}
		return t
	}
	addObs := func(o *lfItem, at int64) error {
		line, _ := jr.pr.pos(at)
		if o.ID == "" {
			return jr.errorAt(at, "observation %q (type %s) has no id", o.Name, o.Type)
		}
		if o.TraceID == "" {
			return jr.errorAt(at, "observation %s has no traceId", o.ID)
		}
		if o.Type == "" && o.StartTime == nil {
			return jr.errorAt(at, "observation %s: not a Langfuse observation: no \"type\" and no \"startTime\"", o.ID)
		}
		start, hasStart := jsonTime(o.StartTime)
		if !hasStart && jsonKind(o.StartTime) != 0 && jsonKind(o.StartTime) != 'n' {
			return jr.errorAt(at, "observation %s: startTime %s is not a time", o.ID, o.StartTime)
		}
		end, hasEnd := jsonTime(o.EndTime)
		meta := parseLfMeta(o.Metadata)
		t := traceOf(o.TraceID)
		event := "ok"
		switch strings.ToUpper(o.Level) {
		case "ERROR":
			event = "error"
		case "WARNING":
			event = "warning"
		}
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
		for _, k := range []string{"gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.tool.name", "openinference.span.kind"} {
			obj.strNonEmpty(k, meta.attr(k))
		}
		obj.close()
		s := &treeSpan{
			spanItem: spanItem{trace: o.TraceID, id: o.ID, parent: o.ParentObservationID,
				start: start, hasTime: hasStart, seq: len(spans), body: append([]byte(nil), obj.bytes()...)},
			name: o.Name, end: end, hasEnd: hasEnd, line: line,
			graphNode: jsonText(meta.top["langgraph_node"]), graphStep: jsonText(meta.top["langgraph_step"]),
			where: "line " + itoa(line) + ": observation " + o.ID + " of trace " + o.TraceID,
		}
		s.classify(o.Type, meta.attr)
		if s.name == "" && s.kind == kindSpan {
			s.name = strings.ToLower(o.Type)
		}
		spans = append(spans, s)
		if c := meta.conversation(); c != "" && t.conv == "" {
			t.conv = c
		}
		return nil
	}
	// trace reads a trace and its observations (obs, at obsAt; nil when the
	// download lists them beside it).
	trace := func(it *lfItem, at int64, obs json.RawMessage, obsAt int64) error {
		if it.ID == "" {
			return jr.errorAt(at, "a trace without an id")
		}
		t := traceOf(it.ID)
		t.name, t.session, t.user = it.Name, it.SessionID, it.UserID
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
			return addObs(&o, at)
		})
	}
	var one func(raw json.RawMessage, at int64) error
	one = func(raw json.RawMessage, at int64) error {
		if jsonKind(raw) != '{' {
			return jr.errorAt(at, "want a Langfuse trace or observation object, found %s", jsonKindName(jsonKind(raw)))
		}
		var it lfItem
		if err := jr.unmarshal(raw, at, &it); err != nil {
			return err
		}
		switch {
		case it.Trace != nil && it.ID == "":
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
			return trace(&t, tAt, obs, obsAt)
		case it.Data != nil && it.ID == "":
			return jr.elements(it.Data, at+int64(indexRaw(raw, it.Data)), one)
		case it.Observations != nil:
			return trace(&it, at, it.Observations, at+int64(indexRaw(raw, it.Observations)))
		case it.TraceID != "" || it.ParentObservationID != "" || it.StartTime != nil:
			return addObs(&it, at)
		case it.ID != "" && (it.Timestamp != nil || it.SessionID != ""):
			// A trace without observations: nothing happened in it, but
			// it may name the session of observations listed elsewhere.
			return trace(&it, at, nil, 0)
		}
		return jr.errorAt(at, "neither a Langfuse trace (no \"observations\"), a download (no \"trace\") nor an observation (no \"traceId\")")
	}
	if err := jr.items(one); err != nil {
		return err
	}
	for _, s := range spans {
		t := traces[s.trace]
		s.session = firstOf(t.session, t.conv, s.trace)
	}
	return writeTreeSpans(w, spans, opt)
}

func itoa(n int) string { return strconv.Itoa(n) }
