package text

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Terminal is s with what a terminal would act on written as Go escapes:
// control characters other than newline and tab (ESC as \x1b, DEL as \x7f,
// C1 controls as \u0080 ...), U+2028, U+2029 and the bidirectional
// controls, and invalid UTF-8 bytes as \xHH. Ids, labels, events and file
// names come from logs and models; their escape sequences must not reach
// a terminal.
func Terminal(s string) string {
	return escape(s, false)
}

// Cell is Terminal for one cell of a text table: newline and tab, which
// would break the row, are escaped too.
func Cell(s string) string {
	return escape(s, true)
}

func escape(s string, cell bool) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[s[i]>>4])
			b.WriteByte("0123456789abcdef"[s[i]&0xf])
		case cell && r == '\n':
			b.WriteString(`\n`)
		case cell && r == '\t':
			b.WriteString(`\t`)
		case r == '\n' || r == '\t' || !unicode.IsControl(r) && r != '\u2028' && r != '\u2029' && !BidiControl(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// BidiControl reports whether r reorders the text around it on display
// (U+202A-U+202E, U+2066-U+2069), which can make a name read as another.
func BidiControl(r rune) bool {
	return r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069'
}
