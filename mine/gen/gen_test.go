package gen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json" // the reference jsonString must match, in TestJSONString only
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fsmine/fsmine/automaton"
)

// sample writes n sessions sampled from m with opt.
func sample(t *testing.T, m *automaton.Model, n int, opt Options) string {
	t.Helper()
	g, err := New(m, opt)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := g.Write(context.Background(), &b, n); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestReturnsTruthModel checks the built-in truth model: it is a canonical
// model file, and it has the features it is there to exercise.
func TestReturnsTruthModel(t *testing.T) {
	m := ReturnsTruth()
	var canon bytes.Buffer
	if err := m.Write(&canon); err != nil {
		t.Fatal(err)
	}
	if canon.String() != string(returnsTruth) {
		t.Errorf("returns.truth.json is not in the form Model.Write gives it")
	}
	if got, want := m.Digest, m.ComputeDigest(); got != want {
		t.Errorf("digest = %s, want %s", got, want)
	}

	out := map[string]float64{}
	ends := 0
	for _, tr := range m.Transitions {
		out[tr.From] += tr.Prob
		if got := float64(tr.Count) / 1000; got != tr.Prob {
			t.Errorf("%s -[%s]-> %s: count %d is not prob %v per mille", tr.From, tr.Event, tr.To, tr.Count, tr.Prob)
		}
		if tr.To == automaton.EndID {
			ends++
		}
	}
	for from, p := range out {
		if p < 0.9999 || p > 1.0001 {
			t.Errorf("probabilities out of %s sum to %v, want 1", from, p)
		}
	}
	if ends < 3 {
		t.Errorf("%d states end sessions, want several", ends)
	}
	labels := map[string][]string{}
	for _, s := range m.States {
		labels[s.Label] = append(labels[s.Label], s.ID)
		if s.ID != automaton.StartID && s.ID != automaton.EndID && s.DwellMS == nil {
			t.Errorf("state %s has no dwell_ms", s.ID)
		}
	}
	if ids := labels["verify_identity"]; len(ids) != 2 {
		t.Errorf("states labelled verify_identity = %v, want two (early and before a high-value refund)", ids)
	}

	// Shares of sessions that take the rare paths.
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 20000
	escalated, complained, longest := 0, 0, 0
	for range n {
		moves := m.Sample(rng, 0)
		if !m.Accepts(moves) {
			t.Fatalf("sampled %v, which the model does not accept", moves)
		}
		longest = max(longest, len(moves))
		seen := map[string]bool{}
		for _, mv := range moves {
			seen[mv.Label] = true
		}
		if seen["escalate_to_human"] {
			escalated++
		}
		if seen["file_complaint"] {
			complained++
		}
	}
	if share := float64(escalated) / n; share < 0.015 || share > 0.035 {
		t.Errorf("share of sessions escalated = %.4f, want 2-3%%", share)
	}
	if share := float64(complained) / n; share < 0.01 || share > 0.05 {
		t.Errorf("share of sessions with a complaint = %.4f, want rare (1-5%%)", share)
	}
	if longest > 80 {
		t.Errorf("longest of %d sessions has %d moves; the retry loops should be capped in practice", n, longest)
	}
}

// genLine is an output record as a reader sees it.
type genLine struct {
	SessionID     string `json:"session_id"`
	Step          int    `json:"step"`
	TS            string `json:"ts"`
	Node          string `json:"node"`
	Event         string `json:"event"`
	DurationMS    int64  `json:"duration_ms"`
	Model         string `json:"model"`
	PromptVersion string `json:"prompt_version"`
	Tokens        struct {
		Prompt     int `json:"prompt"`
		Completion int `json:"completion"`
	} `json:"tokens"`
	Attrs map[string]string `json:"attrs"`

	time time.Time
}

// parseGen decodes gen's output strictly: every field known, every line
// one record.
func parseGen(t *testing.T, out string) []genLine {
	t.Helper()
	var recs []genLine
	sc := bufio.NewScanner(strings.NewReader(out))
	for i := 1; sc.Scan(); i++ {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var r genLine
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, sc.Text())
		}
		ts, err := time.Parse(time.RFC3339Nano, r.TS)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		r.time = ts
		recs = append(recs, r)
	}
	return recs
}

// bySession groups records by session id, in order of appearance.
func bySession(recs []genLine) (ids []string, sessions map[string][]genLine) {
	sessions = map[string][]genLine{}
	for _, r := range recs {
		if _, ok := sessions[r.SessionID]; !ok {
			ids = append(ids, r.SessionID)
		}
		sessions[r.SessionID] = append(sessions[r.SessionID], r)
	}
	return ids, sessions
}

