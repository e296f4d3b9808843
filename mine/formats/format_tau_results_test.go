package formats

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// convertTauWhole is convertTau as it read every input before results
// documents were read as they come: each top-level value decoded whole.
// The tests hold the streamed read to it.
func convertTauWhole(r io.Reader, w io.Writer, opt ImportOptions) error {
	h := sha256.New()
	jr := newJSONReader(io.TeeReader(r, h))
	defer jr.release()
	rw := newRecordWriter(w)
	defer rw.release()
	t := &tauInput{jr: jr, rw: rw, ids: tau2IDs{}, seen: opt.Seen}
	if err := jr.items(t.item); err != nil {
		return err
	}
	if len(t.v1) > 0 {
		prefix := hex.EncodeToString(h.Sum(nil))[:8]
		runs := map[string][2]int{}
		for i, raw := range t.v1 {
			if err := convertTau1(jr, raw, t.v1At[i], prefix, runs, rw, &t.obj, opt.Seen); err != nil {
				return err
			}
		}
	}
	return rw.flush()
}

const tau2Small = `{"timestamp": "2025-08-01T16:16:36",
 "info": {"agent_info": {"llm": "gpt-4.1"}, "environment_info": {"domain_name": "retail"}},
 "tasks": [{"id": "7", "s": "a \"]} string"}],
 "simulations": [
  {"id": "s1", "task_id": "7", "trial": 0, "termination_reason": "user_stop", "reward_info": {"reward": 1.0},
   "messages": [
    {"role": "assistant", "content": "Hi", "turn_idx": 0, "timestamp": "2025-08-01T16:16:37"},
    {"role": "user", "content": "Return \"it\" [now]", "turn_idx": 1},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "get_order", "arguments": {"order_id": "#W2"}}], "turn_idx": 2},
    {"id": "c1", "role": "tool", "content": "{}", "error": false, "turn_idx": 3}
   ]},
  {"id": "s2", "task_id": 8, "trial": 1, "termination_reason": "max_steps", "messages": []},
  {"id": "s3", "task_id": "9", "termination_reason": "x", "ticks": [
    {"tick_id": 0, "timestamp": "2025-08-01T16:16:40", "agent_chunk": {"content": "hello", "contains_speech": true},
     "agent_tool_calls": [{"id": "t1", "name": "lookup", "arguments": {}}], "agent_tool_results": [{"id": "t1", "content": "ok"}]}]}
 ]
}
`

func tau2Late() string {
	return `{"simulations": [{"id": "a", "task_id": "1", "termination_reason": "x", "messages": [{"role": "user", "content": "hi"}]},
{"id": "b", "task_id": "2", "termination_reason": "x", "messages": [{"role": "assistant", "content": "yo"}]}],
"info": {"agent_info": {"llm": "m"}, "environment_info": {"domain_name": "d"}}, "timestamp": 5}`
}

func tauSeeds() []string {
	return []string{
		tau2Small,
		tau2Late(),
		`{"id": "a", "task_id": "1", "termination_reason": "x", "messages": [{"role": "user", "content": "hi"}]}
{"id": "b", "task_id": "1", "termination_reason": "x", "messages": [{"role": "assistant"}]}`,
		`{"info": {"agent_info": {"llm": "m"}}, "simulations": null}`,
		`{"info": {"agent_info": {"llm": "m"}}, "tasks": [], "simulations": [1, "x", null, {"id": "q"}]}`,
		`{"info": {"agent_info": {"llm": 5}}, "simulations": []}`,
		`{"info": {}, "tasks": []}`,
		`{"simulations": [], "simulations": [{"id": "z", "messages": [{"role": "user"}]}]}`,
		`[{"task_id": 1, "reward": 1, "info": {}, "traj": [{"role": "user", "content": "a"}]}]`,
		`{"task_id": 1, "reward": 1, "info": {}, "traj": [{"role": "user", "content": "a"}]}`,
		`{"Info": {"agent_info": {"llm": "m"}}, "simul\u0061tions": [{"id": "a", "messages": [{"role": "user"}]}], "INFO": {"user_info": 1}}`,
		"{\"info\": {}, \"simulations\": [\n\n  {\"id\": \"a\\\"]\", \"messages\": [{\"role\": \"assistant\", \"content\": \"x\"}]}\n\n]}\n{\"simulations\": []}",
	}
}

