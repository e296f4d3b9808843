package jsondup

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestTwice(t *testing.T) {
	for _, tt := range []struct {
		data string
		key  string
		off  int // -1: none found
	}{
		{`{"a":1,"b":2}`, "", -1},
		{`{"a":1,"a":2}`, "a", 7},
		{`{"a":{"b":1,"b":[]}}`, "b", 12},
		{`[{"a":1},{"a":2}]`, "", -1},
		{`{"a":"a","b":{"a":1},"c":[{"a":1,"x":{"a":2}}]}`, "", -1},
		{`{"x":[1,{"k":1}],"x":0}`, "x", 17},
		{`{"a":1,"\u0061":2}`, "a", 7},
		{`{"a\"":1,"a\"":2}`, `a"`, 9},
		{`{"s":"{\"a\":1,\"a\":2}"}`, "", -1},
		{` { "k" : 1 , "k" : 2 } `, "k", 13},
		{`{"k1":0,"k2":0,"k3":0,"k4":0,"k5":0,"k6":0,"k7":0,"k8":0,"k9":0,"k10":0,"k11":0,"k12":0,"k13":0,"k14":0,"k15":0,"k16":0,"k17":0,"k18":0,"k3":1}`, "k3", 0},
		{`"a"`, "", -1},
	} {
		key, off, found := Twice([]byte(tt.data))
		want := tt.off >= 0
		if tt.off == 0 {
			tt.off = strings.LastIndex(tt.data, `"`+tt.key+`"`)
		}
		if found != want || key != tt.key || (want && off != tt.off) {
			t.Errorf("Twice(%s) = %q, %d, %v; want %q, %d, %v", tt.data, key, off, found, tt.key, tt.off, want)
		}
	}
}

// TestRepeatsFolded: keys alike but for case are told apart from exact
// repeats, in small objects and past manyKeys.
func TestRepeatsFolded(t *testing.T) {
	many := `"k1":0,"k2":0,"k3":0,"k4":0,"k5":0,"k6":0,"k7":0,"k8":0,"k9":0,"k10":0,"k11":0,"k12":0,"k13":0,"k14":0,"k15":0,"k16":0,"k17":0,`
	for _, tt := range []struct {
		data          string
		found, folded bool
	}{
		{`{"name":1,"Name":2}`, false, true},
		{`{"name":1,"other":{"Name":2}}`, false, false},
		{`{` + many + `"name":1,"NAME":2}`, false, true},
		{`{` + many + `"name":1,"NAME":2,"name":3}`, true, true},
		{`{"a":1,"b":2}`, false, false},
	} {
		_, _, found, folded := Repeats([]byte(tt.data))
		if found != tt.found || folded != tt.folded {
			t.Errorf("Repeats(%s) = %v, %v; want %v, %v", tt.data, found, folded, tt.found, tt.folded)
		}
	}
}

// FuzzTwice holds Twice to Check on every value a decoder reads: both find
// a key given twice or neither does.
func FuzzTwice(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, `[{"a":1},{"a":1}]`, `{"\u0061":1,"a":2}`, `{"a":[{"b":{"c":1,"c":2}}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		_, _, found, folded := Repeats(data)
		if want := Check(data) != nil; found != want {
			t.Fatalf("Twice(%q) found %v, Check %v", data, found, want)
		}
		if !found {
			if want := foldedKeys(data); folded != want {
				t.Fatalf("Repeats(%q) folded %v, want %v", data, folded, want)
			}
		}
	})
}

// foldedKeys reports whether an object of data, which has no key given
// twice, has two keys alike but for ASCII case: by encoding/json's tokens.
func foldedKeys(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys      []string
		obj, next bool // next: a key comes next
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].next {
			if k, ok := tok.(string); ok {
				for _, prev := range stack[n-1].keys {
					if asciiFold(prev) == asciiFold(k) {
						return true
					}
				}
				stack[n-1].keys = append(stack[n-1].keys, k)
				stack[n-1].next = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, next: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].next = true
		}
	}
}

// asciiFold is s with ASCII letters in lower case, as bytes.ToLower folds
// the keys Repeats compares.
func asciiFold(s string) string { return strings.ToLower(s) }
