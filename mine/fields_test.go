package mine

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"

	// The reference of FuzzFieldWalker, independent of the code under
	// test (go-json v0.10.5's Valid accepted ",{}", `{"a":1}}`, ":{}").
	stdjson "encoding/json"
)

func TestFieldWalker(t *testing.T) {
	deep := `{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":1}}}}}}}}}`
	tests := []struct {
		name, line string
		want       []string
		bad        bool
	}{
		{"scalars", `{"a":1,"b":"x","c":true,"d":false,"e":-0.5e3}`, []string{"a", "b", "c", "d", "e"}, false},
		{"absent values", `{"a":null,"b":"","c":[],"d":{},"e":[ ],"f":{ }}`, nil, false},
		{"nested and arrays", `{"attrs":{"args":{"order_id":"W1","items":["1","2"],"addr":{"zip":"9"}},"n":[{"x":1}]}}`,
			[]string{"attrs.args.addr.zip", "attrs.args.items", "attrs.args.order_id", "attrs.n"}, false},
		{"core fields left out", `{"session_id":"s","node":"n","event":"e","step":1,"ts":"t","duration_ms":3,"attrs":{"node":"x"}}`, []string{"attrs.node"}, false},
		{"escaped keys", `{"a\"b":1,"c\u002ed":2,"\u00e9":3}`, []string{"a\"b", "c.d", "é"}, false},
		{"invalid UTF-8 keys", "{\"\xff\xfe\":1,\"a\xc3\":{\"b\":2}}", []string{"a\uFFFD.b", "\uFFFD\uFFFD"}, false},
		{"empty keys", `{"":1,"a":{"":2}}`, []string{"a."}, false},
		{"strings holding brackets", `{"a":"}{][","b":["]\"",{"c":"}"}],"d":1}`, []string{"a", "b", "d"}, false},
		{"deeper than the bound is a leaf", deep, []string{"a.b.c.d.e.f.g.h"}, false},
		{"whitespace", " { \"a\" : { \"b\" : 2 } , \"c\" : [ 1 ] } ", []string{"a.b", "c"}, false},
		{"not an object", `[1,2]`, nil, true},
		{"cut", `{"a":{"b":1`, []string{"a.b"}, true},
		{"cut string", `{"a":"x`, nil, true},
		{"no colon", `{"a" 1}`, nil, true},
		{"bad literal", `{"a":nul}`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core := map[string]bool{}
			for _, f := range coreFields {
				core[f] = true
			}
			w := newFieldWalker(core, func(uint32) {})
			var got []string
			err := w.walk([]byte(tt.line), func(id uint32) { got = append(got, w.names[id]) })
			sort.Strings(got)
			if (err != nil) != tt.bad {
				t.Errorf("walk error %v, want bad %v", err, tt.bad)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("paths %q, want %q", got, tt.want)
			}
		})
	}
}

// returnsFieldLog is a returns desk whose lookup and refund records carry
// tool arguments: lookup always an order id (s2's first lookup also a
// note), refund an order id and a reason, except s3's refund, which has no
// reason; every record carries attrs.channel, which says nothing about a
// state. s1 retries its lookup: the visit that leaves is the second.
const returnsFieldLog = `{"session_id":"s0","step":0,"node":"greet","event":"ok","attrs":{"channel":"web"}}
{"session_id":"s0","step":1,"node":"lookup","event":"ok","attrs":{"channel":"web","args":{"order_id":"W1"}}}
{"session_id":"s0","step":2,"node":"refund","event":"ok","attrs":{"channel":"web","args":{"order_id":"W1","reason":"broken"}}}
{"session_id":"s1","step":0,"node":"greet","event":"ok","attrs":{"channel":"web"}}
{"session_id":"s1","step":1,"node":"lookup","event":"retry","attrs":{"channel":"web"}}
{"session_id":"s1","step":2,"node":"lookup","event":"ok","attrs":{"channel":"web","args":{"order_id":"W2","note":""}}}
{"session_id":"s1","step":3,"node":"refund","event":"ok","attrs":{"channel":"web","args":{"order_id":"W2","reason":"late"}}}
{"session_id":"s2","step":0,"node":"greet","event":"ok","attrs":{"channel":"phone","args":{"order_id":"W3"}}}
{"session_id":"s2","step":1,"node":"lookup","event":"ok","attrs":{"channel":"phone","args":{"order_id":"W3","note":"x"}}}
{"session_id":"s2","step":2,"node":"refund","event":"ok","attrs":{"channel":"phone","args":{"order_id":"W3","reason":"wrong"}}}
{"session_id":"s3","step":0,"node":"greet","event":"ok","attrs":{"channel":"web"}}
{"session_id":"s3","step":1,"node":"lookup","event":"ok","attrs":{"channel":"web","args":{"order_id":"W4"}}}
{"session_id":"s3","step":2,"node":"refund","event":"ok","attrs":{"channel":"web","args":{"order_id":"W4"}}}
`

