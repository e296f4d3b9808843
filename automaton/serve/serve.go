// Package serve is the run-time guard as an HTTP service: it answers, for
// each step an agent proposes, whether an guard.Guard allows it, and
// keeps the sessions, a decision log in fsmine's record form, and
// Prometheus metrics. `fsmine serve` is this package behind flags; Go
// programs can mount Server.Handler in their own mux or run Server.Serve.
//
// The service speaks JSON over HTTP:
//
//	POST   /v1/sessions/{id}/steps  {"event": "...", "next": "...", "slots": {...}} -> the decision
//	GET    /v1/sessions/{id}        the session's state and recent history
//	DELETE /v1/sessions/{id}        forget the session
//	GET    /v1/model                the model and policy in force
//	POST   /v1/model/reload         Config.Load again, and put what it reads in force
//	GET    /healthz                 liveness
//	GET    /metrics                 Prometheus metrics
//
// A denied step is still a 200 answer, with "allowed": false and a reason.
// Errors are JSON objects {"error": "..."}. The package never prints: what
// goes wrong outside a request (a failed write to the decision log) reaches
// Config.LogError.
package serve

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
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/guard"
	"github.com/fsmine/fsmine/internal/text"
)

// Config holds a Server's options. A zero field bounds nothing (no TTL, no
// session limit, no history, no timeouts); DefaultConfig gives the bounds
// `fsmine serve` starts with.
type Config struct {
	// ModelPath names the model in force: GET /v1/model reports it as
	// "path", and the errors of New and Reload begin with it.
	ModelPath string
	// Load reads the model and the policy (nil for the defaults, as New
	// takes it; not the policy in force) again, for Reload and POST
	// /v1/model/reload; nil refuses reloads.
	Load func() (*automaton.Model, *guard.Policy, error)
	// Token, when not empty, is the bearer token every route but /healthz
	// wants ("Authorization: Bearer <token>").
	Token string

	// TTL forgets a session idle this long (0: never).
	TTL time.Duration
	// MaxSessions bounds the live sessions; past it the least recently used
	// go first, and new sessions are never refused (0: no bound).
	MaxSessions int
	// History is how many recent decisions each session keeps for GET
	// /v1/sessions/{id} (0: none; each costs about 0.12 KB, and 0.3 KB at
	// most with an event or next the model lacks, which history keeps cut
	// to 64 bytes).
	History int

	// Log, when not nil, receives every decision as a JSONL line in
	// fsmine's record form (see "Sessions and the decision log" in
	// docs/guard.md); it is written by one goroutine of the Server's,
	// buffered.
	Log io.Writer
	// LogSync, when not nil, makes what was written to Log durable; Close
	// calls it last (for a file, (*os.File).Sync).
	LogSync func() error
	// LogHold is the longest a decision line waits for its event (the
	// outcome the session's next step reports) before it is written with
	// an empty event; it never waits longer than TTL (0: until the session
	// ends).
	LogHold time.Duration
	// LogSlotValues writes the values of a step's slots to the log, not
	// only their names and validity (values can be personal data).
	LogSlotValues bool
	// LogError, when not nil, is called once, from the log's goroutine,
	// with the first failed write to Log; Close returns an error too.
	LogError func(error)

	// ReadTimeout bounds the time a request's headers and body take to
	// arrive, in Serve (0: no limit; headers alone have 10 s at most).
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of a request's headers to
	// the end of its answer's writing, body included, in Serve (0: no
	// limit): a client that does not read its answers is cut, so that it
	// cannot hold one of MaxConns's connections for ever.
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection idle this long between
	// requests, in Serve (0: never).
	IdleTimeout time.Duration
	// MaxConns bounds the connections Serve serves at once; past it the
	// next is accepted only when one closes (0: no bound).
	MaxConns int
}

