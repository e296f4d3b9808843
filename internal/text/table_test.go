package text

import "testing"

func TestMove(t *testing.T) {
	tests := []struct{ from, event, to, move, arrow string }{
		{"a", "ok", "b", "a -[ok]-> b", "-[ok]-> b"},
		{"a", "", "b", "a --> b", "--> b"},
		{"", "ok", "b", "? -[ok]-> b", "-[ok]-> b"},
	}
	for _, tt := range tests {
		if got := Move(tt.from, tt.event, tt.to); got != tt.move {
			t.Errorf("Move(%q, %q, %q) = %q, want %q", tt.from, tt.event, tt.to, got, tt.move)
		}
		if got := Arrow(tt.event, tt.to); got != tt.arrow {
			t.Errorf("Arrow(%q, %q) = %q, want %q", tt.event, tt.to, got, tt.arrow)
		}
	}
}

func TestTable(t *testing.T) {
	tests := []struct {
		name  string
		rows  [][]string
		right map[int]bool
		want  string
	}{
		{"left", [][]string{{"a", "bb"}, {"ccc", "d"}}, nil, "a    bb\nccc  d\n"},
		{"right", [][]string{{"a", "1"}, {"bb", "100"}}, map[int]bool{1: true}, "a     1\nbb  100\n"},
		{"runes, not bytes", [][]string{{"é", "x"}, {"ab", "y"}}, nil, "é   x\nab  y\n"},
		{"trailing spaces trimmed", [][]string{{"a", ""}, {"b", "long"}}, nil, "a\nb  long\n"},
		{"ragged rows", [][]string{{"a"}, {"b", "c"}}, nil, "a\nb  c\n"},
		{"none", nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Table(tt.rows, tt.right); got != tt.want {
				t.Errorf("Table = %q, want %q", got, tt.want)
			}
		})
	}
}
