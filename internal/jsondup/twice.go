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
	type frame struct {
		obj  bool
		keys [][]byte            // the object's keys so far, while few
		set  map[string]struct{} // past manyKeys
	}
	const manyKeys = 16
	var stack []frame
	expectKey := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '{':
			if n := len(stack); n < cap(stack) {
				stack = stack[:n+1]
				stack[n].obj, stack[n].keys, stack[n].set = true, stack[n].keys[:0], nil
			} else {
				stack = append(stack, frame{obj: true})
			}
			expectKey = true
		case '[':
			if n := len(stack); n < cap(stack) {
				stack = stack[:n+1]
				stack[n].obj, stack[n].keys, stack[n].set = false, stack[n].keys[:0], nil
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
				return "", 0, false // not well formed: the decoder says so
			}
			if expectKey && len(stack) > 0 {
				f := &stack[len(stack)-1]
				k := data[i+1 : end-1]
				if bytes.IndexByte(k, '\\') >= 0 {
					var s string
					if json.Unmarshal(data[i:end], &s) != nil {
						return "", 0, false
					}
					k = []byte(s)
				}
				if f.set == nil {
					for _, prev := range f.keys {
						if bytes.Equal(prev, k) {
							return string(k), i, true
						}
					}
					f.keys = append(f.keys, k)
					if len(f.keys) > manyKeys {
						f.set = make(map[string]struct{}, 2*len(f.keys))
						for _, prev := range f.keys {
							f.set[string(prev)] = struct{}{}
						}
					}
				} else {
					if _, dup := f.set[string(k)]; dup {
						return string(k), i, true
					}
					f.set[string(k)] = struct{}{}
				}
				expectKey = false
			}
			i = end - 1
		}
	}
	return "", 0, false
}
