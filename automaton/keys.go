package automaton

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// checkKeys refuses a key that an object of a model file gives twice, or in
// other case than fsmine writes it ("MAX_ITERATIONS" for "max_iterations",
// or "max_iteration\u017f" with the long s, which Unicode folds to s, as
// the decoder does): the decoder reads either silently (the last value, or
// the key as the field it folds to) where other tools (jq, Python) read
// the file otherwise, so the model reviewed would not be the model
// enforced. Keys
// fsmine does not read are left alone, and so is params.labels, the label
// rules file as given, which its own reader checks. data is JSON that
// decoded; the error names the key by its path ("loops[0]").
func checkKeys(data []byte) error {
	k := keyScan{d: data, known: modelKeys()}
	_, err := k.value(0)
	return err
}

// modelKeys maps the JSON keys of Model and the types within it, folded
// (see fold), to their spelling.
var modelKeys = sync.OnceValue(func() map[string]string {
	keys := map[string]string{}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				keys[fold(name)] = name
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[Model]())
	return keys
})

// keyScan walks JSON that is known to be valid, keeping the path of the
// value it is in for errors.
type keyScan struct {
	d     []byte
	known map[string]string
	path  []step
	keys  [][]byte // of the objects open, the outer ones' first
}

// step is a key of an object, or an index of an array when key is nil.
type step struct {
	key   []byte
	index int
}

func (k *keyScan) where() string {
	if len(k.path) == 0 {
		return "the top-level object"
	}
	var b strings.Builder
	for i, s := range k.path {
		switch {
		case s.key == nil:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case i > 0:
			b.WriteString("." + string(s.key))
		default:
			b.Write(s.key)
		}
	}
	return b.String()
}

func (k *keyScan) space(i int) int {
	for i < len(k.d) && (k.d[i] == ' ' || k.d[i] == '\t' || k.d[i] == '\n' || k.d[i] == '\r') {
		i++
	}
	return i
}

// str returns the end of the string at i and its text, which is a slice
// of the data when it has no escape.
func (k *keyScan) str(i int) (int, []byte) {
	j, esc := i+1, false
	if q := bytes.IndexByte(k.d[j:], '"'); q >= 0 && bytes.IndexByte(k.d[j:j+q], '\\') < 0 {
		return j + q + 1, k.d[j : j+q]
	}
	for j < len(k.d) && k.d[j] != '"' {
		if k.d[j] == '\\' {
			esc = true
			j++
		}
		j++
	}
	if j >= len(k.d) {
		return j, nil
	}
	if !esc {
		return j + 1, k.d[i+1 : j]
	}
	s, err := strconv.Unquote(string(k.d[i : j+1]))
	if err != nil || !utf8.ValidString(s) {
		return j + 1, k.d[i : j+1]
	}
	return j + 1, []byte(s)
}

// value returns the end of the value at i, checking the keys of its objects.
func (k *keyScan) value(i int) (int, error) {
	i = k.space(i)
	if i >= len(k.d) {
		return i, nil
	}
	switch k.d[i] {
	case '{':
		return k.object(i)
	case '[':
		i = k.space(i + 1)
		for n := 0; i < len(k.d) && k.d[i] != ']'; n++ {
			k.path = append(k.path, step{index: n})
			end, err := k.value(i)
			k.path = k.path[:len(k.path)-1]
			if err != nil {
				return end, err
			}
			if i = k.space(end); i < len(k.d) && k.d[i] == ',' {
				i = k.space(i + 1)
			}
		}
		return i + 1, nil
	}
	return k.skip(i), nil
}

func (k *keyScan) object(i int) (int, error) {
	first := len(k.keys)
	defer func() { k.keys = k.keys[:first] }()
	var many map[string]bool // past manyKeys keys, instead of comparing each pair
	i = k.space(i + 1)
	for i < len(k.d) && k.d[i] != '}' {
		end, key := k.str(i)
		dup := false
		if many != nil {
			dup = many[string(key)]
			many[string(key)] = true
		} else {
			for _, other := range k.keys[first:] {
				dup = dup || bytes.Equal(other, key)
			}
			if k.keys = append(k.keys, key); len(k.keys)-first > manyKeys {
				many = make(map[string]bool)
				for _, other := range k.keys[first:] {
					many[string(other)] = true
				}
			}
		}
		if dup {
			return end, fmt.Errorf("%s: the key %q is given twice", k.where(), key)
		}
		if hasUpper(key) {
			if want, ok := k.known[fold(string(key))]; ok && want != string(key) {
				return end, fmt.Errorf("%s: the key %q is in other case: want %q", k.where(), key, want)
			}
		}
		i = k.space(k.space(end) + 1) // past the colon
		if len(k.path) == 1 && string(k.path[0].key) == "params" && string(key) == "labels" {
			i = k.skip(i)
		} else {
			k.path = append(k.path, step{key: key})
			end, err := k.value(i)
			k.path = k.path[:len(k.path)-1]
			if err != nil {
				return end, err
			}
			i = end
		}
		if i = k.space(i); i < len(k.d) && k.d[i] == ',' {
			i = k.space(i + 1)
		}
	}
	return i + 1, nil
}

// manyKeys is how many keys of an object are compared pair by pair.
const manyKeys = 16

// fold returns s with each rune replaced by the least of those Unicode
// folds it with (unicode.SimpleFold's orbit): two strings fold alike when
// strings.EqualFold holds, as the decoder matches a key to a field. ASCII
// letters fold to upper case, and so do the long s (U+017F) and the
// Kelvin sign (U+212A), to S and K.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}

// hasUpper reports whether b has a byte that a key fsmine writes (lower
// case ASCII) does not: an upper-case ASCII letter or any byte of a
// rune past ASCII, which may fold to one (see fold).
func hasUpper(b []byte) bool {
	for _, c := range b {
		if c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// skip returns the end of the value at i, judging none of its keys.
func (k *keyScan) skip(i int) int {
	i = k.space(i)
	if i >= len(k.d) {
		return i
	}
	switch k.d[i] {
	case '"':
		end, _ := k.str(i)
		return end
	case '{', '[':
		depth := 0
		for ; i < len(k.d); i++ {
			switch k.d[i] {
			case '"':
				end, _ := k.str(i)
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for ; i < len(k.d); i++ {
		switch k.d[i] {
		case ',', ']', '}', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return i
}
