package formats

// Shared machinery of the importers (format_*.go): recognising a JSON input
// by the shape of its head, reading JSON values with line and column
// positions for errors, and writing fsmine records.

import (
	"bufio"
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/jsondup"
	"github.com/fsmine/fsmine/internal/timeparse"
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// trimHead drops a UTF-8 byte order mark and leading white space.
func trimHead(head []byte) []byte {
	return bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
}

// jsonShape is what the start of a JSON input shows of its first item: the
// first top-level value, or the first element of a top-level array. Keys are
// recorded by the path of the object that holds them ("" for the item,
// "span_data", "observations[]" for the objects of an array); short strings
// by their full path. A truncated head gives the keys seen so far.
type jsonShape struct {
	array bool
	keys  map[string]bool   // path + "\x00" + key
	strs  map[string]string // path of a string value -> the string
}

// has reports whether the object at path has key.
func (s *jsonShape) has(path, key string) bool { return s.keys[path+"\x00"+key] }

// hasPath reports whether the item has a key at a dotted record path
// ("conv", "tool.name", "tool_calls.0.name": an index is any element of
// an array); false for a path that ends in an index.
func (s *jsonShape) hasPath(path string) bool {
	parts := strings.Split(path, ".")
	at := ""
	for i, p := range parts[:len(parts)-1] {
		switch _, err := strconv.Atoi(p); {
		case err == nil && i > 0:
			at += "[]"
		case at == "":
			at = p
		default:
			at += "." + p
		}
	}
	return s.has(at, parts[len(parts)-1])
}

// str returns the string at path ("object", "span_data.type").
func (s *jsonShape) str(path string) string { return s.strs[path] }

// isRecord reports whether the item looks like fsmine's own record (a
// node or step field, or a session_id that is not LangSmith's project),
// which no other JSON format may claim, whatever else it carries.
func (s *jsonShape) isRecord() bool {
	return s.has("", FieldNode) || s.has("", FieldStep) || (s.has("", FieldSession) && !s.has("", "run_type"))
}

// maxSniffDepth and maxSniffPath bound the paths sniffJSON records: no
// format is recognised by anything deeper or longer.
const (
	maxSniffDepth = 8
	maxSniffPath  = 256
)

// sniffJSON reads the shape of the first item of a JSON head; nil when the
// head does not start with an object or an array of objects.
// CutShort says whether head starts with a JSON object or array that it
// cuts off: the keys that tell a format may lie past it.
func CutShort(head []byte) bool {
	head = trimHead(head)
	if len(head) == 0 || (head[0] != '{' && head[0] != '[') {
		return false
	}
	var raw stdjson.RawMessage
	err := stdjson.NewDecoder(bytes.NewReader(head)).Decode(&raw)
	return errors.Is(err, io.ErrUnexpectedEOF)
}

func sniffJSON(head []byte) *jsonShape {
	head = trimHead(head)
	if len(head) == 0 || (head[0] != '{' && head[0] != '[') {
		return nil
	}
	s := &jsonShape{array: head[0] == '[', keys: map[string]bool{}, strs: map[string]string{}}
	dec := json.NewDecoder(bytes.NewReader(head))
	type frame struct {
		obj  bool
		deep bool // too deep or too long a path to record anything in
		path string
		key  string // an object's current key
		want bool   // whether an object expects a key next
	}
	var stack []frame
	if s.array {
		if _, err := dec.Token(); err != nil {
			return nil
		}
	}
	// childPath is the path of a value about to start in the current
	// frame; deep when nothing is recorded at that path. Paths are kept
	// short and shallow so that the work stays linear in the head: a path
	// built for every level of deeply nested arrays cost time and memory
	// quadratic in the depth.
	childPath := func() (path string, deep bool) {
		if len(stack) == 0 {
			return "", false
		}
		f := stack[len(stack)-1]
		if f.deep || len(stack) >= maxSniffDepth || len(f.path)+len(f.key)+1 > maxSniffPath {
			return "", true
		}
		if !f.obj {
			return f.path + "[]", false
		}
		if f.path == "" {
			return f.key, false
		}
		return f.path + "." + f.key, false
	}
	valueDone := func() bool {
		if len(stack) == 0 {
			return true
		}
		if f := &stack[len(stack)-1]; f.obj {
			f.want = true
		}
		return false
	}
	for tokens := 0; tokens < 20000; tokens++ {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.obj && f.want {
				if d, ok := tok.(json.Delim); ok && d == '}' {
					stack = stack[:len(stack)-1]
					if valueDone() {
						break
					}
					continue
				}
				k, _ := tok.(string)
				f.key, f.want = k, false
				if !f.deep && len(k) <= maxSniffPath {
					s.keys[f.path+"\x00"+k] = true
				}
				continue
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				p, deep := childPath()
				stack = append(stack, frame{obj: true, deep: deep, path: p, want: true})
			case '[':
				p, deep := childPath()
				stack = append(stack, frame{deep: deep, path: p})
			case ']', '}':
				if len(stack) == 0 {
					return s
				}
				stack = stack[:len(stack)-1]
				if valueDone() {
					return s
				}
			}
		case string:
			if len(t) <= 64 {
				if p, deep := childPath(); p != "" && !deep {
					if _, seen := s.strs[p]; !seen {
						s.strs[p] = t
					}
				}
			}
			if valueDone() {
				return s
			}
		default:
			if valueDone() {
				return s
			}
		}
	}
	return s
}

