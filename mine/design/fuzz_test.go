package design_test

import (
	"bytes"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine/design"
)

// FuzzRead feeds every reader arbitrary bytes: none panics, and whatever
// reads is a valid model whose digest is its own, in memory and once
// written.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		"stateDiagram-v2\n[*] --> a\na --> b : go · 3\nb --> [*] : ok\nstate \"x y\" as c {\n[*] --> d\n}\n",
		"stateDiagram-v2\n[*] --> G\nstate G {\nx\n}\nG : label: foo\nG --> [*]\n",
		"stateDiagram-v2\nstate \"b\" as a\nb : label: x\n",
		`<scxml initial="a"><state id="a"><transition event="go" target="b"/></state><final id="b"/></scxml>`,
		`{"initial":"a","states":{"a":{"on":{"go":[{"target":"b"}]}},"b":{"type":"final"}}}`,
		`<scxml xmlns:f="https://github.com/fsmine/fsmine" initial="a"><f:constraint kind="once" a="a" support="1" confidence="1"/><f:loop max_iterations="1"><f:loop_state id="a"/><f:back_edge from="a" event="again" to="a"/></f:loop><state id="a"><transition event="again" target="a"/><transition event="go" target="b" f:prob="0.5"/></state><final id="b"/></scxml>`,
		`{"initial":"a","meta":{"constraints":[{"kind":"once","a":"a","support":1,"confidence":1}],"loops":[{"states":["a"],"back_edges":[{"from":"a","event":"again","to":"a"}],"max_iterations":1}]},"states":{"a":{"on":{"again":"a","go":"b"}},"b":{"type":"final"}}}`,
		`{"nodes":[{"id":"__start__"},{"id":"a"},{"id":"__end__"}],"edges":[{"source":"__start__","target":"a"},{"source":"a","target":"__end__","data":"done","conditional":true}]}`,
		`{"graph":{"hello":"ask","ask":"query_check","query_success":"ask_confirm","yes":"query_book","no":"ask"}}`,
		"stateDiagram-v2\n[*] --> a\xff\na\xff --> [*]\n", // a name its model's file could not write
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range design.Formats() {
			m, err := design.Read(data, design.Options{Path: "fuzz", Format: format, Event: "ok"})
			if err != nil {
				continue
			}
			if err := m.Validate(); err != nil {
				t.Fatalf("%s: read an invalid model: %v", format, err)
			}
			if m.Digest != m.ComputeDigest() {
				t.Fatalf("%s: digest %s, computed %s", format, m.Digest, m.ComputeDigest())
			}
			// and the file written reads back with it
			var buf bytes.Buffer
			if err := m.Write(&buf); err != nil {
				t.Fatalf("%s: writing: %v", format, err)
			}
			if _, err := automaton.Read(&buf); err != nil {
				t.Fatalf("%s: the model written does not read back: %v", format, err)
			}
		}
	})
}
