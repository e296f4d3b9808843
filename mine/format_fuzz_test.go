package mine

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"
	"testing"
)

// FuzzFormats feeds arbitrary input to every format's detection and
// conversion: neither may panic, and a conversion that succeeds writes only
// JSON objects, one a line (blank lines allowed).
func FuzzFormats(f *testing.F) {
	// The fixtures' first lines: small seeds keep minimization quick.
	for _, tt := range formatFixtures {
		if data, err := os.ReadFile(fixturePath(tt.file)); err == nil {
			if len(data) > 2048 {
				data = data[:bytes.LastIndexByte(data[:2048], '\n')+1]
			}
			f.Add(data)
		}
	}
	for _, s := range []string{
		`{"simulations":[{"id":"s","messages":[{"role":"assistant","tool_calls":[{"id":"c","name":"t"}]},{"role":"tool","id":"c","error":true}]}]}`,
		`[{"task_id":1,"traj":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f"}}]},{"role":"tool","tool_call_id":"c","content":"Error: x"}]}]`,
		`{"runs":[{"id":"a","name":"x","run_type":"tool","start_time":1717236000000}]}`,
		`{"data":[{"id":"o","traceId":"t","type":"SPAN","startTime":"2024-01-01T00:00:00Z"}]}`,
		"<log><trace><string key=\"concept:name\" value=\"c\"/><event><int key=\"n\" value=\"x\"/></event></trace></log>",
		"a;b\n\"x;y\";2\n",
	} {
		f.Add([]byte(s))
	}
	var names []string
	for n, fm := range formats {
		if fm.Convert != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	f.Fuzz(func(t *testing.T, data []byte) {
		pickFormat(FormatAuto, data)
		for _, n := range names {
			var out bytes.Buffer
			if err := formats[n].Convert(bytes.NewReader(data), &out, ImportOptions{}); err != nil {
				continue
			}
			for i, line := range bytes.Split(out.Bytes(), []byte{'\n'}) {
				if len(line) == 0 {
					continue
				}
				if line[0] != '{' || !json.Valid(line) {
					t.Fatalf("%s: output line %d is not a JSON object: %q", n, i+1, line)
				}
			}
		}
	})
}
