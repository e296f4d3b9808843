package stages

import (
	"math"
	"slices"
)

// merger runs the agglomerative clustering of cluster without measuring
// every pair of groups again after each merge: it keeps the flow, the
// groups' affinities (complete linkage: the least of their nodes', so a
// merged group's is the lesser of the two it joins, as Lance and Williams
// 1967 update it) and every pair's candidate, and after a merge of b into
// a measures again only what the merge can change. Those are the pairs with
// a; the pairs with a group that had both a and b around its runs (their
// counts add up, which changes its norm); and the pairs of a group that had
// a around its runs with one that had b. Every other number of a candidate (which
// comes first, transitions, runs, positions, classes, sizes) belongs to the
// two groups alone. Each row of pairs keeps its best, so that finding the
// best merge takes one look per group, not per pair. The result is the same
// merges, in the same order, as measuring every pair from scratch
// (TestMergerSame holds it to that).
type merger struct {
	a       *analysis
	f       *flow
	k       int
	aff     []float64 // k*i + j: least affinity of a node of i and a node of j
	branch  []bool    // k*i + j: a node of i and one of j are branches (see findBranches)
	fail    []bool    // per group: every node names a failure (see analysis.failure)
	pos     []float64 // per group
	recs    []int     // per group
	class   []string
	inv     [][]int32   // per group: the distinct sessions of tasks it occurs in, ascending
	cands   []candidate // per pair i < j, at tri(i, j)
	rowBest []int32     // per group i: the j > i of its best pair, -1 for none
	live    []bool
}

func (a *analysis) newMerger() *merger {
	k := len(a.groups)
	m := &merger{a: a, f: a.flow(), k: k, aff: make([]float64, k*k), pos: a.groupPositions(),
		recs: make([]int, k), class: make([]string, k), fail: make([]bool, k),
		inv: make([][]int32, k), branch: make([]bool, k*k), cands: make([]candidate, k*(k-1)/2), rowBest: make([]int32, k), live: make([]bool, k)}
	for g, nodes := range a.groups {
		m.live[g] = nodes != nil
		m.class[g] = a.groupClass(int32(g))
		m.fail[g] = a.failure(int32(g))
		m.recs[g] = a.groupRecords(int32(g))
	}
	for i := range k {
		for j := range k {
			aff := math.Inf(1)
			for _, x := range a.groups[i] {
				for _, y := range a.groups[j] {
					aff = min(aff, a.aff[x][y])
					m.branch[k*i+j] = m.branch[k*i+j] || a.branchAfter[int(x)*len(a.names)+int(y)] != 0
				}
			}
			m.aff[k*i+j] = aff
		}
	}
	for v, task := range a.tasks {
		for _, id := range task {
			g := a.assign[id]
			if n := len(m.inv[g]); n == 0 || m.inv[g][n-1] != int32(v) {
				m.inv[g] = append(m.inv[g], int32(v))
			}
		}
	}
	for i := range k {
		for j := i + 1; j < k; j++ {
			if m.live[i] && m.live[j] {
				m.measure(int32(i), int32(j))
			}
		}
	}
	for i := range k {
		m.rescan(int32(i))
	}
	return m
}

// tri is where the pair i < j is in cands.
func (m *merger) tri(i, j int32) int {
	return int(i)*(2*m.k-int(i)-1)/2 + int(j-i-1)
}

func (m *merger) measure(i, j int32) {
	m.cands[m.tri(i, j)] = newCandidate(m.f, i, j, m.aff[m.k*int(i)+int(j)], m.branch[m.k*int(i)+int(j)], m.fail[i] != m.fail[j], m.class[i], m.class[j],
		math.Abs(m.pos[i]-m.pos[j]), min(m.recs[i], m.recs[j]))
}

