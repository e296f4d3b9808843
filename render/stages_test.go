package render

import (
	"bytes"
	"encoding/json" // an independent reference for valid JSON
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fsmine/fsmine/automaton"
)

// drawnCounts counts what a DOT text draws at its top level: clusters and
// nodes outside any cluster, __start__ and __end__ aside, and every edge.
func drawnCounts(t *testing.T, text string) (boxes, edges int) {
	t.Helper()
	depth := 0
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "subgraph "):
			if depth == 1 {
				boxes++
			}
			depth++
		case line == "}":
			depth--
		case strings.HasSuffix(line, "{"):
			depth++
		default:
			sm := dotStatement.FindStringSubmatch(line)
			if sm == nil {
				continue
			}
			if sm[2] != "" {
				if !strings.Contains(sm[3], `style="invis"`) { // an invisible edge only places a box
					edges++
				}
				continue
			}
			attrs, err := parseDOTAttrs(sm[3])
			if err != nil {
				t.Fatal(err)
			}
			if depth == 1 && !isPseudo(attrs["tooltip"]) {
				boxes++
			}
		}
	}
	return boxes, edges
}

// bigModel is a model of n states whose labels fall into families
// ("f3_step17"): a chain with skips, back edges and exits, as a real log
// of many activities mines to.
func bigModel(t *testing.T, n, families int) *automaton.Model {
	t.Helper()
	m := &automaton.Model{Schema: automaton.Schema, Initial: automaton.StartID, Source: automaton.Source{Sessions: 1000}}
	id := func(i int) string { return fmt.Sprintf("f%d_step%02d", i%families, i) }
	m.States = append(m.States, automaton.State{ID: automaton.StartID, Label: automaton.StartID, Visits: 1000, Sessions: 1000})
	for i := 0; i < n; i++ {
		m.States = append(m.States, automaton.State{ID: id(i), Label: id(i), Visits: 1000 - 10*i, Sessions: 1000 - 10*i})
	}
	m.States = append(m.States, automaton.State{ID: automaton.EndID, Label: automaton.EndID, Visits: 1000, Sessions: 1000})
	add := func(from, to string, count int, back bool) {
		m.Transitions = append(m.Transitions, automaton.Transition{From: from, Event: "ok", To: to, Count: count, Sessions: count, Prob: 0.5, BackEdge: back})
	}
	add(automaton.StartID, id(0), 1000, false)
	for i := 0; i < n; i++ {
		if i+1 < n {
			add(id(i), id(i+1), 900-10*i, false)
		}
		if i+2 < n {
			add(id(i), id(i+2), 40, false)
		}
		if i >= 3 {
			add(id(i), id(i-3), 30, true)
		}
		if i%7 == 6 || i == n-1 {
			add(id(i), automaton.EndID, 50, false)
		}
	}
	for i := 0; i < n; i++ {
		m.Trunk = append(m.Trunk, id(i))
	}
	m.Reindex()
	return m
}

func TestSummaryLimits(t *testing.T) {
	tests := []struct {
		name string
		m    *automaton.Model
	}{
		{"support", loadFixture(t, "support")},
		{"orders", loadFixture(t, "orders")},
		{"weird", loadFixture(t, "weird")},
		{"40 states, 3 families", bigModel(t, 40, 3)},
		{"60 states, 60 families", bigModel(t, 60, 60)},
		{"5 states", bigModel(t, 5, 5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := string(render(t, DOT, tt.m, Options{Detail: DetailSummary}))
			boxes, edges := drawnCounts(t, text)
			if boxes > MaxStages || edges > MaxEdges {
				t.Errorf("summary draws %d boxes and %d edges, want at most %d and %d\n%s", boxes, edges, MaxStages, MaxEdges, text)
			}
			for _, format := range FormatNames() {
				f := Formats[format]
				a := render(t, f, tt.m, Options{Detail: DetailSummary})
				b := render(t, f, shuffled(t, tt.m), Options{Detail: DetailSummary})
				if !bytes.Equal(a, b) {
					t.Errorf("%s summary depends on the order of states and transitions", format)
				}
			}
			// Every state is in exactly one stage.
			seen := map[string]int{}
			for _, st := range Stages(tt.m) {
				for _, id := range st.States {
					seen[id]++
				}
			}
			for _, s := range tt.m.States {
				if want := 1; !isPseudo(s.ID) && seen[s.ID] != want {
					t.Errorf("state %q is in %d stages, want 1", s.ID, seen[s.ID])
				}
			}
			if n := len(Stages(tt.m)); n > MaxStages {
				t.Errorf("%d stages, want at most %d", n, MaxStages)
			}
		})
	}
}

