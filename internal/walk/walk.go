// Package walk holds the graph walks the miner's packages share.
package walk

import (
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"
)

// Reach returns the nodes that next reaches from start, start included.
func Reach(start string, next map[string][]string) map[string]bool {
	seen := map[string]bool{start: true}
	stack := []string{start}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, n := range next[s] {
			if !seen[n] {
				seen[n] = true
				stack = append(stack, n)
			}
		}
	}
	return seen
}

// Components returns, for every node of next (a node with moves out of it,
// or a target of one), the number of its strongly connected component: two
// nodes share a number when each reaches the other (gonum's Tarjan, as the
// miner's components). Only the numbers' equality means anything.
func Components(next map[string][]string) map[string]int {
	ids := map[string]int64{}
	var names []string
	id := func(n string) int64 {
		i, ok := ids[n]
		if !ok {
			i = int64(len(names))
			ids[n] = i
			names = append(names, n)
		}
		return i
	}
	g := simple.NewDirectedGraph()
	for from, tos := range next {
		f := id(from)
		if g.Node(f) == nil {
			g.AddNode(simple.Node(f))
		}
		for _, to := range tos {
			t := id(to)
			if g.Node(t) == nil {
				g.AddNode(simple.Node(t))
			}
			if f != t {
				g.SetEdge(simple.Edge{F: simple.Node(f), T: simple.Node(t)})
			}
		}
	}
	comp := make(map[string]int, len(names))
	for c, nodes := range topo.TarjanSCC(g) {
		for _, n := range nodes {
			comp[names[n.ID()]] = c
		}
	}
	return comp
}