// better says whether candidate c beats d, which comes first in the order
// of the pairs: a candidate the default count may take beats one it never
// does (see candidate.blocked); a strong candidate beats a weak one; of two
// strong ones the stronger, of two weak ones the cheaper; d on a tie.
func better(c, d *candidate) bool {
	cs, ds := c.strong(), d.strong()
	switch {
	case c.blocked() != d.blocked():
		return d.blocked()
	case cs != ds:
		return cs
	case cs:
		return c.strength() > d.strength()
	}
	return c.cost < d.cost
}

// rescan finds row i's best pair again.
func (m *merger) rescan(i int32) {
	m.rowBest[i] = -1
	if !m.live[i] {
		return
	}
	for j := i + 1; j < int32(m.k); j++ {
		if !m.live[j] {
			continue
		}
		if b := m.rowBest[i]; b < 0 || better(&m.cands[m.tri(i, j)], &m.cands[m.tri(i, b)]) {
			m.rowBest[i] = j
		}
	}
}

// changed updates row i's best after its pair with j was measured again.
func (m *merger) changed(i, j int32) {
	b := m.rowBest[i]
	switch {
	case b == j:
		m.rescan(i) // it may have got worse
	case b < 0:
		m.rowBest[i] = j
	case j < b && !better(&m.cands[m.tri(i, b)], &m.cands[m.tri(i, j)]),
		j > b && better(&m.cands[m.tri(i, j)], &m.cands[m.tri(i, b)]):
		m.rowBest[i] = j
	}
}

// best returns the strong candidate with the most evidence; when there is
// none, the merge that changes the fewest records: the records of the
// smaller group, weighed by how little evidence there is (see strength).
// Ties go to the pair that comes first by group order, which is by node
// name.
func (m *merger) best() (candidate, bool) {
	var best *candidate
	for i, j := range m.rowBest {
		if j < 0 {
			continue
		}
		if c := &m.cands[m.tri(int32(i), j)]; best == nil || better(c, best) {
			best = c
		}
	}
	if best == nil {
		return candidate{}, false
	}
	return *best, true
}

// merge joins group c.b into c.a, in the groups and in what the merger
// keeps, and measures again the pairs the merge changes.
func (m *merger) merge(c candidate) {
	a, b, k, f := c.a, c.b, m.k, m.f
	ka, kb := k*int(a), k*int(b)
	// groups around a and groups around b: the products of their counts
	// of a and b add to their pairs' dot products
	var na, nb []int32
	var both []int32 // groups with a and b around: all their pairs change (norm)
	for _, x := range f.nz[a] {
		if x < int32(k) && x != b {
			na = append(na, x)
			if f.ctx[x][b] != 0 {
				both = append(both, x)
			}
		}
	}
	for _, x := range f.nz[b] {
		if x < int32(k) && x != a {
			nb = append(nb, x)
		}
	}
	m.a.merge(c)
	m.joinFlow(a, b)
	// affinity, position, class, size
	for x := range k {
		v := min(m.aff[ka+x], m.aff[kb+x])
		m.aff[ka+x], m.aff[k*x+int(a)] = v, v
		br := m.branch[ka+x] || m.branch[kb+x]
		m.branch[ka+x], m.branch[k*x+int(a)] = br, br
	}
	m.recs[a] += m.recs[b]
	m.pos[a] = m.a.groupPosition(a) // summed in node order, as groupPositions does
	m.class[a] = m.a.groupClass(a)
	m.fail[a] = m.fail[a] && m.fail[b]
	m.live[b] = false
	m.remeasure(a, b, na, nb, both)
}

