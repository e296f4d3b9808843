package mine

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
)

// Extract reads the inputs again, as Read read them (opt must be the options
// Read was given), and writes to w every record line of the sessions for
// which keep is true, one a line, in input order: lines of event logs as
// their importer wrote them in fsmine's record form, JSONL lines as they
// are. Records label rules drop are written too, so that a build with the
// same options reads the sessions back as they were. Lines Read skipped as
// bad are not written. It returns the number of lines written.
func Extract(inputs []Input, opt ReadOptions, keep func(session string) bool, w io.Writer) (int, error) {
	maxLine := opt.MaxLine
	if maxLine <= 0 {
		maxLine = 64 << 20
	}
	p, err := newParser(opt.Fields, opt.Rules)
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	written := 0
	var werr error
	var r rec
	for _, in := range inputs {
		rc, err := in.Open()
		if err != nil {
			return written, err
		}
		format := opt.Format
		if in.Format != "" {
			format = in.Format
		}
		_, err = splitLines(rc, crc32.NewIEEE(), format, in.convert, opt.importOptions(), maxLine, func(_ int, data []byte, _ bool) bool {
			for len(data) > 0 {
				l := data
				if i := bytes.IndexByte(data, '\n'); i >= 0 {
					l, data = data[:i], data[i+1:]
				} else {
					data = nil
				}
				if len(bytes.TrimSpace(l)) == 0 || p.parse(l, &r) != nil || !keep(r.session) {
					continue
				}
				bw.Write(l)
				if werr = bw.WriteByte('\n'); werr != nil {
					return false
				}
				written++
			}
			return true
		})
		rc.Close()
		if werr != nil {
			return written, werr
		}
		if err != nil {
			return written, fmt.Errorf("reading %s: %w", in.Name, err)
		}
	}
	return written, bw.Flush()
}

// SessionValues reads the inputs again, as Read read them (opt must be the
// options Read was given), and returns each session's value of the record
// field at path (a dotted path, as --field takes): the first value, in input
// order, of the session's records that carry it, as its text (a string
// unquoted, anything else as written). Sessions none of whose records carry
// the field are not in the map.
func SessionValues(inputs []Input, opt ReadOptions, path string) (map[string]string, error) {
	maxLine := opt.MaxLine
	if maxLine <= 0 {
		maxLine = 64 << 20
	}
	p, err := newParser(opt.Fields, opt.Rules)
	if err != nil {
		return nil, err
	}
	x, err := newExtractor([]string{path})
	if err != nil {
		return nil, err
	}
	vals := map[string]string{}
	out := make([]value, 1)
	var r rec
	for _, in := range inputs {
		rc, err := in.Open()
		if err != nil {
			return nil, err
		}
		format := opt.Format
		if in.Format != "" {
			format = in.Format
		}
		_, err = splitLines(rc, crc32.NewIEEE(), format, in.convert, opt.importOptions(), maxLine, func(_ int, data []byte, _ bool) bool {
			for len(data) > 0 {
				l := data
				if i := bytes.IndexByte(data, '\n'); i >= 0 {
					l, data = data[:i], data[i+1:]
				} else {
					data = nil
				}
				if len(bytes.TrimSpace(l)) == 0 || p.parse(l, &r) != nil {
					continue
				}
				if _, done := vals[r.session]; done || x.extract(l, out) != nil || out[0].kind == kindMissing {
					continue
				}
				vals[strings.Clone(r.session)] = string(out[0].raw)
			}
			return true
		})
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", in.Name, err)
		}
	}
	return vals, nil
}
