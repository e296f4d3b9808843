package mine

import (
	"bytes"
	"errors"
	"fmt"
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
