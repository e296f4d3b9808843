package mine

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

func strInput(name, s string) Input {
	return Input{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(s)), nil }}
}

// sessionsJSONL writes sessions given as "node:event node:event ..." lines,
// one session per entry, as JSONL records with steps.
func sessionsJSONL(sessions ...string) string {
	var b strings.Builder
	for i, s := range sessions {
		for step, tok := range strings.Fields(s) {
			node, event, _ := strings.Cut(tok, ":")
			fmt.Fprintf(&b, `{"session_id":"s%d","step":%d,"node":%q,"event":%q}`+"\n", i, step, node, event)
		}
	}
	return b.String()
}

// readRules reads and parses a label rules file.
func readRules(t *testing.T, path string) *Rules {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseRules(data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustBuild(t *testing.T, opt Options, ropt ReadOptions, inputs ...Input) *automaton.Model {
	t.Helper()
	lg, err := Read(inputs, ropt)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	m, err := Build(lg, opt)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return m
}

// labelOpts is the label merge alone: the tests that use it count the
// transitions sessions took.
func labelOpts() Options {
	o := DefaultOptions()
	o.Merge = MergeLabel
	o.Generalize = GeneralizeNone
	return o
}

func trans(m *automaton.Model) map[string]int {
	out := map[string]int{}
	for _, t := range m.Transitions {
		out[t.From+" -"+t.Event+"-> "+t.To] = t.Count
	}
	return out
}

func TestBuildLabelMerge(t *testing.T) {
	log := sessionsJSONL(
		"greet:ok lookup:found refund:ok",
		"greet:ok lookup:not_found lookup:found refund:ok",
		"greet:ok lookup:found escalate:handoff",
	)
	m := mustBuild(t, labelOpts(), ReadOptions{}, strInput("a.jsonl", log))
	want := map[string]int{
		"__start__ --> greet":         3,
		"greet -ok-> lookup":          3,
		"lookup -not_found-> lookup":  1,
		"lookup -found-> refund":      2,
		"lookup -found-> escalate":    1,
		"refund -ok-> __end__":        2,
		"escalate -handoff-> __end__": 1,
	}
	got := trans(m)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("transition %s count = %d, want %d", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d transitions %v, want %d", len(got), got, len(want))
	}
	if m.Source.Sessions != 3 || m.Source.Events != 10 {
		t.Errorf("sessions, events = %d, %d; want 3, 10", m.Source.Sessions, m.Source.Events)
	}
	if got, want := strings.Join(m.Trunk, " "), "greet lookup refund"; got != want {
		t.Errorf("trunk = %q, want %q", got, want)
	}
	if len(m.Loops) != 1 || m.Loops[0].MaxIterations != 1 || m.Loops[0].States[0] != "lookup" {
		t.Errorf("loops = %+v, want one self-loop on lookup with 1 iteration", m.Loops)
	}
	for _, tr := range m.Transitions {
		if tr.From == "lookup" && tr.To == "lookup" && !tr.BackEdge {
			t.Errorf("self-loop not marked as back edge")
		}
	}
}

func TestRareFlags(t *testing.T) {
	var ss []string
	for i := 0; i < 19; i++ {
		ss = append(ss, "a:ok b:ok")
	}
	ss = append(ss, "a:ok complaint:filed")
	tests := []struct {
		name     string
		count    int
		ratio    float64
		wantRare bool
	}{
		{"ratio flags 1 of 20", 0, 0.1, true},
		{"ratio below share", 0, 0.04, false},
		{"count flags below 2", 2, 0, true},
		{"count at 1 does not", 1, 0, false},
		{"both off", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := labelOpts()
			o.RareCount, o.RareRatio = tt.count, tt.ratio
			m := mustBuild(t, o, ReadOptions{}, strInput("r.jsonl", sessionsJSONL(ss...)))
			var found bool
			for _, tr := range m.Transitions {
				if tr.To == "complaint" {
					found = true
					if tr.Rare != tt.wantRare {
						t.Errorf("complaint transition rare = %v, want %v", tr.Rare, tt.wantRare)
					}
				}
			}
			if !found {
				t.Fatal("rare branch deleted")
			}
		})
	}
}

func TestLoopIterations(t *testing.T) {
	// validate -> collect retry loop: sessions iterate 0, 1, 2, 3 times.
	var ss []string
	for n := 0; n < 4; n++ {
		s := "collect:ok"
		for i := 0; i < n; i++ {
			s += " validate:invalid collect:ok"
		}
		s += " validate:valid done:ok"
		ss = append(ss, s)
	}
	m := mustBuild(t, labelOpts(), ReadOptions{}, strInput("l.jsonl", sessionsJSONL(ss...)))
	if len(m.Loops) != 1 {
		t.Fatalf("loops = %+v, want 1", m.Loops)
	}
	l := m.Loops[0]
	if got := strings.Join(l.States, ","); got != "collect,validate" {
		t.Errorf("loop states = %s", got)
	}
	if l.Count != 6 || l.Sessions != 3 || l.MaxIterations != 3 || l.P95Iterations != 3 {
		t.Errorf("loop = %+v; want count 6, sessions 3, max 3, p95 3", l)
	}
	if len(l.BackEdges) != 1 || l.BackEdges[0] != (automaton.EdgeRef{From: "validate", Event: "invalid", To: "collect"}) {
		t.Errorf("back edges = %+v", l.BackEdges)
	}
}

func TestAlergiaKeepsContexts(t *testing.T) {
	// verify is used in two contexts with different futures: after greet it
	// leads to lookup, after refund_request it leads to payout. With enough
	// data the context-sensitive merge keeps two verify states, the label
	// merge one.
	var ss []string
	for i := 0; i < 200; i++ {
		ss = append(ss, "greet:ok verify:ok lookup:ok refund_request:ok verify:ok payout:ok")
	}
	log := sessionsJSONL(ss...)
	lm := mustBuild(t, labelOpts(), ReadOptions{}, strInput("c.jsonl", log))
	am := mustBuild(t, DefaultOptions(), ReadOptions{}, strInput("c.jsonl", log))
	countVerify := func(m *automaton.Model) (n int, ids []string) {
		for _, s := range m.States {
			if s.Label == "verify" {
				n++
				ids = append(ids, s.ID)
			}
		}
		return
	}
	if n, _ := countVerify(lm); n != 1 {
		t.Errorf("label merge: %d verify states, want 1", n)
	}
	n, ids := countVerify(am)
	if n != 2 {
		t.Fatalf("alergia: %d verify states, want 2", n)
	}
	if strings.Join(ids, " ") != "verify verify@refund_request" {
		t.Errorf("alergia ids = %v, want verify verify@refund_request", ids)
	}
	// The label merge accepts the cross-over greet verify payout; alergia not.
	cross := []automaton.Move{{Event: "", Label: "greet"}, {Event: "ok", Label: "verify"}, {Event: "ok", Label: "payout"}, {Event: "ok", Label: automaton.EndID}}
	if !accepts(lm, cross) || accepts(am, cross) {
		t.Errorf("cross-over accepted by label %v (want true), alergia %v (want false)", accepts(lm, cross), accepts(am, cross))
	}
}

func accepts(m *automaton.Model, mvs []automaton.Move) bool {
	cur := automaton.StartID
	for _, mv := range mvs {
		t := m.Next(cur, mv)
		if t == nil {
			return false
		}
		cur = t.To
	}
	return cur == automaton.EndID
}

func TestReadBadInput(t *testing.T) {
	log := `{"session_id":"a","step":0,"node":"x","event":"ok"}
not json
{"session_id":"a","step":1}
{"session_id":7,"step":2,"node":"y"}
{"session_id":"a","step":"3","node":"y"}
{"session_id":["a"],"node":"y"}

{"session_id":"a","step":1,"node":"y","event":"ok"}
`
	lg, err := Read([]Input{strInput("bad.jsonl", log)}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lg.Skipped != 4 || lg.Records != 3 {
		t.Errorf("skipped, records = %d, %d; want 4, 3", lg.Skipped, lg.Records)
	}
	wantLines := []int{2, 3, 5, 6}
	for i, b := range lg.Bad {
		if b.File != "bad.jsonl" || b.Line != wantLines[i] {
			t.Errorf("bad[%d] = %v, want bad.jsonl:%d", i, b, wantLines[i])
		}
	}
	if !strings.Contains(lg.Bad[1].Reason, "missing node") {
		t.Errorf("reason = %q, want it to say missing node", lg.Bad[1].Reason)
	}
	_, err = Read([]Input{strInput("bad.jsonl", log)}, ReadOptions{Strict: true})
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || !strings.HasPrefix(err.Error(), "bad.jsonl:2: invalid JSON") {
		t.Errorf("strict error = %v, want bad.jsonl:2: invalid JSON...", err)
	}
}

func TestReadOrderDuplicatesGaps(t *testing.T) {
	// Session a comes out of order across two files, with a duplicate line
	// and a gap at step 3; session b has no steps and orders by time.
	f1 := `{"session_id":"a","step":2,"node":"c","event":"ok"}
{"session_id":"b","ts":"2026-01-01T00:00:02Z","node":"q","event":"e2"}
{"session_id":"a","step":0,"node":"a","event":"ok"}
`
	f2 := `{"session_id":"a","step":1,"node":"b","event":"ok"}
{"session_id":"a","step":0,"node":"a","event":"ok"}
{"session_id":"b","ts":1767225601,"node":"p","event":"e1"}
{"session_id":"a","step":4,"node":"d","event":"end"}
`
	lg, err := Read([]Input{strInput("1.jsonl", f1), strInput("2.jsonl", f2)}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lg.Duplicates != 1 || lg.StepGaps != 1 {
		t.Errorf("duplicates, gaps = %d, %d; want 1, 1", lg.Duplicates, lg.StepGaps)
	}
	seq := func(s Session) string {
		var out []string
		for _, v := range s.Visits {
			out = append(out, lg.Name(v.Label))
		}
		return strings.Join(out, " ")
	}
	if got := seq(lg.Sessions[0]); got != "a b c d" {
		t.Errorf("session a = %q, want a b c d", got)
	}
	if got := seq(lg.Sessions[1]); got != "p q" {
		t.Errorf("session b = %q, want p q", got)
	}
	if d := lg.Sessions[1].Visits[0]; !d.HasDwell || d.DwellMS != 1000 {
		t.Errorf("dwell of p = %v (known %v), want 1000 ms", d.DwellMS, d.HasDwell)
	}
}

func TestReadGzipAndFieldMap(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, `{"conversation_id":"c1","tool":{"name":"search"},"outcome":"hit"}`+"\n")
	io.WriteString(zw, `{"conversation_id":"c1","tool":{"name":"answer"},"outcome":"ok"}`+"\n")
	zw.Close()
	gz := buf.String()
	fields, err := ParseFieldMap([]string{"session_id=conversation_id", "node=tool.name", "event=outcome"})
	if err != nil {
		t.Fatal(err)
	}
	m := mustBuild(t, labelOpts(), ReadOptions{Fields: fields}, strInput("x.jsonl.gz", gz))
	if got := trans(m)["search -hit-> answer"]; got != 1 {
		t.Errorf("search -hit-> answer = %d, want 1 (transitions %v)", got, trans(m))
	}
	if _, err := ParseFieldMap([]string{"sesion=x"}); err == nil {
		t.Error("ParseFieldMap accepted an unknown field")
	}
}

func TestLabelRules(t *testing.T) {
	rules := `{"rules":[
	  {"name":"text","why":"message turns carry no step","match":{"node":"^agent_msg$"},"drop":true},
	  {"match":{"node":"^get_(order|user)_details$"},"state":"lookup_$1","fold":true},
	  {"match":{"node":"^smalltalk$"},"state":"smalltalk","detour":true},
	  {"match":{"node":"^(?P<verb>cancel|return)_.*$","attrs.kind":"^(vip)$"},"state":"${verb}_$2"}
	],"unmatched":"keep"}`
	rs, err := ParseRules([]byte(rules))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rs.Rules[0].Why, "message turns carry no step"; got != want {
		t.Errorf("rule 1 why = %q, want %q", got, want)
	}
	log := `{"session_id":"s","step":0,"node":"agent_msg","event":"agent"}
{"session_id":"s","step":1,"node":"get_order_details","event":"ok"}
{"session_id":"s","step":2,"node":"get_order_details","event":"ok"}
{"session_id":"s","step":3,"node":"smalltalk","event":"chat"}
{"session_id":"s","step":4,"node":"get_order_details","event":"found"}
{"session_id":"s","step":5,"node":"return_items","event":"ok","attrs":{"kind":"vip"}}
{"session_id":"s","step":6,"node":"other","event":"bye"}
`
	m := mustBuild(t, labelOpts(), ReadOptions{Rules: rs}, strInput("r.jsonl", log))
	want := map[string]int{
		"__start__ --> lookup_order":                    1,
		"lookup_order -detour:smalltalk-> lookup_order": 1,
		"lookup_order -found-> return_vip":              1,
		"return_vip -ok-> other":                        1,
		"other -bye-> __end__":                          1,
	}
	got := trans(m)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	if m.Source.Dropped != 1 || m.Source.Detours != 1 || m.Source.Folded != 1 {
		t.Errorf("dropped, detours, folded = %d, %d, %d; want 1, 1, 1", m.Source.Dropped, m.Source.Detours, m.Source.Folded)
	}
}

func TestParseRulesErrors(t *testing.T) {
	tests := []struct {
		name, rules, want string
	}{
		{"bad regexp", `{"rules":[{"name":"x","match":{"node":"("},"state":"a"}]}`, `rule 1 ("x"): field "node": error parsing regexp`},
		{"no action", `{"rules":[{"match":{"node":"a"}}]}`, `rule 1: needs "state" or "drop": true`},
		{"both", `{"rules":[{"match":{"node":"a"},"state":"s","drop":true}]}`, `rule 1: has both "state" and "drop"`},
		{"capture out of range", `{"rules":[{"match":{"node":"a"},"state":"$1"}]}`, `rule 1: state "$1": $1: the patterns have 0 capture groups`},
		{"unknown name", `{"rules":[{"match":{"node":"(a)"},"state":"${x}"}]}`, `no capture group has that name`},
		{"empty match", `{"rules":[{"match":{},"state":"a"}]}`, `"match" is empty`},
		{"unmatched", `{"rules":[],"unmatched":"skip"}`, `"unmatched" is "skip"`},
		{"unknown key", `{"rulez":[]}`, `unknown key "rulez"`},
		{"reserved", `{"rules":[{"match":{"node":"a"},"state":"__end__"}]}`, `reserved`},
		// The decoder would join two "match" objects into one condition,
		// and keep the last of other keys given twice.
		{"match twice", `{"rules":[{"match":{"node":"^a$"},"match":{"event":"^ok$"},"state":"A"}]}`, `the key "match" is given twice in rules[0]`},
		{"pattern twice", `{"rules":[{"match":{"node":"^a$","node":"^b$"},"state":"A"}]}`, `the key "node" is given twice in rules[0].match`},
		{"rules twice", `{"rules":[],"rules":[{"match":{"node":"^a$"},"state":"A"}]}`, `the key "rules" is given twice`},
		{"match in other case", `{"rules":[{"match":{"node":"^a$"},"Match":{"event":"^ok$"},"state":"A"}]}`, `rules[0]: key "Match" is in other case: want "match"`},
		{"rules in other case", `{"Rules":[{"match":{"node":"^a$"},"state":"A"}]}`, `key "Rules" is in other case: want "rules"`},
		// The first rule that matches wins: the second never would.
		{"match of an earlier rule", `{"rules":[{"match":{"node":"^a$","event":"ok"},"state":"A"},{"match":{"node":"^b$"},"drop":true},{"name":"again","match":{"event":"ok","node":"^a$"},"state":"B"}]}`,
			`rule 3 ("again"): its "match" is rule 1's, which takes every record it would`},
		// The decoder would read it as U+FFFD and match other text.
		{"half a surrogate pair", `{"rules":[{"match":{"node":"^a\udc00$"},"state":"A"}]}`, `label rules: line 1: a string holds \udc00, half of a UTF-16 surrogate pair`},
		// ${a} would take the last group so named, the others lost.
		{"a group name twice", `{"rules":[{"match":{"node":"^(?P<a>s)(?P<a>t)"},"state":"${a}"}]}`, `rule 1: two capture groups are named "a"`},
		{"a group name in two fields", `{"rules":[{"match":{"node":"^(?P<a>.*)$","event":"^(?P<a>.*)$"},"state":"${a}"}]}`, `rule 1: two capture groups are named "a"`},
		// null decoded as no rules, and a model stored it as null.
		{"null", `null`, `label rules: want a JSON object, {"rules": [...]}`},
		{"an array", `[]`, `label rules: want a JSON object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRules([]byte(tt.rules))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseRules error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestParseStoredRules: the rules a model or partial result holds are read
// as the fsmine that wrote them read them, what a rules file may no longer
// say included, so that the model still checks its logs; the rest is
// refused as ParseRules refuses it.
func TestParseStoredRules(t *testing.T) {
	for _, rules := range []string{
		`{"rules":[{"match":{"node":"^a$"},"state":"A"},{"match":{"node":"^a$"},"state":"B"}]}`,
		`{"rules":[{"match":{"node":"^a\udc00$"},"state":"A"}]}`,
	} {
		if _, err := ParseRules([]byte(rules)); err == nil {
			t.Errorf("ParseRules(%s) took it", rules)
		}
		rs, err := ParseStoredRules([]byte(rules))
		if err != nil {
			t.Errorf("ParseStoredRules(%s): %v", rules, err)
			continue
		}
		if got := rs.Rules[0].State; got != "A" {
			t.Errorf("ParseStoredRules(%s): first rule's state %q", rules, got)
		}
	}
	if _, err := ParseStoredRules([]byte(`{"rules":[{"match":{"node":"^a$"},"match":{"event":"x"},"state":"A"}]}`)); err == nil {
		t.Error("ParseStoredRules took a key given twice")
	}
}

func TestUnmatchedError(t *testing.T) {
	rs, err := ParseRules([]byte(`{"rules":[{"match":{"node":"^a$"},"state":"A"}],"unmatched":"error"}`))
	if err != nil {
		t.Fatal(err)
	}
	log := sessionsJSONL("a:ok b:ok")
	_, err = Read([]Input{strInput("u.jsonl", log)}, ReadOptions{Rules: rs})
	if err == nil || !strings.HasPrefix(err.Error(), "u.jsonl:2: no label rule matches") {
		t.Errorf("err = %v, want u.jsonl:2: no label rule matches...", err)
	}
}

// TestDeterminism checks that shuffling the interleaving of records across
// files and changing the number of parsing workers gives the same bytes, for
// the default generalisation and the any-order end.
func TestDeterminism(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var lines []string
	stages := []string{"greet", "verify", "lookup", "refund", "escalate", "close"}
	events := []string{"ok", "failed", "found"}
	for s := 0; s < 300; s++ {
		n := 2 + rng.Intn(8)
		for i := 0; i < n; i++ {
			lines = append(lines, fmt.Sprintf(`{"session_id":"s%03d","step":%d,"node":%q,"event":%q,"ts":%d}`,
				s, i, stages[rng.Intn(len(stages))], events[rng.Intn(len(events))], 1767225600+s*100+i*3))
		}
	}
	build := func(lines []string, workers int, merge, gen string) string {
		half := len(lines) / 2
		a := strings.Join(lines[:half], "\n") + "\n"
		b := strings.Join(lines[half:], "\n") + "\n"
		o := DefaultOptions()
		o.Merge, o.Generalize = merge, gen
		m := mustBuild(t, o, ReadOptions{Workers: workers}, strInput("a", a), strInput("b", b))
		m.Source.Files = nil // names and hashes differ by design
		var buf bytes.Buffer
		if err := m.Write(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	for _, merge := range Merges {
		for _, gen := range []string{GeneralizeAuto, GeneralizeAnyOrder} {
			want := build(lines, 1, merge, gen)
			for trial := 0; trial < 3; trial++ {
				shuffled := append([]string(nil), lines...)
				rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
				if got := build(shuffled, 4, merge, gen); got != want {
					t.Fatalf("merge %s, generalize %s: shuffled build with 4 workers differs from ordered build with 1", merge, gen)
				}
			}
		}
	}
}

func TestReadLongLines(t *testing.T) {
	// A 3 MiB prompt in one record crosses several read chunks; the last
	// line has no newline.
	big := strings.Repeat("x", 3<<20)
	log := `{"session_id":"s","step":0,"node":"a","event":"ok","prompt":"` + big + `"}` + "\n" +
		`{"session_id":"s","step":1,"node":"b","event":"ok"}`
	lg, err := Read([]Input{strInput("big.jsonl", log)}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lg.Records != 2 || lg.Skipped != 0 || lg.Sessions[0].Visits[1].Line != 2 {
		t.Errorf("records %d, skipped %d, want 2, 0 with b on line 2", lg.Records, lg.Skipped)
	}
}

// TestReadLineLimit: a line longer than MaxLine is a bad line, skipped and
// counted with its file and number (strict: the error), whatever its
// length past the bound; one as long as the bound is read. The skipped
// line is hashed with the rest of the input, and the reads again that
// measure the records skip it too. A 100 MB line in a 64 MiB bound was
// taken (its end came in the buffer that had doubled past the bound), and
// a longer one stopped the whole read.
func TestReadLineLimit(t *testing.T) {
	const maxLine = 1 << 20
	rec := func(step int, pad int) string {
		s := fmt.Sprintf(`{"session_id":"s","step":%d,"node":"n%d","tokens":{"prompt":1},"p":"`, step, step)
		return s + strings.Repeat("x", pad-len(s)-2) + `"}`
	}
	log := rec(0, maxLine) + "\n" + // as long as the bound: read
		rec(1, maxLine+1) + "\n" + // one byte past it
		rec(2, 100) + "\n" +
		rec(3, maxLine*3/2) + "\n" + // ends in the buffer that doubled past the bound
		rec(4, 5*maxLine) + "\n" + // read through
		rec(5, 100) + "\n" +
		rec(6, 3*maxLine) // the last line, without its newline
	want := []string{
		"big.jsonl:2: line too long (over 1048576 bytes)",
		"big.jsonl:4: line too long (over 1048576 bytes)",
		"big.jsonl:5: line too long (over 1048576 bytes)",
		"big.jsonl:7: line too long (over 1048576 bytes)",
	}
	sum := sha256.Sum256([]byte(log))
	for _, stream := range []bool{false, true} {
		in := strInput("big.jsonl", log)
		opt := ReadOptions{MaxLine: maxLine, Stream: stream}
		lg, err := Read([]Input{in}, opt)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, b := range lg.Bad {
			got = append(got, b.String())
		}
		if lg.Records != 3 || lg.Skipped != 4 || !slices.Equal(got, want[:min(len(want), maxBadExamples)]) {
			t.Errorf("stream %v: records %d, skipped %d, bad %q; want 3, 4, %q", stream, lg.Records, lg.Skipped, got, want)
		}
		if lg.Files[0].SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("stream %v: sha256 %s, want the input's", stream, lg.Files[0].SHA256)
		}
		if stream {
			continue
		}
		ms, err := Measure([]Input{in}, opt, lg, []string{"tokens.prompt"})
		if err != nil {
			t.Fatal(err)
		}
		if ms.Found[0] != 3 {
			t.Errorf("measured %d records, want the 3 read", ms.Found[0])
		}
	}
	_, err := Read([]Input{strInput("big.jsonl", log)}, ReadOptions{MaxLine: maxLine, Strict: true})
	if err == nil || err.Error() != want[0] {
		t.Errorf("strict: err = %v, want %s", err, want[0])
	}
}

func TestVisitFiles(t *testing.T) {
	// Visits name the file and line of their first record, across inputs
	// with no records, only bad lines, and records.
	inputs := []Input{
		strInput("empty.jsonl", ""),
		strInput("bad.jsonl", "nope\n{\"session_id\":\n"),
		strInput("a.jsonl", `{"session_id":"s","step":0,"node":"a"}`+"\n"),
		strInput("empty2.jsonl", ""),
		strInput("b.jsonl", "\n"+`{"session_id":"s","step":1,"node":"b"}`+"\n"),
	}
	lg, err := Read(inputs, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range lg.Sessions[0].Visits {
		got = append(got, fmt.Sprintf("%s:%d", lg.Files[v.File].Path, v.Line))
	}
	if strings.Join(got, " ") != "a.jsonl:1 b.jsonl:2" {
		t.Errorf("visits at %v, want a.jsonl:1 b.jsonl:2", got)
	}
}

func TestReadBOM(t *testing.T) {
	lg, err := Read([]Input{strInput("bom.jsonl", "\xef\xbb\xbf"+`{"session_id":"s","node":"a"}`+"\n")}, ReadOptions{Strict: true})
	if err != nil || lg.Records != 1 {
		t.Fatalf("Read with a byte-order mark: %v, %d records", err, lg.Records)
	}
}

func TestExplicitEndRecord(t *testing.T) {
	// fsmine serve logs a step into __end__; it is dropped and counted, not
	// a bad line.
	log := sessionsJSONL("a:ok b:done __end__:")
	lg, err := Read([]Input{strInput("d.jsonl", log)}, ReadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if lg.Dropped != 1 || len(lg.Sessions[0].Visits) != 2 {
		t.Errorf("dropped %d, visits %d; want 1, 2", lg.Dropped, len(lg.Sessions[0].Visits))
	}
}

// TestReadEmptied: a session whose every record the label rules drop is no
// session of the log, and is counted, read whole or streaming.
func TestReadEmptied(t *testing.T) {
	log := `{"session_id":"a","step":0,"node":"chat"}
{"session_id":"a","step":1,"node":"x"}
{"session_id":"b","step":0,"node":"chat"}
{"session_id":"b","step":1,"node":"chat"}
`
	rules, err := ParseRules([]byte(`{"rules": [{"match": {"node": "^chat$"}, "drop": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{false, true} {
		lg, err := Read([]Input{strInput("e.jsonl", log)}, ReadOptions{Strict: true, Rules: rules, Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		if lg.Emptied != 1 || lg.Dropped != 3 || lg.NumSessions() != 1 {
			t.Errorf("stream %v: emptied %d, dropped %d, sessions %d; want 1, 3, 1", stream, lg.Emptied, lg.Dropped, lg.NumSessions())
		}
		if want := []string{"b"}; stream && lg.EmptiedIDs != nil || !stream && !slices.Equal(lg.EmptiedIDs, want) {
			t.Errorf("stream %v: emptied ids %q; want %q read whole, none streaming", stream, lg.EmptiedIDs, want)
		}
	}
}

// TestReadDurationOutOfRange: a duration a model cannot hold as a dwell
// (2^63 ms or more, also once rounded to the float32 records keep) is a
// bad line naming the field, not a dwell that fails the whole build when
// the model is checked (with no file or line), or an infinite one.
func TestReadDurationOutOfRange(t *testing.T) {
	log := `{"session_id":"a","step":0,"node":"x","event":"ok","duration_ms":1e39}
{"session_id":"a","step":1,"node":"y","event":"ok","duration_ms":3e38}
{"session_id":"a","step":2,"node":"y","event":"ok","duration_ms":1e19}
{"session_id":"a","step":3,"node":"y","event":"ok","duration_ms":9223372036854775807}
{"session_id":"a","step":4,"node":"y","event":"ok","duration_ms":9223372036854775000}
{"session_id":"a","step":5,"node":"z","event":"ok","duration_ms":9.2e18}
`
	lg, err := Read([]Input{strInput("d.jsonl", log)}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range lg.Bad {
		got = append(got, b.String())
	}
	want := []string{
		"d.jsonl:1: duration_ms is 1e39, more milliseconds than fsmine keeps (under 2^63)",
		"d.jsonl:2: duration_ms is 3e38, more milliseconds than fsmine keeps (under 2^63)",
		"d.jsonl:3: duration_ms is 1e19, more milliseconds than fsmine keeps (under 2^63)",
		"d.jsonl:4: duration_ms is 9223372036854775807, more milliseconds than fsmine keeps (under 2^63)",
		"d.jsonl:5: duration_ms is 9223372036854775000, more milliseconds than fsmine keeps (under 2^63)",
	}
	if lg.Skipped != 5 || !slices.Equal(got, want) {
		t.Fatalf("skipped %d, bad %q; want %q", lg.Skipped, got, want)
	}
	m, err := Build(lg, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
	if d, want := m.State("z").DwellMS, float64(float32(9.2e18)); d == nil || d.Max != want {
		t.Errorf("dwell of z %+v, want %v ms", d, want)
	}
}

// TestDwellSumBelowModelBound: a visit's dwell sums the durations of the
// records it stands for (here an explicit end record, dropped), each below
// 2^63 ms: the sum stops below 2^63 too, where the model file holds it.
func TestDwellSumBelowModelBound(t *testing.T) {
	log := `{"session_id":"a","step":0,"node":"x","duration_ms":6e18}
{"session_id":"a","step":1,"node":"__end__","duration_ms":6e18}
`
	lg, err := Read([]Input{strInput("d.jsonl", log)}, ReadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(lg, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if d := m.State("x").DwellMS; d == nil || d.Max != 1<<63-1<<10 {
		t.Errorf("dwell of x %+v, want the greatest below 2^63 ms", d)
	}
}

func TestReadTruncatedGzip(t *testing.T) {
	// A gzip input cut anywhere before its trailer is an error naming the
	// file and where it ends, not a shorter log: also when cut on a
	// flushed block boundary, where every line read so far is whole.
	data := sessionsJSONL("a:ok b:ok c:done", "a:ok c:done", "a:retry a:ok b:ok c:done")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	var flushed []int // compressed sizes at block boundaries
	for _, line := range strings.SplitAfter(data, "\n") {
		io.WriteString(zw, line)
		zw.Flush()
		flushed = append(flushed, buf.Len())
	}
	zw.Close()
	gz := buf.Bytes()
	if _, err := Read([]Input{strInput("whole.gz", string(gz))}, ReadOptions{}); err != nil {
		t.Fatalf("whole input: %v", err)
	}
	cuts := append([]int{2, 5, 10, len(gz) / 2, len(gz) - 8, len(gz) - 1}, flushed[:len(flushed)-1]...)
	for _, cut := range cuts {
		t.Run(fmt.Sprint("cut=", cut), func(t *testing.T) {
			for _, stream := range []bool{false, true} {
				_, err := Read([]Input{strInput("t.gz", string(gz[:cut]))}, ReadOptions{Stream: stream})
				var te *TruncatedError
				if !errors.As(err, &te) {
					t.Fatalf("stream=%v: err = %v, want a TruncatedError", stream, err)
				}
				want := fmt.Sprintf("reading t.gz: gzip data truncated at byte %d", cut)
				if !strings.HasPrefix(err.Error(), want) {
					t.Errorf("stream=%v: err = %q, want it to start %q", stream, err, want)
				}
			}
		})
	}
}

// TestReadGzipMembers checks that concatenated gzip files read as one
// stream of all their members, and that bytes after the last member that
// start no other are an error naming where they start, where they were
// reported as truncated gzip data (under 10 bytes) or an invalid header.
func TestReadGzipMembers(t *testing.T) {
	gz := func(data string) string {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		io.WriteString(zw, data)
		zw.Close()
		return buf.String()
	}
	a := gz(sessionsJSONL("a:ok b:ok c:done"))
	b := gz(strings.ReplaceAll(sessionsJSONL("a:retry c:done"), `"s0"`, `"s1"`))
	tests := []struct {
		name    string
		input   string
		records int
		want    string // the error, "" for none
	}{
		{"one member", a, 3, ""},
		{"two members", a + b, 5, ""},
		{"an empty member between", gz("") + a + gz("") + b, 5, ""},
		{"junk after", a + "junk", 0, fmt.Sprintf("reading t.gz: trailing data after the gzip stream at byte %d", len(a))},
		{"junk after the second member", a + b + "junk that is longer than a header", 0, fmt.Sprintf("reading t.gz: trailing data after the gzip stream at byte %d", len(a+b))},
		{"zeros after", a + strings.Repeat("\x00", 512), 0, fmt.Sprintf("reading t.gz: trailing data after the gzip stream at byte %d", len(a))},
		{"a newline after", a + "\n", 0, fmt.Sprintf("reading t.gz: trailing data after the gzip stream at byte %d", len(a))},
		{"a second member cut short", a + b[:1], 0, fmt.Sprintf("reading t.gz: gzip data truncated at byte %d", len(a)+1)},
		{"a second member cut in its header", a + b[:5], 0, fmt.Sprintf("reading t.gz: gzip data truncated at byte %d", len(a)+5)},
		{"a second member cut in its data", a + b[:len(b)-4], 0, fmt.Sprintf("reading t.gz: gzip data truncated at byte %d", len(a)+len(b)-4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, stream := range []bool{false, true} {
				lg, err := Read([]Input{strInput("t.gz", tt.input)}, ReadOptions{Stream: stream})
				if tt.want == "" {
					if err != nil {
						t.Fatalf("stream=%v: %v", stream, err)
					}
					if lg.Records != tt.records {
						t.Errorf("stream=%v: %d records, want %d", stream, lg.Records, tt.records)
					}
					continue
				}
				if err == nil {
					t.Fatalf("stream=%v: Read succeeded, want an error starting %q", stream, tt.want)
				}
				if !strings.HasPrefix(err.Error(), tt.want) {
					t.Errorf("stream=%v: err = %q, want it to start %q", stream, err, tt.want)
				}
			}
		})
	}
}

func TestParseChunkAllocatesPerRecord(t *testing.T) {
	// A chunk of blank lines holds no record and must not reserve one per
	// line: 1 MiB of newlines took 112 MiB of records, and a 9 MB gzip of
	// 2 GB of them over 6 GB of memory.
	tests := []struct {
		name    string
		data    string
		records int
	}{
		{"newlines", strings.Repeat("\n", 1<<20), 0},
		{"blank lines", strings.Repeat(" \t\r\n", 1<<18), 0},
		{"records among newlines", strings.Repeat("\n", 1<<20) + sessionsJSONL("a:ok b:done"), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := newParser(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			c := &chunk{firstLine: 1, data: []byte(tt.data)}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			parseChunk(p, c, "blank.jsonl")
			runtime.ReadMemStats(&after)
			if len(c.recs) != tt.records {
				t.Fatalf("%d records, want %d", len(c.recs), tt.records)
			}
			// The records reserved for a chunk may take a few times its
			// bytes (a record is 112 bytes, reserved for every 32), not
			// a hundred times.
			if got, limit := after.TotalAlloc-before.TotalAlloc, 4*uint64(len(tt.data)); got > limit {
				t.Errorf("parsing %d bytes allocated %d bytes, want at most %d", len(tt.data), got, limit)
			}
		})
	}
}
