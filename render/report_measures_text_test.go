package render

import (
	"math"
	"testing"
)

// TestMeasureText shows measured numbers, the largest whole ones (a cost
// or a token count of 1e15 and more) included: they recursed without end.
func TestMeasureText(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{1234, "1,234"},
		{1234.56, "1,235"},
		{12.345, "12.3"},
		{0.000123, "0.000123"},
		{999_999_999_999_999, "999,999,999,999,999"},
		{1e15, "1e+15"},
		{-3.5e16, "-3.5e+16"},
		{9.223372036854776e18, "9.22e+18"},
		{math.Inf(1), "+Inf"},
	}
	for _, tt := range tests {
		if got := measureText(tt.in); got != tt.want {
			t.Errorf("measureText(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
