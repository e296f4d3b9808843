package mine

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
)

// show formats a value as "kind:raw" for comparisons in tests.
func show(v value) string {
	if v.kind == kindMissing {
		return "missing"
	}
	return v.kind.String() + ":" + string(v.raw)
}

func mustExtractor(t testing.TB, paths ...string) *extractor {
	t.Helper()
	x, err := newExtractor(paths)
	if err != nil {
		t.Fatalf("newExtractor(%q): %v", paths, err)
	}
	return x
}

// extractTest is a line, the paths to extract from it and what each one
// should hold, as show formats it.
type extractTest struct {
	name  string
	line  string
	paths []string
	want  []string
}

// extractPathTests walk paths through objects and arrays.
var extractPathTests = []extractTest{
	{
		name:  "top-level kinds",
		line:  `{"s":"abc","n":-12.5e+3,"t":true,"f":false,"z":null,"o":{"k":[1,2]},"a":[{"x":1}, 2]}`,
		paths: []string{"s", "n", "t", "f", "z", "o", "a", "gone"},
		want: []string{"string:abc", "number:-12.5e+3", "bool:true", "bool:false", "null:null",
			`object:{"k":[1,2]}`, `array:[{"x":1}, 2]`, "missing"},
	},
	{
		name: "record line",
		line: `{"session_id": "s1", "step": 3, "node": "get_order_details", "event": "ok", ` +
			`"ts": "2025-08-01T15:57:40Z", "attrs": {"task_id": "17", "reward": 1.0}}`,
		paths: []string{"session_id", "step", "node", "event", "ts", "attrs.task_id", "attrs.reward", "attrs.run"},
		want: []string{"string:s1", "number:3", "string:get_order_details", "string:ok",
			"string:2025-08-01T15:57:40Z", "string:17", "number:1.0", "missing"},
	},
	{
		name:  "nested objects",
		line:  `{"span_data":{"type":"function","tool":{"name":"search"}},"tool":{"name":"calc"}}`,
		paths: []string{"span_data.type", "span_data.tool.name", "tool.name", "tool.name.x", "span_data.missing.deeper"},
		want:  []string{"string:function", "string:search", "string:calc", "missing", "missing"},
	},
	{
		name:  "array indexes",
		line:  `{"tool_calls":[{"name":"a","args":{}},{"name":"b"},[7,8]],"e":[]}`,
		paths: []string{"tool_calls.0.name", "tool_calls.1.name", "tool_calls.2.1", "tool_calls.3.name", "tool_calls.x", "e.0"},
		want:  []string{"string:a", "string:b", "number:8", "missing", "missing", "missing"},
	},
	{
		name:  "numeric segment names an object key too",
		line:  `{"a":{"0":"zero","01":"one"},"b":["x","y"]}`,
		paths: []string{"a.0", "a.01", "b.01", "b.1"},
		want:  []string{"string:zero", "string:one", "missing", "string:y"},
	},
	{
		name:  "a path and its parent",
		line:  `{"attrs":{"task_id":"7","extra":[1]}}`,
		paths: []string{"attrs", "attrs.task_id"},
		want:  []string{`object:{"task_id":"7","extra":[1]}`, "string:7"},
	},
	{
		name:  "descend into a scalar",
		line:  `{"a":"text","b":5,"c":null}`,
		paths: []string{"a.b", "b.0", "c.d"},
		want:  []string{"missing", "missing", "missing"},
	},
	{
		name:  "repeated path",
		line:  `{"a":"x"}`,
		paths: []string{"a", "a"},
		want:  []string{"string:x", "string:x"},
	},
}

// extractStringTests decode escapes and pass other bytes through.
var extractStringTests = []extractTest{
	{
		name:  "simple escapes",
		line:  `{"s":"q\" b\\ s\/ \b\f\n\r\t end"}`,
		paths: []string{"s"},
		want:  []string{"string:q\" b\\ s/ \b\f\n\r\t end"},
	},
	{
		name:  "unicode escapes",
		line:  `{"bmp":"caf\u00e9","pair":"\ud83d\ude00!","upper":"\u00C9"}`,
		paths: []string{"bmp", "pair", "upper"},
		want:  []string{"string:café", "string:😀!", "string:É"},
	},
	{
		name:  "escaped key",
		line:  `{"se\u0073sion_id":"s","a\"b":1,"c\\d":2}`,
		paths: []string{"session_id", `a"b`, `c\d`},
		want:  []string{"string:s", "number:1", "number:2"},
	},
	{
		name:  "invalid UTF-8 passes through",
		line:  "{\"s\":\"a\xffb\xc3\",\"k\xfe\":1}",
		paths: []string{"s", "k\xfe"},
		want:  []string{"string:a\xffb\xc3", "number:1"},
	},
}

