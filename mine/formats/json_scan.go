package formats

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"

	json "github.com/goccy/go-json"
)

// docScanner walks JSON text as it is read, so that a document's parts can
// be taken one at a time where a decoder would hold it whole: it finds
// where a value ends (by its strings, their escapes and the nesting of its
// brackets) without decoding it, and keeps in memory only the bytes from
// keep on. It does not check what it skips: the parts it gives are decoded
// (and so checked) by the JSON library, and where the text does not have
// the shape the scanner expects, syntax finds the library's message and
// position for it (see jsonReader.syntax). Offsets are the input's, as
// jsonReader's posReader counts them.
type docScanner struct {
	r    io.Reader
	buf  []byte
	base int64 // the offset of buf[0]
	i    int   // the next byte to look at
	// keep is the offset of the first byte that must stay in buf; what
	// comes before it (and before i) is let go as more is read.
	keep  int64
	eof   bool
	err   error  // a read error other than io.EOF
	stack []byte // the brackets open in the value being skipped
}

// minRead is the least room a read is given in the buffer.
const minRead = 32 << 10

// The scanners' buffers are pooled, as the importers' readers are (see
// readerPool), up to maxPooledScan bytes: one that grew to hold a large
// simulation is let go.
var scanPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 2*minRead)
	return &b
}}

const maxPooledScan = 1 << 20

// newDocScanner returns a scanner of r, whose bytes start at offset 0;
// release gives its buffer back.
func newDocScanner(r io.Reader) *docScanner {
	return &docScanner{r: r, buf: (*scanPool.Get().(*[]byte))[:0]}
}

// release gives the scanner's buffer back to the pool; the scanner and
// the bytes it gave must not be used after.
func (s *docScanner) release() {
	if cap(s.buf) <= maxPooledScan {
		b := s.buf[:0]
		scanPool.Put(&b)
	}
	s.buf = nil
}

// off is the offset of the next byte to look at.
func (s *docScanner) off() int64 { return s.base + int64(s.i) }

// bytes returns the input from offset from to offset to, which must be
// kept (not before keep) and read; valid until the next read.
func (s *docScanner) bytes(from, to int64) []byte {
	return s.buf[from-s.base : to-s.base]
}

// more reads more of the input, letting go of the bytes before keep and
// before i; it reports false at the end of the input or on a read error
// (see readErr).
func (s *docScanner) more() bool {
	for !s.eof && s.err == nil {
		if cap(s.buf)-len(s.buf) < minRead {
			from := min(s.i, int(max(s.keep-s.base, 0)))
			if from > 0 {
				n := copy(s.buf, s.buf[from:])
				s.buf = s.buf[:n]
				s.base += int64(from)
				s.i -= from
			}
			if cap(s.buf)-len(s.buf) < minRead {
				nb := make([]byte, len(s.buf), max(2*cap(s.buf), 2*minRead))
				copy(nb, s.buf)
				s.buf = nb
			}
		}
		n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+n]
		if err == io.EOF {
			s.eof = true
		} else if err != nil {
			s.err = err
		}
		if n > 0 {
			return true
		}
	}
	return false
}

// readErr is the error that stopped the reading, nil at the end of the
// input.
func (s *docScanner) readErr() error { return s.err }

// skipSpace moves past white space and returns the byte after it; ok is
// false at the end of the input.
func (s *docScanner) skipSpace() (c byte, ok bool) {
	for {
		for s.i < len(s.buf) {
			switch c := s.buf[s.i]; c {
			case ' ', '\t', '\r', '\n':
				s.i++
			default:
				return c, true
			}
		}
		if !s.more() {
			return 0, false
		}
	}
}

// errScanEnd is skipValue's error at the end of the input, inside a value.
var errScanEnd = errors.New("the input ends inside a JSON value")

