package mine

// Tests of the importers on the fixtures in testdata/formats (see the
// README there for what each follows) and on small inline inputs.

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/fsmine/fsmine/mine/formats"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/internal/goldenfile"
)

var formatFixtures = []struct {
	file, format string
	fields       []string // --field flags the input needs
}{
	{file: "otlp.jsonl", format: FormatOTLP},
	{file: "otlp_openinference.jsonl", format: FormatOTLP},
	{file: "otlp_genai.jsonl", format: FormatOTLP},
	{file: "langsmith.json", format: FormatLangSmith},
	{file: "langfuse.jsonl", format: FormatLangfuse},
	{file: "openai_agents.jsonl", format: FormatOpenAIAgents},
	{file: "phoenix_spans.json", format: FormatPhoenix},
	{file: "phoenix_spans.jsonl", format: FormatPhoenix},
	{file: "loan.xes", format: FormatXES},
	{file: "tickets.csv", format: FormatCSV, fields: ticketsFields},
	{file: "tau2_args.json", format: FormatTau},
	{file: "tau_v1_args.json", format: FormatTau},
}

// ticketsFields read tickets.csv, whose columns have no common names.
var ticketsFields = []string{"session_id=attrs.Ticket", "node=attrs.Step", "ts=attrs.Started"}

// fixtureReadOptions are the read options of a fixture: its --field flags.
func fixtureReadOptions(t testing.TB, fields []string) ReadOptions {
	t.Helper()
	m, err := ParseFieldMap(fields)
	if err != nil {
		t.Fatal(err)
	}
	return ReadOptions{Fields: m}
}

func fixturePath(name string) string { return filepath.Join("testdata", "formats", name) }

func TestFormatDetectFixtures(t *testing.T) {
	for _, tt := range formatFixtures {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(fixturePath(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			f, err := formats.Pick(FormatAuto, data[:min(len(data), 64<<10)])
			if err != nil {
				t.Fatalf("pickFormat: %v", err)
			}
			if f.Name != tt.format {
				t.Errorf("auto picks %s, want %s", f.Name, tt.format)
			}
		})
	}
}

func TestFormatDetectInline(t *testing.T) {
	tests := []struct {
		name, head, want string
	}{
		{"fsmine record", `{"session_id":"s","node":"a","run_type":"x","start_time":"y"}`, FormatJSONL},
		{"fsmine record with resourceSpans attr", `{"session_id":"s","node":"a","attrs":{"resourceSpans":1}}`, FormatJSONL},
		{"own log to remap, with Langfuse-like keys", `{"sessionId":"s","timestamp":"t","traceId":"x","type":"y","startTime":"z","node":"a"}`, FormatJSONL},
		{"own log to remap, with LangSmith-like keys", `{"conversation":"c","step":1,"run_type":"tool","start_time":"t"}`, FormatJSONL},
		{"empty", "", FormatJSONL},
		{"otlp pretty", "{\n  \"resourceSpans\": [\n", FormatOTLP},
		{"langsmith jsonl", `{"id":"1","name":"n","start_time":"2024-01-01T00:00:00","run_type":"tool","trace_id":"1"}`, FormatLangSmith},
		{"langsmith runs page", `{"runs":[{"id":"1","name":"n","run_type":"llm","start_time":"x"}],"cursors":{}}`, FormatLangSmith},
		{"langfuse observations page", `{"data":[{"id":"o","traceId":"t","type":"SPAN","startTime":"x","level":"DEFAULT"}],"meta":{}}`, FormatLangfuse},
		{"langfuse observation", `{"id":"o","traceId":"t","type":"SPAN","name":"n","startTime":"x","parentObservationId":null}`, FormatLangfuse},
		{"phoenix span array", `[{"id":"x","name":"turn","context":{"trace_id":"t","span_id":"s"},"span_kind":"AGENT","parent_id":null}]`, FormatPhoenix},
		{"phoenix api page", `{"data":[{"name":"turn","context":{"trace_id":"t","span_id":"s"},"span_kind":"AGENT"}],"next_cursor":null}`, FormatPhoenix},
		{"phoenix dataframe", `{"name":"turn","span_kind":"CHAIN","parent_id":null,"context.span_id":"s","context.trace_id":"t"}`, FormatPhoenix},
		{"langfuse download", `{"trace":{"id":"t","projectId":"p","name":"n","timestamp":"2025-01-01T00:00:00Z"},"observations":[]}`, FormatLangfuse},
		{"openai agents trace first", `{"object":"trace","id":"trace_1","workflow_name":"w","group_id":null}`, FormatOpenAIAgents},
		{"openai agents span", `{"object":"trace.span","id":"span_1","trace_id":"trace_1","parent_id":null,"started_at":"x","ended_at":"y","span_data":{"type":"agent"}}`, FormatOpenAIAgents},
		{"tau2 truncated before simulations", `{"timestamp":"2025-08-01T16:16:36","info":{"git_commit":"b0","user_info":{"llm":"gpt-4.1"},"agent_info":{"llm":"gpt-4.1"}},"tasks":[{"id":"5","description":"` + strings.Repeat("x", 100), FormatTau},
		{"tau v1", `[{"task_id":0,"reward":0.0,"info":{"task":{}},"traj":[{"role":"system","content":"policy"}],"trial":0}]`, FormatTau},
		{"xes", "\ufeff<?xml version=\"1.0\"?>\n<!-- c -->\n<log xes.version=\"1.0\">", FormatXES},
		{"pm4py csv", "case:concept:name,concept:name,time:timestamp\n", FormatCSV},
		{"csv", "Case,Activity\nc1,a\nc1,b\n", FormatCSV},
		{"tsv", "Case\tActivity\tTime\nc1\ta\t1\n", FormatCSV},
		{"csv with CR line ends", "Case,Activity\rc1,a\rc1,b\r", FormatCSV},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := formats.Pick(FormatAuto, []byte(tt.head))
			if err != nil {
				t.Fatalf("pickFormat: %v", err)
			}
			if f.Name != tt.want {
				t.Errorf("auto picks %s, want %s", f.Name, tt.want)
			}
		})
	}
	// Not recognised at all: plain text, an XML document that is not XES,
	// one CSV column.
	for _, head := range []string{"hello world\n", "<html><body>", "just one column\nanother line\n"} {
		if f, err := formats.Pick(FormatAuto, []byte(head)); err == nil {
			t.Errorf("formats.Pick(%q) = %s, want an error", head, f.Name)
		}
	}
}

// TestFormatGolden converts each fixture and compares the records with
// NAME.golden (refresh with go test ./mine -run TestFormatGolden -update).
func TestFormatGolden(t *testing.T) {
	for _, tt := range formatFixtures {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(fixturePath(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			ropt := fixtureReadOptions(t, tt.fields)
			if err := formatNamed(tt.format).Convert(bytes.NewReader(data), &got, ropt.importOptions()); err != nil {
				t.Fatalf("Convert: %v", err)
			}
			golden := fixturePath(tt.file + ".golden")
			if goldenfile.Update() {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("records differ from %s; got:\n%s", golden, got.String())
			}
		})
	}
}

