package automaton

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// sampleModel builds a validated model from transitions; every state but
// the pseudo-states is labelled by its id unless labels says otherwise.
func sampleModel(t *testing.T, labels map[string]string, ts ...Transition) *Model {
	t.Helper()
	m := &Model{Schema: Schema, Initial: StartID}
	ids := map[string]bool{StartID: true, EndID: true}
	for _, tr := range ts {
		ids[tr.From], ids[tr.To] = true, true
	}
	for id := range ids {
		label := id
		if l, ok := labels[id]; ok {
			label = l
		}
		m.States = append(m.States, State{ID: id, Label: label})
	}
	m.Transitions = ts
	m.Sort()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	return m
}

// retryModel is a -ok-> b, a -fail-> a (retry), a -quit-> end, b -done-> end,
// with probabilities or, when byCount, with counts only.
func retryModel(t *testing.T, byCount bool) *Model {
	p := func(prob float64) (float64, int) {
		if byCount {
			return 0, int(prob * 100)
		}
		return prob, 0
	}
	tr := func(from, event, to string, prob float64) Transition {
		pr, n := p(prob)
		return Transition{From: from, Event: event, To: to, Prob: pr, Count: n}
	}
	return sampleModel(t, nil,
		tr(StartID, "", "a", 1),
		tr("a", "ok", "b", 0.6),
		tr("a", "fail", "a", 0.3),
		tr("a", "quit", EndID, 0.1),
		tr("b", "done", EndID, 1),
	)
}

func TestSampleFrequencies(t *testing.T) {
	tests := []struct {
		name    string
		byCount bool
	}{
		{"prob", false},
		{"count", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := retryModel(t, tt.byCount)
			rng := rand.New(rand.NewPCG(1, 2))
			out := map[string]int{} // event of each move out of a
			total := 0
			for range 20000 {
				moves := m.Sample(rng, 0)
				for _, mv := range moves[1:] {
					if mv.Event == "done" {
						continue
					}
					out[mv.Event]++
					total++
				}
			}
			want := map[string]float64{"ok": 0.6, "fail": 0.3, "quit": 0.1}
			for ev, p := range want {
				got := float64(out[ev]) / float64(total)
				if math.Abs(got-p) > 0.01 {
					t.Errorf("share of %q out of a = %.4f, want %.2f ± 0.01 (%d moves)", ev, got, p, total)
				}
			}
		})
	}
}

func TestSampleUniformWhenWeightless(t *testing.T) {
	m := sampleModel(t, nil,
		Transition{From: StartID, To: "a"},
		Transition{From: StartID, To: "b"},
		Transition{From: "a", Event: "x", To: EndID},
		Transition{From: "b", Event: "y", To: EndID},
	)
	rng := rand.New(rand.NewPCG(3, 4))
	first := map[string]int{}
	for range 10000 {
		first[m.Sample(rng, 0)[0].Label]++
	}
	if a := first["a"]; a < 4800 || a > 5200 {
		t.Errorf("sessions starting at a = %d of 10000, want about half", a)
	}
}

func TestSampleDeterministic(t *testing.T) {
	m := retryModel(t, false)
	a := rand.New(rand.NewPCG(7, 7))
	b := rand.New(rand.NewPCG(7, 7))
	for i := range 500 {
		x, y := m.Sample(a, 0), m.Sample(b, 0)
		if !reflect.DeepEqual(x, y) {
			t.Fatalf("session %d: %v and %v from the same seed", i, x, y)
		}
	}
}

func TestSampleEnds(t *testing.T) {
	m := retryModel(t, false)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		moves := m.Sample(rng, 0)
		if !m.Accepts(moves) {
			t.Fatalf("session %d: sampled %v, which the model does not accept", i, moves)
		}
		if moves[0].Event != "" || moves[len(moves)-1].Label != EndID {
			t.Fatalf("session %d: %v does not run from %s to %s", i, moves, StartID, EndID)
		}
	}
}

func TestSampleTruncates(t *testing.T) {
	// a loops on itself for ever; only maxSteps ends the walk.
	m := sampleModel(t, nil,
		Transition{From: StartID, To: "a", Prob: 1},
		Transition{From: "a", Event: "again", To: "a", Prob: 1},
		Transition{From: "a", Event: "never", To: EndID, Prob: 0, Count: 0},
	)
	rng := rand.New(rand.NewPCG(1, 1))
	for _, max := range []int{1, 2, 17} {
		moves := m.Sample(rng, max)
		if len(moves) != max {
			t.Errorf("Sample(rng, %d) gave %d moves, want %d", max, len(moves), max)
		}
		if m.Accepts(moves) {
			t.Errorf("Accepts(%v) = true for a truncated walk", moves)
		}
	}
}

func TestSampleDeadEnd(t *testing.T) {
	m := sampleModel(t, nil,
		Transition{From: StartID, To: "a", Prob: 1},
		Transition{From: "a", Event: "ok", To: "stuck", Prob: 1},
	)
	got := m.Sample(rand.New(rand.NewPCG(1, 1)), 10)
	want := []Move{{"", "a"}, {"ok", "stuck"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Sample = %v, want %v", got, want)
	}
}

func TestSampleSharedLabel(t *testing.T) {
	// Two states labelled v: moves carry the label, not the id.
	m := sampleModel(t, map[string]string{"v1": "v", "v2": "v"},
		Transition{From: StartID, To: "v1", Prob: 1},
		Transition{From: "v1", Event: "ok", To: "w", Prob: 1},
		Transition{From: "w", Event: "ok", To: "v2", Prob: 1},
		Transition{From: "v2", Event: "ok", To: EndID, Prob: 1},
	)
	got := m.Sample(rand.New(rand.NewPCG(1, 1)), 0)
	want := []Move{{"", "v"}, {"ok", "w"}, {"ok", "v"}, {"ok", EndID}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Sample = %v, want %v", got, want)
	}
}

func TestAccepts(t *testing.T) {
	m := retryModel(t, false)
	tests := []struct {
		name  string
		moves []Move
		want  bool
	}{
		{"straight", []Move{{"", "a"}, {"ok", "b"}, {"done", EndID}}, true},
		{"retries", []Move{{"", "a"}, {"fail", "a"}, {"fail", "a"}, {"quit", EndID}}, true},
		{"empty", nil, false},
		{"stops short", []Move{{"", "a"}, {"ok", "b"}}, false},
		{"unknown event", []Move{{"", "a"}, {"oops", "b"}, {"done", EndID}}, false},
		{"unknown label", []Move{{"", "a"}, {"ok", "c"}, {"done", EndID}}, false},
		{"event on first move", []Move{{"go", "a"}, {"ok", "b"}, {"done", EndID}}, false},
		{"past the end", []Move{{"", "a"}, {"quit", EndID}, {"ok", "b"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.Accepts(tt.moves); got != tt.want {
				t.Errorf("Accepts(%v) = %v, want %v", tt.moves, got, tt.want)
			}
		})
	}
}
