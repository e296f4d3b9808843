package stages

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// idLog writes sessions of six records: the customer found, two lookups
// whose names carry an id out of names (tool_get_<0..names-1>), an update,
// a message turn, and a close; the random draws come from seed.
func idLog(sessions, names int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, seed))
	var b strings.Builder
	for s := range sessions {
		for i, n := range []string{"find_customer", fmt.Sprintf("tool_get_%d", rng.IntN(names)),
			fmt.Sprintf("tool_get_%d", rng.IntN(names)), "update_record", "agent_msg", "close_case"} {
			fmt.Fprintf(&b, `{"session_id":"s%d","step":%d,"node":%q}`+"\n", s, i, n)
		}
	}
	return b.String()
}

// wordLog writes sessions of six records over names of words without
// digits (tool_get_bqx): the ids are not ids, each name is a node.
func wordLog(sessions, names int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, seed))
	word := func(n int) string {
		var w []byte
		for {
			w = append(w, byte('a'+n%26))
			if n /= 26; n == 0 {
				return "tool_get_" + string(w)
			}
		}
	}
	var b strings.Builder
	for s := range sessions {
		for i := range 6 {
			fmt.Fprintf(&b, `{"session_id":"s%d","step":%d,"node":%q}`+"\n", s, i, word(rng.IntN(names)))
		}
	}
	return b.String()
}

func TestFoldIDs(t *testing.T) {
	tests := []struct {
		name, key string
		kinds     []int
	}{
		{"tool_get_123", "tool_get_*", []int{idDigits}},
		{"get_order_details", "get_order_details", nil},
		{"goodbye_2", "goodbye_*", []int{idDigits}},
		{"lookupHTTPServer2", "lookupHTTPServer*", []int{idDigits}},
		{"order_3fa85f64_items", "order_*_items", []int{idHex}},
		{"order_deadbeef", "order_deadbeef", nil}, // hex letters only: a word
		{"call-9b2e4c1d-0a6f-4f1e-8c3b-2d5e7f9a1b3c", "call-*", []int{idUUID}},
		{"a1b2", "a*b*", []int{idDigits, idDigits}},
		{"00", "*", []int{idDigits}},
		{"", "", nil},
	}
	for _, tt := range tests {
		key, kinds := foldIDs(tt.name)
		if key != tt.key || !slices.Equal(kinds, tt.kinds) {
			t.Errorf("foldIDs(%q) = %q %v, want %q %v", tt.name, key, kinds, tt.key, tt.kinds)
		}
	}
}

// TestSuggestFoldsIDs: 600 names that differ only in a number are one
// node, tool_get_*, whose rule is a pattern of the number, not 600 names;
// the rules label every name so (Suggest checks that).
func TestSuggestFoldsIDs(t *testing.T) {
	s := suggest(t, idLog(1200, 600, 1), Options{})
	st := stageOf(s)
	if st["tool_get_*"] == "" || len(st) != 4 {
		t.Fatalf("stages of nodes %v, want tool_get_* and three other task nodes", st)
	}
	for _, r := range s.Rules {
		if r.Name == st["tool_get_*"] && !strings.Contains(r.Match["node"], `^tool_get_[0-9]+$`) {
			t.Errorf("rule %q matches %q, want the family's pattern ^tool_get_[0-9]+$", r.Name, r.Match["node"])
		}
		if len(r.Match["node"]) > 200 {
			t.Errorf("rule %q has a pattern of %d bytes", r.Name, len(r.Match["node"]))
		}
	}
	// one name with a number is a name
	s = suggest(t, strings.ReplaceAll(idLog(50, 1, 1), "update_record", "goodbye_2"), Options{})
	if st := stageOf(s); st["goodbye_2"] == "" || st["tool_get_0"] == "" {
		t.Errorf("stages of nodes %v, want goodbye_2 and tool_get_0 by name", st)
	}
	// a name with the mark of its own does not fold, nor a family whose key
	// is a name of the log (FuzzSuggest found both: the node * of "0",
	// "000000" and "*" had a pattern of one id for a name with none)
	for _, names := range [][]string{{"0", "*", "000000", "1A", "0B"}, {"a*1", "a*2", "b"}} {
		var b strings.Builder
		for s := range 6 {
			for i, n := range names {
				fmt.Fprintf(&b, "{\"session_id\":\"s%d\",\"step\":%d,\"node\":%q}\n", s, i, n)
			}
		}
		s := suggest(t, b.String(), Options{Stages: 2})
		for _, n := range names {
			if st := stageOf(s); st[n] == "" {
				t.Errorf("%q: no stage of its own name in %v", n, st)
			}
		}
	}
	// every name of one family: nothing to group
	var b strings.Builder
	for s := range 10 {
		fmt.Fprintf(&b, "{\"session_id\":\"s%d\",\"node\":\"tool_get_%d\"}\n", s, s)
	}
	_, err := Suggest(readLog(t, "l.jsonl", b.String(), nil), Options{})
	if !errors.Is(err, ErrOneNode) || !strings.Contains(err.Error(), `"tool_get_*"): the 10 names differ only in ids`) {
		t.Errorf("Suggest on names of one family: error %v, want ErrOneNode naming tool_get_*", err)
	}
}