// DefaultConfig returns the bounds `fsmine serve` starts with: a TTL of 30
// minutes, 100,000 sessions, 16 decisions of history, a log hold of a
// minute, a read timeout and a write timeout of 30 seconds each, an idle
// timeout of 2 minutes and 1,024 connections. It sets no model, token or log.
func DefaultConfig() Config {
	return Config{
		TTL:          30 * time.Minute,
		MaxSessions:  100000,
		History:      16,
		LogHold:      time.Minute,
		ReadTimeout:  30 * time.Second,
		WriteTimeout: 30 * time.Second,
		IdleTimeout:  2 * time.Minute,
		MaxConns:     1024,
	}
}

// ModelInfo describes the model in force, as GET /v1/model reports it.
type ModelInfo struct {
	Path     string    `json:"path"`      // Config.ModelPath
	Version  int       `json:"version"`   // the model's
	Digest   string    `json:"digest"`    // the file's, or computed when it declares none
	Created  string    `json:"created"`   // the model's creation time, as its file gives it
	LoadedAt time.Time `json:"loaded_at"` // when New or a reload put it in force, UTC
}

// ModelVersion names a model by its version and digest.
type ModelVersion struct {
	Version int    `json:"version"`
	Digest  string `json:"digest"`
}

// ReloadResult is what a reload put in force, what it replaced, and what
// became of the live sessions; POST /v1/model/reload answers it.
type ReloadResult struct {
	Version  int               `json:"version"`
	Digest   string            `json:"digest"`
	Previous ModelVersion      `json:"previous"`
	Sessions guard.ReloadStats `json:"sessions"`
}

// Stats counts what a Server did.
type Stats struct {
	Decisions int64 // steps answered with a decision
	LogLines  int64 // lines written to the decision log
	LogErrors int64 // lines that could not be written to the decision log (and failed syncs)
}

// Server is the HTTP face of an guard.Guard. Its methods may be called
// from several goroutines at once.
type Server struct {
	cfg      Config
	guard    *guard.Guard
	token    []byte
	log      *decisionLog // nil without Config.Log
	metrics  *metrics
	info     atomic.Pointer[ModelInfo]
	names    atomic.Pointer[names] // of the model in force
	reloadMu sync.Mutex
	handler  http.Handler

	sweepStop chan struct{}
	sweepDone chan struct{}
	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool // Close was called: steps are refused
}

// New returns a Server enforcing model m under policy p (nil: enforce,
// the observed loop caps, no watchdog). It starts a goroutine that expires
// idle sessions and writes the log lines that waited long enough, and,
// with Config.Log, the log's writer; Close stops them. It returns an error
// for a negative bound in cfg, or when p does not fit m.
func New(m *automaton.Model, p *guard.Policy, cfg Config) (*Server, error) {
	for _, b := range []struct {
		name     string
		negative bool
	}{
		{"TTL", cfg.TTL < 0}, {"MaxSessions", cfg.MaxSessions < 0}, {"History", cfg.History < 0}, {"LogHold", cfg.LogHold < 0},
		{"ReadTimeout", cfg.ReadTimeout < 0}, {"WriteTimeout", cfg.WriteTimeout < 0}, {"IdleTimeout", cfg.IdleTimeout < 0}, {"MaxConns", cfg.MaxConns < 0},
	} {
		if b.negative {
			return nil, fmt.Errorf("serve: Config.%s is negative", b.name)
		}
	}
	s := &Server{cfg: cfg, metrics: newMetrics()}
	if cfg.Token != "" {
		s.token = []byte(cfg.Token)
	}
	history := cfg.History
	if history == 0 {
		history = -1 // the guard's 0 is its default
	}
	gopts := guard.Options{TTL: cfg.TTL, MaxSessions: cfg.MaxSessions, History: history}
	if cfg.Log != nil {
		gopts.OnDecision = s.logDecision
	}
	g, err := guard.New(m, p, gopts)
	if err != nil {
		return nil, s.modelErr(err)
	}
	s.guard = g
	s.info.Store(newModelInfo(cfg.ModelPath, m))
	n := newNames(m, p)
	s.names.Store(&n)
	s.handler = s.routes()
	if cfg.Log != nil {
		s.log = newDecisionLog(cfg.Log, cfg.LogSync, cfg.LogError, cfg.MaxSessions)
	}
	s.sweepStop, s.sweepDone = make(chan struct{}), make(chan struct{})
	go s.sweep()
	return s, nil
}

