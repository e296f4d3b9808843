package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// TestDesignDrawnInFull: a designed model has no counts to rank moves by,
// so the summary draws it in full, with events and no counts.
func TestDesignDrawnInFull(t *testing.T) {
	m := &automaton.Model{
		Schema: automaton.Schema, Initial: automaton.StartID,
		Params: automaton.Params{Design: "star"},
		States: []automaton.State{{ID: automaton.StartID, Label: automaton.StartID}, {ID: "ask", Label: "ask"}, {ID: "query_check", Label: "query:x"}, {ID: automaton.EndID, Label: automaton.EndID}},
		Transitions: []automaton.Transition{
			{From: automaton.StartID, To: "ask"},
			{From: "ask", Event: "agent", To: "query_check"},
			{From: "query_check", Event: "ok", To: automaton.EndID},
			{From: "query_check", Event: "empty", To: "ask", BackEdge: true},
		},
	}
	m.Sort()
	for _, format := range []string{"mermaid", "dot"} {
		var summary, full bytes.Buffer
		if err := Formats[format](&summary, m, Options{Detail: DetailSummary}); err != nil {
			t.Fatal(err)
		}
		if err := Formats[format](&full, m, Options{Detail: DetailFull}); err != nil {
			t.Fatal(err)
		}
		if summary.String() != full.String() {
			t.Errorf("%s: the summary of a design differs from its full drawing:\n%s\n---\n%s", format, summary.String(), full.String())
		}
		for _, no := range []string{"visits", " · 0", "0.0%"} {
			if strings.Contains(full.String(), no) {
				t.Errorf("%s: a design's drawing shows %q:\n%s", format, no, full.String())
			}
		}
		if !strings.Contains(full.String(), "empty") {
			t.Errorf("%s: the event empty is not drawn:\n%s", format, full.String())
		}
	}
}

// TestReportDesign: the report's Design vs reality section lists the
// designed moves no session took and the taken moves the design lacks.
func TestReportDesign(t *testing.T) {
	design := &automaton.Model{
		Schema: automaton.Schema, Initial: automaton.StartID,
		Params: automaton.Params{Design: "mermaid"},
		States: []automaton.State{{ID: automaton.StartID, Label: automaton.StartID}, {ID: "classify", Label: "classify"}, {ID: "never_there", Label: "never_there"}, {ID: automaton.EndID, Label: automaton.EndID}},
		Transitions: []automaton.Transition{
			{From: automaton.StartID, To: "classify"},
			{From: "classify", Event: "ok", To: "never_there"},
			{From: "never_there", Event: "ok", To: automaton.EndID},
		},
	}
	design.Sort()
	m := loadFixture(t, "support")
	var page bytes.Buffer
	if err := Report(&page, m, ReportOptions{Design: design, DesignFile: "design.json"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<h2>Design vs reality</h2>`,
		`<h3>Designed moves never taken (2)</h3>`,
		`<code class="id">never_there</code>`,
		`<a href="#design">Design vs reality</a>`,
	} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// TestDesignDOT: each designed move carries how often sessions took it, and
// the moves none took are red, dashed and captioned so.
func TestDesignDOT(t *testing.T) {
	design := &automaton.Model{
		Schema: automaton.Schema, Initial: automaton.StartID,
		Params: automaton.Params{Design: "star"},
		States: []automaton.State{{ID: automaton.StartID, Label: automaton.StartID}, {ID: "ask", Label: "ask"}, {ID: "query_check", Label: "query:x"}, {ID: automaton.EndID, Label: automaton.EndID}},
		Transitions: []automaton.Transition{
			{From: automaton.StartID, To: "ask"},
			{From: "ask", Event: "agent", To: "query_check"},
			{From: "query_check", Event: "ok", To: automaton.EndID},
			{From: "query_check", Event: "empty", To: "ask", BackEdge: true},
		},
	}
	design.Sort()
	d := automaton.DesignDiff{Followed: []automaton.DesignMove{
		{From: automaton.StartID, To: "ask", Count: 7, Sessions: 7},
		{From: "ask", Event: "agent", To: "query:x", Count: 9, Sessions: 6},
		{From: "query:x", Event: "ok", To: automaton.EndID, Count: 1, Sessions: 1},
	}}
	var b bytes.Buffer
	if err := DesignDOT(&b, design, d); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		`label="7 in 7 sessions"`,
		`label="agent · 9 in 6 sessions"`,
		`label="ok · 1 in 1 session"`,
		`label="empty · never taken"`,
		`style="dashed"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the DOT lacks %s:\n%s", want, out)
		}
	}
	var again bytes.Buffer
	if err := DesignDOT(&again, design, d); err != nil || again.String() != out {
		t.Errorf("a second run gives other bytes (%v)", err)
	}
}

