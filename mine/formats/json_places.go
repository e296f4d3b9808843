package formats

import (
	"bytes"
	"strings"
)

// memberElements returns the offsets within raw, a JSON object the decoder
// has read without error, of the elements of the array that is the value
// of its member key: of the last member so named in any case, as the
// decoder takes it. It is nil when there is no such array or raw holds a
// surprise (a name written with escapes): the offsets only place records
// and messages on the input's lines, and a caller that finds them not to
// match what it decoded places them by the object instead.
func memberElements(raw []byte, key string) []int {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil
	}
	var found []int
	i = skipSpace(raw, i+1)
	for i < len(raw) && raw[i] == '"' {
		end := skipString(raw, i)
		if end < 0 {
			return nil
		}
		name := raw[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			return nil
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil
		}
		i = skipSpace(raw, i+1)
		if bytes.EqualFold(name, []byte(key)) {
			found = nil
			if i < len(raw) && raw[i] == '[' {
				found = arrayElements(raw, i)
			}
		}
		if i = nextItem(raw, i); i < 0 {
			return nil
		}
	}
	return found
}

// arrayElements returns the offsets of the elements of the array at raw[i]
// ('['), or nil when it is not well formed.
func arrayElements(raw []byte, i int) []int {
	offs := []int{}
	i = skipSpace(raw, i+1)
	for i < len(raw) && raw[i] != ']' {
		offs = append(offs, i)
		if i = nextItem(raw, i); i < 0 {
			return nil
		}
	}
	if i >= len(raw) {
		return nil
	}
	return offs
}

// nextItem returns the offset of what follows the value at raw[i] and the
// comma after it, if any (-1: the value is not well formed).
func nextItem(raw []byte, i int) int {
	if i = skipValue(raw, i); i < 0 {
		return -1
	}
	i = skipSpace(raw, i)
	if i < len(raw) && raw[i] == ',' {
		i = skipSpace(raw, i+1)
	}
	return i
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\r' || raw[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the offset past the string at raw[i] ('"'), or -1.
func skipString(raw []byte, i int) int {
	for i++; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the offset past the value at raw[i], or -1.
func skipValue(raw []byte, i int) int {
	if i >= len(raw) {
		return -1
	}
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for ; i < len(raw); i++ {
			switch raw[i] {
			case '"':
				if i = skipString(raw, i); i < 0 {
					return -1
				}
				i--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	for i < len(raw) && strings.IndexByte(" \t\r\n,]}", raw[i]) < 0 {
		i++
	}
	return i
}
