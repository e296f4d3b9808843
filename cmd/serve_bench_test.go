package cmd

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsmine/fsmine/automaton"
)

// benchFlow is a legal returns session through the fixture model.
var benchFlow = [][2]string{
	{"", "agent_msg"}, {"agent", "find_user_id_by_email"}, {"ok", "get_order_details"},
	{"ok", "get_order_details"}, {"ok", "return_delivered_order_items"}, {"ok", "agent_msg"}, {"agent", "__end__"},
}

// BenchmarkServe measures the real service over loopback HTTP with the
// decision log on: rate=N sends N steps a second (open loop: requests leave
// on schedule whether or not earlier ones are answered, evenly spaced over 64
// workers and connections); rate=max keeps 64 requests in flight. It reports the rate
// achieved, the client-side latency percentiles, and the CPU time the
// process spent per decision (client and service share the process and the
// machine's CPUs, so this counts both), and server-p99-µs: the upper bound
// of the service's own latency histogram bucket that holds its 99th
// percentile (the time from reading a request to having written its answer).
// Run it as
//
//	go test ./cmd -run '^$' -bench 'BenchmarkServe$' -benchtime 20000x -count 5
//
// With FSMINE_SERVE_URL set (for example to http://127.0.0.1:8700) it drives
// that service, started separately with the fixture model and policy
// (cmd/../automaton/testdata/guard/returns*.json), instead of its own; then
// cpu-µs/decision counts the clients only.
func BenchmarkServe(b *testing.B) {
	for _, rate := range []int{1000, 5000, 0} {
		name := fmt.Sprintf("rate=%d", rate)
		if rate == 0 {
			name = "rate=max"
		}
		b.Run(name, func(b *testing.B) { benchServe(b, rate) })
	}
}

func benchServe(b *testing.B, rate int) {
	const workers, sessions = 64, 2000
	var ls *liveServer
	base := os.Getenv("FSMINE_SERVE_URL")
	if base == "" {
		ls = startServe(b, serveOptions{maxSessions: 100000})
		base = ls.url
	}
	// sessions are named per run so that runs against one external service
	// do not meet each other's sessions
	run := time.Now().UnixNano()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers}}
	// request i is step i/sessions%7 of session i%sessions in round
	// i/(sessions*7): a session's steps are sessions requests apart, so
	// they never overtake one another
	bodies := make([][]byte, len(benchFlow))
	for i, s := range benchFlow {
		bodies[i] = []byte(fmt.Sprintf(`{"event":%q,"next":%q}`, s[0], s[1]))
	}
	lat := make([]time.Duration, b.N)
	var (
		mu     sync.Mutex
		denied int
		failed error
	)
	// rate=N: worker w sends requests w, w+workers, ... each at its own time
	// t0 + i/N, so that requests leave evenly spaced, not in bursts;
	// rate=max: the workers take the next request as soon as they are free
	var (
		next     atomic.Int64
		t0       time.Time
		interval time.Duration
	)
	if rate > 0 {
		interval = time.Second / time.Duration(rate)
	}
	do := func(i int) {
		url := fmt.Sprintf("%s/v1/sessions/bench-%d-%d-%d/steps", base, run, i%sessions, i/(sessions*len(benchFlow)))
		body := bodies[i/sessions%len(benchFlow)]
		start := time.Now()
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err == nil {
			var data []byte
			data, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != 200 {
				err = fmt.Errorf("status %d: %s", resp.StatusCode, data)
			}
			if err == nil && !bytes.Contains(data, []byte(`"allowed":true`)) {
				mu.Lock()
				denied++
				mu.Unlock()
			}
		}
		lat[i] = time.Since(start)
		if err != nil {
			mu.Lock()
			failed = err
			mu.Unlock()
		}
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if rate <= 0 {
				for i := int(next.Add(1)) - 1; i < b.N; i = int(next.Add(1)) - 1 {
					do(i)
				}
				return
			}
			for i := w; i < b.N; i += workers {
				if d := time.Until(t0.Add(time.Duration(i) * interval)); d > 0 {
					time.Sleep(d)
				}
				do(i)
			}
		}()
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	t0 = time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(t0)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	if failed != nil {
		b.Fatal(failed)
	}
	if denied > 0 {
		b.Fatalf("%d of %d legal steps denied", denied, b.N)
	}
	serverP99 := serverP99(b, client, base)
	if ls != nil {
		if err := ls.stop(); err != nil {
			b.Fatal(err)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds())
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "decisions/s")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(pct(0.999), "p999-µs")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/decision")
	b.ReportMetric(serverP99, "server-p99-µs")
}

// serverP99 reads the service's decision latency histogram and returns the
// upper bound, in µs, of the bucket holding its 99th percentile.
func serverP99(b *testing.B, client *http.Client, base string) float64 {
	resp, err := client.Get(base + "/metrics")
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

// BenchmarkServeHandler measures the step route's handler alone (routing,
// decoding, the guard, the decision log, encoding) without sockets.
func BenchmarkServeHandler(b *testing.B) {
	m, p, err := loadServeInputs(fixtureModel, fixturePolicy)
	if err != nil {
		b.Fatal(err)
	}
	dlog := newDecisionLog(io.Discard, nil, io.Discard)
	s, err := newServer(fixtureModel, fixturePolicy, m, p, "", dlog, io.Discard, automatonOptions())
	if err != nil {
		b.Fatal(err)
	}
	h := s.handler()
	const sessions = 2000
	bodies := make([]string, len(benchFlow))
	for i, st := range benchFlow {
		bodies[i] = fmt.Sprintf(`{"event":%q,"next":%q}`, st[0], st[1])
	}
	paths := make([]string, sessions)
	for i := range paths {
		paths[i] = fmt.Sprintf("/v1/sessions/h-%d/steps", i)
	}
	w := &discardResponse{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		round := i / (sessions * len(benchFlow))
		path := paths[i%sessions]
		if round > 0 {
			path = fmt.Sprintf("/v1/sessions/h-%d-%d/steps", i%sessions, round)
		}
		r, _ := http.NewRequest("POST", path, strings.NewReader(bodies[i/sessions%len(benchFlow)]))
		clear(w.h)
		w.code = 0
		h.ServeHTTP(w, r)
		if w.code != 200 {
			b.Fatalf("status %d", w.code)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	dlog.close()
}

func automatonOptions() automaton.GuardOptions { return automaton.GuardOptions{MaxSessions: 100000} }

type discardResponse struct {
	h    http.Header
	code int
}

func (d *discardResponse) Header() http.Header         { return d.h }
func (d *discardResponse) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardResponse) WriteHeader(code int)        { d.code = code }
