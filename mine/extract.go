package mine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fsmine/fsmine/mine/formats"
)

// rereadRecords reads the inputs again, as Read read them (opt must be the
// options Read was given), and calls fn with every line that parses as a
// record: the input's index, the line's number (what Visit.Line holds),
// the input's line of the record (as Log.InputLine gives it), the line and
// the record (both valid only during the call). Lines Read skipped as bad are left
// out. fn returns false to stop the read.
func rereadRecords(inputs []Input, opt ReadOptions, fn func(fi, line, at int, l []byte, r *rec) bool) error {
	maxLine := opt.maxLine()
	p, err := newParser(opt.Fields, opt.Rules)
	if err != nil {
		return err
	}
	var r rec
	for fi, in := range inputs {
		rc, err := in.Open()
		if err != nil {
			return err
		}
		format := opt.Format
		if in.Format != "" {
			format = in.Format
		}
		stopped := false
		_, err = splitLines(rc, io.Discard, format, in.Convert, opt.importOptions(), maxLine, func(first int, data []byte, long []int, converted bool) bool {
			// fn keeps nothing of a line: the buffer goes back for the
			// next chunk.
			defer putChunkBuf(data)
			line := first
			for len(data) > 0 {
				l := data
				if i := bytes.IndexByte(data, '\n'); i >= 0 {
					l, data = data[:i], data[i+1:]
				} else {
					data = nil
				}
				n := line
				line++
				if len(long) > 0 && long[0] == n {
					long = long[1:] // too long: Read skipped it
					continue
				}
				at := n
				if converted {
					if rl, al, ok := formats.RecordAt(l); ok {
						l, at = rl, al // as Read takes it, n still the converted line (parseChunk)
					}
				}
				r = rec{} // as Read parses each line: nothing left of the line before
				if len(bytes.TrimSpace(l)) == 0 || p.parse(l, &r) != nil {
					continue
				}
				if !fn(fi, n, at, l, &r) {
					stopped = true
					return false
				}
			}
			return true
		})
		rc.Close()
		if err != nil {
			return fmt.Errorf("reading %s: %w", in.Name, err)
		}
		if stopped {
			return nil
		}
	}
	return nil
}

// Extract reads the inputs again, as Read read them (opt must be the options
// Read was given), and writes to w every record line of the sessions for
// which keep is true, one a line, in input order: lines of event logs as
// their importer wrote them in fsmine's record form, JSONL lines as they
// are. Records label rules drop are written too, so that a build with the
// same options reads the sessions back as they were. Lines Read skipped as
// bad are not written. It returns the number of lines written.
func Extract(inputs []Input, opt ReadOptions, keep func(session string) bool, w io.Writer) (int, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	written := 0
	var werr error
	err := rereadRecords(inputs, opt, func(_, _, _ int, l []byte, r *rec) bool {
		if !keep(r.session) {
			return true
		}
		bw.Write(l)
		if werr = bw.WriteByte('\n'); werr != nil {
			return false
		}
		written++
		return true
	})
	if werr != nil {
		return written, werr
	}
	if err != nil {
		return written, err
	}
	return written, bw.Flush()
}

// SessionValues reads the inputs again, as Read read them (opt must be the
// options Read was given), and returns each session's value of the record
// field at path (a dotted path, as --field takes): the first value, in input
// order, of the session's records that carry it, as its text (a string
// unquoted, anything else as written). Sessions none of whose records carry
// the field are not in the map; with opt.Session, that session's value
// alone is.
func SessionValues(inputs []Input, opt ReadOptions, path string) (map[string]string, error) {
	x, err := newExtractor([]string{path})
	if err != nil {
		return nil, err
	}
	vals := map[string]string{}
	out := make([]value, 1)
	var bad error
	err = rereadRecords(inputs, opt, func(fi, _, at int, l []byte, r *rec) bool {
		if opt.Session != "" && r.session != opt.Session {
			return true
		}
		if _, done := vals[r.session]; done {
			return true
		}
		if err := x.extract(l, out); err != nil {
			// A line the read took whose value is ambiguous (given
			// twice) is an error: the session would get either.
			var ae *ambiguousError
			if errors.As(err, &ae) {
				bad = fmt.Errorf("%s:%d: %w", inputs[fi].Name, at, err)
				return false
			}
			return true
		}
		if out[0].kind == kindMissing {
			return true
		}
		vals[strings.Clone(r.session)] = string(out[0].raw)
		return true
	})
	if err != nil {
		return nil, err
	}
	if bad != nil {
		return nil, bad
	}
	return vals, nil
}
