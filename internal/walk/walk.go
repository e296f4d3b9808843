// Package walk holds the graph walks the miner's packages share.
package walk

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
// nodes share a number when each reaches the other. It walks each move
// once (Tarjan's algorithm, without recursion, so a long chain in a
// hostile file cannot overflow the stack). The numbers depend on map
// order; only their equality means anything.
func Components(next map[string][]string) map[string]int {
	index := map[string]int{}
	low := map[string]int{}
	on := map[string]bool{}
	comp := map[string]int{}
	var stack []string
	type frame struct {
		node string
		i    int // next move of node to walk
	}
	visit := func(root string) {
		frames := []frame{{node: root}}
		index[root], low[root] = len(index), len(index)
		stack, on[root] = append(stack, root), true
		for len(frames) > 0 {
			f := &frames[len(frames)-1]
			if f.i < len(next[f.node]) {
				n := next[f.node][f.i]
				f.i++
				if _, seen := index[n]; !seen {
					index[n], low[n] = len(index), len(index)
					stack, on[n] = append(stack, n), true
					frames = append(frames, frame{node: n})
				} else if on[n] {
					low[f.node] = min(low[f.node], index[n])
				}
				continue
			}
			v := f.node
			frames = frames[:len(frames)-1]
			if len(frames) > 0 {
				p := frames[len(frames)-1].node
				low[p] = min(low[p], low[v])
			}
			if low[v] == index[v] {
				c := len(comp)
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					on[w] = false
					comp[w] = c
					if w == v {
						break
					}
				}
			}
		}
	}
	for v, ns := range next {
		if _, seen := index[v]; !seen {
			visit(v)
		}
		for _, n := range ns {
			if _, seen := index[n]; !seen {
				visit(n)
			}
		}
	}
	return comp
}
