package mine

import "testing"

func TestSameLabelling(t *testing.T) {
	base := `{"rules": [{"match": {"node": "^a$", "event": "ok"}, "state": "A"}, {"match": {"node": "b"}, "drop": true}]}`
	for _, tc := range []struct {
		other string
		same  bool
	}{
		{base, true},
		{`{"rules":[{"name":"x","why":"because","match":{"node":"^a$","event":"ok"},"state":"A"},{"match":{"node":"b"},"drop":true}]}`, true},
		{`{"rules": [{"match": {"event": "ok", "node": "^a$"}, "state": "A"}, {"match": {"node": "b"}, "drop": true}]}`, false}, // captures number in this order
		{`{"rules": [{"match": {"node": "^a$", "event": "ok"}, "state": "B"}, {"match": {"node": "b"}, "drop": true}]}`, false},
		{`{"rules": [{"match": {"node": "b"}, "drop": true}, {"match": {"node": "^a$", "event": "ok"}, "state": "A"}]}`, false},
		{`{"rules": [{"match": {"node": "^a$", "event": "ok"}, "state": "A"}, {"match": {"node": "b"}, "drop": true}], "unmatched": "drop"}`, false},
		{`{"rules": [{"match": {"node": "^a$", "event": "ok"}, "state": "A"}, {"match": {"node": "b"}, "fold": true}]}`, false},
		{``, false},
		{`{not json`, false},
	} {
		if got := SameLabelling([]byte(base), []byte(tc.other)); got != tc.same {
			t.Errorf("SameLabelling(base, %s) = %v, want %v", tc.other, got, tc.same)
		}
	}
	if !SameLabelling(nil, []byte("  ")) {
		t.Error("no rules and no rules differ")
	}
}
