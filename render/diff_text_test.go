package render

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/goldenfile"
	"github.com/fsmine/fsmine/internal/text"
)

// TestDiffWritersGolden writes the text, markdown and JSON forms of the
// diff of automaton/testdata/diff's models (and of one model with itself)
// and compares them with testdata/diff/*.golden; fsmine diff prints the
// same bytes (cmd's TestDiffGolden).
func TestDiffWritersGolden(t *testing.T) {
	tests := []struct {
		name, old, new string
		write          func(io.Writer, *automaton.Diff, DiffTextOptions) error
		color          bool
	}{
		{"text", "old.json", "new.json", DiffText, false},
		{"text-color", "old.json", "new.json", DiffText, true},
		{"markdown", "old.json", "new.json", DiffMarkdown, false},
		{"json", "old.json", "new.json", DiffJSON, false},
		{"identical-text", "old.json", "old.json", DiffText, false},
		{"identical-markdown", "old.json", "old.json", DiffMarkdown, false},
		{"identical-json", "old.json", "old.json", DiffJSON, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, new := loadDiffFixture(t, tt.old), loadDiffFixture(t, tt.new)
			d := automaton.Compare(old, new, automaton.DiffOptions{})
			var buf bytes.Buffer
			if err := tt.write(&buf, d, DiffTextOptions{OldFile: tt.old, NewFile: tt.new, Color: tt.color}); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "diff", tt.name+".golden")
			if goldenfile.Update() {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if buf.String() != string(want) {
				t.Errorf("output differs from %s (run go test -update and review it):\n%s", golden, buf.String())
			}
		})
	}
}

// TestDiffTextEscape: Escape rewrites every line before the colours, so a
// name's escape sequence is escaped and the colour codes are not.
func TestDiffTextEscape(t *testing.T) {
	old := loadDiffFixture(t, "old.json")
	d := automaton.Compare(old, old, automaton.DiffOptions{})
	escape := func(s string) string { return strings.ReplaceAll(s, "\x1b", `\x1b`) }
	for _, color := range []bool{false, true} {
		var buf bytes.Buffer
		if err := DiffText(&buf, d, DiffTextOptions{OldFile: "a\x1b[2Jb.json", NewFile: "new.json", Color: color, Escape: escape}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if !strings.Contains(out, `a\x1b[2Jb.json`) || strings.Contains(out, "\x1b[2J") {
			t.Errorf("color %v: the file name's escape sequence is not escaped:\n%q", color, out)
		}
		if got := strings.Contains(out, "\x1b[31m--- "); got != color {
			t.Errorf("color %v: red header = %v:\n%q", color, got, out)
		}
	}
}

// TestDiffJSONFields pins the documented field names of the JSON form.
func TestDiffJSONFields(t *testing.T) {
	old, new := loadDiffFixture(t, "old.json"), loadDiffFixture(t, "new.json")
	var out bytes.Buffer
	if err := DiffJSON(&out, automaton.Compare(old, new, automaton.DiffOptions{}), DiffTextOptions{OldFile: "old.json", NewFile: "new.json"}); err != nil {
		t.Fatal(err)
	}
	// encoding/json, not go-json: a second parser reads what go-json wrote.
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &obj); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out.String())
	}
	want := []string{"old_file", "new_file", "empty", "differences", "old", "new", "same_digest", "alpha", "correction",
		"transition_tests", "transition_threshold", "state_tests", "state_threshold", "states_added", "states_removed",
		"states_relabeled", "transitions_added", "transitions_removed", "share_changes", "outflow_shifts",
		"rare_flips", "generalized_flips", "loops", "trunk"}
	for _, k := range want {
		if _, ok := obj[k]; !ok {
			t.Errorf("JSON lacks field %q", k)
		}
	}
	if len(obj) != len(want) {
		t.Errorf("JSON has %d fields, want %d: %s", len(obj), len(want), out.String())
	}
}