// extractShapeTests are lines and path sets of unusual shape: duplicate
// keys, odd whitespace, nothing to find, deep or long values to skip or
// read, many paths under one object.
var extractShapeTests = []extractTest{
	{
		name:  "whitespace everywhere",
		line:  " \t{ \"a\" :\n[ 1 , { \"b\" : true } ] ,\r\"c\":{ } }\r\n",
		paths: []string{"a.1.b", "a.0", "c"},
		want:  []string{"bool:true", "number:1", "object:{ }"},
	},
	{
		name:  "empty object",
		line:  `{}`,
		paths: []string{"a"},
		want:  []string{"missing"},
	},
	{
		name:  "no paths",
		line:  `{"a":[1,{"b":"c"}]}`,
		paths: nil,
		want:  nil,
	},
	{
		name:  "wanted key after a deep skipped subtree",
		line:  `{"x":[[[{"y":[{}]}]],"\"]"],"a":"after"}`,
		paths: []string{"a"},
		want:  []string{"string:after"},
	},
	{
		name:  "long strings cross SWAR words",
		line:  `{"a":"` + strings.Repeat("0123456789", 5) + `\n` + strings.Repeat("é", 9) + `"}`,
		paths: []string{"a"},
		want:  []string{"string:" + strings.Repeat("0123456789", 5) + "\n" + strings.Repeat("é", 9)},
	},
	{
		name:  "many paths under one node",
		line:  `{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10}`,
		paths: []string{"k10", "k9", "k8", "k7", "k6", "k5", "k4", "k3", "k2", "k1", "k0"},
		want: []string{"number:10", "number:9", "number:8", "number:7", "number:6", "number:5",
			"number:4", "number:3", "number:2", "number:1", "missing"},
	},
}

// TestExtractAmbiguous: a wanted key given twice in one object, or a wanted
// string with a lone surrogate escape, is refused (encoding/json keeps the
// last key and makes the escape U+FFFD, so "s\ud800" and "s\udfff" would be
// one session); keys and strings no path wants are not looked at.
func TestExtractAmbiguous(t *testing.T) {
	for _, tt := range []struct {
		line  string
		paths []string
		want  string // the error, "" for none
	}{
		{`{"a":1,"b":"x","a":2}`, []string{"a", "b"}, `the key "a" is given twice (at byte 19)`},
		{`{"a":{"b":1,"c":2},"a":{"c":3}}`, []string{"a.b", "a.c"}, `the key "a" is given twice (at byte 23)`},
		{`{"a":{"b":1,"b":2}}`, []string{"a.b"}, `the key "a.b" is given twice (at byte 16)`},
		{`{"a":[{"c":1,"c":2}]}`, []string{"a.0.c"}, `the key "a.0.c" is given twice (at byte 17)`},
		{`{"a":1,"z":2,"z":3}`, []string{"a"}, ""},
		{`{"s":"\ud800x"}`, []string{"s"}, `s holds a lone surrogate escape (\uD800 to \uDFFF without its pair), which is no character (at byte 5)`},
		{`{"a":{"s":"\udc00"}}`, []string{"a.s"}, `a.s holds a lone surrogate escape (\uD800 to \uDFFF without its pair), which is no character (at byte 10)`},
		{`{"s":"\ud800\u0041"}`, []string{"s"}, `s holds a lone surrogate escape (\uD800 to \uDFFF without its pair), which is no character (at byte 5)`},
		{`{"s":"\ud83d\ude00","t":"\ud800"}`, []string{"s"}, ""},
	} {
		x := mustExtractor(t, tt.paths...)
		err := x.extract([]byte(tt.line), make([]value, len(tt.paths)))
		var ae *ambiguousError
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("extract(%q) = %v, want nil", tt.line, err)
		case tt.want != "" && (!errors.As(err, &ae) || err.Error() != tt.want):
			t.Errorf("extract(%q) = %v, want an *ambiguousError %q", tt.line, err, tt.want)
		}
		// The extractor is used again for the next line: a key seen on
		// this one is no repeat on the next.
		if err := x.extract([]byte(`{"a":{"b":0,"c":0,"s":"x"},"b":"y","s":"z"}`), make([]value, len(tt.paths))); err != nil {
			t.Errorf("the next line: %v", err)
		}
	}
}

