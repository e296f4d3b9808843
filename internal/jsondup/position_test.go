package jsondup

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"io"
	"testing"

	json "github.com/goccy/go-json"
)

func TestPosition(t *testing.T) {
	type rules struct {
		Rules []struct {
			Drop bool `json:"drop"`
		} `json:"rules"`
	}
	tests := []struct{ name, in, want string }{
		{"trailing comma", "{\n  \"rules\": [\n    {\"drop\": true},\n  ]\n}\n",
			"line 4, column 3: invalid character ']' looking for beginning of value"},
		{"first byte", "x", "line 1, column 1: invalid character 'x' looking for beginning of value"},
		{"newline in a string", "{\"rules\": \"a\nb\"}", `line 1, column 13: invalid character '\n' in string literal`},
		{"wrong type", "{\"rules\": [\n {\"drop\": \"yes\"}]}",
			"line 2, column 15: json: cannot unmarshal string into Go struct field rules.rules.0.drop of type bool"},
		{"cut short", "{\"rules\": [\n", "line 2, column 1: unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v rules
			// Decoder, as the callers decode: Unmarshal words a cut
			// file otherwise.
			err := Position([]byte(tt.in), json.NewDecoder(bytes.NewReader([]byte(tt.in))).Decode(&v))
			if err == nil || err.Error() != tt.want {
				t.Errorf("Position(go-json) = %v, want %q", err, tt.want)
			}
		})
	}
	// encoding/json's errors are placed alike.
	in := []byte("{\n  \"rules\": [\n    {\"drop\": true},\n  ]\n}\n")
	var v rules
	err := Position(in, stdjson.Unmarshal(in, &v))
	if want := "line 4, column 3: invalid character ']' looking for beginning of value"; err == nil || err.Error() != want {
		t.Errorf("Position(encoding/json) = %v, want %q", err, want)
	}
	// Other errors are left as they are, and the decoder's stays within.
	if err := Position(in, io.EOF); err != io.EOF {
		t.Errorf("Position(io.EOF) = %v, want io.EOF", err)
	}
	if err := Position([]byte("{"), io.ErrUnexpectedEOF); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Position(io.ErrUnexpectedEOF) = %v, want it wrapped", err)
	}
}
