package stages

import (
	"regexp"
	"strings"
)

// idMark stands for an id in a node's family key: tool_get_123 and
// tool_get_7 are the node tool_get_*.
const idMark = "*"

// id kinds, in a family key's pattern
const (
	idDigits = iota // a run of decimal digits
	idHex           // a word of 8 or more hex digits with a digit in it: 3fa85f64
	idUUID          // 8-4-4-4-12 hex digits
)

var idPatterns = [...]string{idDigits: `[0-9]+`, idHex: `[0-9A-Fa-f]{8,}`, idUUID: `[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}`}

// foldIDs returns a node name with the ids in it replaced by idMark, and
// the kinds of those ids in order: ids inside names are not names, so that
// tool_get_123 and tool_get_7 are one node of the log, tool_get_*. An id is
// a UUID, a word (a run of ASCII letters and digits) of 8 or more hex
// digits with a digit among them, or else a run of digits: goodbye_2,
// order_3fa85f64, call-9b2e4c1d-0a6f-4f1e-8c3b-2d5e7f9a1b3c, lookupHTTPServer2.
func foldIDs(name string) (key string, kinds []int) {
	if !strings.ContainsAny(name, "0123456789") {
		return name, nil
	}
	var b strings.Builder
	for i := 0; i < len(name); {
		if isUUIDAt(name, i) {
			b.WriteString(idMark)
			kinds = append(kinds, idUUID)
			i += 36
			continue
		}
		if !isAlnum(name[i]) {
			b.WriteByte(name[i])
			i++
			continue
		}
		j := i
		for j < len(name) && isAlnum(name[j]) {
			j++
		}
		word := name[i:j]
		if len(word) >= 8 && isHexWord(word) {
			b.WriteString(idMark)
			kinds = append(kinds, idHex)
			i = j
			continue
		}
		for k := 0; k < len(word); {
			if !isDigit(word[k]) {
				b.WriteByte(word[k])
				k++
				continue
			}
			for k < len(word) && isDigit(word[k]) {
				k++
			}
			b.WriteString(idMark)
			kinds = append(kinds, idDigits)
		}
		i = j
	}
	return b.String(), kinds
}

// keyPattern is the pattern of a family key whose ids are of the given
// kinds (at each mark, the kinds its names have there), anchored at both
// ends.
func keyPattern(key string, kinds [][]int) string {
	parts := strings.Split(key, idMark)
	var b strings.Builder
	b.WriteByte('^')
	for i, p := range parts {
		b.WriteString(regexp.QuoteMeta(p))
		if i+1 == len(parts) {
			break
		}
		var alts []string
		for _, k := range kinds[i] {
			alts = append(alts, idPatterns[k])
		}
		if len(alts) == 1 {
			b.WriteString(alts[0])
		} else {
			b.WriteString("(?:" + strings.Join(alts, "|") + ")")
		}
	}
	b.WriteByte('$')
	return b.String()
}

func isUUIDAt(s string, i int) bool {
	if len(s)-i < 36 || i > 0 && isAlnum(s[i-1]) || len(s)-i > 36 && isAlnum(s[i+36]) {
		return false
	}
	for k := range 36 {
		c := s[i+k]
		if k == 8 || k == 13 || k == 18 || k == 23 {
			if c != '-' {
				return false
			}
		} else if !isHex(c) {
			return false
		}
	}
	return true
}

func isHexWord(w string) bool {
	digit := false
	for i := range len(w) {
		if !isHex(w[i]) {
			return false
		}
		digit = digit || isDigit(w[i])
	}
	return digit
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
func isAlnum(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
