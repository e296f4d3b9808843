package design

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"

	"github.com/fsmine/fsmine/internal/jsondup"
)

// ReadLabels decodes a label map (Options.Labels): a JSON object from a
// node name of a design to the label of the log's records it stands for.
// A byte-order mark before it is skipped. Errors are *Error naming path:
// JSON that does not parse (with its line and column), a document other
// than an object, a label other than a string (naming its node), a key
// given twice, and a string a decoder would read as U+FFFD.
func ReadLabels(data []byte, path string) (map[string]string, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	fail := func(node, format string, args ...any) error {
		return &Error{Path: path, Node: node, Msg: fmt.Sprintf(format, args...)}
	}
	var doc any
	if err := stdjson.Unmarshal(data, &doc); err != nil {
		return nil, fail("", "not a label map: %s", jsonError(data, err))
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fail("", "a label map is a JSON object of name to label strings, not %s", kindOf(doc))
	}
	if err := jsondup.Check(data); err != nil {
		return nil, fail("", "%v", err)
	}
	if err := jsondup.Text(data); err != nil {
		return nil, fail("", "%v", err)
	}
	labels := make(map[string]string, len(obj))
	for _, k := range sortedKeys(obj) {
		s, ok := obj[k].(string)
		if !ok {
			return nil, fail(k, "its label is %s, not a string", kindOf(obj[k]))
		}
		labels[k] = s
	}
	return labels, nil
}

// kindOf names the JSON kind of v, a value json.Unmarshal made, with its
// article.
func kindOf(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case map[string]any:
		return "an object"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a number"
}
