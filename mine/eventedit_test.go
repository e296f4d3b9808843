package mine

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
)

// eventsScan is the event edit as it was before eventEdits: every event of
// the label tried at every place. TestEventEditsIndex holds events to it.
func (g *generalizer) eventsScan(w *editWalk) {
	b, st, v, path, lab := g.b, g.st, w.v, w.path, w.lab
	n := len(v.moves)
	for i := 0; i+1 < n; i++ {
		a, c, e := lab[i+1], lab[i+2], v.moves[i+1].event()
		if st.visits[a] == st.events[levent{a, e}] {
			continue
		}
		for _, alt := range b.eventsOf(st, a) {
			if alt == e {
				continue
			}
			if st.pairEv[lpairEv{a, alt, c}] == 0 {
				switch {
				case st.neutral(a, e, alt):
					p := float64(st.pairEv[lpairEv{a, e, c}]) / float64(st.events[levent{a, e}])
					if !plausible(p, st.events[levent{a, alt}]) {
						continue
					}
				case c == a:
					if !plausible(st.retryRate(a, alt), st.events[levent{a, alt}]) {
						continue
					}
				default:
					continue
				}
			}
			g.mvs, g.targets = g.mvs[:0], g.targets[:0]
			g.mvs = append(g.mvs, mkMove(alt, c))
			g.targets = append(g.targets, path[i+2])
			g.rest, g.restTo = v.moves[i+2:], path[i+3:]
			g.thread(path[i+1], 1, GenEvent)
		}
	}
}

// editsWith builds lg as Build does and runs generalize's edits with the
// given event edit, returning the generalised moves.
func editsWith(t *testing.T, lg *Log, merge string, events func(*generalizer, *editWalk)) map[dkey]genEdge {
	t.Helper()
	b := &builder{lg: lg, opt: DefaultOptions()}
	b.opt.Merge = merge
	b.startLabel = lg.intern("__start__")
	b.variants()
	switch merge {
	case MergeLabel:
		b.d = learnLabel(b.vars, b.startLabel)
	default:
		b.d = learnAlergia(buildPTA(b.vars, b.startLabel, b.lessMove), b.opt.Alpha)
	}
	if err := b.walk(); err != nil {
		t.Fatal(err)
	}
	g := b.newGeneralizer()
	w := &editWalk{}
	for vi, v := range b.vars {
		w.v, w.path, w.lab = v, b.paths[vi], g.labs[vi]
		g.checkpoint(w)
		g.skips(w)
		g.swaps(w)
		events(g, w)
	}
	return b.gen
}

// TestEventEditsIndex: the event edit through its index adds the same moves
// as trying every event of the label at every place, on random logs that
// mix events that carry ids, frequent outcomes (which neutral compares) and
// retries (a label repeated), under the label and the alergia merge; the
// flows keep states of one label apart under alergia, where an event's move
// from one of them may lead elsewhere than the original's.
func TestEventEditsIndex(t *testing.T) {
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var buf bytes.Buffer
		if seed%2 == 0 {
			writeMixedEvents(&buf, rng)
		} else {
			writeFlowEvents(&buf, rng)
		}
		merges := []string{MergeLabel, MergeAlergia}
		if seed%2 == 1 {
			merges = merges[1:] // a label's state is a label's: no event edit
		}
		for _, merge := range merges {
			t.Run(fmt.Sprintf("seed=%d/merge=%s", seed, merge), func(t *testing.T) {
				read := func() *Log {
					lg, err := Read(benchInput(buf.Bytes()), ReadOptions{})
					if err != nil {
						t.Fatal(err)
					}
					return lg
				}
				want := editsWith(t, read(), merge, (*generalizer).eventsScan)
				got := editsWith(t, read(), merge, (*generalizer).events)
				events := 0
				for _, e := range want {
					if e.kind == GenEvent {
						events++
					}
				}
				if events == 0 {
					t.Fatalf("no event edit taken: the log tests nothing")
				}
				if !maps.Equal(got, want) {
					t.Errorf("index adds %d moves, the scan %d (%d event edits): they differ", len(got), len(want), events)
				}
			})
		}
	}
}

// writeMixedEvents writes random sessions over six labels, each visit
// repeated at times, ended by an id, a frequent outcome or ok and error.
func writeMixedEvents(buf *bytes.Buffer, rng *rand.Rand) {
	for s := range 150 + rng.IntN(300) {
		node := ""
		for k := range 2 + rng.IntN(6) {
			if node == "" || rng.Float64() > 0.25 {
				node = fmt.Sprintf("n%d", rng.IntN(6))
			}
			var ev string
			switch r := rng.Float64(); {
			case r < 0.3:
				ev = fmt.Sprintf("id%d", rng.IntN(400))
			case r < 0.6:
				ev = fmt.Sprintf("f%d", rng.IntN(8))
			default:
				ev = []string{"ok", "ok", "error"}[rng.IntN(3)]
			}
			fmt.Fprintf(buf, `{"session_id":"s%d","step":%d,"node":%q,"event":%q}`+"\n", s, k, node, ev)
		}
	}
}

// writeFlowEvents writes sessions along flows in which check comes at
// different places, and after lookup an outcome decides what follows check,
// so that alergia keeps some of its states apart; a visit that ends in an
// error is retried half the time.
func writeFlowEvents(buf *bytes.Buffer, rng *rand.Rand) {
	flows := [][]string{
		{"greet", "check", "lookup", "check", "act", "close"},
		{"greet", "lookup", "check", "act", "close"},
		{"greet", "check", "act", "check", "close"},
		{"greet", "check", "close"},
		{"greet", "lookup:found", "check", "act", "close"},
		{"greet", "lookup:missing", "check", "close"},
	}
	for s := range 300 + rng.IntN(300) {
		flow := flows[rng.IntN(len(flows))]
		step := 0
		for i, node := range flow {
			node, fixed, _ := strings.Cut(node, ":")
			for {
				var ev string
				switch r := rng.Float64(); {
				case fixed != "":
					ev = fixed
				case i == len(flow)-1:
					ev = "done"
				case r < 0.1:
					ev = fmt.Sprintf("id%d", rng.IntN(300))
				case r < 0.25:
					ev = fmt.Sprintf("f%d", rng.IntN(6))
				default:
					ev = []string{"ok", "ok", "error"}[rng.IntN(3)]
				}
				fmt.Fprintf(buf, `{"session_id":"s%d","step":%d,"node":%q,"event":%q}`+"\n", s, step, node, ev)
				step++
				if ev != "error" || rng.Float64() < 0.5 {
					break
				}
			}
		}
	}
}