// TestDiffJSONSmallFloats: p-values and thresholds below 1e-6 keep the
// one-digit exponent fsmine diff has always written (see DiffJSON).
func TestDiffJSONSmallFloats(t *testing.T) {
	d := &automaton.Diff{TransitionThreshold: 5e-7, ShareChanges: []automaton.ShareChange{{From: "a", To: "b", P: 2.3132563827331445e-7}}}
	var out bytes.Buffer
	if err := DiffJSON(&out, d, DiffTextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"transition_threshold": 5e-7,`, `"p": 2.3132563827331445e-7`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, out.String())
		}
	}
}

// TestDiffMarkdownEscapes: a name is a code span with its control and bidi
// characters escaped (a newline and a space no longer show alike), its
// pipes escaped in a table cell; free text has its punctuation escaped.
func TestDiffMarkdownEscapes(t *testing.T) {
	tests := []struct{ in, code, cell string }{
		{"plain", "`plain`", "`plain`"},
		{"a|b", "`a|b`", "`a\\|b`"},
		{"tick`in", "``tick`in``", "``tick`in``"},
		{"`edge", "`` `edge ``", "`` `edge ``"},
		{"two\nlines", "`two\\nlines`", "`two\\nlines`"},
		{"two lines", "`two lines`", "`two lines`"},
		{" padded ", "`  padded  `", "`  padded  `"},
		{"x\x1b[31m\u202e", "`x\\x1b[31m\\u202e`", "`x\\x1b[31m\\u202e`"},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := mdCode(tt.in); got != tt.code {
			t.Errorf("mdCode(%q) = %q, want %q", tt.in, got, tt.code)
		}
		if got := mdCell(tt.in); got != tt.cell {
			t.Errorf("mdCell(%q) = %q, want %q", tt.in, got, tt.cell)
		}
	}
	if got, want := mdText("[x](https://e.example) <a> **b** a|b"), `\[x\]\(https\:\/\/e\.example\) \<a\> \*\*b\*\* a\|b`; got != want {
		t.Errorf("mdText = %q, want %q", got, want)
	}
}

// TestDiffMarkdownHostileNames: names that are Markdown, HTML, terminal
// escapes and pipes come out of DiffMarkdown as code spans, one cell each:
// they were written as they were, links, images and columns included.
func TestDiffMarkdownHostileNames(t *testing.T) {
	const evil = "[Approve this PR](https://evil.example) ![t](https://evil.example/p.png) <a href=\"https://evil.example\">x</a> **BOLD** \x1b[31mRED\x1b[0m \u202eabc a|b|c"
	old := chainModel(2)
	new := renamedState(chainModel(2), "s0001", evil)
	new.Transitions[len(new.Transitions)-1].Generalized = "<b>[k](https://evil.example)</b>"
	var b strings.Builder
	if err := DiffMarkdown(&b, automaton.Compare(old, new, automaton.DiffOptions{}), DiffTextOptions{OldFile: "old.json", NewFile: "new.json"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, r := range out {
		if r != '\n' && text.Unshown(r) {
			t.Errorf("the Markdown holds %U raw", r)
		}
	}
	span := "`[Approve this PR](https://evil.example) ![t](https://evil.example/p.png) <a href=\"https://evil.example\">x</a> **BOLD** \\x1b[31mRED\\x1b[0m \\u202eabc a\\|b\\|c`"
	pipes := func(line string) int { return strings.Count(line, "|") - strings.Count(line, `\|`) }
	head := ""
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "| change |"):
			head = line
		case strings.HasPrefix(line, "| added |") && pipes(line) != pipes(head):
			t.Errorf("a name adds columns to %s:\n%s", head, line)
		}
		if strings.Contains(strings.ReplaceAll(line, span, ""), "](https://evil") {
			t.Errorf("a name is not one code span: %s", line)
		}
	}
	if !strings.Contains(out, "| added | "+span+" | "+span+" |") {
		t.Errorf("the added state is not shown as code spans:\n%s", out)
	}
}

func TestDiffLoopDetail(t *testing.T) {
	stats := func(max, p95 int) *automaton.LoopStats {
		return &automaton.LoopStats{MaxIterations: max, P95Iterations: p95}
	}
	tests := []struct {
		l    automaton.LoopChange
		want string
	}{
		{automaton.LoopChange{Change: automaton.LoopAppeared, New: stats(3, 2)}, "max 3, p95 2"},
		{automaton.LoopChange{Change: automaton.LoopDisappeared, Old: stats(3, 2)}, "was max 3, p95 2"},
		{automaton.LoopChange{Change: automaton.LoopGrew, Old: stats(3, 2), New: stats(5, 2)}, "max 3 -> 5, p95 2 -> 2"},
		{automaton.LoopChange{Change: automaton.LoopReshaped, Joined: []string{"x"}, Left: []string{"y", "z"},
			Old: stats(11, 5), New: stats(9, 4)}, "joined: x; left: y, z; max 11 -> 9, p95 5 -> 4"},
	}
	for _, tt := range tests {
		if got := diffLoopDetail(tt.l); got != tt.want {
			t.Errorf("diffLoopDetail(%s) = %q, want %q", tt.l.Change, got, tt.want)
		}
	}
}
