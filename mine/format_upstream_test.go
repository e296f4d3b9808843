package mine

// Tests of the importers on files the upstream projects wrote themselves
// (testdata/upstream; its README names the source of each), each of which
// fsmine failed to read before: LangSmith's captured batch-ingest bodies,
// a tau2-bench voice experiment folder and one of its simulation files,
// pm4py's test logs (a placeholder time, an event out of time order,
// lifecycle transitions and classifiers, common CSV column names), and
// spans the OpenAI Agents JS SDK exported with tied start times.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/internal/goldenfile"
)

func upstreamPath(name string) string { return filepath.Join("testdata", "upstream", name) }

// upstreamInput is the input of an upstream fixture: a file, or a folder
// through DirInput.
func upstreamInput(t *testing.T, name string) Input {
	t.Helper()
	p := upstreamPath(name)
	if in, ok, err := DirInput(p, FormatAuto); err != nil || ok {
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	return Input{Name: name, Open: func() (io.ReadCloser, error) { return os.Open(p) }}
}

func TestUpstreamFixtures(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		format string
		opt    ImportOptions
		want   []string
	}{
		// The SDK's captured bodies: one run posted, then patched with
		// its end time by id (Python) or by dotted_order alone (JS).
		{name: "langsmith python batch", file: "langsmith_py_wrap_openai_.json", format: FormatLangSmith, want: []string{
			"d0d84d31-923d-4cb5-94a8-40a0a0087578: ChatOpenAI/ok",
		}},
		{name: "langsmith js batch", file: "langsmith_js_wrap_openai_default.json", format: FormatLangSmith, want: []string{
			"dc34609e-3eeb-459d-bc2a-6fedb01d2e6e: ChatOpenAI/ok",
		}},
		// Every time is a <string> "?": no time, file order.
		{name: "xes placeholder times", file: "partial_order_example.xes", format: FormatXES, want: []string{
			"1.0: S/S a/a b/b c/c d/d",
			"2.0: S/S a/a c/c b/b d/d",
			"3.0: S/S a/a c/c d/d b/b",
			"4.0: S/S c/c a/a b/b d/d",
			"5.0: S/S c/c a/a d/d b/b",
		}},
		// C41 lists make delivery (15:25:47) before confirm payment
		// (15:15:00): by time, as pm4py orders them, by default.
		{name: "xes time order", file: "interval_event_log.xes", format: FormatXES, want: []string{
			"C1: place order/place order send invoice/send invoice pay/pay prepare delivery/prepare delivery make delivery/make delivery confirm payment/confirm payment",
			"C41: place order/place order send invoice/send invoice send reminder/send reminder pay/pay prepare delivery/prepare delivery confirm payment/confirm payment make delivery/make delivery",
		}},
		{name: "xes file order", file: "interval_event_log.xes", format: FormatXES, opt: ImportOptions{Sort: SortFile}, want: []string{
			"C1: place order/place order send invoice/send invoice pay/pay prepare delivery/prepare delivery make delivery/make delivery confirm payment/confirm payment",
			"C41: place order/place order send invoice/send invoice send reminder/send reminder pay/pay prepare delivery/prepare delivery make delivery/make delivery confirm payment/confirm payment",
		}},
		// Start and complete events: every activity twice, unless one
		// transition is kept.
		{name: "xes lifecycle all", file: "reviewing.xes", format: FormatXES, want: []string{
			"1: invite reviewers/start invite reviewers/complete get review 2/complete get review 3/complete get review 1/complete collect reviews/start collect reviews/complete decide/start decide/complete invite additional reviewer/start invite additional reviewer/complete get review X/complete decide/start decide/complete invite additional reviewer/start invite additional reviewer/complete get review X/complete decide/start decide/complete invite additional reviewer/start invite additional reviewer/complete get review X/complete decide/start decide/complete reject/start reject/complete",
		}},
		{name: "xes lifecycle complete", file: "reviewing.xes", format: FormatXES, opt: ImportOptions{Lifecycle: LifecycleComplete}, want: []string{
			"1: invite reviewers/complete get review 2/complete get review 3/complete get review 1/complete collect reviews/complete decide/complete invite additional reviewer/complete get review X/complete decide/complete invite additional reviewer/complete get review X/complete decide/complete invite additional reviewer/complete get review X/complete decide/complete reject/complete",
		}},
		{name: "xes lifecycle start", file: "reviewing.xes", format: FormatXES, opt: ImportOptions{Lifecycle: LifecycleStart}, want: []string{
			"1: invite reviewers/start collect reviews/start decide/start invite additional reviewer/start decide/start invite additional reviewer/start decide/start invite additional reviewer/start decide/start reject/start",
		}},
		{name: "xes classifier", file: "reviewing.xes", format: FormatXES, opt: ImportOptions{Lifecycle: LifecycleComplete, Classifier: "MXML Legacy Classifier"}, want: []string{
			"1: invite reviewers+complete/complete get review 2+complete/complete get review 3+complete/complete get review 1+complete/complete collect reviews+complete/complete decide+complete/complete invite additional reviewer+complete/complete get review X+complete/complete decide+complete/complete invite additional reviewer+complete/complete get review X+complete/complete decide+complete/complete invite additional reviewer+complete/complete get review X+complete/complete decide+complete/complete reject+complete/complete",
		}},
		{name: "xes classifier resource", file: "reviewing.xes", format: FormatXES, opt: ImportOptions{Lifecycle: LifecycleComplete, Classifier: "Resource"}, want: []string{
			"1: Mike/complete Carol/complete Pam/complete John/complete Anne/complete Wil/complete Anne/complete Pam/complete Wil/complete Mike/complete Mary/complete Wil/complete Mike/complete Sara/complete Wil/complete Anne/complete",
		}},
		// The JS SDK's millisecond times: a handoff and the next agent,
		// a tool call and the next turn, start together.
		{name: "openai agents tied starts", file: "openai_agents_js.jsonl", format: FormatOpenAIAgents, opt: ImportOptions{KeepSpans: true}, want: []string{
			"conv-10: custom:task/ok agent:Triage/ok custom:turn/ok function:lookup_order/ok custom:turn/ok handoff:Refunds/ok agent:Refunds/ok custom:turn/ok function:issue_refund/error custom:turn/ok",
			"conv-13: custom:task/ok agent:Triage/ok custom:turn/ok function:lookup_order/ok custom:turn/ok handoff:Refunds/ok agent:Refunds/ok custom:turn/ok function:issue_refund/ok custom:turn/ok",
		}},
		// By default the SDK's custom task and turn spans are wrappers.
		{name: "openai agents folded", file: "openai_agents_js.jsonl", format: FormatOpenAIAgents, want: []string{
			"conv-10: agent:Triage/ok function:lookup_order/ok handoff:Refunds/ok agent:Refunds/ok function:issue_refund/error",
			"conv-13: agent:Triage/ok function:lookup_order/ok handoff:Refunds/ok agent:Refunds/ok function:issue_refund/ok",
		}},
		// Langfuse's framework traces, as its UI downloads them: the
		// steps a person names, the LLM calls and wrappers folded, no ids.
		// LangGraph: the graph nodes (langgraph_node), the model call and
		// routing inside them left out; the thread_id is the session.
		{name: "langfuse langgraph", file: "langfuse-langgraph-2025-08-22.json", format: FormatLangfuse, want: []string{
			"demo-thread-1: agent/ok tools/ok agent/ok",
		}},
		// Google ADK: the invocation wrapper folded, the agent named from
		// "agent_run [hello_agent]", the tool from gen_ai.tool.name.
		{name: "langfuse google adk", file: "langfuse-google-adk-2025-08-28.json", format: FormatLangfuse, want: []string{
			"demo-session: hello_agent/ok say_hello/ok",
		}},
		// OpenAI Agents through OpenInference: the workflow root (an AGENT
		// naming no agent) folded, the agent named by graph.node.id.
		{name: "langfuse openai agents", file: "langfuse-openai-agents-2025-09-30.json", format: FormatLangfuse, want: []string{
			"fee618f96dc31e0ca38b2f7b26eb8b29: Hello world/ok get_weather/ok",
		}},
		// pydantic-ai: agents by gen_ai.agent.name, tools by
		// gen_ai.tool.name, "running 3 tools" folded.
		{name: "langfuse pydantic-ai", file: "langfuse-pydantic-ai-tools-2025-12-04.json", format: FormatLangfuse, want: []string{
			"7a38edd8123db47ad8dcb8aa4c5e3926: joke_agent/ok get_pun_suggestion/ok get_dad_joke_suggestion/ok get_one_liner_suggestion/ok joke_agent/ok evaluator_agent/ok",
		}},
		// Microsoft Agent Framework: gen_ai.agent.name is a UUID, so the
		// span name without it; the session is gen_ai.conversation.id.
		{name: "langfuse microsoft agent", file: "langfuse-microsoft-agent-2025-10-14.json", format: FormatLangfuse, want: []string{
			"thread_G78qCSLpzn0YQwFwrvK5OivI: invoke_agent/ok get_weather/ok",
		}},
		// Koog: create_agent folded, "run.<uuid>" without its id, the
		// graph nodes from langgraph_node, __start__ and __finish__ left out.
		{name: "langfuse koog", file: "langfuse-koog-2025-08-26.json", format: FormatLangfuse, want: []string{
			"6f8d2449-33ed-4c7c-82e7-5410e34ee4e6: run/ok nodeCallLLM/ok nodeExecuteTool/ok ByeTool/ok HelloTool/ok nodeSendToolResult/ok",
		}},
		{name: "langfuse koog keep spans", file: "langfuse-koog-2025-08-26.json", format: FormatLangfuse, opt: ImportOptions{KeepSpans: true}, want: []string{
			"6f8d2449-33ed-4c7c-82e7-5410e34ee4e6: agent/ok run/ok node.__start__/ok nodeCallLLM/ok llm.chat/ok nodeExecuteTool/ok ByeTool/ok HelloTool/ok nodeSendToolResult/ok llm.chat/ok node.__finish__/ok",
		}},
		// A voice experiment folder: turns start where a side starts to
		// speak.
		{name: "tau2 voice folder", file: "tau2_voice_experiment", format: FormatTau, want: []string{
			"49b22f0c-4a56-41c5-922f-bc2a56e53a23: user_msg/user agent_msg/agent",
			"cd9c5ed2-9751-4c86-8dac-8a895a332e41: agent_msg/agent user_msg/user agent_msg/agent",
		}},
		{name: "tau2 simulation file", file: "tau2_voice_experiment/simulations/49b22f0c-4a56-41c5-922f-bc2a56e53a23.json", format: FormatTau, want: []string{
			"49b22f0c-4a56-41c5-922f-bc2a56e53a23: user_msg/user agent_msg/agent",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lg, err := Read([]Input{upstreamInput(t, tt.file)}, ReadOptions{Import: tt.opt})
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if got := lg.Files[0].Format; got != tt.format {
				t.Errorf("format %s, want %s", got, tt.format)
			}
			if lg.Skipped != 0 {
				t.Errorf("%d skipped: %v", lg.Skipped, lg.Bad)
			}
			if got := sessionLines(lg); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("sessions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestUpstreamGolden converts each single-file upstream fixture and
// compares the records with NAME.golden (refresh with go test ./mine -run
// TestUpstreamGolden -update): the LangSmith runs carry the end time their
// patch brought as duration_ms.
func TestUpstreamGolden(t *testing.T) {
	for _, tt := range []struct{ file, format string }{
		{"langsmith_py_wrap_openai_.json", FormatLangSmith},
		{"langsmith_js_wrap_openai_default.json", FormatLangSmith},
		{"partial_order_example.xes", FormatXES},
		{"interval_event_log.xes", FormatXES},
		{"running-example-transformed.csv", FormatCSV},
		{"openai_agents_js.jsonl", FormatOpenAIAgents},
		{"langfuse-langgraph-2025-08-22.json", FormatLangfuse},
		{"langfuse-koog-2025-08-26.json", FormatLangfuse},
	} {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(upstreamPath(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := formatNamed(tt.format).Convert(bytes.NewReader(data), &got, ImportOptions{}); err != nil {
				t.Fatalf("Convert: %v", err)
			}
			golden := upstreamPath(tt.file + ".golden")
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

// TestCSVColumnNames checks that pm4py's running example reads the same
// with pm4py's columns and with the common names of its transformed copy
// (Activity, Timestamp, CaseID).
func TestCSVColumnNames(t *testing.T) {
	read := func(name string) []string {
		lg, err := Read([]Input{upstreamInput(t, name)}, ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(lg.Sessions) != 6 || lg.Records != 42 {
			t.Errorf("%s: %d sessions, %d records; want 6 and 42", name, len(lg.Sessions), lg.Records)
		}
		return sessionLines(lg)
	}
	pm4py, common := read("running-example.csv"), read("running-example-transformed.csv")
	// The events of pm4py's columns are the activities too: compare the
	// nodes only.
	nodes := func(lines []string) string {
		var b strings.Builder
		for _, l := range lines {
			for _, f := range strings.Fields(l) {
				node, _, _ := strings.Cut(f, "/")
				b.WriteString(node + " ")
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	if a, b := nodes(pm4py), nodes(common); a != b {
		t.Errorf("common column names:\n%s\npm4py's:\n%s", b, a)
	}
}

// TestTauDirSimulationTwice checks that a tau2 experiment folder that
// holds one simulation id twice, in two simulation files or in
// results.json and a simulation file, is an error naming both places,
// where the two runs were read as one session, their turns interleaved.
func TestTauDirSimulationTwice(t *testing.T) {
	sim := func(id, role string) string {
		return `{"id": "` + id + `", "task_id": "1", "termination_reason": "user_stop", "messages": [{"role": "` + role + `", "content": "hi"}]}`
	}
	tests := []struct {
		name    string
		results string
		sims    map[string]string
		want    string // with {dir} for the folder
	}{
		{
			name:    "each once",
			results: `{"info": {}, "tasks": []}`,
			sims:    map[string]string{"s1.json": sim("s1", "user"), "s2.json": sim("s2", "assistant")},
		},
		{
			name:    "two files",
			results: `{"info": {}, "tasks": []}`,
			sims:    map[string]string{"a.json": sim("s1", "user"), "b.json": "\n" + sim("s1", "assistant")},
			want:    "reading {dir}: {dir}/simulations/b.json: line 2, column 1: simulation s1: a second simulation with this id (the first: {dir}/simulations/a.json: line 1, column 1)",
		},
		{
			name:    "results and a file",
			results: "{\"info\": {}, \"tasks\": [], \"simulations\": [\n" + sim("s1", "user") + "]}",
			sims:    map[string]string{"s1.json": sim("s1", "assistant")},
			want:    "reading {dir}: {dir}/simulations/s1.json: line 1, column 1: simulation s1: a second simulation with this id (the first: {dir}/results.json: line 2, column 1)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "exp")
			if err := os.MkdirAll(filepath.Join(dir, "simulations"), 0o755); err != nil {
				t.Fatal(err)
			}
			files := map[string]string{"results.json": tt.results}
			for name, text := range tt.sims {
				files[filepath.Join("simulations", name)] = text
			}
			for name, text := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			in, ok, err := DirInput(dir, FormatAuto)
			if err != nil || !ok {
				t.Fatalf("DirInput = %v, %v", ok, err)
			}
			lg, err := Read([]Input{in}, ReadOptions{})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got, want := strings.Join(sessionLines(lg), "\n"), "s1: user_msg/user\ns2: agent_msg/agent"; got != want {
					t.Errorf("sessions:\n%s\nwant:\n%s", got, want)
				}
				return
			}
			want := strings.ReplaceAll(filepath.FromSlash(tt.want), "{dir}", dir)
			if err == nil {
				t.Fatalf("Read succeeded, want %q", want)
			}
			if got := err.Error(); got != want {
				t.Errorf("error %q, want %q", got, want)
			}
		})
	}
}

// TestUpstreamBadInput checks that bad items are skipped and reported
// with their file and position, and that a strict read stops at the first.
func TestUpstreamBadInput(t *testing.T) {
	// A folder whose index names a simulation without its file.
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	if err := os.MkdirAll(filepath.Join(exp, "simulations"), 0o755); err != nil {
		t.Fatal(err)
	}
	results := `{
  "info": {"agent_info": {"llm": "m"}, "user_info": {}, "environment_info": {"domain_name": "retail"}},
  "tasks": [],
  "simulation_index": [
    {"id": "s1", "task_id": "1", "trial": 0},
    {"id": "s2", "task_id": "2", "trial": 0}
  ]
}
`
	sim := `{"id": "s1", "task_id": "1", "termination_reason": "user_stop", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}`
	for name, text := range map[string]string{"results.json": results, "simulations/s1.json": sim} {
		if err := os.WriteFile(filepath.Join(exp, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	folder, ok, err := DirInput(exp, FormatAuto)
	if err != nil || !ok {
		t.Fatalf("DirInput = %v, %v", ok, err)
	}
	// A folder with a simulation of no messages.
	quiet := filepath.Join(dir, "quiet")
	if err := os.MkdirAll(filepath.Join(quiet, "simulations"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"results.json":        `{"info": {}, "tasks": []}`,
		"simulations/s0.json": "{\n\"id\": \"s0\", \"task_id\": \"1\", \"termination_reason\": \"max_steps\", \"messages\": []}",
		"simulations/s1.json": sim,
	} {
		if err := os.WriteFile(filepath.Join(quiet, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	quietFolder, ok, err := DirInput(quiet, FormatAuto)
	if err != nil || !ok {
		t.Fatalf("DirInput = %v, %v", ok, err)
	}

	tests := []struct {
		name     string
		in       Input
		opt      ReadOptions
		sessions []string
		bad      string // the first bad item, as file:line: reason
	}{
		{
			name: "langsmith patch of a run never posted",
			in: strInput("batch.json", `{"post": [
  {"id": "r1", "name": "agent", "run_type": "chain", "trace_id": "r1", "dotted_order": "20240101T000000000000Zr1", "start_time": "2024-01-01T00:00:00Z"}
], "patch": [
  {"id": "r1", "trace_id": "r1", "end_time": "2024-01-01T00:00:01Z"},
  {"id": "r9", "trace_id": "r9", "end_time": "2024-01-01T00:00:02Z"}
]}`),
			sessions: []string{"r1: agent/ok"},
			bad:      "batch.json:5: a patch of run r9, which no post creates",
		},
		{
			name:     "tau2 folder with a missing simulation file",
			in:       folder,
			sessions: []string{"s1: user_msg/user agent_msg/agent"},
			bad:      filepath.Join(exp, "results.json") + ":6: simulation s2: " + filepath.Join("simulations", "s2.json") + " is missing",
		},
		{
			name:     "tau2 folder with a simulation of no messages",
			in:       quietFolder,
			sessions: []string{"s1: user_msg/user agent_msg/agent"},
			bad:      filepath.Join(quiet, "simulations", "s0.json") + ":1: simulation s0: no messages",
		},
		{
			name: "tau2 simulation with messages null",
			in: strInput("null.json", `{"simulations": [
  {"id": "s0", "task_id": "1", "termination_reason": "max_steps", "reward_info": {"reward": 0.0}, "messages": null},
  {"id": "s1", "task_id": "1", "termination_reason": "user_stop", "messages": [{"role": "user", "content": "hi"}]}
]}`),
			sessions: []string{"s1: user_msg/user"},
			bad:      "null.json:2: simulation s0: no messages",
		},
		{
			name: "tau2 simulation with messages empty",
			in: strInput("empty.json", `{"simulations": [
  {"id": "s1", "task_id": "1", "termination_reason": "user_stop", "messages": [{"role": "user", "content": "hi"}]},
  {"id": "s0", "task_id": "1", "termination_reason": "max_steps", "messages": []}
]}`),
			sessions: []string{"s1: user_msg/user"},
			bad:      "empty.json:3: simulation s0: no messages",
		},
		{
			name: "tau2 simulation without messages",
			in: strInput("none.json", `{"simulations": [
  {"id": "s0", "task_id": "1", "termination_reason": "max_steps"},
  {"id": "s1", "task_id": "1", "termination_reason": "user_stop", "messages": [{"role": "user", "content": "hi"}]}
]}`),
			sessions: []string{"s1: user_msg/user"},
			bad:      "none.json:2: simulation s0: no messages",
		},
		{
			name: "tau2 simulation of system messages only",
			in: strInput("sys.json", `{"simulations": [
  {"id": "s0", "task_id": "1", "termination_reason": "too_many_errors", "messages": [{"role": "system", "content": "policy"}]},
  {"id": "s1", "task_id": "1", "termination_reason": "user_stop", "messages": [{"role": "user", "content": "hi"}]}
]}`),
			sessions: []string{"s1: user_msg/user"},
			bad:      "sys.json:2: simulation s0: no user, assistant or tool-call message",
		},
		{
			name: "xes event without a name",
			in: strInput("log.xes", `<log>
  <trace><string key="concept:name" value="c1"/>
    <event><string key="concept:name" value="a"/></event>
    <event><string key="org:resource" value="Pete"/></event>
    <event><string key="concept:name" value="b"/></event>
  </trace>
</log>`),
			sessions: []string{"c1: a/a b/b"},
			bad:      "log.xes:4: missing node",
		},
		{
			// A line may hold many events: each is named by its own.
			name: "xes events on one line",
			in: strInput("one.xes", `<log><trace><string key="concept:name" value="c1"/><event><string key="concept:name" value="a"/></event><event><string key="concept:name" value="b"/></event><event><string key="concept:name" value="c"/></event></trace>
<trace><string key="concept:name" value="c2"/><event><string key="org:resource" value="Pete"/></event><event><string key="concept:name" value="d"/></event></trace>
</log>`),
			sessions: []string{"c1: a/a b/b c/c", "c2: d/d"},
			bad:      "one.xes:2: missing node",
		},
		{
			// Latin-1 "café" and "cafè" would both be "caf\ufffd".
			name: "csv not in UTF-8",
			in: strInput("latin1.csv", "case,activity,timestamp\n"+
				"c1,open,2024-01-01T00:00:00Z\n"+
				"c1,caf\xe9,2024-01-01T00:00:01Z\n"+
				"c1,close,2024-01-01T00:00:02Z\n"),
			sessions: []string{"c1: open/open close/close"},
			bad:      "latin1.csv:3: node is not valid UTF-8",
		},
		{
			// A label rule's capture of another field's bytes.
			name: "label captured from a field not in UTF-8",
			in: strInput("who.csv", "case,activity,timestamp,resource\n"+
				"c1,open,2024-01-01T00:00:00Z,Ann\n"+
				"c1,open,2024-01-01T00:00:01Z,Jos\xe9\n"),
			opt:      ReadOptions{Rules: mustRules(`{"rules":[{"match":{"attrs.resource":"^(.*)$"},"state":"by_$1"}]}`)},
			sessions: []string{"c1: by_Ann/open"},
			bad:      `who.csv:3: label rules give node "open" the state "by_Jos\xe9", which is not valid UTF-8`,
		},
		{
			name: "jsonl not in UTF-8",
			in: strInput("bytes.jsonl", `{"session_id":"s","step":0,"node":"a"}
{"session_id":"s","step":1,"node":"caf`+"\xe8"+`"}
{"session_id":"s","step":2,"node":"b"}
`),
			sessions: []string{"s: a/ b/"},
			bad:      "bytes.jsonl:2: node is not valid UTF-8",
		},
		{
			name: "xes event without a classifier key",
			in: strInput("cls.xes", `<log>
  <classifier name="Who" keys="org:resource"/>
  <trace><string key="concept:name" value="c1"/>
    <event><string key="concept:name" value="a"/><string key="org:resource" value="Pete"/></event>
    <event><string key="concept:name" value="b"/></event>
  </trace>
</log>`),
			opt:      ReadOptions{Import: ImportOptions{Classifier: "Who"}},
			sessions: []string{"c1: Pete/a"},
			bad:      "cls.xes:5: missing node",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lg, err := Read([]Input{tt.in}, tt.opt)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if got := sessionLines(lg); strings.Join(got, "\n") != strings.Join(tt.sessions, "\n") {
				t.Errorf("sessions %q, want %q", got, tt.sessions)
			}
			if lg.Skipped != 1 || len(lg.Bad) != 1 || lg.Bad[0].String() != tt.bad {
				t.Errorf("skipped %d %v, want 1 [%s]", lg.Skipped, lg.Bad, tt.bad)
			}
			if lg.Files[0].Skipped != 1 {
				t.Errorf("file skipped %d, want 1", lg.Files[0].Skipped)
			}
			strict := tt.opt
			strict.Strict = true
			_, err = Read([]Input{tt.in}, strict)
			var le *LineError
			if !errors.As(err, &le) || le.Error() != tt.bad {
				t.Errorf("strict read: %v, want %s", err, tt.bad)
			}
		})
	}
}

// TestXESLifecycleLeftOut checks that the events --lifecycle leaves out
// are counted, not skipped.
func TestXESLifecycleLeftOut(t *testing.T) {
	lg, err := Read([]Input{upstreamInput(t, "reviewing.xes")}, ReadOptions{Strict: true, Import: ImportOptions{Lifecycle: LifecycleComplete}})
	if err != nil {
		t.Fatal(err)
	}
	if lg.LeftOut != 10 || lg.Skipped != 0 || lg.Records != 16 {
		t.Errorf("left out %d, skipped %d, records %d; want 10, 0, 16", lg.LeftOut, lg.Skipped, lg.Records)
	}
}

func TestImportOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		opt  ImportOptions
		want string
	}{
		{"sort", ImportOptions{Sort: "size"}, `sort order "size": want time or file`},
		{"lifecycle", ImportOptions{Lifecycle: "resume"}, `lifecycle "resume": want complete, start or all`},
		{"classifier", ImportOptions{Classifier: "Nope"}, `reading reviewing.xes: line 22, column 3: no classifier "Nope": the log declares "MXML Legacy Classifier", "Event Name", "Resource"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read([]Input{upstreamInput(t, "reviewing.xes")}, ReadOptions{Import: tt.opt})
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %s", err, tt.want)
			}
		})
	}
}

// TestProgressReachesSize checks that the progress of a read counts the
// bytes as stored and ends at the input's size, also for an input that an
// importer converts into fewer bytes of records.
func TestProgressReachesSize(t *testing.T) {
	defer func(n int) { chunkSize = n }(chunkSize)
	chunkSize = 1 << 10
	for _, name := range []string{"reviewing.xes", "tau2_voice_experiment"} {
		t.Run(name, func(t *testing.T) {
			var size int64
			err := filepath.Walk(upstreamPath(name), func(_ string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode().IsRegular() {
					size += fi.Size()
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			var calls []int64
			_, err = Read([]Input{upstreamInput(t, name)}, ReadOptions{Progress: func(_ string, n int64) { calls = append(calls, n) }})
			if err != nil {
				t.Fatal(err)
			}
			if len(calls) == 0 || calls[len(calls)-1] != size {
				t.Fatalf("progress %v, want it to end at %d", calls, size)
			}
			for i := 1; i < len(calls); i++ {
				if calls[i] < calls[i-1] {
					t.Errorf("progress goes back: %v", calls)
				}
			}
		})
	}
}

// TestLangSmithPatchBeforePost checks that a patch merges into its run
// whatever the order of the bodies in the file.
func TestLangSmithPatchBeforePost(t *testing.T) {
	in := `{"patch": [{"id": "r1", "trace_id": "r1", "end_time": "2024-01-01T00:00:01Z", "error": "boom"}]}
{"post": [{"id": "r1", "name": "agent", "run_type": "chain", "trace_id": "r1", "start_time": "2024-01-01T00:00:00Z"}]}
`
	var out bytes.Buffer
	if err := formatNamed("langsmith").Convert(strings.NewReader(in), &out, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	// The run's record is on the line of its post (see writeAt).
	want := "\n" + `{"session_id":"r1","node":"agent","ts":"2024-01-01T00:00:00Z","duration_ms":1000,"event":"error","attrs":{"run_id":"r1","name":"agent","run_type":"chain","trace_id":"r1","error":"boom"}}` + "\n"
	if out.String() != want {
		t.Errorf("records:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestOpenAIAgentsSpanCycle checks that spans whose parents form a cycle
// stop the read, naming a span on the cycle, as in every span-tree format
// (they were written after the others, without a word, before).
func TestOpenAIAgentsSpanCycle(t *testing.T) {
	in := `{"object":"trace.span","id":"a","trace_id":"t","parent_id":"b","started_at":"2024-01-01T00:00:00Z","span_data":{"type":"agent","name":"A"}}
{"object":"trace.span","id":"b","trace_id":"t","parent_id":"a","started_at":"2024-01-01T00:00:00Z","span_data":{"type":"agent","name":"B"}}
{"object":"trace.span","id":"c","trace_id":"t","parent_id":null,"started_at":"2024-01-01T00:00:00Z","span_data":{"type":"agent","name":"C"}}
`
	_, err := Read([]Input{strInput("cycle.jsonl", in)}, ReadOptions{})
	want := "reading cycle.jsonl: line 1: span a of trace t: its parent links form a cycle"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestOpenAIAgentsTraceTwice checks that a trace given twice alike (an
// exporter's retry) is read once, and one given again with another
// group_id stops the read naming both lines: the last one was kept
// without a word, moving the trace's spans to its conversation.
func TestOpenAIAgentsTraceTwice(t *testing.T) {
	trace := `{"object":"trace","id":"tr1","workflow_name":"w","group_id":"conv-A"}` + "\n"
	span := `{"object":"trace.span","id":"s1","trace_id":"tr1","parent_id":null,"started_at":"2026-01-01T00:00:00Z","ended_at":"2026-01-01T00:00:01Z","span_data":{"type":"function","name":"lookup"},"error":null}` + "\n"
	lg, err := Read([]Input{strInput("again.jsonl", trace+span+trace)}, ReadOptions{})
	if err != nil {
		t.Fatalf("a trace given again alike: %v", err)
	}
	if got, want := strings.Join(sessionLines(lg), "\n"), "conv-A: function:lookup/ok"; got != want {
		t.Errorf("sessions %q, want %q", got, want)
	}
	other := strings.Replace(trace, "conv-A", "conv-B", 1)
	_, err = Read([]Input{strInput("dup.jsonl", trace+span+other)}, ReadOptions{})
	want := `reading dup.jsonl: line 3, column 1: trace tr1: a second trace with this id, of group_id "conv-B" and workflow_name "w" (the first: line 1, of group_id "conv-A" and workflow_name "w")`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestCSVNoColumnsWithField checks that the error for a CSV without known
// columns asks only for the --field flags not given.
func TestCSVNoColumnsWithField(t *testing.T) {
	_, err := Read([]Input{strInput("t.csv", "Ticket,Step\nT-1,open\n")}, ReadOptions{Fields: map[string]string{FieldSession: "attrs.Ticket"}})
	want := `reading t.csv: line 1: no activity (concept:name, Activity, ...) column among "Ticket", "Step"; name them with --field node=attrs.COLUMN --field ts=attrs.COLUMN`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	lg, err := Read([]Input{strInput("t.csv", "Ticket,Step\nT-1,open\n")}, ReadOptions{Fields: map[string]string{FieldSession: "attrs.Ticket", FieldNode: "attrs.Step"}})
	if err != nil {
		t.Fatalf("with both fields: %v", err)
	}
	if len(lg.Sessions) != 1 {
		t.Errorf("with both fields: %d sessions, want 1", len(lg.Sessions))
	}
}

// TestCSVLineEnds checks that a CSV file is read whether its lines end in
// LF, CR LF or, as classic Mac OS wrote them, CR alone, with the file's
// line numbers in messages.
func TestCSVLineEnds(t *testing.T) {
	tests := []struct {
		name, eol string
	}{
		{"lf", "\n"},
		{"crlf", "\r\n"},
		{"cr", "\r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := []string{"case,activity,note", "c1,a,x", `c1,b,"two` + tt.eol + `lines"`, "c2,a,", "c2,c,y", ""}
			in := strings.Join(rows, tt.eol)
			lg, err := Read([]Input{strInput("log.csv", in)}, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"c1: a/a b/b", "c2: a/a c/c"}
			if got := sessionLines(lg); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("sessions %q, want %q", got, want)
			}
			// The row after the two-line cell starts on line 5.
			bad := strings.Replace(in, "c2,a,", "c2", 1)
			_, err = Read([]Input{strInput("bad.csv", bad)}, ReadOptions{Format: FormatCSV})
			if want := "reading bad.csv: line 5, column 1: wrong number of fields"; err == nil || err.Error() != want {
				t.Errorf("error %v, want %s", err, want)
			}
		})
	}
}

// TestLangfuseObservationList reads the observations of a Langfuse
// download on their own, as a JSON array (the UI's log view copies them
// so): the same steps, the session from their metadata.
func TestLangfuseObservationList(t *testing.T) {
	data, err := os.ReadFile(upstreamPath("langfuse-langgraph-2025-08-22.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dl struct {
		Observations json.RawMessage `json:"observations"`
	}
	if err := json.Unmarshal(data, &dl); err != nil {
		t.Fatal(err)
	}
	lg, err := Read([]Input{strInput("observations.json", string(dl.Observations))}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := lg.Files[0].Format; got != FormatLangfuse {
		t.Errorf("format %s, want %s", got, FormatLangfuse)
	}
	want := "demo-thread-1: agent/ok tools/ok agent/ok"
	if got := strings.Join(sessionLines(lg), "\n"); got != want {
		t.Errorf("sessions:\n%s\nwant:\n%s", got, want)
	}
}

// TestLangfuseV2Observations reads a page of the v2 observations API (GET
// /api/public/v2/observations, its default field groups core and basic),
// which returns no traces: the session is the one the observations carry,
// not each trace's id. The page is written by hand from the API's
// definition (langfuse/langfuse@62751446149b702b419a9292ddfc2280cdf74b8c:
// fern/apis/server/definition/commons.yml ObservationV2, observations.yml
// ObservationsV2Response).
func TestLangfuseV2Observations(t *testing.T) {
	in := `{"data":[
{"id":"o1","traceId":"t1","startTime":"2026-08-01T10:00:00.000Z","endTime":"2026-08-01T10:00:01.000Z","projectId":"p1","parentObservationId":null,"type":"TOOL","isRootObservation":true,"name":"lookup_order","level":"DEFAULT","statusMessage":null,"version":null,"environment":"default","bookmarked":false,"public":false,"userId":"u1","sessionId":"chat-42"},
{"id":"o2","traceId":"t2","startTime":"2026-08-01T10:01:00.000Z","endTime":"2026-08-01T10:01:01.000Z","projectId":"p1","parentObservationId":null,"type":"TOOL","isRootObservation":true,"name":"issue_refund","level":"DEFAULT","statusMessage":null,"version":null,"environment":"default","bookmarked":false,"public":false,"userId":"u1","sessionId":"chat-42"},
{"id":"o3","traceId":"t2","startTime":"2026-08-01T10:01:02.000Z","endTime":"2026-08-01T10:01:03.000Z","projectId":"p1","parentObservationId":null,"type":"TOOL","isRootObservation":true,"name":"notify","level":"DEFAULT","statusMessage":null,"version":null,"environment":"default","bookmarked":false,"public":false,"userId":"u1","sessionId":null}
],"meta":{"cursor":null}}`
	lg, err := Read([]Input{strInput("v2.json", in)}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := lg.Files[0].Format; got != FormatLangfuse {
		t.Errorf("format %s, want %s", got, FormatLangfuse)
	}
	// o3 carries no session: it takes its trace's, from o2.
	want := "chat-42: lookup_order/ok issue_refund/ok notify/ok"
	if got := strings.Join(sessionLines(lg), "\n"); got != want {
		t.Errorf("sessions:\n%s\nwant:\n%s", got, want)
	}
}

// TestSpanAttrsByPath checks that the OpenTelemetry and OpenInference
// attributes Phoenix and Langfuse records carry are reached by a dotted
// path, as OTLP's are: they were written as flat keys ("tool.name"), which
// no path reaches, so --field and label rules missed them.
func TestSpanAttrsByPath(t *testing.T) {
	tests := []struct {
		name, in string
		fields   []string
		want     string
	}{
		{
			name:   "phoenix tool.name",
			in:     `{"name":"call","context":{"trace_id":"t","span_id":"s"},"span_kind":"TOOL","start_time":"2026-01-01T00:00:00Z","attributes":{"tool.name":"lookup","session.id":"c"}}`,
			fields: []string{"node=attrs.tool.name"},
			want:   "c: lookup/ok",
		},
		{
			name:   "phoenix graph.node.id and llm.model_name",
			in:     `{"name":"n","context":{"trace_id":"t","span_id":"s"},"span_kind":"LLM","start_time":"2026-01-01T00:00:00Z","attributes":{"graph":{"node":{"id":"plan"}},"llm.model_name":"m1"}}`,
			fields: []string{"node=attrs.graph.node.id", "session_id=attrs.llm.model_name"},
			want:   "m1: plan/ok",
		},
		{
			name:   "langfuse gen_ai and openinference",
			in:     `{"id":"t1","sessionId":"s1","observations":[{"id":"o1","traceId":"t1","type":"SPAN","name":"x","startTime":"2026-01-01T00:00:01Z","metadata":{"attributes":{"gen_ai.operation.name":"execute_tool","gen_ai.tool.name":"lookup","openinference.span.kind":"TOOL"}}}]}`,
			fields: []string{"node=attrs.gen_ai.tool.name", "event=attrs.openinference.span.kind"},
			want:   "s1: lookup/TOOL",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields, err := ParseFieldMap(tt.fields)
			if err != nil {
				t.Fatal(err)
			}
			lg, err := Read([]Input{strInput("spans.json", tt.in)}, ReadOptions{Fields: fields, Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(sessionLines(lg), "\n"); got != tt.want {
				t.Errorf("sessions %q, want %q", got, tt.want)
			}
		})
	}
}

// TestXESCaseInSeveralTraces: a case whose events come in two traces of one
// file goes on where its first trace stopped, in either sort order; before,
// the second trace's steps started again at 0 and interleaved with the
// first's.
func TestXESCaseInSeveralTraces(t *testing.T) {
	ev := func(name, ts string) string {
		return `<event><string key="concept:name" value="` + name + `"/><date key="time:timestamp" value="` + ts + `"/></event>`
	}
	xes := `<log><trace><string key="concept:name" value="1"/>` + ev("a", "2024-01-01T00:00:00Z") + ev("b", "2024-01-01T00:01:00Z") +
		`</trace><trace><string key="concept:name" value="2"/>` + ev("x", "2024-01-01T00:00:00Z") +
		`</trace><trace><string key="concept:name" value="1"/>` + ev("d", "2024-02-01T00:01:00Z") + ev("c", "2024-02-01T00:00:00Z") + "</trace></log>\n"
	for sort, want := range map[string]string{SortTime: "a b c d", SortFile: "a b d c"} {
		lg, err := Read([]Input{strInput("two.xes", xes)}, ReadOptions{Strict: true, Import: ImportOptions{Sort: sort}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i := range lg.Sessions {
			if lg.Sessions[i].ID != "1" {
				continue
			}
			for _, mv := range lg.Moves(&lg.Sessions[i]) {
				got = append(got, mv.Label)
			}
		}
		if g := strings.Join(got, " "); g != want+" __end__" {
			t.Errorf("--sort %s: case 1 is %q, want %q", sort, g, want)
		}
	}
}

// TestXESDeepNesting: elements nested past what XES needs are an error at
// once, not a stack kept growing with the input.
func TestXESDeepNesting(t *testing.T) {
	xes := "<log><trace><event>" + strings.Repeat("<a>", 5000)
	_, err := Read([]Input{strInput("deep.xes", xes)}, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "deep.xes: line 1") || !strings.Contains(err.Error(), "nested 1001 elements deep") {
		t.Errorf("error %v, want one naming deep.xes, line 1, and the depth", err)
	}
}

// TestTau2FolderLinks checks that a tau2 folder's simulation file may be a
// link to a file, and that a simulations/<id>.json that is not a file (or
// a link to one) is an error naming it, not a run left unread.
func TestTau2FolderLinks(t *testing.T) {
	const id = "49b22f0c-4a56-41c5-922f-bc2a56e53a23"
	tests := []struct {
		name    string
		replace func(sim, store string) error // sim: the simulation's path; store: a file of it outside the folder
		want    string                        // the error, %s the simulation's path; "" for the folder's sessions
	}{
		{"link to a file", func(sim, store string) error { return os.Symlink(store, sim) }, ""},
		{"directory", func(sim, _ string) error { return os.Mkdir(sim, 0o755) }, "%s is a directory, want a simulation file"},
		{"link to nothing", func(sim, store string) error { return os.Symlink(store+".gone", sim) }, "stat %s: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			exp := filepath.Join(dir, "exp")
			if err := os.CopyFS(exp, os.DirFS(upstreamPath("tau2_voice_experiment"))); err != nil {
				t.Fatal(err)
			}
			sim := filepath.Join(exp, "simulations", id+".json")
			store := filepath.Join(dir, id+".json")
			if err := os.Rename(sim, store); err != nil {
				t.Fatal(err)
			}
			if err := tt.replace(sim, store); err != nil {
				t.Fatal(err)
			}
			in, ok, err := DirInput(exp, FormatAuto)
			if err != nil || !ok {
				t.Fatalf("DirInput = %v, %v", ok, err)
			}
			lg, err := Read([]Input{in}, ReadOptions{})
			if tt.want != "" {
				want := fmt.Sprintf(tt.want, sim)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("error %v, want %s", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := []string{
				id + ": user_msg/user agent_msg/agent",
				"cd9c5ed2-9751-4c86-8dac-8a895a332e41: agent_msg/agent user_msg/user agent_msg/agent",
			}
			if got := sessionLines(lg); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("sessions %q, want %q", got, want)
			}
		})
	}
}

// TestTauUnknownRole: a message of a role the importer has no record for
// is an error naming it, not a message left out without a word.
func TestTauUnknownRole(t *testing.T) {
	for name, text := range map[string]string{
		"tau2":      `{"id": "s1", "task_id": "1", "termination_reason": "user_stop", "messages": [{"role": "user", "content": "hi"}, {"role": "developer", "content": "x"}]}`,
		"tau-bench": `[{"task_id": 1, "trial": 0, "reward": 1, "traj": [{"role": "user", "content": "hi"}, {"role": "Assistant", "content": "x"}]}]`,
	} {
		_, err := Read([]Input{strInput(name+".json", text)}, ReadOptions{Format: "tau"})
		if err == nil || !strings.Contains(err.Error(), "message 1: role") {
			t.Errorf("%s: Read error %v, want one naming message 1's role", name, err)
		}
	}
}

// TestXESOneLineReadAgain: events that share an input line stay apart when
// the log is read again for what its records carry (measures, fields),
// while messages name their input line.
func TestXESOneLineReadAgain(t *testing.T) {
	in := strInput("one.xes", `<log><trace><string key="concept:name" value="c1"/><event><string key="concept:name" value="a"/><float key="cost" value="1"/></event><event><string key="concept:name" value="b"/><float key="cost" value="10"/></event><event><string key="concept:name" value="c"/><float key="cost" value="100"/></event></trace><trace><string key="concept:name" value="c2"/><event><string key="concept:name" value="a"/><float key="cost" value="2"/></event><event><string key="concept:name" value="b"/><float key="cost" value="20"/></event></trace></log>`)
	lg, err := Read([]Input{in}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Measure([]Input{in}, ReadOptions{}, lg, []string{"attrs.cost"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for si, s := range lg.Sessions {
		for vi := range s.Visits {
			v, _ := ms.Value(si, vi, 0)
			got = append(got, s.ID+":"+lg.Name(s.Visits[vi].Label)+"="+strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	if want := "c1:a=1 c1:b=10 c1:c=100 c2:a=2 c2:b=20"; strings.Join(got, " ") != want {
		t.Errorf("costs by visit %q, want %q", strings.Join(got, " "), want)
	}
	m, err := Build(lg, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := RecordFields(lg, m, []Input{in}, ReadOptions{}, FieldOptions{}); err != nil {
		t.Errorf("RecordFields: %v", err)
	}
}

func mustRules(text string) *Rules {
	rs, err := ParseRules([]byte(text))
	if err != nil {
		panic(err)
	}
	return rs
}

// TestCSVRowBound: a CSV row far past the line bound is refused before it
// is read whole (encoding/csv holds a row at once), naming where it starts.
func TestCSVRowBound(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	opt := ReadOptions{Format: FormatCSV, MaxLine: 32 << 10}
	ok := "case,activity,note\nc1,a,x\nc1,b,\"" + strings.Repeat("y", 30<<10) + "\"\n"
	if _, err := Read([]Input{strInput("ok.csv", ok)}, opt); err != nil {
		t.Errorf("rows within the bound: %v", err)
	}
	for _, tt := range []struct{ name, in, want string }{
		{"a row", "case,activity,note\nc1,a,x\nc1,b,\"" + big + "\"\nc2,a,y\n", "reading big.csv: the row after the one at line 2 is longer than 32768 bytes"},
		{"the header", "case,activity," + big + "\nc1,a,x\n", "reading big.csv: the header row is longer than 32768 bytes"},
	} {
		_, err := Read([]Input{strInput("big.csv", tt.in)}, opt)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: error %v, want %s", tt.name, err, tt.want)
		}
	}
}

// TestXESTokenBound: an XES attribute value far past the line bound is
// refused before it is read whole, naming where its tag starts.
func TestXESTokenBound(t *testing.T) {
	doc := func(v string) string {
		return `<log xes.version="1.0"><trace><string key="concept:name" value="c1"/>` + "\n" +
			`<event><string key="concept:name" value="` + v + `"/></event></trace></log>`
	}
	opt := ReadOptions{Format: FormatXES, MaxLine: 32 << 10}
	if _, err := Read([]Input{strInput("ok.xes", doc(strings.Repeat("a", 20<<10)))}, opt); err != nil {
		t.Errorf("a value within the bound: %v", err)
	}
	_, err := Read([]Input{strInput("big.xes", doc(strings.Repeat("a", 200<<10)))}, opt)
	if want := "reading big.xes: line 2, column 8: a tag or text longer than 32768 bytes"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}
