package render

import (
	"cmp"
	"slices"

	"github.com/fsmine/fsmine/automaton"
)

// MapFit says how much of a designed flow the review map (DetailSummary)
// of a mined model shows, design and map compared by state label.
type MapFit struct {
	// HappyPath is the labels of the design's happy path: its shortest
	// path of moves from __start__ to __end__ that takes no move on the
	// event "empty" (a query that found nothing), moves tried in
	// Model.Out's order, with __start__, __end__ and repeats in a row left
	// out.
	HappyPath []string
	// OnTrunk counts the distinct labels of HappyPath that label a state of
	// the mined model's trunk, the map's spine.
	OnTrunk int
	// Moves are the designed moves between two different labels (start
	// and end included), as [from, to] label pairs, sorted; Drawn counts
	// those the map draws: an edge of the map stands for a mined
	// transition from a state of the first label to one of the second.
	Moves [][2]string
	Drawn int
	// Missing are the Moves the map does not draw, sorted.
	Missing [][2]string
}

// FitMap holds design (a designed model, fsmine import, whose labels are
// those of mined: import's --labels maps them) against the review map of
// mined. A nil model fits nothing. The map is laid out to be drawn as the
// pictures draw it (see untangle): the error is the layout's.
func FitMap(design, mined *automaton.Model) (MapFit, error) {
	var fit MapFit
	d, err := sorted(design)
	if err != nil {
		return fit, nil
	}
	m, err := sorted(mined)
	if err != nil {
		return fit, nil
	}
	sm, err := drawnSummary(m)
	if err != nil {
		return fit, err
	}
	fit.HappyPath = happyPath(d)
	trunk := map[string]bool{}
	for _, id := range m.Trunk {
		if s := m.State(id); s != nil {
			trunk[s.Label] = true
		}
	}
	seen := map[string]bool{}
	for _, l := range fit.HappyPath {
		if !seen[l] && trunk[l] {
			fit.OnTrunk++
		}
		seen[l] = true
	}

	labelOf := func(m *automaton.Model, id string) string {
		if s := m.State(id); s != nil {
			return s.Label
		}
		return id
	}
	moves := map[[2]string]bool{}
	for _, t := range d.Transitions {
		k := [2]string{labelOf(d, t.From), labelOf(d, t.To)}
		if k[0] != k[1] {
			moves[k] = true
		}
	}
	drawn := map[[2]string]bool{}
	for _, e := range sm.edges {
		for _, t := range e.ts {
			drawn[[2]string{labelOf(m, t.From), labelOf(m, t.To)}] = true
		}
	}
	for k := range moves {
		fit.Moves = append(fit.Moves, k)
		if drawn[k] {
			fit.Drawn++
		} else {
			fit.Missing = append(fit.Missing, k)
		}
	}
	for _, s := range [][][2]string{fit.Moves, fit.Missing} {
		slices.SortFunc(s, func(a, b [2]string) int {
			return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
		})
	}
	return fit, nil
}

// happyPathBudget bounds the moves happyPath tries before it settles for
// the shortest path: designs are small, but a file is hostile until checked.
const happyPathBudget = 100_000

// happyPath is MapFit.HappyPath of a sorted model: the longest path from
// __start__ to __end__ that enters no state twice and takes no move on
// "empty", found depth first over the moves in Model.Out's order (the first
// of equal length wins). The path that does the whole task is the longest:
// a branch for what went wrong (nothing available, the user declines) leaves
// the flow early. When the search tries more than happyPathBudget moves, the
// shortest such path stands in.
func happyPath(m *automaton.Model) []string {
	var best, cur []string
	on := map[string]bool{}
	tries := 0
	var walk func(id string) bool
	walk = func(id string) bool {
		for _, t := range m.Out(id) {
			if tries++; tries > happyPathBudget {
				return false
			}
			if t.Event == "empty" || on[t.To] {
				continue
			}
			if t.To == automaton.EndID {
				if len(cur) > len(best) || best == nil {
					best = slices.Clone(cur)
				}
				continue
			}
			on[t.To] = true
			cur = append(cur, t.To)
			ok := walk(t.To)
			cur = cur[:len(cur)-1]
			on[t.To] = false
			if !ok {
				return false
			}
		}
		return true
	}
	on[automaton.StartID] = true
	var ids []string
	if walk(automaton.StartID) {
		ids = best
	} else {
		ids = shortestPath(m)
	}
	if ids == nil {
		return nil
	}
	var labels []string
	for _, id := range ids {
		l := m.State(id).Label
		if len(labels) == 0 || labels[len(labels)-1] != l {
			labels = append(labels, l)
		}
	}
	return labels
}

// shortestPath is the states of the shortest path from __start__ to
// __end__ that takes no move on "empty": a breadth-first search over the
// moves in Model.Out's order; nil when there is none.
func shortestPath(m *automaton.Model) []string {
	prev := map[string]string{automaton.StartID: ""}
	queue := []string{automaton.StartID}
	for len(queue) > 0 && prev[automaton.EndID] == "" {
		id := queue[0]
		queue = queue[1:]
		for _, t := range m.Out(id) {
			if t.Event == "empty" {
				continue
			}
			if _, ok := prev[t.To]; !ok {
				prev[t.To] = id
				queue = append(queue, t.To)
			}
		}
	}
	if _, ok := prev[automaton.EndID]; !ok {
		return nil
	}
	var ids []string
	for id := prev[automaton.EndID]; id != automaton.StartID; id = prev[id] {
		ids = append(ids, id)
	}
	slices.Reverse(ids)
	return ids
}
