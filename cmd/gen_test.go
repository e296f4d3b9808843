package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsmine/fsmine/automaton"
)

// returnsFlags are the documented flags that made testdata/returns.jsonl.
var returnsFlags = []string{"gen", "-n", "400", "--seed", "7", "--drift", "0.05"}

const returnsSample = "../testdata/returns.jsonl"

// runCmd runs fsmine with args in memory and returns its exit status,
// stdout and stderr.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return code, out.String(), errOut.String()
}

// TestReturnsSampleIsCurrent keeps the bundled sample in step with the
// generator: regenerating it with the documented flags gives its bytes.
func TestReturnsSampleIsCurrent(t *testing.T) {
	code, out, errOut := runCmd(t, returnsFlags...)
	if code != exitOK {
		t.Fatalf("fsmine %s: exit %d: %s", strings.Join(returnsFlags, " "), code, errOut)
	}
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(returnsSample, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(returnsSample)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("%s is not what fsmine %s writes; regenerate it with\n\tgo run . %s -o testdata/returns.jsonl",
			returnsSample, strings.Join(returnsFlags, " "), strings.Join(returnsFlags, " "))
	}
	if len(want) > 1500_000 {
		t.Errorf("%s is %d bytes, want it under 1.5 MB", returnsSample, len(want))
	}
}

// TestReturnsTruthModel checks the built-in truth model: it is a canonical
// model file, and it has the features it is there to exercise.
func TestReturnsTruthModel(t *testing.T) {
	m, err := loadGenModel("", "returns")
	if err != nil {
		t.Fatal(err)
	}
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
		if r.Node != genDetourLabel && r.Event != genDerailEvent {
			kept = append(kept, r)
		}
	}
	return kept
}

func TestGenRecords(t *testing.T) {
	code, out, errOut := runCmd(t, "gen", "-n", "300", "--seed", "3", "--drift", "0.1", "--truth-attr")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	m, err := loadGenModel("", "returns")
	if err != nil {
		t.Fatal(err)
	}
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
	start, _ := time.Parse(time.RFC3339, defaultGenStart)
	if !recs[0].time.Equal(start) {
		t.Errorf("first record at %s, want %s", recs[0].TS, defaultGenStart)
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
			case r.Node == genDetourLabel:
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
		t.Errorf("no detours with --drift 0.1")
	}
}

func TestGenDriftOnlyAddsDetours(t *testing.T) {
	args := []string{"gen", "-n", "200", "--seed", "11"}
	_, plain, _ := runCmd(t, args...)
	_, drifted, _ := runCmd(t, append(args, "--drift", "0.3")...)
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
			if r.Event != genDerailEvent {
				continue
			}
			derailed++
			j := i + 1
			for j < len(g) && g[j].Node == genDetourLabel {
				if g[j].Event != genDetourEvent {
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
		t.Errorf("no detours with --drift 0.3")
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

// TestGenSessionsIndependentOfN: a session is the same whatever -n is.
func TestGenSessionsIndependentOfN(t *testing.T) {
	_, few, _ := runCmd(t, "gen", "-n", "5", "--seed", "2")
	_, many, _ := runCmd(t, "gen", "-n", "50", "--seed", "2")
	_, a := bySession(parseGen(t, few))
	_, b := bySession(parseGen(t, many))
	for id, rs := range a {
		x, y := make([]genLine, len(rs)), b[id]
		copy(x, rs)
		if len(x) != len(y) {
			t.Fatalf("%s has %d records with -n 5, %d with -n 50", id, len(x), len(y))
		}
		for i := range x {
			x[i].Attrs, y[i].Attrs = nil, nil
			if x[i].TS != y[i].TS || x[i].Node != y[i].Node || x[i].Event != y[i].Event || x[i].DurationMS != y[i].DurationMS {
				t.Errorf("%s step %d: %+v with -n 5, %+v with -n 50", id, i, x[i], y[i])
			}
		}
	}
}

// TestGenTruncates: a session that cannot end is cut off after
// genMaxMoves steps, and its last record keeps an event.
func TestGenTruncates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "loop.json")
	writeModel(t, path, []automaton.Transition{
		{From: automaton.StartID, To: "a", Prob: 1},
		{From: "a", Event: "again", To: "a", Prob: 1},
		{From: "a", Event: "never", To: automaton.EndID},
	})
	code, out, errOut := runCmd(t, "gen", "--model", path, "-n", "1")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	recs := parseGen(t, out)
	if len(recs) != genMaxMoves {
		t.Fatalf("%d records, want %d", len(recs), genMaxMoves)
	}
	if last := recs[len(recs)-1]; last.Node != "a" || last.Event != "again" {
		t.Errorf("last record %s/%s, want a/again", last.Node, last.Event)
	}
}

// writeModel writes a validated model with the given transitions, every
// state labelled by its id.
func writeModel(t *testing.T, path string, ts []automaton.Transition) {
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
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGenErrors(t *testing.T) {
	dir := t.TempDir()
	notModel := filepath.Join(dir, "notmodel.json")
	if err := os.WriteFile(notModel, []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	deadEnd := filepath.Join(dir, "deadend.json")
	writeModel(t, deadEnd, []automaton.Transition{
		{From: automaton.StartID, To: "a", Prob: 1},
		{From: "a", Event: "ok", To: "stuck", Prob: 1},
	})
	empty := filepath.Join(dir, "empty.json")
	writeModel(t, empty, nil)
	tests := []struct {
		name string
		args []string
		want string // in stderr, after "fsmine: "
	}{
		{"missing model", []string{"--model", filepath.Join(dir, "nope.json")}, "nope.json"},
		{"not a model", []string{"--model", notModel}, notModel + ": not an fsmine model"},
		{"dead end", []string{"--model", deadEnd}, deadEnd + `: state "stuck" has no transition out`},
		{"nothing to sample", []string{"--model", empty}, empty + ": model has no transition out of __start__"},
		{"negative n", []string{"-n", "-1"}, "-n must be 0 or more"},
		{"drift above 1", []string{"--drift", "1.5"}, "--drift must be a probability"},
		{"drift NaN", []string{"--drift", "NaN"}, "--drift must be a probability"},
		{"bad start", []string{"--start", "yesterday"}, `--start: "yesterday" is not an RFC 3339 time`},
		{"argument", []string{"extra"}, "unknown command"},
		{"unwritable output", []string{"-o", filepath.Join(dir, "no", "such", "dir", "x.jsonl")}, "writing " + filepath.Join(dir, "no")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, append([]string{"gen"}, tt.args...)...)
			if code != exitError {
				t.Errorf("exit %d, want %d", code, exitError)
			}
			if !strings.HasPrefix(errOut, "fsmine: ") || !strings.Contains(strings.SplitN(errOut, "\n", 2)[0], tt.want) {
				t.Errorf("stderr = %q, want a first line \"fsmine: ...%s...\"", errOut, tt.want)
			}
			if out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
		})
	}
}

func TestGenOutputFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	_, want, _ := runCmd(t, "gen", "-n", "20")
	code, out, errOut := runCmd(t, "gen", "-n", "20", "-o", path)
	if code != exitOK || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("-o wrote other bytes than stdout gets")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries after -o, want just the output (no temporary file)", len(entries))
	}
}

func TestAppendTS(t *testing.T) {
	g := &generator{}
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
