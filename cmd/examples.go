package cmd

import (
	"strings"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/render"
)

// exampleRef is an example session as replay and stats give it in JSON: its
// id and, when the model's link template makes an http or https URL of it,
// the URL.
type exampleRef struct {
	ID  string `json:"id"`
	URL string `json:"url,omitempty"`
}

// exampleRefs pairs the example ids of a state or transition with their
// links; nil for none.
func exampleRefs(m *automaton.Model, ids []string) []exampleRef {
	if len(ids) == 0 {
		return nil
	}
	out := make([]exampleRef, len(ids))
	for i, id := range ids {
		out[i] = exampleRef{ID: id, URL: render.SessionURL(m.Params.Link, id)}
	}
	return out
}

// transitionExamples are the examples of a transition; none for a
// generalised one, which no session took.
func transitionExamples(m *automaton.Model, t *automaton.Transition) []exampleRef {
	if t.Generalized != "" {
		return nil
	}
	return exampleRefs(m, t.Examples)
}

// examplesText lists example ids for a terminal, control characters
// escaped.
func examplesText(refs []exampleRef) string {
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = idText(r.ID)
	}
	return strings.Join(ids, " ")
}

// egText is examplesText after "e.g.", or "" for none.
func egText(refs []exampleRef) string {
	if len(refs) == 0 {
		return ""
	}
	return "e.g. " + examplesText(refs)
}

// linkLine says where the examples open, for the text outputs: "" when the
// model has no usable link template.
func linkLine(m *automaton.Model) string {
	if m.Params.Link == "" || render.SessionURL(m.Params.Link, "x") == "" {
		return ""
	}
	return "example sessions open at " + idText(m.Params.Link) + "\n"
}

// idText is an id for one cell of a text table: termText's escapes, and
// newline and tab escaped too, which would break the row.
func idText(s string) string {
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(termText(s))
}
