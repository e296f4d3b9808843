package serve

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/guard"
)

// TestServeBy serves the fixture conditioned on one value, "strict", whose
// sub-map lacks the fixture's find -error-> human: a session whose first
// step names the value in the X-Fsmine-By header is denied that move, one
// without the header (or with the value only on a later step) is not.
func TestServeBy(t *testing.T) {
	m, err := automaton.Load(fixtureModel)
	if err != nil {
		t.Fatal(err)
	}
	sub := *m
	sub.Transitions = nil
	for _, tr := range m.Transitions {
		if tr.From != "find" || tr.Event != "error" {
			sub.Transitions = append(sub.Transitions, tr)
		}
	}
	sub.Source.Sessions = 5
	m.By = &automaton.By{Field: "attrs.task", MinSessions: 5, Values: 1, Maps: []automaton.SubMap{automaton.NewSubMap("strict", &sub)}}
	m.Digest = m.ComputeDigest()
	path := filepath.Join(t.TempDir(), "by.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ts := startTestServer(t, path, "", Config{})
	step := func(id, value, body string) guard.Decision {
		t.Helper()
		req, err := http.NewRequest("POST", ts.URL+"/v1/sessions/"+id+"/steps", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if value != "" {
			req.Header.Set(ByHeader, value)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var d guard.Decision
		if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d, %v", resp.StatusCode, err)
		}
		return d
	}
	tests := []struct {
		id, first, later string
		allowed          bool
		mapName          string
	}{
		{"a", "strict", "strict", false, "by:strict"},
		{"b", "", "strict", true, automaton.SharedMap},
		{"c", "other", "", true, automaton.SharedMap},
	}
	for _, tt := range tests {
		step(tt.id, tt.first, `{"event":"","next":"agent_msg"}`)
		step(tt.id, tt.later, `{"event":"agent","next":"find_user_id_by_email"}`)
		d := step(tt.id, tt.later, `{"event":"error","next":"transfer_to_human_agents"}`)
		if d.Allowed != tt.allowed || d.Map != tt.mapName {
			t.Errorf("session %s: allowed %v (%s), map %q; want %v, %q", tt.id, d.Allowed, d.Reason, d.Map, tt.allowed, tt.mapName)
		}
	}
	// Two values of the header are refused: a proxy might read the other.
	req, err := http.NewRequest("POST", ts.URL+"/v1/sessions/d/steps", strings.NewReader(`{"next":"agent_msg"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Add(ByHeader, "strict")
	req.Header.Add(ByHeader, "other")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Error string }
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || resp.StatusCode != http.StatusBadRequest ||
		e.Error != "the X-Fsmine-By header is given 2 times: give it once" {
		t.Errorf("two headers: status %d, %q, %v", resp.StatusCode, e.Error, err)
	}
	resp.Body.Close()
	// The decision log names the map on a session's first line.
	ts.srv.Close()
	if log := ts.log.String(); !strings.Contains(log, `"session_id":"a","step":0,`) || !strings.Contains(log, `"state":"greet","map":"by:strict"}`) || strings.Count(log, `"map"`) != 3 {
		t.Errorf("decision log without the map:\n%s", log)
	}
}