// TestExtractAmbiguousPaths: every ambiguous path of a line is named, not
// only the first, so that a reader of several fields (stats' measures)
// takes none of them.
func TestExtractAmbiguousPaths(t *testing.T) {
	x := mustExtractor(t, "t.p", "cost", "ok")
	err := x.extract([]byte(`{"t":{"p":5,"p":7},"cost":2,"cost":200,"ok":1}`), make([]value, 3))
	var ae *ambiguousError
	if !errors.As(err, &ae) || !slices.Equal(ae.Paths, []string{"t.p", "cost"}) {
		t.Fatalf("extract = %v, want both paths ambiguous", err)
	}
	if !ambiguousUnder(ae.Paths, "t.p") || !ambiguousUnder(ae.Paths, "cost") || ambiguousUnder(ae.Paths, "ok") || ambiguousUnder(ae.Paths, "costs") {
		t.Errorf("ambiguousUnder(%q) wrong", ae.Paths)
	}
}

func TestExtract(t *testing.T) {
	for _, tt := range slices.Concat(extractPathTests, extractStringTests, extractShapeTests) {
		t.Run(tt.name, func(t *testing.T) {
			x := mustExtractor(t, tt.paths...)
			out := make([]value, len(tt.paths))
			line := []byte(tt.line)
			if err := x.extract(line, out); err != nil {
				t.Fatalf("extract(%q) = %v, want nil", tt.line, err)
			}
			for i, p := range tt.paths {
				if got := show(out[i]); got != tt.want[i] {
					t.Errorf("path %q = %q, want %q", p, got, tt.want[i])
				}
			}
			if string(line) != tt.line {
				t.Errorf("extract modified its input: %q", line)
			}
		})
	}
}

