package mine

// LangSmith run exports: runs as the LangSmith API and SDK return them
// (Client.list_runs, the /runs/query endpoint), written as a JSON array, as
// JSON lines, or as the endpoint's {"runs": [...]}. A run has "id", "name",
// "run_type" (llm, chain, tool, retriever, ...), "start_time", "end_time",
// "error", "status", "extra": {"metadata": {...}}, "trace_id",
// "dotted_order", "parent_run_id", and "session_id" — the project, not a
// conversation. Followed: LangSmith's run data format
// (docs.smith.langchain.com/reference/data_formats/run_data_format), its
// threads guide (a thread is the runs whose metadata share "session_id",
// "thread_id" or "conversation_id"), and LangGraph's run metadata
// (langgraph_node, langgraph_step).

import (
	"encoding/json"
	"io"
)

// FormatLangSmith is LangSmith run exports.
const FormatLangSmith = "langsmith"

func init() {
	registerFormat(&Format{
		Name:     FormatLangSmith,
		Detect:   detectLangSmith,
		Priority: 10,
		Convert:  convertLangSmith,
	})
}

func detectLangSmith(head []byte) bool {
	s := sniffJSON(head)
	if s == nil || s.isRecord() {
		return false
	}
	run := func(p string) bool {
		return s.has(p, "run_type") && (s.has(p, "start_time") || s.has(p, "dotted_order") || s.has(p, "trace_id"))
	}
	return run("") || run("runs[]")
}

type lsRun struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	RunType     string          `json:"run_type"`
	StartTime   json.RawMessage `json:"start_time"`
	EndTime     json.RawMessage `json:"end_time"`
	Error       json.RawMessage `json:"error"`
	Status      string          `json:"status"`
	TraceID     string          `json:"trace_id"`
	DottedOrder string          `json:"dotted_order"`
	ParentRunID string          `json:"parent_run_id"`
	SessionID   string          `json:"session_id"`
	Tags        []string        `json:"tags"`
	Extra       struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
	} `json:"extra"`
	Runs json.RawMessage `json:"runs"`
}

// lsThreadKeys are the metadata keys that name a conversation, in the
// order they are looked up.
var lsThreadKeys = []string{"thread_id", "session_id", "conversation_id"}

// convertLangSmith writes one record per run, except the parts of a
// LangGraph node that are not the node itself or a tool: a run whose
// metadata names a langgraph_node other than the run's own name (the model
// call, prompt, parser and routing runs inside the node) is left out, as
// are LangGraph's __start__ and __end__ runs. The node is the run's name;
// the event error when the run has an error (or status "error"), else ok.
// Runs are ordered by dotted_order within their thread and carry their
// start time as ts.
func convertLangSmith(r io.Reader, w io.Writer) error {
	jr := newJSONReader(r)
	var items []*spanItem
	type pending struct {
		it     *spanItem
		thread string
	}
	var runs []pending
	traceThread := map[string]string{}
	var obj jsonObject
	var one func(raw json.RawMessage, at int64) error
	one = func(raw json.RawMessage, at int64) error {
		if jsonKind(raw) != '{' {
			return jr.errorAt(at, "want a LangSmith run object")
		}
		var run lsRun
		if err := jr.unmarshal(raw, at, &run); err != nil {
			return err
		}
		if run.Runs != nil && run.ID == "" {
			return jr.elements(run.Runs, at+int64(indexRaw(raw, run.Runs)), one)
		}
		if run.ID == "" && run.TraceID == "" {
			return jr.errorAt(at, "a run without an id or trace_id")
		}
		if run.Name == "" {
			return jr.errorAt(at, "run %s has no name", run.ID)
		}
		meta := run.Extra.Metadata
		thread := ""
		for _, k := range lsThreadKeys {
			if thread = jsonText(meta[k]); thread != "" {
				break
			}
		}
		trace := run.TraceID
		if trace == "" {
			trace = run.ID
		}
		if thread != "" && traceThread[trace] == "" {
			traceThread[trace] = thread
		}
		lgNode := jsonText(meta["langgraph_node"])
		if lgNode != "" && run.RunType != "tool" && lgNode != run.Name {
			return nil
		}
		if lgNode != "" && (run.Name == "__start__" || run.Name == "__end__") {
			return nil
		}
		start, hasStart := jsonTime(run.StartTime)
		if !hasStart && jsonKind(run.StartTime) != 0 && jsonKind(run.StartTime) != 'n' {
			return jr.errorAt(at, "run %s: start_time %s is not a time", run.ID, run.StartTime)
		}
		end, hasEnd := jsonTime(run.EndTime)
		failed := run.Status == "error" || (jsonKind(run.Error) != 0 && jsonKind(run.Error) != 'n' && jsonText(run.Error) != "")
		obj.reset()
		obj.str(FieldNode, run.Name)
		if failed {
			obj.str(FieldEvent, "error")
		} else {
			obj.str(FieldEvent, "ok")
		}
		obj.span(start, end, hasStart, hasEnd)
		obj.open("attrs")
		obj.strNonEmpty("run_id", run.ID)
		obj.strNonEmpty("run_type", run.RunType)
		obj.strNonEmpty("trace_id", trace)
		obj.strNonEmpty("parent_run_id", run.ParentRunID)
		obj.strNonEmpty("project_id", run.SessionID)
		obj.strNonEmpty("status", run.Status)
		if failed {
			obj.strNonEmpty("error", jsonText(run.Error))
		}
		for _, k := range []string{"langgraph_node", "langgraph_step"} {
			obj.raw(k, meta[k])
		}
		obj.close()
		it := &spanItem{
			trace: trace, id: run.ID, parent: run.ParentRunID,
			start: start, hasTime: hasStart, order: run.DottedOrder, seq: len(items),
			body: append([]byte(nil), obj.bytes()...),
		}
		items = append(items, it)
		runs = append(runs, pending{it, thread})
		return nil
	}
	if err := jr.items(one); err != nil {
		return err
	}
	for _, p := range runs {
		p.it.session = p.thread
		if p.it.session == "" {
			p.it.session = traceThread[p.it.trace]
		}
		if p.it.session == "" {
			p.it.session = p.it.trace
		}
	}
	return writeSpanItems(w, items)
}
