package stats

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
)

// tinyLog reads testdata/check/tiny-NAME.jsonl, the small flow of the
// unit tests (see its README): "train", three sessions to mine, or "new",
// one session of each verdict.
func tinyLog(t *testing.T, name string) *mine.Log {
	t.Helper()
	data, err := os.ReadFile("../../testdata/check/tiny-" + name + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lg, _, _ := readLog(t, name+".jsonl", data, nil)
	return lg
}

// readLog reads data as one JSONL input named name, holding every session.
func readLog(t *testing.T, name string, data []byte, rules *mine.Rules) (*mine.Log, []mine.Input, mine.ReadOptions) {
	t.Helper()
	inputs := []mine.Input{{Name: name, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}}
	ropt := mine.ReadOptions{Rules: rules, Strict: true}
	lg, err := mine.Read(inputs, ropt)
	if err != nil {
		t.Fatal(err)
	}
	return lg, inputs, ropt
}

// sampleModel mines the bundled sample with its label rules and measures
// DefaultMeasures on it.
func sampleModel(t *testing.T) (*automaton.Model, *mine.Log, *mine.Measures) {
	t.Helper()
	data, err := os.ReadFile("../../testdata/returns.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rulesData, err := os.ReadFile("../../testdata/returns.labels.json")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := mine.ParseRules(rulesData)
	if err != nil {
		t.Fatal(err)
	}
	lg, inputs, ropt := readLog(t, "returns.jsonl", data, rules)
	m, err := mine.Build(lg, mine.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	m.Version = 1 // as fsmine build gives a first model
	ms, err := mine.Measure(inputs, ropt, lg, DefaultMeasures)
	if err != nil {
		t.Fatal(err)
	}
	return m, lg, ms
}

// tinyModel mines the tiny train log, one state per label and no generalisation.
func tinyModel(t *testing.T) *automaton.Model {
	t.Helper()
	lg := tinyLog(t, "train")
	opt := mine.DefaultOptions()
	opt.Merge, opt.Generalize = mine.MergeLabel, mine.GeneralizeNone
	m, err := mine.Build(lg, opt)
	if err != nil {
		t.Fatal(err)
	}
	m.Version = 1 // as fsmine build gives a first model
	return m
}

// TestFromLogsReproducesModel: replaying the very logs a model was mined
// from gives back the model's own figures: visits, sessions and dwell per
// state, back-edge counts and loop iterations.
func TestFromLogsReproducesModel(t *testing.T) {
	m, lg, ms := sampleModel(t)
	r := FromLogs(m, lg, ms, 0)
	if r.From != "logs" || r.Sessions != m.Source.Sessions || r.Fit != r.Sessions || r.Unplaced != 0 {
		t.Fatalf("from %s, %d sessions (%d fit, %d unplaced), want logs, %d, all fit", r.From, r.Sessions, r.Fit, r.Unplaced, m.Source.Sessions)
	}
	if r.Events != m.Source.Events {
		t.Errorf("%d events, want the model's %d", r.Events, m.Source.Events)
	}
	if len(r.States) != len(m.States)-2 {
		t.Fatalf("%d states, want %d", len(r.States), len(m.States)-2)
	}
	for i, s := range r.States {
		ms := m.State(s.ID)
		if s.Visits != ms.Visits || s.Sessions != ms.Sessions || !reflect.DeepEqual(s.DwellMS, ms.DwellMS) {
			t.Errorf("%s: visits %d sessions %d dwell %+v; model %d %d %+v", s.ID, s.Visits, s.Sessions, s.DwellMS, ms.Visits, ms.Sessions, ms.DwellMS)
		}
		if i > 0 && s.Visits > r.States[i-1].Visits {
			t.Errorf("%s (%d visits) listed after %s (%d)", s.ID, s.Visits, r.States[i-1].ID, r.States[i-1].Visits)
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
	if backs != 0 || r.BackEdgesAll != len(r.BackEdges) {
		t.Errorf("%d back edges more than the model has; %d listed of %d", backs, len(r.BackEdges), r.BackEdgesAll)
	}
	if len(r.Loops) != len(m.Loops) || len(r.Loops) == 0 {
		t.Fatalf("%d loops, want the model's %d (some)", len(r.Loops), len(m.Loops))
	}
	for i, l := range r.Loops {
		ml := m.Loops[i]
		// The model's max_iterations is its cap, the most a stay made or,
		// generalising, more (mine.loopCap).
		if l.Count != ml.Count || l.Sessions != ml.Sessions || l.MaxIterations > ml.MaxIterations || l.P95Iterations != ml.P95Iterations {
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
		if len(s.Examples) == 0 {
			t.Errorf("%s: no examples", s.ID)
		}
	}
	if r.Model.Version != m.Version || r.Model.Digest != m.Digest || r.Model.Path != "" {
		t.Errorf("model %+v, want version %d, digest %s, no path", r.Model, m.Version, m.Digest)
	}
}

func TestFromModel(t *testing.T) {
	m, _, _ := sampleModel(t)
	r := FromModel(m, 10)
	if r.From != "model" || r.EndsFrom != "top_variants" || !(r.EndsCoverage > 0 && r.EndsCoverage <= 1) {
		t.Errorf("from %s, ends from %s covering %v", r.From, r.EndsFrom, r.EndsCoverage)
	}
	if r.Sessions != m.Source.Sessions || r.Events != m.Source.Events || r.Fit != 0 || len(r.Measures) != 0 || r.Measures == nil {
		t.Errorf("%d sessions, %d events, fit %d, measures %#v; want the model's %d, %d, none", r.Sessions, r.Events, r.Fit, r.Measures, m.Source.Sessions, m.Source.Events)
	}
	all := 0
	for _, tr := range m.Transitions {
		if tr.BackEdge && tr.Generalized == "" {
			all++
		}
	}
	if all <= 10 || len(r.BackEdges) != 10 || r.BackEdgesAll != all {
		t.Errorf("%d back edges listed of %d, want 10 of the model's %d (more than 10)", len(r.BackEdges), r.BackEdgesAll, all)
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
	for _, s := range r.States {
		if ms := m.State(s.ID); s.Visits != ms.Visits || s.DwellMS != ms.DwellMS {
			t.Errorf("%s: %d visits, dwell %v; want the model's %d, %v", s.ID, s.Visits, s.DwellMS, ms.Visits, ms.DwellMS)
		}
	}
	r.Model.Path = "m.json"
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"model     m.json  v1 sha256:",
		"source    the model alone: 400 sessions",
		"hottest back edges (top 10 of ",
		"(endings from the model's 10 top variants",
		"example sessions, by state\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

// TestTopBackEdges: top lists the hottest back edges, all of them when 0
// or less, and BackEdgesAll counts them all.
func TestTopBackEdges(t *testing.T) {
	m, lg, ms := sampleModel(t)
	all := map[string]int{"model": len(FromModel(m, 0).BackEdges), "logs": len(FromLogs(m, lg, ms, 0).BackEdges)}
	tests := []struct {
		top  int
		want func(all int) int
	}{
		{-1, func(all int) int { return all }},
		{0, func(all int) int { return all }},
		{1, func(int) int { return 1 }},
		{3, func(int) int { return 3 }},
		{1000, func(all int) int { return all }},
	}
	for _, tt := range tests {
		for from, r := range map[string]*Report{"model": FromModel(m, tt.top), "logs": FromLogs(m, lg, ms, tt.top)} {
			if want := tt.want(all[from]); len(r.BackEdges) != want || r.BackEdgesAll != all[from] {
				t.Errorf("from %s, top %d: %d back edges listed of %d, want %d of %d", from, tt.top, len(r.BackEdges), r.BackEdgesAll, want, all[from])
			}
		}
	}
	if all["model"] < 4 || all["logs"] < 4 {
		t.Errorf("back edges %v, want more than 3 to cut", all)
	}
}

// TestDeviatingSessions: records the replay cannot place are counted
// apart, and endings say "?" when the session ended lost.
func TestDeviatingSessions(t *testing.T) {
	m := tinyModel(t)
	lg := tinyLog(t, "new")
	r := FromLogs(m, lg, nil, 0)
	if r.Sessions != 5 || r.Fit != 1 || r.Unplaced != 1 || r.Events != 17 {
		t.Errorf("%d sessions, %d fit, %d unplaced, %d events; want 5, 1, 1 (frobnicate), 17", r.Sessions, r.Fit, r.Unplaced, r.Events)
	}
	tests := []struct {
		state string
		ends  []End
	}{
		// a-fit, b-skip, c-unknown, d-retry end in refund; e-trunc in lookup.
		{"greet", []End{{"refund", 4, 0.8}, {"lookup", 1, 0.2}}},
		{"lookup", []End{{"refund", 3, 0.75}, {"lookup", 1, 0.25}}},
		{"close", []End{}},
	}
	for _, tt := range tests {
		t.Run(tt.state, func(t *testing.T) {
			for _, s := range r.States {
				if s.ID == tt.state {
					if !reflect.DeepEqual(s.Ends, tt.ends) {
						t.Errorf("ends %v, want %v", s.Ends, tt.ends)
					}
					return
				}
			}
			t.Errorf("no state %s", tt.state)
		})
	}
	if r.Measures == nil || len(r.Measures) != 0 {
		t.Errorf("measures %#v without Measures, want []", r.Measures)
	}
}

// TestJSONShape pins the report's JSON for the tiny model: the field
// names, which are fsmine stats --format json's, and what is left out.
func TestJSONShape(t *testing.T) {
	r := FromModel(tinyModel(t), 0)
	r.Model.Digest = "sha256:x"
	got, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":{"path":"","version":1,"digest":"sha256:x"},"from":"model","sessions":3,"events":12,` +
		`"ends_from":"top_variants","ends_coverage":1,"measures":[],"states":[` +
		`{"id":"lookup","label":"lookup","visits":6,"sessions":3,"dwell_ms":null,"ends":[{"state":"refund","sessions":2,"share":0.666667},{"state":"close","sessions":1,"share":0.333333}],"examples":[{"id":"t1"},{"id":"t2"},{"id":"t3"}]},` +
		`{"id":"greet","label":"greet","visits":3,"sessions":3,"dwell_ms":null,"ends":[{"state":"refund","sessions":2,"share":0.666667},{"state":"close","sessions":1,"share":0.333333}],"examples":[{"id":"t1"},{"id":"t2"},{"id":"t3"}]},` +
		`{"id":"refund","label":"refund","visits":2,"sessions":2,"dwell_ms":null,"ends":[{"state":"refund","sessions":2,"share":1}],"examples":[{"id":"t1"},{"id":"t2"}]},` +
		`{"id":"close","label":"close","visits":1,"sessions":1,"dwell_ms":null,"ends":[{"state":"close","sessions":1,"share":1}],"examples":[{"id":"t3"}]}],` +
		`"back_edges":[{"from":"lookup","event":"not_found","to":"lookup","count":3,"sessions":2,"examples":[{"id":"t2"},{"id":"t3"}]}],"back_edges_total":1,` +
		`"loops":[{"states":["lookup"],"count":3,"sessions":2,"max_iterations":2,"p95_iterations":2,"histogram":null}]}`
	if string(got) != want {
		t.Errorf("JSON =\n%s\nwant\n%s", got, want)
	}
}

func TestWriteText(t *testing.T) {
	m := tinyModel(t)
	m.Params.Link = "https://traces.example/s/{session}"
	lg := tinyLog(t, "new")
	r := FromLogs(m, lg, nil, 0)
	r.Model = ModelRef{Path: "m.json", Version: 1, Digest: "sha256:0123456789abcdef"}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `model     m.json  v1 sha256:0123456789ab  (6 states, 7 transitions, 1 loop)
logs      5 sessions (1 fit the model), 17 events; 1 event after a deviation could not be placed in a state

states (by visits)
  state   visits  sessions  dwell p50  dwell p95  sessions through it end in
  lookup       7         4          -          -  refund 75.0%, lookup 25.0%
  greet        5         5          -          -  refund 80.0%, lookup 20.0%
  refund       4         4          -          -  refund 100.0%
  close        0         0          -          -  -

example sessions, by state
  lookup  t1 t2 t3
  greet   t1 t2 t3
  refund  t1 t2
  close   t3
example sessions open at https://traces.example/s/{session}

hottest back edges
  edge                          count  sessions
  lookup -[not_found]-> lookup      3         1

loops (iterations per stay)
  {lookup}
    3 iterations in 1 session; max 3, p95 3; stays by iterations 3:1
`
	if b.String() != want {
		t.Errorf("text =\n%s\nwant\n%s", b.String(), want)
	}

	var decoded Report
	if err := json.Unmarshal([]byte(`{"from":"logs"}`), &decoded); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := decoded.WriteText(&b); !errors.Is(err, ErrNoModel) || b.Len() != 0 {
		t.Errorf("WriteText of a decoded report: %v, wrote %q; want ErrNoModel and nothing", err, b.String())
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want *Summary
	}{
		{"none", nil, nil},
		{"one", []float64{2.5}, &Summary{Visits: 1, Total: 2.5, Mean: 2.5, P50: 2.5, P95: 2.5}},
		{"unsorted", []float64{3, 1, 2, 4}, &Summary{Visits: 4, Total: 10, Mean: 2.5, P50: 2, P95: 4}},
		{"rounded", []float64{1.0 / 3, 2.0 / 3, 1}, &Summary{Visits: 3, Total: 2, Mean: 0.667, P50: 0.667, P95: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Summarize(tt.xs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Summarize(%v) = %+v, want %+v", tt.xs, got, tt.want)
			}
		})
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	tests := []struct {
		q, want float64
	}{{0, 10}, {0.1, 10}, {0.11, 20}, {0.5, 50}, {0.95, 100}, {1, 100}}
	for _, tt := range tests {
		if got := Quantile(xs, tt.q); got != tt.want {
			t.Errorf("Quantile(xs, %v) = %v, want %v", tt.q, got, tt.want)
		}
	}
}
