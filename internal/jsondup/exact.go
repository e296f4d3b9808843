package jsondup

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// ExactKeys refuses a key of data that names a field of the struct v points
// to (or of a value within it) in other case than the field's json tag
// ("Match" for "match"): JSON decoders match keys in any case, so a file
// could give one field twice, once in each case, and have the values
// joined or the first lost. The error names the key by its path
// ("watchdog: key "Max_turns" is in other case: want "max_turns""). Unknown
// keys, wrong types and syntax are left to the caller's decoder, which
// words them; a field whose type decodes itself (a json.Unmarshaler) is not
// looked into.
func ExactKeys(data []byte, v any) error {
	var doc any
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	return exactKeysOf(doc, reflect.TypeOf(v), "", false)
}

// KnownKeys is ExactKeys that also refuses a key naming no field, by its
// path ("rules[1]: unknown key "bogus""), where a decoder's own error names
// the key alone: in a file of many rules, the one at fault.
func KnownKeys(data []byte, v any) error {
	var doc any
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	return exactKeysOf(doc, reflect.TypeOf(v), "", true)
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

func exactKeysOf(v any, t reflect.Type, path string, known bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	at := func(sub string) string {
		if path == "" {
			return sub
		}
		return path + "." + sub
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, _ := v.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			f, exact := jsonField(t, k)
			var err error
			switch {
			case f == nil && known:
				err = fmt.Errorf("unknown key %s", strconv.Quote(k))
			case f == nil:
				continue // unknown: the decoder says so
			case !exact:
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				err = fmt.Errorf("key %s is in other case: want %s", strconv.Quote(k), strconv.Quote(name))
			}
			if err != nil {
				if path != "" {
					err = fmt.Errorf("%s: %w", path, err)
				}
				return err
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if err := exactKeysOf(obj[k], f.Type, at(name), known); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, _ := v.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if err := exactKeysOf(obj[k], t.Elem(), at(k), known); err != nil {
				return err
			}
		}
	case reflect.Slice:
		arr, _ := v.([]any)
		for i, e := range arr {
			if err := exactKeysOf(e, t.Elem(), path+"["+strconv.Itoa(i)+"]", known); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonField returns the field of struct t that JSON key k decodes into,
// and whether k names it in its own case; nil when none does.
func jsonField(t reflect.Type, k string) (*reflect.StructField, bool) {
	var fold *reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "" || name == "-":
		case name == k:
			return &f, true
		case fold == nil && strings.EqualFold(name, k):
			fold = &f
		}
	}
	return fold, false
}
