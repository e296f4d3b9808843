package stages

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fsmine/fsmine/automaton"
)

// suggestion turns the final groups into stages and rules.
func (a *analysis) suggestion(nodePath string) *Suggestion {
	s := &Suggestion{TaskNodes: a.taskNodes}
	pos := a.groupPositions()
	var gs []int32
	for g, nodes := range a.groups {
		if nodes != nil {
			gs = append(gs, int32(g))
		}
	}
	sort.SliceStable(gs, func(i, j int) bool {
		if pos[gs[i]] != pos[gs[j]] {
			return pos[gs[i]] < pos[gs[j]]
		}
		return a.names[a.groups[gs[i]][0]] < a.names[a.groups[gs[j]][0]]
	})
	// names: unique, and no other node's name
	taken := map[string]bool{}
	stageName := map[int32]string{}
	for _, g := range gs {
		name := a.stageName(g)
		for i := 2; a.nameClash(g, name, taken); i++ {
			name = a.stageName(g) + "_stage" + strconv.Itoa(i)
		}
		taken[name] = true
		stageName[g] = name
	}
	st := a.stageStats()
	apart := a.keptApart(gs, stageName)
	for _, g := range gs {
		nodes := a.groups[g]
		stage := Stage{Name: stageName[g], Class: a.groupClass(g), Position: pos[g]}
		var folded []string
		for _, id := range nodes {
			stage.Nodes = append(stage.Nodes, a.names[id])
			stage.Records += a.records[id]
			if ms := a.members[id]; ms != nil {
				folded = append(folded, fmt.Sprintf("%s stands for the %d names that differ from it only in ids (%s, %s ...)", a.names[id], len(ms), ms[0], ms[1]))
			}
		}
		stage.Sessions = st.sessions[g]
		var why []string
		if len(nodes) > 1 {
			why = append(why, a.why[g])
		} else {
			why = append(why, "a stage of its own")
		}
		why = append(why, folded...)
		why = append(why, apart[g]...)
		if a.failure(g) {
			why = append(why, "a failure (the name says so): no merge to reach the stage count joins it to a step that is not one")
		}
		names := "the names start"
		if len(nodes) == 1 {
			names = "the name starts"
		}
		switch stage.Class {
		case ClassRead:
			why = append(why, "read-only ("+names+" with a lookup verb)")
		case ClassAct:
			why = append(why, "acting ("+names+" with a verb that changes something)")
		case ClassHelper:
			why = append(why, "a helper step (think, calculate)")
		}
		rep := 0.0
		if st.visits[g] > 0 {
			rep = float64(st.repeats[g]) / float64(st.visits[g])
		}
		if rep >= FoldShare {
			if stage.Class == ClassAct || stage.Class == ClassMixed {
				why = append(why, fmt.Sprintf("follows itself in %.0f%% of its visits but is not folded: each change counts", 100*rep))
			} else {
				stage.Fold = true
				why = append(why, fmt.Sprintf("follows itself in %.0f%% of its visits (%d of %d): folded, so that calls in a row are one visit",
					100*rep, st.repeats[g], st.visits[g]))
			}
		}
		if st.runs[g] >= MinDetourRuns && stage.Class == ClassHelper {
			if share := float64(st.returns[g]) / float64(st.runs[g]); share > DetourShare {
				stage.Detour = true
				stage.Fold = false
				why = append(why, fmt.Sprintf("returns to the stage it left in %d of its %d runs (%.0f%%): a detour", st.returns[g], st.runs[g], 100*share))
			}
		}
		stage.Why = strings.Join(why, "; ")
		s.Stages = append(s.Stages, stage)
	}
	s.chatRules(a, nodePath)
	// stage rules, by position
	claimed := make([]bool, len(a.all)) // per name: an earlier rule matches it
	for _, r := range s.Rules {
		re := regexp.MustCompile(r.Match[nodePath])
		a.eachName(re, "", func(i int) bool { claimed[i] = true; return true })
	}
	for i, stage := range s.Stages {
		pat := a.pattern(a.groups[gs[i]], claimed)
		re := regexp.MustCompile(pat)
		a.eachName(re, "", func(i int) bool { claimed[i] = true; return true })
		s.Rules = append(s.Rules, Rule{
			Name:   stage.Name,
			Why:    stage.Why,
			Match:  map[string]string{nodePath: pat},
			State:  escapeDollar(stage.Name),
			Fold:   stage.Fold,
			Detour: stage.Detour,
		})
	}
	return s
}

