package mine

import (
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
