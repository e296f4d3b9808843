package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsmine/fsmine/automaton/serve/servetest"
)

// liveServer is the real service, started by runServe on 127.0.0.1:0.
type liveServer struct {
	url    string
	log    string
	done   chan struct{} // closed when runServe returned
	err    error         // what it returned
	cancel context.CancelFunc
	stderr *servetest.Buffer
}

func startServe(t testing.TB, opts serveOptions) *liveServer {
	t.Helper()
	ls := &liveServer{log: filepath.Join(t.TempDir(), "decisions.jsonl"), done: make(chan struct{}), stderr: &servetest.Buffer{}}
	opts.addr = "127.0.0.1:0"
	opts.log = ls.log
	if opts.model == "" {
		opts.model, opts.policy = fixtureModel, fixturePolicy
	}
	switch {
	case opts.cfg.TTL == 0:
		opts.cfg.TTL = 30 * time.Minute
	case opts.cfg.TTL < 0: // no TTL
		opts.cfg.TTL = 0
	}
	if opts.cfg.History == 0 {
		opts.cfg.History = 16
	}
	ready := make(chan string, 1)
	opts.ready = func(addr string) { ready <- addr }
	ctx, cancel := context.WithCancel(context.Background())
	ls.cancel = cancel
	go func() {
		ls.err = runServe(ctx, opts, IO{Out: io.Discard, Err: ls.stderr})
		close(ls.done)
	}()
	select {
	case addr := <-ready:
		ls.url = "http://" + addr
	case <-ls.done:
		t.Fatalf("serve did not start: %v\n%s", ls.err, ls.stderr.String())
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-ls.done:
		case <-time.After(30 * time.Second):
		}
	})
	return ls
}

// stop shuts the service down as SIGINT would and returns runServe's error.
func (ls *liveServer) stop() error {
	ls.cancel()
	<-ls.done
	return ls.err
}

var loadLabels = []string{"agent_msg", "find_user_id_by_email", "get_order_details", "return_delivered_order_items", "transfer_to_human_agents", "__end__", "no_such_tool"}

type stepAnswer struct {
	Step      int    `json:"step"`
	Allowed   bool   `json:"allowed"`
	Reason    string `json:"reason"`
	State     string `json:"state"`
	NextMoves []struct {
		Event string `json:"event"`
		Label string `json:"label"`
	} `json:"next_moves"`
}

// driveSession walks one session for at most steps requests: mostly along
// the moves the guard offers, sometimes off the map. It returns the answers
// it got (keyed by step) and stops at the first failed request.
func driveSession(client *http.Client, url, id string, steps int, seed uint64, answered *atomic.Int64) (map[int]stepAnswer, error) {
	rng := rand.New(rand.NewPCG(seed, 7))
	answers := make(map[int]stepAnswer, steps)
	event, next := "", "agent_msg"
	for i := 0; i < steps; i++ {
		body := fmt.Sprintf(`{"event":%q,"next":%q}`, event, next)
		resp, err := client.Post(url+"/v1/sessions/"+id+"/steps", "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			return answers, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return answers, err
		}
		if resp.StatusCode != 200 {
			return answers, fmt.Errorf("%s step %d: %d %s", id, i, resp.StatusCode, b)
		}
		var a stepAnswer
		if err := json.Unmarshal(b, &a); err != nil {
			return answers, err
		}
		answers[a.Step] = a
		if answered != nil {
			answered.Add(1)
		}
		if len(a.NextMoves) > 0 && rng.IntN(10) < 8 {
			m := a.NextMoves[rng.IntN(len(a.NextMoves))]
			event, next = m.Event, m.Label
		} else {
			event, next = "ok", loadLabels[rng.IntN(len(loadLabels))]
		}
	}
	return answers, nil
}

// driveSessions drives n sessions named prefix-NN concurrently through the
// service at url, steps steps each (see driveSession), and returns a
// function that waits for them and gives their answers and the errors the
// sessions met.
func driveSessions(url, prefix string, n, steps int, answered *atomic.Int64) (wait func() (map[string]map[int]stepAnswer, []error)) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	var (
		mu      sync.Mutex
		answers = make(map[string]map[int]stepAnswer)
		errs    []error
		wg      sync.WaitGroup
	)
	for s := 0; s < n; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			id := fmt.Sprintf("%s-%02d", prefix, s)
			as, err := driveSession(client, url, id, steps, uint64(s), answered)
			mu.Lock()
			defer mu.Unlock()
			answers[id] = as
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", id, err))
			}
		}(s)
	}
	return func() (map[string]map[int]stepAnswer, []error) {
		wg.Wait()
		return answers, errs
	}
}

