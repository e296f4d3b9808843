package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// statsSampleModel mines the bundled sample with its label rules.
func statsSampleModel(t *testing.T) (dir, model, log string) {
	t.Helper()
	dir = t.TempDir()
	model = filepath.Join(dir, "m.json")
	log = "../testdata/returns.jsonl"
	if code, _, stderr := checkRun("build", "-q", "--labels", "../testdata/returns.labels.json", "-o", model, log); code != 0 {
		t.Fatal(stderr)
	}
	return dir, model, log
}

func statsJSON(t *testing.T, args ...string) statsReport {
	t.Helper()
	code, out, stderr := checkRun(append([]string{"stats", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r statsReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestStatsLogsReproduceModel: replaying the very logs a model was mined
// from gives back the model's own figures: visits, sessions and dwell per
// state, back-edge counts and loop iterations.
func TestStatsLogsReproduceModel(t *testing.T) {
	_, model, log := statsSampleModel(t)
	m, err := automaton.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	r := statsJSON(t, "--top", "0", model, log)
	if r.From != "logs" || r.Sessions != m.Source.Sessions || r.Fit != r.Sessions || r.Unplaced != 0 {
		t.Fatalf("from %s, %d sessions (%d fit, %d unplaced), want logs, %d, all fit", r.From, r.Sessions, r.Fit, r.Unplaced, m.Source.Sessions)
	}
	if len(r.States) != len(m.States)-2 {
		t.Fatalf("%d states, want %d", len(r.States), len(m.States)-2)
	}
	for _, s := range r.States {
		ms := m.State(s.ID)
		if s.Visits != ms.Visits || s.Sessions != ms.Sessions || !reflect.DeepEqual(s.DwellMS, ms.DwellMS) {
			t.Errorf("%s: visits %d sessions %d dwell %+v; model %d %d %+v", s.ID, s.Visits, s.Sessions, s.DwellMS, ms.Visits, ms.Sessions, ms.DwellMS)
		}
		total := 0
		for _, e := range s.Ends {
			total += e.Sessions
		}
		if total != s.Sessions {
			t.Errorf("%s: endings count %d sessions, want %d", s.ID, total, s.Sessions)
		}
	}
	backs := 0
	for _, e := range r.BackEdges {
		tr := m.Next(e.From, automaton.Move{Event: e.Event, Label: m.State(e.To).Label})
		if tr == nil || !tr.BackEdge || tr.Count != e.Count || tr.Sessions != e.Sessions {
			t.Errorf("back edge %+v does not match the model's %+v", e, tr)
		}
		backs++
	}
	for _, tr := range m.Transitions {
		// The training sessions never take a generalised transition.
		if tr.BackEdge && tr.Generalized == "" {
			backs--
		}
	}
	if backs != 0 {
		t.Errorf("%d back edges more than the model has", backs)
	}
	for i, l := range r.Loops {
		ml := m.Loops[i]
		if l.Count != ml.Count || l.Sessions != ml.Sessions || l.MaxIterations != ml.MaxIterations || l.P95Iterations != ml.P95Iterations {
			t.Errorf("loop %v: %d/%d max %d p95 %d; model %d/%d max %d p95 %d", l.States, l.Count, l.Sessions, l.MaxIterations, l.P95Iterations,
				ml.Count, ml.Sessions, ml.MaxIterations, ml.P95Iterations)
		}
		stays := 0
		for _, h := range l.Histogram {
			stays += h.Stays * h.Iterations
		}
		if stays != l.Count {
			t.Errorf("loop %v: histogram sums to %d iterations, want %d", l.States, stays, l.Count)
		}
	}
	if want := []string{"tokens.prompt", "tokens.completion", "duration_ms"}; !reflect.DeepEqual(r.Measures, want) {
		t.Errorf("measures %v, want %v", r.Measures, want)
	}
	for _, s := range r.States {
		q := s.Measures["tokens.prompt"]
		if q == nil || q.Visits != s.Visits || q.Total <= 0 || q.P50 > q.P95 {
			t.Errorf("%s: tokens.prompt %+v", s.ID, q)
		}
	}
}

func TestStatsModelOnly(t *testing.T) {
	_, model, _ := statsSampleModel(t)
	r := statsJSON(t, model)
	if r.From != "model" || r.EndsFrom != "top_variants" || !(r.EndsCoverage > 0 && r.EndsCoverage <= 1) {
		t.Errorf("from %s, ends from %s covering %v", r.From, r.EndsFrom, r.EndsCoverage)
	}
	if len(r.BackEdges) != 10 || r.BackEdgesAll != 22 {
		t.Errorf("%d back edges listed of %d, want 10 of 22", len(r.BackEdges), r.BackEdgesAll)
	}
	for i := 1; i < len(r.BackEdges); i++ {
		if r.BackEdges[i].Count > r.BackEdges[i-1].Count {
			t.Errorf("back edges not by count: %v", r.BackEdges)
		}
	}
	for _, l := range r.Loops {
		if l.Histogram != nil {
			t.Errorf("a histogram without logs: %v", l)
		}
	}
	_, text, _ := checkRun("stats", model)
	for _, want := range []string{"source    the model alone: 400 sessions", "hottest back edges (top 10 of 22)", "(endings from the model's 10 top variants"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}

func TestStatsExitCodes(t *testing.T) {
	dir, model, log := statsSampleModel(t)
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"model only", []string{model}, 0, ""},
		{"with logs", []string{model, log}, 0, ""},
		{"no args", nil, 2, "fsmine: stats needs a model file"},
		{"bad format", []string{"--format", "csv", model}, 2, `unknown --format "csv"`},
		{"bad top", []string{"--top", "-1", model}, 2, "--top must be 0 or more"},
		{"bad measure", []string{"--measure", "a..b", model, log}, 2, `--measure "a..b"`},
		{"missing model", []string{filepath.Join(dir, "nope.json")}, 2, "no such file"},
		{"log as model", []string{log}, 2, "not an fsmine model"},
		{"no sessions", []string{model, empty}, 2, "no sessions in the input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := checkRun(append([]string{"stats"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.stderr)
			}
		})
	}
}

// TestStatsDeviatingSessions: records the replay cannot place are counted
// apart, and endings say "?" when the session ended lost.
func TestStatsDeviatingSessions(t *testing.T) {
	dir := checkFixture(t)
	r := statsJSON(t, filepath.Join(dir, "m.json"), filepath.Join(dir, "new.jsonl"))
	if r.Sessions != 5 || r.Fit != 1 || r.Unplaced != 1 {
		t.Errorf("%d sessions, %d fit, %d unplaced; want 5, 1, 1 (frobnicate)", r.Sessions, r.Fit, r.Unplaced)
	}
	for _, s := range r.States {
		if s.ID == "greet" {
			// a-fit, b-skip, c-unknown, d-retry end in refund; e-trunc in lookup.
			want := []statsEnd{{"refund", 4, 0.8}, {"lookup", 1, 0.2}}
			if !reflect.DeepEqual(s.Ends, want) {
				t.Errorf("greet ends %v, want %v", s.Ends, want)
			}
		}
	}
}
