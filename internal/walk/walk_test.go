package walk

import (
	"maps"
	"slices"
	"testing"
)

func TestReach(t *testing.T) {
	next := map[string][]string{"a": {"b"}, "b": {"c", "a"}, "c": nil, "x": {"a"}}
	got := slices.Sorted(maps.Keys(Reach("a", next)))
	if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("Reach(a) = %v, want %v (x leads to a, not from it)", got, want)
	}
	if got := Reach("lonely", next); len(got) != 1 || !got["lonely"] {
		t.Errorf("Reach(lonely) = %v, want only itself", got)
	}
}
