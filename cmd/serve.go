package cmd

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/goccy/go-json"
	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/render/text"
)

func init() { register(newServeCmd) }

type serveOptions struct {
	model       string
	policy      string
	addr        string
	log         string
	token       string
	ttl         time.Duration
	maxSessions int
	history     int
	check       bool
	suggest     bool // with check: print a policy draft mined from the model
	slotValues  bool

	readTimeout time.Duration // a request's headers and body; 0: none
	idleTimeout time.Duration // a kept-alive connection between requests; 0: none
	maxConns    int           // connections served at once; 0: no bound
	logHold     time.Duration // longest a decision line waits for its event; 0: until the session ends

	// ready, when set, is called with the listening address once the
	// service accepts connections (tests listen on port 0).
	ready func(addr string)
}

func newServeCmd(streams IO) *cobra.Command {
	opts := serveOptions{}
	c := &cobra.Command{
		Use:   "serve --model M.json [--policy P.json] [flags]",
		Short: "Enforce a model at run time over HTTP",
		Long: `serve answers, for each step an agent proposes, whether the model and the
policy allow it. It speaks JSON over HTTP:

  POST   /v1/sessions/{id}/steps  {"event": "...", "next": "...", "slots": {...}} -> the decision
  GET    /v1/sessions/{id}        the session's state and recent history
  DELETE /v1/sessions/{id}        forget the session
  GET    /v1/model                the model and policy in force
  POST   /v1/model/reload         re-read --model (and --policy); SIGHUP does the same
  GET    /healthz                 liveness
  GET    /metrics                 Prometheus metrics

A session starts at __start__: its first step proposes its first state with
an empty event. next is the label (or the state id) of the proposed state.
A denied step is still a 200 answer, with "allowed": false and a reason
(illegal_transition, unknown_state, loop_cap, rare_transition, watchdog,
generalized_transition, missing_slot, invalid_slot, condition_failed). A
step may carry slots (strings, numbers, bools) that the policy declares; the
answer carries the policy's instructions for the session's state.
Reloading keeps live sessions. With --token (or FSMINE_TOKEN) every route but
/healthz wants "Authorization: Bearer <token>". SIGINT or SIGTERM stops the
service gracefully: requests in flight are answered and the decision log is
flushed.

With --log, every decision is appended to a JSONL file in fsmine's record
form (session_id, step, node, event, ts, verdict) that fsmine build reads.
A line waits for its event (the outcome the session's next step reports)
at most --log-hold, and no longer than its session lives: when the session
ends, idles past --ttl or is evicted by --max-sessions it is written with an
empty event. At most --max-sessions lines wait (1,048,576 without a bound).

Slow clients are cut: a request's headers and body must arrive within
--read-timeout, a kept-alive connection may idle --idle-timeout between
requests, and at most --max-conns connections are served at once (the
others wait to be accepted), so that clients that trickle their bytes
cannot use up the process's file descriptors.

A line names the step's slots and whether each is valid; their values only
with --log-slot-values (values can be personal data).

Unless GOGC is set, serve lets about 64 MiB of garbage gather between
garbage collections while its live heap is smaller than that (Go's default
collects whenever the heap has doubled): fewer collections keep them out of
the latency tail, for about 64 MiB more memory.

Exit status: 0 after a clean shutdown (or a good --check); 2 trouble (bad
flags, unreadable model or policy, the address is taken).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.model == "" {
				return usagef("serve: --model is required")
			}
			if opts.token == "" {
				opts.token = os.Getenv("FSMINE_TOKEN")
			}
			return runServe(cmd.Context(), opts, streams)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.model, "model", "", "model file to enforce (required)")
	f.StringVar(&opts.policy, "policy", "", "policy file (JSON; default: enforce, observed loop caps, no watchdog)")
	f.StringVar(&opts.addr, "addr", "127.0.0.1:8700", "address to listen on")
	f.StringVar(&opts.log, "log", "", "append every decision to this JSONL file (- for stdout)")
	f.StringVar(&opts.token, "token", "", "bearer token clients must send (default $FSMINE_TOKEN)")
	f.DurationVar(&opts.ttl, "ttl", 30*time.Minute, "forget sessions idle this long (0: never)")
	f.IntVar(&opts.maxSessions, "max-sessions", 100000, "live sessions at most; the least recently used go first (0: no bound)")
	f.IntVar(&opts.history, "history", 16, "recent decisions kept per session for GET /v1/sessions/{id} (0: none; each costs about 0.12 KB)")
	f.BoolVar(&opts.check, "check", false, "load the model and policy, print what would be enforced, and exit")
	f.BoolVar(&opts.suggest, "suggest", false, "with --check: print a policy draft mined from the model instead (required slots from build --slots, loop caps, a watchdog), for a person to edit")
	f.DurationVar(&opts.readTimeout, "read-timeout", 30*time.Second, "a request's headers and body must arrive within this (0: no limit)")
	f.DurationVar(&opts.idleTimeout, "idle-timeout", 2*time.Minute, "close a kept-alive connection idle this long between requests (0: never)")
	f.IntVar(&opts.maxConns, "max-conns", 1024, "connections served at once; more wait to be accepted (0: no bound)")
	f.DurationVar(&opts.logHold, "log-hold", time.Minute, "with --log, write a decision's line with an empty event once its session has been idle this long (0: when the session ends)")
	f.BoolVar(&opts.slotValues, "log-slot-values", false, "write slot values to the decision log, not only their names and validity (values can be personal data)")
	return c
}

// modelInfo describes the model in force.
type modelInfo struct {
	Path     string    `json:"path"`
	Version  int       `json:"version"`
	Digest   string    `json:"digest"`
	Created  string    `json:"created"`
	LoadedAt time.Time `json:"loaded_at"`
}

// server is the HTTP face of a guard.
type server struct {
	guard      *automaton.Guard
	modelPath  string
	policyPath string
	token      []byte
	log        *decisionLog
	metrics    *metrics
	info       atomic.Pointer[modelInfo]
	names      atomic.Pointer[names] // of the model in force
	reloadMu   sync.Mutex
	errOut     io.Writer
	// logSlotValues writes slot values to the decision log
	logSlotValues bool
}

func loadServeInputs(modelPath, policyPath string) (*automaton.Model, *automaton.Policy, error) {
	m, err := automaton.Load(modelPath)
	if err != nil {
		return nil, nil, err
	}
	var p *automaton.Policy
	if policyPath != "" {
		if p, err = automaton.LoadPolicy(policyPath); err != nil {
			return nil, nil, err
		}
		if err := p.Check(m); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", policyPath, err)
		}
	}
	return m, p, nil
}

// newServer returns a server enforcing m and p, read from modelPath and
// policyPath (which reloads read again). log may be nil.
func newServer(modelPath, policyPath string, m *automaton.Model, p *automaton.Policy, token string, log *decisionLog, errOut io.Writer, gopts automaton.GuardOptions) (*server, error) {
	s := &server{
		modelPath:  modelPath,
		policyPath: policyPath,
		metrics:    newMetrics(),
		errOut:     errOut,
		log:        log,
	}
	if token != "" {
		s.token = []byte(token)
	}
	if log != nil {
		gopts.OnDecision = s.logDecision
	}
	g, err := automaton.NewGuard(m, p, gopts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", modelPath, err)
	}
	s.guard = g
	s.info.Store(newModelInfo(modelPath, m))
	n := newNames(m, p)
	s.names.Store(&n)
	return s, nil
}

func newModelInfo(path string, m *automaton.Model) *modelInfo {
	return &modelInfo{Path: path, Version: m.Version, Digest: modelDigest(m), Created: m.Created, LoadedAt: time.Now().UTC()}
}

func runServe(ctx context.Context, opts serveOptions, streams IO) error {
	if opts.maxSessions < 0 || opts.ttl < 0 {
		return usagef("serve: --max-sessions and --ttl must not be negative")
	}
	if opts.history < 0 {
		return usagef("serve: --history %d: want 0 or more decisions", opts.history)
	}
	if opts.readTimeout < 0 || opts.idleTimeout < 0 || opts.logHold < 0 || opts.maxConns < 0 {
		return usagef("serve: --read-timeout, --idle-timeout, --log-hold and --max-conns must not be negative")
	}
	m, p, err := loadServeInputs(opts.model, opts.policy)
	if err != nil {
		return err
	}
	if opts.suggest {
		if !opts.check {
			return usagef("serve: --suggest goes with --check")
		}
		return automaton.SuggestPolicy(m).Write(streams.Out)
	}
	errOut := &syncWriter{w: streams.Err}
	var dlog *decisionLog
	if opts.log != "" && !opts.check {
		var w io.Writer = streams.Out
		var syncFn func() error
		if opts.log != "-" {
			f, err := os.OpenFile(opts.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if err != nil {
				return err
			}
			defer f.Close()
			w, syncFn = f, f.Sync
		}
		dlog = newDecisionLogHeld(w, syncFn, errOut, opts.maxSessions)
	}
	history := opts.history
	if history == 0 {
		history = -1
	}
	s, err := newServer(opts.model, opts.policy, m, p, opts.token, dlog, errOut,
		automaton.GuardOptions{TTL: opts.ttl, MaxSessions: opts.maxSessions, History: history})
	if err != nil {
		if dlog != nil {
			dlog.close()
		}
		return err
	}
	s.logSlotValues = opts.slotValues
	g := s.guard
	if opts.check {
		return printCheck(streams.Out, opts, g)
	}

	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		if s.log != nil {
			s.log.close()
		}
		return err
	}
	if opts.maxConns > 0 {
		ln = newLimitListener(ln, opts.maxConns)
	}
	addr := ln.Addr().String()
	if !isLoopback(opts.addr) && s.token == nil {
		fmt.Fprintf(errOut, "fsmine serve: warning: listening on %s without a token: anyone who can reach it can read and steer sessions\n", addr)
	}
	info := s.info.Load()
	mode := automaton.ModeEnforce
	if g.Policy().Monitor() {
		mode = automaton.ModeMonitor
	}
	fmt.Fprintf(errOut, "fsmine serve: %s version %d (%s), %s mode, on http://%s\n", opts.model, info.Version, text.ShortDigest(info.Digest), mode, addr)

	defer tuneServeGC()()

	handleSignals()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	srv := &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       opts.readTimeout,
		IdleTimeout:       opts.idleTimeout,
		ErrorLog:          nil,
	}
	if opts.readTimeout > 0 {
		srv.ReadHeaderTimeout = min(srv.ReadHeaderTimeout, opts.readTimeout)
	}
	if opts.idleTimeout == 0 {
		// http.Server takes a zero IdleTimeout as ReadTimeout's
		srv.IdleTimeout = -1
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	// the sweeper expires idle sessions and writes their held log lines
	sweepDone := make(chan struct{})
	sweepStop := make(chan struct{})
	hold := logHold(opts.ttl, opts.logHold)
	go func() {
		defer close(sweepDone)
		every := sweepEvery(opts.ttl, hold)
		if every == 0 {
			<-sweepStop
			return
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-sweepStop:
				return
			case now := <-t.C:
				if opts.ttl > 0 {
					g.Sweep()
				}
				if s.log != nil && hold > 0 {
					s.log.sweep(now.Add(-hold))
				}
			}
		}
	}()
	if opts.ready != nil {
		opts.ready(addr)
	}

	var runErr error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-serveErr:
			runErr = err
			break loop
		case <-hup:
			if res, err := s.reload(); err != nil {
				fmt.Fprintf(errOut, "fsmine: reload on SIGHUP: %v\n", err)
			} else {
				fmt.Fprintf(errOut, "fsmine serve: reloaded version %d (%s): %d sessions kept, %d remapped, %d dropped\n",
					res.Version, text.ShortDigest(res.Digest), res.Sessions.Kept, res.Sessions.Remapped, res.Sessions.Dropped)
			}
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
		if runErr == nil {
			runErr = fmt.Errorf("shutting down: %w", err)
		}
	}
	close(sweepStop)
	<-sweepDone
	if s.log != nil {
		if err := s.log.close(); err != nil && runErr == nil {
			runErr = err
		}
	}
	if errors.Is(runErr, http.ErrServerClosed) {
		runErr = nil
	}
	var total int64
	for _, row := range s.metrics.decisions {
		for i := range row {
			total += row[i].Load()
		}
	}
	msg := fmt.Sprintf("fsmine serve: stopped after %d decisions", total)
	if s.log != nil {
		msg += fmt.Sprintf("; %d lines in the decision log", s.log.lines.Load())
	}
	fmt.Fprintln(errOut, msg)
	return runErr
}

// logHold is how long a decision line may wait for its event: --log-hold,
// and no longer than the session lives (--ttl); 0 when neither bounds it.
func logHold(ttl, hold time.Duration) time.Duration {
	switch {
	case ttl == 0:
		return hold
	case hold == 0:
		return ttl
	}
	return min(ttl, hold)
}

// sweepEvery is how often the sweeper runs: at half the shorter of the TTL
// and the log's hold, between a second and a minute; 0 when neither is set.
func sweepEvery(ttl, hold time.Duration) time.Duration {
	d := ttl
	if d == 0 || (hold > 0 && hold < d) {
		d = hold
	}
	if d == 0 {
		return 0
	}
	return max(min(d/2, time.Minute), time.Second)
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// printCheck writes what the guard will enforce.
func printCheck(w io.Writer, opts serveOptions, g *automaton.Guard) error {
	m, p := g.Model(), g.Policy()
	var b bytes.Buffer
	fmt.Fprintf(&b, "model    %s: version %d, %s, %s, %s, %s\n", opts.model, m.Version, modelDigest(m),
		text.Count(len(m.States), "state"), text.Count(len(m.Transitions), "transition"), text.Count(len(m.Loops), "loop"))
	mode := automaton.ModeEnforce
	if p.Monitor() {
		mode = automaton.ModeMonitor
	}
	src := "built-in defaults"
	if opts.policy != "" {
		src = opts.policy
	}
	fmt.Fprintf(&b, "policy   %s: %s mode", src, mode)
	if p.RareIsDeviation {
		b.WriteString(", rare transitions are deviations")
	}
	b.WriteByte('\n')
	if w := p.Watchdog; w != nil {
		fmt.Fprintf(&b, "watchdog %d turns in one state", w.MaxTurns)
		if fb := g.Fallback(); fb != nil {
			fmt.Fprintf(&b, ", then -[%s]-> %s (%s)", fb.Event, fb.To, fb.Label)
		} else {
			b.WriteString(", then deny")
		}
		b.WriteByte('\n')
	} else {
		b.WriteString("watchdog none\n")
	}
	caps := g.LoopCaps()
	fmt.Fprintf(&b, "caps     %d\n", len(caps))
	for _, c := range caps {
		fmt.Fprintf(&b, "  %s -[%s]-> %s  max %d\n", c.From, c.Event, c.To, c.Max)
	}
	writeSlotPolicy(&b, m, p)
	_, err := w.Write(b.Bytes())
	return err
}

func (s *server) logDecision(d automaton.Decision, event, next string, slots []automaton.Slot) {
	node := next
	if m := s.guard.Model(); !m.HasLabel(next) {
		if st := m.State(next); st != nil {
			node = st.Label
		}
	}
	s.log.decision(logMsg{
		session: d.Session, step: d.Step, node: node, event: event, ts: d.Time,
		allowed: d.Allowed, reason: d.Reason, state: d.State,
		extra: newLogExtra(&d, slots, s.logSlotValues),
	})
}

// handler routes requests, checks the token, and answers unknown routes
// (404) and wrong methods (405) in JSON.
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	routes := []struct {
		pattern string
		h       http.HandlerFunc
	}{
		{"POST /v1/sessions/{id}/steps", s.handleStep},
		{"GET /v1/sessions/{id}", s.handleSession},
		{"DELETE /v1/sessions/{id}", s.handleEnd},
		{"GET /v1/model", s.handleModel},
		{"POST /v1/model/reload", s.handleReload},
		{"GET /healthz", s.handleHealth},
		{"GET /metrics", s.handleMetrics},
	}
	for _, r := range routes {
		h := r.h
		if r.pattern != "GET /healthz" {
			h = s.auth(h)
		}
		mux.Handle(r.pattern, h)
	}
	// "/" gets every request no route takes, wrong methods included: it
	// tells a 405 from a 404 by asking the mux about the other methods.
	mux.Handle("/", s.auth(func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			r2 := r.Clone(r.Context())
			r2.Method = method
			if _, p := mux.Handler(r2); p != "/" && p != "" {
				allow = append(allow, method)
			}
		}
		if len(allow) > 0 {
			if allow[0] == http.MethodGet {
				allow = append(allow, http.MethodHead)
			}
			w.Header().Set("Allow", strings.Join(allow, ", "))
			s.error(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allow, ", ")))
			return
		}
		s.error(w, http.StatusNotFound, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	}))
	return mux
}

// auth wraps h with the bearer token check, when the service has a token.
func (s *server) auth(h http.HandlerFunc) http.HandlerFunc {
	if s.token == nil {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="fsmine"`)
			s.error(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		h(w, r)
	}
}