// withoutDetours drops the smalltalk records and the records that led into
// them, leaving the session as it was sampled.
func withoutDetours(rs []genLine) []genLine {
	var kept []genLine
	for _, r := range rs {
		if r.Node != DetourLabel && r.Event != DerailEvent {
			kept = append(kept, r)
		}
	}
	return kept
}

func TestGenRecords(t *testing.T) {
	m := ReturnsTruth()
	out := sample(t, m, 300, Options{Seed: 3, Drift: 0.1, Start: DefaultStart, TruthAttr: true})
	recs := parseGen(t, out)
	ids, sessions := bySession(recs)
	if len(ids) != 300 {
		t.Fatalf("%d sessions, want 300", len(ids))
	}
	for i, id := range ids {
		if want := "s-" + pad6(i+1); id != want {
			t.Fatalf("session %d appears as %s, want %s (sessions start in id order)", i, id, want)
		}
	}
	if !recs[0].time.Equal(DefaultStart) {
		t.Errorf("first record at %s, want %s", recs[0].TS, DefaultStart)
	}
	for i := 1; i < len(recs); i++ {
		if recs[i].time.Before(recs[i-1].time) {
			t.Fatalf("record %d (%s) is earlier than the one before (%s)", i+1, recs[i].TS, recs[i-1].TS)
		}
	}

	// Interleaving: how many sessions are open at once.
	open, most := map[string]bool{}, 0
	left := map[string]int{}
	for id, rs := range sessions {
		left[id] = len(rs)
	}
	for _, r := range recs {
		open[r.SessionID] = true
		most = max(most, len(open))
		if left[r.SessionID]--; left[r.SessionID] == 0 {
			delete(open, r.SessionID)
		}
	}
	if most < 3 {
		t.Errorf("at most %d sessions open at once, want several", most)
	}

	versions, detours := map[string]int{}, 0
	for _, id := range ids {
		rs := sessions[id]
		for i, r := range rs {
			if r.Step != i {
				t.Fatalf("%s: record %d has step %d", id, i, r.Step)
			}
			if i > 0 && !r.time.After(rs[i-1].time) {
				t.Fatalf("%s: step %d at %s, not after step %d", id, i, r.TS, i-1)
			}
			if i+1 < len(rs) {
				if dwell := rs[i+1].time.Sub(r.time).Milliseconds(); r.DurationMS < 1 || r.DurationMS > dwell {
					t.Errorf("%s step %d: duration %d ms, want 1 to its dwell %d ms", id, i, r.DurationMS, dwell)
				}
			}
			if r.PromptVersion != rs[0].PromptVersion || r.Attrs["channel"] != rs[0].Attrs["channel"] {
				t.Errorf("%s step %d: session attributes change within the session", id, i)
			}
			if r.Tokens.Prompt <= 0 || r.Tokens.Completion <= 0 || r.Model == "" {
				t.Errorf("%s step %d: tokens %+v, model %q", id, i, r.Tokens, r.Model)
			}
			truth, hasTruth := r.Attrs["truth_state"]
			switch {
			case r.Node == DetourLabel:
				detours++
				if hasTruth {
					t.Errorf("%s step %d: detour record has truth_state %q", id, i, truth)
				}
			case !hasTruth:
				t.Errorf("%s step %d: no truth_state", id, i)
			case m.State(truth) == nil || m.State(truth).Label != r.Node:
				t.Errorf("%s step %d: node %q, truth_state %q", id, i, r.Node, truth)
			}
		}
		versions[rs[0].PromptVersion]++

		// The session, detours aside, is a whole path of the model, and
		// its truth states are the ones the path goes through.
		kept := withoutDetours(rs)
		moves := []automaton.Move{{Event: "", Label: kept[0].Node}}
		for i := 1; i < len(kept); i++ {
			moves = append(moves, automaton.Move{Event: kept[i-1].Event, Label: kept[i].Node})
		}
		moves = append(moves, automaton.Move{Event: kept[len(kept)-1].Event, Label: automaton.EndID})
		if !m.Accepts(moves) {
			t.Errorf("%s: %v is not a session of the truth model", id, moves)
			continue
		}
		at := automaton.StartID
		for i, mv := range moves[:len(moves)-1] {
			at = m.Next(at, mv).To
			if got := kept[i].Attrs["truth_state"]; got != at {
				t.Errorf("%s: record %d has truth_state %s, the path is in %s", id, i, got, at)
			}
		}
	}
	if len(versions) != 2 {
		t.Errorf("prompt versions %v, want two", versions)
	}
	if detours == 0 {
		t.Errorf("no detours with drift 0.1")
	}
}

