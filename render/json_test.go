package render

import (
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// TestXStateJSONNumbersAndEscapes pins the bytes of XState output that
// go-json v0.10.5 changed (1e-07 for 1e-7, \u0008 and \u000c for \b and
// \f) and v0.12 writes as earlier fsmine versions did: a probability below
// 1e-6 as 1e-7, backspace and form feed as \b and \f.
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
// valid JSON (go-json v0.10.5's Indent failed on it).
func TestReportLabelsIndented(t *testing.T) {
	m := loadFixture(t, "orders")
	m.Params.Labels = automaton.RawJSON(`{"rules":[],"big":1e400}`)
	out := report(t, m, ReportOptions{})
	if want := "{\n  &#34;rules&#34;: [],\n  &#34;big&#34;: 1e400\n}"; !strings.Contains(out, want) {
		t.Errorf("report lacks the indented rules %q", want)
	}
}