// keptApart explains, per group, the name families it was not merged
// with because one regularly follows the other in one order: told to the
// later of the two.
func (a *analysis) keptApart(gs []int32, stageName map[int32]string) map[int32][]string {
	f := a.flow()
	pos := a.groupPositions()
	out := map[int32][]string{}
	for x, g := range gs {
		for _, h := range gs[x+1:] {
			c := a.candidate(f, pos, min(g, h), max(g, h))
			if c.branch {
				later, other := g, h
				if pos[h] > pos[g] || pos[h] == pos[g] && h > g {
					later, other = h, g
				}
				out[later] = append(out[later], fmt.Sprintf("kept apart from %s: %s", stageName[other], a.branchReason(a.groups[g], a.groups[h])))
			}
			if c.affinity < FamilyAffinity || !c.sequence || c.conflict {
				continue
			}
			first, n, m := stageName[c.a], c.ab, c.ba
			if c.ab < c.ba {
				first, n, m = stageName[c.b], c.ba, c.ab
			}
			later := g
			if pos[h] > pos[g] || pos[h] == pos[g] && h > g {
				later = h
			}
			other := stageName[g]
			if later == g {
				other = stageName[h]
			}
			out[later] = append(out[later], fmt.Sprintf("kept apart from %s, though the names are of one family: they come in a fixed order (sessions with %s first: %d, second: %d): two steps, not one",
				other, first, n, m))
		}
	}
	return out
}

func (a *analysis) nameClash(g int32, name string, taken map[string]bool) bool {
	if taken[name] || name == automaton.StartID || name == automaton.EndID || name == "" {
		return true
	}
	if i, ok := slices.BinarySearch(a.names, name); ok && a.assign[i] != g {
		return true
	}
	if i, ok := slices.BinarySearch(a.all, name); ok && a.assign[a.nodeOf[i]] != g {
		return true
	}
	return false
}

// escapeDollar writes a literal state name as a rule's state template.
func escapeDollar(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// chatRules proposes what to do with message turns: a run of them that
// mostly returns to the stage it left is a detour (per node), else they
// are dropped (one rule).
func (s *Suggestion) chatRules(a *analysis, nodePath string) {
	k := len(a.names)
	runs, returns := make([]int, k), make([]int, k)
	nbr := make([]map[int32]bool, k)
	sessions := map[int32]int{}
	var in []int32
	for _, seq := range a.seqs {
		seen := map[int32]bool{}
		prev := int32(-1)
		in = in[:0]
		flush := func(next int32) {
			if len(in) == 0 {
				return
			}
			ret := prev >= 0 && prev == next
			for _, id := range in {
				runs[id]++
				if ret {
					returns[id]++
				}
			}
			in = in[:0]
		}
		for _, id := range seq {
			if a.chat[id] {
				if !seen[id] {
					seen[id] = true
					sessions[id]++
				}
				if !slices.Contains(in, id) {
					in = append(in, id)
				}
				continue
			}
			g := a.assign[id]
			flush(g)
			prev = g
		}
		flush(-2)
		// neighbours: task nodes right before or after a message turn
		for i, id := range seq {
			if !a.chat[id] {
				continue
			}
			for _, j := range []int{i - 1, i + 1} {
				if j >= 0 && j < len(seq) && !a.chat[seq[j]] {
					if nbr[id] == nil {
						nbr[id] = map[int32]bool{}
					}
					nbr[id][seq[j]] = true
				}
			}
		}
	}
	var drop []int32
	var dropWhy, reasons []string
	byName := true
	total := 0
	for _, r := range a.records {
		total += r
	}
	for id, name := range a.names {
		if !a.chat[id] {
			continue
		}
		s.Chat = append(s.Chat, name)
		share := 0.0
		if runs[id] > 0 {
			share = float64(returns[id]) / float64(runs[id])
		}
		stats := fmt.Sprintf("%s: %d of %d records, in %d of %d sessions, next to %d of %d task nodes; %d of its %d runs (%.0f%%) return to the stage they left",
			name, a.records[id], total, sessions[int32(id)], len(a.seqs), len(nbr[id]), a.taskNodes, returns[id], runs[id], 100*share)
		if runs[id] >= MinDetourRuns && share > TurnDetourShare {
			s.Rules = append(s.Rules, Rule{
				Name:   name,
				Why:    a.chatWhy[id] + ". " + stats + ": a detour, a self-loop on that stage",
				Match:  map[string]string{nodePath: a.nodePattern(int32(id))},
				State:  escapeDollar(name),
				Detour: true,
			})
			continue
		}
		drop = append(drop, int32(id))
		dropWhy = append(dropWhy, stats)
		byName = byName && a.chatWhy[id] == chatByName
		reasons = append(reasons, strings.Replace(stats, ":", ", "+strings.TrimPrefix(strings.TrimSuffix(a.chatWhy[id], ")"), "a message turn, not a task step (")+":", 1))
	}
	if len(drop) == 0 {
		return
	}
	rule := Rule{
		Name:  "message turns",
		Why:   "message turns, not task steps (the names say so). " + strings.Join(dropWhy, ". ") + ": dropped, as a detour would stay in the flow",
		Match: map[string]string{nodePath: a.alternation(drop)},
		Drop:  true,
	}
	if !byName {
		rule.Why = "message turns, not task steps. " + strings.Join(reasons, ". ") + ": dropped, as a detour would stay in the flow"
	}
	s.Rules = append([]Rule{rule}, s.Rules...)
}

// alternation is a pattern that matches exactly the names of the given
// nodes: those of one name in the order of the names, then those of
// several (see nodePattern).
func (a *analysis) alternation(nodes []int32) string {
	var names, folded []string
	for _, id := range nodes {
		if a.members[id] == nil {
			names = append(names, a.names[id])
		} else {
			folded = append(folded, a.nodePattern(id))
		}
	}
	slices.Sort(names)
	if len(names) > 0 {
		folded = append([]string{alternation(names)}, folded...)
	}
	return strings.Join(folded, "|")
}

// alternation is a pattern that matches exactly the given names.
func alternation(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = regexp.QuoteMeta(n)
	}
	if len(q) == 1 {
		return "^" + q[0] + "$"
	}
	return "^(?:" + strings.Join(q, "|") + ")$"
}

