package conform

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/internal/modeltest"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		moves    []automaton.Move
		rareDev  bool
		kind     string // "" when the session fits
		move     int
		state    string
		cost     int
		maxCost  int
		rare     int
		outside  bool
		iters    int
		loopCap  int
		wantNote string
	}{
		{name: "fits", moves: modeltest.Moves(">a", "ok>b", "ok>c", "ok>__end__"), cost: 0, maxCost: 4 + 3},
		{name: "fits through the loop", moves: modeltest.Moves(">a", "ok>b", "retry>b", "retry>b", "ok>c", "ok>__end__"), cost: 0, maxCost: 6 + 3},
		// a -ok-> c is not a move of the model: one model move a -ok-> b
		// puts it back on track.
		{name: "skipped stage", moves: modeltest.Moves(">a", "ok>c", "ok>__end__"), kind: KindIllegalTransition, move: 1, state: "a", cost: 1, maxCost: 3 + 3, outside: true},
		// x is no state's label: one log move.
		{name: "unknown state", moves: modeltest.Moves(">a", "ok>x", "ok>b", "ok>c", "ok>__end__"), kind: KindUnknownState, move: 1, state: "a", cost: 1, maxCost: 5 + 3, outside: true},
		// b never ends: one model move b -ok-> c, then the end move syncs.
		{name: "truncated", moves: modeltest.Moves(">a", "ok>b", "ok>__end__"), kind: KindIncomplete, move: 2, state: "b", cost: 1, maxCost: 3 + 3, outside: true},
		// c ends only with ok: skip the log's end move, take the model's.
		{name: "wrong last event", moves: modeltest.Moves(">a", "ok>b", "ok>c", "fail>__end__"), kind: KindIncomplete, move: 3, state: "c", cost: 2, maxCost: 4 + 3, outside: true},
		// Nothing matches: three log moves and the shortest model path.
		{name: "foreign", moves: modeltest.Moves(">x", "y>z", "w>__end__"), kind: KindUnknownState, move: 0, state: automaton.StartID, cost: 6, maxCost: 3 + 3, outside: true},
		{name: "loop cap", moves: modeltest.Moves(">a", "ok>b", "retry>b", "retry>b", "retry>b", "ok>c", "ok>__end__"), kind: KindLoopCap, move: 4, state: "b", cost: 0, maxCost: 7 + 3, iters: 3, loopCap: 2},
		{name: "rare passes", moves: modeltest.Moves(">a", "skip>c", "ok>__end__"), cost: 0, maxCost: 3 + 3, rare: 1},
		{name: "rare is a deviation", moves: modeltest.Moves(">a", "skip>c", "ok>__end__"), rareDev: true, kind: KindRare, move: 1, state: "a", cost: 0, maxCost: 3 + 3, rare: 1},
		// Two deviations: the first is reported, the cost counts both.
		{name: "two deviations", moves: modeltest.Moves(">a", "ok>x", "ok>b", "ok>y", "ok>c", "ok>__end__"), kind: KindUnknownState, move: 1, state: "a", cost: 2, maxCost: 6 + 3, outside: true},
		{name: "stops before the end", moves: modeltest.Moves(">a", "ok>b"), kind: KindIncomplete, move: 2, state: "b", cost: 2, maxCost: 2 + 3, outside: true},
	}
	m := modeltest.Retry(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(m, Options{RareIsDeviation: tt.rareDev})
			v := c.Check(tt.moves)
			if tt.kind == "" {
				if !v.Fits() {
					t.Fatalf("deviation %+v, want the session to fit", *v.Deviation)
				}
			} else {
				if v.Fits() {
					t.Fatalf("fits, want %s at move %d", tt.kind, tt.move)
				}
				d := v.Deviation
				if d.Kind != tt.kind || d.Move != tt.move || d.State != tt.state {
					t.Errorf("deviation %s at move %d in %s, want %s at move %d in %s", d.Kind, d.Move, d.State, tt.kind, tt.move, tt.state)
				}
				if tt.kind == KindLoopCap && (d.Iterations != tt.iters || d.Cap != tt.loopCap || d.Loop != 0) {
					t.Errorf("loop cap: loop %d, %d iterations, cap %d; want loop 0, %d, %d", d.Loop, d.Iterations, d.Cap, tt.iters, tt.loopCap)
				}
			}
			if v.Cost != tt.cost || v.MaxCost != tt.maxCost {
				t.Errorf("cost %d/%d, want %d/%d", v.Cost, v.MaxCost, tt.cost, tt.maxCost)
			}
			if want := 1 - float64(tt.cost)/float64(tt.maxCost); v.Fitness != want {
				t.Errorf("fitness %v, want %v", v.Fitness, want)
			}
			if v.Rare != tt.rare {
				t.Errorf("rare %d, want %d", v.Rare, tt.rare)
			}
			if v.Outside() != tt.outside {
				t.Errorf("outside %v, want %v", v.Outside(), tt.outside)
			}
			if v.Bounded {
				t.Error("bounded, want an exact alignment")
			}
			if a := c.Align(tt.moves); a.Cost != tt.cost {
				t.Errorf("Align cost %d, want %d", a.Cost, tt.cost)
			}
		})
	}
}

