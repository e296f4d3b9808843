package render

import (
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// TestReportConstraints: the report lists the model's constraints, labels
// escaped, and has no such section without them.
func TestReportConstraints(t *testing.T) {
	m := loadFixture(t, "weird")
	if page := report(t, m, ReportOptions{}); strings.Contains(page, `id="constraints"`) {
		t.Fatal("a model without constraints has a Constraints section")
	}
	m.Constraints = []automaton.Constraint{
		{Kind: automaton.ConstraintPrecedence, A: `say "hi"`, B: "plan", Support: 14, Confidence: 1},
		{Kind: automaton.ConstraintOnce, A: "a b", Support: 60, Confidence: 1},
		{Kind: automaton.ConstraintPrecedence, A: "123", B: "end", Or: []string{"x.y"}, Support: 30, Confidence: 1},
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	page := report(t, m, ReportOptions{})
	for _, want := range []string{`<a href="#constraints">Constraints</a>`, `<section id="constraints">`,
		`<code class="id">plan</code> only after <code class="id">say &#34;hi&#34;</code>`, `<code class="id">a b</code> at most once`,
		`<code class="id">end</code> only after <code class="id">123</code> or <code class="id">x.y</code>`} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
