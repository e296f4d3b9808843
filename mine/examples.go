package mine

import (
	"slices"
	"strings"

	"github.com/fsmine/fsmine/automaton"
)

// Example sessions: the model keeps, per state and per transition, the ids
// of up to Options.Examples sessions that passed there, so that a reviewer
// can open real sessions from a state or a rare branch. The choice is the
// sessions whose ids have the smallest hashes (see exampleHash; ties by id): a
// sample spread over the log that does not depend on file order, on how
// sessions interleave or on GOMAXPROCS, and that a tally can keep with
// bounded memory, as the smallest n of a set are the smallest n of the
// smallest n of its parts.

// MaxExamples is the most example sessions Build keeps per state and per
// transition. A streaming read keeps this many per distinct path, whatever
// Build is later asked for, as it runs before Build's options are known.
const MaxExamples = automaton.MaxExamples

// DefaultExamples is how many example sessions fsmine build keeps.
const DefaultExamples = 3

type example struct {
	h  uint64
	id string
}

// exampleHash is the 64-bit FNV-1a hash of a session id, passed through
// SplitMix64's finaliser: FNV-1a alone leaves ids that differ only in their
// last characters (s-0341, s-0342) close together, and the sample would be
// a run of neighbours.
func exampleHash(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

func exampleCmp(a, b example) int {
	if a.h != b.h {
		if a.h < b.h {
			return -1
		}
		return 1
	}
	return strings.Compare(a.id, b.id)
}

// offerExample adds e to xs, sorted and at most n long, if it is among the
// n first; it may reuse xs's array.
func offerExample(xs []example, e example, n int) []example {
	if len(xs) == n && exampleCmp(e, xs[n-1]) >= 0 {
		return xs
	}
	i, found := slices.BinarySearchFunc(xs, e, exampleCmp)
	if found {
		return xs
	}
	if len(xs) == n {
		xs = xs[:n-1]
	}
	return slices.Insert(xs, i, e)
}

// mergeExamples returns the first n of the union of two sorted lists,
// without duplicates. It never writes to a or b, and may return either.
func mergeExamples(a, b []example, n int) []example {
	switch {
	case len(b) == 0:
		return a[:min(len(a), n)]
	case len(a) == 0:
		return b[:min(len(b), n)]
	case len(a) >= n && exampleCmp(b[0], a[n-1]) >= 0:
		return a[:n]
	case len(b) >= n && exampleCmp(a[0], b[n-1]) >= 0:
		return b[:n]
	}
	out := make([]example, 0, min(len(a)+len(b), n))
	i, j := 0, 0
	for len(out) < n && (i < len(a) || j < len(b)) {
		switch {
		case j == len(b):
			out = append(out, a[i])
			i++
		case i == len(a):
			out = append(out, b[j])
			j++
		default:
			switch c := exampleCmp(a[i], b[j]); {
			case c < 0:
				out = append(out, a[i])
				i++
			case c > 0:
				out = append(out, b[j])
				j++
			default:
				out = append(out, a[i])
				i, j = i+1, j+1
			}
		}
	}
	return out
}

// examples gives the first n example sessions of each learned state and of
// each transition (keyed as builder.trans is), from the sessions that end
// at each of the tally's end nodes: a node's sessions are those ending in
// its subtree, and a node stands for a visit of state[node] and a move
// along the transition from its parent's state.
func (t *tally) examples(state []int32, nstates, n int) ([][]example, map[dkey][]example) {
	sub := make([][]example, len(t.nodes))
	for _, e := range t.ends {
		sub[e] = t.nodes[e].ex
	}
	states := make([][]example, nstates)
	trans := map[dkey][]example{}
	// Children come after their parents: a backward pass has every node's
	// subtree complete when it reaches the node.
	for x := len(t.nodes) - 1; x > 0; x-- {
		ex := sub[x][:min(len(sub[x]), n)]
		sub[x] = nil
		tn := &t.nodes[x]
		sub[tn.parent] = mergeExamples(sub[tn.parent], ex, n)
		states[state[x]] = mergeExamples(states[state[x]], ex, n)
		k := dkey{state[tn.parent], tn.mv}
		trans[k] = mergeExamples(trans[k], ex, n)
	}
	states[0] = mergeExamples(states[0], sub[0], n)
	return states, trans
}

// exampleIDs returns the ids of xs sorted by id, or nil for none.
func exampleIDs(xs []example) []string {
	if len(xs) == 0 {
		return nil
	}
	ids := make([]string, len(xs))
	for i, e := range xs {
		ids[i] = e.id
	}
	slices.Sort(ids)
	return ids
}