func TestGenDriftOnlyAddsDetours(t *testing.T) {
	m := ReturnsTruth()
	plain := sample(t, m, 200, Options{Seed: 11})
	drifted := sample(t, m, 200, Options{Seed: 11, Drift: 0.3})
	ids, want := bySession(parseGen(t, plain))
	_, got := bySession(parseGen(t, drifted))
	type ne struct{ node, event string }
	path := func(rs []genLine) []ne {
		var p []ne
		for _, r := range rs {
			p = append(p, ne{r.Node, r.Event})
		}
		return p
	}
	derailed := 0
	for _, id := range ids {
		g := got[id]
		if a, b := path(want[id]), path(withoutDetours(g)); !equalSlices(a, b) {
			t.Errorf("%s: without its detours %v, want %v", id, b, a)
		}
		// Each detour: X off_topic, one to three smalltalk, then X again.
		for i, r := range g {
			if r.Event != DerailEvent {
				continue
			}
			derailed++
			j := i + 1
			for j < len(g) && g[j].Node == DetourLabel {
				if g[j].Event != DetourEvent {
					t.Errorf("%s step %d: smalltalk with event %q", id, j, g[j].Event)
				}
				j++
			}
			if n := j - i - 1; n < 1 || n > 3 {
				t.Errorf("%s step %d: detour of %d smalltalk records, want 1 to 3", id, i, n)
			}
			if j == len(g) || g[j].Node != r.Node {
				t.Errorf("%s step %d: detour from %s does not return to it", id, i, r.Node)
			}
		}
	}
	if derailed == 0 {
		t.Errorf("no detours with drift 0.3")
	}
}

func equalSlices[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGenSessionsIndependentOfN: a session is the same whatever n is.
func TestGenSessionsIndependentOfN(t *testing.T) {
	m := ReturnsTruth()
	few := sample(t, m, 5, Options{Seed: 2})
	many := sample(t, m, 50, Options{Seed: 2})
	_, a := bySession(parseGen(t, few))
	_, b := bySession(parseGen(t, many))
	for id, rs := range a {
		x, y := make([]genLine, len(rs)), b[id]
		copy(x, rs)
		if len(x) != len(y) {
			t.Fatalf("%s has %d records with n 5, %d with n 50", id, len(x), len(y))
		}
		for i := range x {
			x[i].Attrs, y[i].Attrs = nil, nil
			if x[i].TS != y[i].TS || x[i].Node != y[i].Node || x[i].Event != y[i].Event || x[i].DurationMS != y[i].DurationMS {
				t.Errorf("%s step %d: %+v with n 5, %+v with n 50", id, i, x[i], y[i])
			}
		}
	}
}

// TestGenTruncates: a session that cannot end is cut off after
// MaxMoves steps, and its last record keeps an event.
func TestGenTruncates(t *testing.T) {
	m := testModel(t, []automaton.Transition{
		{From: automaton.StartID, To: "a", Prob: 1},
		{From: "a", Event: "again", To: "a", Prob: 1},
		{From: "a", Event: "never", To: automaton.EndID},
	})
	recs := parseGen(t, sample(t, m, 1, Options{}))
	if len(recs) != MaxMoves {
		t.Fatalf("%d records, want %d", len(recs), MaxMoves)
	}
	if last := recs[len(recs)-1]; last.Node != "a" || last.Event != "again" {
		t.Errorf("last record %s/%s, want a/again", last.Node, last.Event)
	}
}

// testModel returns a validated model with the given transitions, every
// state labelled by its id.
func testModel(t *testing.T, ts []automaton.Transition) *automaton.Model {
	t.Helper()
	m := &automaton.Model{Schema: automaton.Schema, Version: 1, Initial: automaton.StartID, Transitions: ts}
	ids := map[string]bool{automaton.StartID: true, automaton.EndID: true}
	for _, tr := range ts {
		ids[tr.From], ids[tr.To] = true, true
	}
	for id := range ids {
		m.States = append(m.States, automaton.State{ID: id, Label: id})
	}
	m.Sort()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	m.Digest = m.ComputeDigest()
	return m
}

func TestNewErrors(t *testing.T) {
	deadEnd := testModel(t, []automaton.Transition{
		{From: automaton.StartID, To: "a", Prob: 1},
		{From: "a", Event: "ok", To: "stuck", Prob: 1},
	})
	empty := testModel(t, nil)
	tests := []struct {
		name string
		m    *automaton.Model
		opt  Options
		want string
	}{
		{"dead end", deadEnd, Options{}, `state "stuck" has no transition out: a session entering it cannot end`},
		{"nothing to sample", empty, Options{}, "model has no transition out of __start__: there is nothing to sample"},
		{"drift above 1", ReturnsTruth(), Options{Drift: 1.5}, "drift must be a probability in [0, 1], not 1.5"},
		{"drift below 0", ReturnsTruth(), Options{Drift: -0.1}, "drift must be a probability in [0, 1], not -0.1"},
		{"drift NaN", ReturnsTruth(), Options{Drift: math.NaN()}, "drift must be a probability in [0, 1], not NaN"},
		{"start before year 1", ReturnsTruth(), Options{Start: time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC)}, "start: year 0 is out of range"},
		{"start after 9000", ReturnsTruth(), Options{Start: time.Date(9001, 1, 1, 0, 0, 0, 0, time.UTC)}, "start: year 9001 is out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := New(tt.m, tt.opt)
			if err == nil || err.Error() != tt.want {
				t.Errorf("New: %v, %v; want error %q", g, err, tt.want)
			}
		})
	}
}

