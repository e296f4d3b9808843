package cmd

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/guard"
	"github.com/fsmine/fsmine/automaton/serve"
	"github.com/fsmine/fsmine/internal/text"
)

func init() { register(newServeCmd) }

type serveOptions struct {
	model  string
	policy string
	addr   string
	log    string
	check  bool
	cfg    serve.Config // the service's bounds and token, bound to flags

	// suggest, with check, prints a policy draft mined from the model.
	suggest bool

	// ready, when set, is called with the listening address once the
	// service accepts connections (tests listen on port 0).
	ready func(addr string)
}

func newServeCmd(streams IO) *cobra.Command {
	opts := serveOptions{}
	d := serve.DefaultConfig()
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
A denied step is still a 200 answer, with "allowed": false and a reason:
illegal_transition, unknown_state, loop_cap, repeat_cap, rare_transition,
watchdog, generalized_transition, unusual_cap, unusual_run, missing_slot,
invalid_slot or condition_failed; missing_prerequisite, once_only, not_both
or rerun (a constraint of the model); unseen_value or value_without_source
(an argument rule of the model, on a step that carries "args"). A
step may carry slots (strings, numbers, bools) that the policy declares; the
answer carries the policy's instructions for the session's state, and
"surprise" and "risk": the proposed step's surprisal under the model in bits
and the session's running total (see check), so that a runtime can escalate
a session whose risk climbs before it ends.
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
--read-timeout, its answer must be written within --write-timeout of its
headers (a client that does not read its answers is cut), a kept-alive
connection may idle --idle-timeout between requests, and at most
--max-conns connections are served at once (the others wait to be
accepted), so that clients that trickle their bytes, or never read, cannot
use up the process's file descriptors.

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
			if opts.cfg.Token == "" {
				opts.cfg.Token = os.Getenv("FSMINE_TOKEN")
			}
			return runServe(cmd.Context(), opts, streams)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.model, "model", "", "model file to enforce (required)")
	f.StringVar(&opts.policy, "policy", "", "policy file (JSON; default: enforce, observed loop caps, no watchdog)")
	f.StringVar(&opts.addr, "addr", "127.0.0.1:8700", "address to listen on")
	f.StringVar(&opts.log, "log", "", "append every decision to this JSONL file (- for stdout)")
	f.StringVar(&opts.cfg.Token, "token", "", "bearer token clients must send (default $FSMINE_TOKEN)")
	f.DurationVar(&opts.cfg.TTL, "ttl", d.TTL, "forget sessions idle this long (0: never)")
	f.IntVar(&opts.cfg.MaxSessions, "max-sessions", d.MaxSessions, "live sessions at most; the least recently used of its shard (the bound is split over up to 64) go first (0: no bound)")
	f.IntVar(&opts.cfg.History, "history", d.History, "recent decisions kept per session for GET /v1/sessions/{id} (0: none; each costs about 0.12 KB, 0.3 KB at most with names the model lacks)")
	f.BoolVar(&opts.check, "check", false, "load the model and policy, print what would be enforced, and exit")
	f.BoolVar(&opts.suggest, "suggest", false, "with --check: print a policy draft mined from the model instead (required slots from build --slots, loop caps, a watchdog), for a person to edit")
	f.DurationVar(&opts.cfg.ReadTimeout, "read-timeout", d.ReadTimeout, "a request's headers and body must arrive within this (0: no limit)")
	f.DurationVar(&opts.cfg.WriteTimeout, "write-timeout", d.WriteTimeout, "a request's answer must be written within this of its headers' arrival; a client that does not read its answers is cut (0: no limit)")
	f.DurationVar(&opts.cfg.IdleTimeout, "idle-timeout", d.IdleTimeout, "close a kept-alive connection idle this long between requests (0: never)")
	f.IntVar(&opts.cfg.MaxConns, "max-conns", d.MaxConns, "connections served at once; more wait to be accepted (0: no bound)")
	f.DurationVar(&opts.cfg.LogHold, "log-hold", d.LogHold, "with --log, write a decision's line with an empty event once its session has been idle this long (0: when the session ends)")
	f.BoolVar(&opts.cfg.LogSlotValues, "log-slot-values", false, "write slot values to the decision log, not only their names and validity (values can be personal data)")
	return c
}

