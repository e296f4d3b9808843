package formats

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
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"
)

// FormatLangSmith is LangSmith run exports.
const FormatLangSmith = "langsmith"

func init() {
	Register(&Format{
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
	// A batch-ingest body ({"post": [runs], "patch": [updates]}) whose
	// posts the head shows, or whose patches it shows first.
	patch := s.has("patch[]", "trace_id") && (s.has("patch[]", "dotted_order") || s.has("patch[]", "end_time"))
	return run("") || run("runs[]") || run("post[]") || patch
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
	Runs  json.RawMessage `json:"runs"`
	Post  json.RawMessage `json:"post"`
	Patch json.RawMessage `json:"patch"`
}

// lsThreadKeys are the metadata keys that name a conversation, in the
// order they are looked up.
var lsThreadKeys = []string{"thread_id", "session_id", "conversation_id"}

// lsDottedID is the run id at the end of a dotted_order
// ("<start>Z<id>.<child start>Z<child id>"), "" when it has none.
func lsDottedID(dotted string) string {
	if i := strings.LastIndexByte(dotted, '.'); i >= 0 {
		dotted = dotted[i+1:]
	}
	if i := strings.IndexByte(dotted, 'Z'); i >= 0 {
		return dotted[i+1:]
	}
	return ""
}

// lsTime reads a run's time as jsonTime does, except that an integer
// number of Unix milliseconds (as the JS SDK sends them) is converted
// exactly: as a float64 of nanoseconds it would be off by up to a few
// hundred nanoseconds.
func lsTime(raw json.RawMessage) (int64, bool) {
	if jsonKind(raw) == '0' {
		if n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64); err == nil && n > 1e11 && n < math.MaxInt64/1_000_000 {
			return n * 1e6, true
		}
	}
	return jsonTime(raw)
}

// merge applies a patch of the run (the SDK's update: end time, outputs,
// error, and whatever else it sends again) to r.
func (r *lsRun) merge(p *lsRun) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&r.Name, p.Name)
	set(&r.RunType, p.RunType)
	set(&r.Status, p.Status)
	set(&r.TraceID, p.TraceID)
	set(&r.DottedOrder, p.DottedOrder)
	set(&r.ParentRunID, p.ParentRunID)
	set(&r.SessionID, p.SessionID)
	for _, f := range []struct{ dst, v *json.RawMessage }{{&r.StartTime, &p.StartTime}, {&r.EndTime, &p.EndTime}, {&r.Error, &p.Error}} {
		if k := jsonKind(*f.v); k != 0 && k != 'n' {
			*f.dst = *f.v
		}
	}
	if len(p.Tags) > 0 {
		r.Tags = p.Tags
	}
	for k, v := range p.Extra.Metadata {
		if r.Extra.Metadata == nil {
			r.Extra.Metadata = map[string]json.RawMessage{}
		}
		if _, ok := r.Extra.Metadata[k]; !ok {
			r.Extra.Metadata[k] = v
		}
	}
}

// convertLangSmith writes a record per run that is a step (see foldSpans;
// ImportOptions.KeepSpans writes every one): the runs inside a LangGraph
// node that are not the node itself or a tool (the model call, prompt,
// parser and routing runs under the node, with its langgraph_node and
// langgraph_step), LangGraph's __start__ and __end__ runs, llm runs under
// a step and chains that hold other runs are left out. The node is the
// run's name; the event error when the run has an error (or status
// "error"), else ok. A run needs a run_type (a patch excepted), an id (or
// a dotted_order that ends with one) and a trace_id (its own or a patch's).
// Runs are ordered by dotted_order within their thread and carry their
// start time as ts. In the SDK's batch-ingest bodies ({"post": [...],
// "patch": [...]}, the payloads its tests capture) a patch completes the
// run posted with its id (or the id its dotted_order ends with); a patch
// of a run no post creates is skipped (a note at its line).
func convertLangSmith(r io.Reader, w io.Writer, opt ImportOptions) error {
	jr := newJSONReader(r)
	jr.streamItems(opt.maxItem)
	jr.skipBadText = true
	defer jr.release()
	lr := &lsReader{jr: jr, byID: map[string]*lsPosted{}}
	if err := jr.items(lr.one); err != nil {
		return err
	}
	rw := newRecordWriter(w)
	defer rw.release()
	if err := jr.writeSkipped(rw); err != nil {
		return err
	}
	// Patches are applied once every post is read: a file may hold the
	// bodies in another order than the SDK sent them.
	for _, pp := range lr.patches {
		if prev := lr.byID[pp.id]; pp.id != "" && prev != nil {
			prev.run.merge(&pp.p.run)
			continue
		}
		if err := writeNote(rw, true, pp.line, "", fmt.Sprintf("a patch of run %s, which no post creates", pp.id)); err != nil {
			return err
		}
	}
	var spans []*treeSpan
	var threads []string // per span: its run's thread, if its metadata names one
	traceThread := map[string]string{}
	var obj jsonObject
	for _, p := range lr.runs {
		it, thread, err := lr.span(p, len(spans), &obj)
		if err != nil {
			return err
		}
		if thread != "" && traceThread[it.trace] == "" {
			traceThread[it.trace] = thread
		}
		spans = append(spans, it)
		threads = append(threads, thread)
	}
	for i, it := range spans {
		it.session = firstOf(threads[i], traceThread[it.trace], it.trace)
	}
	return writeTreeSpansTo(rw, spans, opt, nil)
}

// lsPosted is a run as posted, and where its body starts.
type lsPosted struct {
	run lsRun
	// line and col are where the run's object starts, taken when it is
	// read: the reader keeps no line ends of the items before the current.
	line, col int
}

