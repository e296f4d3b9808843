package serve

import (
	"net/http"
	"net/http/httptest"
	"strings"
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

// TestMetricsCountEveryAnswer: every status the service answers with has a
// series, and one it does not know is counted as "other". /metrics left out
// 403 (a foreign request), 408 (a slow body) and 503 (after Close, or the
// decision log failing), which then went uncounted.
func TestMetricsCountEveryAnswer(t *testing.T) {
	s := fixtureServer(t, Config{})
	do := func(method, path, origin string) {
		r := httptest.NewRequest(method, path, strings.NewReader(`{"next":"agent_msg"}`))
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		s.Handler().ServeHTTP(httptest.NewRecorder(), r)
	}
	do("GET", "/v1/model", "http://evil.example") // 403
	s.metrics.response(http.StatusRequestTimeout) // as handleStep counts a slow body, which wants a connection
	s.metrics.response(http.StatusTeapot)
	s.Close()
	do("POST", "/v1/sessions/a/steps", "") // 503
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		`fsmine_guard_http_responses_total{code="403"} 1`,
		`fsmine_guard_http_responses_total{code="408"} 1`,
		`fsmine_guard_http_responses_total{code="503"} 1`,
		`fsmine_guard_http_responses_total{code="other"} 1`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
