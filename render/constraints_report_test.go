package render

import (
	"errors"
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

// TestDOTFailures: --failures colours each transition by its sessions'
// failure share against the log's and says the share in its caption.
func TestDOTFailures(t *testing.T) {
	m := loadFixture(t, "support")
	if _, err := dotBytes(m, Options{Failures: true}); !errors.Is(err, ErrNoOutcomes) {
		t.Fatalf("a model without outcomes: %v, want ErrNoOutcomes", err)
	}
	m.Source.Outcome = &automaton.Outcome{Sessions: 10, Succeeded: 5}
	for i := range m.Transitions {
		tr := &m.Transitions[i]
		switch i % 3 {
		case 0:
			tr.Outcome = &automaton.Outcome{Sessions: 4, Succeeded: 0} // all failed
		case 1:
			tr.Outcome = &automaton.Outcome{Sessions: 4, Succeeded: 4} // none failed
		}
	}
	out, err := dotBytes(m, Options{Failures: true})
	if err != nil {
		t.Fatal(err)
	}
	page := string(out)
	for _, want := range []string{"100.0% failed", "0.0% failed", `color="#d62728"`, `color="#2ca02c"`} {
		if !strings.Contains(page, want) {
			t.Errorf("DOT lacks %q", want)
		}
	}
	if _, err := dotBytes(m, Options{Failures: true, Detail: DetailSummary}); err == nil {
		t.Error("failure colours on a summary: no error")
	}
}