func runTau(conv func(io.Reader, io.Writer, ImportOptions) error, in []byte, seen bool) (string, string) {
	var out bytes.Buffer
	err := conv(bytes.NewReader(in), &out, ImportOptions{Seen: seen})
	if err != nil {
		return out.String(), err.Error()
	}
	return out.String(), ""
}

// earlierError reports whether got names a place before want's, a syntax
// error or a key given twice: read as it comes, a document is converted up
// to such an error, and an error before it is met first.
func earlierError(got, want string) bool {
	var gl, gc, wl, wc int
	if _, err := fmt.Sscanf(got, "line %d, column %d:", &gl, &gc); err != nil {
		return false
	}
	if _, err := fmt.Sscanf(want, "line %d, column %d:", &wl, &wc); err != nil {
		return false
	}
	// Syntax errors and keys given twice are what a whole read finds
	// before it decodes anything; read as it comes, a document's errors
	// are met in their order.
	whole := strings.Contains(want, "the input ends inside") || strings.Contains(want, "invalid character") || strings.Contains(want, "unexpected end") ||
		strings.Contains(want, "is given twice")
	return whole && (gl < wl || gl == wl && gc < wc)
}

func FuzzTau2Stream(f *testing.F) {
	for _, s := range tauSeeds() {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, in []byte, seen bool) {
		wantOut, wantErr := runTau(convertTauWhole, in, seen)
		gotOut, gotErr := runTau(convertTau, in, seen)
		// A key in other case is named where the stream meets it, the
		// document's whole read names the first in order of keys.
		otherCase := strings.Contains(gotErr, "is in other case") && strings.Contains(wantErr, "is in other case")
		if gotErr != wantErr && !earlierError(gotErr, wantErr) && !otherCase {
			t.Fatalf("error %q, want %q", gotErr, wantErr)
		}
		if wantErr == "" && gotOut != wantOut {
			t.Fatalf("records\n%s\nwant\n%s", gotOut, wantOut)
		}
		// Read a byte at a time, every value crosses the scanner's reads.
		oneOut, oneErr := runTau(func(r io.Reader, w io.Writer, opt ImportOptions) error {
			return convertTau(iotest.OneByteReader(r), w, opt)
		}, in, seen)
		if oneOut != gotOut || oneErr != gotErr {
			t.Fatalf("read a byte at a time: error %q, records\n%s\nwant error %q, records\n%s", oneErr, oneOut, gotErr, gotOut)
		}
	})
}

// scanElements walks the top-level array text with a docScanner and
// returns where each element starts and ends, or the error it stops at
// (bad: the offset past a bracket that closes nothing open).
func scanElements(r io.Reader) (spans [][2]int64, bad int64, err error) {
	s := newDocScanner(r)
	if c, ok := s.skipSpace(); !ok || c != '[' {
		return nil, -1, errors.New("no array")
	}
	s.i++
	for {
		c, ok := s.skipSpace()
		if !ok {
			return spans, -1, errScanEnd
		}
		if c == ']' {
			return spans, -1, nil
		}
		at := s.off()
		s.keep = at
		isBad, err := s.skipValue()
		if isBad {
			return spans, s.off(), nil
		}
		if err != nil {
			return spans, -1, err
		}
		spans = append(spans, [2]int64{at, s.off()})
		if c, ok = s.skipSpace(); ok && c == ',' {
			s.i++
		}
	}
}

