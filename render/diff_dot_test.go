package render

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/goldenfile"
	"github.com/fsmine/fsmine/internal/text"
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

// renamedState is m with the state from called to everywhere: its id and
// label, its transitions, loops, trunk and variants.
func renamedState(m *automaton.Model, from, to string) *automaton.Model {
	c := *m
	name := func(s string) string {
		if s == from {
			return to
		}
		return s
	}
	c.States = slices.Clone(m.States)
	for i := range c.States {
		c.States[i].ID, c.States[i].Label = name(c.States[i].ID), name(c.States[i].Label)
	}
	c.Transitions = slices.Clone(m.Transitions)
	for i := range c.Transitions {
		c.Transitions[i].From, c.Transitions[i].To = name(c.Transitions[i].From), name(c.Transitions[i].To)
	}
	c.Loops = slices.Clone(m.Loops)
	for i := range c.Loops {
		c.Loops[i].States = slices.Clone(c.Loops[i].States)
		for j, s := range c.Loops[i].States {
			c.Loops[i].States[j] = name(s)
		}
	}
	c.Trunk = slices.Clone(m.Trunk)
	for i, s := range c.Trunk {
		c.Trunk[i] = name(s)
	}
	c.TopVariants = nil
	return &c
}

// TestDiffDOTHostileNames: ids with NUL, ESC, a bidi override, quotes,
// backslashes and newlines are drawn as the model's pictures draw them
// (shownText), so that the DOT holds none of them raw and the built-in
// Graphviz draws the overlay; DiffDOT wrote them as they were, and the
// HTML diff failed on them.
func TestDiffDOTHostileNames(t *testing.T) {
	old, new := loadDiffFixture(t, "old.json"), loadDiffFixture(t, "new.json")
	hostile := map[string]string{"search": "se\x00arch\u202e\x1b[31m", "verify": "ver\"if\ny\\", "plan": "pl\tan\r"}
	for from, to := range hostile {
		old, new = renamedState(old, from, to), renamedState(new, from, to)
	}
	d := automaton.Compare(old, new, automaton.DiffOptions{})
	var buf bytes.Buffer
	if err := DiffDOT(&buf, old, new, d); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, r := range out {
		if r != '\n' && text.Unshown(r) {
			t.Errorf("the DOT holds %U raw:\n%s", r, out)
		}
	}
	for _, want := range []string{`"se\\x00arch\\u202e\\x1b[31m"`, `"ver\"if\\ny\\"`, `"pl\\tan\\r"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the DOT lacks %s:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := DiffReport(&buf, old, new, d, DiffReportOptions{OldFile: "old.json", NewFile: "new.json"}); err != nil {
		t.Fatalf("DiffReport: %v", err)
	}
	if !strings.Contains(buf.String(), "<svg") {
		t.Error("no overlay")
	}
}
