package mine

import (
	"bytes"
	"encoding/json" // an independent reference for valid JSON
	"github.com/fsmine/fsmine/mine/formats"
	"io"
	"os"
	"runtime"
	"sort"
	"testing"
)

// FuzzFormats feeds arbitrary input to every format's detection and
// conversion: neither may panic, and a conversion that succeeds writes only
// JSON objects and notes (see writeNote), one a line (blank lines allowed).
func FuzzFormats(f *testing.F) {
	// The fixtures' first lines: small seeds keep minimization quick.
	for _, tt := range formatFixtures {
		if data, err := os.ReadFile(fixturePath(tt.file)); err == nil {
			if len(data) > 2048 {
				data = data[:bytes.LastIndexByte(data[:2048], '\n')+1]
			}
			f.Add(data)
		}
	}
	for _, s := range []string{
		`{"simulations":[{"id":"s","messages":[{"role":"assistant","tool_calls":[{"id":"c","name":"t"}]},{"role":"tool","id":"c","error":true}]}]}`,
		`[{"task_id":1,"traj":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f"}}]},{"role":"tool","tool_call_id":"c","content":"Error: x"}]}]`,
		`{"runs":[{"id":"a","name":"x","run_type":"tool","start_time":1717236000000}]}`,
		`{"data":[{"id":"o","traceId":"t","type":"SPAN","startTime":"2024-01-01T00:00:00Z"}]}`,
		"<log><trace><string key=\"concept:name\" value=\"c\"/><event><int key=\"n\" value=\"x\"/></event></trace></log>",
		"a;b\n\"x;y\";2\n",
		`{"post":[{"id":"a","name":"x","run_type":"llm","dotted_order":"20240101T000000000000Za","start_time":1717236000000}],"patch":[{"dotted_order":"20240101T000000000000Za","end_time":1717236000500},{"id":"z"}]}`,
		`{"id":"s","task_id":"1","termination_reason":"user_stop","ticks":[{"tick_id":0,"timestamp":"2026-01-01T00:00:00","agent_chunk":{"contains_speech":true},"user_chunk":{"content":"hi"},"agent_tool_calls":[{"id":"c","name":"t"}],"agent_tool_results":[{"id":"c","error":true}]}]}`,
		"<log><classifier name=\"C\" keys=\"concept:name 'a b'\"/><trace><event><string key=\"concept:name\" value=\"x\"/><string key=\"lifecycle:transition\" value=\"start\"/><date key=\"time:timestamp\" value=\"2024-01-01T00:00:00Z\"/></event></trace></log>",
		"CaseID,Activity,Timestamp,lifecycle\n1,a,2024-01-01,start\n1,b,2024-01-02,complete\n",
		`{"trace":{"id":"t","metadata":"{\"attributes\":{\"gen_ai.conversation.id\":\"c\"}}"},"observations":[{"id":"a","traceId":"t","type":"AGENT","name":"agent.f9f77d1a-437f-4ba6-890e-b592a50cbd21","startTime":"2025-01-01T00:00:00Z","metadata":{"langgraph_node":"n","langgraph_step":1,"attributes":{"gen_ai.tool.name":"x"}}},{"id":"b","traceId":"t","type":"GENERATION","parentObservationId":"a","name":"handoff to B"}]}`,
		"[{\"name\":\"a\",\"context\":{\"trace_id\":\"t\",\"span_id\":\"a\"},\"span_kind\":\"AGENT\",\"parent_id\":\"b\",\"attributes\":{\"graph\":{\"node\":{\"id\":\"g\"}}}},\n{\"name\":\"handoff to a\",\"context.trace_id\":\"t\",\"context.span_id\":\"b\",\"span_kind\":\"TOOL\",\"parent_id\":\"a\",\"start_time\":\"2026-01-01T00:00:00Z\"}]",
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"t","spanId":"a","name":"Agent workflow","attributes":[{"key":"openinference.span.kind","value":{"stringValue":"AGENT"}}]},{"traceId":"t","spanId":"b","parentSpanId":"a","name":"handoff to B","startTimeUnixNano":"2"},{"traceId":"t","spanId":"c","parentSpanId":"a","name":"B","startTimeUnixNano":"1","attributes":[{"key":"agent.name","value":{"stringValue":"B"}},{"key":"gen_ai.operation.name","value":{"stringValue":"invoke_agent"}}]}]}]}]}`,
	} {
		f.Add([]byte(s))
	}
	var names []string
	for _, fm := range formats.All() {
		n := fm.Name
		if fm.Convert != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	opts := []ImportOptions{{}, {Sort: SortFile, Lifecycle: LifecycleComplete, Classifier: "C"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		formats.Pick(FormatAuto, data)
		for _, n := range names {
			for _, opt := range opts {
				var out bytes.Buffer
				if err := formatNamed(n).Convert(bytes.NewReader(data), &out, opt); err != nil {
					continue
				}
				for i, line := range bytes.Split(out.Bytes(), []byte{'\n'}) {
					if len(line) == 0 {
						continue
					}
					if line[0] == 0 {
						rec, _, ok := formats.RecordAt(line)
						if !ok {
							if len(bytes.Split(line, []byte{0})) != 4 {
								t.Fatalf("%s: output line %d is a broken note: %q", n, i+1, line)
							}
							continue
						}
						line = rec // a record placed after its input line
					}
					if line[0] != '{' || !json.Valid(line) {
						t.Fatalf("%s: output line %d is not a JSON object: %q", n, i+1, line)
					}
				}
			}
		}
	})
}

// TestConvertSmallInputCheap: converting a small input allocates little,
// whatever the format and whether it converts or fails. Each conversion
// used to take a new 64 KiB reader and 256 KiB writer, which made
// FuzzFormats' minimisation of one input (thousands of runs of every
// format) take some 40 s; they are pooled now.
func TestConvertSmallInputCheap(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop buffers at random")
	}
	var names []string
	for _, fm := range formats.All() {
		n := fm.Name
		if fm.Convert != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	inputs := map[string][]byte{"object": []byte(`{"a":1}`), "csv": []byte("case,activity\n1,a\n"), "xes": []byte("<log><trace/></log>")}
	for _, n := range names {
		for in, data := range inputs {
			const runs = 200
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				formatNamed(n).Convert(bytes.NewReader(data), io.Discard, ImportOptions{})
			}
			runtime.ReadMemStats(&after)
			if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 64<<10 {
				t.Errorf("%s on %s: %d bytes allocated a conversion, want at most 64 KiB", n, in, per)
			}
		}
	}
}
