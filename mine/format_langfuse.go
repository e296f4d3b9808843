package mine

// Langfuse trace exports: traces as the Langfuse public API returns them
// from GET /api/public/traces/{traceId} (TraceWithFullDetails: "id",
// "timestamp", "name", "sessionId", "userId", "tags", and "observations":
// [{"id", "traceId", "type" (SPAN, GENERATION, EVENT, AGENT, TOOL, ...),
// "name", "startTime", "endTime", "parentObservationId", "level" (DEBUG,
// DEFAULT, WARNING, ERROR), "statusMessage", "model", ...}]), one a line,
// as a JSON array, or in the list endpoints' {"data": [...]}; observations
// on their own (GET /api/public/observations) are read too. Followed: the
// API definitions in langfuse/langfuse fern/apis/server/definition/commons.yml
// (Trace, TraceWithFullDetails, Observation, ObservationsView,
// ObservationLevel).

import (
	"io"
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
	return item("") || item("data[]")
}

type lfItem struct {
	// A trace.
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	SessionID    string          `json:"sessionId"`
	UserID       string          `json:"userId"`
	Timestamp    json.RawMessage `json:"timestamp"`
	Observations json.RawMessage `json:"observations"`
	// A list page.
	Data json.RawMessage `json:"data"`
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

// convertLangfuse writes one record per observation. The session is the
// trace's sessionId, else the trace id; the node the observation's name,
// else its type in lower case; the event error for level ERROR, warning
// for WARNING, else ok. Observations are ordered by startTime within their
// session, parents before children at equal times.
func convertLangfuse(r io.Reader, w io.Writer, opt ImportOptions) error {
	jr := newJSONReader(r)
	defer jr.release()
	var items []*spanItem
	var obj jsonObject
	addObs := func(o *lfItem, at int64, session, traceName, userID string) error {
		if o.ID == "" && o.Name == "" {
			return jr.errorAt(at, "an observation without an id or a name")
		}
		start, hasStart := jsonTime(o.StartTime)
		if !hasStart && jsonKind(o.StartTime) != 0 && jsonKind(o.StartTime) != 'n' {
			return jr.errorAt(at, "observation %s: startTime %s is not a time", o.ID, o.StartTime)
		}
		end, hasEnd := jsonTime(o.EndTime)
		node := o.Name
		if node == "" {
			node = strings.ToLower(o.Type)
		}
		if node == "" {
			return jr.errorAt(at, "observation %s has neither a name nor a type", o.ID)
		}
		event := "ok"
		switch strings.ToUpper(o.Level) {
		case "ERROR":
			event = "error"
		case "WARNING":
			event = "warning"
		}
		obj.reset()
		obj.str(FieldNode, node)
		obj.str(FieldEvent, event)
		obj.span(start, end, hasStart, hasEnd)
		obj.open("attrs")
		obj.strNonEmpty("observation_id", o.ID)
		obj.strNonEmpty("type", o.Type)
		obj.strNonEmpty("level", o.Level)
		obj.strNonEmpty("status_message", o.StatusMessage)
		obj.strNonEmpty("model", o.Model)
		obj.strNonEmpty("trace_id", o.TraceID)
		obj.strNonEmpty("trace_name", traceName)
		obj.strNonEmpty("parent_observation_id", o.ParentObservationID)
		obj.strNonEmpty("user_id", userID)
		obj.close()
		items = append(items, &spanItem{
			session: session, trace: o.TraceID, id: o.ID, parent: o.ParentObservationID,
			start: start, hasTime: hasStart, seq: len(items),
			body: append([]byte(nil), obj.bytes()...),
		})
		return nil
	}
	var one func(raw json.RawMessage, at int64) error
	one = func(raw json.RawMessage, at int64) error {
		if jsonKind(raw) != '{' {
			return jr.errorAt(at, "want a Langfuse trace or observation object")
		}
		var it lfItem
		if err := jr.unmarshal(raw, at, &it); err != nil {
			return err
		}
		switch {
		case it.Data != nil && it.ID == "":
			return jr.elements(it.Data, at+int64(indexRaw(raw, it.Data)), one)
		case it.Observations != nil:
			if it.ID == "" {
				return jr.errorAt(at, "a trace without an id")
			}
			if jsonKind(it.Observations) != '[' {
				return jr.errorAt(at, "trace %s: observations is not an array", it.ID)
			}
			session := it.SessionID
			if session == "" {
				session = it.ID
			}
			obsAt := at + int64(indexRaw(raw, it.Observations))
			return jr.elements(it.Observations, obsAt, func(raw json.RawMessage, at int64) error {
				if jsonKind(raw) == '"' {
					return jr.errorAt(at, "trace %s lists observation ids only: export traces with their observations (GET /api/public/traces/{traceId})", it.ID)
				}
				var o lfItem
				if err := jr.unmarshal(raw, at, &o); err != nil {
					return err
				}
				if o.TraceID == "" {
					o.TraceID = it.ID
				}
				return addObs(&o, at, session, it.Name, it.UserID)
			})
		case it.TraceID != "" && it.Type != "":
			session := it.SessionID
			if session == "" {
				session = it.TraceID
			}
			return addObs(&it, at, session, "", "")
		case it.ID != "":
			// A trace without observations: nothing happened in it.
			return nil
		}
		return jr.errorAt(at, "neither a Langfuse trace (no \"observations\") nor an observation (no \"traceId\" and \"type\")")
	}
	if err := jr.items(one); err != nil {
		return err
	}
	return writeSpanItems(w, items)
}
