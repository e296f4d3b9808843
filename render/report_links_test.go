package render

import (
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// withExamples gives the support fixture's states and transitions hostile
// example ids, and a generalised transition examples it must not show.
func withExamples(t *testing.T, link string) *automaton.Model {
	t.Helper()
	m := loadFixture(t, "support")
	m.Params.Examples = 2
	m.Params.Link = link
	for i := range m.States {
		m.States[i].Examples = []string{`"><script>alert(1)</script>`, "s-" + m.States[i].ID}
	}
	for i := range m.Transitions {
		m.Transitions[i].Examples = []string{"javascript:alert(2)", "e-" + m.Transitions[i].Event}
	}
	m.Transitions = append(m.Transitions, automaton.Transition{From: "answer", Event: "skip", To: automaton.EndID, Generalized: "skip", Examples: []string{"never-taken"}})
	m.Sort()
	return m
}

func TestReportExamples(t *testing.T) {
	tests := []struct {
		name, link string
		anchors    int // example links on the page
	}{
		// 6 states in the States table; 10 transitions in the Transitions
		// table (the generalised one without), 2 examples each, and the
		// rare ones again in Rare branches.
		{"https link", "https://trace.example/s/{session}", -1},
		{"no link", "", 0},
		{"javascript link", "javascript:alert(3)//{session}", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := withExamples(t, tt.link)
			page := report(t, m, ReportOptions{Diagram: DiagramNone, Detail: DetailFull})
			lower := strings.ToLower(page)
			if n := strings.Count(lower, "<script"); n != 1 {
				t.Errorf("page has %d <script elements, want 1 (its own)", n)
			}
			if strings.Contains(lower, `href="javascript`) {
				t.Error("page links to javascript:")
			}
			if strings.Contains(page, "never-taken") {
				t.Error("page shows examples of a generalised transition")
			}
			states := section(t, page, "states")
			if !strings.Contains(textOf(states), `"><script>alert(1)</script>`) || !strings.Contains(textOf(states), "s-classify") {
				t.Error("the States table does not show the examples as text")
			}
			edges := section(t, page, "transitions")
			if !strings.Contains(textOf(edges), "javascript:alert(2)") || !strings.Contains(textOf(edges), "e-followup") {
				t.Error("the Transitions table does not show the examples")
			}
			n := strings.Count(page, `class="ex"`)
			if tt.anchors == 0 && n != 0 {
				t.Errorf("%d example links, want none", n)
			}
			if tt.anchors < 0 {
				if n == 0 {
					t.Fatal("no example links")
				}
				if want := strings.Count(page, `rel="noopener noreferrer" target="_blank"`); want != n {
					t.Errorf("%d example links, %d of them with rel=noopener", n, want)
				}
				for _, href := range []string{
					`href="https://trace.example/s/%22%3E%3Cscript%3Ealert%281%29%3C%2Fscript%3E"`,
					`href="https://trace.example/s/javascript:alert%282%29"`,
					`href="https://trace.example/s/s-classify"`,
				} {
					if !strings.Contains(page, href) {
						t.Errorf("page has no %s", href)
					}
				}
			}
			if strings.Contains(page, "ZgotmplZ") {
				t.Error("html/template refused a link")
			}
		})
	}
}

func TestReportWithoutExamplesHasNoColumn(t *testing.T) {
	page := report(t, loadFixture(t, "support"), ReportOptions{Diagram: DiagramNone, Detail: DetailFull})
	if strings.Contains(page, "example sessions") {
		t.Error("a model without examples gets an examples column")
	}
}

func TestReportMeasures(t *testing.T) {
	m := loadFixture(t, "support")
	ms := sampleMeasures()
	page := report(t, m, ReportOptions{Diagram: DiagramNone, Detail: DetailFull, Measures: ms})

	cost := section(t, page, "cost")
	if strings.Contains(cost, "<b>") || !strings.Contains(textOf(cost), "<b>cost</b> total") {
		t.Error("a measured path is not shown as text")
	}
	got := rows(cost)
	want := [][]string{
		{"search", "9", "1.2 s", "4.0 s", "12,345", "1,372", "3,000", "0.0123", "0.00137", "0.004"},
		{"answer", "5", "–", "–", "–", "–", "–", "–", "–", "–"},
		{"classify", "ok", "search", "6", "–", "–", "–", "–", "–", "–", "–", "–"},
		{"search", "ok", "answer", "4", "–", "–", "400", "100", "100", "–", "–", "–"},
	}
	if len(got) != len(want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	for i := range want {
		if strings.Join(got[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d = %q, want %q", i, got[i], want[i])
		}
	}
	if strings.Contains(report(t, m, ReportOptions{Diagram: DiagramNone}), `id="cost"`) {
		t.Error("a report without logs has a Cost and latency section")
	}
}

// sampleMeasures are made-up figures for the support fixture, one of the
// measured paths hostile HTML.
func sampleMeasures() *Measures {
	return &Measures{
		Sessions: 7, Fit: 6,
		Paths: []string{"tokens.prompt", "<b>cost</b>"},
		States: []MeasuredState{
			{ID: "search", Visits: 9, Dwell: &automaton.Dwell{P50: 1200, P95: 4000, Max: 5000},
				Values: []*Quantiles{{N: 9, Total: 12345, Mean: 1371.7, P50: 1000, P95: 3000}, {N: 9, Total: 0.0123, Mean: 0.00137, P50: 0.001, P95: 0.004}}},
			{ID: "answer", Visits: 5, Values: []*Quantiles{nil, nil}},
		},
		Edges: []MeasuredEdge{
			{From: "search", Event: "ok", To: "answer", Count: 4, Values: []*Quantiles{{N: 4, Total: 400, Mean: 100, P50: 100, P95: 100}, nil}},
			{From: "classify", Event: "ok", To: "search", Count: 6},
		},
	}
}
