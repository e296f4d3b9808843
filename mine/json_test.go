package mine

// The importers and the label rules read their input as strict JSON (RFC
// 8259). These cases pin what go-json v0.10.5's decoder got wrong (values
// taken by counting brackets, NUL bytes, reader errors dropped, raw
// control characters, type errors naming the Go field): v0.12 reads each
// as encoding/json does, which is why the project takes v0.12 and uses it
// everywhere.

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// otlpLine is one OTLP span of one trace, on one line.
const otlpLine = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}]},"scopeSpans":[{"spans":[{"traceId":"t1","spanId":"s1","name":"plan","startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000001000000000"}]}]}]}` + "\n"

// failingReader returns its input, then err where the input ends.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if err == io.EOF {
		err = f.err
	}
	return n, err
}

func TestFormatJSONStrict(t *testing.T) {
	errBroken := errors.New("broken pipe")
	tests := []struct {
		name    string
		convert func(io.Reader, io.Writer, ImportOptions) error
		in      io.Reader
		want    string // the error
	}{
		// go-json takes a raw control character inside a string as
		// part of the string.
		{"control character in a string", formatNamed("otlp").Convert, strings.NewReader(strings.Replace(otlpLine, "plan", "pl\tan", 1)),
			`line 1, column 165: invalid character '\t' in string literal`},
		// go-json's stream decoder copies a value into a RawMessage by
		// counting brackets, without checking what is between them; the
		// missing comma is found later, by another message.
		{"missing comma", formatNamed("otlp").Convert, strings.NewReader(strings.Replace(otlpLine, `"spanId":"s1",`, `"spanId":"s1" `, 1)),
			`line 1, column 155: invalid character '"' after object key:value pair`},
		// go-json's stream decoder ends its buffer with a NUL byte and
		// reads one in the input as that end.
		{"NUL byte between values", formatNamed("otlp").Convert, strings.NewReader(otlpLine + "\x00" + otlpLine),
			`line 2, column 1: invalid character '\x00' looking for beginning of value`},
		// go-json's stream decoder drops the error of its reader and
		// takes the input as complete: a broken read must not pass as
		// the end of the input.
		{"read error", formatNamed("otlp").Convert, &failingReader{strings.NewReader(otlpLine + otlpLine), errBroken}, "broken pipe"},
		{"read error inside a value", formatNamed("otlp").Convert, &failingReader{strings.NewReader(otlpLine + otlpLine[:40]), errBroken}, "broken pipe"},
		// go-json names the Go field, not the JSON path.
		{"type error names the JSON path", formatNamed("otlp").Convert, strings.NewReader(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":5}]}]}]}`),
			"line 1, column 55: resourceSpans.0.scopeSpans.0.spans.0.traceId is a JSON number, want a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.convert(tt.in, io.Discard, ImportOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestFormatJSONValues checks that values read from the input are written
// as encoding/json reads them: numbers past float64's range as written
// (go-json's Compact fails on them and the importer would write them as
// strings); invalid UTF-8, which it reads as U+FFFD, skips the line
// instead (see TestJSONImportBadText).
func TestFormatJSONValues(t *testing.T) {
	convert := func(convert func(io.Reader, io.Writer, ImportOptions) error, in string) string {
		t.Helper()
		var out bytes.Buffer
		if err := convert(strings.NewReader(in), &out, ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got, want := convert(formatNamed("otlp").Convert, strings.Replace(otlpLine, "plan", "pl\xffan", 1)), "\x00s1\x00\x00a string holds bytes that are not UTF-8\n"; got != want {
		t.Errorf("invalid UTF-8 in a name:\n%q\nwant a note that skips the line:\n%q", got, want)
	}
	got := convert(formatNamed("langsmith").Convert, `{"id":"a","trace_id":"a","name":"x","run_type":"chain","extra":{"metadata":{"langgraph_node":"x","langgraph_step":1e400}}}`)
	if !strings.Contains(got, `"langgraph_step":1e400`) {
		t.Errorf("a number past float64's range:\n%s\nwant it as written, 1e400", got)
	}
}

// TestParseRulesJSON checks that a label rules file is read as strict JSON,
// with messages that say what is wrong.
func TestParseRulesJSON(t *testing.T) {
	tests := []struct{ name, in, want string }{
		// go-json takes the tab as part of the pattern.
		{"control character in a string", "{\"rules\":[{\"match\":{\"node\":\"a\tb\"},\"state\":\"X\"}]}",
			`label rules: line 1, column 30: invalid character '\t' in string literal`},
		{"missing colon", `{"rules":[{"match":{"node" "ab"},"state":"X"}]}`,
			`label rules: line 1, column 28: invalid character '"' after object key`},
		// go-json: "json: bool unexpected end of JSON input".
		{"wrong type", `{"rules":[{"match":{"node":"ab"},"state":"X","drop":"yes"}]}`,
			"label rules: line 1, column 57: json: cannot unmarshal string into Go struct field Rules.rules.0.drop of type bool"},
		// go-json: "expected comma after object element".
		{"truncated", `{"rules":[{"match":{"node":"ab"},"state":"X"}]`,
			"label rules: line 1, column 47: unexpected EOF"},
		{"unknown field", `{"rules":[],"bogus":1}`, `label rules: unknown key "bogus"`},
		// The decoder's own error named the key alone: which of many rules?
		{"unknown field in a rule", `{"rules":[{"match":{"node":"a"},"state":"A"},{"match":{"node":"b"},"stage":"B"}]}`,
			`label rules: rules[1]: unknown key "stage"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRules([]byte(tt.in))
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