func (s *server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(h[len(prefix):]), s.token) == 1
}

// maxSessionID bounds a session id's length.
const maxSessionID = 256

func (s *server) sessionID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if len(id) > maxSessionID {
		s.error(w, http.StatusBadRequest, fmt.Sprintf("session id is %d bytes long, at most %d allowed", len(id), maxSessionID))
		return "", false
	}
	return id, true
}

type stepRequest struct {
	Event *string         `json:"event"`
	Next  *string         `json:"next"`
	Slots json.RawMessage `json:"slots"` // read by decodeSlots
}

func (s *server) handleStep(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id, ok := s.sessionID(w, r)
	if !ok {
		return
	}
	buf := stepBuffers.Get().(*[]byte)
	body, err := readStepBody(r.Body, (*buf)[:0])
	if err != nil {
		if errors.Is(err, errStepTooLarge) {
			s.error(w, http.StatusRequestEntityTooLarge, err.Error())
			return
		}
		s.error(w, http.StatusBadRequest, fmt.Sprintf("reading step body: %v", err))
		return
	}
	sbuf := slotBuffers.Get().(*[]automaton.Slot)
	defer putSlots(sbuf)
	event, next, slots, fast, err := readStep(body, *s.names.Load(), (*sbuf)[:0])
	if err != nil {
		s.error(w, http.StatusBadRequest, err.Error())
		return
	}
	if !fast {
		// the decoder's strings may share body's memory: do not recycle it
		body = nil
	}
	d, err := s.guard.StepSlots(id, event, next, slots)
	if err != nil {
		s.error(w, http.StatusBadRequest, stepSlotError(err))
		return
	}
	*sbuf = slots
	out := appendDecision(body[:0], &d)
	out = append(out, '\n')
	s.metrics.response(http.StatusOK)
	w.Header()["Content-Type"] = jsonContentType
	w.Write(out)
	s.metrics.decision(&d, time.Since(start))
	if body != nil {
		*buf = out
		stepBuffers.Put(buf)
	}
}

