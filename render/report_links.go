package render

import (
	"net/url"
	"strings"

	"github.com/fsmine/fsmine/automaton"
)

// SessionURL expands a link template (automaton.Params.Link) for a session:
// "{session}" is replaced by the id escaped as a URL path segment. It
// returns "" unless the result is an absolute http or https URL with a
// host, so that a model file edited to link elsewhere (javascript:, data:,
// a relative path) shows its examples as text only.
func SessionURL(template, session string) string {
	if template == "" {
		return ""
	}
	s := strings.ReplaceAll(template, "{session}", url.PathEscape(session))
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" || u.User != nil {
		return ""
	}
	if scheme := strings.ToLower(u.Scheme); scheme != "http" && scheme != "https" {
		return ""
	}
	return s
}

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
		out[i] = exampleLink{ID: id, URL: SessionURL(m.Params.Link, id)}
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