func TestDocScanner(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		spans [][2]int64
		bad   int64 // -1: none
		err   error
	}{
		{"scalars", `[1, -2.5e3 ,true,null, "x"]`, [][2]int64{{1, 2}, {4, 10}, {12, 16}, {17, 21}, {23, 26}}, -1, nil},
		{"escaped quotes and brackets", `["a\"]", {"k": "}\\"}, "\\\"[" ]`, [][2]int64{{1, 7}, {9, 21}, {23, 30}}, -1, nil},
		{"nested", `[[1,[2,[3]]],{"a":[{"b":[]}]}]`, [][2]int64{{1, 12}, {13, 29}}, -1, nil},
		{"string of backslashes", `["\\\\", "\\"]`, [][2]int64{{1, 7}, {9, 13}}, -1, nil},
		{"mismatched bracket", `[{"a": [1}]`, nil, 10, nil},
		{"truncated in a string", `[{"a": "b]}`, nil, -1, errScanEnd},
		{"truncated in an object", `[{"a": [1, 2]`, nil, -1, errScanEnd},
		{"truncated after an escape", `["a\`, nil, -1, errScanEnd},
	}
	for _, tt := range tests {
		for _, one := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/one=%v", tt.name, one), func(t *testing.T) {
				var r io.Reader = strings.NewReader(tt.in)
				if one {
					r = iotest.OneByteReader(r)
				}
				spans, bad, err := scanElements(r)
				if fmt.Sprint(spans) != fmt.Sprint(tt.spans) || bad != tt.bad || err != tt.err {
					t.Errorf("elements %v, bad %d, error %v; want %v, %d, %v", spans, bad, err, tt.spans, tt.bad, tt.err)
				}
			})
		}
	}
}

// Errors of a results document read as it comes name the place and say
// what the whole document read said.
func TestTau2ResultsErrors(t *testing.T) {
	head := "{\"info\": {\"agent_info\": {\"llm\": \"m\"}},\n\"simulations\": [\n"
	sim := `{"id": "a", "task_id": "1", "termination_reason": "x", "messages": [{"role": "user"}]}`
	tests := []struct {
		name, in, want string
	}{
		{"truncated", head + sim, "line 3, column 87: the input ends inside a JSON value"},
		{"truncated in a simulation", head + sim[:40], "line 3, column 41: the input ends inside a JSON value"},
		{"bad element", head + sim + ", {\"id\" 1}]}", "line 3, column 95: invalid character '1' after object key"},
		{"no comma", head + sim + "\n" + sim + "]}", "line 4, column 1: invalid character '{' after array element"},
		{"trailing comma", head + sim + ",]}", "line 3, column 88: invalid character ']' looking for beginning of value"},
		{"number element", head + "1.]}", "line 3, column 3: invalid character ']' after decimal point in numeric literal"},
		{"member after", head + sim + "] \"x\": 1}", "line 3, column 89: invalid character '\"' after object key:value pair"},
		{"bad info", "{\"info\": {\"agent_info\": 5}, \"simulations\": []}", "line 1, column 25: info.agent_info is a JSON number, want an object"},
		{"simulations not an array", "{\"info\": {},\n \"simulations\": {}}", "line 2, column 17: simulations is a JSON object, want an array"},
		{"duplicate id", head + sim + ",\n" + sim + "]}", "line 4, column 1: simulation a: a second simulation with this id (the first: line 3, column 1)"},
		{"after the document", head + sim + "]}\n]", "line 4, column 1: invalid character ']' looking for beginning of value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := runTau(convertTau, []byte(tt.in), false)
			if got != tt.want {
				t.Errorf("error %q, want %q", got, tt.want)
			}
			if _, whole := runTau(convertTauWhole, []byte(tt.in), false); whole != tt.want {
				t.Errorf("read whole: error %q, want %q", whole, tt.want)
			}
		})
	}
}

// What a results document's simulations are given that was read whole
// before: a repeated "simulations", or an "info" after them that changes
// their domain or model, is refused once simulations were converted; an
// "info" after the simulations when none comes before applies to them.
func TestTau2ResultsMemberOrder(t *testing.T) {
	sim := `{"id": "a", "task_id": "1", "termination_reason": "x", "messages": [{"role": "user"}]}`
	tests := []struct {
		name, in, want string
	}{
		{"info after", `{"simulations": [` + sim + `], "info": {"agent_info": {"llm": "late"}}}`, ""},
		// A member given twice is an error, as in any object an importer
		// decodes: which value holds would be up to the reader.
		{"info before and after", `{"info": {"agent_info": {"llm": "m"}}, "simulations": [` + sim + `], "info": {"user_info": {}}}`,
			`line 1, column 145: the key "info" is given twice`},
		{"simulations twice", `{"info": {}, "simulations": [` + sim + `], "simulations": []}`,
			`line 1, column 119: the key "simulations" is given twice`},
		{"simulations twice, no info before", `{"simulations": [` + sim + `], "simulations": [` + strings.Replace(sim, `"a"`, `"b"`, 1) + `]}`,
			`line 1, column 107: the key "simulations" is given twice`},
		{"empty simulations twice", `{"info": {}, "simulations": [], "simulations": [` + sim + `]}`,
			`line 1, column 33: the key "simulations" is given twice`},
		{"a key twice before the simulations", `{"info": {}, "x": 1, "x": 2, "simulations": [` + sim + `]}`,
			`line 1, column 22: the key "x" is given twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, gotErr := runTau(convertTau, []byte(tt.in), false)
			if gotErr != tt.want {
				t.Fatalf("error %q, want %q", gotErr, tt.want)
			}
			if want, wantErr := runTau(convertTauWhole, []byte(tt.in), false); tt.want == "" && (got != want || wantErr != "") {
				t.Errorf("records\n%s\nwant (read whole, error %q)\n%s", got, wantErr, want)
			}
		})
	}
}

