package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
	json "github.com/goccy/go-json"
)

// Mermaid writes m as a Mermaid stateDiagram-v2, laid out left to right.
// __start__ and __end__ are both drawn as [*]. A transition reads
// "a --> b : event · count" ("[*] --> a : count" out of __start__).
// opt.HideRare leaves rare transitions out, as in DOT, and opt.Title
// becomes the diagram's front-matter title; ClusterSep does not apply. A
// generalised transition reads "a --> b : event · generalized (kind)". A
// designed model without counts (Params.Design) has no counts: its transitions read
// "a --> b : event", and it is drawn in full whatever opt.Detail says. With
// opt.Detail DetailSummary it draws the summary DOT draws, each stage
// drawn there as a cluster a composite state; since Mermaid draws no
// transition between states of two composite states, an edge that crosses
// a composite state's border ends at the composite state.
//
// A state whose label differs from its id gets the description
// "label: <label>", as DOT draws it.
//
// Mermaid ids are the state ids with every character other than an ASCII
// letter, digit or underscore replaced by "_", prefixed with "s_" when they
// are a word Mermaid's lexer takes as a keyword (state, note, class,
// default, ...), and made unique with "_2", "_3", ... A state whose
// Mermaid id differs from its id is declared as state "id" as mermaid_id.
// In the quoted id and in transition captions, characters that Mermaid would
// read as syntax (" # : ; % < > &) and a space at either end, which a
// reader trims, are written as Mermaid entity codes (#35; for #, #32; for
// a space), and control characters as Go escapes.
func Mermaid(w io.Writer, m *automaton.Model, opt Options) error {
	m, err := sorted(m)
	if err != nil {
		return err
	}
	if opt.Detail == DetailSummary && !uncounted(m) { // a design is drawn in full
		text, err := mermaidSummary(m, opt)
		if err != nil {
			return err
		}
		_, err = w.Write(text)
		return err
	}
	transitions, states := visible(m, opt)
	names := uniqueNames(stateIDs(states), mermaidID)

	var b bytes.Buffer
	if opt.Title != "" {
		title, err := json.Marshal(shownText(opt.Title))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "---\ntitle: %s\n---\n", title)
	}
	b.WriteString("stateDiagram-v2\n    direction LR\n")
	for _, s := range states {
		if isPseudo(s.ID) {
			continue
		}
		name := names[s.ID]
		if name == s.ID {
			fmt.Fprintf(&b, "    %s\n", name)
		} else {
			// "·" as an entity code: import takes a name ending
			// " · N visits" for a state of the summary map
			fmt.Fprintf(&b, "    state \"%s\" as %s\n", strings.ReplaceAll(mermaidText(s.ID), "·", "#183;"), name)
		}
		if s.Label != s.ID {
			fmt.Fprintf(&b, "    %s : label%s %s\n", name, mermaidText(":"), mermaidText(s.Label))
		}
	}
	end := func(id string) string {
		if isPseudo(id) {
			return "[*]"
		}
		return names[id]
	}
	for _, t := range transitions {
		caption := fmt.Sprint(t.Count)
		if t.Generalized != "" {
			caption = "generalized (" + t.Generalized + ")"
		}
		if t.Event != "" {
			caption = t.Event + " · " + caption
		}
		if uncounted(m) {
			// A design has no counts: the caption is the event, if any.
			if t.Event == "" {
				fmt.Fprintf(&b, "    %s --> %s\n", end(t.From), end(t.To))
				continue
			}
			caption = t.Event
		}
		fmt.Fprintf(&b, "    %s --> %s : %s\n", end(t.From), end(t.To), mermaidText(caption))
	}
	_, err = w.Write(b.Bytes())
	return err
}

// mermaidKeywords are the words that Mermaid's state-diagram lexer takes
// as a statement when a bare id equals them (case-insensitively); tried
// against Mermaid 11, which also reads ids that merely start with one of
// them ("classify", "defaults") as ids.
var mermaidKeywords = map[string]bool{
	"accdescr": true, "acctitle": true, "class": true, "classdef": true,
	"default": true, "direction": true, "end": true, "hide": true,
	"note": true, "scale": true, "state": true, "statediagram": true,
	"style": true,
}

// mermaidID is the Mermaid id for a state id, before uniqueNames.
func mermaidID(id string) string {
	s := asciiWord(id)
	if s == "" || mermaidKeywords[strings.ToLower(s)] {
		return "s_" + s
	}
	return s
}

// mermaidText makes s safe inside a quoted state description and after the
// colon of a transition: entity codes for the characters Mermaid reads as
// syntax and for "direction", which its lexer matches anywhere in a line.
func mermaidText(s string) string {
	var b strings.Builder
	s = strings.ToValidUTF8(s, "\uFFFD")
	for i, r := range s {
		switch {
		case text.Unshown(r):
			b.WriteString(text.HexEscape(r)) // \x0a, not \n: the one form import decodes
		case r == '\\':
			if _, n := text.HexEscapeAt(s, i, text.Unshown); n > 0 {
				b.WriteString("#92;") // the text's own, where import would decode
			} else {
				b.WriteByte('\\')
			}
		case r == '"', r == '#', r == ':', r == ';', r == '%', r == '<', r == '>', r == '&', r == '{', r == '}':
			fmt.Fprintf(&b, "#%d;", r)
		case r >= 0x80 && unicode.IsSpace(r), r == ' ' && (i == 0 || i == len(s)-1):
			// a space other than ASCII's (U+2028, a no-break space), or
			// ASCII's at either end: an entity, so that a reader trimming a
			// line's white space keeps it
			fmt.Fprintf(&b, "#%d;", r)
		default:
			b.WriteRune(r)
		}
	}
	// Break up "direction" by writing its first letter as an entity code.
	out := b.String()
	var c strings.Builder
	for {
		i := indexFoldASCII(out, "direction")
		if i < 0 {
			break
		}
		c.WriteString(out[:i])
		fmt.Fprintf(&c, "#%d;", out[i])
		out = out[i+1:]
	}
	c.WriteString(out)
	return c.String()
}

// indexFoldASCII is strings.Index with ASCII letters matched regardless of
// case; word must be lower-case ASCII.
func indexFoldASCII(s, word string) int {
	for i := 0; i+len(word) <= len(s); i++ {
		j := 0
		for ; j < len(word); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != word[j] {
				break
			}
		}
		if j == len(word) {
			return i
		}
	}
	return -1
}