func TestAlignOps(t *testing.T) {
	m := modeltest.Retry(t)
	c := New(m, Options{})
	tests := []struct {
		name  string
		moves []automaton.Move
		want  []string
	}{
		{"skipped stage", modeltest.Moves(">a", "ok>c", "ok>__end__"), []string{
			"sync 0 __start__->a",
			"model 1 a->b",
			"sync 1 b->c",
			"sync 2 c->__end__",
		}},
		{"unknown state", modeltest.Moves(">a", "ok>x", "ok>b", "ok>c", "ok>__end__"), []string{
			"sync 0 __start__->a",
			"log 1 a->a",
			"sync 2 a->b",
			"sync 3 b->c",
			"sync 4 c->__end__",
		}},
		{"wrong last event", modeltest.Moves(">a", "ok>b", "ok>c", "fail>__end__"), []string{
			"sync 0 __start__->a",
			"sync 1 a->b",
			"sync 2 b->c",
			"log 3 c->c",
			"model 4 c->__end__",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := c.Align(tt.moves)
			var got []string
			for _, op := range a.Ops {
				got = append(got, fmt.Sprintf("%s %d %s->%s", op.Op, op.Move, op.From, op.To))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ops\n%q\nwant\n%q", got, tt.want)
			}
			if cost := countCost(a.Ops); cost != a.Cost {
				t.Errorf("ops cost %d, alignment says %d", cost, a.Cost)
			}
		})
	}
}

func countCost(ops []AlignOp) int {
	n := 0
	for _, op := range ops {
		if op.Op != OpSync {
			n++
		}
	}
	return n
}

// TestAlignBound: with the search bounded to one node, the greedy alignment
// stands in, says so, and still is a valid alignment.
func TestAlignBound(t *testing.T) {
	m := modeltest.Retry(t)
	c := New(m, Options{MaxAlignStates: 1})
	moves := modeltest.Moves(">a", "ok>c", "ok>x", "ok>__end__")
	v := c.Check(moves)
	if !v.Bounded {
		t.Fatal("not bounded")
	}
	exact := New(m, Options{}).Check(moves)
	if exact.Bounded || exact.Cost != 2 {
		t.Fatalf("exact cost %d (bounded %v), want 2", exact.Cost, exact.Bounded)
	}
	if v.Cost < exact.Cost {
		t.Errorf("greedy cost %d below the optimum %d", v.Cost, exact.Cost)
	}
	a := c.Align(moves)
	checkAlignment(t, m, moves, a)
}

// checkAlignment verifies that ops are a real alignment of moves: the sync
// and log moves consume moves in order, the model's transitions chain from
// StartID to EndID, and the cost is the number of non-sync operations.
func checkAlignment(t *testing.T, m *automaton.Model, moves []automaton.Move, a Alignment) {
	t.Helper()
	at, next := automaton.StartID, 0
	for _, op := range a.Ops {
		if op.From != at {
			t.Fatalf("op %+v starts at %s, the alignment is at %s", op, op.From, at)
		}
		switch op.Op {
		case OpSync, OpLog:
			if op.Move != next {
				t.Fatalf("op %+v consumes move %d, want %d", op, op.Move, next)
			}
			next++
			if op.Op == OpLog {
				continue
			}
			tr := m.Next(at, moves[op.Move])
			if tr == nil || tr.To != op.To {
				t.Fatalf("sync %+v is not a transition", op)
			}
		case OpModel:
			tr := m.Next(at, automaton.Move{Event: op.Event, Label: op.Label})
			if tr == nil || tr.To != op.To {
				t.Fatalf("model move %+v is not a transition", op)
			}
		}
		at = op.To
	}
	if at != automaton.EndID || next != len(moves) {
		t.Fatalf("alignment ends at %s after %d of %d moves", at, next, len(moves))
	}
	if cost := countCost(a.Ops); cost != a.Cost {
		t.Fatalf("ops cost %d, alignment says %d", cost, a.Cost)
	}
}