// posReader counts the bytes read through it and remembers where lines
// end, so that an offset into the input can be reported as line and column.
// Memory follows what is kept, not what is read: blank lines in a row (only
// white space between their ends) are one entry, and of the items streamed
// (see forget) only the current one's line ends are kept.
type posReader struct {
	r  io.Reader
	n  int64
	nl []lineEnds // from the mark's line on
	// lines counts the '\n' bytes before nl's; lineStart is where the line
	// after them starts.
	lines     int64
	lineStart int64
	// blank says that every byte since the last '\n' is white space.
	blank bool
	// mark is where the current item starts; limit, when above 0, is the
	// most bytes read past it (the item and the decoder's read-ahead)
	// before a read fails with errItemTooLarge. While lead is set, every
	// byte from the mark on is white space (or an array's commas), and the
	// mark moves past the space the decoder lets go: between JSON values
	// all of it, so that it counts for none of them; between an array's
	// elements (sep) only what follows the comma, as the decoder holds what
	// comes before it while it looks for the comma or the array's end.
	mark, limit      int64
	lead, sep, comma bool
	// solid is the offset of the last byte that is not white space or a
	// comma, lastComma that of the last comma.
	solid, lastComma int64
}

// lineEnds are count '\n' bytes from first to last with only white space
// between them; upTo counts the '\n' bytes of the input up to last.
type lineEnds struct {
	first, last int64
	count, upTo int64
}

// errItemTooLarge is the read error of an item over posReader.limit.
var errItemTooLarge = errors.New("item too large")

func (p *posReader) Read(b []byte) (int, error) {
	if p.limit > 0 && p.n-p.mark > p.limit {
		return 0, errItemTooLarge
	}
	n, err := p.r.Read(b)
	for i, c := range b[:n] {
		switch c {
		case '\n':
			off := p.n + int64(i)
			if k := len(p.nl) - 1; p.blank && k >= 0 {
				p.nl[k].last = off
				p.nl[k].count++
				p.nl[k].upTo++
			} else {
				p.nl = append(p.nl, lineEnds{off, off, 1, p.total() + 1})
			}
			p.blank = true
		case ' ', '\t', '\r':
		case ',':
			// Between an array's elements a comma is space too: it sets
			// no solid, and a lead goes on over it.
			p.blank, p.lastComma = false, p.n+int64(i)
			p.comma = p.comma || p.lead
		default:
			p.blank, p.lead, p.solid = false, false, p.n+int64(i)
		}
		if p.lead && (!p.sep || p.comma) {
			p.mark = p.n + int64(i) + 1
		}
	}
	p.n += int64(n)
	return n, err
}

// total is the count of '\n' bytes read.
func (p *posReader) total() int64 {
	if k := len(p.nl) - 1; k >= 0 {
		return p.nl[k].upTo
	}
	return p.lines
}

