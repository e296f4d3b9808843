package stages

import (
	"encoding/binary"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/fsmine/fsmine/mine"
)

// analysis holds a log's sessions as node ids and what clustering works on.
// A node is a family key of foldIDs: the names of the log that differ only
// in ids are one node.
type analysis struct {
	names   []string   // distinct nodes, sorted: a name, or a family key of several names
	members [][]string // per node: its names, sorted, when it has more than one; else nil
	kinds   [][][]int  // per node with members: at each id mark, the kinds of id its names have
	all     []string   // every distinct name of the log, sorted
	nodeOf  []int32    // per name of all: its node
	toks    [][]token  // per node
	class   []string   // per node
	fail    []bool     // per node: its name says a failure (see negated)
	chat    []bool     // per node: a message turn, not a task step
	chatWhy []string   // per node: why it is a message turn
	// per pair of nodes x, y at n*x+y: 1 + the node after which they are
	// different branches of one decision (negated for the outcomes of a
	// repeated check, see findBranches), 0 when they are not
	branchAfter []int32
	records     []int     // per node
	sessions    []int     // per node
	posSum      []float64 // per node: sum of relative positions among task steps
	seqs        [][]int32 // per session, every record's node
	tasks       [][]int32 // distinct sessions of task nodes only (message turns left out)
	weight      []int     // per distinct session of tasks, how many sessions
	aff         [][]float64

	taskNodes int
	assign    []int32   // node -> group; -1 for message turns
	groups    [][]int32 // group -> its nodes, sorted; nil once merged away
	why       []string  // group -> how it was formed
}

func newAnalysis(lg *mine.Log) (*analysis, error) {
	a := &analysis{}
	ids := map[uint32]int32{}
	var labels []uint32
	for _, s := range lg.Sessions {
		for _, v := range s.Visits {
			if _, ok := ids[v.Label]; !ok {
				ids[v.Label] = 0
				labels = append(labels, v.Label)
			}
		}
	}
	sort.Slice(labels, func(i, j int) bool { return lg.Name(labels[i]) < lg.Name(labels[j]) })
	a.all = make([]string, len(labels))
	for i, l := range labels {
		a.all[i] = lg.Name(l)
	}
	a.foldNames()
	for i, l := range labels {
		ids[l] = a.nodeOf[i]
	}
	n := len(a.names)
	a.toks = make([][]token, n)
	a.class = make([]string, n)
	a.fail = make([]bool, n)
	a.chat = make([]bool, n)
	a.records = make([]int, n)
	a.sessions = make([]int, n)
	a.posSum = make([]float64, n)
	a.chatWhy = make([]string, n)
	nchat := 0
	for i, name := range a.names {
		a.toks[i] = tokenize(name)
		a.class[i] = classOf(name, a.toks[i])
		a.fail[i] = negated(a.toks[i])
		if a.chat[i] = isChatName(name, a.toks[i]); a.chat[i] {
			a.chatWhy[i] = chatByName
			nchat++
		}
	}
	if nchat == n {
		// A log of message turns only: they are its steps.
		clear(a.chat)
		clear(a.chatWhy)
	}
	if n > MaxNodes {
		return nil, fmt.Errorf("%w: %d distinct nodes (of %d names, with the ids in names folded: tool_get_7 and tool_get_12 are one node), more than %d to group into stages; map the node to fewer values first (--field node=PATH, or label rules)",
			ErrTooManyNodes, n, len(a.all), MaxNodes)
	}
	seen := make([]int, n)
	for si, s := range lg.Sessions {
		seq := make([]int32, len(s.Visits))
		for i, v := range s.Visits {
			id := ids[v.Label]
			seq[i] = id
			a.records[id] += int(max(v.Records, 1))
			if seen[id] != si+1 {
				seen[id] = si + 1
				a.sessions[id]++
			}
		}
		a.seqs = append(a.seqs, seq)
	}
	a.findTurns()
	a.findTasks()
	a.findFreeText()
	// A name that says a failure and one that does not are no family, for
	// the merges and the branches alike (plane_flight_available and
	// plane_flight_unavailable: two outcomes of one step).
	a.aff = make([][]float64, n)
	for i := range n {
		a.aff[i] = make([]float64, n)
		for j := range n {
			if a.fail[i] == a.fail[j] {
				a.aff[i][j] = affinity(a.toks[i], a.toks[j])
			}
		}
	}
	a.assign = make([]int32, n)
	for i := range n {
		if a.chat[i] {
			a.assign[i] = -1
			continue
		}
		a.assign[i] = int32(len(a.groups))
		a.groups = append(a.groups, []int32{int32(i)})
		a.why = append(a.why, "")
		a.taskNodes++
	}
	a.findBranches()
	return a, nil
}