// jsonContentType is the Content-Type of JSON answers, shared so that
// setting it costs no allocation.
var jsonContentType = []string{"application/json"}

// decodeStep reads a step request: one JSON object with a string "next"
// (required, not empty) and a string "event" (optional, default ""), and no
// other field.
func decodeStep(body []byte) (stepRequest, error) {
	var req stepRequest
	if len(bytes.TrimSpace(body)) == 0 {
		return req, errors.New(`empty step body: want {"event": "...", "next": "..."}`)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf(`bad step body: %v; want {"event": "...", "next": "..."}`, err)
	}
	if dec.More() {
		return req, errors.New("bad step body: more than one JSON value")
	}
	if req.Next == nil || *req.Next == "" {
		return req, errors.New(`bad step body: "next" is required: the label or id of the proposed next state`)
	}
	if req.Event == nil && bytes.Contains(body, []byte("null")) {
		// null decodes as an absent event; an event, when given, is a string
		var keys map[string]json.RawMessage
		if json.Unmarshal(body, &keys) == nil {
			for k, v := range keys {
				if strings.EqualFold(k, "event") && string(bytes.TrimSpace(v)) == "null" {
					return req, errors.New(`bad step body: "event" is null: want a string (or leave it out)`)
				}
			}
		}
	}
	if req.Event == nil {
		req.Event = new(string)
	}
	return req, nil
}