func runServe(ctx context.Context, opts serveOptions, streams IO) error {
	cfg := opts.cfg
	if cfg.MaxSessions < 0 || cfg.TTL < 0 {
		return usagef("serve: --max-sessions and --ttl must not be negative")
	}
	if cfg.History < 0 {
		return usagef("serve: --history %d: want 0 or more decisions", cfg.History)
	}
	if cfg.ReadTimeout < 0 || cfg.WriteTimeout < 0 || cfg.IdleTimeout < 0 || cfg.LogHold < 0 || cfg.MaxConns < 0 {
		return usagef("serve: --read-timeout, --write-timeout, --idle-timeout, --log-hold and --max-conns must not be negative")
	}
	if err := checkOutputs([]string{opts.model, opts.policy}, [][2]string{{"--log", opts.log}}); err != nil {
		return err
	}
	m, p, err := serve.LoadFiles(opts.model, opts.policy)
	if err != nil {
		return err
	}
	if m.LegacyDigest() {
		fmt.Fprintf(streams.Err, "fsmine: note: %s has a digest of an earlier fsmine, which leaves out some of what is enforced (back-edge marks; in the first kind, loop caps, visits and probabilities too): fsmine seal %[1]s gives it one that covers them\n", text.Terminal(opts.model))
	}
	if opts.suggest {
		if !opts.check {
			return usagef("serve: --suggest goes with --check")
		}
		if !m.Params.Slots {
			fmt.Fprintf(streams.Err, "fsmine: %s was built without --slots: the draft requires no slots (build with --slots to have them suggested)\n", text.Terminal(opts.model))
		}
		return guard.SuggestPolicy(m).Write(streams.Out)
	}
	cfg.ModelPath = opts.model
	cfg.Load = func() (*automaton.Model, *guard.Policy, error) { return serve.LoadFiles(opts.model, opts.policy) }
	errOut := &syncWriter{w: streams.Err}
	if opts.log != "" && !opts.check {
		cfg.Log = streams.Out
		if opts.log != "-" {
			f, err := serve.OpenLog(opts.log)
			if err != nil {
				return err
			}
			defer f.Close() // after s.Close, which flushes and syncs the log
			cfg.Log, cfg.LogSync = f, f.Sync
		}
		cfg.LogError = func(err error) { fmt.Fprintf(errOut, "fsmine: %v\n", err) }
	}
	s, err := serve.New(m, p, cfg)
	if err != nil {
		return err
	}
	if opts.check {
		defer s.Close()
		src := "built-in defaults"
		if opts.policy != "" {
			src = opts.policy
		}
		return s.WriteCheck(termSafe(streams.Out), opts.model, src)
	}

	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		s.Close()
		return err
	}
	addr := ln.Addr().String()
	if !isLoopback(opts.addr) && cfg.Token == "" {
		fmt.Fprintf(errOut, "fsmine serve: warning: listening on %s without a token: anyone who can reach it can read and steer sessions\n", addr)
	}
	info := s.Info()
	mode := guard.ModeEnforce
	if s.Guard().Policy().Monitor() {
		mode = guard.ModeMonitor
	}
	fmt.Fprintf(errOut, "fsmine serve: %s version %d (%s), %s mode, on http://%s\n", opts.model, info.Version, text.ShortDigest(info.Digest), mode, addr)

	defer tuneServeGC()()

	handleSignals()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	// Serve answers until ctx is done, then lets the requests in flight
	// finish
	serveErr := make(chan error, 1)
	go func() { serveErr <- s.Serve(ctx, ln) }()
	if opts.ready != nil {
		opts.ready(addr)
	}
	var runErr error
	for served := false; !served; {
		select {
		case runErr = <-serveErr:
			served = true
		case <-hup:
			if res, err := s.Reload(); err != nil {
				fmt.Fprintf(errOut, "fsmine: reload on SIGHUP: %v\n", err)
			} else {
				fmt.Fprintf(errOut, "fsmine serve: reloaded version %d (%s): %d sessions kept, %d remapped, %d dropped\n",
					res.Version, text.ShortDigest(res.Digest), res.Sessions.Kept, res.Sessions.Remapped, res.Sessions.Dropped)
			}
		}
	}
	if err := s.Close(); err != nil && runErr == nil {
		runErr = err
	}
	st := s.Stats()
	msg := fmt.Sprintf("fsmine serve: stopped after %d decisions", st.Decisions)
	if cfg.Log != nil {
		msg += fmt.Sprintf("; %d lines in the decision log", st.LogLines)
	}
	fmt.Fprintln(errOut, msg)
	return runErr
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

// syncWriter serialises writes to a stream shared by goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