func TestDesignDiffText(t *testing.T) {
	d := automaton.DesignDiff{
		Designed: 2, Taken: 2,
		Followed:      []automaton.DesignMove{{From: "a", Event: "ok", To: "b", Count: 3, Sessions: 3}},
		NeverTaken:    []automaton.DesignMove{{From: "b", Event: "ok", To: automaton.EndID}},
		NeverDesigned: []automaton.DesignMove{{From: "b", Event: "oops\x1b[31m", To: automaton.EndID, Count: 2, Sessions: 1, Examples: []string{"s1", "s2"}}},
	}
	var b bytes.Buffer
	o := DiffTextOptions{OldFile: "design.json", NewFile: "mined.json", Escape: func(s string) string { return strings.ReplaceAll(s, "\x1b", `\x1b`) }}
	if err := DesignDiffText(&b, d, "star", 5, o); err != nil {
		t.Fatal(err)
	}
	want := `design design.json (star): 2 moves; mined mined.json: 2 moves taken by 5 sessions
followed 1 of 2 designed moves

designed moves never taken (1)
  b -[ok]-> __end__

taken moves never designed (1)
  b -[oops\x1b[31m]-> __end__  2 in 1 session  e.g. s1 s2
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// tangledDesign is a design of n states where every state may go to every
// other: n·(n-1) moves, far past what the builtin engine lays out.
func tangledDesign(n int) *automaton.Model {
	m := &automaton.Model{Schema: automaton.Schema, Initial: automaton.StartID, Params: automaton.Params{Design: "mermaid"}}
	m.States = append(m.States, automaton.State{ID: automaton.StartID, Label: automaton.StartID}, automaton.State{ID: automaton.EndID, Label: automaton.EndID})
	for i := range n {
		id := fmt.Sprintf("s%02d", i)
		m.States = append(m.States, automaton.State{ID: id, Label: id})
		for j := range n {
			if j != i {
				m.Transitions = append(m.Transitions, automaton.Transition{From: id, Event: "go", To: fmt.Sprintf("s%02d", j)})
			}
		}
	}
	m.Transitions = append(m.Transitions, automaton.Transition{From: automaton.StartID, To: "s00"}, automaton.Transition{From: "s01", Event: "done", To: automaton.EndID})
	m.Sort()
	return m
}

// TestPictureTooTangled: a picture in full of a tangle the builtin engine
// would take minutes over, that a signal may not stop, is refused at once (SVG
// and PNG), and the report's design section says why it has no picture; a
// long chain is no tangle. A 30-state design of every move (870) ran past
// 25 seconds in the report, a 64 KB one past 160.
func TestPictureTooTangled(t *testing.T) {
	design := tangledDesign(30)
	for _, f := range []Func{SVG, PNG} {
		// A design is drawn in full even when the summary is asked for,
		// and has no rare transitions: the advice says so.
		for _, d := range []Detail{DetailFull, DetailSummary} {
			err := f(io.Discard, design, Options{Detail: d})
			if !errors.Is(err, ErrTooTangled) || !strings.Contains(err.Error(), "840 transitions beyond one into each state, more than 400") {
				t.Errorf("err = %v, want ErrTooTangled counting 840", err)
			}
			if err != nil && !strings.HasSuffix(err.Error(), "; a design is drawn in full; lay its DOT out with Graphviz's dot program (--engine dot)") {
				t.Errorf("err = %v, want the advice for a design", err)
			}
		}
	}
	var page bytes.Buffer
	if err := Report(&page, loadFixture(t, "support"), ReportOptions{Design: design}); err != nil {
		t.Fatal(err)
	}
	if want := "No picture: the design&#39;s 872 moves for 32 states are more than the builtin Graphviz lays out"; !strings.Contains(page.String(), want) {
		t.Errorf("the report lacks %q", want)
	}
	if n := tangle(chainModel(5000), false); n > 0 {
		t.Errorf("a chain's tangle is %d, want none", n)
	}
}