// findTasks makes the distinct sessions of task steps (message turns left
// out), and the task steps' positions in them.
func (a *analysis) findTasks() {
	a.tasks, a.weight = nil, nil
	clear(a.posSum)
	variant := map[string]int{}
	var key []byte
	for _, seq := range a.seqs {
		var task []int32
		for _, id := range seq {
			if !a.chat[id] {
				task = append(task, id)
			}
		}
		for i, id := range task {
			a.posSum[id] += relPos(i, len(task))
		}
		key = key[:0]
		for _, id := range task {
			key = binary.AppendUvarint(key, uint64(id))
		}
		if v, ok := variant[string(key)]; ok {
			a.weight[v]++
			continue
		}
		variant[string(key)] = len(a.tasks)
		a.tasks = append(a.tasks, task)
		a.weight = append(a.weight, 1)
	}
}

// foldNames makes the nodes of the log's names (a.all, sorted): the names
// with one family key (see foldIDs) are one node, named by the key when
// they are several, by the name when it is alone; nodes sorted by name.
func (a *analysis) foldNames() {
	keys := make([]string, len(a.all))
	keyKinds := make([][]int, len(a.all))
	byKey := map[string][]int32{}
	for i, name := range a.all {
		if strings.Contains(name, idMark) {
			continue // its own mark would read as an id's
		}
		keys[i], keyKinds[i] = foldIDs(name)
		if keyKinds[i] != nil {
			byKey[keys[i]] = append(byKey[keys[i]], int32(i))
		}
	}
	family := make([][]int32, len(a.all)) // per name: its family's names, nil for a name alone
	for key, ms := range byKey {
		if _, clash := slices.BinarySearch(a.all, key); len(ms) > 1 && !clash {
			for _, m := range ms {
				family[m] = ms
			}
		}
	}
	nodeName := func(i int32) string {
		if family[i] != nil {
			return keys[i]
		}
		return a.all[i]
	}
	var order []int32 // a name of each node
	for i := range int32(len(a.all)) {
		if family[i] == nil || family[i][0] == i {
			order = append(order, i)
		}
	}
	sort.Slice(order, func(i, j int) bool { return nodeName(order[i]) < nodeName(order[j]) })
	a.nodeOf = make([]int32, len(a.all))
	for id, first := range order {
		a.names = append(a.names, nodeName(first))
		ms := family[first]
		if ms == nil {
			a.nodeOf[first] = int32(id)
			a.members = append(a.members, nil)
			a.kinds = append(a.kinds, nil)
			continue
		}
		var members []string
		kinds := make([][]int, len(keyKinds[first]))
		for _, m := range ms {
			a.nodeOf[m] = int32(id)
			members = append(members, a.all[m])
			for x, k := range keyKinds[m] {
				if !slices.Contains(kinds[x], k) {
					kinds[x] = append(kinds[x], k)
				}
			}
		}
		for _, k := range kinds {
			slices.Sort(k)
		}
		a.members = append(a.members, members)
		a.kinds = append(a.kinds, kinds)
	}
}

// nodePattern is the pattern of one node: its name, or for a family of
// names that differ in ids, its key with a pattern of those ids at each
// mark when that matches no other name of the log, else its names.
func (a *analysis) nodePattern(id int32) string {
	if a.members[id] == nil {
		return "^" + regexp.QuoteMeta(a.names[id]) + "$"
	}
	p := keyPattern(a.names[id], a.kinds[id])
	re := regexp.MustCompile(p)
	ok := true
	a.eachName(re, strings.SplitN(a.names[id], idMark, 2)[0], func(i int) bool {
		if a.nodeOf[i] != id {
			ok = false
		}
		return ok
	})
	if ok {
		return p
	}
	return alternation(a.members[id])
}

// eachName calls f with the index in a.all of each name that re matches,
// of the names that start with prefix (a literal prefix of re), until f
// returns false.
func (a *analysis) eachName(re *regexp.Regexp, prefix string, f func(i int) bool) {
	lo := sort.SearchStrings(a.all, prefix)
	for i := lo; i < len(a.all) && strings.HasPrefix(a.all[i], prefix); i++ {
		if re.MatchString(a.all[i]) && !f(i) {
			return
		}
	}
}