// skipValue moves past the value that starts at the next byte, which must
// not be white space: a string, an object or array (to its closing
// bracket), or else a run of bytes up to white space or one of ,:[]{}"
// (a number or literal, or what stands in for one: empty where none is).
// It keeps the bytes from where it starts. bad says that it stopped at a
// closing bracket that closes nothing open (the value ends after it), an
// error the library will name. At the end of the input inside a string or
// an open bracket it returns errScanEnd (or the read error).
func (s *docScanner) skipValue() (bad bool, err error) {
	s.keep = min(s.keep, s.off())
	if s.i == len(s.buf) && !s.more() {
		return false, s.endErr()
	}
	switch s.buf[s.i] {
	case '"':
		return false, s.skipString()
	case '{', '[':
	default:
		s.skipToken()
		return false, s.readErr()
	}
	s.stack = s.stack[:0]
	for {
		j := indexStructural(s.buf[s.i:])
		if j < 0 {
			s.i = len(s.buf)
			if !s.more() {
				return false, s.endErr()
			}
			continue
		}
		s.i += j
		switch c := s.buf[s.i]; c {
		case '"':
			if err := s.skipString(); err != nil {
				return false, err
			}
			continue
		case '{', '[':
			s.stack = append(s.stack, c)
		default: // '}' or ']'
			open := byte('{')
			if c == ']' {
				open = '['
			}
			top := len(s.stack) - 1
			if s.stack[top] != open {
				s.i++
				return true, nil
			}
			s.stack = s.stack[:top]
			if top == 0 {
				s.i++
				return false, nil
			}
		}
		s.i++
	}
}

// endErr is errScanEnd, or the read error that ended the input.
func (s *docScanner) endErr() error {
	if s.err != nil {
		return s.err
	}
	return errScanEnd
}

// skipString moves past the string that starts at the next byte (a quote):
// to the first quote after it that no odd run of backslashes escapes.
func (s *docScanner) skipString() error {
	start := s.off() + 1 // the first byte of the string's text
	s.i++
	for {
		j := bytes.IndexByte(s.buf[s.i:], '"')
		if j < 0 {
			s.i = len(s.buf)
			if !s.more() {
				return s.endErr()
			}
			continue
		}
		s.i += j
		k := s.i
		for first := int(start - s.base); k > first && s.buf[k-1] == '\\'; k-- {
		}
		s.i++
		if (s.i-1-k)%2 == 0 {
			return nil
		}
	}
}

// skipToken moves past a run of bytes up to white space, one of ,:[]{}" or
// the end of the input.
func (s *docScanner) skipToken() {
	for {
		for s.i < len(s.buf) {
			switch s.buf[s.i] {
			case ' ', '\t', '\r', '\n', ',', ':', '[', ']', '{', '}', '"':
				return
			}
			s.i++
		}
		if !s.more() {
			return
		}
	}
}

// structural holds the bytes skipValue stops at outside strings.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// indexStructural returns the index of the first byte of b that skipValue
// stops at, or -1.
func indexStructural(b []byte) int {
	for i, c := range b {
		if structural[c] {
			return i
		}
	}
	return -1
}

// syntax reports the first syntax error of ctx followed by text, the
// input's bytes from offset at on, as the decoder of the whole input names
// it: ctx is JSON text that puts the library's parser where the input's
// own text would have it ("[0," before an array element that is not the
// first). It returns errScanEnd when the text is good as far as it goes,
// and nil when it is a whole JSON value.
func (j *jsonReader) syntax(ctx string, text []byte, at int64) error {
	if ctx != "" {
		text = append([]byte(ctx), text...)
	}
	if json.Valid(text) {
		return nil
	}
	var v json.RawMessage
	err := json.Unmarshal(text, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		if err == nil {
			return nil
		}
		return j.errorAt(at, "%v", err)
	}
	msg := strings.TrimPrefix(se.Error(), "json: ")
	if se.Offset >= int64(len(text)) && strings.Contains(msg, "unexpected end") {
		return errScanEnd
	}
	return j.errorAt(at+max(se.Offset-1, 0)-int64(len(ctx)), "%s", msg)
}
