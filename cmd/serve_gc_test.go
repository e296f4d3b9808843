package cmd

import "testing"

func TestGCPercentFor(t *testing.T) {
	tests := []struct {
		live uint64
		want int
	}{
		{0, 100},
		{1 << 20, 6400},
		{16 << 20, 400},
		{48 << 20, 133},
		{64 << 20, 100},
		{1 << 30, 100},
	}
	for _, tt := range tests {
		if got := gcPercentFor(tt.live); got != tt.want {
			t.Errorf("gcPercentFor(%d) = %d, want %d", tt.live, got, tt.want)
		}
	}
}
