package automaton

import "testing"

func TestCompareDesign(t *testing.T) {
	design := &Model{
		States: []State{{ID: StartID, Label: StartID}, {ID: "check", Label: "query"}, {ID: "book", Label: "query"}, {ID: "ask", Label: "ask"}, {ID: EndID, Label: EndID}},
		Transitions: []Transition{
			{From: StartID, To: "check"},
			{From: "check", Event: "ok", To: "ask"},
			{From: "ask", Event: "agent", To: "book"},
			{From: "book", Event: "ok", To: EndID},
		},
	}
	mined := &Model{
		States: []State{{ID: StartID, Label: StartID}, {ID: "query", Label: "query"}, {ID: "query@ask", Label: "query"}, {ID: "ask", Label: "ask"}, {ID: EndID, Label: EndID}},
		Transitions: []Transition{
			{From: StartID, To: "query", Count: 5, Sessions: 5, Examples: []string{"s1"}},
			{From: "query", Event: "ok", To: "ask", Count: 4, Sessions: 4},
			{From: "query", Event: "empty", To: EndID, Count: 1, Sessions: 1, Examples: []string{"s9"}},
			{From: "ask", Event: "agent", To: "query@ask", Count: 4, Sessions: 4},
			{From: "query@ask", Event: "ok", To: "ask", Count: 0, Generalized: "skip"},
			{From: "query@ask", Event: "ok", To: EndID, Count: 2, Sessions: 2},
			{From: "query", Event: "ok", To: EndID, Count: 1, Sessions: 1, Examples: []string{"s3"}},
		},
	}
	d := CompareDesign(design, mined)
	if d.Designed != 4 || d.Taken != 5 {
		t.Errorf("designed %d, taken %d; want 4, 5", d.Designed, d.Taken)
	}
	if len(d.NeverTaken) != 0 {
		t.Errorf("never taken = %+v, want none", d.NeverTaken)
	}
	want := []DesignMove{{From: "query", Event: "empty", To: EndID, Count: 1, Sessions: 1, Examples: []string{"s9"}}}
	if len(d.NeverDesigned) != 1 || d.NeverDesigned[0].From != want[0].From || d.NeverDesigned[0].Event != "empty" || d.NeverDesigned[0].Examples[0] != "s9" {
		t.Errorf("never designed = %+v, want %+v", d.NeverDesigned, want)
	}
	// query -ok-> __end__ is designed (book) and taken 3 times over two mined states.
	for _, f := range d.Followed {
		if f.From == "query" && f.Event == "ok" && f.To == EndID && f.Count != 3 {
			t.Errorf("followed query -ok-> __end__ count %d, want 3", f.Count)
		}
	}
	design.Transitions = append(design.Transitions, Transition{From: "ask", Event: "agent", To: "ask"})
	if d := CompareDesign(design, mined); len(d.NeverTaken) != 1 || d.NeverTaken[0].To != "ask" {
		t.Errorf("never taken = %+v, want ask -agent-> ask", d.NeverTaken)
	}
}
