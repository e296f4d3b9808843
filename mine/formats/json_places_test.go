package formats

import (
	"slices"
	"testing"
)

// TestMemberElements: the offsets of an array member's elements, past
// strings that hold brackets, quotes and commas, by the last member of the
// name in any case, as the decoder takes it.
func TestMemberElements(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want []int
	}{
		{`{"messages":[{"a":1},{"b":"]}\",{"}]}`, []int{13, 21}},
		{` { "x" : [1] , "messages" : [ 1 , "two" , [3] , null ] } `, []int{30, 34, 42, 48}},
		{`{"messages":[1],"Messages":[true]}`, []int{28}},
		{`{"messages":[]}`, []int{}},
		{`{"messages":{"a":[1]}}`, nil},
		{`{"other":[1]}`, nil},
		{`{"mess\u0061ges":[1]}`, []int{18}},
		{`[1,2]`, nil},
		{`{"messages":[1,2`, nil},
	} {
		if got := memberElements([]byte(tt.raw), "messages"); !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("memberElements(%s) = %v, want %v", tt.raw, got, tt.want)
		}
	}
}
