package jsondup

import (
	"bytes"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// Text returns an error naming the line of the first string of data that
// JSON decoders would change without a word, or nil: one that holds bytes
// not in UTF-8, or a \u escape of half a UTF-16 surrogate pair. Decoders
// read both as U+FFFD, so two names that differ there would become one. It
// does not judge the rest of data: a syntax error is left to the caller's
// decoder, which words it.
func Text(data []byte) error {
	line := 1
	inString := false
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == '"':
			inString = !inString
			i++
		case !inString:
			i++
		case c == '\\' && i+1 < len(data) && data[i+1] == 'u':
			n, half := escapeLen(data[i:])
			if half {
				return fmt.Errorf("line %d: a string holds %s, half of a UTF-16 surrogate pair", line, data[i:i+6])
			}
			i += n
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n == 1 {
				return fmt.Errorf("line %d: a string holds bytes that are not UTF-8", line)
			}
			i += n
		}
	}
	return nil
}

// escapeLen says how many bytes the \u escape (or surrogate pair of
// escapes) that s begins with takes, and whether it is half a pair. An
// escape that is not four hex digits takes 2 bytes: the decoder words it.
func escapeLen(s []byte) (n int, half bool) {
	r, ok := hex4(s)
	if !ok {
		return 2, false
	}
	if !utf16.IsSurrogate(r) {
		return 6, false
	}
	if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if r2, ok := hex4(s[6:]); ok && utf16.DecodeRune(r, r2) != utf8.RuneError {
			return 12, false
		}
	}
	return 6, true
}

// hex4 reads the four hex digits after the \u that s begins with.
func hex4(s []byte) (rune, bool) {
	if len(s) < 6 {
		return 0, false
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// BadText is Text for a JSON value a decoder has read without error, for
// callers that place the string themselves: the offset in data of the
// first bad byte or \u escape, and what is wrong there ("bytes that are
// not UTF-8", "\ud800, half of a UTF-16 surrogate pair"); found is false
// when every string is as written. In such data only strings hold bytes
// past ASCII or backslashes, so it need not follow the grammar: it checks
// the whole of data as UTF-8 and looks at each \u, at the speed of
// utf8.Valid and bytes.Index, so that importers can ask it of every item
// they decode (as Twice).
func BadText(data []byte) (off int, what string, found bool) {
	off = -1
	if !utf8.Valid(data) {
		for i := 0; i < len(data); {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n == 1 {
				off, what = i, "bytes that are not UTF-8"
				break
			}
			i += n
		}
	}
	for i := 0; ; {
		k := bytes.Index(data[i:], []byte(`\u`))
		if k < 0 {
			break
		}
		i += k
		if off >= 0 && i > off {
			break
		}
		// The backslash escapes the u only after an even run of
		// backslashes ("\\u" is a backslash, then text); each run comes
		// before one \u at most, so the look back is linear in all.
		run := 0
		for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
			run++
		}
		if run%2 == 1 {
			i += 2
			continue
		}
		n, half := escapeLen(data[i:])
		if half {
			return i, string(data[i:i+6]) + ", half of a UTF-16 surrogate pair", true
		}
		i += n
	}
	return off, what, off >= 0
}