// checkDecisionLog compares the decision log with the answers the clients got: one
// line per answered request, with the same verdict.
func checkDecisionLog(t *testing.T, path string, answers map[string]map[int]stepAnswer) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := servetest.ParseDecisionLog(t, string(b))
	want := 0
	for _, as := range answers {
		want += len(as)
	}
	if len(lines) != want {
		t.Errorf("decision log has %d lines, want one per answered request: %d", len(lines), want)
	}
	seen := make(map[string]bool, len(lines))
	for _, l := range lines {
		key := fmt.Sprintf("%s/%d", l.SessionID, l.Step)
		if seen[key] {
			t.Errorf("decision %s logged twice", key)
		}
		seen[key] = true
		a, ok := answers[l.SessionID][l.Step]
		if !ok {
			t.Errorf("decision %s logged, but no client got its answer", key)
			continue
		}
		if a.Allowed != l.Verdict.Allowed || a.Reason != l.Verdict.Reason || a.State != l.Verdict.State {
			t.Errorf("decision %s: logged %+v, answered %+v", key, l.Verdict, a)
		}
	}
}

// TestServeLoad starts the real service, drives 50 sessions of 40 steps
// concurrently, shuts it down gracefully and checks that no request failed
// and that the decision log holds exactly one line per request.
func TestServeLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("50 sessions of 40 steps over HTTP: skipped in -short mode")
	}
	const sessions, steps = 50, 40
	ls := startServe(t, serveOptions{})
	answers, errs := driveSessions(ls.url, "load", sessions, steps, nil)()
	for _, err := range errs {
		t.Error(err)
	}
	if err := ls.stop(); err != nil {
		t.Fatalf("serve: %v\n%s", err, ls.stderr.String())
	}
	total := 0
	for _, as := range answers {
		total += len(as)
	}
	if len(errs) != 0 || total != sessions*steps {
		t.Fatalf("%d sessions failed, %d answers; want 0 and %d", len(errs), total, sessions*steps)
	}
	checkDecisionLog(t, ls.log, answers)
	if want := fmt.Sprintf("stopped after %d decisions; %d lines in the decision log", total, total); !bytes.Contains([]byte(ls.stderr.String()), []byte(want)) {
		t.Errorf("stderr lacks %q:\n%s", want, ls.stderr.String())
	}
}

// TestServeSIGTERMUnderLoad sends the process a real SIGTERM while 50
// sessions are stepping: every request the service answered must be in the
// log, and nothing else.
func TestServeSIGTERMUnderLoad(t *testing.T) {
	const sessions, steps = 50, 40
	ls := startServe(t, serveOptions{})
	var answered atomic.Int64
	wait := driveSessions(ls.url, "term", sessions, steps, &answered)
	for deadline := time.Now().Add(time.Minute); answered.Load() < sessions*steps/4 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-ls.done
	answers, _ := wait() // errors are expected once the service stops
	if err := ls.err; err != nil {
		t.Fatalf("serve: %v", err)
	}
	n := answered.Load()
	t.Logf("%d of %d requests answered before the service stopped", n, sessions*steps)
	if n == 0 || n == sessions*steps {
		t.Fatalf("%d requests answered: SIGTERM did not come under load", n)
	}
	checkDecisionLog(t, ls.log, answers)
}

// TestServeSIGHUP rewrites the model file and sends the process SIGHUP: the
// service must put version 2 in force and keep the live session.
func TestServeSIGHUP(t *testing.T) {
	dir := t.TempDir()
	modelPath := filepath.Join(dir, "model.json")
	b, err := os.ReadFile(fixtureModel)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(modelPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ls := startServe(t, serveOptions{model: modelPath, policy: fixturePolicy})
	client := &http.Client{}
	post := func(body string) string {
		resp, err := client.Post(ls.url+"/v1/sessions/hup/steps", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return string(out)
	}
	post(`{"next":"agent_msg"}`)
	v2 := bytes.Replace(b, []byte(`"version": 1,`), []byte(`"version": 2,`), 1)
	if err := os.WriteFile(modelPath, v2, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	version := ""
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		resp, err := client.Get(ls.url + "/v1/model")
		if err != nil {
			t.Fatal(err)
		}
		var info struct{ Version int }
		json.NewDecoder(resp.Body).Decode(&info)
		resp.Body.Close()
		if version = fmt.Sprint(info.Version); version == "2" {
			break
		}
	}
	if version != "2" {
		t.Fatalf("after SIGHUP the service still enforces version %s", version)
	}
	if got := post(`{"event":"agent","next":"find_user_id_by_email"}`); !strings.Contains(got, `"step":1,"allowed":true`) {
		t.Errorf("the live session did not survive the reload: %s", got)
	}
	if err := ls.stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ls.stderr.String(), "reloaded version 2") {
		t.Errorf("stderr does not report the reload:\n%s", ls.stderr.String())
	}
}
