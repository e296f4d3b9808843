package mine

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"runtime"
	"sync"
)

// Input is one log to read: a name for messages and the model's source list,
// and a function that opens it. Gzip-compressed input is recognised by its
// magic bytes and read transparently.
type Input struct {
	Name string
	Open func() (io.ReadCloser, error)
	// Format, when set, is this input's format whatever ReadOptions.Format
	// says (a folder, see DirInput, has the format of its files).
	Format string

	// convert, when set, converts what Open gives instead of the format's
	// Convert (a folder, whose files the converter tells apart).
	convert func(r io.Reader, w io.Writer, opt ImportOptions) error
}

// ReadOptions say how records are read and labelled.
type ReadOptions struct {
	// Fields remaps record fields to dotted paths in the input (see
	// ParseFieldMap); nil reads fsmine's own names.
	Fields map[string]string
	// Rules label records; nil makes every record's node its state.
	Rules *Rules
	// Strict turns the first bad line into an error naming file, line and
	// reason; otherwise bad lines are skipped and counted.
	Strict bool
	// Workers is the number of parsing goroutines; 0 means GOMAXPROCS.
	Workers int
	// MaxLine is the longest line accepted, in bytes; 0 means 64 MiB.
	MaxLine int
	// Format is the input format (see Formats); "" or FormatAuto recognises
	// each input's format from its content.
	Format string
	// Import says how the importers read their formats (event order,
	// lifecycle transitions, the XES classifier).
	Import ImportOptions
	// NoHash skips the SHA-256 of each input (Log.Files[i].SHA256 stays
	// empty): for readers that check logs against a model and record no
	// provenance.
	NoHash bool
	// Stream keeps only what Build needs: each session is folded into a
	// tally of distinct paths once Window records of other sessions have
	// passed since its last one, so memory grows with the distinct paths
	// and the sessions open at once, not with the records. The Log it gives
	// has no Sessions and serves Build only. If a folded session has
	// another record later, Read starts over and holds every session (and
	// says so in Log.Reread), so the inputs must open a second time.
	Stream bool
	// Window is how many records a session may sit idle in a streaming
	// read before it is folded; 0 means DefaultWindow.
	Window int
	// Each, in a streaming read, is given each session as it is finished
	// instead of the tally (the Log then serves Build nothing): in no
	// particular order, and the session is the caller's to keep. Should
	// the read start over (see Reread), the sessions come again in the
	// Log's Sessions: a caller that keeps what Each gave must drop it in
	// Reread, or count sessions twice.
	Each func(lg *Log, s *Session)
	// Reread, when set, is called when a streaming read starts over to
	// hold every session, with the reason.
	Reread func(reason string)
	// Progress, when set, is called from the reading goroutine after each
	// chunk with the input's name and the bytes read so far from all
	// inputs, as stored (before decompression and conversion); the last
	// call for an input counts all of its bytes.
	Progress func(input string, bytes int64)
}

// BadLine is a skipped input line and why it was skipped.
type BadLine struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

func (b BadLine) String() string { return fmt.Sprintf("%s:%d: %s", b.File, b.Line, b.Reason) }

// LineError is the error of a strict read: the first bad line.
type LineError struct{ BadLine }

func (e *LineError) Error() string { return e.BadLine.String() }

// maxBadExamples is how many bad lines a Log keeps as examples.
const maxBadExamples = 5

// chunkSize is the size of the runs of lines handed to parsers (a variable so
// that tests can cut small logs into many chunks).
var chunkSize = 1 << 20

type chunk struct {
	seq       int
	file      int
	firstLine int
	data      []byte
	converted bool // data was written by an importer, which may write notes
	recs      []rec
	bad       []BadLine
	leftOut   int
	err       error
}

// DefaultWindow is the Window of a streaming read: 262,144 records, some
// 60 MB of JSONL. Smaller is faster and leaner but starts over on logs
// whose sessions pause longer.
const DefaultWindow = 1 << 18

// Read reads the inputs in order, parses and labels their records in
// parallel, and groups them into sessions. Record positions (for ordering
// sessions without step or time) are the order of inputs and lines.
func Read(inputs []Input, opt ReadOptions) (*Log, error) {
	lg, err := read(inputs, opt)
	var re *errReappeared
	if !opt.Stream || !errors.As(err, &re) {
		return lg, err
	}
	opt.Stream = false
	if opt.Reread != nil {
		opt.Reread(re.Error())
	}
	if lg, err = read(inputs, opt); lg != nil {
		lg.Reread = re.Error()
	}
	return lg, err
}

