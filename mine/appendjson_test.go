package mine

import (
	"bytes"
	"encoding/json" // the reference AppendJSONString is held to
	"strings"
	"testing"
	"unicode/utf8"
)

// TestAppendJSONString: AppendJSONString writes a string as encoding/json
// does without HTML escaping (mine/gen relies on it for byte-identical logs).
func TestAppendJSONString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{"q\"b\\", `"q\"b\\"`},
		{"\n\r\t\b\f\x00\x1f", `"\n\r\t\b\f\u0000\u001f"`},
		{"é日本", `"é日本"`},
		{"bad\xffutf8", `"bad\ufffdutf8"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"<&>", `"<&>"`},
	}
	for _, tt := range tests {
		if got := string(AppendJSONString(nil, tt.in)); got != tt.want {
			t.Errorf("AppendJSONString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// FuzzAppendJSONString checks mine's string encoder against encoding/json
// (without HTML escaping).
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\x00\xff", "\u2028", "日本\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		got := AppendJSONString(nil, s)
		if string(got) != strings.TrimSuffix(want.String(), "\n") {
			t.Fatalf("AppendJSONString(%q) = %s, want %s", s, got, want.String())
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("round trip of %q gave %q", s, back)
		}
	})
}
