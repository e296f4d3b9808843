package text

import "testing"

func TestTerminalAndCell(t *testing.T) {
	tests := []struct{ in, terminal, cell string }{
		{"s-1", "s-1", "s-1"},
		{"plain text\tand tabs\n", "plain text\tand tabs\n", `plain text\tand tabs\n`},
		{"état 二 ünïcode", "état 二 ünïcode", "état 二 ünïcode"},
		{"\x1b[2J\x1b]0;title\a", `\x1b[2J\x1b]0;title\a`, `\x1b[2J\x1b]0;title\a`},
		{"a\rb\x7f", `a\rb\x7f`, `a\rb\x7f`},
		{"\u009b31m", `\u009b31m`, `\u009b31m`},
		{"\u202eevil\u2066", `\u202eevil\u2066`, `\u202eevil\u2066`},
		{"\u2028\u2029", `\u2028\u2029`, `\u2028\u2029`},
		{"\xff\xfe", `\xff\xfe`, `\xff\xfe`},
		{"bad\xffutf8", `bad\xffutf8`, `bad\xffutf8`},
		{"x\r\x1b[K", `x\r\x1b[K`, `x\r\x1b[K`},
	}
	for _, tt := range tests {
		if got := Terminal(tt.in); got != tt.terminal {
			t.Errorf("Terminal(%q) = %q, want %q", tt.in, got, tt.terminal)
		}
		if got := Cell(tt.in); got != tt.cell {
			t.Errorf("Cell(%q) = %q, want %q", tt.in, got, tt.cell)
		}
	}
}
