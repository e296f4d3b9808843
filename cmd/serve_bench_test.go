package cmd

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/serve"
	"github.com/fsmine/fsmine/internal/atomicfile"
)

// benchFlow is a legal returns session through the fixture model.
var benchFlow = [][2]string{
	{"", "agent_msg"}, {"agent", "find_user_id_by_email"}, {"ok", "get_order_details"},
	{"ok", "get_order_details"}, {"ok", "return_delivered_order_items"}, {"ok", "agent_msg"}, {"agent", "__end__"},
}

// serveFixture is a model, a policy and the step bodies of one legal
// session through them, for the serve benchmarks.
type serveFixture struct {
	model, policy string
	bodies        [][]byte
	// byValues, for a conditioned model, are the values the sessions'
	// first steps name in the X-Fsmine-By header, round-robin.
	byValues []string
}

// returnsFixture is the guard fixture: states, loop caps and a watchdog.
func returnsFixture() serveFixture {
	f := serveFixture{model: fixtureModel, policy: fixturePolicy}
	for _, s := range benchFlow {
		f.bodies = append(f.bodies, []byte(fmt.Sprintf(`{"event":%q,"next":%q}`, s[0], s[1])))
	}
	return f
}

// slotsFixture is the slots fixture: required slots with patterns, rule
// conditions and instructions in every state, steps that carry slots.
func slotsFixture() serveFixture {
	return serveFixture{model: slotsFixtureModel, policy: slotsFixturePolicy, bodies: [][]byte{
		[]byte(`{"event":"","next":"greet"}`),
		[]byte(`{"event":"ok","next":"collecting_info"}`),
		[]byte(`{"event":"ok","next":"confirming","slots":{"order_id":"AB12345678","reason":"too small"}}`),
		[]byte(`{"event":"confirmed","next":"refund","slots":{"amount":12}}`),
		[]byte(`{"event":"ok","next":"__end__"}`),
	}}
}

const (
	slotsFixtureModel  = "../automaton/guard/testdata/slots.json"
	slotsFixturePolicy = "../automaton/guard/testdata/slots.policy.json"
)

// BenchmarkServe measures the real service over loopback HTTP with the
// decision log on: rate=N sends N steps a second, open loop: request i is due
// at t0 + i/N whether or not earlier ones are answered, and its latency runs
// from that intended time to its answer's last byte, so that a stall counts
// against every request it delays (no coordinated omission). Requests go
// round-robin over 64 keep-alive connections, one in flight on each;
// rate=max keeps all 64 busy and times each request from its send. The load
// generator (loadConn) writes requests built beforehand and parses answers
// minimally, so that it takes little from the service's CPUs.
//
// It reports the rate achieved; the latency percentiles; send-lag-p99-µs,
// the 99th percentile of how late the generator sent a request (its timers
// and a busy connection), which is part of the latency; the CPU time the
// process spent per decision (client and service share the process and the
// machine's CPUs, so this counts both); and server-p99-µs: the upper bound of
// the service's own latency histogram bucket that holds its 99th percentile
// (from reading a request to having written its answer). Every answer must be
// a 200 that allows the step (every step is legal). Run it as
//
//	go test ./cmd -run '^$' -bench 'BenchmarkServe$' -benchtime 20000x -count 5
//
// With FSMINE_SERVE_URL set (for example to http://127.0.0.1:8700) it drives
// that service, started separately with the fixture model and policy
// (cmd/../automaton/guard/testdata/returns*.json), instead of its own; then
// cpu-µs/decision counts the clients only.
func BenchmarkServe(b *testing.B) {
	for _, rate := range []int{1000, 5000, 0} {
		name := fmt.Sprintf("rate=%d", rate)
		if rate == 0 {
			name = "rate=max"
		}
		b.Run(name, func(b *testing.B) { benchServe(b, rate, returnsFixture()) })
	}
}

// BenchmarkServeBy is BenchmarkServe over the returns fixture conditioned
// on 100 values (each sub-map a copy of the fixture's map), every session
// naming one of them in the X-Fsmine-By header of its first step: the cost
// of picking a session's sub-map, against BenchmarkServe's.
func BenchmarkServeBy(b *testing.B) {
	m, err := automaton.Load(fixtureModel)
	if err != nil {
		b.Fatal(err)
	}
	fx := returnsFixture()
	m.By = &automaton.By{Field: "attrs.task", MinSessions: 1, Values: 100}
	for i := 0; i < 100; i++ {
		sm := automaton.NewSubMap(fmt.Sprintf("task-%03d", i), m)
		sm.Sessions = 1
		m.By.Maps = append(m.By.Maps, sm)
		fx.byValues = append(fx.byValues, sm.Value)
	}
	m.Digest = m.ComputeDigest()
	fx.model = filepath.Join(b.TempDir(), "by.json")
	if err := atomicfile.Write(fx.model, m.Write); err != nil {
		b.Fatal(err)
	}
	for _, rate := range []int{5000, 0} {
		name := fmt.Sprintf("rate=%d", rate)
		if rate == 0 {
			name = "rate=max"
		}
		b.Run(name, func(b *testing.B) { benchServe(b, rate, fx) })
	}
}

