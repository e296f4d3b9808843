package render

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/internal/text"
)

func TestMermaidGolden(t *testing.T) {
	for _, tt := range goldenCases {
		t.Run(tt.name, func(t *testing.T) {
			got := render(t, Mermaid, loadFixture(t, tt.model), tt.opt)
			checkGolden(t, tt.name+".mmd.golden", got)
		})
	}
}

var (
	mermaidDecl       = regexp.MustCompile(`^    (?:state "([^"]*)" as ([A-Za-z0-9_]+)|([A-Za-z0-9_]+))$`)
	mermaidTransition = regexp.MustCompile(`^    (\[\*\]|[A-Za-z0-9_]+) --> (\[\*\]|[A-Za-z0-9_]+) : ([^:;\n]+)$`)
	mermaidEntity     = regexp.MustCompile(`#(\d+);`)
	// mermaidLabel is a state's description "label: X" (the colon an
	// entity code, written E, 0 or \x0058\x01 once tests replace codes).
	mermaidLabel = regexp.MustCompile(`^    ([A-Za-z0-9_]+) : label(?:E|\x0058\x01|0) ([^:;\n]*)$`)
)

// TestMermaidDrawsEveryStateAndTransition reads the diagram back as Mermaid
// does: entity codes are set aside first (Mermaid's encodeEntities), then
// ids are runs of [A-Za-z0-9_], captions hold no ':' or ';', and the entity
// codes decode to the original text.
func TestMermaidDrawsEveryStateAndTransition(t *testing.T) {
	const open, close = "\x00", "\x01" // stand-ins for # and ; of entity codes
	decode := func(s string) string {
		s = strings.NewReplacer(open, "#", close, ";").Replace(s)
		return mermaidEntity.ReplaceAllStringFunc(s, func(e string) string {
			var r rune
			fmt.Sscanf(e, "#%d;", &r)
			return string(r)
		})
	}
	// What Mermaid shows of a text: the characters pictures do not show
	// as hex escapes (\x0a, not \n: the one form import decodes).
	shown := func(s string) string {
		var b strings.Builder
		for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
			if text.Unshown(r) {
				b.WriteString(text.HexEscape(r))
				continue
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			m := loadFixture(t, name)
			out := string(render(t, Mermaid, m, Options{}))
			out = mermaidEntity.ReplaceAllString(out, open+"$1"+close)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if lines[0] != "stateDiagram-v2" || lines[1] != "    direction LR" {
				t.Fatalf("header %q", lines[:2])
			}
			idOf := map[string]string{"[*]": "[*]"}
			var got, want []string
			for _, line := range lines[2:] {
				if sm := mermaidDecl.FindStringSubmatch(line); sm != nil {
					if sm[3] != "" {
						idOf[sm[3]] = sm[3]
					} else {
						if _, dup := idOf[sm[2]]; dup {
							t.Errorf("mermaid id %s declared twice", sm[2])
						}
						idOf[sm[2]] = decode(sm[1])
					}
					continue
				}
				if sm := mermaidLabel.FindStringSubmatch(line); sm != nil {
					if _, ok := idOf[sm[1]]; !ok {
						t.Errorf("line %q: a label of %s, not declared", line, sm[1])
					}
					continue
				}
				sm := mermaidTransition.FindStringSubmatch(line)
				if sm == nil {
					t.Errorf("line %q is neither a state nor a transition", line)
					continue
				}
				for _, id := range sm[1:3] {
					if _, ok := idOf[id]; !ok {
						t.Errorf("line %q: %s not declared", line, id)
					}
				}
				if strings.Contains(strings.ToLower(sm[3]), "direction") {
					t.Errorf("line %q: caption holds a keyword", line)
				}
				got = append(got, idOf[sm[1]]+" | "+decode(sm[3])+" | "+idOf[sm[2]])
			}
			for _, tr := range m.Transitions {
				from, to := shown(tr.From), shown(tr.To)
				if tr.From == "__start__" {
					from = "[*]"
				}
				if tr.To == "__end__" {
					to = "[*]"
				}
				caption := fmt.Sprint(tr.Count)
				if tr.Event != "" {
					caption = tr.Event + " · " + caption
				}
				want = append(want, from+" | "+shown(caption)+" | "+to)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("transitions:\n%q\nwant:\n%q", got, want)
			}
			for _, s := range m.States {
				if s.ID == "__start__" || s.ID == "__end__" {
					continue
				}
				found := false
				for _, id := range idOf {
					found = found || id == shown(s.ID)
				}
				if !found {
					t.Errorf("state %q not declared", s.ID)
				}
			}
		})
	}
}

func TestMermaidText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ok · 3", "ok · 3"},
		{`tool: "x"; #1 50% <b>&`, "tool#58; #34;x#34;#59; #35;1 50#37; #60;b#62;#38;"},
		{"set Direction LR", "set #68;irection LR"},
		{"directiondirection", "#100;irection#100;irection"},
		{"a\nb", `a\x0ab`},
		{`a\x1b`, `a#92;x1b`}, // a backslash of its own where import would decode
		{`a\b`, `a\b`},
		{" go  on ", "#32;go  on#32;"}, // a reader trims a line's ends
		{" ", "#32;"},
	}
	for _, tt := range tests {
		if got := mermaidText(tt.in); got != tt.want {
			t.Errorf("mermaidText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMermaidID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"search", "search"},
		{"a b", "a_b"},
		{"state", "s_state"},
		{"State", "s_State"},
		{"DEFAULT", "s_DEFAULT"},
		{"classify", "classify"},
		{"Notes", "Notes"},
		{"end", "s_end"},
		{"二", "_"},
		{"", "s_"},
	}
	for _, tt := range tests {
		if got := mermaidID(tt.in); got != tt.want {
			t.Errorf("mermaidID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
