package stats

import (
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// transitionExamples are the examples of a transition; none for a
// generalised one, which no session took.
func transitionExamples(m *automaton.Model, t *automaton.Transition) []automaton.Example {
	if t.Generalized != "" {
		return nil
	}
	return m.Examples(t.Examples)
}

// examplesText lists example ids for a text table.
func examplesText(refs []automaton.Example) string {
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = text.Cell(r.ID)
	}
	return strings.Join(ids, " ")
}

// linkLine says where the examples open: "" when the model has no usable
// link template.
func linkLine(m *automaton.Model) string {
	if automaton.SessionURL(m.Params.Link, "x") == "" {
		return ""
	}
	return "example sessions open at " + text.Cell(m.Params.Link) + "\n"
}
