package serve

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/guard"
	"github.com/fsmine/fsmine/automaton/serve/servetest"
)

const (
	fixtureModel  = "../guard/testdata/returns.json"
	fixturePolicy = "../guard/testdata/returns.policy.json"
)

type testServer struct {
	*httptest.Server
	srv                   *Server
	log                   *servetest.Buffer
	modelPath, policyPath string
}

// newTestServer serves copies of the fixture model and policy (so that a
// test may rewrite them for a reload) with a decision log in memory.
func newTestServer(t *testing.T, token string) *testServer {
	t.Helper()
	dir := t.TempDir()
	modelPath, policyPath := filepath.Join(dir, "model.json"), filepath.Join(dir, "policy.json")
	for src, dst := range map[string]string{fixtureModel: modelPath, fixturePolicy: policyPath} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return startTestServer(t, modelPath, policyPath, Config{Token: token})
}

// startTestServer serves the model and policy files under cfg, with
// Load reading them again and a decision log in memory, over httptest.
func startTestServer(t *testing.T, modelPath, policyPath string, cfg Config) *testServer {
	t.Helper()
	m, p, err := LoadFiles(modelPath, policyPath)
	if err != nil {
		t.Fatal(err)
	}
	buf := &servetest.Buffer{}
	cfg.ModelPath = modelPath
	cfg.Load = func() (*automaton.Model, *guard.Policy, error) { return LoadFiles(modelPath, policyPath) }
	cfg.Log = buf
	s, err := New(m, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		s.Close()
	})
	return &testServer{Server: ts, srv: s, log: buf, modelPath: modelPath, policyPath: policyPath}
}

