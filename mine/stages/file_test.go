package stages

import "testing"

// TestSuggestionJSONEscapes checks the rules file's escaping: "<", ">"
// and "&" as written, backspace and form feed as \b and \f, as
// encoding/json writes them (go-json v0.10.5 wrote \u0008 and \u000c).
func TestSuggestionJSONEscapes(t *testing.T) {
	s := &Suggestion{Rules: []Rule{{
		Name:  "a<b>&\b\f\u2028\xff",
		Match: map[string]string{"node": `^a\.b$`, "attrs.kind": "x"},
		State: "S",
		Fold:  true,
		Why:   "\"quoted\"\n",
	}}}
	want := "{\n  \"rules\": [\n" +
		`    {"name":"a<b>&\b\f\u2028\ufffd","match":{"attrs.kind":"x","node":"^a\\.b$"},"state":"S","fold":true,"why":"\"quoted\"\n"}` + "\n" +
		"  ],\n  \"unmatched\": \"keep\"\n}\n"
	if got := string(s.JSON()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