func fieldsOf(m *automaton.Model) map[string][]string {
	out := map[string][]string{}
	for _, s := range m.States {
		if len(s.Fields) > 0 {
			out[s.ID] = s.Fields
		}
	}
	return out
}

func TestRecordFields(t *testing.T) {
	in := strInput("returns.jsonl", returnsFieldLog)
	lg, err := Read([]Input{in}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(lg, labelOpts())
	if err != nil {
		t.Fatal(err)
	}
	plain := m.Digest
	rep, _, err := RecordFields(lg, m, []Input{in}, ReadOptions{}, FieldOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"lookup": {"attrs.args.order_id"},
		"refund": {"attrs.args.order_id"},
	}
	if got := fieldsOf(m); !reflect.DeepEqual(got, want) {
		t.Errorf("fields %q, want %q", got, want)
	}
	wantRep := FieldReport{Records: 13, Leaving: 12, Paths: 4, Everywhere: 1}
	if *rep != wantRep {
		t.Errorf("report %+v, want %+v", *rep, wantRep)
	}
	if !m.Params.Slots || m.Digest == plain || m.Digest != m.ComputeDigest() {
		t.Errorf("slots %v, digest %s (without fields %s)", m.Params.Slots, m.Digest, plain)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}

	// Without s3 every refund has a reason.
	noS3 := strInput("returns.jsonl", returnsFieldLog[:strings.Index(returnsFieldLog, `{"session_id":"s3"`)])
	lg, _ = Read([]Input{noS3}, ReadOptions{})
	m, _ = Build(lg, labelOpts())
	if _, _, err := RecordFields(lg, m, []Input{noS3}, ReadOptions{}, FieldOptions{}); err != nil {
		t.Fatal(err)
	}
	want["refund"] = []string{"attrs.args.order_id", "attrs.args.reason"}
	if got := fieldsOf(m); !reflect.DeepEqual(got, want) {
		t.Errorf("without s3: fields %q, want %q", got, want)
	}

	// A path the field map reads a core field from is left out: here the
	// event, which only lookup and refund records carry, in attrs.ev.
	var mapped strings.Builder
	for _, l := range strings.SplitAfter(returnsFieldLog, "\n") {
		ev := `"event":"ok",`
		if strings.Contains(l, `"node":"greet"`) {
			l = strings.Replace(l, ev, "", 1)
		} else {
			l = strings.Replace(l, `"attrs":{`, `"attrs":{"ev":"ok",`, 1)
			l = strings.Replace(l, ev, "", 1)
			l = strings.Replace(l, `"event":"retry",`, "", 1)
		}
		mapped.WriteString(l)
	}
	in = strInput("mapped.jsonl", mapped.String())
	ropt := ReadOptions{Fields: map[string]string{FieldEvent: "attrs.ev"}}
	lg, err = Read([]Input{in}, ropt)
	if err != nil || lg.Skipped > 0 {
		t.Fatalf("Read: %v, %d skipped %v", err, lg.Skipped, lg.Bad)
	}
	m, _ = Build(lg, labelOpts())
	if _, _, err := RecordFields(lg, m, []Input{in}, ropt, FieldOptions{}); err != nil {
		t.Fatal(err)
	}
	want["refund"] = []string{"attrs.args.order_id"}
	if got := fieldsOf(m); !reflect.DeepEqual(got, want) {
		t.Errorf("with the event in attrs.ev: fields %q, want %q", got, want)
	}
}

// TestRecordFieldsHostileKeys: keys that are not valid UTF-8, empty or
// hold control characters give a model that is written and read back.
func TestRecordFieldsHostileKeys(t *testing.T) {
	log := "{\"session_id\":\"s0\",\"node\":\"a\",\"attrs\":{\"\xff\\u001b[31m\":1,\"\\u2028\":2}}\n" +
		"{\"session_id\":\"s0\",\"node\":\"b\",\"\":3}\n" +
		"{\"session_id\":\"s1\",\"node\":\"a\",\"attrs\":{\"\xfe\\u001b[31m\":1,\"\\u2028\":2}}\n"
	in := strInput("hostile.jsonl", log)
	lg, err := Read([]Input{in}, ReadOptions{})
	if err != nil || lg.Skipped > 0 {
		t.Fatalf("Read: %v %v", err, lg.Bad)
	}
	m, err := Build(lg, labelOpts())
	if err != nil {
		t.Fatal(err)
	}
	rep, _, err := RecordFields(lg, m, []Input{in}, ReadOptions{}, FieldOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"attrs.\u2028", "attrs.\uFFFD\x1b[31m"}; !reflect.DeepEqual(m.State("a").Fields, want) || rep.Unnamed != 1 {
		t.Errorf("fields %q, unnamed %d; want %q, 1", m.State("a").Fields, rep.Unnamed, want)
	}
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := automaton.Read(&buf)
	if err != nil {
		t.Fatalf("reading the model back: %v", err)
	}
	if back.Digest != m.Digest || back.ComputeDigest() != m.Digest {
		t.Errorf("digest %s read back as %s", m.Digest, back.ComputeDigest())
	}
}

func TestRecordFieldsRefusesAStreamedLog(t *testing.T) {
	in := strInput("returns.jsonl", returnsFieldLog)
	lg, err := Read([]Input{in}, ReadOptions{Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(lg, labelOpts())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := RecordFields(lg, m, []Input{in}, ReadOptions{}, FieldOptions{}); err == nil {
		t.Error("RecordFields of a streamed log: no error")
	}
}

// manyFieldLines is a log of sessions of two records, a then b, each with
// perRecord fields attrs.kNNN out of distinct, in turn; b always carries zz
// (the largest path of all) and k000 (the smallest).
func manyFieldLines(sessions, perRecord, distinct int) []string {
	var lines []string
	for s := 0; s < sessions; s++ {
		for step, node := range []string{"a", "b"} {
			var extra strings.Builder
			for k := 0; k < perRecord; k++ {
				fmt.Fprintf(&extra, `,"k%03d":1`, (s*perRecord+k)%distinct)
			}
			if node == "b" {
				extra.WriteString(`,"zz":1,"k000":2`)
			}
			lines = append(lines, fmt.Sprintf(`{"session_id":"s%02d","step":%d,"node":%q,"event":"ok","attrs":{"x":1%s}}`, s, step, node, extra.String()))
		}
	}
	return lines
}

// TestRecordFieldsBound: with more distinct paths than MaxFieldPaths, the
// smallest by name are tracked, whatever the order of the records, and
// what is not is reported.
func TestRecordFieldsBound(t *testing.T) {
	lines := manyFieldLines(40, 10, 300)
	run := func(lines []string) (map[string][]string, FieldReport) {
		in := strInput("many.jsonl", strings.Join(lines, "\n")+"\n")
		lg, err := Read([]Input{in}, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := Build(lg, labelOpts())
		if err != nil {
			t.Fatal(err)
		}
		rep, _, err := RecordFields(lg, m, []Input{in}, ReadOptions{}, FieldOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return fieldsOf(m), *rep
	}
	fields, rep := run(lines)
	want := map[string][]string{"b": {"attrs.k000"}}
	if !reflect.DeepEqual(fields, want) {
		t.Errorf("fields %q, want %q (zz is past the bound)", fields, want)
	}
	// 301 distinct paths: attrs.x, attrs.k000..k299 and attrs.zz; kept
	// the 256 smallest: k000..k254 and... attrs.k is before attrs.x and
	// attrs.zz, so k000..k255.
	if rep.Paths != MaxFieldPaths || rep.LastTracked != "attrs.k255" || rep.FirstUntracked != "attrs.k256" {
		t.Errorf("report %+v: want %d paths, last tracked attrs.k255, first untracked attrs.k256", rep, MaxFieldPaths)
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 5; i++ {
		shuffled := append([]string(nil), lines...)
		rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		f2, rep2 := run(shuffled)
		if !reflect.DeepEqual(f2, fields) || rep2 != rep {
			t.Fatalf("shuffle %d: fields %q report %+v, want %q %+v", i, f2, rep2, fields, rep)
		}
	}
}

// FuzzFieldWalker: the walk never panics, reads every JSON object, and
// finds every present leaf a JSON decoder finds (more only where a key is
// repeated: the decoder keeps the last).
func FuzzFieldWalker(f *testing.F) {
	for _, s := range []string{
		returnsFieldLog[:strings.IndexByte(returnsFieldLog, '\n')],
		`{"a":{"b":[1,{"c":2}],"d":"","e":null,"f":{}},"g\u00e9":true}`,
		`{"a":"\ud800","\xff":1,"b":{"\"":[]}}`,
		`{"":1,"x":{"":2}}`,
		`{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{}}}}}}}}}}`,
		`[{"a":1}]`, `{"a":`, `{"a":1,}`,
	} {
		f.Add([]byte(s))
	}
	core := map[string]bool{}
	for _, c := range coreFields {
		core[c] = true
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		w := newFieldWalker(core, func(uint32) {})
		got := map[string]bool{}
		err := w.walk(line, func(id uint32) { got[w.names[id]] = true })
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		if !stdjson.Valid(line) || dec.Decode(&v) != nil || v == nil {
			return
		}
		if err != nil {
			t.Fatalf("walk(%q): %v", line, err)
		}
		want := map[string]bool{}
		var ref func(m map[string]any, prefix string, depth int)
		ref = func(m map[string]any, prefix string, depth int) {
			for k, val := range m {
				p := string(appendValidUTF8(nil, []byte(k)))
				if prefix != "" {
					p = prefix + "." + p
				}
				present := true
				switch x := val.(type) {
				case nil:
					present = false
				case string:
					present = x != ""
				case []any:
					present = len(x) > 0
				case map[string]any:
					if depth < MaxFieldDepth {
						ref(x, p, depth+1)
						continue
					}
					present = len(x) > 0
				}
				if present && p != "" && len(p) <= MaxFieldPath && !(prefix == "" && core[p]) {
					want[p] = true
				}
			}
		}
		ref(v, "", 1)
		if len(want) > MaxFieldPaths {
			return
		}
		for p := range want {
			if !got[p] {
				t.Errorf("walk(%q) misses %q; got %v", line, p, got)
			}
		}
	})
}

// TestRecordFieldsUpdate: fields found from a log A's evidence and a log B
// equal those found from A and B read together, evidence included, also
// when the paths are more than the bound.
func TestRecordFieldsUpdate(t *testing.T) {
	many := manyFieldLines(30, 12, 320)
	tests := []struct {
		name string
		a, b string
	}{
		{"returns", returnsFieldLog[:strings.Index(returnsFieldLog, `{"session_id":"s2"`)], returnsFieldLog[strings.Index(returnsFieldLog, `{"session_id":"s2"`):]},
		{"past the bound", strings.Join(many[:24], "\n") + "\n", strings.Join(many[24:], "\n") + "\n"},
		{"past the bound, the other way", strings.Join(many[36:], "\n") + "\n", strings.Join(many[:36], "\n") + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ina, inb := strInput("a.jsonl", tt.a), strInput("b.jsonl", tt.b)
			opt := labelOpts()
			// A and B together.
			lg, err := Read([]Input{ina, inb}, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			whole, err := Build(lg, opt)
			if err != nil {
				t.Fatal(err)
			}
			wholeRep, wholeEv, err := RecordFields(lg, whole, []Input{ina, inb}, ReadOptions{}, FieldOptions{Keep: true})
			if err != nil {
				t.Fatal(err)
			}
			// A with its evidence, then B.
			lga, err := Read([]Input{ina}, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ma, err := Build(lga, opt)
			if err != nil {
				t.Fatal(err)
			}
			_, eva, err := RecordFields(lga, ma, []Input{ina}, ReadOptions{}, FieldOptions{Keep: true})
			if err != nil {
				t.Fatal(err)
			}
			var part, fev bytes.Buffer
			if err := lga.WritePartial(&part); err != nil {
				t.Fatal(err)
			}
			if err := eva.Write(&fev); err != nil {
				t.Fatal(err)
			}
			olda, err := ReadPartial(&part, "a.evidence")
			if err != nil {
				t.Fatal(err)
			}
			eva, err = ReadFieldEvidence(&fev, "a.fields")
			if err != nil {
				t.Fatal(err)
			}
			lgb, err := Read([]Input{inb}, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			merged, err := MergeLogs([]*Log{olda, lgb}, []string{"a.evidence", "b.jsonl"})
			if err != nil {
				t.Fatal(err)
			}
			upd, err := Build(merged, opt)
			if err != nil {
				t.Fatal(err)
			}
			updRep, updEv, err := RecordFields(merged, upd, []Input{inb}, ReadOptions{}, FieldOptions{Evidence: eva, Keep: true})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fieldsOf(upd), fieldsOf(whole); !reflect.DeepEqual(got, want) {
				t.Errorf("fields %q, want %q", got, want)
			}
			if upd.Digest != whole.Digest || *updRep != *wholeRep {
				t.Errorf("digest %s report %+v, want %s %+v", upd.Digest, *updRep, whole.Digest, *wholeRep)
			}
			var w1, w2 bytes.Buffer
			if err := wholeEv.Write(&w1); err != nil {
				t.Fatal(err)
			}
			if err := updEv.Write(&w2); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(w1.Bytes(), w2.Bytes()) {
				t.Errorf("the evidence of the update differs from that of the whole: %d paths, %d sets; want %d, %d", len(updEv.Paths), len(updEv.Sets), len(wholeEv.Paths), len(wholeEv.Sets))
			}
			if tt.name != "returns" && wholeRep.FirstUntracked == "" {
				t.Errorf("report %+v: the paths should be past the bound", *wholeRep)
			}
		})
	}
}

// TestReadFieldEvidence: the evidence reads back as written, and a
// damaged or hostile file is refused with what is wrong.
func TestReadFieldEvidence(t *testing.T) {
	in := strInput("returns.jsonl", returnsFieldLog)
	lg, err := Read([]Input{in}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(lg, labelOpts())
	if err != nil {
		t.Fatal(err)
	}
	_, ev, err := RecordFields(lg, m, []Input{in}, ReadOptions{}, FieldOptions{Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := ev.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFieldEvidence(bytes.NewReader(buf.Bytes()), "f")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, ev) {
		t.Errorf("read back %+v, want %+v", back, ev)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	good := string(plain)
	tests := []struct{ name, old, new, want string }{
		{"another schema", `"schema":"fsmine.fields/v1"`, `"schema":"fsmine.fields/v9"`, `fields schema is "fsmine.fields/v9"`},
		{"a set past the paths", `"sets":[[`, `"sets":[[9,`, `sets[0] is not a sorted list of path indexes`},
		{"unsorted paths", `"paths":["attrs.args.note","attrs.args.order_id"`, `"paths":["attrs.args.order_id","attrs.args.note"`, `paths[1] "attrs.args.note": want sorted`},
		{"a count past the records", `"counts":[1,`, `"counts":[99,`, `paths[0] "attrs.args.note": want sorted, unique paths`},
		{"counts missing", `"counts":[1,`, `"counts":[`, `counts for 4 paths`},
		{"a visit past the sets", `{"id":"s0","v":[`, `{"id":"s0","v":[99,`, `session "s0": a visit's set 99 is not one of`},
		{"sessions out of order", `{"id":"s0"`, `{"id":"s9"`, `session "s1": sessions are not sorted and unique`},
		{"a session short", `"sessions":4`, `"sessions":5`, `f: the file ends after 4 of the 5 sessions its header names`},
		{"a session more", `"sessions":4`, `"sessions":3`, `f:5: data after the last of the 3 sessions the header names`},
		{"a negative count", `"too_long":0`, `"too_long":-1`, `a negative count`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(good, tt.old) {
				t.Fatalf("the evidence has no %s:\n%s", tt.old, good)
			}
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write([]byte(strings.Replace(good, tt.old, tt.new, 1)))
			zw.Close()
			_, err := ReadFieldEvidence(&z, "f")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := ReadFieldEvidence(strings.NewReader("not gzip"), "f"); err == nil || !strings.Contains(err.Error(), "f: not fsmine fields evidence") {
		t.Errorf("plain text: err = %v", err)
	}
}