// refAlignCost is the optimal alignment cost by dynamic programming over
// positions, relaxing model moves within a position until nothing changes.
func refAlignCost(m *automaton.Model, moves []automaton.Move) int {
	const inf = 1 << 30
	ids := make([]string, len(m.States))
	for i, s := range m.States {
		ids[i] = s.ID
	}
	idx := map[string]int{}
	for i, id := range ids {
		idx[id] = i
	}
	relax := func(d []int) {
		for changed := true; changed; {
			changed = false
			for _, tr := range m.Transitions {
				f, to := idx[tr.From], idx[tr.To]
				if d[f]+1 < d[to] {
					d[to] = d[f] + 1
					changed = true
				}
			}
		}
	}
	d := make([]int, len(ids))
	for i := range d {
		d[i] = inf
	}
	d[idx[automaton.StartID]] = 0
	relax(d)
	for _, mv := range moves {
		nd := make([]int, len(ids))
		for q := range nd {
			nd[q] = d[q] + 1 // log move
		}
		for q, id := range ids {
			if d[q] >= inf {
				continue
			}
			if tr := m.Next(id, mv); tr != nil && d[q] < nd[idx[tr.To]] {
				nd[idx[tr.To]] = d[q]
			}
		}
		relax(nd)
		d = nd
	}
	return d[idx[automaton.EndID]]
}

// TestAlignMatchesReference compares the A* alignment with the dynamic
// program on random sessions: noisy samples of the model and random moves.
func TestAlignMatchesReference(t *testing.T) {
	models := map[string]*automaton.Model{"conform": modeltest.Retry(t), "retry": retryModel(t, false)}
	for name, m := range models {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			c := New(m, Options{})
			var labels []string
			var events []string
			for _, s := range m.States {
				labels = append(labels, s.Label)
			}
			for _, tr := range m.Transitions {
				events = append(events, tr.Event)
			}
			labels = append(labels, "zz")
			events = append(events, "boom")
			for n := 0; n < 500; n++ {
				moves := m.Sample(rng, 30)
				// Damage it: drop, insert, replace moves at random.
				for k := rng.IntN(4); k > 0 && len(moves) > 0; k-- {
					i := rng.IntN(len(moves))
					r := automaton.Move{Event: events[rng.IntN(len(events))], Label: labels[rng.IntN(len(labels))]}
					switch rng.IntN(3) {
					case 0:
						moves = append(moves[:i], moves[i+1:]...)
					case 1:
						moves = append(moves[:i], append([]automaton.Move{r}, moves[i:]...)...)
					default:
						moves[i] = r
					}
				}
				want := refAlignCost(m, moves)
				v := c.Check(moves)
				if v.Cost != want {
					t.Fatalf("moves %v: cost %d, want %d", moves, v.Cost, want)
				}
				a := c.Align(moves)
				if a.Cost != want {
					t.Fatalf("moves %v: Align cost %d, want %d", moves, a.Cost, want)
				}
				checkAlignment(t, m, moves, a)
				g := New(m, Options{MaxAlignStates: 1}).Align(moves)
				if g.Cost < want {
					t.Fatalf("moves %v: greedy cost %d below the optimum %d", moves, g.Cost, want)
				}
				checkAlignment(t, m, moves, g)
			}
		})
	}
}

