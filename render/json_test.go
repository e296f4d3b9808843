package render

import (
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// TestXStateJSONNumbersAndEscapes pins the bytes of XState output that
// go-json (v0.10.5) would change, which is why xstate.go keeps
// encoding/json: a probability below 1e-6 is written 1e-7 (go-json:
// 1e-07), backspace and form feed as \b and \f (go-json: \u0008, \u000c).
func TestXStateJSONNumbersAndEscapes(t *testing.T) {
	m := loadFixture(t, "orders")
	for i := range m.States {
		if m.States[i].ID == "help" {
			m.States[i].Label = "help\b\f<&>"
		}
	}
	for i := range m.Transitions {
		if m.Transitions[i].From == "order_create" && m.Transitions[i].To == "help" {
			m.Transitions[i].Prob = 1e-7
		}
	}
	out := string(render(t, XState, m, Options{}))
	for _, want := range []string{`"label": "help\b\f<&>"`, `"prob": 1e-7,`} {
		if !strings.Contains(out, want) {
			t.Errorf("XState output lacks %s:\n%s", want, out)
		}
	}
}

// TestReportLabelsIndented checks that the report shows the label rules
// indented even when they hold a number past float64's range, which is
// valid JSON; go-json's Indent (v0.10.5) fails on it, which is why
// report.go keeps encoding/json.
func TestReportLabelsIndented(t *testing.T) {
	m := loadFixture(t, "orders")
	m.Params.Labels = automaton.RawJSON(`{"rules":[],"big":1e400}`)
	out := report(t, m, ReportOptions{})
	if want := "{\n  &#34;rules&#34;: [],\n  &#34;big&#34;: 1e400\n}"; !strings.Contains(out, want) {
		t.Errorf("report lacks the indented rules %q", want)
	}
}