// lsReader gathers the runs of a LangSmith export: posts by id (a second
// post of an id is an error), patches to apply after.
type lsReader struct {
	jr      *jsonReader
	runs    []*lsPosted
	byID    map[string]*lsPosted
	patches []lsPatch
}

type lsPatch struct {
	p    *lsPosted
	id   string
	line int
}

func (lr *lsReader) one(raw json.RawMessage, at int64) error { return lr.item(raw, at, false, false) }

// item reads one run object, or, unless inBatch, a batch of them: {"runs":
// [...]} or {"post": [...], "patch": [...]}, as the SDK's batch endpoint
// takes. A batch is the top of a response or request body: one in a batch
// would be read by a call per level, each holding a copy of all below it
// (150 levels of a 2 MB file took 0.9 GB), and is refused.
func (lr *lsReader) item(raw json.RawMessage, at int64, patch, inBatch bool) error {
	jr := lr.jr
	if jsonKind(raw) != '{' {
		return jr.errorAt(at, "want a LangSmith run object")
	}
	p := &lsPosted{}
	p.line, p.col = jr.pr.pos(at)
	if err := jr.unmarshal(raw, at, &p.run); err != nil {
		return err
	}
	run := &p.run
	if !patch && run.ID == "" {
		switch {
		case inBatch && (run.Runs != nil || run.Post != nil || run.Patch != nil):
			return jr.errorAt(at, "a batch of runs ({\"runs\": [...]} or {\"post\": [...], \"patch\": [...]}) inside a batch, want a LangSmith run")
		case run.Runs != nil:
			return jr.elements(run.Runs, at+int64(indexRaw(raw, run.Runs)), func(raw json.RawMessage, at int64) error {
				return lr.item(raw, at, false, true)
			})
		case run.Post != nil || run.Patch != nil:
			for _, part := range []struct {
				raw   json.RawMessage
				patch bool
			}{{run.Post, false}, {run.Patch, true}} {
				if part.raw == nil || jsonKind(part.raw) == 'n' {
					continue
				}
				err := jr.elements(part.raw, at+int64(indexRaw(raw, part.raw)), func(raw json.RawMessage, at int64) error {
					return lr.item(raw, at, part.patch, true)
				})
				if err != nil {
					return err
				}
			}
			return nil
		}
	}
	id := run.ID
	if id == "" {
		id = lsDottedID(run.DottedOrder)
	}
	if id == "" && run.TraceID == "" {
		return jr.errorAt(at, "a run without an id or trace_id")
	}
	if patch {
		lr.patches = append(lr.patches, lsPatch{p, id, p.line})
		return nil
	}
	if run.RunType == "" {
		// Spans of another tracer (Phoenix's have id, name and
		// start_time too) must not pass for runs, one trace each.
		return jr.errorAt(at, "not a LangSmith run: no \"run_type\"")
	}
	if id == "" {
		return jr.errorAt(at, "run %q (run_type %s) has no id", run.Name, run.RunType)
	}
	if prev := lr.byID[id]; prev != nil {
		// Run ids are UUIDs: a second post of one is another run that
		// would take the first's place, as in the other span formats.
		return jr.errorAt(at, "run %s: a second run with this id (the first: line %d)", id, prev.line)
	}
	run.ID = id
	lr.runs = append(lr.runs, p)
	lr.byID[id] = p
	return nil
}

// span makes the tree span of run p, the seq-th, with its record's body
// built in obj, and returns the thread its metadata names ("" for none).
func (lr *lsReader) span(p *lsPosted, seq int, obj *jsonObject) (*treeSpan, string, error) {
	run := &p.run
	if run.Name == "" {
		return nil, "", lineError(p.line, p.col, "run %s has no name", run.ID)
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
		// Taken for a trace of its own, a run would be a session of
		// its own and relabel its children.
		return nil, "", lineError(p.line, p.col, "run %s has no trace_id", run.ID)
	}
	start, hasStart := lsTime(run.StartTime)
	if !hasStart && jsonKind(run.StartTime) != 0 && jsonKind(run.StartTime) != 'n' {
		return nil, "", lineError(p.line, p.col, "run %s: start_time %s is not a time", run.ID, run.StartTime)
	}
	end, hasEnd := lsTime(run.EndTime)
	failed := run.Status == "error" || (jsonKind(run.Error) != 0 && jsonKind(run.Error) != 'n' && jsonText(run.Error) != "")
	obj.reset()
	if failed {
		obj.str(FieldEvent, "error")
	} else {
		obj.str(FieldEvent, "ok")
	}
	obj.open("attrs")
	obj.strNonEmpty("run_id", run.ID)
	obj.strNonEmpty("name", run.Name)
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
	line := p.line
	it := &treeSpan{
		spanItem: spanItem{trace: trace, id: run.ID, parent: run.ParentRunID,
			start: start, hasTime: hasStart, order: run.DottedOrder, seq: seq,
			body: append([]byte(nil), obj.bytes()...)},
		name: run.Name, end: end, hasEnd: hasEnd, line: line,
		graphNode: jsonText(meta["langgraph_node"]), graphStep: jsonText(meta["langgraph_step"]),
		where: "line " + itoa(line) + ": run " + run.ID + " of trace " + trace,
	}
	it.classify(run.RunType, func(k string) string { return jsonText(meta[k]) })
	if it.kind == kindAgent || it.kind == kindTool {
		// A run is named by its name; agent and tool names in its
		// metadata describe the model's setup, not the run.
		it.agent, it.tool = "", ""
	}
	return it, thread, nil
}