// tau2Doc returns a results document of n simulations of about size bytes
// each, pretty-printed, made as it is read.
func tau2Doc(n, size int) io.Reader {
	parts := []io.Reader{strings.NewReader("{\n  \"info\": {\"agent_info\": {\"llm\": \"m\"}, \"environment_info\": {\"domain_name\": \"d\"}},\n  \"simulations\": [\n")}
	msg := `    {"role": "user", "content": "` + strings.Repeat(`words and \"quotes\" [`, 4) + `", "turn_idx": 1},` + "\n"
	msgs := strings.Repeat(msg, size/len(msg)+1)
	for i := range n {
		sep := ",\n"
		if i == n-1 {
			sep = "\n"
		}
		parts = append(parts, strings.NewReader(fmt.Sprintf(`  {"id": "sim-%d", "task_id": "%d", "termination_reason": "user_stop", "messages": [`+"\n", i, i%7)),
			strings.NewReader(msgs),
			strings.NewReader(`    {"role": "assistant", "content": "ok"}]}`+sep))
	}
	parts = append(parts, strings.NewReader("  ]\n}\n"))
	return io.MultiReader(parts...)
}

// A results document is read in memory that follows its largest
// simulation: the scanner's buffer and the line ends kept stay those of a
// few simulations, however many the document holds.
func TestTau2ResultsBounded(t *testing.T) {
	const n, size = 400, 32 << 10 // a document of some 13 MB
	jr := newJSONReader(tau2Doc(n, size))
	defer jr.release()
	var out countWriter
	rw := newRecordWriter(&out)
	defer rw.release()
	tin := &tauInput{jr: jr, rw: rw, ids: tau2IDs{}}
	s := newDocScanner(jr.pr)
	if err := tin.values(s); err != nil {
		t.Fatal(err)
	}
	if err := rw.flush(); err != nil {
		t.Fatal(err)
	}
	if len(tin.ids) != n {
		t.Fatalf("read %d simulations, want %d", len(tin.ids), n)
	}
	if jr.pr.n < n*size {
		t.Fatalf("read %d bytes, want a document over %d", jr.pr.n, n*size)
	}
	if c := cap(s.buf); c > 4*size+4*minRead {
		t.Errorf("the scanner's buffer grew to %d bytes, want at most %d (simulations of %d)", c, 4*size+4*minRead, size)
	}
	if k := len(jr.pr.nl); k > 2*size/100 {
		t.Errorf("%d line ends kept, want those of about one simulation (%d lines)", k, size/100)
	}
}

// countWriter counts what is written to it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

func BenchmarkTau2Results(b *testing.B) {
	doc, err := io.ReadAll(tau2Doc(200, 32<<10))
	if err != nil {
		b.Fatal(err)
	}
	for _, bm := range []struct {
		name string
		conv func(io.Reader, io.Writer, ImportOptions) error
	}{{"whole", convertTauWhole}, {"stream", convertTau}} {
		b.Run("read="+bm.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if err := bm.conv(bytes.NewReader(doc), io.Discard, ImportOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