// TestWriteAgain: each Write starts over, so two calls write the same
// bytes, and the ones a new Generator writes.
func TestWriteAgain(t *testing.T) {
	m := ReturnsTruth()
	opt := Options{Seed: 5, Drift: 0.2, TruthAttr: true}
	g, err := New(m, opt)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := g.Write(context.Background(), &a, 40); err != nil {
		t.Fatal(err)
	}
	if err := g.Write(context.Background(), &b, 40); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() || a.String() != sample(t, m, 40, opt) {
		t.Errorf("a second Write, or a new Generator, writes other bytes")
	}
	if a.Len() == 0 {
		t.Errorf("40 sessions wrote nothing")
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteStops(t *testing.T) {
	g, err := New(ReturnsTruth(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Write(context.Background(), failWriter{}, 10); err == nil || err.Error() != "disk full" {
		t.Errorf("Write to a failing writer: %v, want disk full", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var b bytes.Buffer
	if err := g.Write(ctx, &b, 5000); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a cancelled context: %v, want %v", err, context.Canceled)
	}
	if err := g.Write(context.Background(), failWriter{}, 0); err != nil {
		t.Errorf("Write of no sessions: %v", err)
	}
}

// TestAgentTruth: the agent truth is a valid, canonical model whose
// sessions the model accepts, and each call returns a model of its own.
func TestAgentTruth(t *testing.T) {
	m := AgentTruth()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := m.Digest, m.ComputeDigest(); got != want {
		t.Errorf("digest = %s, want %s", got, want)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for range 500 {
		if moves := m.Sample(rng, 0); !m.Accepts(moves) {
			t.Fatalf("sampled %v, which the model does not accept", moves)
		}
	}
	m.States[0].Label = "changed"
	if AgentTruth().States[0].Label == "changed" {
		t.Errorf("AgentTruth returns a shared model")
	}
}

// jsonStrings are strings whose JSON encodings differ between encoders.
var jsonStrings = []string{
	"", "greet", "a<b>&c", "\u2028\u2029", "\xff\xfe", "a\x00\x1f\x7f", "é✓😀", `"\\/`,
	"\xed\xa0\x80", "\t\n\r\b\f", `\u0008`, "</script>",
}

// TestJSONString: a label is written as encoding/json writes it, whatever
// its characters.
func TestJSONString(t *testing.T) {
	for _, s := range jsonStrings {
		want, _ := json.Marshal(s)
		if got := jsonString(s); string(got) != string(want) {
			t.Errorf("jsonString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzJSONString(f *testing.F) {
	for _, s := range jsonStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := jsonString(s); string(got) != string(want) {
			t.Errorf("jsonString(%q) = %s, want %s", s, got, want)
		}
	})
}

func TestAppendTS(t *testing.T) {
	g := &Generator{}
	g.day = -1 << 62
	tests := []int64{
		0, 1, 999, 1000, 59_999, 86_399_999, 86_400_000,
		time.Date(2026, 1, 5, 10, 0, 3, 120e6, time.UTC).UnixMilli(),
		time.Date(2028, 2, 29, 23, 59, 59, 999e6, time.UTC).UnixMilli(),
		-1, -86_400_001,
	}
	for _, ms := range tests {
		want := time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
		if got := string(g.appendTS(nil, ms)); got != want {
			t.Errorf("appendTS(%d) = %s, want %s", ms, got, want)
		}
	}
}

func TestAppendPadded(t *testing.T) {
	tests := []struct {
		v, width int
		want     string
	}{
		{0, 1, "0"}, {0, 3, "000"}, {7, 2, "07"}, {17, 6, "000017"},
		{123456, 6, "123456"}, {1234567, 6, "1234567"}, {5, 0, "5"},
	}
	for _, tt := range tests {
		if got := string(appendPadded(nil, tt.v, tt.width)); got != tt.want {
			t.Errorf("appendPadded(%d, %d) = %q, want %q", tt.v, tt.width, got, tt.want)
		}
	}
}

func pad6(i int) string { return string(appendPadded(nil, i, 6)) }
