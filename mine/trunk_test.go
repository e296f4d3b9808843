package mine

import (
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
			// The trunk is a path: a move joins each state to the next.
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
		})
	}
}
