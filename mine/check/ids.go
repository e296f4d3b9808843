package check

import (
	"sort"
	"strings"

	"github.com/fsmine/fsmine/mine"
)

// SimilarIDs names a few session ids of lg for an error about a session
// id that is not there: "similar: a, b" for those containing want (or
// contained in it), else those within a small edit distance of it;
// "e.g. a, b" for the first ones when none is similar.
func SimilarIDs(lg *mine.Log, want string) string {
	const n = 5
	var like []string
	for i := range lg.Sessions {
		if id := lg.Sessions[i].ID; strings.Contains(id, want) || strings.Contains(want, id) {
			like = append(like, id)
			if len(like) == n {
				break
			}
		}
	}
	if len(like) == 0 {
		type cand struct {
			id string
			d  int
		}
		var near []cand
		limit := max(1, len(want)/3)
		for i := range lg.Sessions {
			id := lg.Sessions[i].ID
			if d := editDistance(id, want, limit); d <= limit {
				near = append(near, cand{id, d})
			}
		}
		sort.SliceStable(near, func(i, j int) bool { return near[i].d < near[j].d })
		for i := 0; i < n && i < len(near); i++ {
			like = append(like, near[i].id)
		}
	}
	if len(like) > 0 {
		return "similar: " + strings.Join(like, ", ")
	}
	for i := 0; i < n && i < len(lg.Sessions); i++ {
		like = append(like, lg.Sessions[i].ID)
	}
	return "e.g. " + strings.Join(like, ", ")
}

// editDistance is the Levenshtein distance of a and b in bytes, or a value
// above limit as soon as it is sure to exceed it.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c = 1 + min(prev[j-1], prev[j], cur[j-1])
			}
			cur[j] = c
			best = min(best, c)
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
