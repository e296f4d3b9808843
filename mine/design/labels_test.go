package design_test

import (
	"errors"
	"maps"
	"testing"

	"github.com/fsmine/fsmine/mine/design"
)

func TestReadLabels(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]string
		err      string
	}{
		{"map", `{"Search": "search", "Answer": "answer"}`, map[string]string{"Search": "search", "Answer": "answer"}, ""},
		{"byte-order mark", "\uFEFF{\"a\": \"b\"}", map[string]string{"a": "b"}, ""},
		{"empty", `{}`, map[string]string{}, ""},
		{"syntax error", "{\n  \"a\": \"b\",\n  \"c\" \"d\"\n}", nil,
			`names.json: not a label map: line 3, column 7: invalid character '"' after object key`},
		{"null", `null`, nil, `names.json: a label map is a JSON object of name to label strings, not null`},
		{"array", `["a"]`, nil, `names.json: a label map is a JSON object of name to label strings, not an array`},
		{"number label", `{"a": "x", "b": 1}`, nil, `names.json: node "b": its label is a number, not a string`},
		{"null label", `{"a": null}`, nil, `names.json: node "a": its label is null, not a string`},
		{"key given twice", `{"a": "x", "a": "y"}`, nil, `names.json: the key "a" is given twice`},
		{"half a surrogate pair", `{"a": "x\udc00"}`, nil, `names.json: line 1: a string holds \udc00, half of a UTF-16 surrogate pair`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := design.ReadLabels([]byte(tt.in), "names.json")
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error = %v, want %q", err, tt.err)
				}
				if !errors.Is(err, design.ErrFlow) {
					t.Errorf("error %v does not wrap ErrFlow", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("labels = %v, want %v", got, tt.want)
			}
		})
	}
}
