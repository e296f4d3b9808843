package design_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/goldenfile"
	"github.com/fsmine/fsmine/mine/design"
	"github.com/fsmine/fsmine/render"
)

// TestRoundTrip renders models as fsmine's machine exports, reads them back
// and renders again: the two exports must be the same bytes, and the model
// read back must have the model's digest.
func TestRoundTrip(t *testing.T) {
	models, _ := filepath.Glob("../../render/testdata/*.model.json")
	if len(models) == 0 {
		t.Fatal("no models under render/testdata")
	}
	exports := []struct {
		format string
		write  func(*bytes.Buffer, *automaton.Model, render.Options) error
		detail render.Detail
	}{
		{design.FormatMermaid, wrap(render.Mermaid), render.DetailFull},
		{design.FormatSCXML, wrap(render.SCXML), render.DetailFull},
		{design.FormatSCXML, wrap(render.SCXML), render.DetailSummary},
		{design.FormatXState, wrap(render.XState), render.DetailFull},
		{design.FormatXState, wrap(render.XState), render.DetailSummary},
	}
	for _, path := range models {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := automaton.Decode(bytes.NewReader(raw)) // the fixtures have no digest
		if err != nil {
			t.Fatal(err)
		}
		m.Sort()                     // as fsmine writes models
		m.Digest = m.ComputeDigest() // the fixtures leave it out; fsmine's models have it
		for _, ex := range exports {
			name := filepath.Base(path) + "/" + ex.format + "/" + string(ex.detail)
			t.Run(name, func(t *testing.T) {
				opt := render.Options{Detail: ex.detail}
				var first bytes.Buffer
				if err := ex.write(&first, m, opt); err != nil {
					t.Fatal(err)
				}
				back, err := design.Read(first.Bytes(), design.Options{Path: name, Format: ex.format})
				if err != nil {
					t.Fatalf("reading the export back: %v", err)
				}
				var second bytes.Buffer
				if err := ex.write(&second, back, opt); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(first.Bytes(), second.Bytes()) {
					t.Errorf("export -> import -> export differs:\n--- first\n%s\n--- second\n%s", first.String(), second.String())
				}
				if ex.format != design.FormatMermaid && back.Digest != m.Digest {
					t.Errorf("digest read back = %s, want %s", back.Digest, m.Digest)
				}
			})
		}
		// The Mermaid summary map is a picture that leaves moves out.
		t.Run(filepath.Base(path)+"/mermaid/summary", func(t *testing.T) {
			var b bytes.Buffer
			if err := render.Mermaid(&b, m, render.Options{Detail: render.DetailSummary}); err != nil {
				t.Fatal(err)
			}
			_, err := design.Read(b.Bytes(), design.Options{Path: "map.mmd"})
			if err == nil || !strings.Contains(err.Error(), "an fsmine summary map") {
				t.Errorf("reading the summary map: %v, want it refused as one", err)
			}
		})
	}
}

