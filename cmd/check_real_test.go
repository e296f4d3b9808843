package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
	"github.com/fsmine/fsmine/mine"
	"github.com/fsmine/fsmine/mine/check"
)

// realDataDir holds the real logs of ../shared/data/jsonl, when present.
var realDataDir = filepath.Join("..", "..", "shared", "data", "jsonl")

// TestCheckRealLogs trains on one half of a real log and checks the other:
// sessions are split by an FNV hash of their id. Untouched held-out sessions
// pass at the rate logged; then deviations are injected into held-out
// sessions that fit, and each must be caught at the step it was injected:
//
//   - unknown tool: a record of a tool the model never saw is inserted in
//     the middle; caught as unknown_state at that record;
//   - retry beyond the cap: a self-loop back edge X -e-> X of a loop is
//     repeated cap+1 times before a visit of X; caught as loop_cap at the
//     retry that crosses the cap (counted by an independent walk);
//   - skipped stage: a middle stage's records are removed; the session may
//     still be a path of the model (the model allows the shortcut), else it
//     must deviate at the record after the gap;
//   - truncated: the records after a middle stage are removed; the model
//     may end there, else it must be incomplete at the new last record.
//
// Run with -v for the table the report quotes. Skips without the data.
func TestCheckRealLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	tests := []struct {
		name, file, labels string
	}{
		{"tau2 retail", "tau2_retail.jsonl", "../testdata/tau2_retail.labels.json"},
		{"help desk", "helpdesk.jsonl.gz", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(realDataDir, tt.file)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("%s not present", path)
			}
			realLogExperiment(t, path, tt.labels)
		})
	}
}

// realSession is one session's records, in file order, decoded.
type realSession struct {
	id   string
	recs []map[string]any
}

func readRealSessions(t *testing.T, path string) []*realSession {
	t.Helper()
	byID := map[string]*realSession{}
	var order []*realSession
	for _, line := range readLines(t, path) {
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		var rec map[string]any
		if err := d.Decode(&rec); err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprint(rec["session_id"])
		s := byID[id]
		if s == nil {
			s = &realSession{id: id}
			byID[id] = s
			order = append(order, s)
		}
		s.recs = append(s.recs, rec)
	}
	return order
}