func TestExtractErrors(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		offset int
		msg    string
	}{
		{"empty", ``, 0, "unexpected end of input"},
		{"blank", " \t\r\n", 4, "unexpected end of input"},
		{"array", `[1]`, 0, "expected object"},
		{"string", ` "x"`, 1, "expected object"},
		{"garbage", `x`, 0, "expected object"},
		{"open brace", `{`, 1, "unexpected end of input"},
		{"key only", `{"a"`, 4, "unexpected end of input"},
		{"unterminated key", `{"a`, 3, "unexpected end of input"},
		{"no colon", `{"a" 1}`, 5, "invalid character '1' after object key"},
		{"no value", `{"a":`, 5, "unexpected end of input"},
		{"missing comma", `{"a":1 "b":2}`, 7, "invalid character '\"' after object key:value pair"},
		{"unquoted key", `{a:1}`, 1, "invalid character 'a' looking for beginning of object key string"},
		{"empty value", `{"a":}`, 5, "invalid character '}' looking for beginning of value"},
		{"trailing comma in object", `{"a":1,}`, 7, "invalid character '}' looking for beginning of object key string"},
		{"trailing comma in array", `{"a":[1,]}`, 8, "invalid character ']' looking for beginning of value"},
		{"missing comma in array", `{"a":[1 2]}`, 8, "invalid character '2' after array element"},
		{"mismatched bracket", `{"a":[1}`, 7, "invalid character '}' after array element"},
		{"mismatched brace", `{"a":{"b":1]}`, 11, "invalid character ']' after object key:value pair"},
		{"nested no colon", `{"a":{"b" 1}}`, 10, "invalid character '1' after object key"},
		{"nested unquoted key", `{"a":{b:1}}`, 6, "invalid character 'b' looking for beginning of object key string"},
		{"bad escape", `{"a":"\x"}`, 7, "invalid character 'x' in string escape"},
		{"bad escape in key", `{"\q":1}`, 3, "invalid character 'q' in string escape"},
		{"short unicode escape", `{"a":"\u12g4"}`, 10, "invalid character 'g' in \\u hexadecimal character escape"},
		{"unicode escape at end", `{"a":"\u12`, 10, "unexpected end of input"},
		{"escape at end", `{"a":"\`, 7, "unexpected end of input"},
		{"control character", "{\"a\":\"x\ny\"}", 7, `invalid character '\n' in string literal`},
		{"control character in key", "{\"\x01\":1}", 2, `invalid character '\x01' in string literal`},
		{"unterminated string", `{"a":"abc`, 9, "unexpected end of input"},
		{"bad literal", `{"a":tru}`, 8, "invalid character '}' in literal true (expecting 'e')"},
		{"bad false", `{"a":fals e}`, 9, "invalid character ' ' in literal false (expecting 'e')"},
		{"bad null", `{"a":nUll}`, 6, "invalid character 'U' in literal null (expecting 'u')"},
		{"short literal", `{"a":nul`, 8, "unexpected end of input"},
		{"literal glued", `{"a":truex}`, 9, "invalid character 'x' after object key:value pair"},
		{"lone minus", `{"a":-}`, 6, "invalid character '}' in numeric literal"},
		{"minus at end", `{"a":-`, 6, "unexpected end of input"},
		{"plus sign", `{"a":+1}`, 5, "invalid character '+' looking for beginning of value"},
		{"leading zero", `{"a":01}`, 6, "invalid character '1' after object key:value pair"},
		{"bare point", `{"a":1.}`, 7, "invalid character '}' after decimal point in numeric literal"},
		{"point first", `{"a":.5}`, 5, "invalid character '.' looking for beginning of value"},
		{"empty exponent", `{"a":1e}`, 7, "invalid character '}' in exponent of numeric literal"},
		{"signed empty exponent", `{"a":1E+}`, 8, "invalid character '}' in exponent of numeric literal"},
		{"text after", `{"a":1}x`, 7, "invalid character 'x' after top-level value"},
		{"second object", `{"a":1} {}`, 8, "invalid character '{' after top-level value"},
		{"high byte", "{\"a\":\xff}", 5, `invalid character '\xff' looking for beginning of value`},
		{"quote char", `{"a":1'}`, 6, `invalid character '\'' after object key:value pair`},
		{"too deep", `{"a":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`,
			5 + maxDepth - 1, "exceeded max depth"},
	}
	// The same line must fail the same way whether the scanner descends
	// into the broken part or skips it.
	pathSets := [][]string{nil, {"a"}, {"a.0"}, {"a.b", "a"}, {"zz"}, {"a.0.0.0"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if json.Valid([]byte(tt.line)) && isObject([]byte(tt.line)) {
				t.Fatalf("encoding/json says %q is a valid object", tt.line)
			}
			for _, paths := range pathSets {
				x := mustExtractor(t, paths...)
				err := x.extract([]byte(tt.line), make([]value, len(paths)))
				var se *syntaxError
				if !errors.As(err, &se) {
					t.Fatalf("paths %q: extract = %v, want a *syntaxError", paths, err)
				}
				if se.Offset != tt.offset || se.Msg != tt.msg {
					t.Errorf("paths %q: extract = {%d, %q}, want {%d, %q}", paths, se.Offset, se.Msg, tt.offset, tt.msg)
				}
				want := "invalid JSON at byte " + strconv.Itoa(tt.offset) + ": " + tt.msg
				if err.Error() != want {
					t.Errorf("Error() = %q, want %q", err.Error(), want)
				}
			}
		})
	}
}

