package automaton

import "unicode/utf8"

// plain marks the ASCII bytes written as they are (with escapeHTML, <, >
// and & are escaped as well).
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendJSONString appends s as a JSON string as json.Marshal writes it,
// with escapeHTML, or as an Encoder with SetEscapeHTML(false), without:
// quotes, backslashes and control characters escaped (\b, \f, \n, \r, \t
// by name), U+2028 and U+2029 escaped, invalid UTF-8 replaced by U+FFFD,
// and with escapeHTML <, > and & as \u003c, \u003e and \u0026. It lets
// hand-written JSON (records, the guard's replies and decision log) carry
// strings from logs and requests byte for byte as the JSON library would.
func AppendJSONString(b []byte, s string, escapeHTML bool) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] && !(escapeHTML && (c == '<' || c == '>' || c == '&')) {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			default: // other control characters, and <, > and & with escapeHTML
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