// forget marks off as where the current item starts: positions before it
// are not asked for again, so their line ends are counted and let go.
func (p *posReader) forget(off int64) {
	p.mark = max(p.mark, off)
	if p.solid < off {
		// The bytes read from off on are white space (and commas): the
		// mark moves on as they are let go (see Read); those read already,
		// at most a read's worth, count.
		p.lead, p.comma = true, p.lastComma >= off
		if !p.sep {
			p.mark = max(p.mark, p.n)
		}
	}
	i := sort.Search(len(p.nl), func(i int) bool { return p.nl[i].last >= off })
	if i == 0 {
		return
	}
	p.lines, p.lineStart = p.nl[i-1].upTo, p.nl[i-1].last+1
	p.nl = append(p.nl[:0], p.nl[i:]...)
}

// pos returns the 1-based line and column (in bytes) of offset off, which
// must not be before the mark (see forget). An offset among blank lines in
// a row, white space, is given the first of them.
func (p *posReader) pos(off int64) (line, col int) {
	i := sort.Search(len(p.nl), func(i int) bool { return p.nl[i].last >= off })
	if i < len(p.nl) && p.nl[i].first < off {
		e := p.nl[i]
		return int(e.upTo-e.count) + 2, 1
	}
	lines, start := p.lines, p.lineStart
	if i > 0 {
		lines, start = p.nl[i-1].upTo, p.nl[i-1].last+1
	}
	return int(lines) + 1, int(off-start) + 1
}

// jsonReader reads the JSON values of an input, whatever their layout:
// JSON lines, concatenated or pretty-printed values, or one top-level array
// whose elements are the items.
type jsonReader struct {
	pr  *posReader
	dec *json.Decoder
	// stream says that items are done with once fn returns: no position
	// before the current item is asked for again (see stream).
	stream bool
	peek   []byte // next's look at what the decoder holds
	// clean is the span of offsets, the current item's, whose strings
	// are known to be as written (see badText), so that the values
	// decoded from within it are not looked at again.
	clean [2]int64
	// skipBadText makes items skip an item with a string that is not as
	// written (see badText) and keep it in skipped, for the importer to
	// write as a note (writeSkipped), rather than stop there.
	skipBadText bool
	skipped     []skippedItem
	// innerText, when set, looks at the text an importer will parse as
	// JSON from within a string of an item (which badText sees escaped):
	// why it is not as written, or "" when it is. items treats a hit as
	// the item's bad text.
	innerText func(raw json.RawMessage) (off int, reason string)
}

// skippedItem is an item items skipped: its input line and why.
type skippedItem struct {
	line   int
	reason string
}

// streamItems declares that each item is done with once items' fn returns
// for it, so that the reader keeps what one item needs, and limits an item
// to max bytes (0: no limit): the importers of span formats, whose inputs
// are lines or array elements of any number, each of modest size.
func (j *jsonReader) streamItems(max int) {
	j.stream = true
	j.pr.limit = int64(max)
}

// newJSONReader returns a reader of r's JSON values; release gives its
// buffer back once the caller is done with it.
func newJSONReader(r io.Reader) *jsonReader {
	br := getReader(r)
	if b, _ := br.Peek(3); bytes.Equal(b, utf8BOM) {
		br.Discard(3)
	}
	pr := &posReader{r: br, solid: -1, lastComma: -1}
	return &jsonReader{pr: pr, dec: json.NewDecoder(pr)}
}

// release gives the reader's buffer back to the pool; the reader must not
// be used after.
func (j *jsonReader) release() {
	if br, ok := j.pr.r.(*bufio.Reader); ok {
		putReader(br)
	}
	j.pr.r, j.dec = nil, nil
}

// The importers' buffers are pooled: each conversion took a 64 KiB reader
// and a 256 KiB writer, which for small inputs cost more than the
// conversion (clearing and collecting them was 97% of what FuzzFormats
// allocated, and made its minimisation of one input take some 40 s).
var (
	readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}
	writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 256<<10) }}
)

// getReader returns a pooled 64 KiB buffered reader of r.
func getReader(r io.Reader) *bufio.Reader {
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

// putReader gives br back to the pool.
func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readerPool.Put(br)
}

// errorAt formats an error at offset off of the input.
func (j *jsonReader) errorAt(off int64, format string, args ...any) error {
	line, col := j.pr.pos(off)
	return lineError(line, col, format, args...)
}

