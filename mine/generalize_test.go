package mine

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// genOf returns the generalised moves of a model built with the default
// options from sessions, each repeated as often as its count says.
func genOf(t *testing.T, sessions map[string]int) []string {
	t.Helper()
	keys := make([]string, 0, len(sessions))
	for s := range sessions {
		keys = append(keys, s)
	}
	slices.Sort(keys)
	var all []string
	for _, s := range keys {
		for range sessions[s] {
			all = append(all, s)
		}
	}
	return genMoves(mustBuild(t, DefaultOptions(), ReadOptions{}, strInput("log", sessionsJSONL(all...))))
}

// TestFollow: X and Y come after the same step and lead to the same steps,
// and Z follows Y: X gains the move to Z. Not when Z follows only one
// outcome of Y (not found), not when nothing before X is like what comes
// before Y, and not when the move would break a constraint of the log (Z
// only after W, which no path into X visits).
func TestFollow(t *testing.T) {
	const follow = "x -ok-> z (follow)"
	base := func() map[string]int {
		return map[string]int{
			"s:ok x:ok a:ok": 2, "s:ok x:ok b:ok": 2,
			"s:ok y:ok a:ok": 2, "s:ok y:ok b:ok": 2, "s:ok y:ok z:ok": 2,
		}
	}
	if got := genOf(t, base()); !slices.Contains(got, follow) {
		t.Errorf("generalised %q, want %q among them", got, follow)
	}
	outcome := base()
	delete(outcome, "s:ok y:ok z:ok")
	outcome["s:ok y:not_found z:ok"] = 2
	if got := genOf(t, outcome); slices.Contains(got, follow) {
		t.Errorf("z only after y's not_found: generalised %q, want no %q", got, follow)
	}
	apart := base()
	delete(apart, "s:ok x:ok a:ok")
	delete(apart, "s:ok x:ok b:ok")
	apart["t:ok x:ok a:ok"], apart["t:ok x:ok b:ok"] = 2, 2
	if got := genOf(t, apart); slices.Contains(got, follow) {
		t.Errorf("nothing alike before x and y: generalised %q, want no %q", got, follow)
	}
	// Enough sessions for constraints: z in 13 sessions, at a share of
	// y's moves whose absence after x's 24 visits the test does not
	// refute, and once without y (so that y is no prerequisite of z).
	many := func(w string) map[string]int {
		return map[string]int{
			"s:ok x:ok a:ok": 12, "s:ok x:ok b:ok": 12,
			"s:ok y:ok a:ok": 48, "s:ok y:ok b:ok": 48,
			"s:ok " + w + "y:ok z:ok": 12, "s:ok " + w + "z:ok": 1,
		}
	}
	if got := genOf(t, many("")); !slices.Contains(got, follow) {
		t.Errorf("generalised %q, want %q among them", got, follow)
	}
	if got := genOf(t, many("w:ok ")); slices.Contains(got, follow) {
		t.Errorf("z only after w: generalised %q, want no %q", got, follow)
	}
}

// TestSkipNeedsANewSuccessor: b is left out after a and before c elsewhere
// in the log, so a may go straight to c; but only when some successor of a
// was seen once (a context that showed each of its successors again and
// again has shown all it has).
func TestSkipNeedsANewSuccessor(t *testing.T) {
	const skip = "a -ok-> c (skip)"
	sessions := map[string]int{
		"a:ok b:ok c:ok": 2, "a:ok b:ok d:ok": 2, "a:ok d:ok": 2,
		"e:ok b:ok c:ok": 2, "e:ok c:ok": 2,
	}
	if got := genOf(t, sessions); slices.Contains(got, skip) {
		t.Errorf("every successor of a seen twice: generalised %q, want no %q", got, skip)
	}
	sessions["a:ok f:ok"] = 1
	if got := genOf(t, sessions); !slices.Contains(got, skip) {
		t.Errorf("a successor of a seen once: generalised %q, want %q among them", got, skip)
	}
}

