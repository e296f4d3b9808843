package automaton

import (
	"bytes"
	"encoding/json" // an independent reference for the bytes AppendJSONString writes
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendJSONString(t *testing.T) {
	tests := []struct{ in, plain, html string }{
		{"", `""`, `""`},
		{"plain", `"plain"`, `"plain"`},
		{"q\"b\\", `"q\"b\\"`, `"q\"b\\"`},
		{"\n\r\t\b\f\x00\x1f", `"\n\r\t\b\f\u0000\u001f"`, `"\n\r\t\b\f\u0000\u001f"`},
		{"é日本\x7f", "\"é日本\x7f\"", "\"é日本\x7f\""},
		{"bad\xffutf8", `"bad\ufffdutf8"`, `"bad\ufffdutf8"`},
		{"\u2028\u2029", `"\u2028\u2029"`, `"\u2028\u2029"`},
		{"<&>", `"<&>"`, `"\u003c\u0026\u003e"`},
	}
	for _, tt := range tests {
		if got := string(AppendJSONString(nil, tt.in, false)); got != tt.plain {
			t.Errorf("AppendJSONString(%q, false) = %s, want %s", tt.in, got, tt.plain)
		}
		if got := string(AppendJSONString([]byte("x"), tt.in, true)); got != "x"+tt.html {
			t.Errorf("AppendJSONString(%q, true) = %s, want x%s", tt.in, got, tt.html)
		}
	}
}

// FuzzAppendJSONString holds both forms to encoding/json's Encoder, with
// HTML escaping off and on, and checks that the string reads back.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\x00\xff", "\u2028", "日本\n", "<a&b>\b\f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{false, true} {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(html)
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
			got := AppendJSONString(nil, s, html)
			if string(got) != strings.TrimSuffix(want.String(), "\n") {
				t.Fatalf("AppendJSONString(%q, %v) = %s, want %s", s, html, got, want.String())
			}
			var back string
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if utf8.ValidString(s) && back != s {
				t.Fatalf("round trip of %q gave %q", s, back)
			}
		}
	})
}
