package automaton

import "testing"

func TestSessionURL(t *testing.T) {
	tests := []struct {
		name, template, session, want string
	}{
		{"https", "https://cloud.langfuse.com/project/p1/traces/{session}", "t-1", "https://cloud.langfuse.com/project/p1/traces/t-1"},
		{"http and the id escaped", "http://localhost:3000/sessions/{session}?tab=trace", "a/b c?d#e", "http://localhost:3000/sessions/a%2Fb%20c%3Fd%23e?tab=trace"},
		{"scheme in capitals", "HTTPS://smith.example/r/{session}", "r1", "HTTPS://smith.example/r/r1"},
		{"twice", "https://x.example/{session}/{session}", "s", "https://x.example/s/s"},
		{"no template", "", "s", ""},
		{"javascript", "javascript:alert(1)//{session}", "s", ""},
		{"javascript in capitals", "JavaScript:alert(document.domain)//{session}", "s", ""},
		{"data", "data:text/html,<script>alert(1)</script>{session}", "s", ""},
		{"relative", "/project/p1/traces/{session}", "s", ""},
		{"no scheme", "//evil.example/{session}", "s", ""},
		{"user info", "https://trusted.example@evil.example/{session}", "s", ""},
		{"control character", "https://x.example/\n{session}", "s", ""},
		{"the id cannot make another scheme", "{session}", "javascript:alert(1)", ""},
		{"mailto", "mailto:{session}@x.example", "s", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SessionURL(tt.template, tt.session); got != tt.want {
				t.Errorf("SessionURL(%q, %q) = %q, want %q", tt.template, tt.session, got, tt.want)
			}
		})
	}
}

func TestExamples(t *testing.T) {
	m := &Model{Params: Params{Link: "https://x.example/t/{session}"}}
	got := m.Examples([]string{"a b", "\x1b]8;;evil"})
	want := []Example{{ID: "a b", URL: "https://x.example/t/a%20b"}, {ID: "\x1b]8;;evil", URL: "https://x.example/t/%1B%5D8%3B%3Bevil"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Examples = %q, want %q", got, want)
	}
	m.Params.Link = "javascript:alert(1)//{session}"
	if got := m.Examples([]string{"a"}); len(got) != 1 || got[0].URL != "" {
		t.Errorf("Examples under a javascript: template = %q, want no URL", got)
	}
	if got := m.Examples(nil); got != nil {
		t.Errorf("Examples(nil) = %q, want nil", got)
	}
}