// TestSCXMLEscapes: of two states, one named with an ESC and one with a
// backslash of its own before x1b, SCXML carries each through the ids,
// labels, events, constraints and loops (the importer guessed by the names
// it knew, and read both constraints as the second state's).
func TestSCXMLEscapes(t *testing.T) {
	const flow = `{"initial":"a","meta":{"constraints":[` +
		`{"kind":"precedence","a":"a","b":"x\u001by","support":1,"confidence":1},` +
		`{"kind":"precedence","a":"a","b":"x\\x1by","support":1,"confidence":1}],` +
		`"loops":[{"states":["x\u001by"],"back_edges":[{"from":"x\u001by","event":"e\u001b","to":"x\u001by"}],"max_iterations":2}]},` +
		`"states":{"a":{"on":{"go":"x\u001by","go2":"x\\x1by"}},` +
		`"x\u001by":{"on":{"e\u001b":"x\u001by","e\\x1b":"z"}},"x\\x1by":{"on":{"next":"z"}},"z":{"meta":{"label":"l\\x1b\u001b"},"type":"final"}}}`
	m, err := design.Read([]byte(flow), design.Options{Path: "e.json"})
	if err != nil {
		t.Fatal(err)
	}
	var first, second bytes.Buffer
	if err := render.SCXML(&first, m, render.Options{}); err != nil {
		t.Fatal(err)
	}
	back, err := design.Read(first.Bytes(), design.Options{Path: "e.scxml"})
	if err != nil {
		t.Fatalf("reading the export back: %v\n%s", err, first.String())
	}
	if back.Digest != m.Digest {
		t.Errorf("digest read back %s, want %s\n%s", back.Digest, m.Digest, first.String())
	}
	if err := render.SCXML(&second, back, render.Options{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Errorf("export -> import -> export differs:\n--- first\n%s\n--- second\n%s", first.String(), second.String())
	}
}

// TestRoundTripConstraints gives a model with hostile labels constraints of
// every kind and argument rules of both kinds, which the fixtures do not
// have, and reads its SCXML and XState exports back: same bytes, same
// digest, the same constraints, loops and argument rules (the exports left
// the rules out, so a guard of the model read back stopped no call).
func TestRoundTripConstraints(t *testing.T) {
	raw, err := os.ReadFile("../../render/testdata/weird.model.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := automaton.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	m.Constraints = []automaton.Constraint{
		{Kind: automaton.ConstraintPrecedence, A: "say \"hi\"", B: "line\nbreak", Support: 5, Confidence: 1},
		{Kind: automaton.ConstraintPrecedence, A: "a b", B: "plan", Or: []string{"<&>'", "二"}, Support: 9, Confidence: 1},
		{Kind: automaton.ConstraintOnce, A: "tool: search|web", Support: 5, Confidence: 0.8333333333333334},
		{Kind: automaton.ConstraintNotBoth, A: "a\\b", B: "naïve step", Support: 7, Confidence: 0.95},
		{Kind: automaton.ConstraintOnce, A: "<&>'", Support: 1, Confidence: 0},
	}
	m.Args = []automaton.ArgRule{
		{Tool: "<&>'", Arg: "url\x1b\"q\"", Kind: automaton.KindUnseenValue, Steps: 7, Sessions: 5,
			Values: []string{"0123456789abcdef", "72d3832ae2f7a1f9"}},
		{Tool: "plan", Arg: "a\\x1bb", Kind: automaton.KindValueWithoutSource, Steps: 3, Sessions: 3,
			From: []string{"line\nbreak", "say \"hi\""}},
		{Tool: "plan", Arg: "amount", Kind: automaton.KindValueWithoutSource, Steps: 2, Sessions: 1},
	}
	// A label with XML's and JSON's special characters, for the last one.
	for i := range m.States {
		if m.States[i].ID == "x.y" {
			m.States[i].Label = "<&>'"
		}
	}
	m.Sort()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	m.Digest = m.ComputeDigest()
	for _, ex := range []struct {
		format string
		write  func(io.Writer, *automaton.Model, render.Options) error
	}{
		{design.FormatSCXML, render.SCXML},
		{design.FormatXState, render.XState},
	} {
		t.Run(ex.format, func(t *testing.T) {
			var first, second bytes.Buffer
			if err := ex.write(&first, m, render.Options{}); err != nil {
				t.Fatal(err)
			}
			back, err := design.Read(first.Bytes(), design.Options{Path: "export", Format: ex.format})
			if err != nil {
				t.Fatalf("reading the export back: %v", err)
			}
			if err := ex.write(&second, back, render.Options{}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first.Bytes(), second.Bytes()) {
				t.Errorf("export -> import -> export differs:\n--- first\n%s\n--- second\n%s", first.String(), second.String())
			}
			if back.Digest != m.Digest {
				t.Errorf("digest read back = %s, want %s", back.Digest, m.Digest)
			}
			if !reflect.DeepEqual(back.Constraints, m.Constraints) {
				t.Errorf("constraints read back:\n%v\nwant\n%v", back.Constraints, m.Constraints)
			}
			if !reflect.DeepEqual(back.Loops, m.Loops) {
				t.Errorf("loops read back:\n%+v\nwant\n%+v", back.Loops, m.Loops)
			}
			if !reflect.DeepEqual(back.Args, m.Args) {
				t.Errorf("argument rules read back:\n%+v\nwant\n%+v", back.Args, m.Args)
			}
		})
	}
}

func wrap(f func(w io.Writer, m *automaton.Model, opt render.Options) error) func(*bytes.Buffer, *automaton.Model, render.Options) error {
	return func(b *bytes.Buffer, m *automaton.Model, opt render.Options) error { return f(b, m, opt) }
}

// TestSTARTasks reads the task graph of every STAR task (testdata/star,
// from RasaHQ/STAR), exports and reads each back (see roundTrip), and
// holds the moves of those that use a convention of
// their own: info_missing branches (bank_balance), the task's own answer
// words and done after every next-round question (trivia), an answer to
// the only node without a next node (spaceship_access_codes), a node
// nothing leads to beside hello (ride_status).
func TestSTARTasks(t *testing.T) {
	flows, _ := filepath.Glob("testdata/star/*.flow.json")
	if len(flows) != 24 {
		t.Fatalf("%d STAR task graphs in testdata/star, want 24", len(flows))
	}
	want := map[string][]string{
		"bank_balance": {
			"bank_ask_childhood_pets_name -[agent]-> bank_inform_cannot_authenticate", // info_missing2
			"bank_ask_childhood_pets_name -[agent]-> query",
			"bank_ask_pin -[agent]-> bank_ask_dob", // info_missing
			"bank_ask_pin -[agent]-> query",
			"query -[empty]-> bank_inform_cannot_authenticate",
		},
		"trivia": {
			"trivia_ask_question -[agent]-> trivia_inform_answer_2_ask_next", // noanswer
			"trivia_ask_question -[agent]-> trivia_inform_answer_correct_ask_next",
			"trivia_ask_question -[agent]-> trivia_inform_answer_incorrect_ask_next",
			"trivia_inform_answer_2_ask_next -[agent]-> anything_else", // done
			"trivia_inform_answer_correct_ask_next -[agent]-> anything_else",
			"trivia_inform_answer_incorrect_ask_next -[agent]-> anything_else",
		},
		"spaceship_access_codes": {"anything_else -[agent]-> spaceship_bye"},
		"meeting_schedule": { // yes and no answer the question the failed query leads to
			"meeting_inform_unavailable_ask_different_time -[agent]-> query",
			"meeting_inform_unavailable_ask_different_time -[agent]-> goodbye_1",
			"meeting_inform_confirmed -[agent]-> __end__",
		},
		"ride_status": {"ride_provide_booking_status -[agent]-> anything_else"},
	}
	var digests bytes.Buffer // what each flow reads to, held by a golden file
	for _, path := range flows {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := design.Read(data, design.Options{Path: filepath.Base(path)})
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		fmt.Fprintf(&digests, "%s %s\n", filepath.Base(path), m.Digest)
		if m.Params.Design != design.FormatSTAR {
			t.Errorf("%s: params.design = %q, want star", path, m.Params.Design)
		}
		roundTrip(t, m)
		moves := map[string]bool{}
		for _, tr := range m.Transitions {
			moves[tr.From+" -["+tr.Event+"]-> "+tr.To] = true
		}
		for _, mv := range want[strings.TrimSuffix(filepath.Base(path), ".flow.json")] {
			if !moves[mv] {
				t.Errorf("%s: no move %s", path, mv)
			}
		}
	}
	goldenfile.Check(t, "testdata/star.digests", digests.Bytes())
}

// TestSTARWordsNoted: a key nothing leads to beside hello is read as an
// answer word of the task's own, and the reader says so; two words that
// make one move make it once.
func TestSTARWordsNoted(t *testing.T) {
	var notes []string
	m, err := design.Read([]byte(`{"graph":{"hello":"ask_q","right":"next_ask_more","wrong":"next_ask_more"}}`),
		design.Options{Path: "w.flow.json", Note: func(msg string) { notes = append(notes, msg) }})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(notes, "\n"), `w.flow.json: nothing leads to "right", "wrong": read as answer words of the task's own`; got != want {
		t.Errorf("notes:\n%s\nwant:\n%s", got, want)
	}
	n := 0
	for _, tr := range m.Transitions {
		if tr.From == "ask_q" && tr.To == "next_ask_more" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d moves ask_q -> next_ask_more, want 1", n)
	}
}

// TestSTARAnswerLoops: where no other node asks, an answer that leads back
// to an open question follows it, whichever answer word loops.
func TestSTARAnswerLoops(t *testing.T) {
	for _, graph := range []string{
		`{"hello":"x_ask_more","yes":"x_ask_more","no":"bye"}`,
		`{"hello":"x_ask_more","no":"x_ask_more","yes":"bye"}`,
		`{"hello":"x_ask_more","done":"x_ask_more","no":"bye"}`,
	} {
		m, err := design.Read([]byte(`{"graph":`+graph+`}`), design.Options{Path: "l.flow.json"})
		if err != nil {
			t.Errorf("%s: %v", graph, err)
			continue
		}
		var got []string
		for _, tr := range m.Transitions {
			got = append(got, tr.From+" -> "+tr.To)
		}
		want := "__start__ -> hello, bye -> __end__, hello -> x_ask_more, x_ask_more -> bye, x_ask_more -> x_ask_more"
		if strings.Join(got, ", ") != want {
			t.Errorf("%s: moves %s, want %s", graph, strings.Join(got, ", "), want)
		}
	}
}

func TestSTARRideBook(t *testing.T) {
	const flow = `{"task": "book_ride", "graph": {
  "hello": "ask_name",
  "ask_name": "ride_inform_search_criteria",
  "ride_inform_search_criteria": "query_check",
  "query_success": "ride_ask_confirm_booking",
  "query_failure": "ride_inform_nothing_found",
  "yes": "query_book",
  "no": "ride_inform_search_criteria",
  "query_book": "ride_confirm_booking",
  "ride_confirm_booking": "anything_else"}}`
	m, err := design.Read([]byte(flow), design.Options{Path: "ride_book.flow.json"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range m.Transitions {
		got = append(got, tr.From+" -["+tr.Event+"]-> "+tr.To)
	}
	want := []string{
		"__start__ -[]-> hello",
		"anything_else -[agent]-> __end__",
		"ask_name -[agent]-> ride_inform_search_criteria",
		"hello -[agent]-> ask_name",
		"query_book -[ok]-> ride_confirm_booking",
		"query_check -[empty]-> ride_inform_nothing_found",
		"query_check -[ok]-> ride_ask_confirm_booking",
		"ride_ask_confirm_booking -[agent]-> query_book",
		"ride_ask_confirm_booking -[agent]-> ride_inform_search_criteria",
		"ride_confirm_booking -[agent]-> anything_else",
		"ride_inform_nothing_found -[agent]-> __end__",
		"ride_inform_search_criteria -[agent]-> query_check",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("transitions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, tr := range m.Transitions {
		loop := tr.From == "ride_ask_confirm_booking" && tr.To == "ride_inform_search_criteria"
		if tr.BackEdge != loop {
			t.Errorf("%s -[%s]-> %s: back_edge %v, want %v", tr.From, tr.Event, tr.To, tr.BackEdge, loop)
		}
	}
	if len(m.Loops) != 0 {
		t.Errorf("loops = %v, want none: a design caps no loop", m.Loops)
	}
	if s := m.State("query_book"); s == nil || s.Label != "query:ride_book" {
		t.Errorf("query_book = %+v, want label query:ride_book", s)
	}
}

// TestBadFlows: every problem names the file and the node.
func TestBadFlows(t *testing.T) {
	tests := []struct {
		name, path, format, flow string
		labels                   map[string]string
		want                     string
	}{
		{"dangling target", "d.mmd", "", "stateDiagram-v2\n[*] --> a\na --> [*]\n", map[string]string{}, ""},
		{"dangling xstate", "d.json", "", `{"initial":"a","states":{"a":{"on":{"go":"b"}}}}`, nil,
			`d.json: node "a": its move on "go" goes to "b", which is no state of the machine (a dangling target)`},
		{"dangling scxml", "d.scxml", "", `<scxml initial="a"><state id="a"><transition event="go" target="b"/></state></scxml>`, nil,
			`d.scxml: node "a": line 1: its transition goes to "b", which is no state of the document (a dangling target)`},
		{"targetless scxml", "t.scxml", "", `<scxml initial="a"><state id="a"><transition event="go"/></state></scxml>`, nil,
			`t.scxml: node "a": a transition without a target (one that stays put, or runs only actions) is not supported: name the state it goes to`},
		{"dangling langgraph", "d.json", "", `{"nodes":[{"id":"__start__"},{"id":"a"},{"id":"__end__"}],"edges":[{"source":"__start__","target":"a"},{"source":"a","target":"b"}]}`, nil,
			`d.json: node "a": its move on "" goes to "b", which is no node of the flow (a dangling target)`},
		{"dangling star answer", "t.flow.json", "", `{"graph":{"hello":"query","yes":"bye"}}`, nil,
			`t.flow.json: node "yes": an answer, but no node without a next node asks a question for it to follow (a dangling decision)`},
		// a lone yes that asks its question again: the question has no other
		// way on, so the flow never ends
		{"lone star yes", "y.flow.json", "", `{"graph":{"hello":"plane_ask_more","yes":"plane_ask_more"}}`, nil,
			`y.flow.json: node "hello": in a cycle without exit: "hello", "plane_ask_more" never reach the end`},
		{"no start mermaid", "n.mmd", "", "stateDiagram-v2\na --> b\nb --> [*]\n", nil,
			`n.mmd: no start: no node is marked as where the flow begins`},
		{"no start star", "n.flow.json", "", `{"graph":{"a":"b","b":"a"}}`, nil,
			`n.flow.json: no start: every node follows another one`},
		{"second start star", "s.flow.json", "", `{"graph":{"greet":"ask_x","other":"ask_x"}}`, nil,
			`s.flow.json: node "other": a second start: nothing leads to it, nor to "greet"`},
		{"info_missing that never comes back", "i.flow.json", "", `{"graph":{"hello":"ask_pin","ask_pin":"query","info_missing":"ask_dob"}}`, nil,
			`i.flow.json: node "info_missing": the user lacks information, but its branch never comes back to the flow: which request it follows is unclear`},
		{"info_missing2 alone", "i.flow.json", "", `{"graph":{"hello":"ask_pin","ask_pin":"query","info_missing2":"cannot"}}`, nil,
			`i.flow.json: node "info_missing2": the user lacks information again, but the graph has no "info_missing" before it`},
		{"info_missing branch that loops", "i.flow.json", "", `{"graph":{"hello":"ask_pin","ask_pin":"query","info_missing":"x","x":"y","y":"x"}}`, nil,
			`i.flow.json: node "info_missing": the user lacks information, but its branch never comes back to the flow: which request it follows is unclear`},
		{"empty STAR key", "e.flow.json", "", `{"graph":{"hello":"ask_x","":"ask_x"}}`, nil,
			`e.flow.json: a node with an empty name (leading to "ask_x")`},
		{"no start langgraph", "n.json", "langgraph", `{"nodes":[{"id":"a"}],"edges":[]}`, nil,
			`n.json: no start: no __start__ node`},
		{"cycle without exit", "c.mmd", "", "stateDiagram-v2\n[*] --> a\na --> b : go\nb --> a : back\na --> [*] : x\nb --> c : y\nc --> d : z\nd --> c : w\n", nil,
			`c.mmd: node "c": in a cycle without exit: "c", "d" never reach the end`},
		{"dead end", "e.mmd", "", "stateDiagram-v2\n[*] --> a\na --> b : go\na --> [*] : x\n", nil,
			`e.mmd: node "b": a dead end: no move out of it and it does not end the flow`},
		{"XState key given twice", "dup.json", "", `{"id":"m","initial":"a","states":{"a":{"on":{"go":"b","go":"c"}},"b":{"type":"final"},"c":{"type":"final"}}}`, nil,
			`dup.json: the key "go" is given twice in states.a.on`},
		{"STAR key given twice", "dup.flow.json", "", `{"graph":{"hello":"ask_x","ask_x":"bye","ask_x":"other"}}`, nil,
			`dup.flow.json: the key "ask_x" is given twice in graph`},
		{"XState parallel", "p.json", "", `{"id":"m","type":"parallel","initial":"a","states":{"a":{"type":"final"}}}`, nil,
			`p.json: a parallel machine: not supported; a designed flow is one state at a time`},
		{"XState history", "h.json", "", `{"id":"m","initial":"a","states":{"a":{"on":{"go":"h"}},"h":{"type":"history"}}}`, nil,
			`h.json: node "h": a history state: not supported; a designed flow is one state at a time`},
		{"XState after", "af.json", "", `{"id":"m","initial":"a","states":{"a":{"after":{"1000":"b"}},"b":{"type":"final"}}}`, nil,
			`af.json: node "a": delayed moves ("after"): not supported; give them an event in "on"`},
		{"XState invoke", "iv.json", "", `{"id":"m","initial":"a","states":{"a":{"invoke":{"src":"x","onDone":"b"}},"b":{"type":"final"}}}`, nil,
			`iv.json: node "a": an invoked service ("invoke"): not supported; give its outcomes events in "on"`},
		{"XState onDone", "od.json", "", `{"initial":"form","states":{"form":{"initial":"ask","states":{"ask":{"on":{"ANSWER":"filled","SKIP":"submit"}},"filled":{"type":"final"}},"onDone":"submit"},"submit":{"on":{"OK":"done"}},"done":{"type":"final"}}}`, nil,
			`od.json: node "form": a move when the state is done ("onDone"): not supported; give the moves out of its final children events in "on"`},
		{"XState machine's own on", "mo.json", "", `{"initial":"a","on":{"RESET":"a"},"states":{"a":{"on":{"go":"b"}},"b":{"type":"final"}}}`, nil,
			`mo.json: moves of the machine itself ("on"): not supported; give its states the moves`},
		{"XState machine's own always", "ma.json", "", `{"initial":"a","always":{"target":"b"},"states":{"a":{"on":{"go":"b"}},"b":{"type":"final"}}}`, nil,
			`ma.json: moves of the machine itself ("always"): not supported; give its states the moves`},
		{"XState one id twice", "id.json", "", `{"id":"m","initial":"a","states":{"a":{"on":{"go":"#z"}},"b":{"id":"z","type":"final"},"c":{"id":"z","type":"final"}}}`, nil,
			`id.json: node "c": two states have the id "#z"`},
		{"XState a compound's key is a leaf's", "ck.json", "", `{"id":"m","initial":"a","states":{"a":{"on":{"go":"p"}},"p":{"states":{"x":{"type":"final"}}},"z":{"states":{"p":{"type":"final"}}}}}`, nil,
			`ck.json: node "p": two states have this key (the flow names states by key)`},
		{"JSON that does not parse", "bad.json", "", "{\"graph\": {\"a\": \"b\",}\n}", nil,
			`bad.json: not JSON: line 1, column 21: invalid character '}' looking for beginning of object key string`},
		{"STAR JSON that does not parse", "bad.flow.json", "", "{\"graph\": {\"a\": \"b\",}\n}", nil,
			`bad.flow.json: not a STAR task graph: line 1, column 21: invalid character '}' looking for beginning of object key string`},
		{"SCXML count not a count", "c.scxml", "", `<scxml xmlns="http://www.w3.org/2005/07/scxml" xmlns:fsmine="https://github.com/fsmine/fsmine" version="1.0" initial="a"><state id="a"><transition event="go" target="b" fsmine:count="x"/></state><final id="b"/></scxml>`, nil,
			`c.scxml: line 1: fsmine:count="x" is not a count`},
		{"XState version too large", "v.json", "", `{"id":"m","description":"fsmine model version 99999999999999999999","initial":"a","states":{"a":{"type":"final"}}}`, nil,
			`v.json: the description's model version 99999999999999999999 is not a version (too large)`},
		{"dead end behind a node that never ends", "e2.mmd", "", "stateDiagram-v2\n[*] --> a\na --> b : go\n", nil,
			`e2.mmd: node "b": a dead end: no move out of it and it does not end the flow`},
		{"no end at all", "e3.mmd", "", "stateDiagram-v2\n[*] --> a\na --> b : go\nb --> a : back\n", nil,
			`e3.mmd: node "a": in a cycle without exit: "a", "b" never reach the end`},
		{"unknown syntax", "u.txt", "", "flowchart TD\nA --> B\n", nil,
			`u.txt: unknown syntax: not a Mermaid stateDiagram-v2, SCXML, XState, LangGraph or STAR flow (name one with --from)`},
		{"unknown mermaid line", "u.mmd", "", "stateDiagram-v2\n[*] --> a\na -> b\n", nil,
			`u.mmd: line 3: unknown syntax: "a -> b"`},
		{"label map unmatched", "l.mmd", "", "stateDiagram-v2\n[*] --> a\na --> [*] : x\n", map[string]string{"b": "B"},
			`names.json: node "b": the label map names a node that l.mmd does not have`},
		{"unreachable", "r.mmd", "", "stateDiagram-v2\n[*] --> a\na --> [*] : x\nb --> [*] : x\n", nil,
			`r.mmd: node "b": unreachable from the start`},
		{"scxml loop cap not a count", "l.scxml", "", `<scxml xmlns:f="https://github.com/fsmine/fsmine" initial="a"><f:loop max_iterations="two"/><state id="a"/></scxml>`, nil,
			`l.scxml: line 1: <fsmine:loop> max_iterations="two" is not a count`},
		{"scxml back edge outside a loop", "b.scxml", "", `<scxml xmlns:f="https://github.com/fsmine/fsmine" initial="a"><f:back_edge from="a" event="" to="a"/><state id="a"/></scxml>`, nil,
			`b.scxml: line 1: a <fsmine:back_edge> outside a <fsmine:loop>`},
		{"scxml prob not a number", "p.scxml", "", `<scxml xmlns:f="https://github.com/fsmine/fsmine" initial="a"><state id="a"><transition event="go" target="b" f:prob="high"/></state><final id="b"/></scxml>`, nil,
			`p.scxml: line 1: fsmine:prob="high" is not a number`},
		{"scxml constraint on no label", "c.scxml", "", `<scxml xmlns:f="https://github.com/fsmine/fsmine" initial="a"><f:constraint kind="once" a="zz" support="1" confidence="1"/><state id="a"><transition event="go" target="b"/></state><final id="b"/></scxml>`, nil,
			`c.scxml: invalid model: constraints[0]: label "zz" is no state's`},
		{"xstate loop of no state", "x.json", "xstate", `{"initial":"a","meta":{"loops":[{"states":["zz"],"back_edges":[],"max_iterations":1}]},"states":{"a":{"on":{"go":"b"}},"b":{"type":"final"}}}`, nil,
			`x.json: invalid model: loop 0 names unknown state "zz"`},
		{"not deterministic", "n2.mmd", "", "stateDiagram-v2\n[*] --> a\nstate \"b\" as b1\nstate \"c\" as c1\na --> b1 : go\na --> c1 : go\nb1 --> [*] : x\nc1 --> [*] : x\n", map[string]string{"c": "b"},
			`n2.mmd: invalid model: not deterministic: a -[go]-> label "b" reaches both b and c`},
	}
	// composite states 70 deep, and initial children in a cycle
	deepX, deepS, deepM := `{"type":"final"}`, `<final id="leaf"/>`, "leaf\n"
	for i := 69; i >= 0; i-- {
		deepX = fmt.Sprintf(`{"initial":"g%d","states":{"g%d":%s}}`, i+1, i+1, deepX)
		deepS = fmt.Sprintf(`<state id="g%d">%s</state>`, i, deepS)
		deepM = fmt.Sprintf("state g%d {\n%s}\n", i, deepM)
	}
	const nesting = "composite states nested more than 64 deep, or initial children that lead round in a cycle"
	tests = append(tests, []struct {
		name, path, format, flow string
		labels                   map[string]string
		want                     string
	}{
		{"XState nested too deep", "d.json", "", `{"initial":"g0","states":{"g0":` + deepX + `}}`, nil,
			`d.json: node "g0": the machine's initial state: ` + nesting},
		{"XState initial cycle", "c.json", "", `{"initial":"p","states":{"p":{"initial":"p","states":{"x":{"type":"final"}}}}}`, nil,
			`c.json: node "p": the machine's initial state: ` + nesting},
		{"SCXML nested too deep", "d.scxml", "", `<scxml initial="g0">` + deepS + `</scxml>`, nil,
			`d.scxml: node "g0": the initial state: ` + nesting},
		{"SCXML initial cycle", "c.scxml", "", `<scxml initial="a"><state id="a"><transition event="go" target="p"/></state><state id="p" initial="q"><state id="q" initial="p"><final id="x"/></state></state></scxml>`, nil,
			`c.scxml: node "a": line 1: its transition goes to "p": ` + nesting},
		{"Mermaid nested too deep", "d.mmd", "", "stateDiagram-v2\n[*] --> g0\n" + deepM, nil,
			`d.mmd: node "g0": line 2: ` + nesting},
		// names a decoder would read as U+FFFD: two would become one, and a
		// name of bytes not in UTF-8 the model's own file cannot write
		{"Mermaid name not UTF-8", "u.mmd", "", "stateDiagram-v2\n[*] --> a\xff\na\xff --> [*]\n", nil,
			`u.mmd: line 2: bytes that are not UTF-8`},
		{"Mermaid line too long", "l.mmd", "", "stateDiagram-v2\n[*] --> a\n" + strings.Repeat("a", 16<<20) + " --> [*]\n", nil,
			`l.mmd: line 3: longer than 16 MiB`},
		{"XState name not UTF-8", "u.json", "", "{\"initial\":\"a\",\n\"states\":{\"a\xff\":{\"type\":\"final\"}}}", nil,
			`u.json: line 2: a string holds bytes that are not UTF-8`},
		{"XState half a surrogate pair", "s.json", "", `{"initial":"a\udc00","states":{"a\udc01":{"type":"final"}}}`, nil,
			`s.json: line 1: a string holds \udc00, half of a UTF-16 surrogate pair`},
		{"LangGraph name not UTF-8", "u.json", "langgraph", "{\"nodes\":[{\"id\":\"__start__\"},{\"id\":\"a\xff\"}],\"edges\":[]}", nil,
			`u.json: line 1: a string holds bytes that are not UTF-8`},
		{"STAR half a surrogate pair", "s.flow.json", "", `{"graph":{"hello":"ask_\ud800","ask_\ud800":"bye"}}`, nil,
			`s.flow.json: line 1: a string holds \ud800, half of a UTF-16 surrogate pair`},
		{"label map gives the end's label", "l.mmd", "", "stateDiagram-v2\n[*] --> a\na --> [*] : x\n", map[string]string{"a": "__end__"},
			`names.json: node "a": labelled "__end__", the label of the flow's start or end, which no record of a log carries`},
		{"Mermaid label of the start", "l.mmd", "", "stateDiagram-v2\n[*] --> a\na : label#58; __start__\na --> [*] : x\n", nil,
			`l.mmd: node "a": labelled "__start__", the label of the flow's start or end, which no record of a log carries`},
		{"XState end labelled", "l.json", "", `{"initial":"a","states":{"a":{"on":{"go":"__end__"}},"__end__":{"type":"final","meta":{"label":"zz"}}}}`, nil,
			`l.json: node "__end__": labelled "zz": the start and the end keep their own labels`},
		{"XState wildcard event", "w.json", "", `{"initial":"a","states":{"a":{"on":{"*":"b"}},"b":{"type":"final"}}}`, nil,
			`w.json: node "a": event "*": a wildcard event is not supported: name the events it stands for`},
		{"XState partial wildcard event", "w.json", "", `{"initial":"a","states":{"a":{"on":{"form.*":"b"}},"b":{"type":"final"}}}`, nil,
			`w.json: node "a": event "form.*": a wildcard event is not supported: name the events it stands for`},
		{"SCXML wildcard event", "w.scxml", "", `<scxml initial="a"><state id="a"><transition event="ok go.*" target="b"/></state><final id="b"/></scxml>`, nil,
			`w.scxml: node "a": line 1: event "go.*": a wildcard event is not supported: name the events it stands for`},
		// a value of the wrong kind, in the flow's words and not the decoder's Go types
		{"LangGraph conditional not a boolean", "c.json", "langgraph", "{\"nodes\":[{\"id\":\"__start__\"}],\n\"edges\":[{\"source\":\"__start__\",\"target\":\"a\",\"conditional\":\"yes\"}]}", nil,
			`c.json: not a LangGraph graph: line 2, column 63: edges[0].conditional is a string, want a boolean`},
		{"LangGraph edge without a source", "s.json", "langgraph", `{"nodes":[{"id":"__start__"}],"edges":[{"target":"a"}]}`, nil,
			`s.json: edges[0]: source: missing`},
		{"STAR next node a number", "n.flow.json", "", `{"graph":{"hello":1}}`, nil,
			`n.flow.json: not a STAR task graph: line 1, column 19: graph.hello is a number, want a string`},
		{"XState count not whole", "c.json", "", `{"initial":"a","states":{"a":{"on":{"go":{"target":"b","meta":{"count":-1.5}}}},"b":{"type":"final"}}}`, nil,
			`c.json: node "a": event "go": meta.count is the number -1.5, want a whole number`},
		{"STAR query of no task", ".flow.json", "", `{"graph":{"hello":"query","query_success":"bye"}}`, nil,
			`.flow.json: node "query": a query, but the flow names no task for it: name the file TASK.flow.json, give the graph a "task", or give the query a label in the label map`},
		{"STAR query of no task, labelled", "t.json", "star", `{"task":"","graph":{"hello":"query","query_success":"bye"}}`, map[string]string{"query": "query:book"}, ""},
		{"XState empty meta.id", "e.json", "", `{"initial":"a","states":{"a":{"meta":{"id":""},"on":{"go":"b"}},"b":{"type":"final"}}}`, nil,
			`e.json: node "a": its meta.id is empty: a state needs a name`},
		{"SCXML empty fsmine:id", "e.scxml", "", `<scxml xmlns:f="https://github.com/fsmine/fsmine" initial="a"><state id="a" f:id=""><transition event="go" target="b"/></state><final id="b"/></scxml>`, nil,
			`e.scxml: node "a": line 1: its fsmine:id is empty: a state needs a name`},
	}...)
	// flows too large to be designs: a chain of states, and a fan of moves
	var chain, fan strings.Builder
	chain.WriteString("stateDiagram-v2\n[*] --> s0\n")
	fan.WriteString("stateDiagram-v2\n[*] --> a\nb --> [*]\n")
	for i := range 100_000 {
		fmt.Fprintf(&chain, "s%d --> s%d\n", i, i+1)
		fmt.Fprintf(&fan, "a --> b : e%d\n", i)
	}
	chain.WriteString("s100000 --> [*]\n")
	tests = append(tests, []struct {
		name, path, format, flow string
		labels                   map[string]string
		want                     string
	}{
		{"too many states", "c.mmd", "", chain.String(), nil, `c.mmd: 100003 states, more than 100000: not a designed flow`},
		{"too many moves", "f.mmd", "", fan.String(), nil, `f.mmd: 100002 moves, more than 100000: not a designed flow`},
	}...)
	tests = append(tests, []struct {
		name, path, format, flow string
		labels                   map[string]string
		want                     string
	}{
		{"label map's label not UTF-8", "l.mmd", "", "stateDiagram-v2\n[*] --> a\na --> [*] : x\n", map[string]string{"a": "caf\xe9"},
			`names.json: node "a": the label map gives it "caf\xe9", which is not valid UTF-8`},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := design.Read([]byte(tt.flow), design.Options{Path: tt.path, Format: tt.format, Labels: tt.labels, LabelsPath: "names.json"})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("read %d states, want error %q", len(m.States), tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err, tt.want)
			}
			if !errors.Is(err, design.ErrFlow) {
				t.Errorf("error %v does not wrap ErrFlow", err)
			}
		})
	}
}

// TestDesignRoundTrip: a design exported as Mermaid (events, no counts),
// SCXML or XState reads back to the same machine, and exports again to the
// same bytes: a STAR task, and a design whose names and events hold what
// logs hold (an ANSI colour's ESC, U+2028, a number for an event, a
// backslash of their own).
func TestDesignRoundTrip(t *testing.T) {
	star := `{"graph": {"hello": "ask", "ask": "query_check", "query_success": "ask_confirm", "query_failure": "nothing_found", "yes": "query_book", "no": "ask", "query_book": "booked"}}`
	hostile := `{"id":"m","initial":"a\u001b[31m","states":{` +
		`"a\u001b[31m":{"on":{"\u001b[0mgo":"b","404":"c\\x1b","bell\u0007":"c\\x1b","lit\\x1b\\u202e":"c\\x1b","new\nline\ttab":"c\\x1b"}},` +
		`"b":{"meta":{"label":"pl\u001ban\u000c"},"on":{"\u2028":"c\\x1b"}},` +
		`"c\\x1b":{"type":"final"}}}`
	// a state Mermaid's accessible description once hid
	acc := `{"initial":"a","states":{"a":{"on":{"go":"accdescribe"}},"accdescribe":{"on":{"next":"b"}},"b":{"type":"final"}}}`
	// spaces at the ends of an event and a label, which a Mermaid reader trims
	spaces := `{"initial":"a","states":{"a":{"on":{"go ":"b"," back":"a"}},"b":{"meta":{"label":"trail "},"on":{"go2":"c"}},"c":{"meta":{"label":" lead"},"type":"final"}}}`
	// an id with both an ESC and a backslash of its own before x1b
	both := `{"initial":"a","states":{"a":{"on":{"go":"x\\x1by@x\u001by"}},"x\\x1by@x\u001by":{"type":"final"}}}`
	// an id that reads like a state of the summary map
	visits := `{"initial":"a · 3 visits","states":{"a · 3 visits":{"on":{"go":"b"}},"b":{"type":"final"}}}`
	for _, flow := range []struct{ path, text string }{{"t.flow.json", star}, {"h.json", hostile}, {"acc.json", acc}, {"s.json", spaces}, {"b.json", both}, {"v.json", visits}} {
		m, err := design.Read([]byte(flow.text), design.Options{Path: flow.path})
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, m)
	}
}

// roundTrip exports m as Mermaid, SCXML and XState, reads each back and
// exports it again: same digest, same bytes.
func roundTrip(t *testing.T, m *automaton.Model) {
	t.Helper()
	for _, ex := range []struct {
		format string
		write  func(io.Writer, *automaton.Model, render.Options) error
	}{
		{design.FormatMermaid, render.Mermaid},
		{design.FormatSCXML, render.SCXML},
		{design.FormatXState, render.XState},
	} {
		var first, second bytes.Buffer
		if err := ex.write(&first, m, render.Options{}); err != nil {
			t.Fatal(err)
		}
		back, err := design.Read(first.Bytes(), design.Options{Path: "export", Format: ex.format})
		if err != nil {
			t.Fatalf("%s: %v\n%s", ex.format, err, first.String())
		}
		if back.Digest != m.Digest {
			t.Errorf("%s: digest read back %s, want %s\n%s", ex.format, back.Digest, m.Digest, first.String())
		}
		if err := ex.write(&second, back, render.Options{}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Errorf("%s: export -> import -> export differs:\n--- first\n%s\n--- second\n%s", ex.format, first.String(), second.String())
		}
	}
}

// TestReadFormats reads a hand-written flow of each format.
func TestReadFormats(t *testing.T) {
	tests := []struct {
		name, path, flow string
		want             []string // from -[event]-> to (label when not the id)
	}{
		{"langgraph", "graph.json", `{"nodes": [{"id": "__start__", "type": "schema", "data": "__start__"},
  {"id": "agent", "type": "runnable", "data": {"id": ["langgraph", "utils", "RunnableCallable"], "name": "agent"}},
  {"id": "tools", "type": "runnable", "data": {"id": ["langgraph", "prebuilt", "ToolNode"], "name": "tools"}},
  {"id": "__end__", "type": "schema", "data": "__end__"}],
 "edges": [{"source": "__start__", "target": "agent"}, {"source": "tools", "target": "agent"},
  {"source": "agent", "target": "tools", "data": "continue", "conditional": true},
  {"source": "agent", "target": "__end__", "data": "end", "conditional": true}]}`,
			[]string{"__start__ -[]-> agent", "agent -[continue]-> tools", "agent -[end]-> __end__", "tools -[ok]-> agent"}},
		{"xstate nested", "m.json", `{"id": "m", "initial": "asking", "states": {
  "asking": {"initial": "name", "states": {"name": {"on": {"NEXT": "email"}}, "email": {"on": {"NEXT": "#m.done"}}}},
  "done": {"type": "final"}}}`,
			[]string{"__start__ -[]-> name", "done -[ok]-> __end__", "email -[NEXT]-> done", "name -[NEXT]-> email"}},
		{"scxml initial element", "f.scxml", `<?xml version="1.0"?>
<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0">
  <initial><transition target="search"/></initial>
  <state id="search"><transition event="found" target="answer"/><transition event="none more" target="search"/></state>
  <state id="answer"><transition target="end"/></state>
  <final id="end"/>
</scxml>`,
			[]string{"__start__ -[]-> search", "answer -[ok]-> end", "end -[ok]-> __end__", "search -[found]-> answer", "search -[more]-> search", "search -[none]-> search"}},
		{"mermaid composite", "f.mmd", `---
title: Returns
---
stateDiagram-v2
    direction TB
    %% a comment
    state "check order" as check
    [*] --> greet
    greet --> collect
    state collect {
        [*] --> reason
        reason --> photo : ok
        photo --> [*]
    }
    collect --> check : ok
    note right of check : the designers' note
    check --> [*] : eligible
    check --> greet : ineligible`,
			[]string{"__start__ -[]-> greet", "check order -[eligible]-> __end__", "check order -[ineligible]-> greet", "greet -[ok]-> reason", "photo -[ok]-> check order", "reason -[ok]-> photo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := design.Read([]byte(tt.flow), design.Options{Path: tt.path, Event: "ok"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tr := range m.Transitions {
				got = append(got, tr.From+" -["+tr.Event+"]-> "+tr.To)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("transitions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestSTARTaskName: the query's label names the task by the file name, else
// by the graph's "task".
func TestSTARTaskName(t *testing.T) {
	flow := `{"task": "book_ride", "graph": {"hello": "query", "query": "bye"}}`
	for path, want := range map[string]string{"ride_book.flow.json": "query:ride_book", "standard input": "query:book_ride"} {
		m, err := design.Read([]byte(flow), design.Options{Path: path, Format: design.FormatSTAR})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.State("query").Label; got != want {
			t.Errorf("%s: query label %q, want %q", path, got, want)
		}
	}
}

// TestMermaidReads holds what the review of the Mermaid reader found: a
// caption is a count only in a counted export (whose moves out of [*] are
// captioned with counts), an event may end in a space other than ASCII's,
// two ids may not name one node, and a composite state may hold only
// another.
func TestMermaidReads(t *testing.T) {
	move := func(t *testing.T, flow, from, to string) automaton.Transition {
		t.Helper()
		m, err := design.Read([]byte(flow), design.Options{Path: "f.mmd"})
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range m.Transitions {
			if tr.From == from && tr.To == to {
				return tr
			}
		}
		t.Fatalf("no move %s -> %s in %+v", from, to, m.Transitions)
		return automaton.Transition{}
	}
	if tr := move(t, "stateDiagram-v2\n[*] --> A\nA --> B : 404\nB --> [*]\n", "A", "B"); tr.Event != "404" || tr.Count != 0 {
		t.Errorf("a design's caption 404: event %q count %d, want the event 404", tr.Event, tr.Count)
	}
	if tr := move(t, "stateDiagram-v2\n[*] --> A : 3\nA --> B : go · 2\nB --> [*] : 2\n", "A", "B"); tr.Event != "go" || tr.Count != 2 {
		t.Errorf("a counted export's caption go · 2: event %q count %d", tr.Event, tr.Count)
	}
	if tr := move(t, "stateDiagram-v2\n[*] --> A\nA --> B : #8232;\nB --> [*]\n", "A", "B"); tr.Event != "\u2028" {
		t.Errorf("the event U+2028, as render.Mermaid writes it, read as %q", tr.Event)
	}
	if tr := move(t, "stateDiagram-v2\n\u00a0\u00a0[*] --> A\n\u00a0\u00a0A --> B : go\u00a0\nB --> [*]\n", "A", "B"); tr.Event != "go" {
		t.Errorf("lines indented by pasted no-break spaces: event %q", tr.Event)
	}
	if tr := move(t, "stateDiagram-v2\n[*] --> A\nA --> B : retry\\next\nB --> [*]\n", "A", "B"); tr.Event != `retry\next` {
		t.Errorf("a hand-written backslash read as %q", tr.Event)
	}
	if tr := move(t, "stateDiagram-v2\n[*] --> A\nA --> B : \\x1b[0mgo\nB --> [*]\n", "A", "B"); tr.Event != "\x1b[0mgo" {
		t.Errorf("render's escape of an ESC read as %q", tr.Event)
	}
	if tr := move(t, "stateDiagram-v2\n[*] --> A : 1\nA --> B : 404\nB --> C : go\nC --> [*]\n", "A", "B"); tr.Event != "404" || tr.Count != 0 {
		t.Errorf("a design captioning its start with a number: event %q count %d, want the event 404", tr.Event, tr.Count)
	}
	if tr := move(t, "\uFEFFstateDiagram-v2\n[*] --> A\nA --> B : go\nB --> [*]\n", "A", "B"); tr.Event != "go" {
		t.Errorf("a flow after a byte-order mark: %+v", tr)
	}
	if tr := move(t, "stateDiagram-v2\n[*] --> a\na --> accdescribe : go\naccdescribe --> acctitles : next\nacctitles --> [*]\n", "accdescribe", "acctitles"); tr.Event != "next" {
		t.Errorf("states named accdescribe and acctitles (no accessible title or description): %+v", tr)
	}
	if tr := move(t, "stateDiagram-v2\naccTitle : Rides\naccDescr: one move\naccDescr {\nA flow that\n--> books rides\n}\n[*] --> a\naccDescr { on one line } a --> b : go\nb --> [*]\n", "a", "b"); tr.Event != "go" {
		t.Errorf("a flow with an accessible title and descriptions: %+v", tr)
	}
	nested := "stateDiagram-v2\n[*] --> P\nstate P {\nstate Q {\n[*] --> a\na --> b : go\nb --> [*]\n}\n}\nP --> [*]\n"
	if tr := move(t, nested, "a", "b"); tr.Event != "go" {
		t.Errorf("a composite holding only a composite: %+v", tr)
	}
	for _, tc := range []struct{ flow, want string }{
		{"stateDiagram-v2\nstate \"X\" as A\nstate \"X\" as B\n[*] --> A\nA --> B : go\nB --> [*]\n", `f.mmd: line 3: the states "A" and "B" are both named "X"`},
		{"stateDiagram-v2\nB\nstate \"B\" as A\n[*] --> A\nA --> B : go\nB --> [*]\n", `f.mmd: line 3: the states "B" and "A" are both named "B"`},
		{"stateDiagram-v2\nstate \"X\" as A\nstate \"Y\" as A\n[*] --> A\nA --> [*]\n", `f.mmd: line 3: the state "A" is named twice, "X" and "Y"`},
		// a label for what is no node of the flow: these panicked
		{"stateDiagram-v2\n[*] --> G\nstate G {\nx\n}\nG : label: foo\nG --> [*]\n", `f.mmd: node "G": line 6: a label for a composite state: only a state of the flow has one`},
		{"stateDiagram-v2\nstate \"b\" as a\nb : label: x\n", `f.mmd: line 3: the states "a" and "b" are both named "b"`},
		// and one that was dropped
		{"stateDiagram-v2\n[*] --> G\nG : label: foo\nstate G {\nx\n}\nG --> [*]\n", `f.mmd: node "G": line 4: a composite state, labelled before as a state: only a state of the flow has a label`},
	} {
		_, err := design.Read([]byte(tc.flow), design.Options{Path: "f.mmd"})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %s", tc.flow, err, tc.want)
		}
	}
}

// TestHexUnescapeForms: only the forms render.SCXML writes decode (\x
// below 0x80, \u below 0x10000, \U above, a valid rune XML cannot carry,
// or a backslash).
func TestHexUnescapeForms(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`a\x1bb`, "a\x1bb"},
		{`a\ufffeb`, "a\ufffeb"},
		{`a\u202eb`, `a\u202eb`},         // XML carries it: SCXML does not escape it
		{`a\x5cx1b`, `a\x1b`},            // a backslash of the text's own
		{`a\x41b`, `a\x41b`},             // A is no escaped rune
		{`a\x80b`, `a\x80b`},             // render writes \u0080
		{`a\u001bb`, `a\u001bb`},         // render writes \x1b
		{`a\U00110000b`, `a\U00110000b`}, // no rune
		{`a\ud800b`, `a\ud800b`},         // a surrogate
		{`a\x1`, `a\x1`},                 // cut short
		{`a\b`, `a\b`},
	} {
		got, _ := design.HexUnescapeForTest(tc.in)
		if got != tc.want {
			t.Errorf("hexUnescape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestReadEventNotUTF8: the event of moves a flow names none for goes into
// the model, which could not write it.
func TestReadEventNotUTF8(t *testing.T) {
	_, err := design.Read([]byte("stateDiagram-v2\n[*] --> a\na --> [*]\n"), design.Options{Path: "e.mmd", Event: "caf\xe9"})
	want := `the event of moves the flow names none for, "caf\xe9", is not valid UTF-8`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

// TestMermaidComposites: a composite state is flattened as a stage, every
// state that ends it taking its moves out with the one event the two moves
// give; what cannot be flattened so is refused, naming the composite (an
// exit was kept and the others dropped with their events, and a composite
// with no [*] was entered at its first state).
func TestMermaidComposites(t *testing.T) {
	tests := []struct {
		name, flow string
		want       []string // the moves, or the error
	}{
		{"every exit leaves", `stateDiagram-v2
    [*] --> Comp
    state Comp {
        [*] --> X
        X --> Y : n
        X --> [*]
        Y --> [*]
    }
    Comp --> Done : fin
    Comp --> Abort : cancel
    Done --> [*]
    Abort --> [*]`,
			[]string{"__start__ -[]-> X", "Abort -[ok]-> __end__", "Done -[ok]-> __end__", "X -[cancel]-> Abort", "X -[fin]-> Done", "X -[n]-> Y", "Y -[cancel]-> Abort", "Y -[fin]-> Done"}},
		{"inner exit events kept", `stateDiagram-v2
    [*] --> Comp
    state Comp {
        [*] --> X
        X --> Y : n
        X --> [*] : quit
        Y --> [*] : done
    }
    Comp --> Done
    Done --> [*]`,
			[]string{"__start__ -[]-> X", "Done -[ok]-> __end__", "X -[n]-> Y", "X -[quit]-> Done", "Y -[done]-> Done"}},
		{"two starts, into a composite from a composite", `stateDiagram-v2
    [*] --> A
    state A {
        [*] --> a1
        a1 --> [*] : go
    }
    A --> B
    state B {
        [*] --> b1
        [*] --> b2
        b1 --> [*]
        b2 --> [*]
    }
    B --> [*] : end`,
			[]string{"__start__ -[]-> a1", "a1 -[go]-> b1", "a1 -[go]-> b2", "b1 -[end]-> __end__", "b2 -[end]-> __end__"}},
		{"nested exits", `stateDiagram-v2
    [*] --> P
    state P {
        [*] --> Q
        state Q {
            [*] --> q
            q --> [*] : stop
        }
        Q --> [*]
    }
    P --> [*]`,
			[]string{"__start__ -[]-> q", "q -[stop]-> __end__"}},
		{"an event on an exit and on the move out", `stateDiagram-v2
    [*] --> Comp
    state Comp {
        [*] --> X
        X --> Y : n
        X --> [*] : quit
        Y --> [*] : done
    }
    Comp --> Done : fin
    Done --> [*]`,
			[]string{`f.mmd: node "Comp": line 9: its move on "fin", and the move from "X" into its [*] on "quit" (line 6): one flattened move cannot take both events; flatten it by hand, or caption one of the two`}},
		{"an event on a nested exit and on its composite's", `stateDiagram-v2
    [*] --> P
    state P {
        [*] --> Q
        state Q {
            [*] --> q
            q --> [*] : stop
        }
        Q --> [*] : halt
    }
    P --> [*]`,
			[]string{`f.mmd: node "Q": line 9: its move into the [*] of "P" on "halt", and the move from "q" into its own [*] on "stop" (line 7): one flattened move cannot take both events; flatten it by hand, or caption one of the two`}},
		{"an exit no move leaves", `stateDiagram-v2
    [*] --> Comp
    state Comp {
        [*] --> X
        X --> Y : n
        X --> [*] : quit
        Y --> Z : m
    }
    Z --> [*]`,
			[]string{`f.mmd: node "Comp": line 6: "X" ends the composite state, but no move leaves it (a dead end)`}},
		{"no start", `stateDiagram-v2
    [*] --> Comp
    state Comp {
        X --> Y : n
    }
    Y --> [*]`,
			[]string{`f.mmd: node "Comp": line 2: no start: a move enters the composite state, but none of its states follows its [*] (write [*] --> X inside it)`}},
		{"no exit", `stateDiagram-v2
    [*] --> Comp
    state Comp {
        [*] --> X
        X --> Y : n
    }
    Comp --> [*]`,
			[]string{`f.mmd: node "Comp": line 7: a move leaves the composite state, but none of its states moves to its [*] (write X --> [*] inside it)`}},
		// a start or an exit that leads round to its own composite, twice:
		// each way was walked round the cycle (2^64 walks)
		{"starts round a cycle", "stateDiagram-v2\n[*] --> P\nstate P {\n[*] --> P\n[*] --> P\nx\n}\nP --> [*]\n",
			[]string{`f.mmd: node "P": line 2: composite states nested more than 64 deep, or initial children that lead round in a cycle`}},
		{"exits round a cycle", "stateDiagram-v2\n[*] --> P\nstate P {\n[*] --> x\nP --> [*]\nP --> [*] : a\n}\nP --> [*]\n",
			[]string{`f.mmd: node "P": line 8: composite states nested more than 64 deep, or initial children that lead round in a cycle`}},
		{"a caption on the inner start", `stateDiagram-v2
    [*] --> Comp
    state Comp {
        [*] --> X : begin
        X --> [*]
    }
    Comp --> [*]`,
			[]string{`f.mmd: node "Comp": line 4: a caption on the move out of its [*]: the move into the composite state gives the event; caption that one`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := design.Read([]byte(tt.flow), design.Options{Path: "f.mmd", Event: "ok"})
			var got []string
			if err != nil {
				got = []string{err.Error()}
				if !errors.Is(err, design.ErrFlow) {
					t.Errorf("error %v does not wrap ErrFlow", err)
				}
			} else {
				for _, tr := range m.Transitions {
					got = append(got, tr.From+" -["+tr.Event+"]-> "+tr.To)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestSCXMLStructure: SCXML is read as its schema has it. A transition
// is a move only as a child of a state; executable content and data are
// skipped whole, and what SCXML has not there is an error naming the line
// (transitions in an <onentry> or an unknown element were read as moves,
// and a <state> in a <datamodel> as a state); other namespaces are
// skipped whole; a root in another namespace is refused; a cond is noted.
func TestSCXMLStructure(t *testing.T) {
	const head = `<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0" initial="a">` + "\n"
	tests := []struct {
		name, flow string
		want       []string // the moves, or the error
		notes      string
	}{
		{"review's example", head + `  <state id="a"><transition event="go" target="end"/>
    <onentry><transition event="sneaky" target="end"/></onentry>
    <stat id="zz"><transition event="other" target="end"/></stat></state>
  <final id="end"/>
</scxml>`, []string{`f.scxml: line 3: a <transition> inside <onentry>: SCXML has none there`}, ""},
		{"a typo", head + `  <state id="a"><transition event="go" target="end"/>
    <stat id="zz"><transition event="other" target="end"/></stat></state>
  <final id="end"/>
</scxml>`, []string{`f.scxml: line 3: unknown syntax: <stat> is no element of SCXML`}, ""},
		{"a typo in executable content", head + `  <state id="a"><onentry><lgo expr="1"/></onentry><transition event="go" target="end"/></state>
  <final id="end"/>
</scxml>`, []string{`f.scxml: line 2: unknown syntax: <lgo> is no element of SCXML`}, ""},
		{"a state in the datamodel", head + `  <datamodel><state id="zz"/></datamodel>
  <state id="a"><transition event="go" target="end"/></state>
  <final id="end"/>
</scxml>`, []string{`f.scxml: line 2: a <state> inside <datamodel>: SCXML has none there`}, ""},
		{"a transition in a final", head + `  <state id="a"><transition event="go" target="end"/></state>
  <final id="end"><transition event="again" target="a"/></final>
</scxml>`, []string{`f.scxml: line 3: a <transition> inside <final>: SCXML has none there`}, ""},
		{"a root in another namespace", `<scxml xmlns="urn:other" initial="a"><state id="a"/></scxml>`,
			[]string{`f.scxml: line 1: not an SCXML document: <scxml> is in the namespace "urn:other", not SCXML's "http://www.w3.org/2005/07/scxml"`}, ""},
		{"another root", `<html><scxml/></html>`,
			[]string{`f.scxml: line 1: not an SCXML document: the root element is <html>, not <scxml>`}, ""},
		{"executable content, data and extensions skipped", head + `  <datamodel><data id="x"><state id="free"/></data></datamodel>
  <state id="a">
    <onentry><log expr="'hi'"/><if cond="x"><raise event="r"/><else/></if><assign location="x"><any/></assign></onentry>
    <invoke type="http"><content><transition event="free"/></content><finalize><log expr="1"/></finalize></invoke>
    <ext:note xmlns:ext="urn:x"><transition event="hidden" target="end"/><state id="ext"/></ext:note>
    <transition event="go" target="end"><send event="s"><param name="p" expr="1"/></send></transition>
  </state>
  <final id="end"><onexit><log expr="2"/></onexit><donedata><content expr="1"/></donedata></final>
</scxml>`, []string{"__start__ -[]-> a", "a -[go]-> end", "end -[ok]-> __end__"}, ""},
		{"a guard kept, and noted", head + `  <state id="a"><transition event="go" target="end" cond="x &gt; 1"/><transition event="go" target="b"/></state>
  <state id="b"><transition event="next" target="end"/></state>
  <final id="end"/>
</scxml>`, []string{"__start__ -[]-> a", "a -[go]-> b", "a -[go]-> end", "b -[next]-> end", "end -[ok]-> __end__"},
			`f.scxml: node "a": line 2: the guard cond="x > 1" of its transition on "go" is not kept: the model allows the move whatever the guard says`},
		{"no namespace, hand-written", `<scxml initial="a"><state id="a"><onentry><log expr="1"/></onentry><transition event="go" target="b"/></state><final id="b"/></scxml>`,
			[]string{"__start__ -[]-> a", "a -[go]-> b", "b -[ok]-> __end__"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var notes []string
			m, err := design.Read([]byte(tt.flow), design.Options{Path: "f.scxml", Event: "ok", Note: func(msg string) { notes = append(notes, msg) }})
			var got []string
			if err != nil {
				got = []string{err.Error()}
				if !errors.Is(err, design.ErrFlow) {
					t.Errorf("error %v does not wrap ErrFlow", err)
				}
			} else {
				for _, tr := range m.Transitions {
					got = append(got, tr.From+" -["+tr.Event+"]-> "+tr.To)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if n := strings.Join(notes, "\n"); n != tt.notes {
				t.Errorf("notes:\n%s\nwant:\n%s", n, tt.notes)
			}
		})
	}
}

// TestXStateMoves: an event's moves are read as XState takes them (the
// first whose guard passes), guards noted; "" as an event, moves out of a
// final state, an unknown type and a key in the wrong case are refused; a
// target may be an array of one.
func TestXStateMoves(t *testing.T) {
	tests := []struct {
		name, flow string
		want       []string // the moves, or the error
		notes      string
	}{
		{"two targets without guards", `{"initial":"a","states":{"a":{"on":{"go":["b","c"]}},"b":{"type":"final"},"c":{"type":"final"}}}`,
			[]string{`f.json: node "a": event "go": its move to "c" follows the one to "b", which has no guard: XState takes the first move whose guard passes, so never this one (give the first a guard, or drop this one)`}, ""},
		{"a guarded move, then one without", `{"initial":"a","states":{"a":{"on":{"go":[{"target":"b","guard":"g"},{"target":"c"}]}},"b":{"type":"final"},"c":{"type":"final"}}}`,
			[]string{"__start__ -[]-> a", "a -[go]-> b", "a -[go]-> c", "b -[ok]-> __end__", "c -[ok]-> __end__"},
			`f.json: node "a": event "go": the guard "g" of its move to "b" is not kept: the model allows the move whatever the guard says`},
		{"XState 4's cond, an object", `{"initial":"a","states":{"a":{"on":{"go":{"target":"b","cond":{"type":"isOk"}}}},"b":{"type":"final"}}}`,
			[]string{"__start__ -[]-> a", "a -[go]-> b", "b -[ok]-> __end__"},
			`f.json: node "a": event "go": the guard {"type":"isOk"} of its move to "b" is not kept: the model allows the move whatever the guard says`},
		{"an eventless move of XState 4", `{"initial":"a","states":{"a":{"on":{"":"b"}},"b":{"type":"final"}}}`,
			[]string{`f.json: node "a": an eventless move ("" in "on", XState 4's "always"): not supported; give it an event`}, ""},
		{"moves out of a final state", `{"initial":"a","states":{"a":{"on":{"go":"b"}},"b":{"type":"final","on":{"x":"a"}}}}`,
			[]string{`f.json: node "b": a final state with moves ("on"): XState leaves no final state; drop the moves, or the "type"`}, ""},
		{"a type XState does not have", `{"initial":"a","states":{"a":{"on":{"go":"b"}},"b":{"type":"finale"}}}`,
			[]string{`f.json: node "b": its "type" "finale" is no type of XState's (atomic, compound, final, history, parallel)`}, ""},
		{"a key in another case", `{"initial":"a","states":{"a":{"On":{"go":"b"}},"b":{"type":"final"}}}`,
			[]string{`f.json: node "a": the key "On": XState's is "on" (keys are case-sensitive)`}, ""},
		{"XState 3's parallel", `{"initial":"a","states":{"a":{"parallel":true,"states":{"x":{"type":"final"}}}}}`,
			[]string{`f.json: node "a": "parallel": true: not supported; a designed flow is one state at a time`}, ""},
		{"keys XState skips", `{"id":"m","context":{},"predictableActionArguments":true,"preserveActionOrder":true,"schema":{},"tsTypes":{},"types":{},"version":"1","initial":"a",
  "states":{"a":{"description":"d","tags":["t"],"entry":["x"],"exit":"y","params":{},"bogusKey":1,"on":{"go":{"target":["b"],"actions":["z"],"description":"move"}}},"b":{"type":"final","output":{}}}}`,
			[]string{"__start__ -[]-> a", "a -[go]-> b", "b -[ok]-> __end__"}, ""},
		{"several targets", `{"initial":"a","states":{"a":{"on":{"go":{"target":["b","c"]}}},"b":{"type":"final"},"c":{"type":"final"}}}`,
			[]string{`f.json: node "a": event "go": several targets of one move are not supported`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var notes []string
			m, err := design.Read([]byte(tt.flow), design.Options{Path: "f.json", Event: "ok", Note: func(msg string) { notes = append(notes, msg) }})
			var got []string
			if err != nil {
				got = []string{err.Error()}
				if !errors.Is(err, design.ErrFlow) {
					t.Errorf("error %v does not wrap ErrFlow", err)
				}
			} else {
				for _, tr := range m.Transitions {
					got = append(got, tr.From+" -["+tr.Event+"]-> "+tr.To)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if n := strings.Join(notes, "\n"); n != tt.notes {
				t.Errorf("notes:\n%s\nwant:\n%s", n, tt.notes)
			}
		})
	}
}

// TestDetectAmbiguous: JSON with the keys of two formats is an error
// asking for --from (it was read as the first format that fits), and a
// model of fsmine's own is named as one (it read as XState's "states is an
// array").
func TestDetectAmbiguous(t *testing.T) {
	tests := []struct{ name, path, format, flow, want string }{
		{"STAR and XState", "f.json", "", `{"graph":{"hello":"bye"},"states":{"a":{}}}`,
			`f.json: ambiguous: its keys "graph", "states" fit STAR (--from star) and XState (--from xstate): name its format with --from`},
		{"XState and LangGraph", "f.json", "", `{"nodes":[],"edges":[],"states":{"a":{}}}`,
			`f.json: ambiguous: its keys "states", "nodes" and "edges" fit XState (--from xstate) and LangGraph (--from langgraph): name its format with --from`},
		{"all three", "f.json", "", `{"graph":{},"nodes":[],"edges":[],"states":{}}`,
			`f.json: ambiguous: its keys "graph", "states", "nodes" and "edges" fit STAR (--from star), XState (--from xstate) and LangGraph (--from langgraph): name its format with --from`},
		{"an fsmine model", "model.json", "", `{"schema":"fsmine.automaton/v1","version":1,"initial":"__start__","states":[{"id":"__start__"}],"transitions":[]}`,
			`model.json: already an fsmine model (schema fsmine.automaton/v1), not a designed flow: a design is read from a flow; to edit the model in a design tool, render it as mermaid, scxml or xstate (fsmine render --format xstate) and import that`},
		{"an fsmine model, --from xstate", "model.json", "xstate", `{"schema":"fsmine.automaton/v1","states":[]}`,
			`model.json: already an fsmine model (schema fsmine.automaton/v1), not a designed flow: a design is read from a flow; to edit the model in a design tool, render it as mermaid, scxml or xstate (fsmine render --format xstate) and import that`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := design.Read([]byte(tt.flow), design.Options{Path: tt.path, Format: tt.format})
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v\nwant    %s", err, tt.want)
			}
			if !errors.Is(err, design.ErrFlow) {
				t.Errorf("error %v does not wrap ErrFlow", err)
			}
		})
	}
	// --from settles it, and the file name of a STAR task graph does
	if _, err := design.Read([]byte(`{"graph":{"hello":"bye"},"states":{"a":{}}}`), design.Options{Path: "f.json", Format: design.FormatSTAR}); err != nil {
		t.Errorf("--from star: %v", err)
	}
	if got := design.Detect("t.flow.json", []byte(`{"graph":{},"states":{}}`)); got != design.FormatSTAR {
		t.Errorf("Detect(t.flow.json) = %q, want star", got)
	}
	if got := design.Detect("f.json", []byte(`{"graph":{},"states":{}}`)); got != "" {
		t.Errorf("Detect of ambiguous JSON = %q, want none", got)
	}
}
