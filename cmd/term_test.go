package cmd

import (
	"bytes"
	"testing"
)

func TestTermSafe(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text\tand tabs\n", "plain text\tand tabs\n"},
		{"état 二", "état 二"},
		{"\x1b[2J\x1b]0;title\a", `\x1b[2J\x1b]0;title\x07`},
		{"a\rb\x7f", `a\rb\x7f`},
		{"\u009b31m", `\u009b31m`},
		{"\u202eevil\u2066", `\u202eevil\u2066`},
		{"\xff\xfe", `\xff\xfe`},
		{"x\r\x1b[K", `x\r\x1b[K`},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if _, err := termSafe(&b).Write([]byte(tt.in)); err != nil || b.String() != tt.want {
			t.Errorf("termSafe wrote %q (%v), want %q", b.String(), err, tt.want)
		}
	}
}

// TestTermSafeProgress: nothing written through termSafe keeps a terminal
// code, not even one that only clears the line; progress lines write
// through rawWriter.
func TestTermSafeProgress(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\r\x1b[Kmining 1/2", `\r\x1b[Kmining 1/2`},
		{"\r\x1b[K\x1b]0;x\a", `\r\x1b[K\x1b]0;x\x07`},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if n, err := termSafe(&b).Write([]byte(tt.in)); err != nil || n != len(tt.in) || b.String() != tt.want {
			t.Errorf("termSafe wrote %q (%d, %v), want %q", b.String(), n, err, tt.want)
		}
	}
}