// joinFlow makes b's runs, transitions, what comes around and which comes
// first a's, once the groups have b's nodes in a.
func (m *merger) joinFlow(a, b int32) {
	k, f := m.k, m.f
	ka, kb := k*int(a), k*int(b)
	// runs and transitions: a run of a next to one of b becomes one run
	f.runs[a] += f.runs[b] - f.trans[ka+int(b)] - f.trans[kb+int(a)]
	f.runs[b] = 0
	for h := range k {
		if h != int(a) && h != int(b) {
			f.trans[ka+h] += f.trans[kb+h]
			f.trans[k*h+int(a)] += f.trans[k*h+int(b)]
		}
		f.trans[kb+h], f.trans[k*h+int(b)] = 0, 0
	}
	f.trans[ka+int(a)] = 0
	// what comes around: b's counts are a's now
	for _, x := range f.nz[b] {
		if x == a || x == b {
			continue
		}
		f.ctx[a][x] += f.ctx[b][x]
		if x < int32(k) {
			f.ctx[x][a] += f.ctx[x][b]
			f.ctx[x][b] = 0
			f.nz[x] = slices.DeleteFunc(f.nz[x], func(y int32) bool { return y == b })
			if i, found := slices.BinarySearch(f.nz[x], a); !found {
				f.nz[x] = slices.Insert(f.nz[x], i, a)
			}
		}
	}
	f.ctx[a][a], f.ctx[a][b] = 0, 0
	clear(f.ctx[b])
	f.nz[a] = slices.DeleteFunc(mergeSorted(f.nz[a], f.nz[b]), func(y int32) bool { return y == a || y == b })
	f.nz[b] = nil
	// which comes first, and sessions: counted again where a or b occurs
	m.inv[a] = mergeSorted(m.inv[a], m.inv[b])
	m.inv[b] = nil
	for h := range k {
		f.first[ka+h], f.first[k*h+int(a)], f.first[kb+h], f.first[k*h+int(b)] = 0, 0, 0, 0
	}
	f.sessions[a], f.sessions[b] = 0, 0
	seen := make([]bool, k)
	var order []int32
	for _, v := range m.inv[a] {
		w := m.a.weight[v]
		order = order[:0]
		for _, id := range m.a.tasks[v] {
			if g := m.a.assign[id]; !seen[g] {
				seen[g] = true
				order = append(order, g)
			}
		}
		f.sessions[a] += w
		after := false
		for _, g := range order {
			seen[g] = false
			switch {
			case g == a:
				after = true
			case after:
				f.first[ka+int(g)] += w
			default:
				f.first[k*int(g)+int(a)] += w
			}
		}
	}
}

// remeasure measures again the pairs that the merge of b into a changes
// (see merger), given the groups that were around a, around b, and around
// both, and keeps each row's best.
func (m *merger) remeasure(a, b int32, na, nb, both []int32) {
	k := m.k
	m.rowBest[b] = -1
	for i := range int32(k) {
		if m.live[i] && m.rowBest[i] == b {
			m.rescan(i)
		}
	}
	for x := range int32(k) {
		if m.live[x] && x != a {
			m.measure(min(a, x), max(a, x))
			if x < a {
				m.changed(x, a)
			}
		}
	}
	m.rescan(a)
	for _, x := range both {
		for y := range int32(k) {
			if m.live[y] && y != x && y != a {
				m.measure(min(x, y), max(x, y))
				m.changed(min(x, y), max(x, y))
			}
		}
	}
	for _, x := range na {
		for _, y := range nb {
			if x != y && m.live[x] && m.live[y] {
				m.measure(min(x, y), max(x, y))
				m.changed(min(x, y), max(x, y))
			}
		}
	}
}

// mergeSorted returns the ascending union of two ascending lists.
func mergeSorted(x, y []int32) []int32 {
	out := make([]int32, 0, len(x)+len(y))
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case j == len(y) || i < len(x) && x[i] < y[j]:
			out = append(out, x[i])
			i++
		case i == len(x) || y[j] < x[i]:
			out = append(out, y[j])
			j++
		default:
			out = append(out, x[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// failures counts the live groups of failure steps.
func (m *merger) failures() int {
	n := 0
	for g, f := range m.fail {
		if f && m.live[g] {
			n++
		}
	}
	return n
}
