package mine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// repeat returns n copies of s.
func repeat(n int, s string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestTrunkMainRoad(t *testing.T) {
	tests := []struct {
		name     string
		sessions []string
		want     string
	}{
		{
			// The most probable path is submit -> decline (4 of 9
			// sessions); the road through the states most sessions enter
			// is the offer.
			name: "the road beats a short exit",
			sessions: slices.Concat(
				repeat(4, "submit:ok decline:no"),
				repeat(3, "submit:ok check:ok offer:ok accept:done"),
				repeat(2, "submit:ok check:ok offer:ok cancel:no"),
			),
			want: "submit check offer accept",
		},
		{
			name: "a detour a quarter take is left out",
			sessions: slices.Concat(
				repeat(6, "a:ok b:ok c:ok"),
				repeat(2, "a:ok x:ok b:ok c:ok"),
			),
			want: "a b c",
		},
		{
			// 3 sessions through x against 5 straight from a to b: an
			// optional step, on the road as designers draw one.
			name: "a detour more than a third take is kept",
			sessions: slices.Concat(
				repeat(5, "a:ok b:ok c:ok"),
				repeat(3, "a:ok x:ok b:ok c:ok"),
			),
			want: "a x b c",
		},
		{
			name: "a step most sessions take is kept",
			sessions: slices.Concat(
				repeat(2, "a:ok b:ok c:ok"),
				repeat(6, "a:ok x:ok b:ok c:ok"),
			),
			want: "a x b c",
		},
		{
			// unavail, the other outcome of the query, is entered from
			// the query in 9 of 11 steps: a branch beside the road, though
			// a few bookings end there too and it has more sessions than
			// succ. The road is the booking's.
			name: "a branch entered from upstream is not the road",
			sessions: slices.Concat(
				repeat(10, "q:ok avail:ok book:ok succ:ok bye:ok"),
				repeat(9, "q:ok unavail:ok bye:ok"),
				repeat(2, "q:ok avail:ok book:ok unavail:ok bye:ok"),
			),
			want: "q avail book succ bye",
		},
		{
			// retry follows only the branch: it is a branch too, and the
			// road keeps to the steps it joins by moves of their own.
			name: "what follows a branch is the branch",
			sessions: slices.Concat(
				repeat(6, "q:ok book:ok bye:ok"),
				repeat(6, "q:ok book:ok succ:ok bye:ok"),
				repeat(8, "q:ok unavail:ok retry:ok bye:ok"),
				repeat(2, "q:ok book:ok unavail:ok retry:ok bye:ok"),
			),
			want: "q book succ bye",
		},
		{
			name: "a loop is not repeated",
			sessions: slices.Concat(
				repeat(3, "a:ok b:retry a:ok b:ok c:ok"),
				repeat(3, "a:ok b:ok c:ok"),
			),
			want: "a b c",
		},
		{
			name:     "one session",
			sessions: []string{"only:ok"},
			want:     "only",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustBuild(t, labelOpts(), ReadOptions{}, strInput("a.jsonl", sessionsJSONL(tt.sessions...)))
			if got := strings.Join(m.Trunk, " "); got != tt.want {
				t.Errorf("trunk = %q, want %q", got, tt.want)
			}
			checkTrunkPath(t, m)
		})
	}
}

// checkTrunkPath fails t unless a move sessions took joins each state of
// m's trunk to the next, from __start__ to __end__.
func checkTrunkPath(t *testing.T, m *automaton.Model) {
	t.Helper()
	moved := map[[2]string]bool{}
	for _, tr := range m.Transitions {
		if tr.Count > 0 {
			moved[[2]string{tr.From, tr.To}] = true
		}
	}
	road := slices.Concat([]string{automaton.StartID}, m.Trunk, []string{automaton.EndID})
	for i := 0; i+1 < len(road); i++ {
		if !moved[[2]string{road[i], road[i+1]}] {
			t.Errorf("no move from %s to %s on the trunk %v", road[i], road[i+1], m.Trunk)
		}
	}
}

// TestTrunkIsAPath: on random logs (sessions of a random Markov chain over
// a few labels, with branches that rejoin, skips and loops), with either
// merge, the trunk is a path of moves, whatever the detour and branch rules
// refused on the way.
func TestTrunkIsAPath(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		labels := 4 + r.IntN(8)
		next := make([][]int, labels) // per label: its successors, with repeats as weights
		for a := range next {
			for range 1 + r.IntN(3) {
				b := a + 1 + r.IntN(3)
				if r.IntN(6) == 0 {
					b = r.IntN(labels) // a loop
				}
				next[a] = append(next[a], min(b, labels-1))
				if r.IntN(2) == 0 {
					next[a] = append(next[a], next[a][0]) // a busier road
				}
			}
		}
		var sessions []string
		for range 50 + r.IntN(250) {
			var steps []string
			at := 0
			if r.IntN(4) == 0 {
				at = r.IntN(labels)
			}
			for len(steps) < 40 {
				steps = append(steps, fmt.Sprintf("n%d:e%d", at, r.IntN(2)))
				if at == labels-1 || r.IntN(12) == 0 {
					break
				}
				at = next[at][r.IntN(len(next[at]))]
			}
			sessions = append(sessions, strings.Join(steps, " "))
		}
		for _, merge := range Merges {
			opt := DefaultOptions()
			opt.Merge = merge
			m := mustBuild(t, opt, ReadOptions{}, strInput("random.jsonl", sessionsJSONL(sessions...)))
			if len(m.Trunk) == 0 {
				t.Errorf("trial %d, %s: no trunk", trial, merge)
				continue
			}
			checkTrunkPath(t, m)
		}
	}
}

// TestTrunkManyStates: with more states than the trunk is chosen among
// (trunkStates), states of one session each whose names carry ids, the
// trunk is still a path, through states outside those it chose among.
func TestTrunkManyStates(t *testing.T) {
	// Alike in traffic, states are chosen among by id: the first session's
	// middle state sorts last, outside those chosen among.
	var sessions []string
	for i := range trunkStates/3 + 10 {
		sessions = append(sessions, fmt.Sprintf("a%04d:ok z%04d:ok b%04d:ok", i, 9999-i, i))
	}
	opt := DefaultOptions()
	opt.Generalize = GeneralizeNone
	m := mustBuild(t, opt, ReadOptions{}, strInput("ids.jsonl", sessionsJSONL(sessions...)))
	if len(m.States) <= trunkStates {
		t.Fatalf("%d states, want more than %d", len(m.States), trunkStates)
	}
	if len(m.Trunk) != 3 {
		t.Errorf("trunk %v, want one session's three states", m.Trunk)
	}
	checkTrunkPath(t, m)
}
