package formats

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestSniffLinear(t *testing.T) {
	// Recognising the format of a head costs time and memory in proportion
	// to the head, whatever its nesting: one line of deeply nested arrays
	// built a path a level for every level (12 s and 842 MB for 200 KB).
	const size = 64 << 10
	deep := func(prefix, open, close string) []byte {
		n := (size - len(prefix)) / (len(open) + len(close))
		return []byte(prefix + strings.Repeat(open, n) + strings.Repeat(close, n))
	}
	longKey := `{"` + strings.Repeat("k", 30<<10) + `":{`
	for i := 0; len(longKey) < size-16; i++ {
		longKey += fmt.Sprintf(`"a%d":1,`, i)
	}
	longKey += `"z":1}}`
	tests := []struct {
		name string
		head []byte
	}{
		{"arrays", deep("", "[", "]")},
		{"arrays in a record", deep(`{"a":`, "[", "]")},
		{"objects", deep(`{"session_id":"s",`, `"k":{`, "}")},
		{"mixed", deep(`[`, `{"k":[`, "]}")},
		{"long key", []byte(longKey)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			Pick(FormatAuto, tt.head)
			runtime.ReadMemStats(&after)
			// Five formats sniff the head, each keeping a frame for every
			// open array or object: some 450 bytes of garbage per byte
			// of a head of nested arrays; it was 33,000 (2.1 GB).
			if got, limit := after.TotalAlloc-before.TotalAlloc, 1024*uint64(len(tt.head)); got > limit {
				t.Errorf("recognising a %d-byte head allocated %d bytes, want at most %d", len(tt.head), got, limit)
			}
		})
	}
}
