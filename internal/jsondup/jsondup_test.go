package jsondup

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1,"b":2}`, ""},
		{`{"a":1,"a":2}`, `the key "a" is given twice`},
		{`{"states":{"a":{"on":{"go":"b","go":"c"}}}}`, `the key "go" is given twice in states.a.on`},
		{`{"graph":{"hello":"x","x":"bye","x":"other"}}`, `the key "x" is given twice in graph`},
		{`[{"a":1},{"a":2}]`, ""},
		{`{"a":[{"b":1,"b":2}]}`, `the key "b" is given twice in a[0]`},
		{`{"a":[{"b":1},[2,{"c":{"d":1,"d":2}}]]}`, `the key "d" is given twice in a[1][1].c`},
		{`[{"a":1},{"b":1,"b":2}]`, `the key "b" is given twice in [1]`},
		{`{"a":{"b":1},"c":{"b":1}}`, ""},
		{`{"a":{},"a":{}}`, `the key "a" is given twice`},
		{`{"a":[1,2],"b":[],"a":3}`, `the key "a" is given twice`},
		{`{"a":1,`, ""}, // a syntax error is the decoder's to word
		{``, ""},
	} {
		err := Check([]byte(tc.in))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("Check(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
	deep := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	_ = Check([]byte(deep)) // the decoder's depth limit stops it: no panic
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":"b"}`, ""},
		{`{"caf\u00e9":"\ud83d\ude00 \ufffd ` + "\uFFFD é" + `"}`, ""},
		{`{"a":"\\ud800"}`, ""}, // an escaped backslash, then text
		{`{"a":"\"\ud800"}`, `line 1: a string holds \ud800, half of a UTF-16 surrogate pair`},
		{"{\n\"a\":\n\"x\\udc00\"}", `line 3: a string holds \udc00, half of a UTF-16 surrogate pair`},
		{`{"a":"\ud800\u0041"}`, `line 1: a string holds \ud800, half of a UTF-16 surrogate pair`},
		{`{"a":"\ud83d"}`, `line 1: a string holds \ud83d, half of a UTF-16 surrogate pair`},
		{"{\"a\":\n\"b\xff\"}", `line 2: a string holds bytes that are not UTF-8`},
		{"{\"\xc3\":1}", `line 1: a string holds bytes that are not UTF-8`},
		{`{"a":"\u12"}`, ""}, // a syntax error is the decoder's to word
		{`{"a":"\ud800`, `line 1: a string holds \ud800, half of a UTF-16 surrogate pair`},
		{`{"a":"\`, ""},
		{``, ""},
	} {
		err := Text([]byte(tc.in))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestKnownKeys(t *testing.T) {
	type leaf struct {
		Max int `json:"max"`
	}
	type doc struct {
		Name  string          `json:"name"`
		Caps  []leaf          `json:"caps"`
		ByKey map[string]leaf `json:"by_key"`
	}
	for _, tc := range []struct{ in, exact, known string }{
		{`{"name":"a","caps":[{"max":1}],"by_key":{"x":{"max":2}}}`, "", ""},
		{`{"nme":"a"}`, "", `unknown key "nme"`},
		{`{"caps":[{"max":1},{"mx":1}]}`, "", `caps[1]: unknown key "mx"`},
		{`{"by_key":{"x":{"Max":1}}}`, `by_key.x: key "Max" is in other case: want "max"`, `by_key.x: key "Max" is in other case: want "max"`},
		{`{"by_key":{"x":{"min":1}}}`, "", `by_key.x: unknown key "min"`},
		{`{"name":`, "", ""}, // syntax is the decoder's to word
	} {
		for _, c := range []struct {
			fn   func([]byte, any) error
			want string
		}{{ExactKeys, tc.exact}, {KnownKeys, tc.known}} {
			got := ""
			if err := c.fn([]byte(tc.in), doc{}); err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("%s: got %q, want %q", tc.in, got, c.want)
			}
		}
	}
}

// TestBadText: BadText finds what Text finds, at the offset of the bad
// byte or escape.
func TestBadText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		off  int // -1: none
		what string
	}{
		{`{"a":"b"}`, -1, ""},
		{`{"caf\u00e9":"\ud83d\ude00 \ufffd ` + "\uFFFD é" + `"}`, -1, ""},
		{`{"a":"\\ud800"}`, -1, ""},
		{`{"a":"\\\\\ud800"}`, 10, `\ud800, half of a UTF-16 surrogate pair`},
		{`{"a":"\"\ud800"}`, 8, `\ud800, half of a UTF-16 surrogate pair`},
		{`{"a":"\ud800\u0041"}`, 6, `\ud800, half of a UTF-16 surrogate pair`},
		{`{"a":"\udc00\ud800"}`, 6, `\udc00, half of a UTF-16 surrogate pair`},
		{"{\"a\":\n\"b\xff\"}", 8, "bytes that are not UTF-8"},
		{"{\"\xc3\":\"\\ud800\"}", 2, "bytes that are not UTF-8"},
		{"{\"a\":\"\\ud800\",\"\xc3\":1}", 6, `\ud800, half of a UTF-16 surrogate pair`},
		{`["\ud83d"]`, 2, `\ud83d, half of a UTF-16 surrogate pair`},
	} {
		off, what, found := BadText([]byte(tc.in))
		if !found {
			off = -1
		}
		if off != tc.off || what != tc.what {
			t.Errorf("BadText(%q) = %d, %q; want %d, %q", tc.in, off, what, tc.off, tc.what)
		}
		if textErr := Text([]byte(tc.in)); (textErr != nil) != found {
			t.Errorf("BadText(%q) found %v, Text %v", tc.in, found, textErr)
		}
	}
}

// FuzzBadText holds BadText to Text on every value a decoder reads: both
// find a bad string or neither does.
func FuzzBadText(f *testing.F) {
	for _, s := range []string{`{"a":"\ud800"}`, `["\\ud800","\ud83d\ude00"]`, "{\"a\":\"\xe9\"}", `{"\\\\\udc00":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		_, _, found := BadText(data)
		if want := Text(data) != nil; found != want {
			t.Fatalf("BadText(%q) found %v, Text %v", data, found, want)
		}
	})
}