// sessionLines renders a read log as "session: label/event label/event ...".
func sessionLines(lg *Log) []string {
	var out []string
	for _, s := range lg.Sessions {
		var b strings.Builder
		b.WriteString(s.ID + ":")
		for _, v := range s.Visits {
			b.WriteString(" " + lg.Name(v.Label) + "/" + lg.Name(v.Event))
		}
		out = append(out, b.String())
	}
	return out
}

func fixtureInput(name string) Input {
	p := fixturePath(name)
	return Input{Name: name, Open: func() (io.ReadCloser, error) { return os.Open(p) }}
}

// TestFormatSessions reads each fixture as fsmine would and checks the
// sessions: the mapping of each format, end to end.
func TestFormatSessions(t *testing.T) {
	tests := []struct {
		file   string
		fields []string
		want   []string
		bad    []string // skipped records, as file:line: reason
	}{
		{file: "otlp.jsonl", want: []string{
			// The tool and model spans carry no conversation id: they join
			// their trace's. Turn 2 is another trace of the conversation.
			// The model calls inside the agent are left out.
			"conv-1: invoke_agent:Returns/ok execute_tool:get_order_details/ok invoke_agent:Returns/ok execute_tool:issue_refund/ok",
			// error.type is the event; else the status; a span of the trace
			// that came on a later line still joins; the HTTP span inside
			// the tool call is part of it.
			"conv-2: invoke_agent:Returns/error execute_tool:get_order_details/timeout",
			// No conversation id: the resource's session.id.
			"web-session-9: invoke_agent:FAQ/ok",
		}},
		{file: "otlp_openinference.jsonl", want: []string{
			// OpenInference's kinds: the workflow root (an AGENT naming no
			// agent) and the CHAIN turns are wrappers, the LLM generations
			// part of their agent; the handoff, which starts after the
			// agent it hands to, comes before it.
			"conv-oi-1: Triage/ok lookup_order/ok handoff to Refunds/ok Refunds/ok issue_refund/error",
		}},
		{file: "otlp_genai.jsonl", want: []string{
			// 2026 operations: invoke_workflow is a wrapper, plan a step,
			// chat inside the agent left out; an agent named by a UUID is
			// the operation alone.
			"conv-g-1: plan/ok invoke_agent:Returns/ok execute_tool:get_order/ok invoke_agent/ok",
			// v1.36-era model calls without gen_ai.operation.name:
			// gen_ai.system and a model make them "llm".
			"conv-g-2: llm/ok llm/ok",
		}},
		{file: "langsmith.json", want: []string{
			// No thread: the trace is the session; the chain holding the
			// retriever and the model call is left out.
			"33333333-0000-4000-8000-000000000001: retrieve_docs/ok generate_answer/ok",
			// Two traces of one thread, in dotted order; the LangGraph
			// chain around the nodes, the model calls and routing inside a
			// node and __start__ are left out, tool runs are kept.
			"thread-1: agent/ok tools/ok get_order_details/ok agent/ok agent/ok tools/error issue_refund/error",
		}},
		{file: "langfuse.jsonl", want: []string{
			// The generation inside the agent is part of it; the nameless
			// span holding a generation, and nothing else, is left out.
			"chat-42: support-agent/ok lookup_order/ok support-agent/warning issue_refund/error handoff/ok",
			"t-3: answer/ok",
		}},
		{file: "openai_agents.jsonl", want: []string{
			// The generation inside the agent is part of it.
			"conv-7: agent:Triage Agent/ok handoff:Refund Agent/ok agent:Refund Agent/ok function:lookup_order/ok function:issue_refund/error",
			"trace_99999999999940718293a4b5c6d7e8f9: agent:Triage Agent/ok guardrail:off_topic/triggered",
		}},
		{file: "phoenix_spans.json", want: []string{
			// The model calls inside the turn's agent are left out; the
			// subagent under its tool call is a step; the second trace
			// (session.id on its root only) has a chain around a retriever
			// and a model call under no agent: both are steps. The agent
			// whose name is an id takes graph.node.id (nested attributes).
			"chat-7: support.turn/ok lookup_order/ok call_subagent/ok RefundAgent/ok issue_refund/error search_kb/ok gpt-5-mini/ok",
			"trace-c: Planner/ok",
		}},
		{file: "phoenix_spans.jsonl", want: []string{
			// get_spans_dataframe's flat columns; the handoff comes before
			// the agent it hands to, which starts with it.
			"web-3: Triage/ok handoff to Billing/ok Billing/ok charge_card/error",
		}},
		{file: "loan.xes", want: []string{
			"case-1: submit/complete check/start check/complete approve/approve",
			"case-2: submit/complete decline/complete",
		}, bad: []string{"loan.xes:46: missing node"}},
		{file: "tickets.csv", fields: ticketsFields, want: []string{
			"T-1: open/ classify/ answer/ close/",
			"T-2: open/ escalate/",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			fields, err := ParseFieldMap(tt.fields)
			if err != nil {
				t.Fatal(err)
			}
			lg, err := Read([]Input{fixtureInput(tt.file)}, ReadOptions{Fields: fields})
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			got := sessionLines(lg)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("sessions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			var bad []string
			for _, b := range lg.Bad {
				bad = append(bad, b.String())
			}
			if strings.Join(bad, "\n") != strings.Join(tt.bad, "\n") {
				t.Errorf("bad lines %q, want %q", bad, tt.bad)
			}
		})
	}
}

// TestFormatHashesWholeInput checks that each importer reads its input to
// the end, so that the model's source.files sha256 is the file's.
func TestFormatHashesWholeInput(t *testing.T) {
	for _, tt := range formatFixtures {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(fixturePath(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			lg, err := Read([]Input{fixtureInput(tt.file)}, fixtureReadOptions(t, tt.fields))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			sum := sha256.Sum256(data)
			if got, want := lg.Files[0].SHA256, hex.EncodeToString(sum[:]); got != want {
				t.Errorf("sha256 %s, want %s", got, want)
			}
			if lg.Files[0].Format != tt.format {
				t.Errorf("format %s, want %s", lg.Files[0].Format, tt.format)
			}
		})
	}
}

// TestFormatErrors checks that input an importer cannot read stops the read
// with the file and the position of the problem.
func TestFormatErrors(t *testing.T) {
	tests := []struct {
		name, format, input, want string
	}{
		{"otlp syntax", FormatOTLP, "{\"resourceSpans\":[]}\n{\"resourceSpans\":[}\n", "reading bad: line 2, column 19: invalid character '}' looking for beginning of value"},
		{"otlp type", FormatOTLP, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":5}]}]}]}`, "reading bad: line 1, column 55: resourceSpans.0.scopeSpans.0.spans.0.traceId is a JSON number, want a string"},
		{"otlp time", FormatOTLP, "\n" + `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ab","spanId":"cd","name":"x","startTimeUnixNano":"12:00"}]}]}]}`, `reading bad: line 2: span cd of trace ab: startTimeUnixNano "12:00": want an integer`},
		{"otlp time negative", FormatOTLP, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ab","spanId":"cd","name":"x","startTimeUnixNano":"-5"}]}]}]}`, `reading bad: line 1: span cd of trace ab: startTimeUnixNano "-5": negative, want nanoseconds since 1970`},
		{"otlp time too large", FormatOTLP, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ab","spanId":"cd","name":"x","endTimeUnixNano":"99999999999999999999999"}]}]}]}`, `reading bad: line 1: span cd of trace ab: endTimeUnixNano "99999999999999999999999": past the year 2262, want at most 2^63-1 nanoseconds`},
		{"otlp time past 2^63", FormatOTLP, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ab","spanId":"cd","name":"x","startTimeUnixNano":"9223372036854775808"}]}]}]}`, `reading bad: line 1: span cd of trace ab: startTimeUnixNano "9223372036854775808": past the year 2262, want at most 2^63-1 nanoseconds`},
		{"otlp without resourceSpans", FormatOTLP, "{\"resourceSpans\":[]}\n{\"spans\":[]}", `reading bad: line 2, column 1: not OTLP traces: no "resourceSpans"`},
		{"otlp proto names", FormatOTLP, `{"resource_spans":[{"scope_spans":[]}]}`, `reading bad: line 1, column 1: OTLP with protobuf field names ("resource_spans")`},
		{"otlp not an object", FormatOTLP, "[1]", "reading bad: line 1, column 2: want an OTLP traces object"},
		{"otlp no span id", FormatOTLP, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ab","spanId":"","name":"x"}]}]}]}`, `reading bad: line 1, column 1: a span of trace ab without a spanId ("x")`},
		{"otlp int attribute not an int", FormatOTLP, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ab","spanId":"cd","name":"x","attributes":[{"key":"n","value":{"intValue":"7"}},{"key":"gen_ai.operation.name","value":{"intValue":"notint"}}]}]}]}]}`, `reading bad: line 1: span cd of trace ab: attribute gen_ai.operation.name: intValue "notint": want an integer`},
		{"otlp int in a list not an int", FormatOTLP, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ab","spanId":"cd","name":"x","attributes":[{"key":"m","value":{"kvlistValue":{"values":[{"key":"k","value":{"arrayValue":{"values":[{"intValue":1},{"intValue":1.5}]}}}]}}}]}]}]}]}`, `reading bad: line 1: span cd of trace ab: attribute m.k: intValue 1.5: want an integer`},
		{"otlp int resource attribute not an int", FormatOTLP, `{"resourceSpans":[{"resource":{"attributes":[{"key":"pid","value":{"intValue":""}}]},"scopeSpans":[]}]}`, `reading bad: line 1, column 1: resource attribute pid: intValue "": want an integer`},
		{"otlp both scope lists", FormatOTLP, "{\"resourceSpans\":[{},\n{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"ab\",\"spanId\":\"a1\",\"name\":\"A\"}]}],\"instrumentationLibrarySpans\":[{\"spans\":[{\"traceId\":\"ab\",\"spanId\":\"a2\",\"name\":\"B\"}]}]}]}", `reading bad: line 2, column 1: both "scopeSpans" and its older name "instrumentationLibrarySpans": want one`},
		{"otlp attribute key twice", FormatOTLP, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ab","spanId":"cd","name":"x","attributes":[{"key":"gen_ai.tool.name","value":{"stringValue":"lookup"}},{"key":"gen_ai.tool.name","value":{"stringValue":"delete_account"}}]}]}]}]}`, `reading bad: line 1: span cd of trace ab: attribute gen_ai.tool.name: the key is given twice`},
		{"otlp list key twice", FormatOTLP, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ab","spanId":"cd","name":"x","attributes":[{"key":"m","value":{"kvlistValue":{"values":[{"key":"k","value":{"intValue":1}},{"key":"k","value":{"intValue":2}}]}}}]}]}]}]}`, `reading bad: line 1: span cd of trace ab: attribute m.k: the key is given twice`},
		{"otlp resource attribute key twice", FormatOTLP, `{"resourceSpans":[{"resource":{"attributes":[{"key":"session.id","value":{"stringValue":"a"}},{"key":"session.id","value":{"stringValue":"b"}}]},"scopeSpans":[]}]}`, `reading bad: line 1, column 1: resource attribute session.id: the key is given twice`},
		{"otlp value of two kinds", FormatOTLP, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ab","spanId":"cd","name":"x","attributes":[{"key":"gen_ai.tool.name","value":{"stringValue":"a","intValue":"5"}}]}]}]}]}`, `reading bad: line 1: span cd of trace ab: attribute gen_ai.tool.name: a value with both stringValue and intValue, want one`},
		{"otlp value of two kinds in an array", FormatOTLP, `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"ab","spanId":"cd","name":"x","attributes":[{"key":"a","value":{"arrayValue":{"values":[{"boolValue":true,"kvlistValue":{}}]}}}]}]}]}]}`, `reading bad: line 1: span cd of trace ab: attribute a: a value with both boolValue and kvlistValue, want one`},
		{"langsmith truncated", FormatLangSmith, "[\n {\"id\": \"a\", \"name\": \"x\", \"run_type\": \"chain\"", "reading bad: line 2, column 46: the input ends inside a JSON value"},
		{"langsmith after array", FormatLangSmith, `[{"id":"a","name":"x","run_type":"chain"}] {}`, "reading bad: line 1, column 44: more input after the top-level array"},
		{"langsmith bad time", FormatLangSmith, "{\"id\":\"a\",\"trace_id\":\"a\",\"name\":\"x\",\"run_type\":\"tool\"}\n{\"id\":\"b\",\"trace_id\":\"a\",\"name\":\"y\",\"run_type\":\"tool\",\"start_time\":\"soon\"}", `reading bad: line 2, column 1: run b: start_time "soon" is not a time`},
		{"langsmith duplicate id", FormatLangSmith, "[{\"id\":\"a\",\"trace_id\":\"t\",\"name\":\"x\",\"run_type\":\"tool\"},\n{\"id\":\"a\",\"trace_id\":\"t\",\"name\":\"y\",\"run_type\":\"tool\"}]", "reading bad: line 2, column 1: run a: a second run with this id (the first: line 1)"},
		{"langsmith duplicate id in a batch", FormatLangSmith, "{\"post\": [{\"id\":\"a\",\"trace_id\":\"t\",\"name\":\"x\",\"run_type\":\"tool\"}]}\n{\"post\": [{\"id\":\"a\",\"trace_id\":\"t\",\"name\":\"y\",\"run_type\":\"tool\"}]}", "reading bad: line 2, column 11: run a: a second run with this id (the first: line 1)"},
		{"langsmith no trace id", FormatLangSmith, "[{\"id\":\"a\",\"trace_id\":\"a\",\"name\":\"agent\",\"run_type\":\"chain\"},\n {\"id\":\"b\",\"parent_run_id\":\"a\",\"dotted_order\":\"20240101T000000000000Za.20240101T000001000000Zb\",\"name\":\"tools\",\"run_type\":\"chain\"}]", "reading bad: line 2, column 2: run b has no trace_id"},
		{"langsmith no id", FormatLangSmith, "[{\"trace_id\":\"t\",\"name\":\"lookup\",\"run_type\":\"tool\"}]", `reading bad: line 1, column 2: run "lookup" (run_type tool) has no id`},
		{"langsmith given phoenix spans", FormatLangSmith, "[\n" + `{"id":"x","name":"turn","context":{"trace_id":"t","span_id":"s"},"span_kind":"AGENT","parent_id":null,"start_time":"2026-07-09T00:00:00+00:00"}]`, `reading bad: line 2, column 1: not a LangSmith run: no "run_type"`},
		{"langsmith parent cycle", FormatLangSmith, "[{\"id\":\"a\",\"name\":\"x\",\"run_type\":\"tool\",\"trace_id\":\"t\",\"parent_run_id\":\"b\"},\n{\"id\":\"b\",\"name\":\"y\",\"run_type\":\"tool\",\"trace_id\":\"t\",\"parent_run_id\":\"a\"}]", "reading bad: line 1: run a of trace t: its parent links form a cycle"},
		{"langfuse ids only", FormatLangfuse, `{"id":"t1","observations":["o1","o2"]}`, "reading bad: line 1, column 28: trace t1 lists observation ids only"},
		{"langfuse observation without id", FormatLangfuse, `{"trace":{"id":"t1"},"observations":[{"traceId":"t1","type":"SPAN","name":"x","startTime":"2025-01-01T00:00:00Z"}]}`, `reading bad: line 1, column 38: observation "x" (type SPAN) has no id`},
		{"langfuse observation of another trace", FormatLangfuse, `{"trace":{"id":"t1"},"observations":[{"id":"o","traceId":"t2","type":"SPAN"}]}`, "reading bad: line 1, column 38: observation o: traceId t2, but it is listed in trace t1"},
		{"langfuse observation without trace", FormatLangfuse, "[\n{\"id\":\"o1\",\"type\":\"SPAN\",\"startTime\":\"2025-01-01T00:00:00Z\"}]", "reading bad: line 2, column 1: observation o1 has no traceId"},
		{"langfuse parent cycle", FormatLangfuse, "[{\"id\":\"a\",\"traceId\":\"t\",\"type\":\"SPAN\",\"parentObservationId\":\"b\"},\n{\"id\":\"b\",\"traceId\":\"t\",\"type\":\"SPAN\",\"parentObservationId\":\"a\"}]", "reading bad: line 1: observation a of trace t: its parent links form a cycle"},
		{"langfuse own parent", FormatLangfuse, `[{"id":"a","traceId":"t","type":"SPAN","parentObservationId":"a"}]`, "reading bad: line 1: observation a of trace t: it is its own parent"},
		{"langfuse duplicate id", FormatLangfuse, "[{\"id\":\"a\",\"traceId\":\"t\",\"type\":\"SPAN\"},\n{\"id\":\"a\",\"traceId\":\"t\",\"type\":\"TOOL\"}]", "reading bad: line 2: observation a of trace t: a second span with this id (the first: line 1: observation a of trace t)"},
		// A wrapper is read where the exports put it, as an item of the
		// input: one inside another took a copy of all below it per level.
		{"langfuse page in a page", FormatLangfuse, "{\"data\":[\n {\"data\":[{\"id\":\"o\",\"traceId\":\"t\",\"type\":\"SPAN\"}]}]}", `reading bad: line 2, column 2: a list page ({"data": [...]}) inside a list page, want a Langfuse trace or observation`},
		{"phoenix page in a page", FormatPhoenix, "{\"data\":[\n {\"data\":[]}]}", `reading bad: line 2, column 2: a page of spans ({"data": [...]}) inside a page, want a Phoenix span`},
		{"openai agents body in a body", FormatOpenAIAgents, "{\"data\":[\n {\"data\":[]}]}", `reading bad: line 2, column 2: a {"data": [...]} body inside a body, want an OpenAI Agents trace or span`},
		{"langsmith runs in runs", FormatLangSmith, "{\"runs\":[\n {\"runs\":[]}]}", `reading bad: line 2, column 2: a batch of runs ({"runs": [...]} or {"post": [...], "patch": [...]}) inside a batch, want a LangSmith run`},
		{"langsmith batch in a post", FormatLangSmith, "{\"post\":[\n {\"post\":[],\"patch\":[]}]}", `reading bad: line 2, column 2: a batch of runs ({"runs": [...]} or {"post": [...], "patch": [...]}) inside a batch, want a LangSmith run`},
		{"langfuse sessions of a trace and its observation", FormatLangfuse, "{\"trace\":{\"id\":\"t1\",\"sessionId\":\"a\"},\"observations\":[\n{\"id\":\"o\",\"traceId\":\"t1\",\"type\":\"SPAN\",\"sessionId\":\"b\"}]}", `reading bad: line 2, column 1: observation o of trace t1: sessionId "b", but trace t1 (line 1) has sessionId "a"`},
		{"langfuse sessions of two observations", FormatLangfuse, "{\"id\":\"o1\",\"traceId\":\"t1\",\"type\":\"SPAN\",\"sessionId\":\"a\"}\n{\"id\":\"o2\",\"traceId\":\"t1\",\"type\":\"SPAN\",\"sessionId\":\"b\"}", `reading bad: line 2, column 1: observation o2 of trace t1: sessionId "b", but observation o1 of trace t1 (line 1) has sessionId "a"`},
		{"langfuse sessions of an observation and its trace after it", FormatLangfuse, "{\"id\":\"o1\",\"traceId\":\"t1\",\"type\":\"SPAN\",\"sessionId\":\"a\"}\n{\"id\":\"t1\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"sessionId\":\"b\"}", `reading bad: line 2, column 1: trace t1: sessionId "b", but observation o1 of trace t1 (line 1) has sessionId "a"`},
		{"phoenix no trace id", FormatPhoenix, "[\n{\"name\":\"turn\",\"context\":{\"span_id\":\"s1\"},\"span_kind\":\"AGENT\"}]", "reading bad: line 2, column 1: span s1 has no context.trace_id"},
		{"phoenix no span id", FormatPhoenix, `{"id":"x","name":"turn","context":{"trace_id":"t"},"span_kind":"AGENT"}`, "reading bad: line 1, column 1: span x has no context.span_id"},
		{"phoenix not a span", FormatPhoenix, `{"id":"x","name":"turn","run_type":"chain"}`, `reading bad: line 1, column 1: not a Phoenix span: no "span_kind" and no "context"`},
		{"phoenix cycle", FormatPhoenix, "{\"name\":\"a\",\"context\":{\"trace_id\":\"t\",\"span_id\":\"a\"},\"span_kind\":\"TOOL\",\"parent_id\":\"c\"}\n{\"name\":\"b\",\"context\":{\"trace_id\":\"t\",\"span_id\":\"b\"},\"span_kind\":\"TOOL\",\"parent_id\":\"a\"}\n{\"name\":\"c\",\"context\":{\"trace_id\":\"t\",\"span_id\":\"c\"},\"span_kind\":\"TOOL\",\"parent_id\":\"b\"}", "reading bad: line 1: span a of trace t: its parent links form a cycle"},
		{"openai agents unknown object", FormatOpenAIAgents, "{\"object\":\"trace\",\"id\":\"t\"}\n{\"object\":\"response\"}", `reading bad: line 2, column 1: object "response" is neither a trace nor a trace.span`},
		{"openai agents no span id", FormatOpenAIAgents, "{\"object\":\"trace\",\"id\":\"t\"}\n{\"object\":\"trace.span\",\"trace_id\":\"t\",\"span_data\":{\"type\":\"function\",\"name\":\"f\"}}", "reading bad: line 2, column 1: a span of trace t without an id"},
		{"openai agents empty span id", FormatOpenAIAgents, "{\"object\":\"trace\",\"id\":\"t\"}\n{\"object\":\"trace.span\",\"id\":\"\",\"trace_id\":\"t\",\"span_data\":{\"type\":\"function\",\"name\":\"f\"}}", "reading bad: line 2, column 1: a span of trace t without an id"},
		{"tau tool call without name", FormatTau, `{"simulations":[{"id":"s1","messages":[{"role":"assistant","tool_calls":[{"id":"c"}]}]}]}`, "reading bad: line 1, column 40: simulation s1, message 0: a tool call without a name"},
		{"tau2 simulation id twice", FormatTau, "{\"simulations\":[\n{\"id\":\"s1\",\"messages\":[{\"role\":\"user\"}]},\n{\"id\":\"s1\",\"messages\":[{\"role\":\"assistant\"}]}]}", "reading bad: line 3, column 1: simulation s1: a second simulation with this id (the first: line 2, column 1)"},
		{"tau2 simulation id twice, one a line", FormatTau, "{\"id\":\"s1\",\"task_id\":\"1\",\"termination_reason\":\"user_stop\",\"messages\":[]}\n{\"id\":\"s1\",\"task_id\":\"2\",\"termination_reason\":\"user_stop\",\"messages\":[{\"role\":\"user\"}]}", "reading bad: line 2, column 1: simulation s1: a second simulation with this id (the first: line 1, column 1)"},
		{"tau v1 task and trial twice", FormatTau, "[{\"task_id\":0,\"trial\":1,\"traj\":[{\"role\":\"user\"}]},\n {\"task_id\":0,\"trial\":1,\"traj\":[{\"role\":\"assistant\"}]}]", "reading bad: line 2, column 2: task 0 trial 1: a second run of this task and trial (the first: line 1, column 2)"},
		{"tau v1 task twice without trials", FormatTau, "[{\"task_id\":\"a\",\"traj\":[]},{\"task_id\":\"a\",\"trial\":0,\"traj\":[]}]", "reading bad: line 1, column 28: task a trial 0: a second run of this task and trial (the first: line 1, column 2)"},
		{"tau neither", FormatTau, `{"tasks":[]}`, `reading bad: line 1, column 1: neither tau2 results (no "simulations"), a tau2 simulation (no "task_id" and "termination_reason") nor a tau-bench run (no "traj")`},
		{"tau2 folder results alone", FormatTau, `{"timestamp":"t","info":{},"tasks":[]}`, `reading bad: line 1, column 1: tau2 results without "simulations": the results.json of an experiment folder (name the folder, which holds simulations/)`},
		{"xes mismatched", FormatXES, "<log>\n<trace>\n</event>", "reading bad: line 3, column 1: </event> closes nothing open (want </trace>)"},
		{"xes truncated", FormatXES, "<log>\n<trace>\n<event>", "reading bad: line 3, column 8: the input ends inside <event>"},
		{"xes syntax", FormatXES, "<log>\n<trace <", "reading bad: line 2: "},
		{"xes root", FormatXES, "<html></html>", "reading bad: line 1, column 1: the root element is <html>, want <log>"},
		{"xes event outside trace", FormatXES, "<log>\n  <event/>\n</log>", "reading bad: line 2, column 3: <event> outside a <trace>"},
		{"xes event in event", FormatXES, "<log><trace>\n<event><string key=\"concept:name\" value=\"a\"/><event><string key=\"concept:name\" value=\"b\"/></event></event></trace></log>", "reading bad: line 2, column 46: <event> inside <event>"},
		{"xes trace in trace", FormatXES, "<log><trace>\n<trace/></trace></log>", "reading bad: line 2, column 1: <trace> inside <trace>"},
		{"xes key twice in event", FormatXES, "<log><trace><string key=\"concept:name\" value=\"c\"/>\n<event><string key=\"concept:name\" value=\"a\"/><string key=\"concept:name\" value=\"b\"/></event></trace></log>", `reading bad: line 2, column 46: a second attribute with the key "concept:name" in one <event>`},
		{"xes key twice in trace", FormatXES, "<log><trace><string key=\"concept:name\" value=\"c\"/>\n<string key=\"concept:name\" value=\"d\"/></trace></log>", `reading bad: line 2, column 1: a second attribute with the key "concept:name" in one <trace>`},
		{"csv column twice", FormatCSV, "case:concept:name,concept:name,note,note\nc1,a,n1,n2\n", `reading bad: line 1: columns 3 and 4 are both named "note": rename one`},
		{"csv column twice, header after blank lines", FormatCSV, "\n\ncase:concept:name,concept:name,x,x\nc1,a,1,2\n", `reading bad: line 3: columns 3 and 4 are both named "x": rename one`},
		{"csv fields", FormatCSV, "case,activity\n1,2\n3\n", "reading bad: line 3, column 1: wrong number of fields"},
		{"csv quote", FormatCSV, "case,activity\n1,\"2\n", "reading bad: line 2, column 6: extraneous or missing \" in quoted-field"},
		{"csv no columns", FormatCSV, "Ticket;Step;Started\nT-1;open;2024-03-01\n", `reading bad: line 1: no case (case:concept:name, CaseID, Case ID, case_id, ...) and no activity (concept:name, Activity, ...) column among "Ticket", "Step", "Started"; name them with --field session_id=attrs.COLUMN --field node=attrs.COLUMN --field ts=attrs.COLUMN`},
		{"csv no case column", FormatCSV, "Ticket,Activity,Timestamp\nT-1,open,2024-03-01\n", `reading bad: line 1: no case (case:concept:name, CaseID, Case ID, case_id, ...) column among "Ticket", "Activity", "Timestamp"; name them with --field session_id=attrs.COLUMN`},
		{"auto unknown", FormatAuto, "hello\n", "format not recognised"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read([]Input{strInput("bad", tt.input)}, ReadOptions{Format: tt.format})
			if err == nil {
				t.Fatalf("Read succeeded, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestTauToolAnswers checks that a tool call takes the outcome of the first
// answer with its id after it, also when ids repeat.
func TestTauToolAnswers(t *testing.T) {
	in := `[{"task_id": 3, "reward": 1.0, "trial": 1, "traj": [
	 {"role": "system", "content": "policy"},
	 {"role": "user", "content": "hi"},
	 {"role": "assistant", "content": "checking", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "book", "arguments": "{}"}}]},
	 {"role": "tool", "tool_call_id": "call_1", "name": "book", "content": "Error: no seats"},
	 {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "book", "arguments": "{}"}}, {"id": "call_2", "type": "function", "function": {"name": "pay", "arguments": "{}"}}]},
	 {"role": "tool", "tool_call_id": "call_1", "name": "book", "content": "{\"ok\": true}"},
	 {"role": "tool", "tool_call_id": "call_2", "name": "pay", "content": "Error: declined"},
	 {"role": "assistant", "content": "done"}
	]}]`
	lg, err := Read([]Input{strInput("v1.json", in)}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(in))
	want := hex.EncodeToString(sum[:])[:8] + ":3:t1: user_msg/user book/error book/ok pay/error agent_msg/agent"
	if got := strings.Join(sessionLines(lg), "\n"); got != want {
		t.Errorf("sessions:\n%s\nwant:\n%s", got, want)
	}
}

// TestOTLPSpansAcrossInputs checks that the spans of one conversation in
// two files join one session when each file has a span naming it.
func TestOTLPSpansAcrossInputs(t *testing.T) {
	span := func(trace, id, name, conv string, start int) string {
		attrs := `{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.name","value":{"stringValue":"` + name + `"}}`
		if conv != "" {
			attrs += `,{"key":"gen_ai.conversation.id","value":{"stringValue":"` + conv + `"}}`
		}
		return `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"` + trace + `","spanId":"` + id + `","name":"x","startTimeUnixNano":"` + strings.Repeat("1", 10) + strings.Repeat("0", 8) + string(rune('0'+start)) + `","attributes":[` + attrs + `]}]}]}]}` + "\n"
	}
	a := span("t1", "s1", "lookup", "c1", 1) + span("t1", "s3", "refund", "", 3)
	b := span("t2", "s2", "verify", "c1", 2)
	lg, err := Read([]Input{strInput("a.jsonl", a), strInput("b.jsonl", b)}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "c1: execute_tool:lookup/ok execute_tool:verify/ok execute_tool:refund/ok"
	if got := strings.Join(sessionLines(lg), "\n"); got != want {
		t.Errorf("sessions:\n%s\nwant:\n%s", got, want)
	}
}

// TestFormatGzip checks that a gzipped input (.xes.gz) is recognised and
// read like the plain one.
func TestFormatGzip(t *testing.T) {
	for _, tt := range formatFixtures {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(fixturePath(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			zw.Write(data)
			zw.Close()
			plain, err := Read([]Input{strInput(tt.file, string(data))}, fixtureReadOptions(t, tt.fields))
			if err != nil {
				t.Fatal(err)
			}
			zipped, err := Read([]Input{strInput(tt.file+".gz", gz.String())}, fixtureReadOptions(t, tt.fields))
			if err != nil {
				t.Fatal(err)
			}
			if zipped.Files[0].Format != tt.format || zipped.Files[0].SHA256 != plain.Files[0].SHA256 {
				t.Errorf("gzipped: format %s sha256 %s; plain: %s %s", zipped.Files[0].Format, zipped.Files[0].SHA256, tt.format, plain.Files[0].SHA256)
			}
			if a, b := strings.Join(sessionLines(plain), "\n"), strings.Join(sessionLines(zipped), "\n"); a != b {
				t.Errorf("gzipped sessions:\n%s\nplain:\n%s", b, a)
			}
		})
	}
}

// formatNamed is the registered format of name.
func formatNamed(name string) *formats.Format {
	f, err := formats.Pick(name, nil)
	if err != nil {
		panic(err)
	}
	return f
}

// TestSpanParentInOtherFile checks the documented fallback for a span
// whose parent is in another input: each file is folded alone, so the span
// is a root there, and a model call under an agent of the other file is a
// step of its own.
func TestSpanParentInOtherFile(t *testing.T) {
	span := func(id, parent, op, name string) string {
		return `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t1","spanId":"` + id + `","parentSpanId":"` + parent + `","name":"` + name + `","startTimeUnixNano":"17000000000000000` + id[1:] + `","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"` + op + `"}},{"key":"gen_ai.agent.name","value":{"stringValue":"Returns"}},{"key":"gen_ai.conversation.id","value":{"stringValue":"c1"}}]}]}]}]}` + "\n"
	}
	agent := span("s1", "", "invoke_agent", "invoke_agent Returns")
	chat := span("s2", "s1", "chat", "chat gpt-5")
	for _, tt := range []struct {
		name   string
		inputs []Input
		want   string
	}{
		{"one file", []Input{strInput("a.jsonl", agent+chat)}, "c1: invoke_agent:Returns/ok"},
		{"two files", []Input{strInput("a.jsonl", agent), strInput("b.jsonl", chat)}, "c1: invoke_agent:Returns/ok chat:Returns/ok"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lg, err := Read(tt.inputs, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(sessionLines(lg), "\n"); got != tt.want {
				t.Errorf("sessions:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestSpanFormatsMaxLine: the longest line is also the longest item of a
// span format (a line, an array's element), whose importer stops reading it
// about there rather than holding it whole.
func TestSpanFormatsMaxLine(t *testing.T) {
	span := `{"traceId":"t","spanId":"%s","name":"x","startTimeUnixNano":"1","attributes":[{"key":"k","value":{"stringValue":"%s"}}]}`
	line := func(id, val string) string {
		return `{"resourceSpans":[{"scopeSpans":[{"spans":[` + fmt.Sprintf(span, id, val) + `]}]}]}` + "\n"
	}
	in := line("a", "short") + line("b", strings.Repeat("x", 1<<20)) + line("c", "short")
	if _, err := Read([]Input{strInput("big.jsonl", in)}, ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := Read([]Input{strInput("big.jsonl", in)}, ReadOptions{MaxLine: 64 << 10})
	if err == nil || err.Error() != "reading big.jsonl: line 2, column 1: a JSON value over 65536 bytes, the longest line fsmine reads" {
		t.Errorf("with lines of at most 64 KiB: %v, want the second line over the limit", err)
	}
	// The small fixtures of every span format read as before under a
	// limit above their items, their top-level arrays and trailing space
	// included.
	for _, name := range []string{"langfuse.jsonl", "langsmith.json", "openai_agents.jsonl", "otlp.jsonl", "phoenix_spans.json", "phoenix_spans.jsonl"} {
		if _, err := Read([]Input{fixtureInput(name)}, ReadOptions{MaxLine: 4 << 10}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestDetectLongFirstValue: a first value longer than the 64 KiB head (a
// Langfuse trace whose input is a long prompt) is looked into further
// before the input is taken for records; the input's digest is that of its
// bytes either way, and records with a long first line stay records.
func TestDetectLongFirstValue(t *testing.T) {
	data, err := os.ReadFile(fixturePath("langfuse.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(`"input":`))
	if i < 0 {
		t.Fatal(`no "input" in the fixture`)
	}
	long := append(append(append([]byte{}, data[:i]...), `"input":{"message":"`+strings.Repeat("x", 70000)+`"},`...), data[i:]...)
	long = bytes.Replace(long, []byte(`"input":`), []byte(`"prompt":`), 2)
	long = bytes.Replace(long, []byte(`"prompt":{"message"`), []byte(`"input":{"message"`), 1)
	for _, tt := range []struct {
		name   string
		data   []byte
		format string
	}{
		{"langfuse.jsonl", long, formats.FormatLangfuse},
		{"records.jsonl", []byte(`{"session_id":"s","node":"a","attrs":{"x":"` + strings.Repeat("y", 70000) + `"}}` + "\n" + `{"session_id":"s","node":"b"}` + "\n"), formats.FormatJSONL},
	} {
		lg, err := Read([]Input{strInput(tt.name, string(tt.data))}, ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		sum := sha256.Sum256(tt.data)
		if f := lg.Files[0]; f.Format != tt.format || f.SHA256 != hex.EncodeToString(sum[:]) || lg.Skipped != 0 || lg.NumSessions() == 0 {
			t.Errorf("%s: read as %s, digest %s (want %s, %x), %d skipped, %d sessions", tt.name, f.Format, f.SHA256, tt.format, sum, lg.Skipped, lg.NumSessions())
		}
	}
}

// TestJSONImportBadText: a string that is not UTF-8, or holds half a
// UTF-16 surrogate pair, is refused where the JSON decoder would have made
// it U+FFFD and two sessions or nodes one. The span importers skip the
// item it is in, a line or an array's element, as a bad JSONL line is
// skipped (and --strict stops there); tau stops the read at it.
func TestJSONImportBadText(t *testing.T) {
	otlp := func(id, name string) string {
		return `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"01","spanId":"` + id + `","name":"` + name + `","startTimeUnixNano":"1783000000000000000"}]}]}]}` + "\n"
	}
	lf := func(id, session string) string {
		return `{"id":"` + id + `","timestamp":"2026-01-01T00:00:00Z","name":"run","sessionId":"` + session + `","observations":[{"id":"o` + id + `","traceId":"` + id + `","type":"TOOL","name":"lookup","startTime":"2026-01-01T00:00:01Z"}]}` + "\n"
	}
	lfMeta := func(id, meta string) string {
		return `{"id":"` + id + `","timestamp":"2026-01-01T00:00:00Z","name":"run","observations":[{"id":"o` + id + `","traceId":"` + id + `","type":"TOOL","name":"lookup","startTime":"2026-01-01T00:00:01Z","metadata":` + meta + `}]}` + "\n"
	}
	phoenix := func(trace, name string) string {
		return `{"name":"` + name + `","context":{"trace_id":"` + trace + `","span_id":"a"},"span_kind":"TOOL"}` + "\n"
	}
	agents := func(trace, group string) string {
		return `{"object":"trace","id":"` + trace + `","group_id":"` + group + `"}` + "\n" +
			`{"object":"trace.span","id":"s` + trace + `","trace_id":"` + trace + `","parent_id":null,"started_at":"2024-01-01T00:00:00Z","span_data":{"type":"function","name":"lookup"}}` + "\n"
	}
	langsmith := func(id, name string) string {
		return `{"id":"` + id + `","trace_id":"` + id + `","name":"` + name + `","run_type":"tool"}`
	}
	for _, tt := range []struct {
		name, format, input string
		want                string // the sessions read
		bad                 string // the skipped lines, as file:line: reason
	}{
		{"otlp latin-1", FormatOTLP, otlp("a", "cafe") + otlp("b", "caf\xe9") + otlp("c", "caf\xe8"), "01: cafe/ok",
			"in:2: a string holds bytes that are not UTF-8\nin:3: a string holds bytes that are not UTF-8"},
		{"otlp lone surrogate", FormatOTLP, otlp("a", `s\ud83d\ude00`) + otlp("b", `s\ud800`) + otlp("c", `s\udfff`), "01: s\U0001F600/ok",
			"in:2: a string holds \\ud800, half of a UTF-16 surrogate pair\nin:3: a string holds \\udfff, half of a UTF-16 surrogate pair"},
		{"otlp escaped backslash", FormatOTLP, otlp("a", `s\\ud800`), `01: s\ud800/ok`, ""},
		{"langfuse latin-1", FormatLangfuse, lf("t1", "user-a") + lf("t2", "user-\xe9") + lf("t3", "user-c"), "user-a: lookup/ok\nuser-c: lookup/ok",
			"in:2: a string holds bytes that are not UTF-8"},
		{"langfuse lone surrogate", FormatLangfuse, lf("t1", "user-a") + lf("t2", `user-\udfff`), "user-a: lookup/ok",
			`in:2: a string holds \udfff, half of a UTF-16 surrogate pair`},
		{"langfuse observation in a download", FormatLangfuse, lf("t1", "user-a") + "{\"trace\":{\"id\":\"t2\"},\"observations\":[\n{\"id\":\"o\xff\",\"traceId\":\"t2\",\"type\":\"SPAN\"}]}",
			"user-a: lookup/ok", "in:3: a string holds bytes that are not UTF-8"},
		{"langfuse metadata as JSON text", FormatLangfuse, lfMeta("t1", `"{\"thread_id\":\"c-\\\\ud800\"}"`) + lfMeta("t2", `"{\"thread_id\":\"c-\\ud800\"}"`) +
			lfMeta("t3", `{"attributes":"{\"session.id\":\"c-\\udfff\"}"}`) + lfMeta("t4", `"{\"thread_id\":\"c-\u005cud800\"}"`),
			`c-\ud800: lookup/ok`,
			"in:2: metadata holds JSON text with \\ud800, half of a UTF-16 surrogate pair\n" +
				"in:3: metadata holds JSON text with \\udfff, half of a UTF-16 surrogate pair\n" +
				"in:4: metadata holds JSON text with \\ud800, half of a UTF-16 surrogate pair"},
		{"phoenix lone surrogate", FormatPhoenix, phoenix("t1", "lookup") + phoenix("t2", `s\ud800`), "t1: lookup/ok",
			`in:2: a string holds \ud800, half of a UTF-16 surrogate pair`},
		{"openai agents latin-1", FormatOpenAIAgents, agents("t1", "g1") + agents("t2", "g\xe9"), "g1: function:lookup/ok\nt2: function:lookup/ok",
			"in:3: a string holds bytes that are not UTF-8"},
		{"langsmith lone surrogate", FormatLangSmith, "[" + langsmith("a", "lookup") + ",\n" + langsmith("b", `x\udc00`) + "]", "a: lookup/ok",
			`in:2: a string holds \udc00, half of a UTF-16 surrogate pair`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lg, err := Read([]Input{strInput("in", tt.input)}, ReadOptions{Format: tt.format})
			if err != nil {
				t.Fatal(err)
			}
			var bad []string
			for _, b := range lg.Bad {
				bad = append(bad, b.String())
			}
			if got := strings.Join(sessionLines(lg), "\n"); got != tt.want {
				t.Errorf("sessions:\n%s\nwant:\n%s", got, tt.want)
			}
			if got := strings.Join(bad, "\n"); got != tt.bad || lg.Skipped != len(bad) {
				t.Errorf("%d skipped:\n%s\nwant:\n%s", lg.Skipped, got, tt.bad)
			}
			_, err = Read([]Input{strInput("in", tt.input)}, ReadOptions{Format: tt.format, Strict: true})
			if first, _, _ := strings.Cut(tt.bad, "\n"); (err == nil) != (first == "") || err != nil && err.Error() != first {
				t.Errorf("strict: %v, want %q", err, first)
			}
		})
	}
	// A tau2 simulation is a session with its reward: tau stops the read
	// rather than leave one out.
	_, err := Read([]Input{strInput("in", "{\"simulations\":[\n{\"id\":\"s\xe9\",\"messages\":[{\"role\":\"user\"}]}]}")}, ReadOptions{Format: FormatTau})
	if want := "reading in: line 2, column 9: a string holds bytes that are not UTF-8"; err == nil || err.Error() != want {
		t.Errorf("tau2 simulation: error %v, want %s", err, want)
	}
}

// TestOTLPIDCase: OTLP trace and span ids are hex in any case, so spans
// whose ids differ in case only are one trace and linked to their parent;
// the records and the session taken from the trace id carry them in lower
// case. An id that is not hex is taken as written.
func TestOTLPIDCase(t *testing.T) {
	span := func(trace, id, parent, tool string, start int) string {
		return `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"` + trace + `","spanId":"` + id + `","parentSpanId":"` + parent + `","name":"x","startTimeUnixNano":"178300000000000000` + strconv.Itoa(start) + `","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},{"key":"gen_ai.tool.name","value":{"stringValue":"` + tool + `"}}]}]}]}]}` + "\n"
	}
	for _, tt := range []struct {
		name, input, want string
	}{
		{"hex", span("AAAA01", "00A1", "", "lookup", 1) + span("aaaa01", "00a2", "00a1", "refund", 2) + span("AaAa01", "00A3", "00A2", "verify", 3),
			"aaaa01: execute_tool:lookup/ok execute_tool:refund/ok execute_tool:verify/ok"},
		{"not hex", span("T1", "s1", "", "lookup", 1) + span("t1", "s2", "", "refund", 2),
			"T1: execute_tool:lookup/ok\nt1: execute_tool:refund/ok"},
		{"zero parent", span("ab", "a1", "0000000000000000", "lookup", 1) + span("ab", "a2", "a1", "refund", 2),
			"ab: execute_tool:lookup/ok execute_tool:refund/ok"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lg, err := Read([]Input{strInput("in", tt.input)}, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(sessionLines(lg), "\n"); got != tt.want {
				t.Errorf("sessions:\n%s\nwant:\n%s", got, tt.want)
			}
			if len(lg.Warnings) > 0 {
				t.Errorf("warnings %v, want none", lg.Warnings)
			}
		})
	}
	var out bytes.Buffer
	if err := formatNamed("otlp").Convert(strings.NewReader(span("AB01", "CD02", "EF03", "lookup", 1)), &out, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := `"trace_id":"ab01","span_id":"cd02","parent_span_id":"ef03"`; !strings.Contains(out.String(), want) {
		t.Errorf("record %s, want it to hold %s", out.String(), want)
	}
	_, err := Read([]Input{strInput("in", span("ab", "A1", "", "lookup", 1)+span("ab", "a1", "", "refund", 2))}, ReadOptions{})
	if want := "line 2: span a1 of trace ab: a second span with this id (the first: line 1: span A1 of trace ab)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one holding %q", err, want)
	}
}

// TestOTLPSpanLines: the spans of a document on several lines are named
// by their own lines, in errors and in the records' places, as the other
// span formats name theirs; they were all named by the document's first.
func TestOTLPSpanLines(t *testing.T) {
	span := func(id, tool string) string {
		return "      {\"traceId\": \"ab\", \"spanId\": \"" + id + "\", \"name\": \"x\", \"startTimeUnixNano\": \"1783000000000000000\",\n" +
			"       \"attributes\": [{\"key\": \"gen_ai.operation.name\", \"value\": {\"stringValue\": \"execute_tool\"}}, {\"key\": \"gen_ai.tool.name\", \"value\": {\"stringValue\": \"" + tool + "\"}}]}"
	}
	doc := func(spans ...string) string {
		return "{\n  \"resourceSpans\": [\n   {\"scopeSpans\": [\n    {\"spans\": [\n" + strings.Join(spans, ",\n") + "\n    ]}\n   ]}\n  ]\n}\n"
	}
	var out bytes.Buffer
	if err := formatNamed("otlp").Convert(strings.NewReader(doc(span("a1", "lookup"), span("a2", "refund"))), &out, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	for _, w := range []struct {
		line int
		want string
	}{{5, `"span_id":"a1"`}, {7, `"span_id":"a2"`}} {
		if w.line > len(lines) || !strings.Contains(lines[w.line-1], w.want) {
			t.Errorf("output line %d is %q, want the record holding %s:\n%s", w.line, lines[min(w.line, len(lines))-1], w.want, out.String())
		}
	}
	_, err := Read([]Input{strInput("in", doc(span("a1", "lookup"), span("a2", "refund"), span("a1", "verify")))}, ReadOptions{})
	if want := "reading in: line 9: span a1 of trace ab: a second span with this id (the first: line 5: span a1 of trace ab)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	_, err = Read([]Input{strInput("in", doc(span("a1", "lookup"), strings.Replace(span("a2", "refund"), `"traceId": "ab", `, "", 1)))}, ReadOptions{})
	if want := `reading in: line 7, column 7: a span without a traceId ("x")`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}
