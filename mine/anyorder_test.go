package mine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
)

// movesOf turns "node:event node:event ..." into a session's moves: the
// move out of the start, one per step, the move into the end.
func movesOf(s string) []automaton.Move {
	var out []automaton.Move
	ev := ""
	for _, tok := range strings.Fields(s) {
		node, event, _ := strings.Cut(tok, ":")
		out = append(out, automaton.Move{Event: ev, Label: node})
		ev = event
	}
	return append(out, automaton.Move{Event: ev, Label: automaton.EndID})
}

// TestAnyOrder: the any-order end lets a session take its steps in an
// order no session took (c before b), which the narrowest map denies; what
// the log shows over whole sessions still decides: a step before its
// prerequisite, a first step no session starts with though many visit it,
// an outcome no step of the log ends with, a repeat no session made.
func TestAnyOrder(t *testing.T) {
	var sessions []string
	for range 15 {
		sessions = append(sessions, "id:ok a:ok b:ok c:ok", "id:ok b:ok a:ok c:ok", "x:ok id:ok a:ok c:ok")
	}
	lg := strInput("log", sessionsJSONL(sessions...))
	opt := DefaultOptions()
	opt.Generalize = GeneralizeAnyOrder
	loose := conform.New(mustBuild(t, opt, ReadOptions{}, lg), conform.Options{})
	opt.Generalize = GeneralizeNone
	narrow := conform.New(mustBuild(t, opt, ReadOptions{}, lg), conform.Options{})
	tests := []struct {
		name    string
		session string
		want    string // the deviation's kind, "" for a fit
		narrow  string // the narrowest map's
	}{
		{"an order no session took", "id:ok a:ok c:ok b:ok", "", conform.KindIllegalTransition},
		{"an end no session made", "x:ok id:ok a:ok", "", conform.KindIncomplete},
		{"two steps no session took together", "x:ok id:ok b:ok c:ok", automaton.KindNotBoth, conform.KindIllegalTransition},
		{"a session seen", "id:ok b:ok a:ok c:ok", "", ""},
		{"without its prerequisite", "x:ok a:ok c:ok", automaton.KindMissingPrerequisite, conform.KindIllegalTransition},
		{"a first step no session starts with", "c:ok", conform.KindIllegalTransition, conform.KindIllegalTransition},
		{"an outcome no step ends with", "id:ok a:failed c:ok", conform.KindIllegalTransition, conform.KindIllegalTransition},
		{"a repeat", "id:ok a:ok a:ok c:ok", conform.KindIllegalTransition, conform.KindIllegalTransition},
	}
	kind := func(c *conform.Checker, s string) string {
		v := c.Check(movesOf(s))
		if v.Deviation == nil {
			return ""
		}
		return v.Deviation.Kind
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kind(loose, tt.session); got != tt.want {
				t.Errorf("any-order: deviation %q, want %q", got, tt.want)
			}
			if got := kind(narrow, tt.session); got != tt.narrow {
				t.Errorf("none: deviation %q, want %q", got, tt.narrow)
			}
		})
	}
}

// TestLoose: the loose setting keeps the absences the log makes telling.
// Twenty visits of a, each followed by b and never by d, which follows a
// third of the other labels' moves: a chance of 0.67^20 < 0.05 that this is
// luck, so a never goes on to d. Two visits of the rare r say nothing, so
// r may go on to d, and so may d to r. The any-order end allows all.
func TestLoose(t *testing.T) {
	var sessions []string
	for range 20 {
		sessions = append(sessions, "id:ok a:ok b:ok d:ok", "id:ok b:ok d:ok")
	}
	sessions = append(sessions, "id:ok r:ok b:ok d:ok", "id:ok r:ok b:ok d:ok")
	lg := strInput("log", sessionsJSONL(sessions...))
	moves := func(m *automaton.Model) map[string]string {
		label := map[string]string{automaton.EndID: automaton.EndID}
		for _, s := range m.States {
			label[s.ID] = s.Label
		}
		out := map[string]string{}
		for _, tr := range m.Transitions {
			out[label[tr.From]+" -"+tr.Event+"-> "+label[tr.To]] = tr.Generalized
		}
		return out
	}
	opt := DefaultOptions()
	opt.Generalize = GeneralizeLoose
	loose := mustBuild(t, opt, ReadOptions{}, lg)
	opt.Generalize = GeneralizeAnyOrder
	anyOrder := mustBuild(t, opt, ReadOptions{}, lg)
	for _, tt := range []struct {
		move, loose, anyOrder string // "" for no such move
	}{
		{"a -ok-> d", "", GenAnyOrder},
		{"r -ok-> d", GenLoose, GenAnyOrder},
		{"b -ok-> a", "", GenAnyOrder},       // 42 visits of b, a a fifth of the rest
		{"d -ok-> r", GenLoose, GenAnyOrder}, // r a fiftieth
	} {
		if got := moves(loose)[tt.move]; got != tt.loose {
			t.Errorf("loose: %s marked %q, want %q", tt.move, got, tt.loose)
		}
		if got := moves(anyOrder)[tt.move]; got != tt.anyOrder {
			t.Errorf("any-order: %s marked %q, want %q", tt.move, got, tt.anyOrder)
		}
	}
	// z's repeats are no evidence that z follows other labels: after 20
	// visits of a, z (4 visits from other labels, then runs) stays open.
	var runs []string
	for range 20 {
		runs = append(runs, "id:ok a:ok y:ok", "id:ok x:ok y:ok")
	}
	for range 4 {
		runs = append(runs, "id:ok x:ok z:ok z:ok z:ok z:ok z:ok z:ok y:ok")
	}
	opt.Generalize = GeneralizeLoose
	if got := moves(mustBuild(t, opt, ReadOptions{}, strInput("runs", sessionsJSONL(runs...))))["a -ok-> z"]; got != GenLoose {
		t.Errorf("loose, z repeating: a -ok-> z marked %q, want %q", got, GenLoose)
	}
	c := conform.New(loose, conform.Options{})
	if v := c.Check(movesOf("id:ok b:ok a:ok d:ok")); v.Deviation == nil || v.Deviation.Kind != conform.KindIllegalTransition {
		t.Errorf("loose: a then d: %+v, want an illegal transition", v.Deviation)
	}
	if v := conform.New(anyOrder, conform.Options{}).Check(movesOf("id:ok b:ok a:ok d:ok")); v.Deviation != nil {
		t.Errorf("any-order: a then d: %+v, want a fit", v.Deviation)
	}
}

// TestAnyOrderBounded: a log of 1,500 labels, each state a candidate for a
// move to each label, would make 2.25 million moves to weigh: build refuses
// and says what to do, rather than hold a model far larger than the log.
func TestAnyOrderBounded(t *testing.T) {
	var sessions []string
	for i := range 500 {
		sessions = append(sessions, fmt.Sprintf("n%d:ok n%d:ok n%d:ok", 3*i, 3*i+1, 3*i+2))
	}
	lg, err := Read([]Input{strInput("log", sessionsJSONL(sessions...))}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opt := labelOpts()
	opt.Generalize = GeneralizeAnyOrder
	if _, err := Build(lg, opt); err == nil || !strings.Contains(err.Error(), "labels suggest") {
		t.Errorf("Build = %v, want an error that says to label the nodes into fewer stages", err)
	}
	opt.Generalize = GeneralizeAuto
	if _, err := Build(lg, opt); err != nil {
		t.Errorf("auto: %v", err)
	}
}