// lineError formats an error at a line and column.
func lineError(line, col int, format string, args ...any) error {
	return &PosError{Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// PosError is an importer's error at a line and column of its input: what
// the input holds there is not what the format has (a value of another
// type, a key the format does not allow, a field missing).
type PosError struct {
	Line, Column int
	Msg          string
}

func (e *PosError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// decodeError turns an error of the decoder into one naming the position:
// syntax errors carry their offset; a truncated input ends at its length.
func (j *jsonReader) decodeError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the bytes read up to and including the bad one.
		return j.errorAt(se.Offset-1, "%s", strings.TrimPrefix(se.Error(), "json: "))
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return j.errorAt(j.pr.n, "the input ends inside a JSON value")
	}
	if errors.Is(err, errItemTooLarge) {
		return j.errorAt(j.pr.mark, "a JSON value over %d bytes, the longest line fsmine reads", j.pr.limit)
	}
	return err
}

// next marks where the next item starts, when items are streamed: past
// the white space the decoder holds, so that an item over the limit is
// reported at its own line.
func (j *jsonReader) next() {
	if !j.stream {
		return
	}
	off := j.dec.InputOffset()
	if j.peek == nil {
		j.peek = make([]byte, 512)
	}
	n, _ := io.ReadFull(j.dec.Buffered(), j.peek)
	k := len(bytes.TrimLeft(j.peek[:n], " \t\r\n,"))
	if k > 0 {
		off += int64(n - k)
	}
	j.pr.forget(off)
}

// unmarshal decodes raw (found at offset at) into v, naming the position
// and the field of a type mismatch.
func (j *jsonReader) unmarshal(raw []byte, at int64, v any) error {
	err := json.Unmarshal(raw, v)
	if err == nil {
		if err := j.badText(raw, at); err != nil {
			return err
		}
		// The decoder kept the last of a key given twice, and matches a
		// field's name in any case ("name", "Name"): which value holds
		// would be up to the reader.
		key, off, twice, folded := jsondup.Repeats(raw)
		if twice {
			return j.errorAt(at+int64(off), "the key %s is given twice", strconv.Quote(key))
		}
		if folded {
			if err := jsondup.ExactKeys(raw, v); err != nil {
				return j.errorAt(at, "%v (a decoder takes either)", err)
			}
		}
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "value"
		}
		// Offset is past the value (a scalar) or its first byte (an
		// object or array): name the byte before it.
		return j.errorAt(at+max(te.Offset-1, 0), "%s is a JSON %s, want %s", field, te.Value, jsonTypeName(te.Type.String()))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return j.errorAt(at+max(se.Offset-1, 0), "%s", strings.TrimPrefix(se.Error(), "json: "))
	}
	return j.errorAt(at, "%v", err)
}

// badText refuses raw (found at offset at), a value the decoder has read,
// when a string of it holds bytes that are not UTF-8 or a \u escape of
// half a UTF-16 surrogate pair, naming the position: the decoder makes
// either U+FFFD, so that "caf\xe9" and "caf\xe8" in Latin-1, or
// "s\ud800" and "s\udfff", would be one session or node without a word
// (fsmine's own records are refused for it as well; see mine/jsonscan.go).
// Every string of raw is looked at, read or not, as keys given twice are:
// what a string becomes is the importer's to say. A value within the span
// already found clean (see items) is not looked at again.
func (j *jsonReader) badText(raw []byte, at int64) error {
	if at >= j.clean[0] && at+int64(len(raw)) <= j.clean[1] {
		return nil
	}
	if off, what, bad := jsondup.BadText(raw); bad {
		return j.errorAt(at+int64(off), "a string holds %s", what)
	}
	j.clean = [2]int64{at, at + int64(len(raw))}
	return nil
}

// item calls fn with an item of the input found at offset at, once its
// strings are known to be as written (see badText and innerText); with
// skipBadText, an item that holds one that is not is kept in skipped and
// fn is not called.
func (j *jsonReader) item(fn func(raw json.RawMessage, at int64) error, raw json.RawMessage, at int64) error {
	var off int
	var reason string
	if err := j.badText(raw, at); err != nil {
		if !j.skipBadText {
			return err
		}
		var what string
		off, what, _ = jsondup.BadText(raw)
		reason = "a string holds " + what
	} else if j.innerText != nil {
		off, reason = j.innerText(raw)
	}
	switch {
	case reason == "":
		return fn(raw, at)
	case !j.skipBadText:
		return j.errorAt(at+int64(off), "%s", reason)
	}
	line, _ := j.pr.pos(at + int64(off))
	j.skipped = append(j.skipped, skippedItem{line, reason})
	return nil
}

