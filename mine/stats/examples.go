package stats

import (
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fsmine/fsmine/automaton"
)

// exampleRefs pairs the example ids of a state or transition with their
// links; nil for none.
func exampleRefs(m *automaton.Model, ids []string) []Example {
	if len(ids) == 0 {
		return nil
	}
	out := make([]Example, len(ids))
	for i, id := range ids {
		out[i] = Example{ID: id, URL: sessionURL(m.Params.Link, id)}
	}
	return out
}

// transitionExamples are the examples of a transition; none for a
// generalised one, which no session took.
func transitionExamples(m *automaton.Model, t *automaton.Transition) []Example {
	if t.Generalized != "" {
		return nil
	}
	return exampleRefs(m, t.Examples)
}

// sessionURL is render.SessionURL, which this package cannot import (render
// brings Graphviz): the link template with {session} replaced by the
// path-escaped id, or "" unless that is an http or https URL with a host
// and no user info. TestSessionURL keeps the two the same.
func sessionURL(template, session string) string {
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

// examplesText lists example ids for a text table.
func examplesText(refs []Example) string {
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = cellText(r.ID)
	}
	return strings.Join(ids, " ")
}

// linkLine says where the examples open: "" when the model has no usable
// link template.
func linkLine(m *automaton.Model) string {
	if m.Params.Link == "" || sessionURL(m.Params.Link, "x") == "" {
		return ""
	}
	return "example sessions open at " + cellText(m.Params.Link) + "\n"
}

// cellText is an id for one cell of a text table, as fsmine's text outputs
// write ids: control characters as Go escapes (ESC as \x1b, C1 controls
// as \u0080 ...), invalid UTF-8 bytes as \xHH, U+2028, U+2029 and the
// bidirectional controls escaped, and newline and tab too, which would
// break the row. It is cmd's idText (termText, then newline and tab), which
// cmd's tests pin; the column widths count the escapes.
func cellText(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\x`...)
			b = append(b, "0123456789abcdef"[s[i]>>4], "0123456789abcdef"[s[i]&0xf])
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\t':
			b = append(b, `\t`...)
		case !unicode.IsControl(r) && r != '\u2028' && r != '\u2029' && !bidiControl(r):
			b = append(b, s[i:i+size]...)
		default:
			q := strconv.QuoteRuneToASCII(r)
			b = append(b, q[1:len(q)-1]...)
		}
		i += size
	}
	return string(b)
}

// bidiControl reports whether r reorders the text around it on display
// (U+202A-U+202E, U+2066-U+2069), which can make a name read as another.
func bidiControl(r rune) bool {
	return r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069'
}

// moveText shows a move out of a state: "from -[event]-> to".
func moveText(from, event, to string) string {
	if from == "" {
		from = "?"
	}
	if event == "" {
		return from + " --> " + to
	}
	return from + " -[" + event + "]-> " + to
}

// writeTable writes rows as columns separated by two spaces; right lists
// the columns aligned right. Trailing spaces are trimmed.
func writeTable(b *strings.Builder, rows [][]string, right map[int]bool) {
	var width []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len([]rune(cell)))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len([]rune(cell)))
			if right[i] {
				line.WriteString(pad + cell)
			} else {
				line.WriteString(cell + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}