// families splits a stage's nodes into name families: each node, by
// position, joins the first family with every member of which it has
// FamilyAffinity, else starts one.
func (a *analysis) families(nodes []int32) [][]int32 {
	var fams [][]int32
next:
	for _, id := range a.byPosition(nodes) {
		for i, f := range fams {
			if !slices.ContainsFunc(f, func(x int32) bool { return a.aff[id][x] < FamilyAffinity }) {
				fams[i] = append(f, id)
				continue next
			}
		}
		fams = append(fams, []int32{id})
	}
	return fams
}

// pattern is the rule pattern for a stage's nodes: for each name family,
// the words its names share at the start and end (^find_user_id_by_,
// ^get_.*_details$) when that matches no node outside the stage that no
// earlier rule claims; the other nodes by name.
func (a *analysis) pattern(nodes []int32, claimed []bool) string {
	var parts []string
	var byName []int32
	for _, fam := range a.families(nodes) {
		if p, pre := a.familyPattern(fam); p != "" && a.onlyMatches(p, pre, nodes, claimed) {
			parts = append(parts, p)
			continue
		}
		byName = append(byName, fam...)
	}
	if len(byName) > 0 {
		parts = append(parts, a.alternation(byName))
	}
	return strings.Join(parts, "|")
}

// familyPattern is the pattern of a family's shared start and end, and
// the start; "" for a single node, a family that shares no whole word at
// either end, or one whose pattern does not match all its names
// (get_details is too short for ^get_.*_details$; the start and end of
// tool_*_a and tool_*_b are the id mark, not the names').
func (a *analysis) familyPattern(fam []int32) (p, pre string) {
	if len(fam) < 2 {
		return "", ""
	}
	pre, suf := a.affixes(fam)
	switch {
	case pre == "" && suf == "":
		return "", ""
	case suf == "":
		p = "^" + regexp.QuoteMeta(pre)
	case pre == "":
		p = regexp.QuoteMeta(suf) + "$"
	default:
		p = "^" + regexp.QuoteMeta(pre) + ".*" + regexp.QuoteMeta(suf) + "$"
	}
	re := regexp.MustCompile(p)
	for _, id := range fam {
		names := a.members[id]
		if names == nil {
			names = a.names[id : id+1]
		}
		for _, n := range names {
			if !re.MatchString(n) {
				return "", ""
			}
		}
	}
	return p, pre
}

// onlyMatches says whether pattern p, whose matches start with pre,
// matches, of the log's names that no earlier rule claims (claimed is nil
// for none) and are not message turns, only those of the stage's nodes.
func (a *analysis) onlyMatches(p, pre string, nodes []int32, claimed []bool) bool {
	re := regexp.MustCompile(p)
	ok := true
	a.eachName(re, pre, func(i int) bool {
		id := a.nodeOf[i]
		if (claimed == nil || !claimed[i]) && !a.chat[id] && !slices.Contains(nodes, id) {
			ok = false
		}
		return ok
	})
	return ok
}