// BenchmarkServeSlots is BenchmarkServe over the slots fixture
// (automaton/guard/testdata/slots*.json): every state has instructions,
// one requires two slots with a pattern, one transition has three
// conditions, and two of every five steps carry slots. With
// FSMINE_SERVE_URL, the service must enforce that fixture.
func BenchmarkServeSlots(b *testing.B) {
	for _, rate := range []int{5000, 0} {
		name := fmt.Sprintf("rate=%d", rate)
		if rate == 0 {
			name = "rate=max"
		}
		b.Run(name, func(b *testing.B) { benchServe(b, rate, slotsFixture()) })
	}
}

func benchServe(b *testing.B, rate int, fx serveFixture) {
	const conns, sessions = 64, 2000
	var ls *liveServer
	base := os.Getenv("FSMINE_SERVE_URL")
	if base == "" {
		ls = startServe(b, serveOptions{model: fx.model, policy: fx.policy, cfg: serve.Config{MaxSessions: 100000}})
		base = ls.url
	}
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	ld := newServeLoad(serveRequests(u.Host, fx, b.N, sessions), rate, conns)
	lcs := make([]*loadConn, conns)
	for w := range lcs {
		if lcs[w], err = dialLoad(base); err != nil {
			b.Fatal(err)
		}
	}
	start := make(chan struct{})
	var readers sync.WaitGroup
	for _, lc := range lcs {
		ld.free <- lc
		ld.pending[lc] = make(chan int, 1)
		readers.Add(1)
		go func() {
			defer readers.Done()
			<-start
			if rate <= 0 {
				ld.sendOnAnswer(lc)
			} else {
				ld.readAnswers(lc)
			}
		}()
	}
	pc, err := newPacer()
	if err != nil {
		b.Fatal(err)
	}
	defer pc.Close()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	ld.t0 = time.Now()
	close(start)
	if rate > 0 {
		ld.pace(pc)
	}
	done := make(chan struct{})
	go func() { ld.answered.Wait(); close(done) }()
	select {
	case <-done:
	case <-ld.abort:
	}
	elapsed := time.Since(ld.t0)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	ld.stop() // what the readers still wait for is no answer
	for _, lc := range lcs {
		lc.Close()
	}
	readers.Wait()
	if ld.failed != nil {
		b.Fatal(ld.failed)
	}
	if n := ld.denied.Load(); n > 0 {
		b.Fatalf("%d of %d legal steps denied", n, b.N)
	}
	serverP99 := serverP99(b, base)
	if ls != nil {
		if err := ls.stop(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "decisions/s")
	b.ReportMetric(percentileµs(ld.lat, 0.50), "p50-µs")
	b.ReportMetric(percentileµs(ld.lat, 0.99), "p99-µs")
	b.ReportMetric(percentileµs(ld.lat, 0.999), "p999-µs")
	b.ReportMetric(percentileµs(ld.lag, 0.99), "send-lag-p99-µs")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/decision")
	b.ReportMetric(serverP99, "server-p99-µs")
}

// serveRequests builds benchServe's n requests to host, round-robin over
// sessions sessions of fx. Request i is step i/sessions%len(fx.bodies) of
// session i%sessions in round i/(sessions*len(fx.bodies)): a session's steps
// are sessions requests apart, so they never overtake one another; sessions
// are named per run so that runs against one external service do not meet
// each other's sessions.
func serveRequests(host string, fx serveFixture, n, sessions int) [][]byte {
	run := time.Now().UnixNano()
	bodies := fx.bodies
	reqs := make([][]byte, n)
	for i := range reqs {
		id := fmt.Sprintf("bench-%d-%d-%d", run, i%sessions, i/(sessions*len(bodies)))
		reqs[i] = stepRequestBytes(host, id, bodies[i/sessions%len(bodies)])
		if fx.byValues != nil && i/sessions%len(bodies) == 0 {
			// a session's first step names its value
			v := fx.byValues[i%sessions%len(fx.byValues)]
			reqs[i] = bytes.Replace(reqs[i], []byte("\r\nContent-Type:"), []byte("\r\n"+serve.ByHeader+": "+v+"\r\nContent-Type:"), 1)
		}
	}
	return reqs
}

// serveLoad is one run of benchServe's load generator: the requests, what
// each one measured, and the state its goroutines share.
//
// rate=N: a pacer (pace) sends each request when it is due on a free
// connection, whose reader (readAnswers) then waits for the answer;
// rate=max: each connection (sendOnAnswer) sends the next request as soon
// as it has its answer.
type serveLoad struct {
	reqs   [][]byte
	lat    []time.Duration // intended send -> answer read
	lag    []time.Duration // intended send -> sent
	denied atomic.Int64

	t0       time.Time     // when request 0 is due; set before the goroutines start
	interval time.Duration // between due times; 0 for rate=max
	next     atomic.Int64  // rate=max: the next request to send
	answered sync.WaitGroup
	free     chan *loadConn         // rate=N: connections with nothing in flight
	pending  map[*loadConn]chan int // rate=N: the request in flight on each connection

	abort    chan struct{} // closed on the first failure, and at the end
	stopOnce sync.Once
	mu       sync.Mutex
	failed   error
}

// newServeLoad prepares to send reqs at rate a second (0 for as fast as
// conns connections allow); the caller puts the connections in free and
// pending.
func newServeLoad(reqs [][]byte, rate, conns int) *serveLoad {
	ld := &serveLoad{
		reqs:    reqs,
		lat:     make([]time.Duration, len(reqs)),
		lag:     make([]time.Duration, len(reqs)),
		free:    make(chan *loadConn, conns),
		pending: make(map[*loadConn]chan int, conns),
		abort:   make(chan struct{}),
	}
	if rate > 0 {
		ld.interval = time.Second / time.Duration(rate)
	}
	ld.answered.Add(len(reqs))
	return ld
}

// check counts request i's answer as denied unless it allows the step; an
// answer other than 200 is an error.
func (ld *serveLoad) check(i int, status int, body []byte) error {
	if status != 200 {
		return fmt.Errorf("request %d: status %d: %s", i, status, body)
	}
	if !bytes.Contains(body, []byte(`"allowed":true`)) {
		ld.denied.Add(1)
	}
	return nil
}

// stop closes abort, once.
func (ld *serveLoad) stop() { ld.stopOnce.Do(func() { close(ld.abort) }) }

// fail records err if it is the first failure and stops the run.
func (ld *serveLoad) fail(err error) {
	ld.mu.Lock()
	if ld.failed == nil {
		ld.failed = err
	}
	ld.mu.Unlock()
	ld.stop()
}

// sendOnAnswer is a rate=max connection: it takes the next request, sends
// it on lc and times it from its send to its answer, until none are left.
func (ld *serveLoad) sendOnAnswer(lc *loadConn) {
	n := len(ld.reqs)
	for i := int(ld.next.Add(1)) - 1; i < n; i = int(ld.next.Add(1)) - 1 {
		sent := time.Now()
		status, body, err := lc.roundTrip(ld.reqs[i])
		ld.lat[i] = time.Since(sent)
		if err == nil {
			err = ld.check(i, status, body)
		}
		if err != nil {
			ld.fail(err)
			return
		}
		ld.answered.Done()
	}
}

// readAnswers is a rate=N connection's reader: it reads each answer on lc,
// times it from its request's due time and frees lc for the pacer.
func (ld *serveLoad) readAnswers(lc *loadConn) {
	// the request is pending before it is sent, so the reader can wait
	// for its answer already
	for {
		status, body, err := lc.read()
		if err != nil {
			select {
			case <-ld.abort: // the benchmark is over
			default:
				ld.fail(err)
			}
			return
		}
		var i int
		select {
		case i = <-ld.pending[lc]:
		case <-ld.abort:
			return
		}
		ld.lat[i] = time.Since(ld.t0.Add(time.Duration(i) * ld.interval))
		if err := ld.check(i, status, body); err != nil {
			ld.fail(err)
			return
		}
		ld.free <- lc
		ld.answered.Done()
	}
}

// pace sends each request when it is due, on a free connection, and
// records how late it went out.
func (ld *serveLoad) pace(pc *pacer) {
	for i := range ld.reqs {
		due := ld.t0.Add(time.Duration(i) * ld.interval)
		if err := pc.sleepUntil(due); err != nil {
			ld.fail(err)
			return
		}
		var lc *loadConn
		select {
		case lc = <-ld.free:
		case <-ld.abort:
			return
		}
		ld.lag[i] = time.Since(due)
		ld.pending[lc] <- i
		if err := lc.send(ld.reqs[i]); err != nil {
			ld.fail(err)
			return
		}
	}
}

// percentileµs sorts d and returns its p-th quantile (0 < p < 1) in µs.
func percentileµs(d []time.Duration, p float64) float64 {
	slices.Sort(d)
	return float64(d[min(len(d)-1, int(p*float64(len(d))))].Microseconds())
}

// serverP99 reads the service's decision latency histogram and returns the
// upper bound, in µs, of the bucket holding its 99th percentile.
func serverP99(b *testing.B, base string) float64 {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	var bounds []float64
	var cum []float64
	for _, line := range strings.Split(string(text), "\n") {
		const prefix = `fsmine_guard_decision_duration_seconds_bucket{le="`
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		rest := line[len(prefix):]
		q := strings.IndexByte(rest, '"')
		le, n := rest[:q], rest[strings.LastIndexByte(rest, ' ')+1:]
		bound := math.Inf(1)
		if le != "+Inf" {
			bound, _ = strconv.ParseFloat(le, 64)
		}
		c, _ := strconv.ParseFloat(n, 64)
		bounds, cum = append(bounds, bound), append(cum, c)
	}
	if len(cum) == 0 || cum[len(cum)-1] == 0 {
		b.Fatal("no latency histogram in /metrics")
	}
	total := cum[len(cum)-1]
	for i, c := range cum {
		if c >= 0.99*total {
			return bounds[i] * 1e6
		}
	}
	return math.Inf(1)
}

// cpuTime is the CPU time (user and system) this process has used: the
// service and its clients together.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
