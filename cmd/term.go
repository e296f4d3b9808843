package cmd

import (
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// termSafe returns a writer that shows the control characters of what is
// written through it as Go escapes (ESC as \x1b, DEL as \x7f, C1 controls
// as \u0080 ...), keeping newlines and tabs: text output carries ids, labels,
// events, session ids and file names from logs and models, whose escape
// sequences must not reach a terminal. Each Write must hold whole UTF-8
// characters, as fmt's writes do. Escapes written this way inside a JSON
// string read back as the same characters.
func termSafe(w io.Writer) io.Writer { return termWriter{w} }

type termWriter struct{ w io.Writer }

func (t termWriter) Write(p []byte) (int, error) {
	plain := true
	for _, c := range p {
		if (c < 0x20 || c >= 0x7f) && c != '\n' && c != '\t' {
			plain = false
			break
		}
	}
	if plain {
		return t.w.Write(p)
	}
	if _, err := t.w.Write([]byte(termText(string(p)))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// termText is s with control characters other than newline and tab
// written as Go escapes, and invalid UTF-8 bytes as \xHH.
func termText(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\x`...)
			b = append(b, "0123456789abcdef"[s[i]>>4], "0123456789abcdef"[s[i]&0xf])
		case r == '\n' || r == '\t' || !unicode.IsControl(r) && r != '\u2028' && r != '\u2029' && !bidiControl(r):
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

// rawWriter is the writer under termSafe, for what writes its own
// terminal codes (the progress lines, which pass any text from inputs
// through termText); other writers as they are.
func rawWriter(w io.Writer) io.Writer {
	if t, ok := w.(termWriter); ok {
		return t.w
	}
	return w
}
