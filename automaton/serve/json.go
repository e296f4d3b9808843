package serve

import "unicode/utf8"

// The step answers and the decision log are written by hand (see step.go),
// so their strings are escaped here, in the two ways their readers have
// always seen them:
//
//   - an answer's strings as json.Marshal writes them, like the service's
//     other answers: <, > and & escaped as \u003c, \u003e and \u0026;
//   - a log line's strings with HTML escaping off, like the records fsmine
//     writes elsewhere: <, > and & as they are.
//
// Both write backspace and form feed as \b and \f, escape quotes,
// backslashes, the other control characters, U+2028 and U+2029, and
// replace invalid UTF-8 with U+FFFD. TestAppendDecision and
// FuzzAppendString hold them to their models.

// appendAnswerString appends s as a JSON string as json.Marshal writes it.
func appendAnswerString(b []byte, s string) []byte { return appendString(b, s, true) }

// appendLogString appends s as a JSON string as json.Marshal writes it with
// HTML escaping off.
func appendLogString(b []byte, s string) []byte { return appendString(b, s, false) }

// plain marks the ASCII bytes both ways write as they are; answer
// additionally escapes <, > and &.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func appendString(b []byte, s string, answer bool) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] && !(answer && (c == '<' || c == '>' || c == '&')) {
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
			default: // other control characters, and <, > and & in answers
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
