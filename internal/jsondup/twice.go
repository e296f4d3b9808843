package jsondup

import (
	"bytes"
	"encoding/json"
)

// Twice finds the first key that an object of data, a JSON value a decoder
// has read without error, gives twice: the key (unescaped) and the offset
// in data of its second occurrence. It reads data once, in a single pass
// whatever its nesting, and allocates only for objects of many keys and
// for keys with escapes, so that importers can ask it of every item they
// decode (Check, which words the key's path, is for the small files people
// write).
func Twice(data []byte) (key string, off int, found bool) {
	key, off, found, _ = Repeats(data)
	return key, off, found
}

// Repeats is Twice, and also reports whether some object of data has two
// keys alike but for ASCII case ("name" and "Name"), which decoders
// matching a struct's fields in any case read as one (ExactKeys tells
// whether they do for a given struct).
func Repeats(data []byte) (key string, off int, found, folded bool) {
	type frame struct {
		obj   bool
		keys  [][]byte            // the object's keys so far, while few
		exact map[string]struct{} // past manyKeys
		lower map[string]struct{} // past manyKeys, in lower case
	}
	const manyKeys = 16
	var stack []frame
	expectKey := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '{':
			if n := len(stack); n < cap(stack) {
				stack = stack[:n+1]
				stack[n].obj, stack[n].keys, stack[n].exact, stack[n].lower = true, stack[n].keys[:0], nil, nil
			} else {
				stack = append(stack, frame{obj: true})
			}
			expectKey = true
		case '[':
			if n := len(stack); n < cap(stack) {
				stack = stack[:n+1]
				stack[n].obj, stack[n].keys, stack[n].exact, stack[n].lower = false, stack[n].keys[:0], nil, nil
			} else {
				stack = append(stack, frame{})
			}
			expectKey = false
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].obj
		case '"':
			end := skipString(data, i)
			if end < 0 {
				return "", 0, false, false // not well formed: the decoder says so
			}
			if expectKey && len(stack) > 0 {
				f := &stack[len(stack)-1]
				k := data[i+1 : end-1]
				if bytes.IndexByte(k, '\\') >= 0 {
					var s string
					if json.Unmarshal(data[i:end], &s) != nil {
						return "", 0, false, false
					}
					k = []byte(s)
				}
				if f.exact == nil {
					for _, prev := range f.keys {
						if bytes.Equal(prev, k) {
							return string(k), i, true, folded
						}
						folded = folded || bytes.EqualFold(prev, k)
					}
					f.keys = append(f.keys, k)
					if len(f.keys) > manyKeys {
						f.exact = make(map[string]struct{}, 2*len(f.keys))
						f.lower = make(map[string]struct{}, 2*len(f.keys))
						for _, prev := range f.keys {
							f.exact[string(prev)] = struct{}{}
							f.lower[string(bytes.ToLower(prev))] = struct{}{}
						}
					}
				} else {
					if _, dup := f.exact[string(k)]; dup {
						return string(k), i, true, folded
					}
					lower := string(bytes.ToLower(k))
					if _, alike := f.lower[lower]; alike {
						folded = true
					}
					f.exact[string(k)] = struct{}{}
					f.lower[lower] = struct{}{}
				}
				expectKey = false
			}
			i = end - 1
		}
	}
	return "", 0, false, folded
}
