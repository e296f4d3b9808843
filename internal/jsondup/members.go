package jsondup

import "strings"

// Members calls fn with each member of the JSON object obj, which a
// decoder has read without error: its name as written (quotes and escapes
// included) and the offsets where its value starts and ends. It reports
// false when obj is no object or not well formed, and stops early, with
// true, when fn returns false.
func Members(obj []byte, fn func(name []byte, start, end int) bool) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipSpace(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		end := skipString(obj, i)
		if end < 0 {
			return false
		}
		name := obj[i:end]
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		start := skipSpace(obj, i+1)
		if i = skipValue(obj, start); i < 0 {
			return false
		}
		if !fn(name, start, i) {
			return true
		}
		if i = skipComma(obj, i); i < 0 {
			return false
		}
	}
	return i < len(obj) && obj[i] == '}'
}

// Elements returns the offsets within arr, a JSON array as Members finds
// one (a decoder read it), of its elements; nil when it is no array or not
// well formed.
func Elements(arr []byte) []int {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return nil
	}
	offs := []int{}
	i = skipSpace(arr, i+1)
	for i < len(arr) && arr[i] != ']' {
		offs = append(offs, i)
		if i = skipValue(arr, i); i < 0 {
			return nil
		}
		if i = skipComma(arr, i); i < 0 {
			return nil
		}
	}
	if i >= len(arr) {
		return nil
	}
	return offs
}

// skipComma returns the offset past the space, comma and space after a
// value that ends at i.
func skipComma(raw []byte, i int) int {
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