// writeSkipped writes a note of each item items skipped (see
// skipBadText) to rw.
func (j *jsonReader) writeSkipped(rw *recordWriter) error {
	for _, s := range j.skipped {
		if err := writeNote(rw, true, s.line, "", s.reason); err != nil {
			return err
		}
	}
	return nil
}

// jsonTypeName names a Go type of a decoding target as JSON would.
func jsonTypeName(t string) string {
	switch {
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	}
	return "an object"
}

// startsArray reports whether the input starts with a JSON array (after
// white space, looked at without consuming it, so that offsets stay those
// of the input; as far as 64 KiB).
func (j *jsonReader) startsArray() bool {
	head, _ := j.pr.r.(*bufio.Reader).Peek(64 << 10)
	t := bytes.TrimLeft(head, " \t\r\n")
	return len(t) > 0 && t[0] == '['
}

// items calls fn with each item of the input and its offset: each
// top-level value, or each element of a top-level array.
func (j *jsonReader) items(fn func(raw json.RawMessage, at int64) error) error {
	// A top-level array is read element by element; anything else as a
	// stream of values.
	if j.startsArray() {
		j.pr.sep = true
		if _, err := j.dec.Token(); err != nil {
			return j.decodeError(err)
		}
		j.next()
		for j.dec.More() {
			j.next()
			var raw json.RawMessage
			if err := j.dec.Decode(&raw); err != nil {
				return j.decodeError(err)
			}
			if err := j.item(fn, raw, j.dec.InputOffset()-int64(len(raw))); err != nil {
				return err
			}
			// Done with the element: the space and comma More reads past
			// count for none.
			j.next()
		}
		j.next()
		if _, err := j.dec.Token(); err != nil {
			return j.decodeError(err)
		}
		return j.spaceToEnd()
	}
	for {
		j.next()
		var raw json.RawMessage
		err := j.dec.Decode(&raw)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return j.decodeError(err)
		}
		if err := j.item(fn, raw, j.dec.InputOffset()-int64(len(raw))); err != nil {
			return err
		}
	}
}

// spaceToEnd reads what follows a top-level array, which must be white
// space, past the decoder (which would hold all of it) through a buffer of
// its own, so that any amount of it is taken in constant memory.
func (j *jsonReader) spaceToEnd() error {
	j.pr.sep, j.pr.limit = false, 0
	off := j.dec.InputOffset()
	rest := io.MultiReader(j.dec.Buffered(), j.pr)
	buf := make([]byte, 4096)
	for {
		n, err := rest.Read(buf)
		if i := bytes.IndexFunc(buf[:n], func(r rune) bool { return !strings.ContainsRune(" \t\r\n", r) }); i >= 0 {
			return j.errorAt(off+int64(i), "more input after the top-level array")
		}
		off += int64(n)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// elements calls fn with each element of the JSON array raw (found at
// offset at).
func (j *jsonReader) elements(raw json.RawMessage, at int64, fn func(raw json.RawMessage, at int64) error) error {
	if jsonKind(raw) != '[' {
		return j.errorAt(at, "want an array, found %s", jsonKindName(jsonKind(raw)))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return j.errorAt(at, "%v", err)
	}
	for dec.More() {
		var el json.RawMessage
		if err := dec.Decode(&el); err != nil {
			return j.errorAt(at+dec.InputOffset(), "%v", err)
		}
		if err := fn(el, at+dec.InputOffset()-int64(len(el))); err != nil {
			return err
		}
	}
	return nil
}

// jsonKind is the kind of the JSON value raw starts with: '{', '[', '"',
// 'n' (null), 't'/'f', or '0' for a number; 0 when raw is empty.
func jsonKind(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	switch c := raw[0]; c {
	case '{', '[', '"', 'n', 't', 'f':
		return c
	}
	return '0'
}

// jsonKindName names a jsonKind for messages.
func jsonKindName(k byte) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '0':
		return "a number"
	}
	return "nothing"
}