func (s *server) handleSession(w http.ResponseWriter, r *http.Request) {
	id, ok := s.sessionID(w, r)
	if !ok {
		return
	}
	info, ok := s.guard.Session(id)
	if !ok {
		s.error(w, http.StatusNotFound, fmt.Sprintf("no live session %q", id))
		return
	}
	s.writeJSON(w, http.StatusOK, info)
}

func (s *server) handleEnd(w http.ResponseWriter, r *http.Request) {
	id, ok := s.sessionID(w, r)
	if !ok {
		return
	}
	if !s.guard.End(id) {
		s.error(w, http.StatusNotFound, fmt.Sprintf("no live session %q", id))
		return
	}
	if s.log != nil {
		s.log.end(id)
	}
	s.metrics.response(http.StatusNoContent)
	w.WriteHeader(http.StatusNoContent)
}

type modelAnswer struct {
	*modelInfo
	States      int                 `json:"states"`
	Transitions int                 `json:"transitions"`
	Loops       int                 `json:"loops"`
	Mode        string              `json:"mode"`
	LoopCaps    []automaton.LoopCap `json:"loop_caps"`
	Watchdog    *automaton.Watchdog `json:"watchdog"`
	RareIsDev   bool                `json:"rare_is_deviation"`
	Sessions    int                 `json:"sessions"`
	// the policy's slots, states and rules as given
	Generalized string                           `json:"generalized"`
	Slots       []automaton.SlotSpec             `json:"slots,omitempty"`
	PolicyState map[string]automaton.StatePolicy `json:"policy_states,omitempty"`
	Rules       []automaton.Rule                 `json:"rules,omitempty"`
}

