package check

import (
	"bytes"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/mine"
)

func readLog(t testing.TB, name, log string) *mine.Log {
	t.Helper()
	lg, err := mine.Read([]mine.Input{{Name: name, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(log)), nil
	}}}, mine.ReadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	return lg
}

// tinyLog reads testdata/check/tiny-NAME.jsonl, the small flow of the
// unit tests (see its README): "train", three sessions to mine, or "new",
// one session of each verdict.
func tinyLog(t testing.TB, name string) *mine.Log {
	t.Helper()
	data, err := os.ReadFile("../../testdata/check/tiny-" + name + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return readLog(t, name+".jsonl", string(data))
}

// fixture mines the train log with one state per label and no
// generalisation, and reads the new log.
func fixture(t testing.TB) (*automaton.Model, *mine.Log) {
	t.Helper()
	opt := mine.DefaultOptions()
	opt.Merge, opt.Generalize = mine.MergeLabel, mine.GeneralizeNone
	m, err := mine.Build(tinyLog(t, "train"), opt)
	if err != nil {
		t.Fatal(err)
	}
	return m, tinyLog(t, "new")
}

func TestLogVerdicts(t *testing.T) {
	m, lg := fixture(t)
	sum, err := Log(lg, conform.New(m, conform.Options{}), Options{Deviations: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Sessions != 5 || sum.Fit != 1 || sum.FitShare != 0.2 {
		t.Errorf("sessions %d, fit %d (%v), want 5, 1 (0.2)", sum.Sessions, sum.Fit, sum.FitShare)
	}
	// The model: start->greet, greet-ok->lookup, lookup-found->refund,
	// lookup-not_found->lookup (max 2 iterations), lookup-none->close,
	// refund-done->end, close-done->end. Shortest path: 4 moves.
	type want struct {
		kind, state, event, label string
		step                      int64
		line                      int
		cost, maxCost             int
	}
	wants := map[string]want{
		// greet -ok-> refund: the event names the edge, so the alignment
		// skips the log's move (ok, refund) and takes the model's two
		// moves greet -ok-> lookup -found-> refund.
		"b-skip": {conform.KindIllegalTransition, "greet", "ok", "refund", 1, 5, 3, 3 + 4},
		// one log move for frobnicate.
		"c-unknown": {conform.KindUnknownState, "greet", "ok", "frobnicate", 1, 7, 1, 5 + 4},
		// the fourth lookup (step 4) is the third retry, one beyond the
		// model's two; still a path of the model.
		"d-retry": {conform.KindLoopCap, "lookup", "not_found", "lookup", 4, 14, 0, 7 + 4},
		// lookup never ends: skip the log's (found, __end__), take
		// lookup -found-> refund -done-> __end__.
		"e-trunc": {conform.KindIncomplete, "lookup", "found", automaton.EndID, 1, 17, 3, 3 + 4},
	}
	if len(sum.Deviations) != len(wants) {
		t.Fatalf("%d deviations, want %d", len(sum.Deviations), len(wants))
	}
	costSum, maxSum := 0, 4+4 // a-fit
	for _, d := range sum.Deviations {
		w, ok := wants[d.SessionID]
		if !ok {
			t.Errorf("unexpected deviation %+v", *d)
			continue
		}
		if d.Kind != w.kind || d.State != w.state || d.Event != w.event || d.Label != w.label || d.Step != w.step || d.Line != w.line {
			t.Errorf("%s: %s %s -[%s]-> %s at step %d line %d; want %s %s -[%s]-> %s at step %d line %d",
				d.SessionID, d.Kind, d.State, d.Event, d.Label, d.Step, d.Line, w.kind, w.state, w.event, w.label, w.step, w.line)
		}
		if d.Cost != w.cost || d.Fitness != mine.Round6(1-float64(w.cost)/float64(w.maxCost)) {
			t.Errorf("%s: cost %d fitness %v, want %d and 1-%d/%d", d.SessionID, d.Cost, d.Fitness, w.cost, w.cost, w.maxCost)
		}
		if d.File != "new.jsonl" {
			t.Errorf("%s: file %s, want new.jsonl", d.SessionID, d.File)
		}
		costSum += w.cost
		maxSum += w.maxCost
	}
	if want := mine.Round6(1 - float64(costSum)/float64(maxSum)); sum.LogFitness != want {
		t.Errorf("log fitness %v, want %v", sum.LogFitness, want)
	}
	if sum.Outside != 3 {
		t.Errorf("outside %d, want 3 (loop_cap is a path of the model)", sum.Outside)
	}
	wantKinds := map[string]int{"unknown_state": 1, "illegal_transition": 1, "loop_cap": 1, "incomplete": 1}
	for k, n := range wantKinds {
		if sum.ByKind[k] != n {
			t.Errorf("by_kind[%s] = %d, want %d", k, sum.ByKind[k], n)
		}
	}
}

// TestCollectorOrder: sessions added in any order, or added, reset and
// added again, sum up to the same report, and emit sees every verdict in
// session id order.
func TestCollectorOrder(t *testing.T) {
	m, lg := fixture(t)
	c := conform.New(m, conform.Options{})
	report := func(order []int, reset bool) (string, []string) {
		r := NewCollector(c, Options{Deviations: true, Verdicts: true})
		if reset {
			r.Add(lg, &lg.Sessions[0])
			r.Reset()
		}
		for _, i := range order {
			r.Add(lg, &lg.Sessions[i])
		}
		var ids []string
		sum, err := r.Summary(lg, func(v *Verdict) error { ids = append(ids, v.SessionID); return nil })
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := json.NewEncoder(&b).Encode(sum); err != nil {
			t.Fatal(err)
		}
		return b.String(), ids
	}
	want, ids := report([]int{0, 1, 2, 3, 4}, false)
	if wantIDs := []string{"a-fit", "b-skip", "c-unknown", "d-retry", "e-trunc"}; !reflect.DeepEqual(ids, wantIDs) {
		t.Errorf("emitted %q, want %q", ids, wantIDs)
	}
	for _, tt := range []struct {
		name  string
		order []int
		reset bool
	}{{"reversed", []int{4, 3, 2, 1, 0}, false}, {"shuffled after a reset", []int{2, 0, 4, 1, 3}, true}} {
		if got, _ := report(tt.order, tt.reset); got != want {
			t.Errorf("%s: summary\n%s\nwant\n%s", tt.name, got, want)
		}
	}
}

func TestCollectorDeviating(t *testing.T) {
	m, lg := fixture(t)
	r := NewCollector(conform.New(m, conform.Options{}), Options{})
	for i := range lg.Sessions {
		r.Add(lg, &lg.Sessions[i])
	}
	want := map[string]bool{"b-skip": true, "c-unknown": true, "d-retry": true, "e-trunc": true}
	if got := r.Deviating(); !reflect.DeepEqual(got, want) {
		t.Errorf("Deviating = %v, want %v", got, want)
	}
	sum, err := r.Summary(lg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Deviations) != 0 || sum.Deviations == nil {
		t.Errorf("without Options.Deviations: deviations %v, want an empty list", sum.Deviations)
	}
}

func TestSetMinFit(t *testing.T) {
	tests := []struct {
		share, min float64
		pass       bool
		minFit     bool // whether MinFit is set
	}{
		{0.2, 0, true, false},
		{0.2, 0.2, true, true},
		{0.2, 0.5, false, true},
		{1, 1, true, true},
	}
	for _, tt := range tests {
		s := &Summary{FitShare: tt.share}
		s.SetMinFit(tt.min)
		if s.Pass != tt.pass || (s.MinFit != nil) != tt.minFit || s.MinFit != nil && *s.MinFit != tt.min {
			t.Errorf("share %v, min %v: pass %v, min_fit %v; want %v, set %v", tt.share, tt.min, s.Pass, s.MinFit, tt.pass, tt.minFit)
		}
	}
}

// TestSummaryJSON pins the JSON field names of the summary and a verdict.
func TestSummaryJSON(t *testing.T) {
	m, lg := fixture(t)
	var lines []string
	sum, err := Log(lg, conform.New(m, conform.Options{}), Options{Deviations: true}, func(v *Verdict) error {
		b, err := json.Marshal(v)
		lines = append(lines, string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"session_id":"a-fit","fits":true,"moves":4,"cost":0,"fitness":1,"rare":0,"deviation":null,"risk":{"total":2.932798,"per_step":0.733199,"end":0.453718,"top":{"move":2,"step":2,"state":"lookup","event":"found","label":"refund","bits":1.889817}}}`; lines[0] != want {
		t.Errorf("verdict %s, want %s", lines[0], want)
	}
	if want := `{"session_id":"d-retry","fits":false,"moves":7,"cost":0,"fitness":1,"rare":0,"deviation":{"session_id":"d-retry","step":4,"move":4,"kind":"loop_cap","state":"lookup","event":"not_found","label":"lookup","file":"new.jsonl","line":14,"cost":0,"fitness":1,"iterations":3,"cap":2},"risk":{"total":6.442573,"per_step":0.920368,"end":0.453718,"top":{"move":5,"step":5,"state":"lookup","event":"found","label":"refund","bits":1.889817}}}`; lines[3] != want {
		t.Errorf("verdict %s, want %s", lines[3], want)
	}
	var obj map[string]json.RawMessage
	b, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	want := []string{"model", "records", "skipped", "emptied", "sessions", "events", "fit", "fit_share", "log_fitness", "mean_fitness",
		"outside", "outside_share", "rare_moves", "rare_sessions", "rare_is_deviation", "generalized_moves",
		"generalized_sessions", "generalized_is_deviation", "bounded", "pass", "by_kind", "by_place", "deviations", "mean_risk"}
	for _, k := range want {
		if _, ok := obj[k]; !ok {
			t.Errorf("summary lacks field %q", k)
		}
	}
	if len(obj) != len(want) {
		t.Errorf("summary has %d fields, want %d: %s", len(obj), len(want), b)
	}
}

// TestRank checks that Options.Rank keeps the riskiest sessions, riskiest
// first, and that emit gets those alone, in that order.
func TestRank(t *testing.T) {
	m, lg := fixture(t)
	c := conform.New(m, conform.Options{})
	all, err := Log(lg, c, Options{Verdicts: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	risk := map[string]float64{}
	if _, err := Log(lg, c, Options{}, func(v *Verdict) error { risk[v.SessionID] = v.Risk.Total; return nil }); err != nil {
		t.Fatal(err)
	}
	var emitted []string
	sum, err := Log(lg, c, Options{Rank: 2}, func(v *Verdict) error { emitted = append(emitted, v.SessionID); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Riskiest) != 2 || len(emitted) != 2 {
		t.Fatalf("%d riskiest, %d emitted; want 2 and 2", len(sum.Riskiest), len(emitted))
	}
	for i, v := range sum.Riskiest {
		if v.SessionID != emitted[i] {
			t.Errorf("riskiest[%d] = %s, emitted %s", i, v.SessionID, emitted[i])
		}
		for id, r := range risk {
			if r > v.Risk.Total && id != sum.Riskiest[0].SessionID && (i == 0 || id != sum.Riskiest[1].SessionID) {
				t.Errorf("%s (risk %v) left out, riskier than %s (%v)", id, r, v.SessionID, v.Risk.Total)
			}
		}
	}
	if sum.Riskiest[0].Risk.Total < sum.Riskiest[1].Risk.Total {
		t.Errorf("riskiest not in order: %v then %v", sum.Riskiest[0].Risk.Total, sum.Riskiest[1].Risk.Total)
	}
	// Sessions added in another order (as a streaming read finishes them)
	// rank the same.
	for _, k := range []int{1, 2, 3, len(lg.Sessions) + 1} {
		want, err := Log(lg, c, Options{Rank: k}, nil)
		if err != nil {
			t.Fatal(err)
		}
		rev := NewCollector(c, Options{Rank: k})
		for i := len(lg.Sessions) - 1; i >= 0; i-- {
			rev.Add(lg, &lg.Sessions[i])
		}
		got, err := rev.Summary(lg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Riskiest) != min(k, len(lg.Sessions)) {
			t.Errorf("rank %d: %d kept", k, len(got.Riskiest))
		}
		for i := range got.Riskiest {
			if got.Riskiest[i].SessionID != want.Riskiest[i].SessionID {
				t.Errorf("rank %d, reversed: riskiest[%d] = %s, want %s", k, i, got.Riskiest[i].SessionID, want.Riskiest[i].SessionID)
			}
		}
	}
	if sum.MeanRisk != all.MeanRisk || sum.MeanRisk <= 0 {
		t.Errorf("mean risk %v, without rank %v; want the same, above 0", sum.MeanRisk, all.MeanRisk)
	}
}

func TestSimilarIDs(t *testing.T) {
	_, lg := fixture(t)
	tests := []struct{ want, hint string }{
		{"skip", "similar: b-skip"},
		{"b-skipped", "similar: b-skip"},
		{"d-retyr", "similar: d-retry"},
		{"zzz", "e.g. a-fit, b-skip, c-unknown, d-retry, e-trunc"},
	}
	for _, tt := range tests {
		if got := SimilarIDs(lg, tt.want); got != tt.hint {
			t.Errorf("SimilarIDs(%q) = %q, want %q", tt.want, got, tt.hint)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b  string
		limit int
		want  int
	}{
		{"kitten", "sitting", 5, 3},
		{"", "abc", 5, 3},
		{"same", "same", 1, 0},
		{"abcdef", "a", 2, 3},  // lengths differ by more than the limit
		{"abcd", "wxyz", 2, 3}, // above the limit: limit + 1
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b, tt.limit); got != tt.want {
			t.Errorf("editDistance(%q, %q, %d) = %d, want %d", tt.a, tt.b, tt.limit, got, tt.want)
		}
	}
}

// TestCollectorBlocks: sessions past one block of results, and sessions
// added after Deviating joined the blocks, are all summed.
func TestCollectorBlocks(t *testing.T) {
	m, lg := fixture(t)
	r := NewCollector(conform.New(m, conform.Options{}), Options{})
	n, fit := 2*resultBlock+3, 0
	for i := range n {
		s := &lg.Sessions[i%len(lg.Sessions)]
		if s.ID == "a-fit" {
			fit++
		}
		r.Add(lg, s)
		if i == resultBlock+1 {
			if got := len(r.Deviating()); got != 4 {
				t.Fatalf("Deviating after %d sessions: %d ids, want 4", i+1, got)
			}
		}
	}
	sum, err := r.Summary(lg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Sessions != n || sum.Fit != fit {
		t.Errorf("summary of %d sessions (%d fit): %d sessions, %d fit", n, fit, sum.Sessions, sum.Fit)
	}
}

// TestRankBy: Options.RankBy ranks by the part of the risk it names, and
// the summary says which.
func TestRankBy(t *testing.T) {
	m, lg := fixture(t)
	c := conform.New(m, conform.Options{})
	var all []*Verdict
	if _, err := Log(lg, c, Options{}, func(v *Verdict) error { all = append(all, v); return nil }); err != nil {
		t.Fatal(err)
	}
	part := map[string]func(*Verdict) float64{
		RankTotal:   func(v *Verdict) float64 { return v.Risk.Total },
		RankPerStep: func(v *Verdict) float64 { return v.Risk.PerStep },
		RankEnd:     func(v *Verdict) float64 { return v.Risk.End },
	}
	tops := map[string]bool{}
	for _, by := range RankBys {
		sum, err := Log(lg, c, Options{Rank: 1, RankBy: by}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Riskiest) != 1 || sum.RankedBy != by {
			t.Fatalf("%s: %d riskiest, ranked by %q", by, len(sum.Riskiest), sum.RankedBy)
		}
		top := sum.Riskiest[0]
		tops[top.SessionID] = true
		for _, v := range all {
			if part[by](v) > part[by](top) {
				t.Errorf("by %s: %s (%v) above the top, %s (%v)", by, v.SessionID, part[by](v), top.SessionID, part[by](top))
			}
		}
	}
	if len(tops) < 2 {
		t.Errorf("every part of the risk ranks the same session first (%v): the fixture tells them apart", tops)
	}
}