func TestReplay(t *testing.T) {
	m := modeltest.Retry(t)
	c := New(m, Options{})
	tests := []struct {
		name  string
		moves []automaton.Move
		want  []string // verdict from->to per move
	}{
		{"fits", modeltest.Moves(">a", "ok>b", "retry>b", "ok>c", "ok>__end__"),
			[]string{"ok __start__->a", "ok a->b", "ok b->b", "ok b->c", "ok c->__end__"}},
		// After the illegal a -ok-> c the replay resyncs on c, the one
		// state labelled c.
		{"resync", modeltest.Moves(">a", "ok>c", "ok>__end__"),
			[]string{"ok __start__->a", "illegal a->c", "ok c->__end__"}},
		// x is unknown: lost until b, whose label is unique.
		{"lost then resync", modeltest.Moves(">a", "ok>x", "ok>y", "ok>b", "ok>c", "ok>__end__"),
			[]string{"ok __start__->a", "unknown a->", "lost ->", "lost ->b", "ok b->c", "ok c->__end__"}},
		{"loop cap and rare", modeltest.Moves(">a", "ok>b", "retry>b", "retry>b", "retry>b", "ok>c", "fail>__end__"),
			[]string{"ok __start__->a", "ok a->b", "ok b->b", "ok b->b", "loop_cap b->b", "ok b->c", "incomplete c->__end__"}},
		{"rare", modeltest.Moves(">a", "skip>c", "ok>__end__"),
			[]string{"ok __start__->a", "rare a->c", "ok c->__end__"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range c.Replay(tt.moves) {
				got = append(got, fmt.Sprintf("%s %s->%s", s.Verdict, s.From, s.To))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("replay\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
	steps := c.Replay(modeltest.Moves(">a", "ok>b", "retry>b", "retry>b", "retry>b"))
	if s := steps[4]; s.Loop != 0 || s.Iteration != 3 || s.Cap != 2 {
		t.Errorf("step 4: loop %d iteration %d cap %d, want 0, 3, 2", s.Loop, s.Iteration, s.Cap)
	}
	// Entering the loop is not a move inside it; the first retry is.
	if s := steps[1]; s.Loop != -1 || s.Transition == nil || s.Transition.To != "b" {
		t.Errorf("step 1: %+v, want the a -ok-> b transition, outside the loop", s)
	}
	if s := steps[2]; s.Loop != 0 || s.Iteration != 1 {
		t.Errorf("step 2: loop %d iteration %d, want 0, 1", s.Loop, s.Iteration)
	}
}

// TestLoopCapOverride: LoopCaps replaces the model's cap; a cap of 0 lifts it.
func TestLoopCapOverride(t *testing.T) {
	m := modeltest.Retry(t)
	moves := modeltest.Moves(">a", "ok>b", "retry>b", "retry>b", "ok>c", "ok>__end__")
	if v := New(m, Options{LoopCaps: map[int]int{0: 1}}).Check(moves); v.Fits() || v.Deviation.Kind != KindLoopCap || v.Deviation.Move != 3 {
		t.Errorf("cap 1: %+v, want loop_cap at move 3", v.Deviation)
	}
	moves = modeltest.Moves(">a", "ok>b", "retry>b", "retry>b", "retry>b", "retry>b", "ok>c", "ok>__end__")
	if v := New(m, Options{LoopCaps: map[int]int{0: 0}}).Check(moves); !v.Fits() {
		t.Errorf("no cap: %+v, want a fit", v.Deviation)
	}
}

// TestCheckLeavingLoopResetsStay: iterations count per stay, so leaving
// the loop and coming back starts again from zero.
func TestCheckLeavingLoopResetsStay(t *testing.T) {
	m := modeltest.Check(t,
		automaton.Transition{From: automaton.StartID, To: "a", Count: 1},
		automaton.Transition{From: "a", Event: "again", To: "a", Count: 1, BackEdge: true},
		automaton.Transition{From: "a", Event: "ok", To: "b", Count: 1},
		automaton.Transition{From: "b", Event: "back", To: "c", Count: 1},
		automaton.Transition{From: "c", Event: "ok", To: "a", Count: 1},
		automaton.Transition{From: "b", Event: "ok", To: automaton.EndID, Count: 1},
	)
	// a, b, c form one loop in the miner's sense only if b->c->a is a
	// cycle with a back edge; here only a's self-loop is marked.
	m.Loops = []automaton.Loop{{States: []string{"a"}, MaxIterations: 1}}
	c := New(m, Options{})
	moves := modeltest.Moves(">a", "again>a", "ok>b", "back>c", "ok>a", "again>a", "ok>b", "ok>__end__")
	if v := c.Check(moves); !v.Fits() {
		t.Errorf("deviation %+v, want a fit: each stay in {a} iterates once", *v.Deviation)
	}
}

func BenchmarkCheck(b *testing.B) {
	m := modeltest.Retry(b)
	c := New(m, Options{})
	rng := rand.New(rand.NewPCG(7, 7))
	var sessions [][]automaton.Move
	events := 0
	for range 1000 {
		s := m.Sample(rng, 100)
		sessions = append(sessions, s)
		events += len(s)
	}
	for _, kind := range []string{"fit", "deviating"} {
		b.Run("sessions="+kind, func(b *testing.B) {
			in := sessions
			if kind == "deviating" {
				in = make([][]automaton.Move, len(sessions))
				for i, s := range sessions {
					d := append([]automaton.Move(nil), s...)
					d[len(d)/2] = automaton.Move{Event: "ok", Label: "zz"}
					in[i] = d
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				for _, s := range in {
					c.Check(s)
				}
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// FuzzAlign reads the input as a session over a small alphabet (the
// model's moves and a few it does not know) and checks Check and Align
// against the dynamic program, and the greedy alignment's validity.
func FuzzAlign(f *testing.F) {
	f.Add([]byte{0, 1, 3, 5})
	f.Add([]byte{0, 2, 9, 9, 9, 5})
	f.Add([]byte{})
	f.Add([]byte{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7})
	m := modeltest.Retry(f)
	alphabet := []automaton.Move{
		{Event: "", Label: "a"}, {Event: "ok", Label: "b"}, {Event: "skip", Label: "c"}, {Event: "ok", Label: "c"}, {Event: "retry", Label: "b"}, {Event: "ok", Label: automaton.EndID},
		{Event: "ok", Label: "zz"}, {Event: "boom", Label: "a"}, {Event: "fail", Label: automaton.EndID}, {Event: "", Label: "b"},
	}
	c := New(m, Options{})
	g := New(m, Options{MaxAlignStates: 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64 {
			data = data[:64]
		}
		moves := make([]automaton.Move, len(data))
		for i, b := range data {
			moves[i] = alphabet[int(b)%len(alphabet)]
		}
		want := refAlignCost(m, moves)
		v := c.Check(moves)
		if v.Cost != want {
			t.Fatalf("moves %v: cost %d, want %d", moves, v.Cost, want)
		}
		if v.Fits() && v.Cost != 0 {
			t.Fatalf("moves %v: fits with cost %d", moves, v.Cost)
		}
		if v.Fitness < 0 || v.Fitness > 1 {
			t.Fatalf("moves %v: fitness %v", moves, v.Fitness)
		}
		checkAlignment(t, m, moves, c.Align(moves))
		ga := g.Align(moves)
		if ga.Cost < want {
			t.Fatalf("moves %v: greedy cost %d below the optimum %d", moves, ga.Cost, want)
		}
		checkAlignment(t, m, moves, ga)
	})
}

// retryModel is a -ok-> b, a -fail-> a (retry), a -quit-> end, b -done-> end,
// with probabilities or, when byCount, with counts only (automaton's
// sample_test.go has its twin).
func retryModel(t *testing.T, byCount bool) *automaton.Model {
	t.Helper()
	tr := func(from, event, to string, prob float64) automaton.Transition {
		if byCount {
			return automaton.Transition{From: from, Event: event, To: to, Count: int(prob * 100)}
		}
		return automaton.Transition{From: from, Event: event, To: to, Prob: prob}
	}
	return modeltest.Check(t,
		tr(automaton.StartID, "", "a", 1),
		tr("a", "ok", "b", 0.6),
		tr("a", "fail", "a", 0.3),
		tr("a", "quit", automaton.EndID, 0.1),
		tr("b", "done", automaton.EndID, 1),
	)
}

// unusualModel is a -> b -> c -> end with a rare move beside each of the
// first two and a generalised one beside the last, and a loop back from c
// to a.
func unusualModel(t *testing.T) *automaton.Model {
	return modeltest.Check(t,
		automaton.Transition{From: automaton.StartID, To: "a", Count: 10},
		automaton.Transition{From: "a", Event: "ok", To: "b", Count: 9},
		automaton.Transition{From: "a", Event: "odd", To: "b", Count: 1, Rare: true},
		automaton.Transition{From: "b", Event: "ok", To: "c", Count: 9},
		automaton.Transition{From: "b", Event: "odd", To: "c", Count: 1, Rare: true},
		automaton.Transition{From: "c", Event: "ok", To: "a", Count: 5},
		automaton.Transition{From: "c", Event: "ok", To: automaton.EndID, Count: 10},
		automaton.Transition{From: "c", Event: "new", To: automaton.EndID, Generalized: "event"},
	)
}

// TestMaxUnusual: a session may take at most Options.MaxUnusual rare or
// generalised transitions; the next one is an unusual_cap deviation on a
// path of the model (cost 0), counted like the moves before it.
func TestMaxUnusual(t *testing.T) {
	m := unusualModel(t)
	odd := modeltest.Moves(">a", "odd>b", "odd>c", "new>__end__") // three unusual moves
	common := modeltest.Moves(">a", "ok>b", "ok>c", "ok>__end__")
	for _, tt := range []struct {
		max, at int // at: the move that deviates, -1 for none
	}{{0, -1}, {3, -1}, {4, -1}, {2, 3}, {1, 2}} {
		c := New(m, Options{MaxUnusual: tt.max})
		v := c.Check(odd)
		if v.Rare != 2 || v.Generalized != 1 || v.Cost != 0 {
			t.Errorf("max %d: rare %d, generalised %d, cost %d; want 2, 1, 0", tt.max, v.Rare, v.Generalized, v.Cost)
		}
		at, verdict := c.Miss(odd)
		steps := c.Replay(odd)
		if tt.at < 0 {
			if !v.Fits() || at != -1 || !c.Fits(odd) {
				t.Errorf("max %d: deviation %+v, miss at %d; want a fit", tt.max, v.Deviation, at)
			}
			continue
		}
		d := v.Deviation
		if d == nil || d.Kind != KindUnusualCap || d.Move != tt.at || d.Iterations != tt.max+1 || d.Cap != tt.max {
			t.Fatalf("max %d: deviation %+v; want %s at move %d, %d of %d", tt.max, d, KindUnusualCap, tt.at, tt.max+1, tt.max)
		}
		if at != tt.at || verdict != StepUnusualCap {
			t.Errorf("max %d: miss at %d (%s), want %d (%s)", tt.max, at, verdict, tt.at, StepUnusualCap)
		}
		if s := steps[tt.at]; s.Verdict != StepUnusualCap || s.Unusual != tt.max+1 || s.MaxUnusual != tt.max {
			t.Errorf("max %d: replay step %+v; want %s, %d of %d", tt.max, s, StepUnusualCap, tt.max+1, tt.max)
		}
		if !c.Fits(common) {
			t.Errorf("max %d: the common path does not fit", tt.max)
		}
	}
	// A move that is a deviation on its own is reported as such, as the
	// guard does: the third unusual move, over a cap of 2, is generalised,
	// and generalised moves are deviations.
	c := New(m, Options{MaxUnusual: 2, GeneralizedIsDeviation: true})
	if d := c.Check(odd).Deviation; d == nil || d.Kind != KindGeneralized || d.Move != 3 {
		t.Errorf("generalised is a deviation, cap 2: deviation %+v; want %s at move 3", d, KindGeneralized)
	}
}

// TestMaxUnusualRun: a session may take at most Options.MaxUnusualRun rare
// or generalised transitions in a row; a common move between them starts
// the count again, and the next one over the cap is an unusual_run deviation
// on a path of the model (cost 0).
func TestMaxUnusualRun(t *testing.T) {
	m := unusualModel(t)
	for _, tt := range []struct {
		moves   []automaton.Move
		max, at int // at: the move that deviates, -1 for none
	}{
		{modeltest.Moves(">a", "odd>b", "odd>c", "new>__end__"), 0, -1},
		{modeltest.Moves(">a", "odd>b", "odd>c", "new>__end__"), 3, -1},
		{modeltest.Moves(">a", "odd>b", "odd>c", "new>__end__"), 2, 3},
		{modeltest.Moves(">a", "odd>b", "odd>c", "new>__end__"), 1, 2},
		// Four unusual moves, never two in a row.
		{modeltest.Moves(">a", "odd>b", "ok>c", "ok>a", "odd>b", "ok>c", "ok>a", "odd>b", "ok>c", "new>__end__"), 1, -1},
		// Two in a row, after a common move broke the first pair.
		{modeltest.Moves(">a", "odd>b", "ok>c", "ok>a", "odd>b", "odd>c", "ok>__end__"), 1, 5},
	} {
		c := New(m, Options{MaxUnusualRun: tt.max})
		v := c.Check(tt.moves)
		at, verdict := c.Miss(tt.moves)
		if tt.at < 0 {
			if !v.Fits() || at != -1 {
				t.Errorf("%v, max %d: deviation %+v, miss at %d; want a fit", tt.moves, tt.max, v.Deviation, at)
			}
			continue
		}
		d := v.Deviation
		if d == nil || d.Kind != KindUnusualRun || d.Move != tt.at || d.Iterations != tt.max+1 || d.Cap != tt.max || v.Cost != 0 {
			t.Fatalf("%v, max %d: deviation %+v, cost %d; want %s at move %d, %d of %d, cost 0", tt.moves, tt.max, d, v.Cost, KindUnusualRun, tt.at, tt.max+1, tt.max)
		}
		if at != tt.at || verdict != StepUnusualRun {
			t.Errorf("%v, max %d: miss at %d (%s), want %d (%s)", tt.moves, tt.max, at, verdict, tt.at, StepUnusualRun)
		}
		if s := c.Replay(tt.moves)[tt.at]; s.Verdict != StepUnusualRun || s.UnusualRun != tt.max+1 || s.MaxUnusualRun != tt.max {
			t.Errorf("%v, max %d: replay step %+v; want %s, %d of %d", tt.moves, tt.max, s, StepUnusualRun, tt.max+1, tt.max)
		}
	}
	// A move the model does not have ends the run, as replay resynchronises
	// after it (here at b, the one state of its label; after an unknown
	// label the walk is lost until the next known one): the rare move after
	// it is one in a row.
	c := New(m, Options{MaxUnusualRun: 1})
	for _, moves := range [][]automaton.Move{
		modeltest.Moves(">a", "odd>b", "weird>b", "odd>c", "ok>__end__"),
		modeltest.Moves(">a", "odd>b", "ok>x", "ok>b", "odd>c", "ok>__end__"),
	} {
		steps := c.Replay(moves)
		if s := steps[len(steps)-2]; s.Verdict != StepRare {
			t.Errorf("%v: the rare move after the deviation replays as %s, want %s", moves, s.Verdict, StepRare)
		}
	}
	// With both caps, the cap on the session's unusual moves is reported
	// first when one move breaks both.
	c = New(m, Options{MaxUnusual: 1, MaxUnusualRun: 1})
	if d := c.Check(modeltest.Moves(">a", "odd>b", "odd>c", "ok>__end__")).Deviation; d == nil || d.Kind != KindUnusualCap || d.Move != 2 {
		t.Errorf("both caps at 1: deviation %+v; want %s at move 2", d, KindUnusualCap)
	}
}

// TestDeviationOrder: a move that breaks several rules is reported as the
// guard reports it: a rare move under RareIsDeviation first, then the caps
// on unusual moves (in all, then in a row), then the model's constraints.
func TestDeviationOrder(t *testing.T) {
	m := modeltest.Check(t,
		automaton.Transition{From: automaton.StartID, To: "a", Count: 9},
		automaton.Transition{From: automaton.StartID, To: "d", Count: 2, Rare: true},
		automaton.Transition{From: "d", Event: "ok", To: "a", Count: 1},
		automaton.Transition{From: "d", Event: "odd", To: "a", Count: 1, Rare: true},
		automaton.Transition{From: "a", Event: "ok", To: "b", Count: 9},
		automaton.Transition{From: "a", Event: "skip", To: "c", Count: 1, Rare: true},
		automaton.Transition{From: "b", Event: "ok", To: "c", Count: 9},
		automaton.Transition{From: "c", Event: "ok", To: automaton.EndID, Count: 10},
	)
	m.Constraints = []automaton.Constraint{{Kind: automaton.ConstraintPrecedence, A: "b", B: "c", Support: 9, Confidence: 1}}
	// Two rare moves; the second skips b, which c needs before it.
	apart := modeltest.Moves(">d", "ok>a", "skip>c", "ok>__end__")
	// Three rare moves in a row, the third skipping b.
	inRow := modeltest.Moves(">d", "odd>a", "skip>c", "ok>__end__")
	for _, tt := range []struct {
		moves []automaton.Move
		opt   Options
		kind  string
		move  int
	}{
		{apart, Options{}, automaton.KindMissingPrerequisite, 2},
		{apart, Options{MaxUnusual: 1}, KindUnusualCap, 2},
		{apart, Options{MaxUnusual: 1, RareIsDeviation: true}, KindRare, 0},
		{apart, Options{MaxUnusual: 2}, automaton.KindMissingPrerequisite, 2},
		{inRow, Options{MaxUnusualRun: 2}, KindUnusualRun, 2},
		{inRow, Options{MaxUnusualRun: 2, RareIsDeviation: true}, KindRare, 0},
		{inRow, Options{MaxUnusualRun: 3}, automaton.KindMissingPrerequisite, 2},
	} {
		d := New(m, tt.opt).Check(tt.moves).Deviation
		if d == nil || d.Kind != tt.kind || d.Move != tt.move {
			t.Errorf("%v, %+v: deviation %+v; want %s at move %d", tt.moves, tt.opt, d, tt.kind, tt.move)
		}
	}
	// The rare move that breaks the constraint, under RareIsDeviation: rare.
	if d := New(m, Options{RareIsDeviation: true}).Check(modeltest.Moves(">a", "skip>c", "ok>__end__")).Deviation; d == nil || d.Kind != KindRare {
		t.Errorf("rare move into c before b: deviation %+v; want %s", d, KindRare)
	}
}

// denseModel is the model in which any of k labels may follow any other,
// begin and end a session: every state has k+1 transitions out, the most
// an alignment's search can take from one node.
func denseModel(tb testing.TB, k int) *automaton.Model {
	var ts []automaton.Transition
	for i := range k {
		a := fmt.Sprintf("n%d", i)
		ts = append(ts, automaton.Transition{From: automaton.StartID, To: a, Count: 1},
			automaton.Transition{From: a, To: automaton.EndID, Count: 1})
		for j := range k {
			ts = append(ts, automaton.Transition{From: a, To: fmt.Sprintf("n%d", j), Count: 1})
		}
	}
	return modeltest.Check(tb, ts...)
}

// BenchmarkCheckLong checks one session of a million moves, as fsmine
// check does a log that holds a runaway session. session=random: random
// labels, two of twelve unknown, against denseModel(10), so that each
// node the search expands reaches eleven. session=loop: round the cycle
// n0 -> n1 -> n2 -> n0 of a model that ends after n2, stopping at n0, so
// that the search follows the whole session before it finds the model's
// moves to the end.
func BenchmarkCheckLong(b *testing.B) {
	const n = 1_000_000
	rng := rand.New(rand.NewPCG(3, 3))
	cycle := modeltest.Check(b,
		automaton.Transition{From: automaton.StartID, To: "n0", Count: 1},
		automaton.Transition{From: "n0", To: "n1", Count: 1},
		automaton.Transition{From: "n1", To: "n2", Count: 1},
		automaton.Transition{From: "n2", To: "n0", Count: 1},
		automaton.Transition{From: "n2", To: automaton.EndID, Count: 1},
	)
	for _, kind := range []string{"random", "loop"} {
		m := denseModel(b, 10)
		moves := make([]automaton.Move, 0, n+1)
		for i := range n {
			l := i % 3
			if kind == "random" {
				l = rng.IntN(12)
			}
			moves = append(moves, automaton.Move{Label: fmt.Sprintf("n%d", l)})
		}
		moves = append(moves, automaton.Move{Label: automaton.EndID})
		if kind == "loop" {
			m = cycle
		}
		b.Run("session="+kind, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				New(m, Options{}).Check(moves)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "moves/s")
		})
	}
}

// randomModel is a model of k states, each labelled as its id, with
// random transitions over a few events: from start to some, from some to
// end, and about three out of each.
func randomModel(tb testing.TB, rng *rand.Rand, k int) *automaton.Model {
	name := func(i int) string { return fmt.Sprintf("s%d", i) }
	events := []string{"", "ok", "retry"}
	seen := map[string]bool{}
	var ts []automaton.Transition
	add := func(from, event, to string) {
		if key := from + "\x00" + event + "\x00" + to; !seen[key] {
			seen[key] = true
			ts = append(ts, automaton.Transition{From: from, Event: event, To: to, Count: 1})
		}
	}
	add(automaton.StartID, "", name(0))
	add(name(k-1), "ok", automaton.EndID)
	for i := range k {
		if rng.IntN(3) == 0 {
			add(automaton.StartID, "", name(i))
		}
		if rng.IntN(3) == 0 {
			add(name(i), events[rng.IntN(len(events))], automaton.EndID)
		}
		for range 1 + rng.IntN(5) {
			add(name(i), events[rng.IntN(len(events))], name(rng.IntN(k)))
		}
	}
	return modeltest.Check(tb, ts...)
}

// TestAlignSameSearch holds the alignment's search to the one it replaced
// (refAlign): on random models and sessions, bounded or not, with its
// nodes in arrays or a map, the same cost, the same nodes expanded and the
// same operations.
func TestAlignSameSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	defer func(d int64) { maxDenseAlign = d }(maxDenseAlign)
	for mi := range 40 {
		m := randomModel(t, rng, 2+rng.IntN(12))
		if mi%10 == 0 {
			m = denseModel(t, 2+mi/10)
		}
		labels := []string{"zz", automaton.EndID}
		for _, s := range m.States {
			labels = append(labels, s.Label)
		}
		events := []string{"", "ok", "retry", "boom"}
		for si := range 30 {
			var moves []automaton.Move
			if si%2 == 0 {
				moves = m.Sample(rng, 20+rng.IntN(200))
				for k := rng.IntN(8); k > 0 && len(moves) > 0; k-- {
					moves[rng.IntN(len(moves))] = automaton.Move{Event: events[rng.IntN(len(events))], Label: labels[rng.IntN(len(labels))]}
				}
			} else {
				for range rng.IntN(150) {
					moves = append(moves, automaton.Move{Event: events[rng.IntN(len(events))], Label: labels[rng.IntN(len(labels))]})
				}
			}
			bound := []int{0, 1, 7, 60, 500}[si%5]
			c := New(m, Options{MaxAlignStates: bound})
			for _, dense := range []bool{true, false} {
				maxDenseAlign = 0
				if dense {
					maxDenseAlign = 1 << 20
				}
				for _, withOps := range []bool{false, true} {
					got := c.align(moves, withOps)
					want := refAlign(c, dense, moves, withOps)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("model %d session %d (dense %v, ops %v, bound %d): %+v, want %+v", mi, si, dense, withOps, bound, got, want)
					}
				}
			}
		}
	}
}

// TestCheckLongSessionMemory: checking a long session that deviates all
// along keeps a few bytes per move, not a search node for every
// transition out of each node the search expands. The search stored to
// allocate some 1,900 bytes a move here (eleven nodes of 40 bytes and a
// pointer each, for each node expanded); it allocates under 200.
func TestCheckLongSessionMemory(t *testing.T) {
	const n = 200_000
	m := denseModel(t, 10)
	rng := rand.New(rand.NewPCG(3, 3))
	moves := make([]automaton.Move, 0, n+1)
	for range n {
		moves = append(moves, automaton.Move{Label: fmt.Sprintf("n%d", rng.IntN(12))})
	}
	moves = append(moves, automaton.Move{Label: automaton.EndID})
	c := New(m, Options{})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	v := c.Check(moves)
	runtime.ReadMemStats(&after)
	if v.Bounded || v.Cost == 0 {
		t.Fatalf("cost %d, bounded %v: want an exact alignment that costs something", v.Cost, v.Bounded)
	}
	if perMove := (after.TotalAlloc - before.TotalAlloc) / n; perMove > 500 {
		t.Errorf("Check allocated %d bytes a move, want at most 500", perMove)
	}
}
