package walk

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
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

// TestComponents holds Components to its definition on random graphs: two
// nodes share a component exactly when each reaches the other.
func TestComponents(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + rng.IntN(12)
		next := map[string][]string{}
		name := func(i int) string { return string(rune('a' + i)) }
		for range rng.IntN(3 * n) {
			a, b := name(rng.IntN(n)), name(rng.IntN(n))
			next[a] = append(next[a], b)
		}
		comp := Components(next)
		nodes := map[string]bool{}
		for a, bs := range next {
			nodes[a] = true
			for _, b := range bs {
				nodes[b] = true
			}
		}
		if len(comp) != len(nodes) {
			t.Fatalf("trial %d: %d nodes numbered, want %d", trial, len(comp), len(nodes))
		}
		for a := range nodes {
			ra := Reach(a, next)
			for b := range nodes {
				if same, want := comp[a] == comp[b], ra[b] && Reach(b, next)[a]; same != want {
					t.Fatalf("trial %d, %v: %s and %s in one component %v, want %v", trial, next, a, b, same, want)
				}
			}
		}
	}
	// A cycle as long as a hostile file makes.
	long := map[string][]string{}
	for i := range 200000 {
		long[strconv.Itoa(i)] = []string{strconv.Itoa(i + 1)}
	}
	long["200000"] = []string{"0"}
	comp := Components(long)
	if comp["0"] != comp["123456"] {
		t.Error("a cycle of 200,001 nodes is not one component")
	}
}
