package cmd

import (
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

func TestIDText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"s-1", "s-1"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"a\nb\tc", `a\nb\tc`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"ünïcode", "ünïcode"},
	}
	for _, tt := range tests {
		if got := idText(tt.in); got != tt.want {
			t.Errorf("idText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExampleRefs(t *testing.T) {
	tests := []struct {
		name, link string
		want       []exampleRef
		line       string
	}{
		{"https", "https://x.example/t/{session}", []exampleRef{{"a b", "https://x.example/t/a%20b"}, {"\x1b]8;;evil", "https://x.example/t/%1B%5D8%3B%3Bevil"}}, "example sessions open at https://x.example/t/{session}\n"},
		{"javascript", "javascript:alert(1)//{session}", []exampleRef{{"a b", ""}, {"\x1b]8;;evil", ""}}, ""},
		{"none", "", []exampleRef{{"a b", ""}, {"\x1b]8;;evil", ""}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &automaton.Model{Params: automaton.Params{Link: tt.link}}
			got := exampleRefs(m, []string{"a b", "\x1b]8;;evil"})
			if len(got) != len(tt.want) || got[0] != tt.want[0] || got[1] != tt.want[1] {
				t.Errorf("exampleRefs = %q, want %q", got, tt.want)
			}
			if l := linkLine(m); l != tt.line {
				t.Errorf("linkLine = %q, want %q", l, tt.line)
			}
			if s := examplesText(got); s != `a b \x1b]8;;evil` {
				t.Errorf("examplesText = %q", s)
			}
		})
	}
	gen := &automaton.Transition{Generalized: "skip", Examples: []string{"x"}}
	if got := transitionExamples(&automaton.Model{}, gen); got != nil {
		t.Errorf("a generalised transition has examples %v", got)
	}
}