// relPos is the relative position of step i of n: 0 first, 1 last, 0.5
// for a session of one step.
func relPos(i, n int) float64 {
	if n <= 1 {
		return 0.5
	}
	return float64(i) / float64(n-1)
}

// flow is what clustering measures of the task steps with the current
// groups: runs (maximal stretches of one group), the transitions between
// runs, the groups before and after each run, and which of two groups
// comes first in the sessions that have both.
type flow struct {
	k        int
	runs     []int
	sessions []int
	trans    []int       // k*from + to: runs of from followed by a run of to
	first    []int       // k*g + h: sessions where g comes before h
	ctx      [][]float64 // group -> counts of the groups (and start, end) around its runs
	nz       [][]int32   // group -> where its ctx is not 0, ascending
}

func (a *analysis) flow() *flow {
	k := len(a.groups)
	f := &flow{k: k, runs: make([]int, k), sessions: make([]int, k), trans: make([]int, k*k), first: make([]int, k*k), ctx: make([][]float64, k), nz: make([][]int32, k)}
	start, end := int32(k), int32(k+1)
	for g := range f.ctx {
		f.ctx[g] = make([]float64, k+2)
	}
	var runs, order []int32
	in := make([]bool, k)
	for v, task := range a.tasks {
		w := a.weight[v]
		runs, order = runs[:0], order[:0]
		for _, id := range task {
			g := a.assign[id]
			if len(runs) == 0 || runs[len(runs)-1] != g {
				runs = append(runs, g)
			}
			if !in[g] {
				in[g] = true
				order = append(order, g)
			}
		}
		for i, g := range order {
			in[g] = false
			f.sessions[g] += w
			for _, h := range order[i+1:] {
				f.first[k*int(g)+int(h)] += w
			}
		}
		for i, g := range runs {
			f.runs[g] += w
			prev, next := start, end
			if i > 0 {
				prev = runs[i-1]
				f.trans[k*int(prev)+int(g)] += w
			}
			if i+1 < len(runs) {
				next = runs[i+1]
			}
			f.ctx[g][prev] += float64(w)
			f.ctx[g][next] += float64(w)
		}
	}
	for g, row := range f.ctx {
		for x, c := range row {
			if c != 0 {
				f.nz[g] = append(f.nz[g], int32(x))
			}
		}
	}
	return f
}

// cosine is the cosine similarity of what comes around groups i and j,
// leaving out each other: the sums run over the entries that are not 0, in
// the order of the groups, which gives the same floats as the sums over
// all entries.
func (f *flow) cosine(i, j int32) float64 {
	var dot, ni, nj float64
	ci, cj := f.ctx[i], f.ctx[j]
	for _, g := range f.nz[i] {
		if g == i || g == j {
			continue
		}
		ni += ci[g] * ci[g]
		dot += ci[g] * cj[g]
	}
	for _, g := range f.nz[j] {
		if g == i || g == j {
			continue
		}
		nj += cj[g] * cj[g]
	}
	if ni > 0 && nj > 0 {
		return dot / math.Sqrt(ni*nj)
	}
	return 0
}

// candidate is a possible merge of two groups and its evidence.
type candidate struct {
	a, b     int32
	affinity float64 // complete linkage: the least affinity of a pair of their names
	adjacent float64 // share of the visits of each spent next to the other, the smaller
	context  float64 // cosine similarity of what comes before and after them
	conflict bool    // one reads, the other acts
	branch   bool    // a node of each on different branches after one decision
	apart    bool    // one is a group of failure steps, the other not (see failure)
	sequence bool    // they come in a fixed order
	ab, ba   int     // sessions with a before b, with b before a
	posGap   float64
	cost     float64 // of a merge without strong evidence: see best
}

// strength is a candidate's evidence: at least 1 for a strong candidate (a
// family in no fixed order, or steps done together); below 1 for the
// others, whose merges only a stage count forces.
func (c candidate) strength() float64 {
	aff := 0.0
	if c.affinity >= FamilyAffinity {
		aff = c.affinity / FamilyAffinity
		if c.sequence {
			aff *= 0.5
		}
	}
	s := max(aff, c.adjacent/Adjacency, 0.5*c.context)
	if c.conflict || !c.strong() {
		if c.conflict {
			s *= 0.5
		}
		s = min(s, 0.99)
	}
	return s + 0.001*(1-c.posGap)
}

