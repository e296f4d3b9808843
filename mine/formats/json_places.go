package formats

import (
	"bytes"
	stdjson "encoding/json"

	"github.com/fsmine/fsmine/internal/jsondup"
)

// memberElements returns the offsets within raw, a JSON object the decoder
// has read without error, of the elements of the array that is the value
// of its member key: of the last member so named in any case, as the
// decoder takes it (a name with escapes read as the decoder reads it). It
// is nil when there is no such array or raw holds a surprise: the offsets only place records
// and messages on the input's lines, and a caller that finds them not to
// match what it decoded places them by the object instead.
func memberElements(raw []byte, key string) []int {
	var found []int
	escaped := false
	ok := jsondup.Members(raw, func(name []byte, start, end int) bool {
		if bytes.IndexByte(name, '\\') >= 0 {
			// the name as the decoder reads it
			var s string
			if stdjson.Unmarshal(name, &s) != nil {
				escaped = true
				return false
			}
			name = []byte(s)
		} else {
			name = name[1 : len(name)-1]
		}
		if bytes.EqualFold(name, []byte(key)) {
			found = jsondup.Elements(raw[start:end])
			for i := range found {
				found[i] += start
			}
		}
		return true
	})
	if !ok || escaped {
		return nil
	}
	return found
}
