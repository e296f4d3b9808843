// Package jsondup finds a key given twice in one JSON object, which JSON
// decoders forgive by keeping the last value: in a file a person wrote, the
// first value is lost without a word. It also checks keys' case and
// strings' text as decoders read them, walks the members of an object a
// decoder has read (Members, Elements), for the callers that place values
// by their offsets, and places a decoder's error at its line and column
// (Position).
package jsondup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Check returns an error naming the first key that an object of data gives
// twice, by its path ("states.a.on"), or nil. It does not judge the rest
// of data: a syntax error is left to the caller's decoder, which words it.
func Check(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys      map[string]bool // nil for an array
		key       string          // of the value being read
		index     int             // in an array, of the value being read
		expectKey bool
	}
	var stack []*frame
	// ends a value: in an object, a key (or its end) comes next
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		if top := stack[len(stack)-1]; top.keys != nil {
			top.expectKey = true
		} else {
			top.index++
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end, or an error the caller's decoder words
		}
		if n := len(stack); n > 0 && stack[n-1].keys != nil && stack[n-1].expectKey {
			top := stack[n-1]
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				valueDone()
				continue
			}
			key, _ := tok.(string)
			if top.keys[key] {
				var path strings.Builder
				for _, f := range stack[:n-1] {
					if f.keys == nil {
						fmt.Fprintf(&path, "[%d]", f.index)
						continue
					}
					if path.Len() > 0 {
						path.WriteByte('.')
					}
					path.WriteString(f.key)
				}
				if path.Len() == 0 {
					return fmt.Errorf("the key %s is given twice", strconv.Quote(key))
				}
				return fmt.Errorf("the key %s is given twice in %s", strconv.Quote(key), path.String())
			}
			top.keys[key], top.key, top.expectKey = true, key, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, expectKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			valueDone()
		default:
			valueDone()
		}
	}
}
