package mine

import (
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
)

// TestRestrictKeepsTheCapOfAGeneralisedBackEdge: a loop whose only listed
// (observed) back edge the restriction drops, while a generalised back
// edge of the same loop stays, keeps its cap: no cycle of a sub-map goes
// uncapped where the shared map caps it.
func TestRestrictKeepsTheCapOfAGeneralisedBackEdge(t *testing.T) {
	st := func(id string) automaton.State { return automaton.State{ID: id, Label: id, Visits: 10, Sessions: 10} }
	tr := func(from, ev, to string, back bool, gen string) automaton.Transition {
		c := 5
		if gen != "" {
			c = 0
		}
		return automaton.Transition{From: from, Event: ev, To: to, Count: c, Sessions: c, BackEdge: back, Generalized: gen}
	}
	m := &automaton.Model{
		Schema: automaton.Schema, Initial: automaton.StartID,
		States: []automaton.State{st(automaton.StartID), st("A"), st("B"), st("C"), st("D"), st(automaton.EndID)},
		Transitions: []automaton.Transition{
			tr(automaton.StartID, "", "C", false, ""),
			tr("C", "ok", "D", false, ""),
			tr("D", "ok", "B", false, ""),
			tr("B", "ok", "A", false, ""),
			tr("A", "ok", "C", true, ""),
			tr("B", "ok", "C", true, GenSwap),
			tr("B", "ok", automaton.EndID, false, ""),
		},
		Loops: []automaton.Loop{{States: []string{"A", "B", "C", "D"}, BackEdges: []automaton.EdgeRef{{From: "A", Event: "ok", To: "C"}}, Count: 5, Sessions: 5, MaxIterations: 1}},
	}
	m.Sort()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	lg, err := Read([]Input{strInput("log", sessionsJSONL("C:ok D:ok B:ok", "C:ok D:ok B:ok"))}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	long := []automaton.Move{{Label: "C"}}
	for i := 0; i < 20; i++ {
		long = append(long, automaton.Move{Event: "ok", Label: "D"}, automaton.Move{Event: "ok", Label: "B"}, automaton.Move{Event: "ok", Label: "C"})
	}
	long = append(long, automaton.Move{Event: "ok", Label: "D"}, automaton.Move{Event: "ok", Label: "B"}, automaton.Move{Event: "ok", Label: automaton.EndID})
	if conform.New(m, conform.Options{}).Fits(long) {
		t.Fatal("the shared map fits 20 turns of a loop capped at 1")
	}
	for _, mode := range []string{automaton.ByStages, automaton.ByMoves} {
		sub := restrictedMap(m, lg, []int{0, 1}, "v", mode)
		sm := &automaton.Model{Schema: m.Schema, Initial: sub.Initial, States: sub.States, Transitions: sub.Transitions, Loops: sub.Loops, Constraints: sub.Constraints}
		if err := sm.Validate(); err != nil {
			t.Fatal(err)
		}
		if conform.New(sm, conform.Options{}).Fits(long) {
			t.Errorf("%s: the sub-map fits 20 turns of the loop the shared map caps at 1 (loops %v)", mode, sub.Loops)
		}
	}
}
