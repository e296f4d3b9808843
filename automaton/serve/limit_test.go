package serve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsmine/fsmine/automaton/serve/servetest"
)

// failAfter is how long a test waits for what must happen before it gives
// up: a guard against hanging, not a measurement.
const failAfter = 20 * time.Second

// slowBody opens a loopback connection to addr and sends a step request's
// headers and the first byte of a body it never finishes.
func slowBody(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /v1/sessions/slow/steps HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", addr)
	return c
}

// closedByServer reads c until the server closes it, failing after
// failAfter.
func closedByServer(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(failAfter))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server kept a connection that trickles its body for %v", failAfter)
	}
}

// serveLoopback runs s.Serve on a loopback port until the test ends and
// returns the service's base URL.
func serveLoopback(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, s, ln)
	return "http://" + ln.Addr().String()
}

// serveOn runs s.Serve on ln until the test ends.
func serveOn(t *testing.T, s *Server, ln net.Listener) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		s.Close()
	})
}

// TestServeCutsSlowBodies: a client that sends its body a byte at a time,
// or not at all, is cut off after ReadTimeout; with MaxConns such clients
// cannot keep others out for longer. Before the fix only the headers had a
// deadline, and every trickling client held a connection (a file
// descriptor) for as long as it liked.
func TestServeCutsSlowBodies(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ReadTimeout, cfg.MaxConns = 300*time.Millisecond, 2
	s := fixtureServer(t, cfg)
	base := serveLoopback(t, s)
	addr := strings.TrimPrefix(base, "http://")
	slow := []net.Conn{slowBody(t, addr), slowBody(t, addr)}

	// Both slots are taken; this request is served once a slow client
	// has been cut.
	resp, err := (&http.Client{Timeout: failAfter}).Post(base+"/v1/sessions/fast/steps", "application/json", strings.NewReader(`{"next":"agent_msg"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the request after the slow ones: status %d, want 200", resp.StatusCode)
	}
	for _, c := range slow {
		closedByServer(t, c)
	}
}

// TestServeCutsNonReaders: a client that never reads its answers (its
// connection's writes block once the socket's buffers are full) is cut at
// WriteTimeout; with MaxConns two such clients cannot keep others out for
// longer. Before the fix Serve had no write timeout, and /healthz went
// unanswered for as long as the two clients stayed.
func TestServeCutsNonReaders(t *testing.T) {
	cfg := DefaultConfig()
	cfg.WriteTimeout, cfg.MaxConns = 300*time.Millisecond, 2
	s := fixtureServer(t, cfg)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// the first two connections the service accepts are full: their
	// writes wait for their deadline
	ln := &fullListener{Listener: inner, n: 2, blocked: make(chan struct{}, 2)}
	serveOn(t, s, ln)
	addr := inner.Addr().String()
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
	}
	for range 2 {
		<-ln.blocked
	}
	resp, err := (&http.Client{Timeout: failAfter}).Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("/healthz while two clients do not read: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz while two clients do not read: status %d, want 200", resp.StatusCode)
	}
}

// fullListener makes its first n connections full: a write waits until
// the write deadline passes or the connection is closed, as a write to a
// client that does not read does once the socket's buffers are full. Each
// such write sends on blocked once.
type fullListener struct {
	net.Listener
	n       int
	blocked chan struct{}
	mu      sync.Mutex
	taken   int
}

func (l *fullListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.taken >= l.n {
		return c, nil
	}
	l.taken++
	return &fullConn{Conn: c, blocked: l.blocked, changed: make(chan struct{}), closed: make(chan struct{})}, nil
}

type fullConn struct {
	net.Conn
	blocked   chan struct{}
	mu        sync.Mutex
	deadline  time.Time
	changed   chan struct{} // closed and replaced when the deadline changes
	closed    chan struct{}
	closeOnce sync.Once
	told      sync.Once
}

func (c *fullConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	close(c.changed)
	c.changed = make(chan struct{})
	return c.Conn.SetWriteDeadline(t)
}

func (c *fullConn) SetDeadline(t time.Time) error {
	c.SetWriteDeadline(t)
	return c.Conn.SetDeadline(t)
}

func (c *fullConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

func (c *fullConn) Write(p []byte) (int, error) {
	c.told.Do(func() { c.blocked <- struct{}{} })
	for {
		c.mu.Lock()
		d, changed := c.deadline, c.changed
		c.mu.Unlock()
		var expired <-chan time.Time
		if !d.IsZero() {
			timer := time.NewTimer(time.Until(d))
			defer timer.Stop()
			expired = timer.C
		}
		select {
		case <-expired:
			return 0, os.ErrDeadlineExceeded
		case <-changed:
		case <-c.closed:
			return 0, net.ErrClosed
		}
	}
}

// TestServeSlowBodyAnswer: a body that does not arrive within ReadTimeout
// gets 408, in words that do not give the connection's addresses.
func TestServeSlowBodyAnswer(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ReadTimeout = 200 * time.Millisecond
	s := fixtureServer(t, cfg)
	addr := strings.TrimPrefix(serveLoopback(t, s), "http://")
	c := slowBody(t, addr)
	c.SetReadDeadline(time.Now().Add(failAfter))
	got, _ := io.ReadAll(c)
	if !bytes.HasPrefix(got, []byte("HTTP/1.1 408 ")) || !bytes.Contains(got, []byte("did not arrive within the read timeout")) || bytes.Contains(got, []byte("127.0.0.1")) {
		t.Errorf("a trickling body got:\n%s", got)
	}
}

// TestLimitListener: past n connections, Accept waits until one of them
// is closed.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const n, clients = 3, 8
	l := newLimitListener(inner, n)
	defer l.Close()
	accepted := make(chan net.Conn, clients)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	for i := 0; i < clients; i++ {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	var held []net.Conn
	for i := 0; i < n; i++ {
		held = append(held, <-accepted)
	}
	// The accepting goroutine now waits for a slot, with n open.
	deadline := time.Now().Add(failAfter)
	for l.waiting.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("Accept did not wait for a slot")
		}
		runtime.Gosched()
	}
	if got := l.open.Load(); got != n {
		t.Fatalf("%d connections open while Accept waits, want %d", got, n)
	}
	if len(accepted) != 0 {
		t.Fatalf("a connection past the limit was accepted")
	}
	// Each close lets one more in.
	for i := n; i < clients; i++ {
		held[0].Close()
		held = append(held[1:], <-accepted)
		if got := l.open.Load(); got > n {
			t.Fatalf("%d connections open, want at most %d", got, n)
		}
	}
	for _, c := range held {
		c.Close()
	}
	if got := l.open.Load(); got != 0 {
		t.Errorf("%d connections open after all closed, want 0", got)
	}
}

// TestServeLogWritesEvictedSessions: a decision line waits for the
// session's next step, but no longer than the session lives. With no TTL,
// 50 one-step sessions and MaxSessions 10, the lines of the 40 evicted
// sessions are written while the service runs; before the fix every line
// was held until shutdown, so memory grew with the sessions and a kill lost
// them all.
func TestServeLogWritesEvictedSessions(t *testing.T) {
	ts := startTestServer(t, fixtureModel, fixturePolicy, Config{MaxSessions: 10})
	for i := 0; i < 50; i++ {
		if code, _, body := ts.do(t, "POST", fmt.Sprintf("/v1/sessions/s%02d/steps", i), `{"next":"agent_msg"}`, ""); code != 200 {
			t.Fatalf("step %d: %d %s", i, code, body)
		}
	}
	deadline := time.Now().Add(failAfter)
	var lines []string
	for {
		data := ts.log.String()
		lines = strings.Split(strings.TrimSpace(data), "\n")
		if len(data) > 0 && len(lines) >= 40 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d lines in the decision log while serving, want 40 (the evicted sessions')", len(lines))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i, line := range lines[:40] {
		if want := fmt.Sprintf(`{"session_id":"s%02d","step":0,"node":"agent_msg","event":""`, i); !strings.HasPrefix(line, want) {
			t.Errorf("line %d = %s, want it to start %s", i+1, line, want)
		}
	}
	if err := ts.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(ts.log.String(), "\n"); n != 50 {
		t.Errorf("%d lines after Close, want 50", n)
	}
}

func TestDecisionLogHeldBound(t *testing.T) {
	var buf bytes.Buffer
	l := newDecisionLog(&buf, nil, nil, 2)
	t0 := time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)
	d := func(session string, step int, node, event string) {
		l.decision(logMsg{session: session, step: step, node: node, event: event, ts: t0, allowed: true, state: node})
	}
	d("a", 0, "agent_msg", "")
	d("b", 0, "agent_msg", "")
	d("c", 0, "agent_msg", "")  // three held: a/0, the oldest, goes out
	d("b", 1, "find", "agent")  // completes b/0
	d("d", 0, "agent_msg", "")  // c/0 is now the oldest held
	for i := 0; i < 5000; i++ { // one-step sessions: held lines stay 2
		d(fmt.Sprintf("x%04d", i), 0, "agent_msg", "")
	}
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	sc := bufio.NewScanner(&buf)
	for sc.Scan() && len(got) < 4 {
		line := sc.Text()
		got = append(got, line[:strings.Index(line, `,"ts"`)])
	}
	want := []string{
		`{"session_id":"a","step":0,"node":"agent_msg","event":""`,
		`{"session_id":"b","step":0,"node":"agent_msg","event":"agent"`,
		`{"session_id":"c","step":0,"node":"agent_msg","event":""`,
		`{"session_id":"b","step":1,"node":"find","event":""`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("first lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := l.lines.Load(); n != 5000+5 {
		t.Errorf("lines = %d, want %d", n, 5000+5)
	}
	if len(l.order) > 2*2+1024+1 {
		t.Errorf("%d references to held lines kept for 2 held lines", len(l.order))
	}
}

func TestLogHoldAndSweep(t *testing.T) {
	tests := []struct {
		ttl, hold time.Duration
		wantHold  time.Duration
		wantEvery time.Duration
	}{
		{0, 0, 0, 0},
		{0, time.Minute, time.Minute, 30 * time.Second}, // --ttl 0 no longer holds lines forever
		{30 * time.Minute, 0, 30 * time.Minute, time.Minute},
		{30 * time.Minute, time.Minute, time.Minute, 30 * time.Second},
		{10 * time.Second, time.Minute, 10 * time.Second, 5 * time.Second},
		{time.Second, 0, time.Second, time.Second},
	}
	for _, tt := range tests {
		if got := logHold(tt.ttl, tt.hold); got != tt.wantHold {
			t.Errorf("logHold(%v, %v) = %v, want %v", tt.ttl, tt.hold, got, tt.wantHold)
		}
		if got := sweepEvery(tt.ttl, logHold(tt.ttl, tt.hold)); got != tt.wantEvery {
			t.Errorf("sweepEvery(%v, %v) = %v, want %v", tt.ttl, tt.hold, got, tt.wantEvery)
		}
	}
}

// TestServeShutdown: once ctx is done, Serve accepts no more connections
// but answers the request in flight, then returns nil; the step's line is
// in the log after Close.
func TestServeShutdown(t *testing.T) {
	m, p, err := LoadFiles(fixtureModel, fixturePolicy)
	if err != nil {
		t.Fatal(err)
	}
	var log servetest.Buffer
	cfg := DefaultConfig()
	cfg.Log = &log
	s, err := New(m, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	accepted := &inFlight{Listener: ln, waiting: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, accepted) }()
	defer cancel()

	// a request whose body has not all arrived when the service stops
	body := `{"next":"agent_msg"}`
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := fmt.Sprintf("POST /v1/sessions/late/steps HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body[:5])
	accepted.sent.Store(int64(len(head)))
	io.WriteString(c, head)
	// the request is in flight once the handler asks for the rest of its
	// body: a request whose header the server has not read when the
	// shutdown begins is dropped unanswered, as net/http does
	select {
	case <-accepted.waiting:
	case <-time.After(failAfter):
		t.Fatal("the handler never read the body")
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	deadline := time.Now().Add(failAfter)
	for {
		d, err := net.Dial("tcp", addr)
		if err != nil {
			break // the listener is closed: the shutdown has begun
		}
		d.Close()
		if time.Now().After(deadline) {
			t.Fatal("Serve still accepts connections after ctx is done")
		}
		runtime.Gosched()
	}
	if _, err := io.WriteString(c, body[5:]); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(failAfter))
	resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("the request in flight got no answer: %v", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(answer), `"session_id":"late","step":0,"allowed":true`) {
		t.Errorf("the request in flight: %d %s", resp.StatusCode, answer)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want nil after ctx is done", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := log.String(); !strings.HasPrefix(got, `{"session_id":"late","step":0,"node":"agent_msg","event":""`) {
		t.Errorf("log = %q, want the late step's line", got)
	}
	if st := s.Stats(); st.Decisions != 1 || st.LogLines != 1 {
		t.Errorf("Stats = %+v, want 1 decision and 1 line", st)
	}
}

// inFlight is a listener whose first connection closes waiting once the
// server reads from it again after it has read sent bytes: the request
// has been read and its handler wants the rest of the body.
type inFlight struct {
	net.Listener
	sent    atomic.Int64
	first   atomic.Bool
	waiting chan struct{}
}

func (l *inFlight) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil && l.first.CompareAndSwap(false, true) {
		c = &inFlightConn{Conn: c, l: l}
	}
	return c, err
}

type inFlightConn struct {
	net.Conn
	l    *inFlight
	read int64
	once sync.Once
}

func (c *inFlightConn) Read(b []byte) (int, error) {
	if n := c.l.sent.Load(); n > 0 && c.read >= n {
		c.once.Do(func() { close(c.l.waiting) })
	}
	n, err := c.Conn.Read(b)
	c.read += int64(n)
	return n, err
}

// TestServeRefusesWebPages: without a token, a request from another origin
// (a page's cross-site POST) and a request on the loopback addressed to
// another host (a page whose name was rebound to 127.0.0.1, or a proxy
// that passes its Host on) get 403; a client's own request, localhost.,
// and every request with a token, pass.
func TestServeRefusesWebPages(t *testing.T) {
	m, p, err := LoadFiles(fixtureModel, fixturePolicy)
	if err != nil {
		t.Fatal(err)
	}
	for _, token := range []string{"", "s3cret"} {
		cfg := DefaultConfig()
		cfg.Token = token
		s, err := New(m, p, cfg)
		if err != nil {
			t.Fatal(err)
		}
		base := serveLoopback(t, s)
		for _, tc := range []struct {
			name, host, origin, fetch string
			want                      int
		}{
			{"own", "", "", "", 200},
			{"localhost", "localhost", "", "", 200},
			{"localhost with a trailing dot", "localhost.", "", "same-origin", 200},
			{"same origin", "", base, "same-origin", 200},
			{"a proxy's own Host (it needs a token)", "fsmine.internal", "", "", 403},
			{"cross-site", "", "http://attacker.example", "cross-site", 403},
			{"rebound, a same-origin GET's headers", "attacker.example", "", "", 403},
			{"rebound POST, same origin", "attacker.example", "http://attacker.example", "same-origin", 403},
		} {
			req, _ := http.NewRequest("POST", base+"/v1/sessions/web/steps", strings.NewReader(`{"next":"agent_msg"}`))
			req.Header.Set("Content-Type", "text/plain")
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.fetch != "" {
				req.Header.Set("Sec-Fetch-Site", tc.fetch)
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := (&http.Client{Timeout: failAfter}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := tc.want
			if token != "" {
				want = 200 // a page cannot send the token
			}
			if resp.StatusCode != want {
				t.Errorf("token %q, %s: %d %s, want %d", token, tc.name, resp.StatusCode, body, want)
			}
		}
	}
}

// TestServeIdleConnsYield: with MaxConns keep-alive connections idle after
// a request each, the next client is served: at the limit the service
// closes idle connections, which otherwise held their slots for the whole
// idle timeout.
func TestServeIdleConnsYield(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxConns, cfg.IdleTimeout = 2, time.Hour
	s := fixtureServer(t, cfg)
	base := serveLoopback(t, s)
	addr := strings.TrimPrefix(base, "http://")
	for range cfg.MaxConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		c.SetReadDeadline(time.Now().Add(failAfter))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close() // the connection stays open, idle
	}
	resp, err := (&http.Client{Timeout: failAfter}).Get(base + "/healthz")
	if err != nil {
		t.Fatalf("with %d idle connections: %v", cfg.MaxConns, err)
	}
	resp.Body.Close()
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// TestServeKeepsIdleAtTheLimit: MaxConns keep-alive clients, and no one
// else, keep their connections. Closing idle connections as soon as the
// limit was reached (rather than for a client waiting) had every reconnect
// knock out another client's connection: 120 to 190 connections and 23 to
// 50 failed POSTs of 600.
func TestServeKeepsIdleAtTheLimit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxConns = 2
	s := fixtureServer(t, cfg)
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &countingListener{Listener: raw}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done; s.Close() }()
	base := "http://" + raw.Addr().String()
	var fails atomic.Int64
	var wg sync.WaitGroup
	for w := range cfg.MaxConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: failAfter}
			for range 200 {
				resp, err := cl.Post(fmt.Sprintf("%s/v1/sessions/w%d/steps", base, w), "application/json", strings.NewReader(`{"next":"agent_msg"}`))
				if err != nil {
					fails.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	if n, f := ln.n.Load(), fails.Load(); n != int64(cfg.MaxConns) || f != 0 {
		t.Errorf("%d keep-alive clients at MaxConns %d: %d connections, %d failed POSTs; want %d and 0", cfg.MaxConns, cfg.MaxConns, n, f, cfg.MaxConns)
	}
}