// jsonText returns a scalar JSON value as text: a string's contents, a
// number or boolean as written; "" for null, absent, objects and arrays.
func jsonText(raw []byte) string {
	switch jsonKind(raw) {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case '0', 't', 'f':
		return string(bytes.TrimSpace(raw))
	}
	return ""
}

// parseTimeText reads a time as mine reads the ts field; ok is false for
// text that is not a time.
func parseTimeText(s string) (int64, bool) {
	t, err := timeparse.Parse(s)
	return t, err == nil
}

// jsonTime reads a time given as RFC 3339 text (zone-less is UTC) or as a
// Unix time number (see timeparse.Number); ok is false for anything else,
// null and absence included.
func jsonTime(raw json.RawMessage) (int64, bool) {
	switch jsonKind(raw) {
	case '"', '0':
		return parseTimeText(jsonText(raw))
	}
	return 0, false
}

// appendTime appends Unix nanoseconds as RFC 3339 UTC with nanoseconds.
func appendTime(b []byte, ns int64) []byte {
	return time.Unix(0, ns).UTC().AppendFormat(b, time.RFC3339Nano)
}

// jsonObject builds one JSON object on a single line. Fields are written in
// the order the calls make; values are escaped as JSON requires.
type jsonObject struct {
	b     []byte
	comma []bool // per open object: a field has been written
}

func (o *jsonObject) reset() {
	o.b = append(o.b[:0], '{')
	o.comma = append(o.comma[:0], false)
}

func (o *jsonObject) key(k string) {
	top := len(o.comma) - 1
	if o.comma[top] {
		o.b = append(o.b, ',')
	}
	o.comma[top] = true
	o.b = appendJSONString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *jsonObject) str(k, v string) {
	o.key(k)
	o.b = appendJSONString(o.b, v)
}

// strNonEmpty writes a string field only when v is not empty.
func (o *jsonObject) strNonEmpty(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

func (o *jsonObject) int(k string, v int64) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
}

// num writes a finite number; NaN and infinities become strings, as JSON
// has no numbers for them.
func (o *jsonObject) num(k string, v float64) {
	o.key(k)
	o.b = appendJSONNumber(o.b, v)
}

func appendJSONNumber(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return appendJSONString(b, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

//lint:ignore U1000 a helper of the importers (format_*.go), kept for those being written
func (o *jsonObject) boolean(k string, v bool) {
	o.key(k)
	o.b = strconv.AppendBool(o.b, v)
}

func (o *jsonObject) time(k string, ns int64) {
	o.key(k)
	o.b = append(o.b, '"')
	o.b = appendTime(o.b, ns)
	o.b = append(o.b, '"')
}

// span writes a span's start as the record's ts and its length as
// duration_ms, when the span has them (an end before the start is left out).
func (o *jsonObject) span(start, end int64, hasStart, hasEnd bool) {
	if !hasStart {
		return
	}
	o.time(FieldTime, start)
	if hasEnd && end >= start {
		o.num(FieldDuration, float64(end-start)/1e6)
	}
}

// raw writes a JSON value read from the input, compacted onto one line;
// absent and null values are left out.
func (o *jsonObject) raw(k string, v []byte) {
	if kind := jsonKind(v); kind == 0 || kind == 'n' {
		return
	}
	o.key(k)
	o.b = appendCompact(o.b, v)
}

func appendCompact(b, v []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		// Not valid JSON (cannot happen for values from the decoder):
		// keep it as text.
		return appendJSONString(b, string(v))
	}
	return append(b, buf.Bytes()...)
}

func (o *jsonObject) open(k string) {
	o.key(k)
	o.b = append(o.b, '{')
	o.comma = append(o.comma, false)
}

func (o *jsonObject) close() {
	o.b = append(o.b, '}')
	o.comma = o.comma[:len(o.comma)-1]
}

// bytes ends the object and returns its text (valid until the next reset).
func (o *jsonObject) bytes() []byte {
	for len(o.comma) > 0 {
		o.close()
	}
	return o.b
}

// appendJSONString appends s as a JSON string, as the JSON library writes
// it with HTML escaping off (see automaton.AppendJSONString).
//
// Bytes that are not UTF-8 (a Latin-1 export) are copied as they are, not
// made U+FFFD: the record's reader then skips the record, naming its line
// and field ("node is not valid UTF-8"), where a U+FFFD would merge "café"
// and "cafè" in Latin-1 into one name without a word.
func appendJSONString(b []byte, s string) []byte {
	if utf8.ValidString(s) {
		return automaton.AppendJSONString(b, s, false)
	}
	b = append(b, '"')
	for len(s) > 0 {
		i := 0
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			i += size
		}
		if i > 0 { // the valid run, escaped, without its quotes
			n := len(b)
			b = automaton.AppendJSONString(b, s[:i], false)
			b = append(b[:n], b[n+1:len(b)-1]...)
		}
		if i < len(s) {
			b = append(b, s[i])
			i++
		}
		s = s[i:]
	}
	return append(b, '"')
}