// do sends a request and returns the status, the Allow header and the body.
func (ts *testServer) do(t *testing.T, method, path, body, token string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func TestServeRoutes(t *testing.T) {
	ts := newTestServer(t, "")
	ts.do(t, "POST", "/v1/sessions/known/steps", `{"event":"","next":"agent_msg"}`, "")
	ts.do(t, "POST", "/v1/sessions/gone/steps", `{"event":"","next":"agent_msg"}`, "")
	tests := []struct {
		name, method, path, body string
		code                     int
		want                     string // a substring of the body
		allow                    string
	}{
		{"first step", "POST", "/v1/sessions/s1/steps", `{"event":"","next":"agent_msg"}`, 200, `"allowed":true,"reason":"","state":"greet","label":"agent_msg"`, ""},
		{"event may be left out", "POST", "/v1/sessions/s2/steps", `{"next":"agent_msg"}`, 200, `"allowed":true`, ""},
		{"denied step is a 200", "POST", "/v1/sessions/known/steps", `{"event":"agent","next":"get_order_details"}`, 200, `"allowed":false,"reason":"illegal_transition","state":"greet"`, ""},
		{"unknown state", "POST", "/v1/sessions/s3/steps", `{"event":"","next":"nope"}`, 200, `"reason":"unknown_state"`, ""},
		{"escaped session id", "POST", "/v1/sessions/a%2Fb/steps", `{"next":"agent_msg"}`, 200, `"session_id":"a/b"`, ""},
		{"not json", "POST", "/v1/sessions/s/steps", `next=agent_msg`, 400, `bad step body`, ""},
		{"empty body", "POST", "/v1/sessions/s/steps", ``, 400, `empty step body`, ""},
		{"missing next", "POST", "/v1/sessions/s/steps", `{"event":"ok"}`, 400, `\"next\" is required`, ""},
		{"empty next", "POST", "/v1/sessions/s/steps", `{"event":"ok","next":""}`, 400, `\"next\" is required`, ""},
		{"unknown field", "POST", "/v1/sessions/s/steps", `{"event":"ok","nxt":"x"}`, 400, `unknown field \"nxt\"`, ""},
		{"wrong type", "POST", "/v1/sessions/s/steps", `{"event":1,"next":"x"}`, 400, `bad step body`, ""},
		{"two values", "POST", "/v1/sessions/s/steps", `{"next":"x"} {"next":"y"}`, 400, `more than one JSON value`, ""},
		{"null event", "POST", "/v1/sessions/s/steps", `{"event":null,"next":"agent_msg"}`, 400, `\"event\" is null`, ""},
		{"null event in other case", "POST", "/v1/sessions/s/steps", `{"next":"agent_msg","Event":null}`, 400, `unknown field \"Event\"`, ""},
		{"key in other case", "POST", "/v1/sessions/s/steps", `{"NEXT":"agent_msg"}`, 400, `unknown field \"NEXT\"`, ""},
		{"next twice", "POST", "/v1/sessions/s/steps", `{"next":"agent_msg","next":"greet"}`, 400, `\"next\" is given twice`, ""},
		{"slots twice", "POST", "/v1/sessions/s/steps", `{"next":"agent_msg","slots":{},"slots":{}}`, 400, `\"slots\" is given twice`, ""},
		{"slot value too long", "POST", "/v1/sessions/s/steps", `{"next":"agent_msg","slots":{"note":"` + strings.Repeat("x", 5000) + `"}}`, 400, `slots[\"note\"] is 5000 bytes long, at most 4096 allowed`, ""},
		{"session id not UTF-8", "POST", "/v1/sessions/z%FF/steps", `{"next":"agent_msg"}`, 400, `session id is not valid UTF-8`, ""},
		{"session id with a control character", "POST", "/v1/sessions/a%00b/steps", `{"next":"agent_msg"}`, 400, `session id holds the control character U+0000`, ""},
		{"long unknown path", "GET", "/" + strings.Repeat("p", 5000), ``, 404, `…`, ""},
		{"an argument given twice", "POST", "/v1/sessions/s/steps", `{"next":"agent_msg","args":{"to":"a@x","to":"b@y"}}`, 400, `bad step body: args: the key \"to\" is given twice`, ""},
		{"a nested argument given twice", "POST", "/v1/sessions/s/steps", `{"next":"agent_msg","args":{"mail":{"to":"a@x","to":"b@y"}}}`, 400, `the key \"to\" is given twice in mail`, ""},
		{"seen given twice", "POST", "/v1/sessions/s/steps", `{"next":"agent_msg","seen":{"user_msg":"a","user_msg":"b"}}`, 400, `bad step body: seen: the key \"user_msg\" is given twice`, ""},
		{"next a number", "POST", "/v1/sessions/s/steps", `{"next":5}`, 400, `\"next\" is a number; want a string`, ""},
		{"body an array", "POST", "/v1/sessions/s/steps", `[]`, 400, `bad step body: an array; want {`, ""},
		{"unknown long next", "POST", "/v1/sessions/s/steps", `{"next":"` + strings.Repeat("x", 2000) + `"}`, 400, `\"next\" is 2000 bytes long, at most 1024 allowed`, ""},
		{"next not UTF-8", "POST", "/v1/sessions/s/steps", "{\"next\":\"a\xffb\"}", 400, `bad step body: not valid UTF-8`, ""},
		{"next half a surrogate pair", "POST", "/v1/sessions/s/steps", `{"next":"a\ud800"}`, 400, `bad step body: a string holds \\ud800, half of a UTF-16 surrogate pair`, ""},
		{"event with a control character", "POST", "/v1/sessions/s/steps", `{"event":"a\u0007","next":"agent_msg"}`, 400, `\"event\" holds the control character U+0007`, ""},
		{"body too large", "POST", "/v1/sessions/s/steps", `{"next":"` + strings.Repeat("x", 70<<10) + `"}`, 413, `larger than 65536 bytes`, ""},
		{"session id too long", "POST", "/v1/sessions/" + strings.Repeat("x", 300) + "/steps", `{"next":"x"}`, 400, `session id is 300 bytes long`, ""},
		{"session", "GET", "/v1/sessions/known", ``, 200, `"state":"greet","label":"agent_msg","steps":2,"turns":2,"last_seen"`, ""},
		{"no session", "GET", "/v1/sessions/nobody", ``, 404, `no live session \"nobody\"`, ""},
		{"delete", "DELETE", "/v1/sessions/gone", ``, 204, ``, ""},
		{"delete again", "DELETE", "/v1/sessions/gone", ``, 404, `no live session \"gone\"`, ""},
		{"model", "GET", "/v1/model", ``, 200, `"version":1,"digest":"sha256:`, ""},
		{"model policy", "GET", "/v1/model", ``, 200, `"watchdog":{"max_turns":3,"fallback":{"event":"escalate","to":"human","label":"transfer_to_human_agents"}}`, ""},
		{"health", "GET", "/healthz", ``, 200, `{"status":"ok","log_errors":0}`, ""},
		{"metrics", "GET", "/metrics", ``, 200, `fsmine_guard_decisions_total{allowed="false",reason="illegal_transition"} 1`, ""},
		{"unknown route", "GET", "/v2/nothing", ``, 404, `{"error":"no route GET /v2/nothing"}`, ""},
		{"trailing slash", "GET", "/v1/model/", ``, 404, `no route`, ""},
		{"wrong method on steps", "GET", "/v1/sessions/s/steps", ``, 405, `method GET not allowed on /v1/sessions/s/steps (allowed: POST)`, "POST"},
		{"wrong method on session", "PUT", "/v1/sessions/s", ``, 405, `not allowed`, "GET, DELETE, HEAD"},
		{"wrong method on health", "POST", "/healthz", ``, 405, `not allowed`, "GET, HEAD"},
		{"wrong method on reload", "GET", "/v1/model/reload", ``, 405, `not allowed`, "POST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, h, body := ts.do(t, tt.method, tt.path, tt.body, "")
			if code != tt.code || !strings.Contains(body, tt.want) {
				t.Errorf("%s %s = %d %s, want %d containing %s", tt.method, tt.path, code, body, tt.code, tt.want)
			}
			if got := h.Get("Allow"); got != tt.allow {
				t.Errorf("Allow = %q, want %q", got, tt.allow)
			}
			if code != 204 {
				wantType := "application/json"
				if tt.path == "/metrics" {
					wantType = "text/plain; version=0.0.4; charset=utf-8"
				}
				if got := h.Get("Content-Type"); got != wantType {
					t.Errorf("Content-Type = %q, want %q", got, wantType)
				}
			}
		})
	}
}

