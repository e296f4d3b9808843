package mine

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fsmine/fsmine/mine/gen"
)

// TestKeepsEditSame holds keepsEdit, which resumes the constraint checker
// from a variant's state and stops where the edited path is back in it, to
// keeps, which checks the whole edited path: on the agent truth's sessions
// (whose constraints include prerequisites with alternatives, once-only
// stages and runs), for every skip and swap at every place of every
// variant, and for random replacements of a stretch of a variant by labels
// of the log, which break constraints more often.
func TestKeepsEditSame(t *testing.T) {
	g0, err := gen.New(gen.AgentTruth(), gen.Options{Seed: 3, Start: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := g0.Write(context.Background(), &buf, 300); err != nil {
		t.Fatal(err)
	}
	lg, err := Read([]Input{strInput("agent.jsonl", buf.String())}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := &builder{lg: lg, opt: DefaultOptions()}
	b.startLabel = lg.intern("__start__")
	b.variants()
	b.d = learnAlergia(buildPTA(b.vars, b.startLabel, b.lessMove), b.opt.Alpha)
	if err := b.walk(); err != nil {
		t.Fatal(err)
	}
	g := b.newGeneralizer()
	if len(b.cons) == 0 {
		t.Fatal("no constraints learned: the test would check nothing")
	}
	var labels []uint32
	for _, l := range g.labs {
		labels = append(labels, l[1:len(l)-1]...)
	}
	r := rand.New(rand.NewPCG(1, 2))
	w := &editWalk{}
	checked, broken := 0, 0
	try := func(i, k, m int) {
		t.Helper()
		want := g.keeps(w.lab[1:i+1], g.mvs)
		if got := g.keepsEdit(w, i, k, m); got != want {
			t.Fatalf("variant %v, edit at %d (%d moves, then from move %d): keepsEdit %v, keeps %v", w.lab, i, k, m, got, want)
		}
		checked++
		if !want {
			broken++
		}
	}
	for vi, v := range b.vars {
		w.v, w.path, w.lab = v, b.paths[vi], g.labs[vi]
		g.checkpoint(w)
		n := len(v.moves)
		for i := 0; i+1 < n; i++ {
			g.mvs = append(append(g.mvs[:0], mkMove(v.moves[i].event(), w.lab[i+2])), v.moves[i+2:]...)
			try(i, 1, i+2) // skip the visit i+1
			if i+2 < n {
				g.mvs = append(g.mvs[:0], mkMove(v.moves[i].event(), w.lab[i+2]), mkMove(v.moves[i+2].event(), w.lab[i+1]), mkMove(v.moves[i+1].event(), w.lab[i+3]))
				g.mvs = append(g.mvs, v.moves[i+3:]...)
				try(i, 3, i+3) // swap the visits i+1 and i+2
			}
			for range 3 {
				k := 1 + r.IntN(3)
				m := min(i+1+r.IntN(3), n)
				g.mvs = g.mvs[:0]
				for range k {
					g.mvs = append(g.mvs, mkMove(0, labels[r.IntN(len(labels))]))
				}
				g.mvs = append(g.mvs, v.moves[m:]...)
				try(i, k, m)
			}
		}
	}
	if broken == 0 || broken == checked {
		t.Fatalf("%d edits, %d of them break a constraint: want some of each", checked, broken)
	}
	t.Logf("%d edits, %d break a constraint", checked, broken)
}
