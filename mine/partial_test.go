package mine

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
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

	// A session in two shards is refused, naming it and both shards; so
	// is a log two shards read.
	copied := *logs[0]
	copied.Files = slices.Clone(copied.Files)
	for i := range copied.Files {
		copied.Files[i].Path = "copy/" + copied.Files[i].Path
	}
	_, err = MergeLogs([]*Log{logs[0], &copied}, []string{"a.fsp", "b.fsp"})
	if !errors.Is(err, ErrSessionAcrossShards) || !strings.Contains(err.Error(), "is in a.fsp and in b.fsp") {
		t.Errorf("err = %v, want ErrSessionAcrossShards naming a.fsp and b.fsp", err)
	}
	_, err = MergeLogs([]*Log{logs[0], logs[0]}, []string{"a.fsp", "b.fsp"})
	if err == nil || !strings.HasSuffix(err.Error(), "is in a.fsp and in b.fsp: the same log read twice") {
		t.Errorf("err = %v, want the same log read twice, naming a.fsp and b.fsp", err)
	}
	if _, err := ReadPartial(strings.NewReader("not gzip"), "x.fsp"); err == nil || !strings.HasPrefix(err.Error(), "x.fsp: not an fsmine partial result") {
		t.Errorf("ReadPartial(garbage) = %v", err)
	}
}