func read(inputs []Input, opt ReadOptions) (*Log, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	maxLine := opt.MaxLine
	if maxLine <= 0 {
		maxLine = 64 << 20
	}
	// Make sure the options are usable before starting goroutines.
	if _, err := newParser(opt.Fields, opt.Rules); err != nil {
		return nil, err
	}
	if err := opt.Import.Check(); err != nil {
		return nil, err
	}
	lg := newLog(len(inputs))
	lg.Fields, lg.Rules = opt.Fields, opt.Rules
	if opt.Stream {
		window := opt.Window
		if window <= 0 {
			window = DefaultWindow
		}
		lg.stream(window, opt.Each)
	}
	for i, in := range inputs {
		lg.Files[i].Path = in.Name
	}

	todo := make(chan *chunk, workers*2)
	done := make(chan *chunk, workers*2)
	stop := make(chan struct{})
	var readErr error
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _ := newParser(opt.Fields, opt.Rules)
			for c := range todo {
				parseChunk(p, c, inputs[c.file].Name)
				done <- c
			}
		}()
	}
	go func() {
		readErr = readInputs(inputs, lg, opt, maxLine, todo, stop)
		close(todo)
		wg.Wait()
		close(done)
	}()

	// Consume chunks in sequence order so that positions and the first bad
	// lines do not depend on scheduling.
	pending := map[int]*chunk{}
	next := 0
	var firstErr error
	for c := range done {
		pending[c.seq] = c
		for {
			c, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if firstErr != nil {
				continue
			}
			if err := lg.addChunk(c, opt.Strict); err != nil {
				firstErr = err
				close(stop)
			}
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if readErr != nil {
		return nil, readErr
	}
	lg.finish()
	return lg, nil
}

// readInputs cuts each input into chunks of whole lines and sends them to
// the workers. It also hashes each input and counts its lines.
func readInputs(inputs []Input, lg *Log, opt ReadOptions, maxLine int, todo chan<- *chunk, stop <-chan struct{}) error {
	seq := 0
	var total int64
	for i, in := range inputs {
		rc, err := in.Open()
		if err != nil {
			return err
		}
		var h hash.Hash = discardHash{}
		if !opt.NoHash {
			h = sha256.New()
		}
		format := opt.Format
		if in.Format != "" {
			format = in.Format
		}
		// Progress counts the bytes as stored, so that it ends at the
		// file's size whatever the decompression and conversion make of it.
		cr := &countReader{r: rc}
		var f *Format
		f, err = splitLines(cr, h, format, in.convert, opt.importOptions(), maxLine, func(first int, data []byte, converted bool) bool {
			select {
			case todo <- &chunk{seq: seq, file: i, firstLine: first, data: data, converted: converted}:
				seq++
				if opt.Progress != nil {
					opt.Progress(in.Name, total+cr.n)
				}
				return true
			case <-stop:
				return false
			}
		})
		rc.Close()
		if err != nil {
			return fmt.Errorf("reading %s: %w", in.Name, err)
		}
		total += cr.n
		if opt.Progress != nil {
			opt.Progress(in.Name, total)
		}
		if !opt.NoHash {
			lg.Files[i].SHA256 = hex.EncodeToString(h.Sum(nil))
		}
		lg.Files[i].Format = f.Name
	}
	return nil
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// errLineTooLong reports a line longer than the limit.
var errLineTooLong = errors.New("line too long")

// splitLines reads r (gunzipping it if it starts with the gzip magic), feeds
// every byte to h, converts it to JSONL records if it is in another format,
// and calls emit with runs of whole lines (the last one may lack its
// newline), the 1-based number of the first, and whether an importer wrote
// them. emit returning false stops the read. convert, when set, converts
// instead of the format's Convert. It returns the format it read.
func splitLines(r io.Reader, h hash.Hash, format string, convert func(io.Reader, io.Writer, ImportOptions) error, iopt ImportOptions, maxLine int, emit func(first int, data []byte, converted bool) bool) (*Format, error) {
	cr := &countReader{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				return nil, &TruncatedError{Compressed: cr.n}
			}
			return nil, err
		}
		defer gz.Close()
		r = &gzipReader{gz: gz, raw: cr}
	} else {
		r = br
	}
	hr := bufio.NewReaderSize(io.TeeReader(r, h), 64<<10)
	if bom, _ := hr.Peek(3); bytes.Equal(bom, []byte("\xef\xbb\xbf")) {
		hr.Discard(3) // a UTF-8 byte-order mark is no part of the first record
	}
	head, _ := hr.Peek(64 << 10)
	f, err := pickFormat(format, head)
	if err != nil {
		return nil, err
	}
	r = hr
	if convert == nil {
		convert = f.Convert
	}
	if convert != nil {
		pr, pw := io.Pipe()
		converted := make(chan struct{})
		go func() {
			defer close(converted)
			pw.CloseWithError(convert(hr, pw, iopt))
		}()
		// Wait for the converter on every return, so that it no longer
		// reads (and hashes) the input once the caller takes the hash.
		defer func() { pr.Close(); <-converted }()
		r = pr
	}
	return f, splitLinesFrom(r, maxLine, func(first int, data []byte) bool { return emit(first, data, convert != nil) })
}

