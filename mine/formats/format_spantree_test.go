package formats

import (
	"fmt"
	"math/rand"
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

// orderHandoffsQuadratic is orderHandoffs as it was written first, each
// handoff looking at every agent step of its trace and name: the reference
// the sorted search must agree with.
func orderHandoffsQuadratic(steps []*treeSpan) {
	agents := map[[2]string][]*treeSpan{}
	for _, a := range steps {
		if a.kind == kindAgent && a.hasTime {
			for _, n := range []string{a.label, named(a.agent)} {
				if n != "" {
					k := [2]string{a.trace, n}
					agents[k] = append(agents[k], a)
				}
			}
		}
	}
	for _, h := range steps {
		if h.kind != kindHandoff || h.handoffTo == "" || !h.hasTime {
			continue
		}
		from := int64(-1 << 63)
		if h.up != nil && h.up.hasTime {
			from = h.up.start
		}
		var to *treeSpan
		for _, a := range agents[[2]string{h.trace, h.handoffTo}] {
			if a.start >= from && a.start <= h.start && (to == nil || a.start < to.start) {
				to = a
			}
		}
		if to != nil {
			h.own, h.start, h.first = h.start, to.start, true
		}
	}
}

// handoffSteps builds steps with handoffs among agents of a few names and
// traces, from seed: agents out of time order, starts that tie, handoffs
// with and without a parent.
func handoffSteps(seed int64, n int) []*treeSpan {
	r := rand.New(rand.NewSource(seed))
	var steps []*treeSpan
	names := []string{"A", "B", "C"}
	for i := 0; i < n; i++ {
		trace := fmt.Sprint("t", r.Intn(2))
		s := &treeSpan{spanItem: spanItem{trace: trace, id: fmt.Sprint("s", i), start: int64(r.Intn(n)), hasTime: r.Intn(10) > 0, seq: i}}
		if r.Intn(2) == 0 {
			s.kind, s.agent, s.label = kindAgent, names[r.Intn(3)], fmt.Sprint("invoke_agent:", names[r.Intn(3)])
		} else {
			s.kind, s.handoffTo = kindHandoff, names[r.Intn(3)]
			if len(steps) > 0 && r.Intn(2) == 0 {
				s.up = steps[r.Intn(len(steps))]
			}
		}
		steps = append(steps, s)
	}
	return steps
}

// TestOrderHandoffs: each handoff takes the start of the agent step it
// hands to as the quadratic search chose it: the earliest start from the
// handoff's parent's on and not after its own, the first in input order
// among ties.
func TestOrderHandoffs(t *testing.T) {
	a := func(id, agent string, start int64) *treeSpan {
		return &treeSpan{spanItem: spanItem{trace: "t", id: id, start: start, hasTime: true}, kind: kindAgent, agent: agent, label: agent}
	}
	h := func(id, to string, start int64, up *treeSpan) *treeSpan {
		return &treeSpan{spanItem: spanItem{trace: "t", id: id, start: start, hasTime: true}, kind: kindHandoff, handoffTo: to, up: up}
	}
	root := a("r", "Triage", 0)
	x9, x5, x5b, x2 := a("x9", "X", 9), a("x5", "X", 5), a("x5b", "X", 5), a("x2", "X", 2)
	h7 := h("h7", "X", 7, nil)   // X at 2 is the earliest up to 7
	h6 := h("h6", "X", 6, x5b)   // from its parent's start, 5: x5 (first of the tie)
	h1 := h("h1", "X", 1, nil)   // no X until 2: stays
	h10 := h("h10", "X", 10, x9) // from 9: x9
	hY := h("hY", "Y", 8, nil)   // no agent Y: stays
	steps := []*treeSpan{root, x9, h7, x5, x5b, h6, x2, h1, h10, hY}
	orderHandoffs(steps)
	for _, tt := range []struct {
		h     *treeSpan
		start int64
		first bool
	}{{h7, 2, true}, {h6, 5, true}, {h1, 1, false}, {h10, 9, true}, {hY, 8, false}} {
		if tt.h.start != tt.start || tt.h.first != tt.first {
			t.Errorf("handoff %s: start %d first %v, want %d %v", tt.h.id, tt.h.start, tt.h.first, tt.start, tt.first)
		}
	}
	for seed := int64(0); seed < 200; seed++ {
		got, want := handoffSteps(seed, 60), handoffSteps(seed, 60)
		orderHandoffs(got)
		orderHandoffsQuadratic(want)
		for i := range got {
			if got[i].start != want[i].start || got[i].first != want[i].first || got[i].own != want[i].own {
				t.Fatalf("seed %d, step %s: start %d first %v own %d, want %d %v %d", seed, got[i].id,
					got[i].start, got[i].first, got[i].own, want[i].start, want[i].first, want[i].own)
			}
		}
	}
}

// BenchmarkOrderHandoffs: n handoffs to agents of one name in one trace,
// as an agent that hands back and forth writes them.
func BenchmarkOrderHandoffs(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint("handoffs=", n), func(b *testing.B) {
			steps := make([]*treeSpan, 0, 2*n)
			for i := 0; i < n; i++ {
				steps = append(steps,
					&treeSpan{spanItem: spanItem{trace: "t", id: fmt.Sprint("a", i), start: int64(2 * i), hasTime: true}, kind: kindAgent, agent: "X", label: "invoke_agent:X"},
					&treeSpan{spanItem: spanItem{trace: "t", id: fmt.Sprint("h", i), hasTime: true}, kind: kindHandoff, handoffTo: "X"})
			}
			b.ReportAllocs()
			for b.Loop() {
				for i := 1; i < len(steps); i += 2 {
					steps[i].start, steps[i].first = int64(i), false
				}
				orderHandoffs(steps)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "handoffs/s")
		})
	}
}