func TestExtractDepth(t *testing.T) {
	nest := func(n int) string {
		return `{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
	}
	deep := "a" + strings.Repeat(".0", maxDepth)
	for _, paths := range [][]string{nil, {"a"}, {"a.0.0"}, {deep}} {
		for _, n := range []int{maxDepth - 2, maxDepth - 1, maxDepth, maxDepth + 5} {
			line := []byte(nest(n))
			err := mustExtractor(t, paths...).extract(line, make([]value, len(paths)))
			valid := json.Valid(line)
			if (err == nil) != valid {
				t.Errorf("%d nested arrays, %d paths: extract = %v, but json.Valid = %v", n, len(paths), err, valid)
			}
		}
	}
	if json.Valid([]byte(nest(maxDepth))) {
		t.Errorf("encoding/json accepts %d levels; maxDepth is out of date", maxDepth+1)
	}
}

func TestNewExtractorErrors(t *testing.T) {
	tests := []struct {
		path string
		ok   bool
	}{
		{"a", true},
		{"a.b.0", true},
		{"", false},
		{".", false},
		{"a.", false},
		{".a", false},
		{"a..b", false},
	}
	for _, tt := range tests {
		_, err := newExtractor([]string{"ok", tt.path})
		if (err == nil) != tt.ok {
			t.Errorf("newExtractor(%q) error = %v, want ok = %v", tt.path, err, tt.ok)
		}
	}
}

// TestExtractReuse checks that one extractor gives each line's own values
// and that values from the scratch buffer survive later fields of the same
// line.
func TestExtractReuse(t *testing.T) {
	x := mustExtractor(t, "a", "b", "c")
	out := make([]value, 3)
	lines := []struct {
		line string
		want []string
	}{
		{`{"a":"\u0041\n","b":"x\ty","c":"plain"}`, []string{"string:A\n", "string:x\ty", "string:plain"}},
		{`{"b":"\"` + strings.Repeat("z", 300) + `"}`, []string{"missing", "string:\"" + strings.Repeat("z", 300), "missing"}},
		{`{"a":1}`, []string{"number:1", "missing", "missing"}},
		{`{"a":[`, nil},
		{`{"c":"\\"}`, []string{"missing", "missing", "string:\\"}},
	}
	for _, l := range lines {
		err := x.extract([]byte(l.line), out)
		if l.want == nil {
			if err == nil {
				t.Errorf("extract(%q) = nil, want an error", l.line)
			}
			continue
		}
		if err != nil {
			t.Fatalf("extract(%q) = %v", l.line, err)
		}
		for i, w := range l.want {
			if got := show(out[i]); got != w {
				t.Errorf("extract(%q): out[%d] = %q, want %q", l.line, i, got, w)
			}
		}
	}
}

func TestExtractAllocs(t *testing.T) {
	tests := []struct {
		name string
		line string
	}{
		{"plain", benchLine},
		{"escapes", `{"session_id":"s\u00e9","step":1,"node":"a\nb","event":"ok","ts":"t","attrs":{"k":"\"v\""}}`},
		{"deep skip", `{"session_id":"s","attrs":` + strings.Repeat(`{"a":[`, 200) + strings.Repeat(`]}`, 200) + `}`},
	}
	x := mustExtractor(t, benchPaths...)
	out := make([]value, len(benchPaths))
	for _, tt := range tests {
		line := []byte(tt.line)
		if err := x.extract(line, out); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		allocs := testing.AllocsPerRun(100, func() { _ = x.extract(line, out) })
		if allocs != 0 {
			t.Errorf("%s: extract allocates %v times a call, want 0", tt.name, allocs)
		}
	}
}

func TestExtractShortOutPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("extract with a short out slice did not panic")
		}
	}()
	_ = mustExtractor(t, "a", "b").extract([]byte(`{}`), make([]value, 1))
}

// FuzzExtract checks extract against encoding/json: it accepts a line iff
// encoding/json.Valid does and the line is an object, and the values it
// extracts are the ones encoding/json decodes.
func FuzzExtract(f *testing.F) {
	seeds := []string{
		benchLine,
		nestedLine,
		`{"a":{"b":[1,{"c":"d"}]},"a":{"b":[2]}}`,
		`{"s":"\ud83d\ude00\ud800\u00e9\n","n":-0.5e-7,"t":true,"f":false,"z":null}`,
		"{\"k\xff\":\"v\xfe\",\"\\u00ff\":[]}",
		`{"x":[[[{"y":[{}]}]],"\"]"],"a":"after"}`,
		`{"a":1} `,
		`[1]`,
		`{"a":01}`,
		`{"a":"\x"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	fixed := mustExtractor(f, "a", "a.b", "a.0", "a.0.c", "s", "session_id", "attrs.task_id")
	fixedOut := make([]value, len(fixed.paths))
	none := mustExtractor(f)
	f.Fuzz(func(t *testing.T, line []byte) {
		orig := bytes.Clone(line)
		err := fixed.extract(line, fixedOut)
		if !bytes.Equal(line, orig) {
			t.Fatalf("extract modified its input")
		}
		// A wanted key given twice, or a wanted lone surrogate: valid JSON,
		// refused for what it means, which the extractor without paths
		// does not look at.
		var ae *ambiguousError
		if errors.As(err, &ae) {
			if !json.Valid(line) || ae.Offset < 0 || ae.Offset > len(line) {
				t.Fatalf("extract(%q) = %v, on invalid JSON or out of the line", line, err)
			}
			return
		}
		// Descending into a value and skipping it must agree on errors.
		if errSkip := none.extract(line, nil); !reflect.DeepEqual(err, errSkip) {
			t.Fatalf("extract(%q) = %v with paths, %v without", line, err, errSkip)
		}
		valid := json.Valid(line) && isObject(line)
		if (err == nil) != valid {
			t.Fatalf("extract(%q) = %v, but valid object = %v", line, err, valid)
		}
		if err != nil {
			var se *syntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(line) {
				t.Fatalf("extract(%q) = %#v, want a *syntaxError with an offset in the line", line, err)
			}
			return
		}

		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("encoding/json cannot decode %q: %v", line, err)
		}
		paths, wants := fuzzPaths(m)
		x := mustExtractor(t, paths...)
		out := make([]value, len(paths))
		if err := x.extract(line, out); err != nil {
			if errors.As(err, &ae) { // a path the fixed ones do not want
				return
			}
			t.Fatalf("extract(%q) with paths %q = %v, but it passed before", line, paths, err)
		}
		for i, p := range paths {
			if msg := sameValue(out[i], wants[i]); msg != "" {
				t.Errorf("extract(%q): path %q: %s", line, p, msg)
			}
		}
	})
}

func isObject(line []byte) bool {
	i := skipSpace(line, 0)
	return i < len(line) && line[i] == '{'
}

// fuzzPaths lists the addressable paths of a decoded object (top-level keys,
// their children and first array elements) in a fixed order, with the value
// encoding/json found at each. Keys with '.' cannot be addressed, and keys
// with U+FFFD are left out because encoding/json rewrites invalid UTF-8 to
// it, so they do not name the raw bytes in the line.
func fuzzPaths(m map[string]any) ([]string, []any) {
	var paths []string
	var wants []any
	addressable := func(k string) bool {
		return k != "" && !strings.ContainsRune(k, '.') && !strings.ContainsRune(k, utf8.RuneError)
	}
	for _, k := range slices.Sorted(mapKeys(m)) {
		if !addressable(k) {
			continue
		}
		v := m[k]
		paths, wants = append(paths, k), append(wants, v)
		switch v := v.(type) {
		case map[string]any:
			for _, c := range slices.Sorted(mapKeys(v)) {
				if addressable(c) {
					paths, wants = append(paths, k+"."+c), append(wants, v[c])
				}
			}
		case []any:
			if len(v) > 0 {
				paths, wants = append(paths, k+".0"), append(wants, v[0])
			}
			paths, wants = append(paths, k+"."+strconv.Itoa(len(v))), append(wants, missingValue{})
		}
	}
	return paths, wants
}

type missingValue struct{}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// sameValue reports how an extracted value differs from what encoding/json
// decoded (with UseNumber), or "" if it does not.
func sameValue(got value, want any) string {
	switch want := want.(type) {
	case missingValue:
		if got.kind != kindMissing {
			return "got " + show(got) + ", want missing"
		}
	case string:
		if got.kind != kindString || coerceUTF8(got.raw) != want {
			return "got " + show(got) + ", want string " + strconv.Quote(want)
		}
	case json.Number:
		if got.kind != kindNumber || string(got.raw) != string(want) {
			return "got " + show(got) + ", want number " + string(want)
		}
	case bool:
		if got.kind != kindBool || string(got.raw) != strconv.FormatBool(want) {
			return "got " + show(got) + ", want " + strconv.FormatBool(want)
		}
	case nil:
		if got.kind != kindNull || string(got.raw) != "null" {
			return "got " + show(got) + ", want null"
		}
	case map[string]any, []any:
		wantKind := kindObject
		if _, ok := want.([]any); ok {
			wantKind = kindArray
		}
		if got.kind != wantKind {
			return "got " + show(got) + ", want " + wantKind.String()
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(got.raw))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return "raw text " + strconv.Quote(string(got.raw)) + " does not decode: " + err.Error()
		}
		if dec.InputOffset() != int64(len(got.raw)) {
			return "raw text " + strconv.Quote(string(got.raw)) + " has more than one value"
		}
		if !reflect.DeepEqual(v, want) {
			return "raw text " + strconv.Quote(string(got.raw)) + " decodes to something else"
		}
	default:
		return "unexpected decoded type"
	}
	return ""
}

// coerceUTF8 replaces each byte of invalid UTF-8 with U+FFFD, as
// encoding/json does when it decodes a string.
func coerceUTF8(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		sb.WriteRune(r)
		b = b[n:]
	}
	return sb.String()
}

// TestExtractRealData compares extract with encoding/json on the project's
// real logs, when they are present.
func TestExtractRealData(t *testing.T) {
	files, _ := filepath.Glob("../../shared/data/jsonl/*.jsonl")
	if len(files) == 0 {
		t.Skip("no real logs in ../../shared/data/jsonl")
	}
	paths := []string{"session_id", "step", "node", "event", "ts", "attrs.task_id", "attrs.reward", "attrs"}
	x := mustExtractor(t, paths...)
	out := make([]value, len(paths))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		for n, line := range lines {
			if err := x.extract(line, out); err != nil {
				t.Fatalf("%s:%d: %v", file, n+1, err)
			}
			var m map[string]any
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.UseNumber()
			if err := dec.Decode(&m); err != nil {
				t.Fatalf("%s:%d: encoding/json: %v", file, n+1, err)
			}
			attrs, _ := m["attrs"].(map[string]any)
			wants := []any{m["session_id"], m["step"], m["node"], m["event"], m["ts"], attrs["task_id"], attrs["reward"], m["attrs"]}
			for i, want := range wants {
				if want == nil {
					want = missingValue{} // absent from these logs, never null
				}
				if msg := sameValue(out[i], want); msg != "" {
					t.Fatalf("%s:%d: path %q: %s", file, n+1, paths[i], msg)
				}
			}
		}
	}
}

