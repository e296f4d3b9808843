package render

import (
	"bytes"
	"encoding/json" // an independent reference for valid JSON
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fsmine/fsmine/automaton"
)

// FuzzWriters renders a model whose state id, label and event are
// arbitrary strings with every text writer, and checks that each output
// still has its form: one DOT statement a line with the id recoverable,
// well-formed SCXML whose names decode back, valid XState JSON, Mermaid
// lines that Mermaid's lexer reads as one id and one caption.
func FuzzWriters(f *testing.F) {
	for _, seed := range [][3]string{
		{"plan", "plan", "ok"},
		{`say "hi"`, "say", `a\b`},
		{"line\nbreak", "x\x00y", "tab\tz"},
		{"_x0041_", "état", "二"},
		{"state", "default", "direction LR"},
		{"a:b;c#d%e", "<b>&", "*"},
		{"\xff\xfe", "-", ""},
		{"&", "&", "&"},
		{"&amp;", "&lt;", "&#38;"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, id, label, event string) {
		if id == "" || id == automaton.StartID || id == automaton.EndID || !utf8.ValidString(id) || !utf8.ValidString(label) || !utf8.ValidString(event) {
			t.Skip()
		}
		m := &automaton.Model{
			Schema:  automaton.Schema,
			Initial: automaton.StartID,
			States: []automaton.State{
				{ID: automaton.StartID, Label: automaton.StartID, Visits: 1},
				{ID: id, Label: label, Visits: 2},
				{ID: automaton.EndID, Label: automaton.EndID, Visits: 1},
			},
			Transitions: []automaton.Transition{
				{From: automaton.StartID, To: id, Count: 1, Prob: 1},
				{From: id, Event: event, To: id, Count: 1, Prob: 0.5, BackEdge: true},
				{From: id, Event: event, To: automaton.EndID, Count: 1, Prob: 0.5, Rare: true},
			},
			Trunk: []string{id},
		}
		if err := m.Validate(); err != nil {
			t.Skip()
		}

		// DOT: every statement on one line, the id back from the tooltip
		// (Graphviz reads entities in strings: & is written &amp;).
		out := render(t, DOT, m, Options{ClusterSep: "_"})
		p := parseDOT(t, string(out))
		if len(p.nodes) != 3 || len(p.edges) != 3 {
			t.Fatalf("DOT has %d nodes and %d edges, want 3 and 3:\n%s", len(p.nodes), len(p.edges), out)
		}
		found := false
		for _, attrs := range p.nodes {
			found = found || strings.ReplaceAll(attrs["tooltip"], "&amp;", "&") == shown(id)
		}
		if !found {
			t.Errorf("DOT lost the id %q:\n%s", id, out)
		}

		// SCXML: well-formed, and the names decode back.
		out = render(t, SCXML, m, Options{})
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
		if got := decodeXMLName(t, scxmlID(id)); got != id {
			t.Errorf("SCXML id %q decodes to %q, want %q", scxmlID(id), got, id)
		}

		// XState: valid JSON with both transitions out of the state.
		out = render(t, XState, m, Options{})
		var mc xstateMachine
		if err := json.Unmarshal(out, &mc); err != nil {
			t.Fatalf("XState not JSON: %v", err)
		}
		n := 0
		for _, s := range mc.States {
			n += len(s.On)
		}
		if n != 3 {
			t.Errorf("XState has %d events, want 3:\n%s", n, out)
		}

		// Mermaid: after entity codes, ids are words and captions hold no : or ;.
		out = render(t, Mermaid, m, Options{})
		text := mermaidEntity.ReplaceAllString(string(out), "0") // a digit: a letter could complete a keyword ("dir#34;Ction")
		for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n")[2:] {
			if !mermaidDecl.MatchString(line) && !mermaidTransition.MatchString(line) && !mermaidLabel.MatchString(line) {
				t.Errorf("Mermaid line %q", line)
			}
			if strings.ContainsAny(line, "%#") || indexFoldASCII(line, "direction") >= 0 {
				t.Errorf("Mermaid line %q holds syntax", line)
			}
		}

		// LangGraph: strings are Go-quoted, so no raw newline inside one.
		out = render(t, LangGraph, m, Options{})
		if !bytes.Contains(out, []byte(pyString(id))) {
			t.Errorf("LangGraph lost the id %q", id)
		}
	})
}
