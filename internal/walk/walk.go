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