// TestPartialHostile: a partial result's header and sessions are checked as
// they are read, each error naming the file and line: a negative or huge
// session count (which reserved memory before anything was read), negative
// counts and counts that do not add up over the files, files, a field map
// or bad lines no read gives, a key unknown, in other case or given twice, a
// visit of a name no read gives, a session without an id or visits, a dwell
// no read gives, sessions out of order or given twice, gzip data cut short
// or followed by other bytes, a line past the bound; and counts that
// overflow when partials are merged.
func TestPartialHostile(t *testing.T) {
	const header = `{"schema":"` + PartialSchema + `","files":[{"path":"a.jsonl","sha256":"","records":2,"skipped":0,"duplicates":0,"format":"jsonl"}],` +
		`"records":2,"skipped":0,"duplicates":0,"dropped":0,"folded":0,"detours":0,"step_gaps":0,"bad":[],"fields":null,"labels":null,"names":["","a","__start__"],"sessions":1}` + "\n"
	const session = `{"id":"s","v":[[1,0,null]]}` + "\n"
	gz := func(s string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(s))
		zw.Close()
		return b.Bytes()
	}
	good := gz(header + session)
	if _, err := ReadPartial(bytes.NewReader(good), "p.fsp"); err != nil {
		t.Fatalf("the template: %v", err)
	}
	// edit replaces old, which the template must hold, by new.
	edit := func(old, new string) []byte {
		if !strings.Contains(header+session, old) {
			t.Fatalf("the template has no %s", old)
		}
		return gz(strings.Replace(header+session, old, new, 1))
	}
	bound := ownLineBound
	defer func() { ownLineBound = bound }()
	ownLineBound = 1000
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"sessions -1", edit(`"sessions":1`, `"sessions":-1`), "p.fsp:1: the header's sessions is negative (-1)"},
		{"sessions 2^40", edit(`"sessions":1`, `"sessions":1099511627776`), "p.fsp: the file ends after 1 of the 1099511627776 sessions its header names"},
		{"records -5", edit(`"records":2,"skipped":0,"duplicates":0,"dropped"`, `"records":-5,"skipped":0,"duplicates":0,"dropped"`), "p.fsp:1: the header's records is negative (-5)"},
		{"records not the files'", edit(`"records":2,"skipped":0,"duplicates":0,"dropped"`, `"records":9223372036854775807,"skipped":0,"duplicates":0,"dropped"`), "p.fsp:1: the header's records (9223372036854775807) are not the sum of its files'"},
		{"files' records that wrap around to the header's", edit(`"files":[{"path":"a.jsonl","sha256":"","records":2,`, `"files":[{"path":"b.jsonl","records":9223372036854775807},{"path":"a.jsonl","sha256":"","records":3,`), "p.fsp:1: the header's records (2) are not the sum of its files'"},
		{"a file's records -1", edit(`"records":2,"skipped":0,"duplicates":0,"format"`, `"records":-1,"skipped":0,"duplicates":0,"format"`), "p.fsp:1: files[0] (a.jsonl) has a negative count"},
		{"a file without a path", edit(`"path":"a.jsonl"`, `"path":""`), "p.fsp:1: files[0] has no path"},
		{"a file's digest", edit(`"sha256":""`, `"sha256":"\u001b[2J"`), `p.fsp:1: files[0] (a.jsonl): sha256 "\x1b[2J" is not 64 lowercase hex digits`},
		{"a file's format", edit(`"format":"jsonl"`, `"format":"doc"`), `p.fsp:1: files[0] (a.jsonl): format "doc" is none of ` + strings.Join(Formats(), ", ")},
		{"a field map no read takes", edit(`"fields":null`, `"fields":{"node":"a..b"}`), `p.fsp:1: fields: node: path "a..b": want names joined by dots, e.g. attrs.conversation_id`},
		{"more bad lines than a read keeps", edit(`"bad":[]`, `"bad":[{},{},{},{},{},{}]`), "p.fsp:1: 6 bad lines, and a read keeps 5"},
		{"warnings not counted", edit(`"bad":[]`, `"bad":[],"warnings":[{"file":"a","line":1,"reason":"r"}]`), "p.fsp:1: 1 warnings of 0: a read keeps at most 5, and counts each"},
		{"an unknown key", edit(`"dropped":0`, `"dropped":0,"extra":1`), `p.fsp:1: json: unknown field "extra"`},
		{"a key twice", edit(`"dropped":0`, `"dropped":0,"dropped":7`), `p.fsp:1: the key "dropped" is given twice`},
		{"a key in other case", edit(`"dropped":0`, `"Dropped":0`), `p.fsp:1: key "Dropped" is in other case: want "dropped"`},
		{"a key twice in a session", edit(`{"id":"s",`, `{"id":"s","id":"t",`), `p.fsp:2: the key "id" is given twice`},
		{"an unknown key in a session", edit(`{"id":"s",`, `{"id":"s","n":1,`), `p.fsp:2: unknown key "n"`},
		{"a session key in other case", edit(`{"id":"s",`, `{"ID":"s",`), `p.fsp:2: unknown key "ID"`},
		{"start as a label", edit(`[[1,0,null]]`, `[[2,0,null]]`), `p.fsp:2: session "s": visit 1 has the label "__start__", which no read gives`},
		{"empty label", edit(`[[1,0,null]]`, `[[0,0,null]]`), `p.fsp:2: session "s": visit 1 has the label "", which no read gives`},
		{"no id", edit(`"id":"s"`, `"id":""`), "p.fsp:2: session 1 of 1 has no id or no visit"},
		{"no visit", edit(`[[1,0,null]]`, `[]`), "p.fsp:2: session 1 of 1 has no id or no visit"},
		{"dwell 1e19", edit(`[[1,0,null]]`, `[[1,0,1e19]]`), `p.fsp:2: session "s": visit 1 has a bad dwell`},
		{"dwell -1", edit(`[[1,0,null]]`, `[[1,0,-1]]`), `p.fsp:2: session "s": visit 1 has a bad dwell`},
		{"sessions out of order", edit(`"sessions":1`+"}\n"+session, `"sessions":2`+"}\n"+`{"id":"t","v":[[1,0,null]]}`+"\n"+session), `p.fsp:3: session "s": sessions are not sorted by id, each once (it follows "t")`},
		{"a session twice", edit(`"sessions":1`+"}\n"+session, `"sessions":2`+"}\n"+session+session), `p.fsp:3: session "s": sessions are not sorted by id, each once (it follows "s")`},
		{"a session more", edit(session, session+`{"id":"t","v":[[1,0,null]]}`+"\n"), "p.fsp:3: data after the last of the 1 sessions the header names"},
		{"cut short in the trailer", good[:len(good)-4], fmt.Sprintf("p.fsp: gzip data truncated at byte %d (after %d bytes of data)", len(good)-4, len(header+session))},
		{"bytes after the gzip data", append(append([]byte(nil), good...), "\n"...), fmt.Sprintf("p.fsp: trailing data after the gzip stream at byte %d", len(good))},
		{"a line past the bound", edit(`"id":"s"`, `"id":"`+strings.Repeat("s", 1000)+`"`), "p.fsp:2: line too long (over 1000 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadPartial(bytes.NewReader(tt.file), "p.fsp")
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %s", err, tt.want)
			}
		})
	}
	big, err := ReadPartial(bytes.NewReader(good), "a.fsp")
	if err != nil {
		t.Fatal(err)
	}
	big.Records = math.MaxInt - 1
	other, err := ReadPartial(bytes.NewReader(edit(`"id":"s"`, `"id":"t"`)), "b.fsp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := MergeLogs([]*Log{big, other}, []string{"a.fsp", "b.fsp"}); err == nil || !strings.HasPrefix(err.Error(), "b.fsp: a count (2)") {
		t.Errorf("merging counts past the int's end: %v, want an error naming b.fsp", err)
	}
}

