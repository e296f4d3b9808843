package mine

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestReadSession reads logs for one session at a time (ReadOptions.Session)
// and wants that session alone, as a whole read gives it: the same visits
// (names as text, as the name ids of two reads differ), files, lines and
// dwell; an emptied session in EmptiedIDs alone; nothing for an id not in
// the logs. The counts of the records read stay those of the whole log.
// The logs: the returns sample cut into inputs with its detour rule,
// duplicates across inputs, an empty input and a bad line; and random logs
// whose sessions interleave, with steps out of order or missing, times,
// duplicates and records the rules drop or fold.
func TestReadSession(t *testing.T) {
	defer func(n int) { chunkSize = n }(chunkSize)
	chunkSize = 4 << 10
	data, err := os.ReadFile("../testdata/returns.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	third := len(lines) / 3
	logs := []struct {
		name  string
		ins   []Input
		rules *Rules
	}{{
		name:  "returns",
		rules: readRules(t, "../testdata/returns.labels.json"),
		ins: []Input{
			memInput("a.jsonl", strings.Join(lines[:third], "")),
			memInput("b.jsonl", ""),
			memInput("c.jsonl", lines[third]+strings.Join(lines[third:2*third], "")),
			memInput("d.jsonl", strings.Join(lines[2*third:], "")+lines[0]+lines[1]+"{bad\n"),
		},
	}}
	foldDrop, err := ParseRules([]byte(`{"rules": [
		{"match": {"node": "^noise$"}, "drop": true},
		{"match": {"node": "^tool"}, "state": "tool", "fold": true}
	], "unmatched": "keep"}`))
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(4) {
		logs = append(logs, struct {
			name  string
			ins   []Input
			rules *Rules
		}{fmt.Sprintf("random-%d", seed), randomSessionLogs(seed), foldDrop})
	}
	for _, l := range logs {
		t.Run(l.name, func(t *testing.T) {
			whole, err := Read(l.ins, ReadOptions{Rules: l.rules, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if len(whole.Sessions) < 2 || l.name != "returns" && (whole.Emptied == 0 || whole.Folded == 0) || whole.Duplicates == 0 || whole.Skipped == 0 {
				t.Fatalf("%d sessions, %d emptied, %d duplicates, %d bad lines: the log should have some of each",
					len(whole.Sessions), whole.Emptied, whole.Duplicates, whole.Skipped)
			}
			// Every session of a small log, every fifth of a larger one
			// (the returns sample's 400 would take seconds).
			ids := []string{"no-such-session"}
			step := 1 + len(whole.Sessions)/50
			for i := 0; i < len(whole.Sessions); i += step {
				ids = append(ids, whole.Sessions[i].ID)
			}
			ids = append(ids, whole.EmptiedIDs...)
			counts := func(lg *Log) string {
				return fmt.Sprintf("records %d skipped %d left out %d files %v bad %v", lg.Records, lg.Skipped, lg.LeftOut, fileRecords(lg), lg.Bad)
			}
			for _, id := range ids {
				for _, workers := range []int{1, 3} {
					lg, err := Read(l.ins, ReadOptions{Rules: l.rules, Workers: workers, Session: id})
					if err != nil {
						t.Fatal(err)
					}
					if got, want := counts(lg), counts(whole); got != want {
						t.Errorf("session %q, %d workers: %s, want %s", id, workers, got, want)
					}
					var got, want []string
					for i := range lg.Sessions {
						got = append(got, sessionText(lg, &lg.Sessions[i]))
					}
					if s := findSession(whole, id); s != nil {
						want = append(want, sessionText(whole, s))
					}
					if !slices.Equal(got, want) {
						t.Errorf("session %q, %d workers: sessions\n%s\nwant\n%s", id, workers, strings.Join(got, "\n"), strings.Join(want, "\n"))
					}
					var wantEmptied []string
					if slices.Contains(whole.EmptiedIDs, id) {
						wantEmptied = []string{id}
					}
					if !slices.Equal(lg.EmptiedIDs, wantEmptied) {
						t.Errorf("session %q, %d workers: emptied %q, want %q", id, workers, lg.EmptiedIDs, wantEmptied)
					}
				}
			}
		})
	}
}

// fileRecords is each input's path and counts of records and bad lines.
func fileRecords(lg *Log) []string {
	var out []string
	for _, f := range lg.Files {
		out = append(out, fmt.Sprintf("%s %d %d", f.Path, f.Records, f.Skipped))
	}
	return out
}

// findSession is lg's session with the given id, nil when none.
func findSession(lg *Log, id string) *Session {
	for i := range lg.Sessions {
		if lg.Sessions[i].ID == id {
			return &lg.Sessions[i]
		}
	}
	return nil
}

// sessionText writes a session's visits with their names as text.
func sessionText(lg *Log, s *Session) string {
	var b strings.Builder
	b.WriteString(s.ID)
	for _, v := range s.Visits {
		fmt.Fprintf(&b, " [%s %s step %d %s:%d records %d dwell %v %v]", lg.Name(v.Label), lg.Name(v.Event), v.Step,
			lg.Files[v.File].Path, v.Line, v.Records, v.HasDwell, v.DwellMS)
	}
	return b.String()
}

// randomSessionLogs is three inputs of a random log (from seed) whose
// sessions interleave: some with step numbers out of order, some with
// times alone, some with neither; records repeated exactly (duplicates),
// and nodes that the rules of TestReadSession drop ("noise") or fold
// ("tool...").
func randomSessionLogs(seed uint64) []Input {
	rng := rand.New(rand.NewPCG(seed, 7))
	nodes := []string{"plan", "search", "tool_a", "tool_b", "answer", "noise"}
	var all []string
	for s := range 30 {
		id := fmt.Sprintf("s-%02d", s)
		kind := rng.IntN(3) // 0: steps, 1: times, 2: neither
		n := 1 + rng.IntN(12)
		var recs []string
		for i := range n {
			node := nodes[rng.IntN(len(nodes))]
			if s%7 == 0 {
				node = "noise" // every record dropped: an emptied session
			}
			var r string
			switch kind {
			case 0:
				r = fmt.Sprintf(`{"session_id":%q,"step":%d,"node":%q,"event":"e%d","duration_ms":%d}`, id, i, node, rng.IntN(3), rng.IntN(100))
			case 1:
				r = fmt.Sprintf(`{"session_id":%q,"ts":"2026-01-01T00:00:%02dZ","node":%q,"event":"e%d"}`, id, i*4, node, rng.IntN(3))
			default:
				r = fmt.Sprintf(`{"session_id":%q,"node":%q,"event":"e%d"}`, id, node, rng.IntN(3))
			}
			recs = append(recs, r)
			if rng.IntN(5) == 0 {
				recs = append(recs, r) // an exact duplicate
			}
		}
		if kind != 2 {
			rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
		}
		// Interleave: each record goes to a random place after the
		// session's record before it.
		at := 0
		for _, r := range recs {
			at += rng.IntN(len(all) - at + 1)
			all = slices.Insert(all, at, r)
			at++
		}
	}
	cut1, cut2 := len(all)/3, 2*len(all)/3
	return []Input{
		memInput("r1.jsonl", strings.Join(all[:cut1], "\n")+"\n"),
		memInput("r2.jsonl", strings.Join(all[cut1:cut2], "\n")+"\nnot json\n"),
		memInput("r3.jsonl", strings.Join(all[cut2:], "\n")+"\n"),
	}
}

// TestRereadSession reads a log's arguments and a field's values again for
// one session at a time (ReadOptions.Session) and wants that session's
// alone, as a read of every session gives them; a bad record of another
// session is still the error it is for the whole log.
func TestRereadSession(t *testing.T) {
	lines := strings.SplitAfter(string(argLog(12, 3)), "\n")
	lines = lines[:len(lines)-1] // the empty string after the last newline
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	data := []byte(strings.Join(lines, ""))
	// The rules drop the user's messages: their text is kept, their
	// calls are not judged.
	rules, err := ParseRules([]byte(`{"rules": [{"match": {"node": "^user_msg$"}, "drop": true}], "unmatched": "keep"}`))
	if err != nil {
		t.Fatal(err)
	}
	opt := ReadOptions{Rules: rules}
	whole, err := ReadArgSessions(argInput(data), opt)
	if err != nil {
		t.Fatal(err)
	}
	values, err := SessionValues(argInput(data), opt, "attrs.args.account")
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != 12 || len(values) != 12 {
		t.Fatalf("%d sessions of arguments, %d values: want 12 of each", len(whole), len(values))
	}
	for _, want := range append(whole, ArgSession{ID: "no-such-session"}) {
		opt.Session = want.ID
		got, err := ReadArgSessions(argInput(data), opt)
		if err != nil {
			t.Fatal(err)
		}
		if want.Steps == nil {
			if len(got) != 0 {
				t.Errorf("session %q: %d sessions, want none", want.ID, len(got))
			}
		} else if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("session %q: %+v, want %+v", want.ID, got, want)
		}
		vals, err := SessionValues(argInput(data), opt, "attrs.args.account")
		if err != nil {
			t.Fatal(err)
		}
		wantVals := map[string]string{}
		if v, ok := values[want.ID]; ok {
			wantVals[want.ID] = v
		}
		if !maps.Equal(vals, wantVals) {
			t.Errorf("session %q: values %v, want %v", want.ID, vals, wantVals)
		}
	}
	bad := append(slices.Clip(data), `{"session_id":"zz","step":0,"node":"x","attrs":{"seen":3}}`+"\n"...)
	const wantErr = "args.jsonl:37: attrs.seen: want a string or a list of strings"
	for _, session := range []string{"", "s01"} {
		opt.Session = session
		if _, err := ReadArgSessions(argInput(bad), opt); err == nil || err.Error() != wantErr {
			t.Errorf("session %q: error %v, want %q", session, err, wantErr)
		}
	}
}

// TestReadSessionRealLogs reads sessions of real logs one at a time, as
// replay does, and wants each as the whole read gives it, with the counts
// of the whole log: a tau2 export (JSONL), the help desk log gzipped and its
// XES original (events converted to records).
func TestReadSessionRealLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	for _, rel := range []string{"jsonl/tau2_retail.jsonl", "jsonl/helpdesk.jsonl.gz", "raw/xes/helpdesk.xes.gz"} {
		t.Run(rel, func(t *testing.T) {
			ins := []Input{realInput(t, rel)}
			whole, err := Read(ins, ReadOptions{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			n := len(whole.Sessions)
			if n < 3 {
				t.Fatalf("%d sessions", n)
			}
			counts := func(lg *Log) string {
				return fmt.Sprintf("records %d skipped %d left out %d files %v", lg.Records, lg.Skipped, lg.LeftOut, fileRecords(lg))
			}
			for _, s := range []*Session{&whole.Sessions[0], &whole.Sessions[n/2], &whole.Sessions[n-1]} {
				one, err := Read(ins, ReadOptions{Workers: 2, Session: s.ID})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := counts(one), counts(whole); got != want {
					t.Errorf("session %q: %s, want %s", s.ID, got, want)
				}
				if len(one.Sessions) != 1 {
					t.Fatalf("session %q: read %d sessions, want 1", s.ID, len(one.Sessions))
				}
				if got, want := sessionText(one, &one.Sessions[0]), sessionText(whole, s); got != want {
					t.Errorf("session %q:\n%s\nwant\n%s", s.ID, got, want)
				}
			}
		})
	}
}