// blocked says whether c is a merge the default stage count never takes:
// of two branches, or a weak one of a failure step with another step.
func (c candidate) blocked() bool {
	return c.branch || c.apart && !c.strong()
}

func (c candidate) strong() bool {
	return !c.conflict && !c.branch && (c.affinity >= FamilyAffinity && !c.sequence || c.adjacent >= Adjacency)
}

// cluster merges groups until the stage count is reached: want, or when
// want is 0, until no strong candidate is left and at most MaxStages
// groups remain besides the groups of failure steps, but never below
// MinStages. A failure step stays a stage of its own rather than hide in
// another one to reach the count: a rare branch is where a reviewer looks.
func (a *analysis) cluster(want int) {
	live := a.taskNodes
	if live <= 1 || want > 0 && live <= want || want == 0 && live <= MinStages {
		return
	}
	m := a.newMerger()
	for live > 1 {
		if want > 0 && live <= want {
			return
		}
		if want == 0 && live <= MinStages {
			return
		}
		best, ok := m.best()
		if !ok {
			return
		}
		if want == 0 && live-m.failures() <= MaxStages && !best.strong() {
			return
		}
		if want == 0 && best.blocked() {
			// Branches, and a failure step with another step, merge only
			// when a stage count asked for forces them (better puts them
			// last): a count of the suggestion's choosing never does.
			return
		}
		m.merge(best)
		live--
	}
}

// newCandidate measures the merge of groups i < j from the flow, the
// least affinity of their names, their classes and positions; for a weak
// candidate, size is the records of the smaller group (see merger.best).
func newCandidate(f *flow, i, j int32, aff float64, branch, apart bool, ci, cj string, posGap float64, size int) candidate {
	c := candidate{a: i, b: j, affinity: aff, branch: branch, apart: apart, posGap: posGap}
	c.conflict = ci == ClassRead && cj == ClassAct || ci == ClassAct && cj == ClassRead || ci == ClassMixed || cj == ClassMixed
	c.ab, c.ba = f.first[f.k*int(i)+int(j)], f.first[f.k*int(j)+int(i)]
	c.sequence = c.ab+c.ba >= MinOrderSessions &&
		float64(max(c.ab, c.ba)) >= Sequence*float64(min(f.sessions[i], f.sessions[j])) &&
		float64(max(c.ab, c.ba)) >= FixedOrder*float64(c.ab+c.ba)
	together := float64(f.trans[f.k*int(i)+int(j)] + f.trans[f.k*int(j)+int(i)])
	if f.runs[i] > 0 && f.runs[j] > 0 {
		c.adjacent = min(1, together/float64(max(f.runs[i], f.runs[j])))
	}
	c.context = f.cosine(i, j)
	if !c.strong() {
		c.cost = float64(size) * (1 - c.strength())
	}
	return c
}

// candidate measures the merge of groups i < j from scratch.
func (a *analysis) candidate(f *flow, pos []float64, i, j int32) candidate {
	aff := math.Inf(1)
	branch := false
	for _, x := range a.groups[i] {
		for _, y := range a.groups[j] {
			aff = min(aff, a.aff[x][y])
			branch = branch || a.branchAfter[int(x)*len(a.names)+int(y)] != 0
		}
	}
	return newCandidate(f, i, j, aff, branch, a.failure(i) != a.failure(j), a.groupClass(i), a.groupClass(j), math.Abs(pos[i]-pos[j]), min(a.groupRecords(i), a.groupRecords(j)))
}

// failure says whether every node of group g names a failure
// (ride_inform_nothing_found, plane_reservation_failed; see negated).
func (a *analysis) failure(g int32) bool {
	return len(a.groups[g]) > 0 && !slices.ContainsFunc(a.groups[g], func(id int32) bool { return !a.fail[id] })
}

func (a *analysis) groupRecords(g int32) int {
	n := 0
	for _, id := range a.groups[g] {
		n += a.records[id]
	}
	return n
}

func (a *analysis) groupPositions() []float64 {
	pos := make([]float64, len(a.groups))
	for g := range a.groups {
		pos[g] = a.groupPosition(int32(g))
	}
	return pos
}

