package serve

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton/guard"
	"github.com/fsmine/fsmine/automaton/internal/modeltest"
)

// TestWriteCheckEscapes: the names serve --check prints come from a model
// file and a policy, hostile until checked: a newline in a state id or a
// slot's name cannot start a line of its own.
func TestWriteCheckEscapes(t *testing.T) {
	m := modeltest.Retry(t)
	const bad = "b\nFAKE line"
	for i := range m.States {
		if s := &m.States[i]; s.ID == "b" {
			s.ID, s.Label = bad, bad
		}
	}
	for i := range m.Transitions {
		tr := &m.Transitions[i]
		if tr.From == "b" {
			tr.From = bad
		}
		if tr.To == "b" {
			tr.To = bad
		}
	}
	m.Loops[0].States = []string{bad}
	m.Loops[0].BackEdges[0].From, m.Loops[0].BackEdges[0].To = bad, bad
	m.Sort()
	m.Digest = m.ComputeDigest()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	ev := "ok"
	p := &guard.Policy{
		Slots:       []guard.SlotSpec{{Name: "x\nFAKE slot"}},
		States:      map[string]guard.StatePolicy{bad: {}},
		Transitions: []guard.Rule{{From: "a", Event: &ev, To: bad}},
	}
	s, err := New(m, p, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := s.WriteCheck(&out, "model.json", "policy.json"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "\nFAKE") || !strings.Contains(out.String(), `{b\nFAKE line}  max 2`) {
		t.Errorf("names not escaped, or the loop's line missing:\n%s", out.String())
	}
}
