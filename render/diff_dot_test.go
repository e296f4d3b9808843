package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/goldenfile"
)

func loadDiffFixture(t *testing.T, name string) *automaton.Model {
	t.Helper()
	m, err := automaton.Load(filepath.Join("..", "automaton", "testdata", "diff", name))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDiffDOTGolden(t *testing.T) {
	tests := []struct {
		name, old, new string
	}{
		{"overlay", "old.json", "new.json"},
		{"identical", "old.json", "old.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, new := loadDiffFixture(t, tt.old), loadDiffFixture(t, tt.new)
			var buf bytes.Buffer
			if err := DiffDOT(&buf, old, new, automaton.Compare(old, new, automaton.DiffOptions{})); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "diff", tt.name+".dot")
			if goldenfile.Update() {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("DiffDOT differs from %s (run go test -update and review it):\n%s", golden, got)
			}
		})
	}
}

func TestDiffDOTColours(t *testing.T) {
	old, new := loadDiffFixture(t, "old.json"), loadDiffFixture(t, "new.json")
	var buf bytes.Buffer
	if err := DiffDOT(&buf, old, new, automaton.Compare(old, new, automaton.DiffOptions{})); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := map[string]string{} // first line mentioning each fragment
	for _, l := range strings.Split(out, "\n") {
		lines[strings.TrimSpace(strings.SplitN(l, " [", 2)[0])] = l
	}
	tests := []struct {
		element string // the DOT statement up to its attributes
		has     []string
	}{
		{`"verify"`, []string{diffAdded}},
		{`"human"`, []string{diffRemoved, "dashed"}},
		{`"plan"`, []string{diffChanged, "outflow shift"}},
		{`"answer"`, []string{diffUnchanged}},
		{`"search" -> "verify"`, []string{diffAdded, `ok\n53.3%`}},
		{`"search" -> "answer"`, []string{diffRemoved, "dashed", `ok\n68.2%`}},
		{`"plan" -> "search"`, []string{diffChanged, `80.0% -> 50.0%`}},
		{`"search" -> "__end__"`, []string{diffChanged, `rare -> common`}},
		{`"search" -> "search"`, []string{diffUnchanged, `label="error"`}},
	}
	for _, tt := range tests {
		l, ok := lines[tt.element]
		if !ok {
			t.Errorf("no statement for %s in:\n%s", tt.element, out)
			continue
		}
		for _, h := range tt.has {
			if !strings.Contains(l, h) {
				t.Errorf("%s: %q lacks %q", tt.element, l, h)
			}
		}
	}
	if !strings.Contains(out, `loop {search} grew: max 4 -> 6, p95 2 -> 3`) {
		t.Errorf("caption lacks the loop change:\n%s", out)
	}
}

func TestDiffQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`say "hi"`, `"say \"hi\""`},
		{`trailing\`, `"trailing\\"`},
		{"two\nlines\r", `"two\nlines"`},
	}
	for _, tt := range tests {
		if got := diffQuote(tt.in); got != tt.want {
			t.Errorf("diffQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
