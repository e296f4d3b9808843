package text

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Terminal is s with what a terminal would act on written as Go escapes:
// control characters other than newline and tab (ESC as \x1b, DEL as \x7f,
// C1 controls as \u0080 ...), U+2028, U+2029, the bidirectional
// controls, the invisible U+200B, U+2060 and U+FEFF (a name with one would
// show as the name without), and invalid UTF-8 bytes as \xHH. Ids, labels, events and file
// names come from logs and models; their escape sequences must not reach
// a terminal. It leaves backslashes as they are, so that it may run over
// whole lines and streams (JSON included) whose names Cell escaped.
func Terminal(s string) string {
	return escape(s, false, false)
}

// Cell is Terminal for one name in a line or a table cell: newline and
// tab, which would break the row, are escaped too, and a backslash of the
// name's own that would read as one of these escapes (ReadsAsEscape) is
// written \x5c, so that two names never show alike ("x\x1by" with ESC
// is x\x1by, the seven characters x\x1by are x\x5cx1by). Other
// backslashes stay as they are (C:\Users, but C:\x5ctemp: \t reads as
// an escape). Cell of Cell's output is not
// Cell's output: escape a name once, and pass lines and cells made of
// escaped names through Line.
func Cell(s string) string {
	return escape(s, true, true)
}

// Line is Cell without the rule for backslashes: for a line or a table
// cell whose names Cell has escaped already, which it leaves as they are,
// while a newline or control character anything else holds is escaped.
func Line(s string) string {
	return escape(s, true, false)
}

// ReadsAsEscape reports whether s[i:] reads as one of the escapes Cell,
// Terminal and fsmine's pictures write for a character they do not show:
// a backslash then n, t or r, or x, u or U and two, four or eight hex
// digits.
func ReadsAsEscape(s string, i int) bool {
	if i+1 >= len(s) || s[i] != '\\' {
		return false
	}
	switch s[i+1] {
	case 'n', 't', 'r':
		return true
	}
	n := hexDigits(s[i+1])
	if n == 0 || i+2+n > len(s) {
		return false
	}
	for _, c := range []byte(s[i+2 : i+2+n]) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// hexDigits is the number of hex digits the escape \c takes: 2 for \x, 4
// for \u, 8 for \U, and 0 for any other c.
func hexDigits(c byte) int {
	switch c {
	case 'x':
		return 2
	case 'u':
		return 4
	case 'U':
		return 8
	}
	return 0
}

func escape(s string, cell, names bool) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || names && c == '\\' {
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
		case names && ReadsAsEscape(s, i):
			b.WriteString(`\x5c`)
		case r == '\n' || r == '\t' || !unicode.IsControl(r) && r != '\u2028' && r != '\u2029' && !BidiControl(r) && !invisible(r):
			b.WriteString(s[i : i+size])
		case r == '\r':
			b.WriteString(`\r`)
		default:
			b.WriteString(HexEscape(r)) // \x07, not \a: ReadsAsEscape knows only \n, \t, \r by name
		}
		i += size
	}
	return b.String()
}

// invisible reports whether r is a character a terminal shows as nothing
// whose place no script needs (U+200B, U+2060, U+FEFF; the joiners U+200C
// and U+200D are left, as words and emoji are made with them).
func invisible(r rune) bool { return r == '\u200b' || r == '\u2060' || r == '\ufeff' }

// BidiControl reports whether r reorders the text around it on display
// (Unicode's Bidi_Control: U+061C, U+200E, U+200F, U+202A-U+202E,
// U+2066-U+2069), which can make a name read as another.
func BidiControl(r rune) bool {
	return r == '\u061c' || r == '\u200e' || r == '\u200f' || r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069'
}

// XMLChar reports whether r is a character of XML 1.0 (its Char
// production).
func XMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// Unshown reports whether a picture writes r as an escape rather than
// draws it: a control character, one XML cannot carry, or a bidi control.
func Unshown(r rune) bool {
	return unicode.IsControl(r) || !XMLChar(r) || BidiControl(r)
}

// HexEscape is r as a Go escape in hex, in the form strconv.QuoteRune
// gives it: \xHH below 0x80, \uHHHH below 0x10000, \UHHHHHHHH above.
// It is the one form HexEscapeAt reads back.
func HexEscape(r rune) string {
	switch {
	case r < 0x80:
		return fmt.Sprintf(`\x%02x`, r)
	case r < 0x10000:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}

// HexEscapeAt reads, at s[i:], an escape \xHH, \uHHHH or \UHHHHHHHH in
// the form HexEscape writes whose rune escaped accepts, and returns the
// rune and the escape's length, or 0. fsmine's exports write such escapes
// for the characters a format cannot carry, and import decodes them; an
// export writes a text's own backslash that would begin one otherwise.
func HexEscapeAt(s string, i int, escaped func(rune) bool) (rune, int) {
	if i+1 >= len(s) || s[i] != '\\' {
		return 0, 0
	}
	n := hexDigits(s[i+1])
	if n == 0 || i+2+n > len(s) {
		return 0, 0
	}
	c, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32)
	r := rune(c)
	switch {
	case err != nil, !utf8.ValidRune(r), !escaped(r),
		n == 2 && r >= 0x80, n == 4 && (r < 0x80 || r >= 0x10000), n == 8 && r < 0x10000:
		return 0, 0
	}
	return r, 2 + n
}

// HexUnescape decodes the escapes of s that HexEscapeAt reads with
// escaped; every other character, backslashes included, stands for
// itself. ok says whether one was decoded.
func HexUnescape(s string, escaped func(rune) bool) (out string, ok bool) {
	if !strings.Contains(s, `\`) {
		return s, false
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if r, n := HexEscapeAt(s, i, escaped); n > 0 {
			b.WriteRune(r)
			i += n
			ok = true
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	if !ok {
		return s, false
	}
	return b.String(), true
}
