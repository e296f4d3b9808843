package serve

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// benchFixture is a model, a policy and the step bodies of one legal
// session through them. cmd's BenchmarkServe drives the same sessions
// through the whole process over loopback.
type benchFixture struct {
	model, policy string
	bodies        []string
}

// benchFixtures are the guard fixture (states, loop caps and a watchdog)
// and the slots fixture (required slots with patterns, rule conditions and
// instructions in every state, steps that carry slots).
var benchFixtures = map[string]benchFixture{
	"returns": {fixtureModel, fixturePolicy, []string{
		`{"event":"","next":"agent_msg"}`, `{"event":"agent","next":"find_user_id_by_email"}`, `{"event":"ok","next":"get_order_details"}`,
		`{"event":"ok","next":"get_order_details"}`, `{"event":"ok","next":"return_delivered_order_items"}`, `{"event":"ok","next":"agent_msg"}`,
		`{"event":"agent","next":"__end__"}`,
	}},
	"slots": {"../guard/testdata/slots.json", "../guard/testdata/slots.policy.json", []string{
		`{"event":"","next":"greet"}`,
		`{"event":"ok","next":"collecting_info"}`,
		`{"event":"ok","next":"confirming","slots":{"order_id":"AB12345678","reason":"too small"}}`,
		`{"event":"confirmed","next":"refund","slots":{"amount":12}}`,
		`{"event":"ok","next":"__end__"}`,
	}},
}

// BenchmarkServeHandler measures the step route's handler alone (routing,
// decoding, the guard, the decision log, encoding) without sockets, over
// 2,000 sessions of each fixture. Its allocations include the test's
// http.NewRequest; run it as
//
//	go test ./automaton/serve -run '^$' -bench BenchmarkServeHandler -benchmem -count 5
func BenchmarkServeHandler(b *testing.B) {
	for _, name := range []string{"returns", "slots"} {
		b.Run("fixture="+name, func(b *testing.B) { benchServeHandler(b, benchFixtures[name]) })
	}
}

func benchServeHandler(b *testing.B, fx benchFixture) {
	m, p, err := LoadFiles(fx.model, fx.policy)
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(m, p, Config{MaxSessions: 100000, History: 16, Log: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	const sessions = 2000
	bodies := fx.bodies
	paths := make([]string, sessions)
	for i := range paths {
		paths[i] = fmt.Sprintf("/v1/sessions/h-%d/steps", i)
	}
	w := &discardResponse{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		round := i / (sessions * len(bodies))
		path := paths[i%sessions]
		if round > 0 {
			path = fmt.Sprintf("/v1/sessions/h-%d-%d/steps", i%sessions, round)
		}
		r, _ := http.NewRequest("POST", path, strings.NewReader(bodies[i/sessions%len(bodies)]))
		clear(w.h)
		w.code = 0
		h.ServeHTTP(w, r)
		if w.code != 200 {
			b.Fatalf("status %d", w.code)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	s.Close()
}

type discardResponse struct {
	h    http.Header
	code int
}

func (d *discardResponse) Header() http.Header { return d.h }
func (d *discardResponse) Write(p []byte) (int, error) {
	if d.code == 0 {
		d.code = http.StatusOK // as net/http does
	}
	return len(p), nil
}
func (d *discardResponse) WriteHeader(code int) { d.code = code }