// recordWriter writes records, one JSON object a line, and can place a
// record on a given line of its output so that the line numbers in mine's
// messages about it are the input's.
type recordWriter struct {
	w    *bufio.Writer
	line int // lines written
}

// newRecordWriter returns a record writer over w with a pooled buffer,
// which release gives back.
func newRecordWriter(w io.Writer) *recordWriter {
	bw := writerPool.Get().(*bufio.Writer)
	bw.Reset(w)
	return &recordWriter{w: bw}
}

// write writes one record.
func (rw *recordWriter) write(rec []byte) error {
	if _, err := rw.w.Write(rec); err != nil {
		return err
	}
	rw.line++
	return rw.w.WriteByte('\n')
}

// alignTo writes empty lines so that the next record is on line (1-based)
// when that line has not been passed; otherwise it does nothing.
func (rw *recordWriter) alignTo(line int) error {
	for rw.line+1 < line {
		if err := rw.w.WriteByte('\n'); err != nil {
			return err
		}
		rw.line++
	}
	return nil
}

// writeAt writes one record as that of input line line: on that line of
// the output when it has not been passed, else on the next with a prefix
// that names line (see RecordAt), as when a line of the input holds
// several events (an XES file written on one line). A line below 1 (not
// known) writes the record as write does.
func (rw *recordWriter) writeAt(line int, rec []byte) error {
	if line < 1 {
		return rw.write(rec)
	}
	if line > rw.line {
		if err := rw.alignTo(line); err != nil {
			return err
		}
		return rw.write(rec)
	}
	b := rw.w.AvailableBuffer()
	b = append(b, 0, 'p')
	b = strconv.AppendInt(b, int64(line), 10)
	b = append(b, 0)
	if _, err := rw.w.Write(b); err != nil {
		return err
	}
	return rw.write(rec)
}

// RecordAt reads a line of an importer's output that writeAt prefixed: the
// record and the input line it names. ok is false for any other line.
func RecordAt(l []byte) (rec []byte, line int, ok bool) {
	if len(l) < 4 || l[0] != 0 || l[1] != 'p' {
		return nil, 0, false
	}
	end := bytes.IndexByte(l[2:], 0)
	if end < 1 {
		return nil, 0, false
	}
	n, err := strconv.Atoi(string(l[2 : 2+end]))
	if err != nil || n < 1 {
		return nil, 0, false
	}
	return l[2+end+1:], n, true
}

func (rw *recordWriter) flush() error { return rw.w.Flush() }

// release gives the buffer back to the pool (callers defer it, so that an
// error that returns before flush does not lose it); the writer must not
// be used after.
func (rw *recordWriter) release() {
	if rw.w != nil {
		rw.w.Reset(nil)
		writerPool.Put(rw.w)
		rw.w = nil
	}
}

// drain reads r to its end, so that the whole input is hashed, and reports
// whether anything but white space was left.
//
//lint:ignore U1000 a helper of the importers (format_*.go), kept for those being written
func drain(r io.Reader) (trailing bool, err error) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if len(bytes.TrimSpace(buf[:n])) > 0 {
			trailing = true
		}
		if err == io.EOF {
			return trailing, nil
		}
		if err != nil {
			return trailing, err
		}
	}
}

// spanItem is a buffered record of a trace format (OTLP, LangSmith,
// Langfuse, OpenAI Agents) whose session may only be known once the whole
// input is read. body is the record without session_id.
type spanItem struct {
	session string // resolved session, "" until resolved
	trace   string
	id      string
	parent  string
	start   int64
	hasTime bool
	order   string // a format's own order key (LangSmith's dotted_order), or ""
	depth   int
	seq     int  // input order
	first   bool // sorts first among the items that start at its start (a handoff)
	body    []byte
	at      int // the input line it was read from (0: none), which its record names
}