// modelErr prefixes err with the model's path, when there is one.
func (s *Server) modelErr(err error) error {
	if s.cfg.ModelPath == "" {
		return err
	}
	return fmt.Errorf("%s: %w", s.cfg.ModelPath, err)
}

func newModelInfo(path string, m *automaton.Model) *ModelInfo {
	digest := m.Digest
	if digest == "" {
		digest = m.ComputeDigest()
	}
	return &ModelInfo{Path: path, Version: m.Version, Digest: digest, Created: m.Created, LoadedAt: time.Now().UTC()}
}

// Guard returns the guard the Server answers with.
func (s *Server) Guard() *guard.Guard { return s.guard }

// Info describes the model in force.
func (s *Server) Info() ModelInfo { return *s.info.Load() }

// Stats counts the decisions the Server answered and the lines it logged.
func (s *Server) Stats() Stats {
	var st Stats
	for _, row := range s.metrics.decisions {
		for i := range row {
			st.Decisions += row[i].Load()
		}
	}
	if s.log != nil {
		st.LogLines, st.LogErrors = s.log.lines.Load(), s.log.errors.Load()
	}
	return st
}

// Handler returns the service's routes. Unknown routes answer 404 and
// wrong methods 405 with Allow, in JSON. See Close for when it must stop.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve answers on ln with Handler, under Config's ReadTimeout,
// WriteTimeout, IdleTimeout and MaxConns, until ctx is done; then it stops accepting,
// lets the requests in flight finish (10 seconds at most) and returns nil.
// It closes ln. It returns the error that stopped it otherwise. Serve
// leaves the decision log open: call Close after it returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	var limit *limitListener
	if s.cfg.MaxConns > 0 {
		limit = newLimitListener(ln, s.cfg.MaxConns)
		ln = limit
	}
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
	}
	if s.cfg.ReadTimeout > 0 {
		srv.ReadHeaderTimeout = min(srv.ReadHeaderTimeout, s.cfg.ReadTimeout)
	}
	if s.cfg.IdleTimeout == 0 {
		// http.Server takes a zero IdleTimeout as ReadTimeout's
		srv.IdleTimeout = -1
	}
	if limit != nil {
		// at the limit, idle connections go first
		limit.full = func(full bool) { srv.SetKeepAlivesEnabled(!full) }
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-serveErr:
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shutdownCtx); serr != nil {
		srv.Close()
		if err == nil {
			err = fmt.Errorf("shutting down: %w", serr)
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Close stops the sweeping goroutine and, with a decision log, writes every
// line still waiting for its event, flushes, calls Config.LogSync and stops
// the log's writer. It returns an error when a write to the log failed.
// Later calls return the same error. Call it once the handler serves no
// more requests: after Close, steps are refused (503), and the line of a
// step that raced with it is not written but counted in Stats.LogErrors.
func (s *Server) Close() error {
	s.closed.Store(true)
	s.closeOnce.Do(func() {
		close(s.sweepStop)
		<-s.sweepDone
		if s.log != nil {
			s.closeErr = s.log.close()
		}
	})
	return s.closeErr
}

// sweep expires idle sessions and writes the log lines that waited their
// hold, until Close.
func (s *Server) sweep() {
	defer close(s.sweepDone)
	var hold time.Duration
	if s.log != nil {
		hold = logHold(s.cfg.TTL, s.cfg.LogHold)
	}
	every := sweepEvery(s.cfg.TTL, hold)
	if every == 0 {
		<-s.sweepStop
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.sweepStop:
			return
		case now := <-t.C:
			if s.cfg.TTL > 0 {
				s.guard.Sweep()
			}
			if hold > 0 {
				s.log.sweep(now.Add(-hold))
			}
		}
	}
}

// logHold is how long a decision line may wait for its event: hold, and no
// longer than the session lives (ttl); 0 when neither bounds it.
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

func (s *Server) logDecision(d guard.Decision, event, next string, slots []guard.Slot) {
	node := next
	if m := s.guard.Model(); !m.HasLabel(next) {
		if st := m.State(next); st != nil {
			node = st.Label
		}
	}
	s.log.decision(logMsg{
		session: d.Session, step: d.Step, node: node, event: event, ts: d.Time,
		allowed: d.Allowed, reason: d.Reason, state: d.State,
		extra: newLogExtra(&d, slots, s.cfg.LogSlotValues),
	})
}

// routes routes requests, checks the token, and answers unknown routes
// (404) and wrong methods (405) in JSON.
func (s *Server) routes() http.Handler {
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
			s.error(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s (allowed: %s)", r.Method, shortPath(r.URL.Path), strings.Join(allow, ", ")))
			return
		}
		s.error(w, http.StatusNotFound, fmt.Sprintf("no route %s %s", r.Method, shortPath(r.URL.Path)))
	}))
	return mux
}

