package mine

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strconv"

	"github.com/goccy/go-json"

	"github.com/fsmine/fsmine/internal/jsondup"
)

// ownLineBound is the longest line of a file fsmine writes for itself (a
// partial result, fields evidence) that a reader takes: the bound a log's
// lines have (ReadOptions.MaxLine). A variable for tests.
var ownLineBound = defaultMaxLine

// ownHeaderBound is the longest header line such a file may have: a
// partial result's header holds the log's names, which its reader keeps
// whole anyway (a log of many names with ids in them passes 64 MiB). A
// variable for tests.
var ownHeaderBound = 1 << 30

// gzLines reads a gzip-compressed JSONL file that fsmine writes for itself
// (a partial result, fields evidence) a line at a time: a line longer than
// ownLineBound is refused where it starts, not held whole (a few hundred
// kilobytes of gzip make a line of gigabytes), and end checks that the gzip
// data is whole and nothing follows it, so that a file cut short or
// appended to is not taken as the whole. Errors name the file and line.
type gzLines struct {
	name string
	gz   *gzipReader
	br   *bufio.Reader
	line int // of the line last read, 1-based
	buf  []byte
	// bound is the longest line next takes (ownLineBound, or
	// ownHeaderBound while the header is read).
	bound int
}

// newGzLines starts reading r, which must be gzip data; its error is
// gzip's, for the caller to word.
func newGzLines(r io.Reader, name string) (*gzLines, error) {
	cr := &countReader{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	gz, err := gzip.NewReader(br)
	if err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return nil, &TruncatedError{Compressed: cr.n}
		}
		return nil, err
	}
	gz.Multistream(false)
	g := &gzipReader{gz: gz, br: br, raw: cr}
	return &gzLines{name: name, gz: g, br: bufio.NewReaderSize(g, 64<<10), bound: ownLineBound}, nil
}

// next returns the next line without its newline, valid until the next
// call, or io.EOF after the last.
func (l *gzLines) next() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		frag, err := l.br.ReadSlice('\n')
		if len(l.buf)+len(frag) > l.bound+1 {
			return nil, fmt.Errorf("%s:%d: %w (over %d bytes)", l.name, l.line+1, errLineTooLong, l.bound)
		}
		if need := len(l.buf) + len(frag); need > cap(l.buf) {
			// Grown to the bound at most, not to twice what it holds.
			buf := make([]byte, len(l.buf), min(max(2*cap(l.buf), need), l.bound+1))
			copy(buf, l.buf)
			l.buf = buf
		}
		l.buf = append(l.buf, frag...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(l.buf) == 0:
			return nil, io.EOF
		case err != nil && err != io.EOF:
			return nil, fmt.Errorf("%s: %w", l.name, err)
		}
		l.line++
		return bytes.TrimSuffix(l.buf, []byte{'\n'}), nil
	}
}

// decodeHeader reads the first line into the struct v points to. A line
// that is no JSON object with a string "schema" is "not what", one with
// another schema than schema says so ("field is ..."). Then every key must
// be one of v's fields, in its own case and given once (a JSON decoder takes
// an unknown key without a word, and the last of two), at any depth.
func (l *gzLines) decodeHeader(v any, schema, what, field string) error {
	l.bound = ownHeaderBound
	line, err := l.next()
	l.bound = ownLineBound
	if err == io.EOF {
		return fmt.Errorf("%s: not %s: no data", l.name, what)
	}
	if err != nil {
		return err
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return fmt.Errorf("%s: not %s: %w", l.name, what, err)
	}
	if head.Schema != schema {
		return fmt.Errorf("%s: %s is %q, this fsmine reads %q", l.name, field, head.Schema, schema)
	}
	if err := jsondup.Check(line); err != nil {
		return fmt.Errorf("%s:%d: %w", l.name, l.line, err)
	}
	if err := jsondup.ExactKeys(line, v); err != nil {
		return fmt.Errorf("%s:%d: %w", l.name, l.line, err)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s:%d: %w", l.name, l.line, err)
	}
	return nil
}

// decodeLine reads the next line, a JSON object whose keys are among keys
// (each at most once, in that case), into v; io.EOF after the last line. It checks the object's keys
// alone, not those of the values within, which the lines it reads have no
// objects among (a session's id and visits): a check at every depth costs
// more than the decode.
func (l *gzLines) decodeLine(v any, keys ...string) error {
	line, err := l.next()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("%s:%d: %w", l.name, l.line, err)
	}
	seen := make([]bool, len(keys))
	return topKeys(line, func(k string) error {
		for i, want := range keys {
			if k == want {
				if seen[i] {
					return fmt.Errorf("%s:%d: the key %s is given twice", l.name, l.line, strconv.Quote(k))
				}
				seen[i] = true
				return nil
			}
		}
		return fmt.Errorf("%s:%d: unknown key %s", l.name, l.line, strconv.Quote(k))
	})
}

// topKeys calls f with each key of the JSON object obj, in order, up to
// the first error f returns. obj has been decoded, so it is valid JSON.
func topKeys(obj []byte, f func(string) error) error {
	var err error
	jsondup.Members(obj, func(name []byte, _, _ int) bool {
		var k string
		if err = json.Unmarshal(name, &k); err == nil {
			err = f(k)
		}
		return err == nil
	})
	return err
}

// end checks that the lines read were the last: nothing follows but the
// end of whole gzip data.
func (l *gzLines) end(what string) error {
	for {
		line, err := l.next()
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		case len(bytes.TrimSpace(line)) > 0:
			return fmt.Errorf("%s:%d: data after %s", l.name, l.line, what)
		}
	}
}
