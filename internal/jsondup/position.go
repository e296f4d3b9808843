package jsondup

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"

	json "github.com/goccy/go-json"
)

// Position returns err, an error of decoding data with encoding/json or
// go-json, with the line and column (1-based, in bytes) where the decoder
// found data wrong, as fsmine's readers word a place in a file: "line 4,
// column 3: invalid character ']' looking for beginning of value". The
// place is the bad byte of a syntax error, the last byte of a value of the
// wrong type, the end of data when data ends inside a value. Other errors,
// and nil, are returned as they are; the result wraps err.
func Position(data []byte, err error) error {
	line, col, ok := Place(data, err)
	if !ok {
		return err
	}
	return fmt.Errorf("line %d, column %d: %w", line, col, err)
}

// Place is the line and column Position gives err, for a caller that
// words the error itself; ok is false where Position adds none.
func Place(data []byte, err error) (line, col int, ok bool) {
	off, ok := errorOffset(data, err)
	if !ok || off < 0 || off > int64(len(data)) {
		return 0, 0, false
	}
	before := data[:off]
	return bytes.Count(before, []byte("\n")) + 1, len(before) - bytes.LastIndexByte(before, '\n'), true
}

// errorOffset is the offset in data of the byte err is about.
func errorOffset(data []byte, err error) (int64, bool) {
	// Both decoders count in Offset the bytes read up to and including the
	// bad one, and, for a type error, up to the end of a scalar value or
	// the first byte of an object or array: the byte before it.
	var se *json.SyntaxError
	var stdSE *stdjson.SyntaxError
	var te *json.UnmarshalTypeError
	var stdTE *stdjson.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return se.Offset - 1, true
	case errors.As(err, &stdSE):
		return stdSE.Offset - 1, true
	case errors.As(err, &te):
		return max(te.Offset-1, 0), true
	case errors.As(err, &stdTE):
		return max(stdTE.Offset-1, 0), true
	case errors.Is(err, io.ErrUnexpectedEOF):
		return int64(len(data)), true
	}
	return 0, false
}
