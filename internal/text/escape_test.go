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

// TestHexEscapeAt: what HexEscape writes for an unshown rune, HexEscapeAt
// reads back whole; the forms it does not write (\x80, \u001b), runes that
// are none (\U00110000, \ud800) and runes escaped refuses are not read.
func TestHexEscapeAt(t *testing.T) {
	for _, r := range []rune{0, 7, '\n', 0x1b, 0x7f, 0x85, 0x202e, 0xfffe} {
		e := HexEscape(r)
		if got, n := HexEscapeAt(e, 0, Unshown); got != r || n != len(e) {
			t.Errorf("HexEscapeAt(%q) = %U, %d; want %U, %d", e, got, n, r, len(e))
		}
		if dec, ok := HexUnescape("a"+e+"b", Unshown); !ok || dec != "a"+string(r)+"b" {
			t.Errorf("HexUnescape(a%sb) = %q", e, dec)
		}
	}
	if got, n := HexEscapeAt(HexEscape(0xe0001), 0, func(rune) bool { return true }); got != 0xe0001 || n != 10 {
		t.Errorf("the \\U form: %U, %d", got, n)
	}
	for _, e := range []string{`\x80`, `\u001b`, `\U00110000`, `\ud800`, `\x41`, `\x1`, `\q`} {
		if _, n := HexEscapeAt(e, 0, Unshown); n != 0 {
			t.Errorf("HexEscapeAt(%q) read %d bytes; want none", e, n)
		}
	}
}