func (s *server) handleModel(w http.ResponseWriter, r *http.Request) {
	m, p := s.guard.Model(), s.guard.Policy()
	mode := automaton.ModeEnforce
	if p.Monitor() {
		mode = automaton.ModeMonitor
	}
	var wd *automaton.Watchdog
	if p.Watchdog != nil {
		wd = &automaton.Watchdog{MaxTurns: p.Watchdog.MaxTurns, Fallback: s.guard.Fallback()}
	}
	s.writeJSON(w, http.StatusOK, modelAnswer{
		modelInfo:   s.info.Load(),
		States:      len(m.States),
		Transitions: len(m.Transitions),
		Loops:       len(m.Loops),
		Mode:        mode,
		LoopCaps:    s.guard.LoopCaps(),
		Watchdog:    wd,
		RareIsDev:   p.RareIsDeviation,
		Sessions:    s.guard.Len(),
		Generalized: cmp.Or(p.Generalized, automaton.GeneralizedAllow),
		Slots:       p.Slots,
		PolicyState: p.States,
		Rules:       p.Transitions,
	})
}

type reloadAnswer struct {
	Version  int    `json:"version"`
	Digest   string `json:"digest"`
	Previous struct {
		Version int    `json:"version"`
		Digest  string `json:"digest"`
	} `json:"previous"`
	Sessions automaton.ReloadStats `json:"sessions"`
}