// affixes returns the text a family's names share at the start, up to and
// with the separator before the first word that differs, and at the end,
// from the separator after the last word that differs; "" where they share
// no whole word.
func (a *analysis) affixes(fam []int32) (pre, suf string) {
	first := a.toks[fam[0]]
	p, s := len(first), len(first)
	for _, id := range fam[1:] {
		pp, ss := sharedEnds(first, a.toks[id])
		p, s = min(p, pp), min(s, ss)
	}
	name := a.names[fam[0]]
	if p == len(first) {
		p-- // the first name is the whole prefix: keep a word to vary
	}
	s = max(0, min(s, len(first)-1-p))
	if p > 0 {
		pre = name[:first[p].start]
		for _, id := range fam[1:] {
			if !strings.HasPrefix(a.names[id], pre) {
				pre = ""
				break
			}
		}
	}
	if s > 0 {
		suf = name[first[len(first)-s-1].end:]
		for _, id := range fam[1:] {
			if !strings.HasSuffix(a.names[id], suf) {
				suf = ""
				break
			}
		}
	}
	return pre, suf
}

// stageName names a group by its name families, in the order of their
// position: one family's name, up to three joined with "+"
// (find_user_id+get_details), or the first and how many more. A family
// whose shared words fit a node of another stage is named by its nodes.
func (a *analysis) stageName(g int32) string {
	fams := a.families(a.groups[g])
	var names []string
	for _, f := range fams {
		if p, pre := a.familyPattern(f); p != "" && !a.onlyMatches(p, pre, a.groups[g], nil) {
			// the family's name would take in another stage's node
			for _, id := range f {
				names = append(names, a.names[id])
			}
			continue
		}
		names = append(names, a.familyName(f))
	}
	if len(names) <= 3 {
		return strings.Join(names, "+")
	}
	return names[0] + "+" + strconv.Itoa(len(names)-1) + "_more"
}

// familyName names a family: its node; or the words its names share at
// the ends (get_*_details: get_details; find_user_id_by_*: find_user_id),
// with the differing first words when only the end is shared
// (exchange_or_return_delivered_order_items, handoff/agent:Refund Agent);
// or its names joined with "+".
func (a *analysis) familyName(fam []int32) string {
	if len(fam) == 1 {
		return a.names[fam[0]]
	}
	pre, suf := a.affixes(fam)
	trimPre := strings.TrimRightFunc(pre, notWord)
	for {
		toks := tokenize(trimPre)
		if len(toks) < 2 || !connectors[toks[len(toks)-1].text] {
			break
		}
		trimPre = strings.TrimRightFunc(trimPre[:toks[len(toks)-1].start], notWord)
	}
	trimSuf := strings.TrimLeftFunc(suf, notWord)
	sep := "_"
	switch {
	case len(trimPre) < len(pre):
		sep = pre[len(trimPre):][:1]
	case len(trimSuf) < len(suf):
		sep = suf[:1]
	}
	switch {
	case trimPre != "" && trimSuf != "":
		return trimPre + sep + trimSuf
	case trimPre != "":
		return trimPre
	case trimSuf != "":
		var firsts []string
		for _, id := range fam {
			if t := a.toks[id]; len(t) > 0 && !slices.Contains(firsts, a.names[id][t[0].start:t[0].end]) {
				firsts = append(firsts, a.names[id][t[0].start:t[0].end])
			}
		}
		if len(firsts) <= 2 && strings.Contains("_- .", sep) {
			return strings.Join(firsts, sep+"or"+sep) + sep + trimSuf
		}
		if len(firsts) <= 2 {
			return strings.Join(firsts, "/") + sep + trimSuf
		}
		return trimSuf
	}
	var parts []string
	for _, id := range fam {
		parts = append(parts, a.names[id])
	}
	return strings.Join(parts, "+")
}

func notWord(r rune) bool { return !isWordRune(r) }

// byPosition orders nodes by their mean position in the sessions, then by
// name.
func (a *analysis) byPosition(nodes []int32) []int32 {
	out := slices.Clone(nodes)
	sort.SliceStable(out, func(i, j int) bool {
		pi := a.posSum[out[i]] / float64(max(a.records[out[i]], 1))
		pj := a.posSum[out[j]] / float64(max(a.records[out[j]], 1))
		if pi != pj {
			return pi < pj
		}
		return out[i] < out[j]
	})
	return out
}

// branchReason names a pair of nodes of two groups on different branches
// after one decision, and that node.
func (a *analysis) branchReason(g, h []int32) string {
	n := len(a.names)
	for _, x := range g {
		for _, y := range h {
			if p := a.branchAfter[int(x)*n+int(y)]; p > 0 {
				return fmt.Sprintf("%s and %s are different branches after %s (most of their runs follow it, and they rarely come in one session)",
					a.names[x], a.names[y], a.names[p-1])
			} else if p < 0 {
				return fmt.Sprintf("%s and %s are different outcomes after %s (most of their runs follow it; they come in the same sessions, in no fixed order, but seldom between the same two runs of it: a check made again and again)",
					a.names[x], a.names[y], a.names[-p-1])
			}
		}
	}
	return ""
}