// groupPosition is the mean relative position of a group's records.
func (a *analysis) groupPosition(g int32) float64 {
	sum, n := 0.0, 0
	for _, id := range a.groups[g] {
		sum += a.posSum[id]
		n += a.records[id]
	}
	if n > 0 {
		return sum / float64(n)
	}
	return 0
}

// groupClass is the class its nodes share: "" when none tells, the one
// class of those that tell, or ClassMixed.
func (a *analysis) groupClass(g int32) string {
	cls := ""
	for _, id := range a.groups[g] {
		c := a.class[id]
		switch {
		case c == "" || c == cls:
		case cls == "":
			cls = c
		default:
			return ClassMixed
		}
	}
	return cls
}

// merge joins group c.b into c.a and records why.
func (a *analysis) merge(c candidate) {
	var why string
	switch {
	case c.strong() && c.affinity >= FamilyAffinity && !c.sequence:
		why = fmt.Sprintf("names of one family (every pair shares %.0f%% or more of its words at the ends), ", 100*c.affinity)
		if c.ab+c.ba == 0 {
			why += "never in the same session: alternatives"
		} else {
			why += fmt.Sprintf("in no fixed order (sessions with the first before the second: %d, after it: %d)", c.ab, c.ba)
		}
	case c.strong():
		why = fmt.Sprintf("occur next to each other in %.0f%% of their visits", 100*c.adjacent)
	default:
		var ev []string
		if c.affinity > 0 {
			ev = append(ev, fmt.Sprintf("names share %.0f%% of their words at the ends", 100*c.affinity))
		}
		if c.sequence {
			ev = append(ev, fmt.Sprintf("in a fixed order (sessions with the first before the second: %d, after it: %d)", c.ab, c.ba))
		}
		if c.adjacent > 0 {
			ev = append(ev, fmt.Sprintf("next to each other in %.0f%% of their visits", 100*c.adjacent))
		}
		if c.context > 0 {
			ev = append(ev, fmt.Sprintf("context similarity %.2f", c.context))
		}
		ev = append(ev, fmt.Sprintf("positions %.2f apart", c.posGap))
		if c.branch {
			ev = append(ev, "though on different branches after one decision: merged last")
		}
		why = fmt.Sprintf("merged to reach the stage count: the merge that changes the fewest records (%.0f, weighed by the evidence: %s)", c.cost, strings.Join(ev, ", "))
	}
	parts := []string{}
	for _, w := range []string{a.why[c.a], a.why[c.b]} {
		if w != "" {
			parts = append(parts, w)
		}
	}
	parts = append(parts, fmt.Sprintf("%s with %s: %s", a.groupLabel(c.a), a.groupLabel(c.b), why))
	a.groups[c.a] = slices.Sorted(slices.Values(append(a.groups[c.a], a.groups[c.b]...)))
	for _, id := range a.groups[c.b] {
		a.assign[id] = c.a
	}
	a.groups[c.b] = nil
	a.why[c.a] = strings.Join(parts, "; ")
	a.why[c.b] = ""
}

// groupLabel names a group in a reason: its node, or its nodes in braces.
func (a *analysis) groupLabel(g int32) string {
	var names []string
	for _, id := range a.groups[g] {
		names = append(names, a.names[id])
	}
	if len(names) == 1 {
		return names[0]
	}
	return "{" + strings.Join(names, ", ") + "}"
}

// stageStats counts, per group, over the task steps: visits, visits
// followed by the same group, runs, runs that return to the group they
// left, and sessions.
type stageStats struct {
	visits, repeats, runs, returns, sessions []int
}

func (a *analysis) stageStats() *stageStats {
	k := len(a.groups)
	st := &stageStats{make([]int, k), make([]int, k), make([]int, k), make([]int, k), make([]int, k)}
	seen := make([]int, k)
	var runs []int32
	for v, task := range a.tasks {
		w := a.weight[v]
		runs = runs[:0]
		for i, id := range task {
			g := a.assign[id]
			st.visits[g] += w
			if seen[g] != v+1 {
				seen[g] = v + 1
				st.sessions[g] += w
			}
			if i+1 < len(task) && a.assign[task[i+1]] == g {
				st.repeats[g] += w
			}
			if len(runs) == 0 || runs[len(runs)-1] != g {
				runs = append(runs, g)
			}
		}
		for i, g := range runs {
			st.runs[g] += w
			if i > 0 && i+1 < len(runs) && runs[i-1] == runs[i+1] {
				st.returns[g] += w
			}
		}
	}
	return st
}
