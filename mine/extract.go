package mine

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
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
