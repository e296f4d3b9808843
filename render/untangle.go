package render

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/fsmine/fsmine/automaton"
)

// maxCrossings is the most points where a summary's edges may cross in its
// picture: past it, untangle takes edges off the trunk out of the picture.
const maxCrossings = 5

// maxUntangle bounds the layouts untangle makes for one summary.
const maxUntangle = MaxEdges

// drawnSummary is the summary of a sorted model as its picture draws it:
// summarize's edges, untangled. Its error is the builtin engine's.
func drawnSummary(m *automaton.Model) (*summary, error) {
	sm := summarize(m)
	if err := sm.untangle(); err != nil {
		return nil, err
	}
	return sm, nil
}

// edgeID is the DOT id of edge k of a summary's edges (see graph).
func edgeID(k int) string { return "e" + strconv.Itoa(k) }

// untangle lays sm out as its picture is laid out (the builtin engine) and,
// while the edges cross at more than maxCrossings points, takes out the
// edge off the trunk that crosses most and counts it on its box as
// crossing. An edge whose boxes keep another drawn edge goes first, so a
// box is cut loose from the map only when nothing else will do; of equal
// crossings, the one taken fewest times goes. Which edges a count-based
// rule should draw is hard to say from counts alone (a loop back to a
// query, a step skipped, drawn beside the spine or across it); the layout
// says it. The layout leaves out opt.Title, which sits above the map: a
// 540-character title moved no crossing on the real logs' maps. Every
// output of the summary (DOT, Mermaid, the pictures of --engine dot) needs
// the builtin engine, and fails with its error.
// Taking out the edge that crosses most does not always lower the count
// (another edge may be routed across more), but every pass takes one edge
// out, so the loop ends.
func (sm *summary) untangle() error {
	for range maxUntangle {
		out, err := runBuiltin([]byte(sm.graph(Options{}, true).String()), "json", guard{})
		if err != nil {
			return fmt.Errorf("laying the map out: %w", err)
		}
		l, err := measureLayout(out)
		if err != nil {
			return fmt.Errorf("laying the map out: %w", err)
		}
		if l.Crossings <= maxCrossings {
			return nil
		}
		k := sm.mostCrossing(l.edgeCrossings())
		if k < 0 {
			return nil
		}
		sm.hide(&sm.edges[k], hiddenCrossing)
		sm.edges = slices.Delete(sm.edges, k, k+1)
	}
	return nil
}

// mostCrossing returns the index of the drawn edge untangle takes out next
// given the crossing points per edge id, or -1 when no edge off the trunk
// crosses another.
func (sm *summary) mostCrossing(per map[string]int) int {
	degree := make([]int, len(sm.nodes))
	for _, e := range sm.edges {
		degree[e.from]++
		degree[e.to]++
	}
	best := -1
	key := func(k int) [3]int {
		e := &sm.edges[k]
		tied := 0 // both boxes keep another drawn edge
		if degree[e.from] > 1 && degree[e.to] > 1 {
			tied = 1
		}
		return [3]int{tied, per[edgeID(k)], -e.count}
	}
	for k := range sm.edges {
		if sm.edges[k].trunk || per[edgeID(k)] == 0 {
			continue
		}
		if best < 0 {
			best = k
			continue
		}
		if a, b := key(k), key(best); slices.Compare(a[:], b[:]) > 0 {
			best = k
		}
	}
	return best
}
