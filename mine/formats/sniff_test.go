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

// TestPickForFields: a head with the session and node where --field says
// is fsmine's own records, whatever other format's keys it holds; without
// both there, or with no field remapped, detection goes on as before.
func TestPickForFields(t *testing.T) {
	remapped := `{"conv":"c1","tool":{"name":"lookup"},"workflow_name":"support"}`
	langfuse := `{"id":"t1","name":"run","sessionId":"s","observations":[]}`
	for _, tt := range []struct {
		name, head string
		fields     map[string]string
		want       string
	}{
		{"remapped", remapped, map[string]string{FieldSession: "conv", FieldNode: "tool.name"}, FormatJSONL},
		{"not remapped", remapped, nil, FormatOpenAIAgents},
		{"node not there", remapped, map[string]string{FieldSession: "conv", FieldNode: "tool.title"}, FormatOpenAIAgents},
		{"default session not there", langfuse, map[string]string{FieldNode: "name"}, FormatLangfuse},
		{"array index", `{"conv":"c1","calls":[{"name":"a"}],"workflow_name":"w"}`, map[string]string{FieldSession: "conv", FieldNode: "calls.0.name"}, FormatJSONL},
		{"an array", `[` + remapped + `]`, map[string]string{FieldSession: "conv", FieldNode: "tool.name"}, FormatOpenAIAgents},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := PickFor(FormatAuto, []byte(tt.head), ImportOptions{}.WithFields(tt.fields))
			if err != nil {
				t.Fatal(err)
			}
			if f.Name != tt.want {
				t.Errorf("PickFor = %s, want %s", f.Name, tt.want)
			}
		})
	}
}
