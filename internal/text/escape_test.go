package text

import "testing"

func TestTerminalAndCell(t *testing.T) {
	tests := []struct{ in, terminal, cell string }{
		{"s-1", "s-1", "s-1"},
		{"plain text\tand tabs\n", "plain text\tand tabs\n", `plain text\tand tabs\n`},
		{"état 二 ünïcode", "état 二 ünïcode", "état 二 ünïcode"},
		{"\x1b[2J\x1b]0;title\a", `\x1b[2J\x1b]0;title\x07`, `\x1b[2J\x1b]0;title\x07`},
		{"a\rb\x7f", `a\rb\x7f`, `a\rb\x7f`},
		{"\u009b31m", `\u009b31m`, `\u009b31m`},
		{"\u202eevil\u2066", `\u202eevil\u2066`, `\u202eevil\u2066`},
		{"a\u200fb\u061cc\u200ed", `a\u200fb\u061cc\u200ed`, `a\u200fb\u061cc\u200ed`},
		{"lo\u200bok\u2060\ufeff \u200d", "lo\\u200bok\\u2060\\ufeff \u200d", "lo\\u200bok\\u2060\\ufeff \u200d"},
		{"\u2028\u2029", `\u2028\u2029`, `\u2028\u2029`},
		{"\xff\xfe", `\xff\xfe`, `\xff\xfe`},
		{"bad\xffutf8", `bad\xffutf8`, `bad\xffutf8`},
		{"x\r\x1b[K", `x\r\x1b[K`, `x\r\x1b[K`},
		{`x\x1by`, `x\x1by`, `x\x5cx1by`},
		{`a\nb \t \r`, `a\nb \t \r`, `a\x5cnb \x5ct \x5cr`},
		{`\u202E \U0001F600`, `\u202E \U0001F600`, `\x5cu202E \x5cU0001F600`},
		{`C:\Users\bob\ \x1 \xg1 \u12 \\`, `C:\Users\bob\ \x1 \xg1 \u12 \\`, `C:\Users\bob\ \x1 \xg1 \u12 \\`},
		{"\\\x1b", `\\x1b`, `\\x1b`},
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

// TestCellTellsApart: a name with a character Cell escapes and the name
// that spells the escape out never show alike (both showed as x\x1by),
// and Line leaves what Cell wrote as it is.
func TestCellTellsApart(t *testing.T) {
	for _, pair := range [][2]string{
		{"x\x1by", `x\x1by`}, {"a\nb", `a\nb`}, {"\t", `\t`}, {"\r", `\r`}, {"\a", `\x07`},
		{"\u202e", `\u202e`}, {"\u0085", `\u0085`}, {"\xff", `\xff`}, {"\\\x1b", `\\x1b`},
	} {
		a, b := Cell(pair[0]), Cell(pair[1])
		if a == b {
			t.Errorf("Cell(%q) = Cell(%q) = %q", pair[0], pair[1], a)
		}
		if Line(a) != a || Line(b) != b {
			t.Errorf("Line changed %q or %q", a, b)
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