func writeRealSessions(t *testing.T, path string, sessions []*realSession) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, s := range sessions {
		for _, r := range s.recs {
			if err := enc.Encode(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// injection is a modified copy of a held-out session and where check must
// find its first deviation: kinds lists the acceptable kinds, step the
// record's step; path says the model may accept the change (a shortcut it
// allows, an ending it knows), later that it may notice it only at a later
// step (a shortcut that leads to another state of the same label).
type injection struct {
	s     *realSession
	kinds []string
	step  int64
	path  bool
	later bool
}

func realLogExperiment(t *testing.T, path, labels string) {
	dir := t.TempDir()
	sessions := readRealSessions(t, path)
	var train, held []*realSession
	for _, s := range sessions {
		h := fnv.New32a()
		h.Write([]byte(s.id))
		if h.Sum32()%2 == 0 {
			train = append(train, s)
		} else {
			held = append(held, s)
		}
	}
	trainPath, heldPath := filepath.Join(dir, "train.jsonl"), filepath.Join(dir, "held.jsonl")
	writeRealSessions(t, trainPath, train)
	writeRealSessions(t, heldPath, held)
	model := filepath.Join(dir, "model.json")
	args := []string{"build", "-q", "-o", model, trainPath}
	if labels != "" {
		args = append(args, "--labels", labels)
	}
	if code, _, stderr := checkRun(args...); code != 0 {
		t.Fatal(stderr)
	}
	m, err := automaton.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := realCheck(t, model, heldPath)
	fit := 0
	for _, v := range verdicts {
		if v.Fits {
			fit++
		}
	}
	t.Logf("trained on %d sessions (%d states, %d transitions); held out %d: %d fit (%.1f%%)",
		len(train), len(m.States), len(m.Transitions), len(held), fit, 100*float64(fit)/float64(len(held)))

	// The held-out log as fsmine reads it: visits, their first records.
	lg := realRead(t, m, heldPath)
	byID := map[string]*realSession{}
	for _, s := range held {
		byID[s.id] = s
	}
	var inj []injection
	kinds := []string{"unknown tool", "retry beyond cap", "skipped stage", "truncated"}
	injected := map[string][]*injection{}
	// Inject into up to realMaxInjected fitting sessions, in id order.
	const realMaxInjected = 1000
	n := 0
	for si := range lg.Sessions {
		ls := &lg.Sessions[si]
		if !verdicts[ls.ID].Fits || len(ls.Visits) < 3 || n == realMaxInjected {
			continue
		}
		n++
		rs := byID[ls.ID]
		// Records of each visit: from its first record's index to the next
		// visit's, in file order (the files keep sessions in step order).
		first := visitFirstRecords(t, lg, ls, rs, heldPath)
		if first == nil {
			continue
		}
		k := len(ls.Visits) / 2
		for _, kind := range kinds {
			var in *injection
			switch kind {
			case "unknown tool":
				in = injectUnknown(rs, first, k)
			case "retry beyond cap":
				in = injectRetries(m, lg, ls, rs, first)
			case "skipped stage":
				in = injectSkip(lg, ls, rs, first, k)
			case "truncated":
				in = injectTruncate(rs, first, k)
			}
			if in == nil {
				continue
			}
			in.s.id = fmt.Sprintf("%s~%s", rs.id, strings.ReplaceAll(kind, " ", "-"))
			for _, r := range in.s.recs {
				r["session_id"] = in.s.id
			}
			inj = append(inj, *in)
			injected[kind] = append(injected[kind], &inj[len(inj)-1])
		}
	}
	var injSessions []*realSession
	for i := range inj {
		injSessions = append(injSessions, inj[i].s)
	}
	injPath := filepath.Join(dir, "injected.jsonl")
	writeRealSessions(t, injPath, injSessions)
	got := realCheck(t, model, injPath)
	t.Logf("%-18s %9s %13s %13s %13s %6s", "injected", "sessions", "at its step", "later", "model path", "wrong")
	for _, kind := range kinds {
		right, later, pathOK, wrong := 0, 0, 0, 0
		for _, in := range injected[kind] {
			v := got[in.s.id]
			switch {
			case v.Fits && in.path:
				pathOK++
			case v.Deviation != nil && v.Deviation.Step == in.step && containsStr(in.kinds, v.Deviation.Kind):
				right++
			case v.Deviation != nil && v.Deviation.Step > in.step && in.later:
				later++
			default:
				wrong++
				dev := "none"
				if v.Deviation != nil {
					dev = fmt.Sprintf("%s at step %d", v.Deviation.Kind, v.Deviation.Step)
				}
				t.Errorf("%s: %s, want %v at step %d", in.s.id, dev, in.kinds, in.step)
			}
		}
		t.Logf("%-18s %9d %13d %13d %13d %6d", kind, len(injected[kind]), right, later, pathOK, wrong)
		if len(injected[kind]) == 0 && kind != "retry beyond cap" {
			t.Errorf("no session to inject %q into", kind)
		}
	}
	// Shortcuts and endings the model accepts: how many take a rare
	// transition at the injected step, which --rare-is-deviation flags.
	rare := realCheck(t, model, injPath, "--rare-is-deviation")
	for _, kind := range []string{"skipped stage", "truncated"} {
		accepted, flagged := 0, 0
		for _, in := range injected[kind] {
			if !got[in.s.id].Fits {
				continue
			}
			accepted++
			d := rare[in.s.id].Deviation
			if d != nil && d.Kind == conform.KindRare && d.Step == in.step && (kind != "truncated" || d.Label == automaton.EndID) {
				flagged++
			}
		}
		t.Logf("%s accepted by the model: %d, of which %d through a rare transition at that step (--rare-is-deviation flags them)", kind, accepted, flagged)
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func realCheck(t *testing.T, model, log string, flags ...string) map[string]check.Verdict {
	t.Helper()
	code, out, stderr := checkRun(append([]string{"check", "--model", model, "--format", "jsonl", log}, flags...)...)
	if code != 0 {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	vs := map[string]check.Verdict{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var v check.Verdict
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		vs[v.SessionID] = v
	}
	return vs
}

func realRead(t *testing.T, m *automaton.Model, path string) *mine.Log {
	t.Helper()
	var lf logFlags
	ropt, err := lf.readOptions(m, "model.json")
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := expandInputs([]string{path}, nil, mine.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := mine.Read(inputs, ropt)
	if err != nil {
		t.Fatal(err)
	}
	return lg
}

// visitFirstRecords maps each visit of ls to the index of its first record
// in rs, or returns nil when the session's records are not in file order.
func visitFirstRecords(t *testing.T, lg *mine.Log, ls *mine.Session, rs *realSession, heldPath string) []int {
	// Lines of the held-out file are the records of the sessions in order;
	// find where rs starts by the first visit's line and the session's
	// position: the records of a session are consecutive lines.
	base := int(ls.Visits[0].Line)
	for i, r := range rs.recs {
		if fmt.Sprint(r["step"]) == fmt.Sprint(ls.Visits[0].Step) {
			base -= i
			break
		}
	}
	var first []int
	for _, v := range ls.Visits {
		i := int(v.Line) - base
		if i < 0 || i >= len(rs.recs) || fmt.Sprint(rs.recs[i]["step"]) != fmt.Sprint(v.Step) {
			return nil
		}
		if n := len(first); n > 0 && i <= first[n-1] {
			return nil
		}
		first = append(first, i)
	}
	return first
}

// withRecs returns a copy of rs with the given records, steps renumbered.
func withRecs(rs *realSession, recs []map[string]any) (*realSession, []int64) {
	out := &realSession{id: rs.id}
	steps := make([]int64, len(recs))
	for i, r := range recs {
		c := make(map[string]any, len(r))
		for k, v := range r {
			c[k] = v
		}
		c["step"] = i
		steps[i] = int64(i)
		out.recs = append(out.recs, c)
	}
	return out, steps
}

func injectUnknown(rs *realSession, first []int, k int) *injection {
	at := first[k+1] // before visit k+1: after all of visit k's records
	var recs []map[string]any
	recs = append(recs, rs.recs[:at]...)
	u := map[string]any{"session_id": rs.id, "node": "zz_unknown_tool", "event": "ok"}
	if ts, ok := rs.recs[at]["ts"]; ok {
		u["ts"] = ts
	}
	recs = append(recs, u)
	recs = append(recs, rs.recs[at:]...)
	s, _ := withRecs(rs, recs)
	return &injection{s: s, kinds: []string{conform.KindUnknownState}, step: int64(at)}
}

// injectSkip removes visit k. When visits k-1 and k+1 share a label they
// could fold into one visit; such sessions are left out.
func injectSkip(lg *mine.Log, ls *mine.Session, rs *realSession, first []int, k int) *injection {
	if ls.Visits[k-1].Label == ls.Visits[k+1].Label {
		return nil
	}
	from, to := first[k], first[k+1]
	var recs []map[string]any
	recs = append(recs, rs.recs[:from]...)
	recs = append(recs, rs.recs[to:]...)
	s, _ := withRecs(rs, recs)
	return &injection{s: s, kinds: []string{conform.KindIllegalTransition, conform.KindUnknownState, conform.KindIncomplete}, step: int64(from), path: true, later: true}
}

func injectTruncate(rs *realSession, first []int, k int) *injection {
	s, _ := withRecs(rs, rs.recs[:first[k+1]])
	return &injection{s: s, kinds: []string{conform.KindIncomplete}, step: int64(first[k]), path: true}
}

// injectRetries finds a visit j of a state X with a self-loop back edge
// X -e-> X in a loop, and inserts cap+1 records of X with event e before
// it. The cap is crossed at the retry where the stay's back-edge count,
// walked independently here, first exceeds the loop's max_iterations.
func injectRetries(m *automaton.Model, lg *mine.Log, ls *mine.Session, rs *realSession, first []int) *injection {
	loopOf := map[string]int{}
	for li, l := range m.Loops {
		for _, s := range l.States {
			loopOf[s] = li
		}
	}
	inLoop := func(s string) int {
		if li, ok := loopOf[s]; ok {
			return li
		}
		return -1
	}
	moves := lg.Moves(ls)
	// Walk the original session: state before each move, and the stay's
	// back-edge count before each move.
	at := automaton.StartID
	stayLoop, iters := -1, 0
	states := []string{}
	itersAfter := []int{}
	for _, mv := range moves {
		tr := m.Next(at, mv)
		if tr == nil {
			return nil
		}
		states = append(states, tr.To)
		lf := inLoop(at)
		if lf < 0 || inLoop(tr.To) != lf {
			stayLoop, iters = -1, 0
		} else if stayLoop != lf {
			stayLoop, iters = lf, 0
		}
		if tr.BackEdge && stayLoop >= 0 {
			iters++
		}
		itersAfter = append(itersAfter, iters)
		at = tr.To
	}
	for j := 1; j < len(ls.Visits); j++ {
		x := states[j]
		li := inLoop(x)
		if li < 0 || m.Loops[li].MaxIterations <= 0 {
			continue
		}
		var self *automaton.Transition
		for _, tr := range m.Out(x) {
			if tr.To == x && tr.BackEdge && !strings.HasPrefix(tr.Event, "detour:") {
				self = tr
				break
			}
		}
		if self == nil {
			continue
		}
		cp := m.Loops[li].MaxIterations
		// Back edges taken in this stay up to the move into visit j (which
		// the first copy takes instead).
		prior := itersAfter[j]
		copies := cp + 1
		// A state's max_run may stop the repeats first: the first copy makes
		// the run of x's label r0+1, the k-th traversal r0+1+k.
		r0 := 0
		for i := j - 1; i >= 0 && moves[i].Label == moves[j].Label; i-- {
			r0++
		}
		kind, kRun := conform.KindLoopCap, -1
		if mr := m.State(x).MaxRun; mr > 0 {
			kRun = mr - r0
		}
		template := rs.recs[first[j]]
		var recs []map[string]any
		recs = append(recs, rs.recs[:first[j]]...)
		for c := 0; c < copies; c++ {
			r := make(map[string]any, len(template))
			for k, v := range template {
				r[k] = v
			}
			r["event"] = self.Event
			recs = append(recs, r)
		}
		recs = append(recs, rs.recs[first[j]:]...)
		s, _ := withRecs(rs, recs)
		// The k-th inserted traversal enters the record first[j]+k; the cap
		// is crossed when prior + k = cp + 1.
		k := cp + 1 - prior
		if kRun >= 1 && kRun <= k {
			kind, k = conform.KindRepeatCap, kRun
		}
		return &injection{s: s, kinds: []string{kind}, step: int64(first[j] + k)}
	}
	return nil
}