// benchLine is a record from tau2-bench (MIT, github.com/sierra-research/
// tau2-bench) in fsmine's record form, as in the project's tau2_retail.jsonl.
const benchLine = `{"session_id": "ft-gpt-4.1_retail_default_gpt-4.1_1trials:17:t0:da7bd81a", "step": 12, ` +
	`"node": "modify_pending_order_address", "event": "ok", "ts": "2025-08-01T15:57:48.162086Z", ` +
	`"attrs": {"task_id": "17", "domain": "retail", "model": "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm", ` +
	`"reward": 1.0, "termination": "user_stop", "run": "ft-gpt-4.1_retail_default_gpt-4.1_1trials", "actor": "assistant"}}`

// nestedLine is a larger record whose attrs hold a tool call with nested
// arguments and escaped text, all of which the five record fields skip.
var nestedLine = `{"session_id": "retail:17:t0", "step": 12, "node": "modify_pending_order_address", ` +
	`"event": "ok", "ts": "2025-08-01T15:57:48.162086Z", "attrs": {"tool_calls": [` +
	strings.Repeat(`{"id": "call_8f2a", "name": "modify_pending_order_address", "arguments": `+
		`{"order_id": "#W4817420", "address1": "760 Elm Avenue", "address2": "Suite 564", "city": "Houston", `+
		`"country": "USA", "state": "TX", "zip": "77034", "items": [1, 2.5, -3e2, true, null, []]}, `+
		`"content": "I\u2019ve updated the \"shipping\" address.\nAnything else?"}, `, 6) +
	`{}]}}`

