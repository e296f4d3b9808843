package mine

import (
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// runsOf returns the run constraints of a model built from sessions, each
// repeated n times, as strings.
func runsOf(t *testing.T, n int, sessions ...string) []string {
	t.Helper()
	var all []string
	for range n {
		all = append(all, sessions...)
	}
	m := mustBuild(t, DefaultOptions(), ReadOptions{}, strInput("log", sessionsJSONL(all...)))
	var out []string
	for _, c := range m.Constraints {
		if c.Kind == automaton.ConstraintRun {
			out = append(out, c.String())
		}
	}
	return out
}

// TestRunConstraints: a label repeated in a row but never returned to after
// the session moved on gets a run rule; its reset label is the one every
// return passed through; a return through no common label, too few
// sessions, or a label visited once (a once rule says more) give none.
func TestRunConstraints(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		sessions []string
		want     string
	}{
		{"one run", 20, []string{"o:ok o:ok p:ok c:yes a:ok", "o:ok p:ok c:yes a:ok", "p:ok o:ok o:ok c:yes a:ok"}, "o in one run"},
		{"until the confirmation", 20, []string{"o:ok o:ok p:ok c:yes a:ok o:ok c:yes b:ok", "o:ok p:ok c:yes a:ok", "o:ok c:yes b:ok x:ok o:ok c:yes a:ok"}, "o in one run until c"},
		{"a return through no common label", 20, []string{"o:ok p:ok o:ok c:yes a:ok", "o:ok c:yes a:ok o:ok c:yes b:ok"}, ""},
		{"too few sessions", 16, []string{"o:ok o:ok p:ok c:yes a:ok", "o:ok p:ok c:yes a:ok", "p:ok o:ok o:ok c:yes a:ok"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runsOf(t, tt.n, tt.sessions...)
			found := false
			for _, g := range got {
				if strings.HasPrefix(g, "o ") {
					found = found || g == tt.want
					if g != tt.want {
						t.Errorf("run constraint %q, want %q", g, tt.want)
					}
				}
			}
			if tt.want != "" && !found {
				t.Errorf("run constraints %q, want %q among them", got, tt.want)
			}
		})
	}
}

// genMoves returns the model's generalised transitions as "from -event-> to
// (kind)", by label.
func genMoves(m *automaton.Model) []string {
	var out []string
	for _, t := range m.Transitions {
		if t.Generalized != "" {
			out = append(out, m.State(t.From).Label+" -"+t.Event+"-> "+m.State(t.To).Label+" ("+t.Generalized+")")
		}
	}
	return out
}

// TestRetryAfterError: a label that repeats, never after an error, may be
// retried after one when the log shows retries after that error for other
// labels (back-off from the label to the event); not when only one other
// label shows it, and never for a label that does not repeat.
func TestRetryAfterError(t *testing.T) {
	base := []string{
		"lookup:ok lookup:ok act:ok done:ok",
		"lookup:ok act:ok done:ok",
		"search:error search:ok act:ok done:ok",
		"search:error act:ok done:ok",
		"search:ok act:ok done:ok",
		"act:error act:ok done:ok",
		"act:error done:ok",
		"act:ok done:ok",
	}
	// One lookup ended with an error, too few visits for the events to be
	// shown neutral (see neutral): only the retries elsewhere speak.
	const failed = "lookup:error act:ok done:ok"
	const retry = "lookup -error-> lookup (event)"
	build := func(sessions []string) []string {
		var all []string
		for range 5 {
			all = append(all, sessions...)
		}
		all = append(all, failed)
		return genMoves(mustBuild(t, DefaultOptions(), ReadOptions{}, strInput("log", sessionsJSONL(all...))))
	}
	if got := build(base); !slices.Contains(got, retry) {
		t.Errorf("generalised %q, want %q among them", got, retry)
	}
	// Only one other label retries after an error: no pattern of the event.
	one := append([]string{}, base[:5]...)
	one = append(one, "act:ok done:ok", "act:error done:ok")
	if got := build(one); slices.Contains(got, retry) {
		t.Errorf("one label's retries: generalised %q, want no %q", got, retry)
	}
	// The lookup never repeats: a retry would invent a repeat.
	norep := append([]string{"lookup:ok act:ok done:ok"}, base[1:]...)
	for _, g := range build(norep) {
		if strings.HasPrefix(g, "lookup -error-> lookup") {
			t.Errorf("generalised %q for a label that never repeats", g)
		}
	}
}

// TestRunCaps: a label's cap is its longest run, raised to where its runs,
// fitted as geometric, make a longer one rarer than RunTail; a label never
// repeated keeps 1.
func TestRunCaps(t *testing.T) {
	mk := func(labels ...uint32) variant {
		var mvs []move
		for _, l := range labels {
			mvs = append(mvs, mkMove(0, l))
		}
		return variant{moves: mvs, count: 1}
	}
	// Label 1: runs of 1, 2 and 3 (q = 3/6): 0.5^c <= 0.001 needs c = 10.
	// Label 2: single visits only. Label 3: ten runs of 1 and one of 2
	// (q = 1/12): the fit gives 3, one more than the longest run.
	vars := []variant{mk(1, 2, 1, 1, 2, 1, 1, 1)}
	for range 10 {
		vars = append(vars, mk(3, 2))
	}
	vars = append(vars, mk(3, 3))
	caps := runCaps(vars, RunTail)
	for l, want := range map[uint32]int{1: 10, 2: 1, 3: 3} {
		if caps[l] != want {
			t.Errorf("label %d: cap %d, want %d", l, caps[l], want)
		}
	}
}