// foreign says why a request without a token is one a web page could have
// sent, or "": one from another origin (Origin), and one on a loopback
// connection addressed to a host that is not this machine (a page whose
// name was rebound to 127.0.0.1; its same-origin GETs carry no Origin,
// and browsers send no Sec-Fetch-* to plain http). A proxy on the
// loopback that passes on another Host needs a token.
func foreign(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" {
		if u, err := url.Parse(o); err != nil || !strings.EqualFold(u.Host, r.Host) {
			return fmt.Sprintf("a request from another origin (%s) is refused", shortPath(o))
		}
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if ta, ok := la.(*net.TCPAddr); ok && ta.IP.IsLoopback() && !loopbackHost(r.Host) {
			return fmt.Sprintf("a request on the loopback addressed to host %s is refused (want localhost, a loopback address or this machine's name)", strconv.Quote(shortPath(r.Host)))
		}
	}
	return ""
}

// loopbackHost says whether host (with or without a port) names this
// machine: localhost, a loopback address, or the machine's own name.
func loopbackHost(host string) bool {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	host = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ".")
	lower := strings.ToLower(host)
	if lower == "" || lower == "localhost" || strings.HasSuffix(lower, ".localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	name, err := os.Hostname()
	return err == nil && strings.EqualFold(strings.TrimSuffix(name, "."), host)
}

// shortPath is p, cut to 128 bytes (at a rune) for an error message.
func shortPath(p string) string {
	if len(p) <= 128 {
		return p
	}
	cut := 128
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut] + "…"
}

// auth wraps h with the bearer token check, when the service has a token.
// Without one it refuses what a web page could send: a request from
// another origin (cross-site), and, on a loopback connection, one
// addressed to a host that is not this machine (a page whose name was
// rebound to 127.0.0.1).
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	if s.token == nil {
		return func(w http.ResponseWriter, r *http.Request) {
			if msg := foreign(r); msg != "" {
				s.error(w, http.StatusForbidden, msg+"; start the service with a token to take it")
				return
			}
			h(w, r)
		}
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

func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(h[len(prefix):]), s.token) == 1
}

// ByHeader is the request header that gives, at a session's first step,
// the session's value of a conditioned model's field (see automaton.By):
// the session is judged by the sub-map of the value, or by the shared map
// when the value has none or the header is absent. Later steps' headers
// are not read.
const ByHeader = "X-Fsmine-By"

// maxSessionID bounds a session id's length.
const maxSessionID = 256

