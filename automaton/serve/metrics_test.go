package serve

import (
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/guard"
)

// TestMetricsCountConstraintDenials: a step denied by a constraint or an
// argument rule is counted under its reason, not folded into the reason-less series (which
// the exposition leaves out for denials, so such steps went uncounted).
func TestMetricsCountConstraintDenials(t *testing.T) {
	m := newMetrics()
	for _, r := range []string{guard.ReasonMissingPrerequisite, guard.ReasonOnceOnly, guard.ReasonNotBoth, guard.ReasonRerun,
		automaton.KindUnseenValue, automaton.KindValueWithoutSource} {
		i := reasonIndex(r)
		if i == 0 {
			t.Errorf("reason %q has no series of its own", r)
			continue
		}
		m.decision(&guard.Decision{Reason: r}, 0)
		if got := m.decisions[0][i].Load(); got != 1 {
			t.Errorf("reason %q: %d denials counted, want 1", r, got)
		}
	}
}