// TestSuggestTooManyNodes: past MaxNodes distinct nodes, Suggest refuses
// with ErrTooManyNodes rather than work for hours.
func TestSuggestTooManyNodes(t *testing.T) {
	_, err := Suggest(readLog(t, "l.jsonl", wordLog(2*MaxNodes, 4*MaxNodes, 1), nil), Options{})
	if !errors.Is(err, ErrTooManyNodes) || !strings.Contains(err.Error(), fmt.Sprintf("more than %d", MaxNodes)) {
		t.Errorf("error %v, want ErrTooManyNodes", err)
	}
}

// TestMergerSame holds the merger to clustering from scratch: after every
// merge, each pair's kept candidate is the one measured from a fresh flow,
// and the best merge is the one a look at every pair picks.
func TestMergerSame(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			var log string
			if seed%2 == 0 {
				log = retailLog(60+int(seed)*20, seed)
			} else {
				log = wordLog(40, 30, seed)
			}
			a, err := newAnalysis(readLog(t, "l.jsonl", log, nil))
			if err != nil {
				t.Fatal(err)
			}
			m := a.newMerger()
			for live := a.taskNodes; live > 1; live-- {
				f, pos := a.flow(), a.groupPositions()
				var want *candidate
				for i := range a.groups {
					for j := i + 1; j < len(a.groups); j++ {
						if a.groups[i] == nil || a.groups[j] == nil {
							continue
						}
						c := a.candidate(f, pos, int32(i), int32(j))
						got := m.cands[m.tri(int32(i), int32(j))]
						if got != c {
							t.Fatalf("%d groups left: pair %d,%d kept %+v, measured %+v", live, i, j, got, c)
						}
						if want == nil || better(&c, want) {
							want = &c
						}
					}
				}
				got, ok := m.best()
				if !ok || got != *want {
					t.Fatalf("%d groups left: best %+v, want %+v", live, got, *want)
				}
				m.merge(got)
			}
		})
	}
}

// BenchmarkSuggestNames measures Suggest on logs of idLog with about
// names distinct names (3 records of lookups a name, at random), which
// fold to one node: the time should grow with the records, not the
// names' square.
func BenchmarkSuggestNames(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("names=%d", n), func(b *testing.B) {
			lg := readLog(b, "log.jsonl", idLog(n*3/2, n, 1), nil)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Suggest(lg, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(lg.Records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkSuggestNodes measures Suggest on logs of nodes that do not fold
// (wordLog), up to MaxNodes of them, 6 records each.
func BenchmarkSuggestNodes(b *testing.B) {
	for _, n := range []int{250, 500, MaxNodes} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			lg := readLog(b, "log.jsonl", wordLog(n, n, 1), nil)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Suggest(lg, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