func (s *Server) sessionID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if len(id) > maxSessionID {
		s.error(w, http.StatusBadRequest, fmt.Sprintf("session id is %d bytes long, at most %d allowed", len(id), maxSessionID))
		return "", false
	}
	// Two ids that differ only in bytes the decision log cannot write
	// would be one session there.
	if msg := badText(id); msg != "" {
		s.error(w, http.StatusBadRequest, "session id "+msg)
		return "", false
	}
	return id, true
}

func (s *Server) handleStep(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id, ok := s.sessionID(w, r)
	if !ok {
		return
	}
	if s.closed.Load() {
		s.error(w, http.StatusServiceUnavailable, "the service is closed")
		return
	}
	// One value or none: a proxy or framework might read another of two.
	var by string
	switch vs := r.Header[ByHeader]; len(vs) {
	case 0:
	case 1:
		by = vs[0]
	default:
		s.error(w, http.StatusBadRequest, fmt.Sprintf("the %s header is given %d times: give it once", ByHeader, len(vs)))
		return
	}
	buf := stepBuffers.Get().(*[]byte)
	body, err := readStepBody(r.Body, (*buf)[:0])
	if err != nil {
		if errors.Is(err, errStepTooLarge) {
			s.error(w, http.StatusRequestEntityTooLarge, err.Error())
			return
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			s.error(w, http.StatusRequestTimeout, "reading step body: the body did not arrive within the read timeout")
			return
		}
		var oe *net.OpError
		if errors.As(err, &oe) {
			err = oe.Err // without the connection's addresses
		}
		s.error(w, http.StatusBadRequest, fmt.Sprintf("reading step body: %v", err))
		return
	}
	sbuf := slotBuffers.Get().(*[]guard.Slot)
	defer putSlots(sbuf)
	event, next, slots, call, fast, err := readStep(body, *s.names.Load(), (*sbuf)[:0])
	if err != nil {
		s.error(w, http.StatusBadRequest, err.Error())
		return
	}
	if !fast {
		// the decoder's strings may share body's memory: do not recycle it
		body = nil
	}
	// A conditioned model's session is judged by the map of the value the
	// header gives at its first step.
	d, err := s.guard.StepByCall(id, by, event, next, slots, call)
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

func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
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

func (s *Server) handleEnd(w http.ResponseWriter, r *http.Request) {
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
	*ModelInfo
	States        int             `json:"states"`
	Transitions   int             `json:"transitions"`
	Loops         int             `json:"loops"`
	Mode          string          `json:"mode"`
	LoopCaps      []guard.LoopCap `json:"loop_caps"`
	Watchdog      *guard.Watchdog `json:"watchdog"`
	RareIsDev     bool            `json:"rare_is_deviation"`
	MaxUnusual    int             `json:"max_unusual,omitempty"`
	MaxUnusualRun int             `json:"max_unusual_run,omitempty"`
	Sessions      int             `json:"sessions"`
	// the policy's slots, states and rules as given
	Generalized string                       `json:"generalized"`
	Slots       []guard.SlotSpec             `json:"slots,omitempty"`
	PolicyState map[string]guard.StatePolicy `json:"policy_states,omitempty"`
	Rules       []guard.Rule                 `json:"rules,omitempty"`
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	m, p := s.guard.Model(), s.guard.Policy()
	mode := guard.ModeEnforce
	if p.Monitor() {
		mode = guard.ModeMonitor
	}
	var wd *guard.Watchdog
	if p.Watchdog != nil {
		wd = &guard.Watchdog{MaxTurns: p.Watchdog.MaxTurns, Fallback: s.guard.Fallback()}
	}
	s.writeJSON(w, http.StatusOK, modelAnswer{
		ModelInfo:     s.info.Load(),
		States:        len(m.States),
		Transitions:   len(m.Transitions),
		Loops:         len(m.Loops),
		Mode:          mode,
		LoopCaps:      s.guard.LoopCaps(),
		Watchdog:      wd,
		RareIsDev:     p.RareIsDeviation,
		MaxUnusual:    p.MaxUnusual,
		MaxUnusualRun: p.MaxUnusualRun,
		Sessions:      s.guard.Len(),
		Generalized:   cmp.Or(p.Generalized, guard.GeneralizedAllow),
		Slots:         p.Slots,
		PolicyState:   p.States,
		Rules:         p.Transitions,
	})
}

// errNoLoad refuses a reload without Config.Load.
var errNoLoad = errors.New("no Config.Load to read the model again")

// Reload reads the model and policy again with Config.Load and puts them
// in force, keeping the live sessions (see guard.Guard.Reload); a nil
// policy puts the defaults in force, as New takes it. On an
// error the model in force stays, and the error says which it is.
// Reloads are serialised.
func (s *Server) Reload() (ReloadResult, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	var res ReloadResult
	old := s.info.Load()
	fail := func(err error) (ReloadResult, error) {
		s.metrics.reloadsKO.Add(1)
		return res, fmt.Errorf("%w; still enforcing version %d (%s)", err, old.Version, text.ShortDigest(old.Digest))
	}
	if s.cfg.Load == nil {
		return fail(errNoLoad)
	}
	m, p, err := s.cfg.Load()
	if err != nil {
		return fail(err)
	}
	if p == nil {
		// the guard's nil keeps the policy in force; Load's is the defaults
		p = &guard.Policy{}
	}
	st, err := s.guard.Reload(m, p)
	if err != nil {
		return fail(s.modelErr(err))
	}
	info := newModelInfo(s.cfg.ModelPath, m)
	s.info.Store(info)
	n := newNames(m, p)
	s.names.Store(&n)
	s.metrics.reloadsOK.Add(1)
	res.Version, res.Digest, res.Sessions = info.Version, info.Digest, st
	res.Previous.Version, res.Previous.Digest = old.Version, old.Digest
	return res, nil
}

func (s *Server) handleReload(w http.ResponseWriter, r *http.Request) {
	res, err := s.Reload()
	if err != nil {
		s.error(w, http.StatusInternalServerError, "reload: "+err.Error())
		return
	}
	s.writeJSON(w, http.StatusOK, res)
}

// handleHealth answers 200 {"status": "ok"}, or, while the decision log's
// last write failed, 503 {"status": "log_failing", "log_error": ...}: the
// guard still answers, but its decisions are not recorded. With a decision
// log, log_errors counts the lines that could not be written since the
// start, which the service keeps trying to write after a failure.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if s.log == nil {
		s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return
	}
	failing, lastErr, lost := s.log.health()
	h := struct {
		Status    string `json:"status"`
		LogErrors int64  `json:"log_errors"`
		LogError  string `json:"log_error,omitempty"`
	}{"ok", lost, ""}
	code := http.StatusOK
	if failing {
		h.Status, h.LogError, code = "log_failing", lastErr, http.StatusServiceUnavailable
	}
	s.writeJSON(w, code, h)
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	s.metrics.write(&b, s.guard, s.info.Load(), s.log)
	s.metrics.response(http.StatusOK) // this scrape shows in the next
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write(b.Bytes())
}

func (s *Server) writeJSON(w http.ResponseWriter, code int, v any) {
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

func (s *Server) error(w http.ResponseWriter, code int, msg string) {
	s.metrics.response(code)
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// LoadFiles reads the model file at modelPath and the policy file at
// policyPath ("": none) and checks that the policy fits the model, as
// fsmine serve does at start and on reload; errors name the file (and, for
// the policy, the JSON path of the problem). It suits Config.Load.
func LoadFiles(modelPath, policyPath string) (*automaton.Model, *guard.Policy, error) {
	m, err := automaton.Load(modelPath)
	if err != nil {
		return nil, nil, err
	}
	var p *guard.Policy
	if policyPath != "" {
		if p, err = guard.LoadPolicy(policyPath); err != nil {
			return nil, nil, err
		}
		if err := p.Check(m); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", policyPath, err)
		}
	}
	return m, p, nil
}