func splitLinesFrom(r io.Reader, maxLine int, emit func(first int, data []byte) bool) error {
	line := 1
	var carry []byte
	for {
		buf := getChunkBuf(len(carry) + chunkSize/2)[:len(carry)]
		copy(buf, carry)
		n, err := io.ReadFull(r, buf[len(carry):cap(buf)])
		buf = buf[:len(carry)+n]
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return err
		}
		if eof && len(buf) == 0 {
			return nil
		}
		cut := len(buf)
		if !eof {
			cut = bytes.LastIndexByte(buf, '\n') + 1
		}
		if cut == 0 {
			// No newline in the whole buffer: a long line; keep reading.
			if len(buf) > maxLine {
				return fmt.Errorf("line %d: %w (over %d bytes)", line, errLineTooLong, maxLine)
			}
			carry = buf
			continue
		}
		data := buf[:cut]
		carry = append([]byte(nil), buf[cut:]...)
		if len(data) > 0 {
			if !emit(line, data) {
				return nil
			}
			line += bytes.Count(data, []byte{'\n'})
		}
		if eof {
			return nil
		}
	}
}

// TruncatedError reports a compressed input that ends before its end of
// stream: a cut or partly copied file, whose records would otherwise be
// taken as the whole log.
type TruncatedError struct {
	// Compressed is the size of the input as read, in bytes: where it
	// ends. Decompressed is how many bytes of data it gave before that.
	Compressed, Decompressed int64
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("gzip data truncated at byte %d (after %d bytes of data)", e.Compressed, e.Decompressed)
}

// gzipReader reads a gzip stream, turning its io.ErrUnexpectedEOF (the
// compressed data ends early) into a TruncatedError, which readers further
// on cannot mistake for the short last read of a whole input.
type gzipReader struct {
	gz  *gzip.Reader
	raw *countReader
	n   int64
}

func (g *gzipReader) Read(p []byte) (int, error) {
	n, err := g.gz.Read(p)
	g.n += int64(n)
	if err == io.ErrUnexpectedEOF {
		err = &TruncatedError{Compressed: g.raw.n, Decompressed: g.n}
	}
	return n, err
}

// recordBytes is the size of a line below which parseChunk stops reserving
// a record a line: shorter than any record of a real log.
const recordBytes = 32

// parseChunk parses every line of c into c.recs, noting bad lines.
func parseChunk(p *parser, c *chunk, name string) {
	data := c.data
	line := c.firstLine
	// Room for a record a line, but no more than one per recordBytes:
	// blank lines hold no record, and a chunk of newlines must not
	// allocate a record for each (2 GB of them took 6 GB). Shorter records
	// grow the slice as they come.
	c.recs = make([]rec, 0, min(bytes.Count(data, []byte{'\n'})+1, len(data)/recordBytes+1))
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		var l []byte
		if i < 0 {
			l, data = data, nil
		} else {
			l, data = data[:i], data[i+1:]
		}
		if len(bytes.TrimSpace(l)) == 0 {
			line++
			continue
		}
		if c.converted && l[0] == 0 {
			// An importer's note (see writeNote): an item it skipped, or
			// one it left out on purpose.
			n := parseNote(l, name, line)
			if n.skip {
				c.bad = append(c.bad, n.BadLine)
				c.recs = append(c.recs, rec{fileLine: -max(n.Line, 1)})
			} else {
				c.leftOut++
			}
			line++
			continue
		}
		var r rec
		if err := p.parse(l, &r); err != nil {
			if errors.Is(err, errUnmatched) {
				c.err = &LineError{BadLine{name, line, err.Error()}}
				c.data = nil
				return
			}
			c.bad = append(c.bad, BadLine{name, line, err.Error()})
			r = rec{fileLine: -line}
		} else {
			r.fileLine = line
		}
		c.recs = append(c.recs, r)
		line++
	}
	putChunkBuf(c.data)
	c.data = nil
}

// discardHash is the hash of a read that takes none.
type discardHash struct{}

func (discardHash) Write(p []byte) (int, error) { return len(p), nil }
func (discardHash) Sum(b []byte) []byte         { return b }
func (discardHash) Reset()                      {}
func (discardHash) Size() int                   { return 0 }
func (discardHash) BlockSize() int              { return 1 }

// chunkBufs recycles read buffers: a log is read through a few of them
// instead of allocating (and zeroing) a fresh megabyte per chunk.
var chunkBufs sync.Pool

func getChunkBuf(need int) []byte {
	if b, ok := chunkBufs.Get().(*[]byte); ok && cap(*b) >= need {
		return (*b)[:0]
	}
	return make([]byte, 0, max(chunkSize, need))
}

func putChunkBuf(b []byte) {
	if cap(b) == chunkSize {
		b = b[:0]
		chunkBufs.Put(&b)
	}
}