func TestStages(t *testing.T) {
	tests := []struct {
		name string
		m    *automaton.Model
		want []string // "name: state state ..."
	}{
		{
			// Five states, one label each, on a trunk: segments by family,
			// the f0_ and f1_ families alternate, so every state is a segment.
			name: "short trunk",
			m:    bigModel(t, 5, 2),
			want: []string{"f0_step00: f0_step00", "f1_step01: f1_step01", "f0_step02: f0_step02", "f1_step03: f1_step03", "f0_step04: f0_step04"},
		},
		{
			// Eight segments merge into six: the first pair with the fewest
			// trunk states merges first.
			name: "segments merge",
			m:    bigModel(t, 8, 2),
			want: []string{
				"f0_step00, f1_step01: f0_step00 f1_step01",
				"f0_step02, f1_step03: f0_step02 f1_step03",
				"f0_step04: f0_step04", "f1_step05: f1_step05", "f0_step06: f0_step06", "f1_step07: f1_step07",
			},
		},
		{
			// One family: the whole trunk is one segment, named by its first
			// and last label.
			name: "one family",
			m:    bigModel(t, 4, 1),
			want: []string{"f0_step00 … f0_step03: f0_step00 f0_step01 f0_step02 f0_step03"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, st := range Stages(tt.m) {
				got = append(got, st.Name+": "+strings.Join(st.States, " "))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Stages =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestStagesOffTrunk(t *testing.T) {
	// No trunk: states group by label, and past MaxStages groups the
	// lightest share "other states".
	m := bigModel(t, 14, 14)
	m.Trunk = nil
	st := Stages(m)
	if len(st) != MaxStages {
		t.Fatalf("%d stages, want %d", len(st), MaxStages)
	}
	if st[0].Name != "f0_step00" || st[MaxStages-1].Name != otherStage {
		t.Errorf("stages %q ... %q, want the busiest label first and %q last", st[0].Name, st[MaxStages-1].Name, otherStage)
	}
	if got, want := len(st[MaxStages-1].States), 14-(MaxStages-1); got != want {
		t.Errorf("other states holds %d states, want %d", got, want)
	}
}

func TestGeneralizedDrawnApart(t *testing.T) {
	m := loadFixture(t, "support")
	c := *m
	c.Transitions = append(slices.Clone(m.Transitions), automaton.Transition{From: "classify", Event: "skip", To: "answer", Generalized: "skip"})
	c.Reindex()
	full := string(render(t, DOT, &c, Options{}))
	if !strings.Contains(full, `label="skip · generalized (skip)"`) || !strings.Contains(full, `style="dotted"`) {
		t.Errorf("full DOT does not draw the generalized transition apart:\n%s", full)
	}
	mmd := string(render(t, Mermaid, &c, Options{}))
	if !strings.Contains(mmd, "classify --> answer : skip · generalized (skip)") {
		t.Errorf("Mermaid does not caption the generalized transition:\n%s", mmd)
	}
	sum := string(render(t, DOT, &c, Options{Detail: DetailSummary}))
	if strings.Contains(sum, "generalized (skip)") || !strings.Contains(sum, "1 generalized") {
		t.Errorf("summary draws the generalized transition instead of counting it:\n%s", sum)
	}
	var page bytes.Buffer
	if err := Report(&page, &c, ReportOptions{Detail: DetailSummary}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<span class="tag gen">generalized: skip</span>`) {
		t.Errorf("report does not tag the generalized transition")
	}
}

func TestMachineSummaryGolden(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			m := loadFixture(t, name)
			checkGolden(t, name+"-summary.scxml.golden", render(t, SCXML, m, Options{Detail: DetailSummary}))
			checkGolden(t, name+"-summary.xstate.json.golden", render(t, XState, m, Options{Detail: DetailSummary}))
		})
	}
}

// FuzzSummary draws the summary of a model whose two states have arbitrary
// ids and one arbitrary label (so that they share a stage named by it) with
// every writer that has one, and checks that each output keeps its form.
func FuzzSummary(f *testing.F) {
	for _, seed := range [][3]string{
		{"plan", "plan#2", "plan"},
		{`say "hi"`, "a\\b", `x_"y"`},
		{"line\nbreak", "stage.1", "}{"},
		{"stage_1", "_x002E_", "direction LR"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, a, b, label string) {
		for _, s := range []string{a, b, label} {
			if !utf8.ValidString(s) {
				t.Skip()
			}
		}
		if a == "" || b == "" || a == b || isPseudo(a) || isPseudo(b) {
			t.Skip()
		}
		m := &automaton.Model{
			Schema:  automaton.Schema,
			Initial: automaton.StartID,
			States: []automaton.State{
				{ID: automaton.StartID, Label: automaton.StartID, Visits: 20, Sessions: 20},
				{ID: a, Label: label, Visits: 20, Sessions: 20},
				{ID: b, Label: label, Visits: 10, Sessions: 10},
				{ID: automaton.EndID, Label: automaton.EndID, Visits: 20, Sessions: 20},
			},
			Transitions: []automaton.Transition{
				{From: automaton.StartID, To: a, Count: 20, Sessions: 20, Prob: 1},
				{From: a, Event: "ok", To: b, Count: 10, Sessions: 10, Prob: 0.5},
				{From: a, Event: "ok", To: automaton.EndID, Count: 10, Sessions: 10, Prob: 0.5},
				{From: b, Event: "ok", To: automaton.EndID, Count: 10, Sessions: 10, Prob: 1},
			},
			Trunk: []string{a},
		}
		if err := m.Validate(); err != nil {
			t.Skip()
		}
		opt := Options{Detail: DetailSummary}
		p := parseDOT(t, string(render(t, DOT, m, opt)))
		if len(p.nodes) != 4 || len(p.edges) != 4 {
			t.Fatalf("summary DOT has %d boxes and %d edges, want 4 and 4:\n%s", len(p.nodes), len(p.edges), p.text)
		}
		out := render(t, SCXML, m, opt)
		dec := xml.NewDecoder(bytes.NewReader(out))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("SCXML not well-formed: %v\n%s", err, out)
			}
		}
		if !bytes.Contains(out, []byte(`<state id="stage.1"`)) {
			t.Errorf("SCXML has no compound state for the stage:\n%s", out)
		}
		out = render(t, XState, m, opt)
		var machine struct {
			States map[string]json.RawMessage `json:"states"`
		}
		if err := json.Unmarshal(out, &machine); err != nil {
			t.Fatalf("XState not JSON: %v\n%s", err, out)
		}
		if len(machine.States) != 3 {
			t.Errorf("XState has %d top-level states, want 3 (start, the stage, end):\n%s", len(machine.States), out)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(render(t, Mermaid, m, opt)), "\n"), "\n") {
			if strings.Count(line, " : ") > 1 || strings.ContainsAny(line, "\r") {
				t.Errorf("Mermaid line %q does not read as one statement", line)
			}
		}
	})
}

func TestDiffDOTGeneralized(t *testing.T) {
	old := loadFixture(t, "support")
	c := *old
	c.Transitions = append(slices.Clone(old.Transitions), automaton.Transition{From: "classify", Event: "skip", To: "answer", Generalized: "skip"})
	c.Reindex()
	var buf bytes.Buffer
	if err := DiffDOT(&buf, old, &c, automaton.Compare(old, &c, automaton.DiffOptions{})); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `generalized (skip)", color="#1a7f37", fontcolor="#1a7f37", style="dotted"`) {
		t.Errorf("the overlay does not draw the added generalized transition dotted:\n%s", buf.String())
	}
}

func TestReportSummaryStages(t *testing.T) {
	m := loadFixture(t, "orders")
	var page bytes.Buffer
	if err := Report(&page, m, ReportOptions{Detail: DetailSummary}); err != nil {
		t.Fatal(err)
	}
	got := strings.Count(page.String(), `<details class="stage">`)
	if want := len(Stages(m)); got != want {
		t.Errorf("the report opens %d stages, want %d", got, want)
	}
	if !strings.Contains(page.String(), `<section id="stages">`) {
		t.Errorf("the report has no Stages section")
	}
	var full bytes.Buffer
	if err := Report(&full, m, ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(full.String(), `<section id="stages">`) {
		t.Errorf("the full report has a Stages section")
	}
}

// TestSummaryOrange: a summary draws orange the edges that go back up the
// spine, whatever the model's back-edge flag says: c -> a goes up (and is
// flagged), a -> c goes down though the model flags it a back edge.
func TestSummaryOrange(t *testing.T) {
	st := func(id string, visits int) automaton.State {
		return automaton.State{ID: id, Label: id, Visits: visits, Sessions: visits}
	}
	tr := func(from, to string, count int, back bool) automaton.Transition {
		return automaton.Transition{From: from, Event: "ok", To: to, Count: count, Sessions: count, Prob: 0.5, BackEdge: back}
	}
	m := &automaton.Model{
		Schema: automaton.Schema, Version: 1, Initial: automaton.StartID,
		States: []automaton.State{st(automaton.StartID, 10), st("a", 15), st("b", 10), st("c", 15), st(automaton.EndID, 10)},
		Transitions: []automaton.Transition{
			{From: automaton.StartID, To: "a", Count: 10, Sessions: 10, Prob: 1},
			tr("a", "b", 10, false), tr("b", "c", 10, false), tr("c", automaton.EndID, 10, false),
			tr("c", "a", 5, true), tr("a", "c", 5, true),
		},
		Trunk: []string{"a", "b", "c"},
	}
	m.Sort()
	var buf bytes.Buffer
	if err := Formats["dot"](&buf, m, Options{Detail: DetailSummary}); err != nil {
		t.Fatal(err)
	}
	// Boxes are named in the summary's order: n1 __start__, n2 a, n3 b,
	// n4 c. c -> a is written n2->n4 with dir=back, a -> c as n2->n4.
	var ac []string
	for _, line := range strings.Split(buf.String(), "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "n2->n4[") {
			ac = append(ac, line)
		}
	}
	if len(ac) != 2 {
		t.Fatalf("want a -> c and c -> a drawn, got %q:\n%s", ac, buf.String())
	}
	for _, line := range ac {
		if up, orange := strings.Contains(line, `dir="back"`), strings.Contains(line, backEdgeColor); up != orange {
			t.Errorf("drawn up the spine %v, orange %v: %s", up, orange, line)
		}
	}
}

// TestSummarySeldom: an edge off the trunk taken fewer than minDrawn times
// is counted on its box as seldom, not drawn; one taken minDrawn times is
// drawn; the trunk is drawn whatever its counts.
func TestSummarySeldom(t *testing.T) {
	st, tr := sumState, sumMove
	m := &automaton.Model{
		Schema: automaton.Schema, Version: 1, Initial: automaton.StartID,
		States: []automaton.State{st(automaton.StartID, 10), st("a", 10), st("b", 10), st("x", 4), st("y", 5), st(automaton.EndID, 10)},
		Transitions: []automaton.Transition{
			{From: automaton.StartID, To: "a", Count: 10, Sessions: 10, Prob: 1},
			tr("a", "b", 1), tr("a", "x", minDrawn-1), tr("a", "y", minDrawn),
			tr("x", "b", minDrawn-1), tr("y", "b", minDrawn), tr("b", automaton.EndID, 10),
		},
		Trunk: []string{"a", "b"},
	}
	m.Sort()
	sm := summarize(m)
	drawn := map[string]bool{}
	for _, e := range sm.edges {
		drawn[sm.nodes[e.from].states[0].ID+" -> "+sm.nodes[e.to].states[0].ID] = true
	}
	for mv, want := range map[string]bool{"a -> b": true, "a -> y": true, "y -> b": true, "a -> x": false, "x -> b": false} {
		if drawn[mv] != want {
			t.Errorf("%s drawn %v, want %v", mv, drawn[mv], want)
		}
	}
	for _, n := range sm.nodes {
		if n.key == "state a" && n.hidden.seldom != 1 {
			t.Errorf("a counts %d seldom edges, want 1 (a -> x)", n.hidden.seldom)
		}
	}
}

// TestSummaryEndsFirst: where MaxEdges leaves out some edges, the edges
// into __end__ (where sessions stop) are drawn before busier ones.
func TestSummaryEndsFirst(t *testing.T) {
	st, tr := sumState, sumMove
	m := trunkAB(100)
	const k = 8
	for i := range k {
		q := fmt.Sprintf("q%d", i)
		m.States = append(m.States, st(q, 60))
		m.Transitions = append(m.Transitions, tr("a", q, 50+i), tr(q, "b", 40+i), tr(q, automaton.EndID, minDrawn+1))
		if i > 0 {
			m.Transitions = append(m.Transitions, tr(fmt.Sprintf("q%d", i-1), q, 20+i))
		}
	}
	m.Sort()
	sm := summarize(m)
	if len(sm.edges) != MaxEdges {
		t.Fatalf("%d edges drawn, want MaxEdges (%d): the test needs more edges than that", len(sm.edges), MaxEdges)
	}
	ends := 0
	for _, e := range sm.edges {
		if sm.nodes[e.to].key == automaton.EndID && !e.trunk {
			ends++
		}
	}
	if ends != k {
		t.Errorf("%d of the %d edges into __end__ drawn, want all", ends, k)
	}
	// What the limit leaves out is counted on its box as minor, and every
	// box's reasons add up to what it does not draw.
	minor := 0
	for _, n := range sm.nodes {
		h := n.hidden
		minor += h.minor
		if h.rare+h.generalized+h.seldom+h.minor+h.crossing != h.n {
			t.Errorf("%s: %+v: the reasons do not add up", n.key, h)
		}
	}
	if minor == 0 {
		t.Error("no edge left out by MaxEdges counted as minor")
	}
}

// sumState and sumMove make the states and moves of the summaries' test
// models: a state labelled as its id, a move on "ok".
func sumState(id string, visits int) automaton.State {
	return automaton.State{ID: id, Label: id, Visits: visits, Sessions: visits}
}

func sumMove(from, to string, count int) automaton.Transition {
	return automaton.Transition{From: from, Event: "ok", To: to, Count: count, Sessions: count, Prob: 0.5}
}

// trunkAB is a model of 100 sessions along the trunk a, b, with ab of them
// moving from a to b: the base the summaries' test models add to.
func trunkAB(ab int) *automaton.Model {
	st := sumState
	return &automaton.Model{
		Schema: automaton.Schema, Version: 1, Initial: automaton.StartID,
		States: []automaton.State{st(automaton.StartID, 100), st("a", 100), st("b", 100), st(automaton.EndID, 100)},
		Transitions: []automaton.Transition{
			{From: automaton.StartID, To: "a", Count: 100, Sessions: 100, Prob: 1},
			sumMove("a", "b", ab), sumMove("b", automaton.EndID, 100),
		},
		Trunk: []string{"a", "b"},
	}
}
