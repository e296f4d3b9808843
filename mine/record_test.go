package mine

import (
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want string // RFC 3339 in UTC, or "" for an error
	}{
		{"2026-01-05T10:00:03.120Z", "2026-01-05T10:00:03.12Z"},
		{"2026-01-05T10:00:03Z", "2026-01-05T10:00:03Z"},
		{"2011-10-01T00:38:44.546+02:00", "2011-09-30T22:38:44.546Z"},
		{"2025-08-01T16:16:37.295213Z", "2025-08-01T16:16:37.295213Z"},
		{"2024-02-29T23:59:59-05:30", "2024-03-01T05:29:59Z"},
		{"2026-01-05T10:00:03.123456789123Z", "2026-01-05T10:00:03.123456789Z"},
		{"2026-01-05T10:00:03", "2026-01-05T10:00:03Z"},
		{"2026-01-05 10:00:03", "2026-01-05T10:00:03Z"},
		{"1767607203", "2026-01-05T10:00:03Z"},
		{"1767607203120", "2026-01-05T10:00:03.12Z"},
		{"2026-02-30T10:00:03Z", ""},
		{"2026-13-05T10:00:03Z", ""},
		{"yesterday", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			ns, err := parseTime(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Errorf("parseTime(%q) = %d, want an error", tt.in, ns)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseTime(%q): %v", tt.in, err)
			}
			if got := time.Unix(0, ns).UTC().Format(time.RFC3339Nano); got != tt.want {
				t.Errorf("parseTime(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzParseRFC3339Fast checks the fast path against time.Parse: whenever it
// accepts, time.Parse agrees on the instant.
func FuzzParseRFC3339Fast(f *testing.F) {
	for _, s := range []string{"2026-01-05T10:00:03.120Z", "2011-10-01T00:38:44.546+02:00", "2024-02-28T23:59:59-05:30", "2026-01-05T10:00:03Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, ok := parseRFC3339Fast(s)
		if !ok {
			return
		}
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("fast path accepted %q, time.Parse: %v", s, err)
		}
		if tm.UnixNano() != ns {
			t.Fatalf("fast path %q = %d, time.Parse = %d", s, ns, tm.UnixNano())
		}
	})
}

// FuzzParseRecord feeds arbitrary lines to the record parser with label
// rules: it must never panic, and an accepted record has a session, a node
// and a usable label.
func FuzzParseRecord(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s-17","step":3,"ts":"2026-01-05T10:00:03.120Z","node":"query_knowledge","event":"hit","duration_ms":812,"attrs":{"task_id":"40"}}`,
		`{"session_id":7,"node":"get_order_details","ts":1767607203}`,
		`{"session_id":"a","node":"smalltalk","event":null,"step":-1}`,
		`{"session_id":"a","node":"x","ts":"2026-02-30T00:00:00Z"}`,
		`not json`, `{}`, `[]`,
	} {
		f.Add(s)
	}
	rules, err := ParseRules([]byte(`{"rules":[
	  {"match":{"node":"^get_(\\w+)_details$"},"state":"lookup_$1","fold":true},
	  {"match":{"node":"^smalltalk$"},"state":"smalltalk","detour":true},
	  {"match":{"attrs.task_id":"^4"},"drop":true}]}`))
	if err != nil {
		f.Fatal(err)
	}
	p, err := newParser(nil, rules)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var r rec
		if err := p.parse([]byte(line), &r); err != nil {
			return
		}
		if r.session == "" || r.node == "" {
			t.Fatalf("accepted %q with an empty session or node", line)
		}
		if !r.drop && (r.label == "" || isReserved(r.label)) {
			t.Fatalf("accepted %q with label %q", line, r.label)
		}
	})
}