func TestServeToken(t *testing.T) {
	ts := newTestServer(t, "s3cret")
	tests := []struct {
		name, method, path, token string
		code                      int
	}{
		{"no token", "GET", "/v1/model", "", 401},
		{"wrong token", "GET", "/v1/model", "guess", 401},
		{"right token", "GET", "/v1/model", "s3cret", 200},
		{"steps need it", "POST", "/v1/sessions/s/steps", "", 401},
		{"metrics need it", "GET", "/metrics", "", 401},
		{"unknown routes need it", "GET", "/nope", "", 401},
		{"health does not", "GET", "/healthz", "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, h, body := ts.do(t, tt.method, tt.path, `{"next":"agent_msg"}`, tt.token)
			if code != tt.code {
				t.Errorf("%s %s = %d %s, want %d", tt.method, tt.path, code, body, tt.code)
			}
			if code == 401 && (h.Get("WWW-Authenticate") == "" || !strings.Contains(body, "bearer token")) {
				t.Errorf("401 without a challenge or a JSON error: %v %s", h, body)
			}
		})
	}
}

// TestServeFlow drives the README's returns flow (a denied step, a loop cap
// and the watchdog's fallback) and checks the decision log it leaves.
func TestServeFlow(t *testing.T) {
	ts := newTestServer(t, "")
	steps := []struct{ event, next, want string }{
		{"", "agent_msg", `"allowed":true,"reason":"","state":"greet"`},
		{"agent", "get_order_details", `"allowed":false,"reason":"illegal_transition","state":"greet"`},
		{"agent", "find_user_id_by_email", `"allowed":true,"reason":"","state":"find"`},
		{"ok", "get_order_details", `"allowed":true,"reason":"","state":"order"`},
		{"ok", "get_order_details", `"allowed":true,"reason":"","state":"order"`},
		{"ok", "get_order_details", `"allowed":true,"reason":"","state":"order"`},
		{"ok", "get_order_details", `"allowed":false,"reason":"watchdog","state":"human"`},
		{"ok", "__end__", `"allowed":true,"reason":"","state":"__end__"`},
	}
	for i, s := range steps {
		body := fmt.Sprintf(`{"event":%q,"next":%q}`, s.event, s.next)
		code, _, got := ts.do(t, "POST", "/v1/sessions/r1/steps", body, "")
		if code != 200 || !strings.Contains(got, s.want) {
			t.Fatalf("step %d %s = %d %s, want %s", i, body, code, got, s.want)
		}
	}
	if err := ts.srv.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range servetest.ParseDecisionLog(t, ts.log.String()) {
		got = append(got, fmt.Sprintf("%d %s -%s- %v %s %s", l.Step, l.Node, l.Event, l.Verdict.Allowed, l.Verdict.Reason, l.Verdict.State))
	}
	want := []string{
		// a line's event is its node's outcome, from the session's next step
		"0 agent_msg -agent- true  greet",
		"1 get_order_details -agent- false illegal_transition greet",
		"2 find_user_id_by_email -ok- true  find",
		"3 get_order_details -ok- true  order",
		"4 get_order_details -ok- true  order",
		"5 get_order_details -ok- true  order",
		"6 get_order_details -ok- false watchdog human",
		"7 __end__ -- true  __end__",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("decision log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestServeReload(t *testing.T) {
	ts := newTestServer(t, "")
	ts.do(t, "POST", "/v1/sessions/s/steps", `{"next":"agent_msg"}`, "")
	// version 2 of the model: same states, a new version number
	b, err := os.ReadFile(ts.modelPath)
	if err != nil {
		t.Fatal(err)
	}
	v2 := bytes.Replace(b, []byte(`"version": 1,`), []byte(`"version": 2,`), 1)
	if err := os.WriteFile(ts.modelPath, v2, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, body := ts.do(t, "POST", "/v1/model/reload", "", "")
	if code != 200 || !strings.Contains(body, `"version":2`) || !strings.Contains(body, `"previous":{"version":1`) || !strings.Contains(body, `"sessions":{"kept":1,"remapped":0,"dropped":0}`) {
		t.Fatalf("reload = %d %s", code, body)
	}
	// the live session goes on under version 2
	if code, _, body := ts.do(t, "POST", "/v1/sessions/s/steps", `{"event":"agent","next":"find_user_id_by_email"}`, ""); code != 200 || !strings.Contains(body, `"allowed":true`) {
		t.Errorf("step after reload = %d %s", code, body)
	}
	// a broken model file is refused and version 2 stays in force
	if err := os.WriteFile(ts.modelPath, []byte(`{"schema":"fsmine.automaton/v1","initial":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, body = ts.do(t, "POST", "/v1/model/reload", "", "")
	if code != 500 || !strings.Contains(body, "still enforcing version 2") {
		t.Errorf("reload of a broken model = %d %s, want 500 naming version 2", code, body)
	}
	// a policy that no longer fits is refused too
	if err := os.WriteFile(ts.modelPath, v2, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ts.policyPath, []byte(`{"watchdog":{"max_turns":2,"fallback":{"to":"manager"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, body = ts.do(t, "POST", "/v1/model/reload", "", "")
	if code != 500 || !strings.Contains(body, `state \"manager\" is not in the model`) {
		t.Errorf("reload with a bad policy = %d %s", code, body)
	}
	_, _, metrics := ts.do(t, "GET", "/metrics", "", "")
	for _, want := range []string{
		`fsmine_guard_model_reloads_total{result="error"} 2`,
		`fsmine_guard_model_reloads_total{result="ok"} 1`,
		`fsmine_guard_model_info{version="2",digest="sha256:`,
		`fsmine_guard_sessions 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestServeMetricsFormat(t *testing.T) {
	ts := newTestServer(t, "")
	for i := 0; i < 3; i++ {
		ts.do(t, "POST", fmt.Sprintf("/v1/sessions/m%d/steps", i), `{"next":"agent_msg"}`, "")
	}
	ts.do(t, "POST", "/v1/sessions/m0/steps", `{"next":"nope"}`, "")
	_, _, text := ts.do(t, "GET", "/metrics", "", "")
	// every sample belongs to a family declared with HELP and TYPE, and the
	// histogram's buckets are cumulative up to its count
	declared := map[string]string{}
	var last int64 = -1
	var count int64
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(line, "# TYPE ") {
			f := strings.Fields(line)
			declared[f[2]] = f[3]
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if _, ok := declared[base]; !ok {
			t.Errorf("sample %q has no TYPE line before it", line)
		}
		var v int64
		if name == "fsmine_guard_decision_duration_seconds_bucket" {
			fmt.Sscan(line[strings.LastIndex(line, " ")+1:], &v)
			if v < last {
				t.Errorf("bucket %q is below the previous one", line)
			}
			last = v
		}
		if name == "fsmine_guard_decision_duration_seconds_count" {
			fmt.Sscan(line[strings.LastIndex(line, " ")+1:], &count)
		}
	}
	if count != 4 || last != 4 {
		t.Errorf("histogram count %d, +Inf bucket %d, want 4 and 4", count, last)
	}
	for _, want := range []string{
		`fsmine_guard_decisions_total{allowed="true",reason=""} 3`,
		`fsmine_guard_decisions_total{allowed="false",reason="unknown_state"} 1`,
		`fsmine_guard_sessions 3`,
		`fsmine_guard_log_lines_total`,
		`fsmine_guard_http_responses_total{code="200"} 4`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// FuzzDecodeStep feeds the step decoder arbitrary bodies: it must not panic,
// and what it accepts has a non-empty next and an event.
func FuzzDecodeStep(f *testing.F) {
	for _, s := range []string{`{"event":"ok","next":"x"}`, `{"next":"x"}`, `{"event":1}`, ``, `{} {}`, `{"next":"\u00e9\ud800"}`, `[`, `{"next":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeStep(body)
		if err != nil {
			return
		}
		if req.Next == nil || *req.Next == "" || req.Event == nil {
			t.Fatalf("decodeStep(%q) accepted %+v", body, req)
		}
	})
}

func TestNewRefusesNegativeBounds(t *testing.T) {
	m, p, err := LoadFiles(fixtureModel, fixturePolicy)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		set  func(*Config)
	}{
		{"TTL", func(c *Config) { c.TTL = -1 }},
		{"MaxSessions", func(c *Config) { c.MaxSessions = -1 }},
		{"History", func(c *Config) { c.History = -1 }},
		{"LogHold", func(c *Config) { c.LogHold = -1 }},
		{"ReadTimeout", func(c *Config) { c.ReadTimeout = -1 }},
		{"IdleTimeout", func(c *Config) { c.IdleTimeout = -1 }},
		{"MaxConns", func(c *Config) { c.MaxConns = -1 }},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		tt.set(&cfg)
		s, err := New(m, p, cfg)
		if want := "serve: Config." + tt.name + " is negative"; err == nil || err.Error() != want {
			t.Errorf("New with a negative %s: %v, want %q", tt.name, err, want)
		}
		if s != nil {
			s.Close()
		}
	}
}

// TestReloadWithoutLoad: a Server with no Config.Load refuses reloads and
// keeps its model.
func TestReloadWithoutLoad(t *testing.T) {
	s := fixtureServer(t, Config{})
	defer s.Close()
	_, err := s.Reload()
	if err == nil || !strings.Contains(err.Error(), "no Config.Load to read the model again; still enforcing version 1 (sha256:") {
		t.Errorf("Reload = %v, want a refusal naming version 1", err)
	}
}

// TestReloadNilPolicy: a Config.Load that gives no policy puts the
// defaults in force, as New takes a nil policy. Reload kept the policy in
// force instead: a policy file taken away stayed enforced.
func TestReloadNilPolicy(t *testing.T) {
	m, p, err := LoadFiles(fixtureModel, fixturePolicy)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Load: func() (*automaton.Model, *guard.Policy, error) { return m, nil, nil }}
	s, err := New(m, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Guard().Policy().Watchdog == nil {
		t.Fatal("the fixture policy has no watchdog")
	}
	if _, err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := s.Guard().Policy(); got.Watchdog != nil || len(got.LoopCaps) > 0 {
		t.Errorf("after a reload without a policy, the policy in force is %+v, want the defaults", got)
	}
}

// TestStepAfterClose: a step that comes after Close is refused, and steps
// racing with Close neither panic nor lose count of their lines.
func TestStepAfterClose(t *testing.T) {
	ts := newTestServer(t, "")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				body := strings.NewReader(`{"event":"","next":"agent_msg"}`)
				resp, err := ts.Client().Post(fmt.Sprintf("%s/v1/sessions/r%d-%d/steps", ts.URL, i, j), "application/json", body)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}
		}()
	}
	if err := ts.srv.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	wg.Wait()
	code, _, body := ts.do(t, "POST", "/v1/sessions/late/steps", `{"event":"","next":"agent_msg"}`, "")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "closed") {
		t.Errorf("step after Close: %d %s, want 503 naming the close", code, body)
	}
	st := ts.srv.Stats()
	if st.LogLines+st.LogErrors != st.Decisions {
		t.Errorf("%d decisions, %d lines written and %d not: every decision must be one or the other", st.Decisions, st.LogLines, st.LogErrors)
	}
}

// TestServeMaxUnusual: a policy's max_unusual and max_unusual_run are
// named by GET /v1/model; without them the answer leaves them out.
func TestServeMaxUnusual(t *testing.T) {
	dir := t.TempDir()
	modelPath, policyPath := filepath.Join(dir, "model.json"), filepath.Join(dir, "policy.json")
	b, err := os.ReadFile(fixtureModel)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(modelPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policyPath, []byte(`{"max_unusual": 2, "max_unusual_run": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := startTestServer(t, modelPath, policyPath, Config{})
	if code, _, body := ts.do(t, "GET", "/v1/model", "", ""); code != 200 || !strings.Contains(body, `"max_unusual":2,"max_unusual_run":1`) {
		t.Errorf("GET /v1/model: %d %s; want max_unusual 2, max_unusual_run 1", code, body)
	}
	if code, _, body := newTestServer(t, "").do(t, "GET", "/v1/model", "", ""); code != 200 || strings.Contains(body, "max_unusual") {
		t.Errorf("GET /v1/model without the cap: %d %s; want no max_unusual", code, body)
	}
}

// fixtureServer is a Server of the fixture's model and policy under cfg.
func fixtureServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	m, p, err := LoadFiles(fixtureModel, fixturePolicy)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(m, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
