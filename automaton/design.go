package automaton

import "sort"

// DesignMove is a move of a designed or a mined model seen by labels: the
// label of the state left, the event, and the label of the state entered,
// so that a designed state and the mined states of its label (the miner
// splits a label into several states) meet. Count and Sessions add up the
// mined transitions of the move; Examples are some of their sessions,
// sorted, at most three.
type DesignMove struct {
	From     string   `json:"from"`
	Event    string   `json:"event"`
	To       string   `json:"to"`
	Count    int      `json:"count"`
	Sessions int      `json:"sessions"`
	Examples []string `json:"examples,omitempty"`
}

// DesignDiff holds a designed model against a mined one, move by move.
// Designed and Taken count the distinct moves of each: a mined move is taken
// when a session took it (not rare-filtered, not generalised). NeverTaken are
// the designed moves no session took, NeverDesigned the taken moves the
// design lacks (most taken first, then by from, event, to), and Followed the
// designed moves sessions took, with their counts.
type DesignDiff struct {
	Designed      int          `json:"designed"`
	Taken         int          `json:"taken"`
	NeverTaken    []DesignMove `json:"never_taken"`
	NeverDesigned []DesignMove `json:"never_designed"`
	Followed      []DesignMove `json:"followed"`
}

// Empty reports whether the design and the sessions agree move for move.
func (d DesignDiff) Empty() bool { return len(d.NeverTaken) == 0 && len(d.NeverDesigned) == 0 }

// CompareDesign compares the moves of design with the moves sessions took
// in mined.
func CompareDesign(design, mined *Model) DesignDiff {
	designed := moves(design, false)
	taken := moves(mined, true)
	d := DesignDiff{Designed: len(designed), Taken: len(taken)}
	for k, mv := range designed {
		if t, ok := taken[k]; ok {
			d.Followed = append(d.Followed, *t)
		} else {
			d.NeverTaken = append(d.NeverTaken, *mv)
		}
	}
	for k, t := range taken {
		if _, ok := designed[k]; !ok {
			d.NeverDesigned = append(d.NeverDesigned, *t)
		}
	}
	for _, s := range [][]DesignMove{d.NeverTaken, d.NeverDesigned, d.Followed} {
		sort.Slice(s, func(i, j int) bool {
			a, b := s[i], s[j]
			if a.Count != b.Count {
				return a.Count > b.Count
			}
			if a.From != b.From {
				return a.From < b.From
			}
			if a.Event != b.Event {
				return a.Event < b.Event
			}
			return a.To < b.To
		})
	}
	return d
}

// moves projects m's transitions onto labels; with taken, only the ones
// sessions took.
func moves(m *Model, taken bool) map[EdgeRef]*DesignMove {
	label := func(id string) string {
		if s := m.State(id); s != nil {
			return s.Label
		}
		return id
	}
	out := map[EdgeRef]*DesignMove{}
	for _, t := range m.Transitions {
		if taken && (t.Generalized != "" || t.Count == 0) {
			continue
		}
		k := EdgeRef{From: label(t.From), Event: t.Event, To: label(t.To)}
		mv, ok := out[k]
		if !ok {
			mv = &DesignMove{From: k.From, Event: k.Event, To: k.To}
			out[k] = mv
		}
		mv.Count += t.Count
		mv.Sessions += t.Sessions
		mv.Examples = append(mv.Examples, t.Examples...)
	}
	for _, mv := range out {
		sort.Strings(mv.Examples)
		mv.Examples = compactStrings(mv.Examples)
		if len(mv.Examples) > 3 {
			mv.Examples = mv.Examples[:3]
		}
	}
	return out
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
