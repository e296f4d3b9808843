package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/serve"
	"github.com/fsmine/fsmine/mine"
)

// TestServeTau2EndToEnd mines a model from the tau2 retail sessions, replays
// every session through the real service (all 80 must pass: the caps are
// the observed maxima), and re-mines the decision log: the model must come
// back with the same digest. It skips when the shared data is absent.
func TestServeTau2EndToEnd(t *testing.T) {
	data := "../../shared/data/jsonl/tau2_retail.jsonl"
	if _, err := os.Stat(data); err != nil {
		t.Skipf("no shared data: %v", err)
	}
	dir := t.TempDir()
	modelPath := filepath.Join(dir, "tau2.model.json")
	labels := "../testdata/tau2_retail.labels.json"
	var stderr bytes.Buffer
	if code := Run(context.Background(), []string{"build", data, "--labels", labels, "-o", modelPath}, IO{In: strings.NewReader(""), Out: io.Discard, Err: &stderr}); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr.String())
	}
	m, err := automaton.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}

	// the sessions as the model saw them
	rb, err := os.ReadFile(labels)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := mine.ParseRules(rb)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := mine.Read([]mine.Input{{Name: data, Open: func() (io.ReadCloser, error) { return os.Open(data) }}}, mine.ReadOptions{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}

	ls := startServe(t, serveOptions{model: modelPath, policy: "", cfg: serve.Config{MaxSessions: 1000}})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		steps   int
		denials []string
	)
	sem := make(chan struct{}, 16)
	for i := range lg.Sessions {
		s := &lg.Sessions[i]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			for k, mv := range lg.Moves(s) {
				body := fmt.Sprintf(`{"event":%q,"next":%q}`, mv.Event, mv.Label)
				resp, err := client.Post(ls.url+"/v1/sessions/"+s.ID+"/steps", "application/json", strings.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				steps++
				if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"allowed":true,"reason":""`)) {
					denials = append(denials, fmt.Sprintf("%s move %d %s: %d %s", s.ID, k, body, resp.StatusCode, b))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ls.stop(); err != nil {
		t.Fatal(err)
	}
	if len(denials) > 0 {
		t.Fatalf("%d of %d moves of the training sessions denied; first: %s", len(denials), steps, denials[0])
	}
	t.Logf("replayed %d sessions, %d moves, all allowed", len(lg.Sessions), steps)

	remined := filepath.Join(dir, "remined.json")
	stderr.Reset()
	if code := Run(context.Background(), []string{"build", ls.log, "-o", remined}, IO{In: strings.NewReader(""), Out: io.Discard, Err: &stderr}); code != 0 {
		t.Fatalf("build of the decision log: exit %d: %s", code, stderr.String())
	}
	m2, err := automaton.Load(remined)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("build of the decision log: %s", stderr.String())
	if m2.Digest != m.Digest {
		t.Errorf("re-mined model digest %s, want the original %s\nbuild said:\n%s", m2.Digest, m.Digest, stderr.String())
	}
}