// writeSpanItems orders items within each session by their order key when
// every item of the session has one, else by start time (items without one
// last), then by depth in their trace (parents first) and input order, and
// writes them with their session to rw, which notes may already have been
// written to, and flushes it. Records carry their start time as ts, so
// mine orders them the same way; ties keep this order.
func writeSpanItems(rw *recordWriter, items []*spanItem) error {
	// Depth within a trace: number of ancestors present in the input.
	byID := make(map[[2]string]*spanItem, len(items))
	for _, it := range items {
		if it.id != "" {
			byID[[2]string{it.trace, it.id}] = it
		}
	}
	for _, it := range items {
		d := 0
		for p := it.parent; p != "" && d < 1000; d++ {
			par, ok := byID[[2]string{it.trace, p}]
			if !ok {
				break
			}
			p = par.parent
		}
		it.depth = d
	}
	allOrder := map[string]bool{}
	for _, it := range items {
		if _, seen := allOrder[it.session]; !seen {
			allOrder[it.session] = true
		}
		if it.order == "" {
			allOrder[it.session] = false
		}
	}
	slices.SortStableFunc(items, func(a, b *spanItem) int {
		if c := strings.Compare(a.session, b.session); c != 0 {
			return c
		}
		if allOrder[a.session] {
			if c := strings.Compare(a.order, b.order); c != 0 {
				return c
			}
		} else {
			if a.hasTime != b.hasTime {
				if a.hasTime {
					return -1
				}
				return 1
			}
			if a.start != b.start {
				if a.start < b.start {
					return -1
				}
				return 1
			}
			if a.first != b.first {
				if a.first {
					return -1
				}
				return 1
			}
		}
		if a.depth != b.depth {
			return a.depth - b.depth
		}
		return a.seq - b.seq
	})
	var line []byte
	for _, it := range items {
		line = append(line[:0], `{"session_id":`...)
		line = appendJSONString(line, it.session)
		if len(it.body) > 2 {
			line = append(line, ',')
			line = append(line, it.body[1:]...)
		} else {
			line = append(line, '}')
		}
		if err := rw.writeAt(it.at, line); err != nil {
			return err
		}
	}
	return rw.flush()
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// indexRaw returns the offset of sub, a value decoded from raw, within raw
// (0 when absent), for error positions inside a value.
func indexRaw(raw, sub []byte) int {
	if i := bytes.Index(raw, sub); i >= 0 {
		return i
	}
	return 0
}

// rawCursor finds the elements of an array decoded from raw within raw, in
// order: each search starts where the element before it ended, so that
// placing n elements reads raw once, not n times (a tau2 document of 250
// simulations took ten minutes).
type rawCursor struct {
	raw  []byte
	from int
}

// index returns the offset of sub within the cursor's raw, searching from
// the end of the element placed before it (0 when absent).
func (c *rawCursor) index(sub []byte) int {
	i := bytes.Index(c.raw[c.from:], sub)
	if i < 0 {
		return 0
	}
	c.from += i + len(sub)
	return c.from - len(sub)
}

// itemBound gives a decoder that reads an item (a CSV row, an XML token)
// into memory whole at most max bytes past mark, the end of the last item
// read (0: no limit), so that an item too long to import is refused before
// it is held: a CSV field or an XES attribute of 300 MB took 1.8 and 2.0 GB
// before the line bound refused the record it became.
type itemBound struct {
	r       io.Reader
	n, mark int64
	max     int64
}

var errItemTooLong = errors.New("item too long")

// itemSlack is what a decoder may have read past the item it returned
// (encoding/csv's and encoding/xml's buffers are 4 KiB): an item that long
// past the bound is refused here, a shorter one over it by the bound on the
// record it becomes.
const itemSlack = 64 << 10

func (b *itemBound) Read(p []byte) (int, error) {
	if b.max > 0 {
		left := b.mark + b.max + itemSlack - b.n
		if left <= 0 {
			return 0, errItemTooLong
		}
		p = p[:min(int64(len(p)), left)]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}
