package formats

import (
	"fmt"
	"strings"
	"testing"
)

func TestStripIDs(t *testing.T) {
	tests := []struct{ name, want string }{
		{"agent.f9f77d1a-437f-4ba6-890e-b592a50cbd21", "agent"},
		{"invoke_agent 99981f6a-abd1-4d09-9fba-00e2ab172193", "invoke_agent"},
		{"run [0123456789abcdef0123]", "run"},
		{"span 5b8efff798038103d269b633813fc60c done", "span done"},
		{"f9f77d1a-437f-4ba6-890e-b592a50cbd21", ""},
		// Short numbers and names with digits stay.
		{"chat gpt-4o", "chat gpt-4o"},
		{"step 2", "step 2"},
		{"node.nodeCallLLM", "node.nodeCallLLM"},
		{"deadbeefdeadbeef", "deadbeefdeadbeef"}, // no digit: a word
		{"", ""},
	}
	for _, tt := range tests {
		if got := stripIDs(tt.name); got != tt.want {
			t.Errorf("stripIDs(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	for _, s := range []string{"99981f6a-abd1-4d09-9fba-00e2ab172193", "5b8efff798038103d269b633813fc60c"} {
		if !isID(s) {
			t.Errorf("isID(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"Returns", "gpt-4o", "agent 5b8efff798038103d269b633813fc60c", "2"} {
		if isID(s) {
			t.Errorf("isID(%q) = true, want false", s)
		}
	}
}

// span builds a tree span for the fold tests: "id<parent:kind:name".
func testSpans(t *testing.T, specs ...string) []*treeSpan {
	t.Helper()
	var spans []*treeSpan
	for i, spec := range specs {
		f := strings.SplitN(spec, ":", 3)
		if len(f) != 3 {
			t.Fatalf("bad spec %q", spec)
		}
		id, parent, _ := strings.Cut(f[0], "<")
		s := &treeSpan{spanItem: spanItem{trace: "t", id: id, parent: parent, start: int64(i), hasTime: true, seq: i, body: []byte("{}")},
			name: f[2], where: "span " + id}
		s.classify(f[1], func(string) string { return "" })
		spans = append(spans, s)
	}
	return spans
}

func labels(steps []*treeSpan) string {
	var out []string
	for _, s := range steps {
		out = append(out, s.label)
	}
	return strings.Join(out, " ")
}

func TestFoldSpans(t *testing.T) {
	tests := []struct {
		name  string
		spans []string
		want  string // the steps' labels, in input order
		keep  string // with keep set
	}{
		{"llm inside agent", []string{"a:AGENT:Support", "l<a:GENERATION:chat", "x<a:TOOL:lookup"}, "Support lookup", "Support chat lookup"},
		{"llm alone", []string{"l:GENERATION:ChatOpenAI"}, "ChatOpenAI", "ChatOpenAI"},
		{"wrapper around steps", []string{"w:CHAIN:pipeline", "r<w:RETRIEVER:search", "l<w:GENERATION:answer"}, "search answer", "pipeline search answer"},
		{"wrapper alone", []string{"w:CHAIN:format_reply"}, "format_reply", "format_reply"},
		{"wrapper leaf under agent", []string{"a:AGENT:A", "w<a:CHAIN:turn"}, "A", "A turn"},
		{"plain span holding a model call under an agent", []string{"a:AGENT:A", "s<a:SPAN:turn", "l<s:GENERATION:gen"}, "A", "A turn gen"},
		{"plain leaf under agent", []string{"a:AGENT:A", "e<a:EVENT:handoff"}, "A handoff", "A handoff"},
		{"span inside a tool", []string{"x:TOOL:fetch", "h<x:SPAN:GET /orders"}, "fetch", "fetch GET /orders"},
		{"unnamed agent around agents", []string{"w:AGENT:Agent workflow", "a<w:AGENT:agent_run [Triage]", "b<w:AGENT:agent_run [Refunds]"}, "Triage Refunds", "Agent workflow Triage Refunds"},
		{"unnamed agent with its own tools", []string{"a:AGENT:turn", "s<a:AGENT:agent_run [Sub]", "x<a:TOOL:lookup"}, "turn Sub lookup", "turn Sub lookup"},
		{"ids cut from names", []string{"a:AGENT:agent.f9f77d1a-437f-4ba6-890e-b592a50cbd21", "x<a:TOOL:execute_tool get_weather"}, "agent get_weather", "agent get_weather"},
		{"parent not in the input", []string{"l<elsewhere:GENERATION:chat"}, "chat", "chat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, keep := range []bool{false, true} {
				steps, out, err := foldSpans(testSpans(t, tt.spans...), keep)
				if err != nil {
					t.Fatal(err)
				}
				want := tt.want
				if keep {
					want = tt.keep
				}
				if got := labels(steps); got != want {
					t.Errorf("keep=%v: steps %q, want %q", keep, got, want)
				}
				if len(steps)+len(out) != len(tt.spans) {
					t.Errorf("keep=%v: %d steps and %d left out of %d spans", keep, len(steps), len(out), len(tt.spans))
				}
				for _, s := range out {
					if s.why == "" {
						t.Errorf("span %s left out without a reason", s.id)
					}
				}
			}
		})
	}
}

func TestFoldSpansGraphNodes(t *testing.T) {
	spans := testSpans(t, "g:CHAIN:LangGraph", "s<g:CHAIN:__start__", "a<g:CHAIN:node.agent", "l<a:LLM:ChatOpenAI", "r<a:CHAIN:should_continue", "x<g:CHAIN:tools", "t<x:TOOL:search")
	for _, s := range spans {
		switch s.id {
		case "s":
			s.graphNode, s.graphStep = "__start__", "0"
		case "a", "l", "r":
			s.graphNode, s.graphStep = "agent", "1"
		case "x", "t":
			s.graphNode, s.graphStep = "tools", "2"
		}
	}
	steps, _, err := foldSpans(spans, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := labels(steps), "agent tools search"; got != want {
		t.Errorf("steps %q, want %q", got, want)
	}
}

func TestFoldSpansBadTrees(t *testing.T) {
	tests := []struct {
		name  string
		spans []string
		want  string
	}{
		{"cycle", []string{"a<c:SPAN:a", "b<a:SPAN:b", "c<b:SPAN:c"}, "span a: its parent links form a cycle"},
		{"own parent", []string{"a<a:SPAN:a"}, "span a: it is its own parent"},
		{"duplicate", []string{"a:SPAN:a", "a:SPAN:b"}, "span a: a second span with this id (the first: span a)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := foldSpans(testSpans(t, tt.spans...), false)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestFoldSpansDeepChain checks that a chain of spans nested deeper than
// recursion should go folds, in time linear in the spans: the walk up
// from each span to its root once cost a time quadratic in the depth.
func TestFoldSpansDeepChain(t *testing.T) {
	const n = 200000
	specs := make([]string, n)
	specs[0] = "s0:AGENT:root"
	for i := 1; i < n; i++ {
		specs[i] = fmt.Sprintf("s%d<s%d:SPAN:x", i, i-1)
	}
	steps, out, err := foldSpans(testSpans(t, specs...), false)
	if err != nil {
		t.Fatal(err)
	}
	// The agent, and the leaf at the bottom; every span between holds one.
	if len(steps) != 2 || len(out) != n-2 {
		t.Errorf("%d steps, %d left out; want 2 and %d", len(steps), len(out), n-2)
	}
}