var benchPaths = []string{"session_id", "step", "node", "event", "ts"}

// benchRecord is what goccy/go-json and encoding/json decode a line into:
// the five fields the extractor pulls out.
type benchRecord struct {
	SessionID string `json:"session_id"`
	Step      int    `json:"step"`
	Node      string `json:"node"`
	Event     string `json:"event"`
	TS        string `json:"ts"`
}

func BenchmarkExtract(b *testing.B) {
	benchmarkExtract(b, benchLine)
}

func BenchmarkExtractNested(b *testing.B) {
	benchmarkExtract(b, nestedLine)
}

func benchmarkExtract(b *testing.B, text string) {
	line := []byte(text)
	run := func(name string, decode func() error) {
		b.Run(name, func(b *testing.B) {
			if err := decode(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				if err := decode(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lines/s")
		})
	}

	x := mustExtractor(b, benchPaths...)
	out := make([]value, len(benchPaths))
	run("impl=scan", func() error { return x.extract(line, out) })

	// scan+struct also turns the values into the struct goccy fills,
	// copying the strings and parsing the step.
	var rec benchRecord
	run("impl=scanstruct", func() error {
		if err := x.extract(line, out); err != nil {
			return err
		}
		step, err := strconv.Atoi(string(out[1].raw))
		if err != nil {
			return err
		}
		rec = benchRecord{string(out[0].raw), step, string(out[2].raw), string(out[3].raw), string(out[4].raw)}
		return nil
	})
	run("impl=goccy", func() error {
		rec = benchRecord{}
		return gojson.Unmarshal(line, &rec)
	})
	run("impl=stdlib", func() error {
		rec = benchRecord{}
		return json.Unmarshal(line, &rec)
	})
}

// naiveScanString is scanString one byte at a time, for checking the
// word-at-a-time version.
func naiveScanString(d []byte, i int) (end int, esc bool, errOffset int) {
	for i < len(d) {
		switch c := d[i]; {
		case c == '"':
			return i + 1, esc, -1
		case c == '\\':
			esc = true
			if i+1 >= len(d) {
				return 0, esc, len(d)
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if k >= len(d) {
						return 0, esc, len(d)
					}
					if !strings.ContainsRune("0123456789abcdefABCDEF", rune(d[k])) {
						return 0, esc, k
					}
				}
				i += 6
			default:
				return 0, esc, i + 1
			}
		case c < 0x20:
			return 0, esc, i
		default:
			i++
		}
	}
	return 0, esc, len(d)
}

func TestScanStringMatchesNaive(t *testing.T) {
	check := func(d []byte) {
		t.Helper()
		wantEnd, wantEsc, wantOff := naiveScanString(d, 1)
		end, esc, err := scanString(d, 1)
		if wantOff >= 0 {
			var se *syntaxError
			if !errors.As(err, &se) || se.Offset != wantOff {
				t.Fatalf("scanString(%q) = %d, %v, want an error at %d", d, end, err, wantOff)
			}
			return
		}
		if err != nil || end != wantEnd || esc != wantEsc {
			t.Fatalf("scanString(%q) = %d, %v, %v, want %d, %v, nil", d, end, esc, err, wantEnd, wantEsc)
		}
		// A string with a byte at or above 0x80 is never said to hold none.
		if _, _, high, _ := scanStringHigh(d, 1); !high && slices.ContainsFunc(d[1:end-1], func(c byte) bool { return c >= 0x80 }) {
			t.Fatalf("scanStringHigh(%q) says no byte at or above 0x80", d)
		}
	}
	// Every byte value at every position of two words, after and before
	// bytes that sit next to the special ones.
	for _, pad := range []byte{'a', ' ', '!', '#', 0x1f + 1, '[', ']', 0x7f, 0x80, 0xa2, 0xdc, 0xff} {
		for pos := 0; pos < 17; pos++ {
			for c := 0; c < 256; c++ {
				d := bytes.Repeat([]byte{pad}, 40)
				d[0] = '"'
				d[1+pos] = byte(c)
				d[len(d)-1] = '"'
				check(d)
				check(d[:2+pos]) // the special byte is the last one
			}
		}
	}
	// Random strings over an alphabet of special and ordinary bytes.
	alphabet := []byte("\"\\/bfnrtu0aF \x00\x01\x1f\x21\x22\x5b\x5c\x5d\x7f\x80\xff")
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		d := make([]byte, 1+r.IntN(40))
		d[0] = '"'
		for k := 1; k < len(d); k++ {
			d[k] = alphabet[r.IntN(len(alphabet))]
		}
		check(d)
	}
}