// TestLoopCap: a loop's cap under generalisation is the most a stay made,
// raised where 50 stays or more make a longer one plausible; fewer stays,
// or stays that never iterate twice, keep the most seen.
func TestLoopCap(t *testing.T) {
	// 74 stays, 83 iterations (the bundled sample's {identify_customer}):
	// one more iteration follows at the rate 9/83, so a stay of 4 has a
	// chance of 0.108^3, about 1 in 800, and of 5, below 1 in 1,000.
	iters, weights := []int{1, 2}, []int{65, 9}
	if got := loopCap(2, iters, weights, RunTail); got != 4 {
		t.Errorf("74 stays, 83 iterations: cap %d, want 4", got)
	}
	if got := loopCap(2, iters, []int{30, 9}, RunTail); got != 2 {
		t.Errorf("39 stays: cap %d, want the most seen, 2", got)
	}
	if got := loopCap(1, []int{1}, []int{200}, RunTail); got != 1 {
		t.Errorf("200 stays of one iteration: cap %d, want 1", got)
	}
	// 80 stays of 4 to 18 iterations: the geometric fit (q 0.89) would give
	// a stay past 18 a chance of 1 in 8, yet none of 80 went past it. The
	// fit does not explain them: the cap stays 18, not 61.
	var long, w []int
	for k := 4; k <= 18; k++ {
		long, w = append(long, k), append(w, 5)
	}
	long, w = append(long, 10), append(w, 5)
	if got := loopCap(18, long, w, RunTail); got != 18 {
		t.Errorf("80 stays of 4 to 18: cap %d, want the most seen, 18", got)
	}
}

// TestSharedRate: where labels like X agree on how often Z follows them,
// X's visits without Z count against that agreement, not against each
// label's rate alone: 14 of 81 among its likes, none in 27 visits of X,
// leaves a rate above MinRate; none in 100 visits does not; likes that
// disagree weigh less; one like alone gives no prior.
func TestSharedRate(t *testing.T) {
	st := &genStats{events: map[levent]int{}, pairEv: map[lpairEv]int{}}
	const ok, z = 100, 50
	top := map[uint32]uint32{}
	like := func(counts ...[2]int) []uint32 {
		var ys []uint32
		for i, c := range counts {
			y := uint32(i + 1)
			top[y] = ok
			st.events[levent{y, ok}] = c[1]
			st.pairEv[lpairEv{y, ok, z}] = c[0]
			ys = append(ys, y)
		}
		return ys
	}
	agree := like([2]int{5, 29}, [2]int{4, 25}, [2]int{5, 27})
	if r := sharedRate(st, agree, top, z, 27); r < MinRate {
		t.Errorf("agreeing likes 14 of 81, X none in 27: rate %.3f, want at least %.2f", r, MinRate)
	}
	if r := sharedRate(st, agree, top, z, 100); r >= MinRate {
		t.Errorf("agreeing likes 14 of 81, X none in 100: rate %.3f, want below %.2f", r, MinRate)
	}
	if r := sharedRate(st, like([2]int{500, 1000}, [2]int{500, 1000}), top, z, 3000); r != 0 {
		t.Errorf("likes half the time, X none in 3,000: rate %.3f, want 0 (X is not one of them)", r)
	}
	agree = like([2]int{5, 29}, [2]int{4, 25}, [2]int{5, 27})
	if r := sharedRate(st, agree[:1], top, z, 1); r != 0 {
		t.Errorf("one like: rate %.3f, want 0 (no prior)", r)
	}
	st = &genStats{events: map[levent]int{}, pairEv: map[lpairEv]int{}}
	apart := like([2]int{1, 40}, [2]int{13, 41})
	if r := sharedRate(st, apart, top, z, 27); r >= MinRate {
		t.Errorf("likes 1 of 40 and 13 of 41, X none in 27: rate %.3f, want below %.2f", r, MinRate)
	}
}

// TestFollowFewVisits holds follow to labels seen often enough to be
// alike: in logs of 2,000 names each seen twice, with and without a step
// every session passes (a greeting), the default adds no follow move. Before
// FollowMinVisits and the start and end left out of likeness, the first
// gained 50,733 follow moves and the second 706,154 in 35 s (a model that
// grows with the square of the names).
func TestFollowFewVisits(t *testing.T) {
	const names = 2000
	for _, hub := range []bool{false, true} {
		t.Run(fmt.Sprintf("greeting=%v", hub), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			order := make([]int, 0, 2*names)
			for i := range 2 * names {
				order = append(order, i%names)
			}
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			var buf bytes.Buffer
			per := 4
			if hub {
				per = 2
			}
			for s := 0; s*per < len(order); s++ {
				var seq []string
				for _, n := range order[s*per : s*per+per] {
					seq = append(seq, fmt.Sprintf("tool_%d", n))
				}
				if hub {
					seq = append(append([]string{"greet"}, seq...), "bye")
				}
				for k, node := range seq {
					fmt.Fprintf(&buf, "{\"session_id\":\"s%d\",\"step\":%d,\"node\":%q}\n", s, k, node)
				}
			}
			lg, err := Read(benchInput(buf.Bytes()), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			m, err := Build(lg, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			follow := 0
			for _, tr := range m.Transitions {
				if tr.Generalized == GenFollow {
					follow++
				}
			}
			if follow > 0 {
				t.Errorf("%d follow moves among %d transitions, from labels seen twice: want none", follow, len(m.Transitions))
			}
		})
	}
}
