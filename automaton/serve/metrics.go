package serve

import (
	"bytes"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fsmine/fsmine/automaton/guard"
)

// latencyBounds are the upper bounds, in seconds, of the decision latency
// histogram's buckets.
var latencyBounds = []float64{0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}

// statusCodes are the HTTP statuses the service answers with, in the order
// /metrics lists them; any other is counted as code="other".
var statusCodes = []int{200, 204, 400, 401, 403, 404, 405, 408, 413, 500, 503}

// metrics counts what the service did, for /metrics. All fields are updated
// atomically.
type metrics struct {
	decisions [2][]atomic.Int64 // [allowed][reason index]
	// generalized counts the decisions on steps along a transition the
	// miner generalised, [allowed]
	generalized [2]atomic.Int64
	buckets     []atomic.Int64 // len(latencyBounds)+1, the last is +Inf
	latSum      atomic.Int64   // nanoseconds
	latCount    atomic.Int64
	responses   []atomic.Int64 // by statusCodes index, and the last for any other
	reloadsOK   atomic.Int64
	reloadsKO   atomic.Int64
}

func newMetrics() *metrics {
	m := &metrics{
		buckets:   make([]atomic.Int64, len(latencyBounds)+1),
		responses: make([]atomic.Int64, len(statusCodes)+1),
	}
	for i := range m.decisions {
		m.decisions[i] = make([]atomic.Int64, len(guard.Reasons))
	}
	return m
}

func reasonIndex(r string) int {
	for i, x := range guard.Reasons {
		if x == r {
			return i
		}
	}
	return 0
}

// decision counts one decision and how long the request took.
func (m *metrics) decision(d *guard.Decision, took time.Duration) {
	a := 0
	if d.Allowed {
		a = 1
	}
	m.decisions[a][reasonIndex(d.Reason)].Add(1)
	if d.Generalized {
		m.generalized[a].Add(1)
	}
	s := took.Seconds()
	i := 0
	for i < len(latencyBounds) && s > latencyBounds[i] {
		i++
	}
	m.buckets[i].Add(1)
	m.latSum.Add(int64(took))
	m.latCount.Add(1)
}

func (m *metrics) response(code int) {
	for i, c := range statusCodes {
		if c == code {
			m.responses[i].Add(1)
			return
		}
	}
	m.responses[len(statusCodes)].Add(1)
}

// write renders the metrics in the Prometheus text exposition format
// (version 0.0.4), families and series in a fixed order.
func (m *metrics) write(b *bytes.Buffer, g *guard.Guard, info *ModelInfo, log *decisionLog) {
	family := func(name, typ, help string) {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	family("fsmine_guard_decisions_total", "counter", "Decisions by verdict and reason (allowed with a reason: a deviation in monitor mode).")
	for _, allowed := range []int{1, 0} {
		for ri, reason := range guard.Reasons {
			if allowed == 0 && reason == guard.ReasonNone {
				continue
			}
			fmt.Fprintf(b, "fsmine_guard_decisions_total{allowed=%q,reason=%q} %d\n", strconv.FormatBool(allowed == 1), reason, m.decisions[allowed][ri].Load())
		}
	}
	family("fsmine_guard_generalized_steps_total", "counter", "Decisions on steps along a transition the miner generalised (no session took it), by verdict.")
	for _, allowed := range []int{1, 0} {
		fmt.Fprintf(b, "fsmine_guard_generalized_steps_total{allowed=%q} %d\n", strconv.FormatBool(allowed == 1), m.generalized[allowed].Load())
	}
	family("fsmine_guard_decision_duration_seconds", "histogram", "Time from receiving a step request to having written its answer.")
	var cum int64
	for i, bound := range latencyBounds {
		cum += m.buckets[i].Load()
		fmt.Fprintf(b, "fsmine_guard_decision_duration_seconds_bucket{le=%q} %d\n", strconv.FormatFloat(bound, 'g', -1, 64), cum)
	}
	cum += m.buckets[len(latencyBounds)].Load()
	fmt.Fprintf(b, "fsmine_guard_decision_duration_seconds_bucket{le=\"+Inf\"} %d\n", cum)
	fmt.Fprintf(b, "fsmine_guard_decision_duration_seconds_sum %s\n", strconv.FormatFloat(time.Duration(m.latSum.Load()).Seconds(), 'g', -1, 64))
	fmt.Fprintf(b, "fsmine_guard_decision_duration_seconds_count %d\n", m.latCount.Load())

	st := g.Stats()
	family("fsmine_guard_sessions", "gauge", "Live sessions.")
	fmt.Fprintf(b, "fsmine_guard_sessions %d\n", st.Live)
	family("fsmine_guard_sessions_started_total", "counter", "Sessions started.")
	fmt.Fprintf(b, "fsmine_guard_sessions_started_total %d\n", st.Created)
	family("fsmine_guard_sessions_closed_total", "counter", "Sessions closed, by cause.")
	for _, c := range []struct {
		cause string
		n     int64
	}{{"deleted", st.Ended}, {"evicted", st.Evicted}, {"expired", st.Expired}, {"reload", st.Dropped}} {
		fmt.Fprintf(b, "fsmine_guard_sessions_closed_total{cause=%q} %d\n", c.cause, c.n)
	}

	family("fsmine_guard_model_info", "gauge", "The model in force.")
	fmt.Fprintf(b, "fsmine_guard_model_info{version=%q,digest=%q} 1\n", strconv.Itoa(info.Version), info.Digest)
	family("fsmine_guard_model_reloads_total", "counter", "Model reloads, by result.")
	fmt.Fprintf(b, "fsmine_guard_model_reloads_total{result=\"error\"} %d\n", m.reloadsKO.Load())
	fmt.Fprintf(b, "fsmine_guard_model_reloads_total{result=\"ok\"} %d\n", m.reloadsOK.Load())

	family("fsmine_guard_http_responses_total", "counter", "HTTP responses, by status code.")
	for i, c := range statusCodes {
		fmt.Fprintf(b, "fsmine_guard_http_responses_total{code=\"%d\"} %d\n", c, m.responses[i].Load())
	}
	fmt.Fprintf(b, "fsmine_guard_http_responses_total{code=\"other\"} %d\n", m.responses[len(statusCodes)].Load())
	if log != nil {
		family("fsmine_guard_log_lines_total", "counter", "Lines written to the decision log.")
		fmt.Fprintf(b, "fsmine_guard_log_lines_total %d\n", log.lines.Load())
		failing, _, lost := log.health()
		family("fsmine_guard_log_errors_total", "counter", "Lines that could not be written to the decision log.")
		fmt.Fprintf(b, "fsmine_guard_log_errors_total %d\n", lost)
		family("fsmine_guard_log_failing", "gauge", "1 while the decision log's last write failed, else 0.")
		f := 0
		if failing {
			f = 1
		}
		fmt.Fprintf(b, "fsmine_guard_log_failing %d\n", f)
	}
}
