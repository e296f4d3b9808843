package render

import (
	"github.com/fsmine/fsmine/automaton"
)

// exampleLink is an example session as the report shows it: its id, and
// the URL of the session when the model's link template gives one.
type exampleLink struct {
	ID, URL string
}

// examplesOf pairs each example id with its link.
func examplesOf(m *automaton.Model, ids []string) []exampleLink {
	if len(ids) == 0 {
		return nil
	}
	out := make([]exampleLink, len(ids))
	for i, id := range ids {
		out[i] = exampleLink{ID: id, URL: automaton.SessionURL(m.Params.Link, id)}
	}
	return out
}

// hasExamples reports whether any state or transition of m has examples.
func hasExamples(m *automaton.Model) bool {
	for i := range m.States {
		if len(m.States[i].Examples) > 0 {
			return true
		}
	}
	for i := range m.Transitions {
		if len(m.Transitions[i].Examples) > 0 {
			return true
		}
	}
	return false
}