// reload re-reads the model and policy files and puts them in force.
func (s *server) reload() (reloadAnswer, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	var res reloadAnswer
	old := s.info.Load()
	fail := func(err error) (reloadAnswer, error) {
		s.metrics.reloadsKO.Add(1)
		return res, fmt.Errorf("%w; still enforcing version %d (%s)", err, old.Version, text.ShortDigest(old.Digest))
	}
	m, p, err := loadServeInputs(s.modelPath, s.policyPath)
	if err != nil {
		return fail(err)
	}
	st, err := s.guard.Reload(m, p)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", s.modelPath, err))
	}
	info := newModelInfo(s.modelPath, m)
	s.info.Store(info)
	n := newNames(m, p)
	s.names.Store(&n)
	s.metrics.reloadsOK.Add(1)
	res.Version, res.Digest, res.Sessions = info.Version, info.Digest, st
	res.Previous.Version, res.Previous.Digest = old.Version, old.Digest
	return res, nil
}

func (s *server) handleReload(w http.ResponseWriter, r *http.Request) {
	res, err := s.reload()
	if err != nil {
		s.error(w, http.StatusInternalServerError, "reload: "+err.Error())
		return
	}
	s.writeJSON(w, http.StatusOK, res)
}

func (s *server) handleHealth(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	s.metrics.write(&b, s.guard, s.info.Load(), s.log)
	s.metrics.response(http.StatusOK) // this scrape shows in the next
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write(b.Bytes())
}

func (s *server) writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.error(w, http.StatusInternalServerError, "encoding the answer: "+err.Error())
		return
	}
	s.metrics.response(code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

func (s *server) error(w http.ResponseWriter, code int, msg string) {
	s.metrics.response(code)
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}