// FuzzReadPartial: any text, gzipped, is read as a partial result or
// refused with an error naming the file, never a panic; what is read
// writes back to a partial that reads the same, merges, and mines a model
// that validates.
func FuzzReadPartial(f *testing.F) {
	header := `{"schema":"` + PartialSchema + `","files":[{"path":"a.jsonl","sha256":"","records":2,"skipped":0,"duplicates":0,"format":"jsonl"}],` +
		`"records":2,"skipped":0,"duplicates":0,"dropped":0,"folded":0,"detours":0,"step_gaps":0,"bad":[],"fields":null,"labels":null,"names":["a","ok","b"],"sessions":2}` + "\n"
	f.Add([]byte(header + `{"id":"s","v":[[0,1,null],[2,1,5]]}` + "\n" + `{"id":"t","v":[[2,1,1.5]]}` + "\n"))
	f.Add([]byte(header + `{"id":"s","v":[[0,1,null]],"id":"t"}` + "\n" + `{"v":[[2,1,1]],"id":"t"}` + "\n"))
	f.Add([]byte(header + `{"id":"s\"{,","v":[[0,1,null]]}` + "\n" + `{"id":"t","v":[[2,1,{"a":1}]]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		lg, err := ReadPartial(&z, "f.fsp")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.fsp") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		var again bytes.Buffer
		if err := lg.WritePartial(&again); err != nil {
			t.Fatal(err)
		}
		back, err := ReadPartial(&again, "back.fsp")
		if err != nil {
			t.Fatalf("what was read does not read back: %v", err)
		}
		if len(back.Sessions) != len(lg.Sessions) || back.Records != lg.Records {
			t.Fatalf("read back %d sessions, %d records; want %d, %d", len(back.Sessions), back.Records, len(lg.Sessions), lg.Records)
		}
		merged, err := MergeLogs([]*Log{lg}, []string{"f.fsp"})
		if err != nil {
			t.Fatal(err)
		}
		m, err := Build(merged, DefaultOptions())
		if errors.Is(err, ErrNoSessions) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPartialImportUnknown: a partial result an earlier fsmine wrote does
// not say how its log was read; it merges with partial results that do, and
// takes their options, while two that say different options do not merge.
func TestPartialImportUnknown(t *testing.T) {
	write := func(lg *Log, strip bool) *Log {
		t.Helper()
		var buf bytes.Buffer
		if err := lg.WritePartial(&buf); err != nil {
			t.Fatal(err)
		}
		if strip {
			zr, err := gzip.NewReader(&buf)
			if err != nil {
				t.Fatal(err)
			}
			var plain bytes.Buffer
			if _, err := plain.ReadFrom(zr); err != nil {
				t.Fatal(err)
			}
			old := bytes.Replace(plain.Bytes(), []byte(`"import":{},`), nil, 1)
			if bytes.Equal(old, plain.Bytes()) {
				t.Fatalf("no import in the header: %.200s", plain.Bytes())
			}
			buf.Reset()
			zw := gzip.NewWriter(&buf)
			zw.Write(old)
			zw.Close()
		}
		back, err := ReadPartial(&buf, "p.fsp")
		if err != nil {
			t.Fatal(err)
		}
		return back
	}
	read := func(name, lifecycle string) *Log {
		t.Helper()
		log := strings.ReplaceAll(sessionsJSONL("a:ok b:ok"), `"s0"`, strconv.Quote(name))
		lg, err := Read([]Input{strInput(name, log)}, ReadOptions{Import: ImportOptions{Lifecycle: lifecycle}})
		if err != nil {
			t.Fatal(err)
		}
		return lg
	}
	old := write(read("old.jsonl", ""), true)
	if !old.importUnknown {
		t.Fatal("a header without import reads as known")
	}
	complete := write(read("new.jsonl", LifecycleComplete), false)
	out, err := MergeLogs([]*Log{old, complete}, []string{"old.fsp", "new.fsp"})
	if err != nil {
		t.Fatalf("an earlier fsmine's partial result does not merge: %v", err)
	}
	if out.Import == nil || out.Import.Lifecycle != LifecycleComplete {
		t.Errorf("merged import %+v, want lifecycle complete", out.Import)
	}
	plain := write(read("plain.jsonl", ""), false)
	if plain.importUnknown || plain.Import != nil {
		t.Errorf("defaults read back as unknown %v, import %+v", plain.importUnknown, plain.Import)
	}
	if _, err := MergeLogs([]*Log{plain, complete}, []string{"plain.fsp", "new.fsp"}); err == nil || !strings.Contains(err.Error(), "different import options: the defaults and --lifecycle complete") {
		t.Errorf("merge of defaults and complete: %v", err)
	}
}

// TestPartialLineBounds: a partial result is written only if it reads
// back: a session line past the line bound, or a header past the header's,
// is refused when writing; a header past the line bound (a log of many
// long names) reads back.
func TestPartialLineBounds(t *testing.T) {
	lineBound, headerBound := ownLineBound, ownHeaderBound
	defer func() { ownLineBound, ownHeaderBound = lineBound, headerBound }()
	ownLineBound, ownHeaderBound = 200, 600
	names := sessionsJSONL(strings.Repeat("n", 150)+":ok", "a:ok")
	lg, err := Read([]Input{strInput("l.jsonl", names)}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := lg.WritePartial(&buf); err != nil {
		t.Fatalf("a header past the line bound: %v", err)
	}
	if _, err := ReadPartial(&buf, "p.fsp"); err != nil {
		t.Fatalf("a header past the line bound does not read back: %v", err)
	}
	long, err := Read([]Input{strInput("l.jsonl", sessionsJSONL(strings.Repeat("a:ok ", 40)))}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := long.WritePartial(io.Discard); err == nil || !strings.Contains(err.Error(), "more than a line of a partial result holds (200)") {
		t.Errorf("a session past the line bound: %v", err)
	}
	ownHeaderBound = 100
	if err := lg.WritePartial(io.Discard); err == nil || !strings.Contains(err.Error(), "more than a partial result's header holds (100)") {
		t.Errorf("a header past its bound: %v", err)
	}
}
