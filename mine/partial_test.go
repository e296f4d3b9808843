package mine

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestPartialMerge checks that building from the merged partial results of
// shards that do not share sessions gives the same model, byte for byte, as
// one build over all the logs.
func TestPartialMerge(t *testing.T) {
	data, _ := benchLog(3000)
	lines := strings.SplitAfter(string(data), "\n")
	// Shard by session id, as a user would: three shards, each split over
	// two files.
	var shards [3][2]strings.Builder
	for i, l := range lines {
		if l == "" {
			continue
		}
		id := l[strings.Index(l, `"s-`)+3 : strings.Index(l, `","step"`)]
		var n int
		fmt.Sscan(id, &n)
		shards[n%3][i%2].WriteString(l)
	}
	rules, err := ParseRules([]byte(`{"rules":[{"match":{"node":"^lookup_order$"},"state":"lookup","fold":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ropt := ReadOptions{Rules: rules}
	var all []Input
	var logs []*Log
	var names []string
	for s := range shards {
		var in []Input
		for f := range shards[s] {
			in = append(in, strInput(fmt.Sprintf("shard%d/part%d.jsonl", s, f), shards[s][f].String()))
		}
		all = append(all, in...)
		lg, err := Read(in, ropt)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := lg.WritePartial(&buf); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("shard%d.fsp", s)
		back, err := ReadPartial(&buf, name)
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, back)
		names = append(names, name)
	}
	merged, err := MergeLogs(logs, names)
	if err != nil {
		t.Fatal(err)
	}
	for _, merge := range Merges {
		o := DefaultOptions()
		o.Merge = merge
		want := mustBuild(t, o, ropt, all...)
		got, err := Build(merged, o)
		if err != nil {
			t.Fatal(err)
		}
		var wb, gb bytes.Buffer
		want.Write(&wb)
		got.Write(&gb)
		if got.Digest != want.Digest || wb.String() != gb.String() {
			t.Errorf("merge %s: merged partials give %s, one build %s (files %v / %v)", merge, got.Digest, want.Digest, got.Source.Files, want.Source.Files)
		}
	}

	// A session in two shards is refused, naming it and both shards.
	_, err = MergeLogs([]*Log{logs[0], logs[0]}, []string{"a.fsp", "b.fsp"})
	if !errors.Is(err, ErrSessionAcrossShards) || !strings.Contains(err.Error(), "is in a.fsp and in b.fsp") {
		t.Errorf("err = %v, want ErrSessionAcrossShards naming a.fsp and b.fsp", err)
	}
	if _, err := ReadPartial(strings.NewReader("not gzip"), "x.fsp"); err == nil || !strings.HasPrefix(err.Error(), "x.fsp: not an fsmine partial result") {
		t.Errorf("ReadPartial(garbage) = %v", err)
	}
}

// TestPartialHostile: a partial result's header and sessions are checked as
// they are read, each error naming the file: a negative or huge session
// count (which reserved memory before anything was read), negative counts,
// a visit of a name no read gives, a session without an id or visits, a
// dwell no read gives; and counts that overflow when partials are merged.
func TestPartialHostile(t *testing.T) {
	partial := func(header, sessions string) *bytes.Buffer {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(`{"schema":"` + PartialSchema + `","files":[],"records":2,"skipped":0,"duplicates":0,"dropped":0,"folded":0,"detours":0,"step_gaps":0,"bad":[],"fields":null,"labels":null,"names":["","a","__start__"],` + header + "}\n" + sessions))
		zw.Close()
		return &b
	}
	tests := []struct{ name, header, sessions, want string }{
		{"sessions -1", `"sessions":-1`, "", "p.fsp: the header's sessions is negative (-1)"},
		{"sessions 2^40", `"sessions":1099511627776`, `{"id":"s","v":[[1,0,null]]}` + "\n", "p.fsp: session 2 of 1099511627776: EOF"},
		{"records -5", `"sessions":0,"records":-5`, "", "p.fsp: the header's records is negative (-5)"},
		{"start as a label", `"sessions":1`, `{"id":"s","v":[[2,0,null]]}` + "\n", `p.fsp: session "s": visit 1 has the label "__start__", which no read gives`},
		{"empty label", `"sessions":1`, `{"id":"s","v":[[0,0,null]]}` + "\n", `p.fsp: session "s": visit 1 has the label "", which no read gives`},
		{"no id", `"sessions":1`, `{"id":"","v":[[1,0,null]]}` + "\n", "p.fsp: session 1 of 1 has no id or no visit"},
		{"no visit", `"sessions":1`, `{"id":"s","v":[]}` + "\n", "p.fsp: session 1 of 1 has no id or no visit"},
		{"dwell 1e19", `"sessions":1`, `{"id":"s","v":[[1,0,1e19]]}` + "\n", `p.fsp: session "s": visit 1 has a bad dwell`},
		{"dwell -1", `"sessions":1`, `{"id":"s","v":[[1,0,-1]]}` + "\n", `p.fsp: session "s": visit 1 has a bad dwell`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The header's keys after the template's win (records).
			b := partial(tt.header, tt.sessions)
			_, err := ReadPartial(b, "p.fsp")
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %s", err, tt.want)
			}
		})
	}
	big, err := ReadPartial(partial(`"sessions":1`, `{"id":"s","v":[[1,0,null]]}`+"\n"), "a.fsp")
	if err != nil {
		t.Fatal(err)
	}
	big.Records = math.MaxInt - 1
	other, err := ReadPartial(partial(`"sessions":1`, `{"id":"t","v":[[1,0,null]]}`+"\n"), "b.fsp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := MergeLogs([]*Log{big, other}, []string{"a.fsp", "b.fsp"}); err == nil || !strings.HasPrefix(err.Error(), "b.fsp: a count (2)") {
		t.Errorf("merging counts past the int's end: %v, want an error naming b.fsp", err)
	}
}
