package render

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/goldenfile"
	"github.com/fsmine/fsmine/internal/text"
)

// fixtures are the hand-made models in testdata/*.model.json.
var fixtures = []string{"orders", "support", "weird"}

// goldenCases are the renderings kept as golden files, for every format
// that has them: testdata/<name>.<ext>.golden.
var goldenCases = []struct {
	name  string
	model string
	opt   Options
}{
	{name: "support", model: "support"},
	{name: "support-hide-rare", model: "support", opt: Options{HideRare: true}},
	{name: "weird", model: "weird"},
	{name: "orders-cluster", model: "orders", opt: Options{ClusterSep: "_", Title: `Orders "v1"`}},
	{name: "orders-cluster-hide-rare", model: "orders", opt: Options{ClusterSep: "_", HideRare: true}},
	{name: "support-summary", model: "support", opt: Options{Detail: DetailSummary}},
	{name: "orders-summary", model: "orders", opt: Options{Detail: DetailSummary, Title: `Orders "v1"`}},
	{name: "weird-summary", model: "weird", opt: Options{Detail: DetailSummary}},
}

// loadFixture reads a hand-made model as it is: its digest, empty or hostile
// in some, is part of what the renderers are tested on.
func loadFixture(t testing.TB, name string) *automaton.Model {
	t.Helper()
	path := filepath.Join("testdata", name+".model.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := automaton.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// checkGolden compares got with testdata/<name>, or rewrites the file
// under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

// render runs f and fails the test on error.
func render(t testing.TB, f Func, m *automaton.Model, opt Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := f(&buf, m, opt); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// shuffled returns a copy of m with its states and transitions reversed,
// to show that output does not depend on the order of a model as a program
// holds it (a model file must hold its transitions sorted, which Validate
// checks, so the copy is indexed, not validated).
func shuffled(t testing.TB, m *automaton.Model) *automaton.Model {
	t.Helper()
	c := *m
	c.States = nil
	for i := len(m.States) - 1; i >= 0; i-- {
		c.States = append(c.States, m.States[i])
	}
	c.Transitions = nil
	for i := len(m.Transitions) - 1; i >= 0; i-- {
		c.Transitions = append(c.Transitions, m.Transitions[i])
	}
	c.Reindex()
	return &c
}

func TestWritersDeterministicAndNil(t *testing.T) {
	for _, format := range FormatNames() {
		f := Formats[format]
		t.Run(format, func(t *testing.T) {
			if err := f(new(bytes.Buffer), nil, Options{}); err != ErrNilModel {
				t.Errorf("nil model: err = %v, want ErrNilModel", err)
			}
			for _, name := range fixtures {
				m := loadFixture(t, name)
				a := render(t, f, m, Options{})
				b := render(t, f, shuffled(t, m), Options{})
				if !bytes.Equal(a, b) {
					t.Errorf("%s: output depends on the order of states and transitions", name)
				}
			}
		})
	}
}

// shown is how pictures show s: a character a picture does not show
// (text.Unshown) as a Go escape, \n, \t and \r by name and the others in
// hex (\x07, not \a: the one form import reads back), and a backslash of
// s's own that reads as one (text.ReadsAsEscape) as \x5c.
func shown(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case text.ReadsAsEscape(s, i):
			b.WriteString(`\x5c`)
		case r == '\n' || r == '\t' || r == '\r':
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		case !text.Unshown(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	return b.String()
}

// TestShownTextTellsApart: a name with a character pictures escape and the
// name that spells the escape out never show alike in a picture (both
// showed as x\x1by); a backslash that reads as no escape stays.
func TestShownTextTellsApart(t *testing.T) {
	for _, pair := range [][2]string{
		{"x\x1by", `x\x1by`}, {"a\nb", `a\nb`}, {"\t", `\t`}, {"\r", `\r`},
		{"\u202e", `\u202e`}, {"\U000e0001", `\U000e0001`}, {"\\\x00", `\\x00`},
	} {
		if a, b := shownText(pair[0]), shownText(pair[1]); a == b {
			t.Errorf("shownText(%q) = shownText(%q) = %q", pair[0], pair[1], a)
		}
	}
	for _, s := range []string{`C:\Users\bob`, `\N \l`, `a\b`, `\x1`, `\`} {
		if got := shownText(s); got != s {
			t.Errorf("shownText(%q) = %q, want it as it is", s, got)
		}
	}
}
