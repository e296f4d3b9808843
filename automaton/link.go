package automaton

import (
	"net/url"
	"strings"
)

// SessionURL expands a link template (Params.Link) for a session:
// "{session}" is replaced by the id escaped as a URL path segment. It
// returns "" unless the result is an absolute http or https URL with a
// host and no user info, so that a model file edited to link elsewhere
// (javascript:, data:, a relative path) shows its examples as text only.
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

// Example is an example session as reports give it in JSON: its id and,
// when the model's link template makes an http or https URL of it, the URL.
type Example struct {
	ID  string `json:"id"`
	URL string `json:"url,omitempty"`
}

// Examples pairs example ids (of a state or transition of m) with their
// links under m's template; nil for none.
func (m *Model) Examples(ids []string) []Example {
	if len(ids) == 0 {
		return nil
	}
	out := make([]Example, len(ids))
	for i, id := range ids {
		out[i] = Example{ID: id, URL: SessionURL(m.Params.Link, id)}
	}
	return out
}
