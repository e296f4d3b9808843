package mine

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/fsmine/fsmine/mine/formats"
	"hash"
	"hash/maphash"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// Input is one log to read: a name for messages and the model's source list,
// and a function that opens it (see formats.Input).
type Input = formats.Input

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
	// Half as many shards (at least one) group their records into
	// sessions. The result does not depend on it.
	Workers int
	// shards, when not 0, is the number of shards instead (for tests).
	shards int
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
	// particular order, from the read's goroutines but one call at a time,
	// and the session is the caller's to keep. Should
	// the read start over (see Reread), the sessions come again in the
	// Log's Sessions: a caller that keeps what Each gave must drop it in
	// Reread, or count sessions twice.
	Each func(lg *Log, s *Session)
	// Reread, when set, is called when a streaming read starts over to
	// hold every session, with the reason.
	Reread func(reason string)
	// Session, when not empty, keeps the records of the session with that
	// id alone, for a reader that wants one session (fsmine replay): the
	// Log holds that session (or its id in EmptiedIDs when the label rules
	// drop all its records) or none, so that memory grows with the
	// session, not the log. Records, Skipped, LeftOut, Bad and the files'
	// counts still cover every record read, and a strict read still fails
	// on any bad line; what forming visits counts (Duplicates, Dropped,
	// Emptied, Folded, Detours, StepGaps) is the session's alone.
	// SessionValues and ReadArgSessions, given these options, read that
	// session alone too.
	Session string
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
// that tests can cut small logs into many chunks). At 256 KiB the fifteen or
// so chunks in flight (queued, parsing, with the shards) hold a few MB: 1 MiB
// chunks took 15 to 20 MB more peak RSS at the same speed.
var chunkSize = 1 << 18

type chunk struct {
	seq       int
	file      int
	firstLine int
	data      []byte
	converted bool  // data was written by an importer, which may write notes
	long      []int // lines of data longer than maxLine, skipped (see splitLinesFrom)
	maxLine   int
	recs      []rec
	bad       []BadLine
	warnings  []BadLine
	leftOut   int
	err       error

	// Filled by the worker (indexChunk): the usable and skipped records,
	// the distinct labels and events in order of first use, and the
	// indexes of each shard's records.
	good, skipped int
	names         []string
	byShard       [][]shardRec
	// Filled by Log.addChunk: the position of the first usable record and
	// the name ids of names.
	pos0 uint32
	ids  []uint32
	// dataRefs counts the holders of data (the read, from parsing until
	// the shards have taken the records, whose strings point into it; and
	// the provenance hash); the last gives the buffer back (see
	// releaseData).
	dataRefs atomic.Int32
	// shardsLeft counts the shards yet to take the chunk; the last gives
	// its records back (see putRecs).
	shardsLeft atomic.Int32
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
	maxLine := opt.maxLine()
	// Make sure the options are usable before starting goroutines.
	if _, err := newParser(opt.Fields, opt.Rules); err != nil {
		return nil, err
	}
	if err := opt.Import.Check(); err != nil {
		return nil, err
	}
	lg := newLog(len(inputs))
	lg.Fields, lg.Rules, lg.Import = opt.Fields, opt.Rules, ImportParams(opt.Import)
	if !opt.Stream || opt.Each != nil {
		// Someone may name records by their input line (check's
		// deviations); Build's tally names none.
		lg.inputLines = &inputLines{}
	}
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
	// Half as many shards as workers: each shard keeps a prefix tree and
	// histograms of its own, which cost more CPU and memory than a shard
	// saves on 2 cores (1M events: 5% less CPU and 6 MB less peak RSS with
	// one shard than with two). What the shards give does not depend on
	// their number (see shard).
	nshards := max(1, workers/2)
	if opt.shards > 0 {
		nshards = opt.shards
	}
	lg.newShards(nshards)

	todo := make(chan *chunk, workers)
	done := make(chan *chunk, workers)
	stop := make(chan struct{})
	var readErr error
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _ := newParser(opt.Fields, opt.Rules)
			ix := map[string]uint32{}
			for c := range todo {
				parseChunk(p, c, inputs[c.file].Name)
				indexChunk(c, ix, lg.seed, nshards, opt.Session)
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

	// The shards take every chunk in sequence order, each grouping the
	// records of its sessions.
	shardIn, shardWG, shardFailed := lg.startShards()

	// Consume chunks in sequence order so that positions and the first bad
	// lines do not depend on scheduling.
	pending := map[int]*chunk{}
	next := 0
	var firstErr error
	var errPos uint32 // the position of the first record after firstErr
	stopped := false
	for c := range done {
		pending[c.seq] = c
		for {
			c, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if stopped {
				c.releaseData(c.data)
				continue
			}
			if shardFailed.Load() {
				stopped = true
				close(stop)
				c.releaseData(c.data)
				continue
			}
			if err := lg.addChunk(c, opt.Strict); err != nil {
				firstErr, errPos, stopped = err, lg.nextPos, true
				close(stop)
				c.releaseData(c.data)
				continue
			}
			c.shardsLeft.Store(int32(nshards))
			for k := range shardIn {
				shardIn[k] <- c
			}
		}
	}
	for k := range shardIn {
		close(shardIn[k])
	}
	shardWG.Wait()
	// The error a single reader would have met first: a shard's, at a
	// record before the chunk that failed, or the chunk's.
	for _, sh := range lg.shards {
		if sh.err != nil && (firstErr == nil || sh.errPos < errPos) {
			firstErr, errPos = sh.err, sh.errPos
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

// startShards starts one goroutine per shard that adds the chunks sent on
// its channel, in order, and lets a chunk's buffers go once every shard has
// it. failed is set when a shard fails; wg is done once the channels are
// closed and drained.
func (lg *Log) startShards() (in []chan *chunk, wg *sync.WaitGroup, failed *atomic.Bool) {
	in = make([]chan *chunk, len(lg.shards))
	wg, failed = &sync.WaitGroup{}, &atomic.Bool{}
	for k, sh := range lg.shards {
		// Room for 8 chunks: the shards are the one stage every record
		// passes in order, and while the scheduler has a shard off its
		// core the workers fill this instead of stopping. With room for
		// one, 1M events built 4-7% slower on 2 cores (5 MB less peak RSS).
		in[k] = make(chan *chunk, 8)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range in[k] {
				if !sh.add(c, k) {
					failed.Store(true)
				}
				if c.shardsLeft.Add(-1) == 0 {
					putRecs(c.recs)
					putShardRecs(c.byShard)
					c.recs, c.byShard = nil, nil
					c.releaseData(c.data)
					c.data = nil
				}
			}
		}()
	}
	return in, wg, failed
}

// indexChunk notes, for the consumer and the shards, a parsed chunk's
// counts, its distinct labels and events (ix is the worker's scratch map),
// each usable record's place and session hash (with seed), and the records
// of each of n shards. When only is not empty, the records of other
// sessions are counted and given their place but go to no shard.
func indexChunk(c *chunk, ix map[string]uint32, seed maphash.Seed, n int, only string) {
	clear(ix)
	c.names = c.names[:0]
	// Labels and events repeat from record to record: a few of the
	// latest, by length and last byte, are looked up without the map.
	var recent [16]struct {
		s   string
		id  uint32
		set bool
	}
	name := func(s string) uint32 {
		var slot uint
		if len(s) > 0 {
			slot = (uint(len(s)) ^ uint(s[len(s)-1])) & 15
		}
		if e := &recent[slot]; e.set && e.s == s {
			return e.id
		}
		id, ok := ix[s]
		if !ok {
			id = uint32(len(c.names))
			ix[s] = id
			c.names = append(c.names, s)
		}
		recent[slot].s, recent[slot].id, recent[slot].set = s, id, true
		return id
	}
	c.byShard = getShardRecs(n)
	for i := range c.recs {
		r := &c.recs[i]
		if r.fileLine < 0 {
			c.skipped++
			continue
		}
		if only != "" && r.session != only {
			c.good++ // its place, so that the positions of the kept records are as in a whole read
			continue
		}
		h := sessionHash(seed, r.session)
		k := shardOf(h, n)
		c.byShard[k] = append(c.byShard[k], shardRec{rec: uint32(i), off: uint32(c.good), label: name(r.label), event: name(r.event), hash: h})
		c.good++
	}
}

// shardRecsPool recycles the per-shard record indexes of chunks, as
// recsPool does their records.
var shardRecsPool sync.Pool

func getShardRecs(n int) [][]shardRec {
	if p, ok := shardRecsPool.Get().(*[][]shardRec); ok && len(*p) == n {
		return *p
	}
	return make([][]shardRec, n)
}

func putShardRecs(bs [][]shardRec) {
	for k := range bs {
		bs[k] = bs[k][:0]
	}
	shardRecsPool.Put(&bs)
}

// shardRec is a usable record of a chunk as its shard takes it: its index
// in the chunk's records, its place among the chunk's usable records, its
// label's and event's indexes into the chunk's names, and the hash of its
// session id.
type shardRec struct {
	rec, off, label, event uint32
	hash                   uint64
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
		var h io.Writer = io.Discard
		var ah *asyncHash
		if !opt.NoHash {
			ah = newAsyncHash(sha256.New())
			h = ah
		}
		format := opt.Format
		if in.Format != "" {
			format = in.Format
		}
		// Progress counts the bytes as stored, so that it ends at the
		// file's size whatever the decompression and conversion make of it.
		cr := &countReader{r: rc}
		var f *Format
		f, err = splitLines(cr, h, format, in.Convert, opt.importOptions(), maxLine, func(first int, data []byte, long []int, converted bool) bool {
			c := &chunk{seq: seq, file: i, firstLine: first, data: data, converted: converted, long: long, maxLine: maxLine}
			c.dataRefs.Store(1)
			if ah != nil && !converted {
				// The lines are the input's bytes: hash them where
				// they are, and let the hash give the buffer back too.
				c.dataRefs.Store(2)
				ah.own(c, data)
			}
			select {
			case todo <- c:
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
		var sum []byte
		if ah != nil {
			sum = ah.finish()
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", in.Name, err)
		}
		total += cr.n
		if opt.Progress != nil {
			opt.Progress(in.Name, total)
		}
		if !opt.NoHash {
			lg.Files[i].SHA256 = hex.EncodeToString(sum)
		}
		lg.Files[i].Format = f.Name
	}
	return nil
}

// switchWriter writes to w, or nowhere while w is nil.
type switchWriter struct{ w io.Writer }

func (s *switchWriter) Write(p []byte) (int, error) {
	if s.w == nil {
		return len(p), nil
	}
	return s.w.Write(p)
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

// maxHead is how far the format of an input is looked for when its first
// JSON value runs past the usual 64 KiB.
const maxHead = 4 << 20

// errLineTooLong reports a line longer than the limit.
var errLineTooLong = errors.New("line too long")

// splitLines reads r (gunzipping it if it starts with the gzip magic), feeds
// h the bytes of a byte-order mark and of input it converts (the caller
// hashes the lines of JSONL input from what emit is given, which are the
// rest of its bytes), converts it to JSONL records if it is in another format,
// and calls emit with runs of whole lines (the last one may lack its
// newline; emit owns them, in a buffer of getChunkBuf's), the 1-based number
// of the first, the numbers of those too long to read (see splitLinesFrom),
// and whether an importer wrote them. emit returning false stops the read. convert, when set, converts
// instead of the format's Convert. It returns the format it read.
func splitLines(r io.Reader, h io.Writer, format string, convert func(io.Reader, io.Writer, ImportOptions) error, iopt ImportOptions, maxLine int, emit func(first int, data []byte, long []int, converted bool) bool) (*Format, error) {
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
		gz.Multistream(false)
		r = &gzipReader{gz: gz, br: br, raw: cr}
	} else {
		r = br
	}
	// h is fed the converter's input as it reads it; lines read without a
	// converter are left for the caller to hash, from the lines emit is
	// given (they are the input's bytes after any byte-order mark).
	tee := &switchWriter{}
	hr := bufio.NewReaderSize(io.TeeReader(r, tee), 64<<10)
	var bom []byte
	if b, _ := hr.Peek(3); bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		bom = []byte("\xef\xbb\xbf")
		hr.Discard(3) // a UTF-8 byte-order mark is no part of the first record
	}
	head, _ := hr.Peek(64 << 10)
	f, err := formats.PickFor(format, head, iopt)
	if err != nil {
		return nil, err
	}
	// A first value longer than the head (a trace whose input is a long
	// prompt) hides the keys that tell its format: read on, as far as
	// maxHead, and pick again, before taking it for records.
	var more []byte
	if convert == nil && f.Name == formats.FormatJSONL && len(head) == 64<<10 && formats.CutShort(head) {
		more = make([]byte, maxHead)
		n, _ := io.ReadFull(hr, more)
		more = more[:n]
		if f, err = formats.PickFor(format, more, iopt); err != nil {
			return nil, err
		}
	}
	r = hr
	if more != nil {
		r = io.MultiReader(bytes.NewReader(more), hr)
	}
	guessed := convert == nil && f.Convert != nil && (format == "" || format == formats.FormatAuto)
	if convert == nil {
		convert = f.Convert
	}
	if _, err := h.Write(bom); err != nil {
		return nil, err
	}
	if convert != nil {
		// What was read past the head and what hr holds were read before
		// the tee was on.
		buffered, _ := hr.Peek(hr.Buffered())
		for _, b := range [][]byte{more, buffered} {
			if _, err := h.Write(b); err != nil {
				return nil, err
			}
		}
		tee.w = h
	}
	if convert != nil {
		in := r
		pr, pw := io.Pipe()
		converted := make(chan struct{})
		go func() {
			defer close(converted)
			pw.CloseWithError(convert(in, pw, iopt))
		}()
		// Wait for the converter on every return, so that it no longer
		// reads (and hashes) the input once the caller takes the hash.
		defer func() { pr.Close(); <-converted }()
		r = pr
	}
	// Of JSONL, a line too long is skipped and its bytes hashed as the
	// others (emit is given its newline alone); an importer's output stops
	// at the first (the importer bounds its items by maxLine, too).
	skipped := h
	if convert != nil {
		skipped = nil
	}
	err = splitLinesFrom(r, maxLine, skipped, func(first int, data []byte, long []int) bool { return emit(first, data, long, convert != nil) })
	var pe *formats.PosError
	if guessed && errors.As(err, &pe) && pe.Line == 1 {
		// The format was guessed from the head, and its reader found the
		// first line not of it: the guess is as likely wrong as the
		// input.
		err = fmt.Errorf("%w (read as %s, which its start looked like; name its format with --from if it is another)", err, f.Name)
	}
	return f, err
}

// splitLinesFrom calls emit with runs of whole lines of r (see splitLines)
// and the numbers of those among them longer than maxLine bytes. Such a
// line is not read whole: with skipped set, lines are read into buffers of
// at most maxLine+1 bytes, and a line that fills one is read through and
// given to skipped, and emit is given its newline alone in its place (or
// nothing, at the end of r) with its number; emit's runs and skipped's
// bytes together are r's, in order. With skipped nil, a line found longer
// than maxLine before its end is an error instead.
func splitLinesFrom(r io.Reader, maxLine int, skipped io.Writer, emit func(first int, data []byte, long []int) bool) error {
	line := 1
	var carry []byte
	for {
		// The carry is the start of a line (no newline in it). Room for as
		// much again, at least half a chunk: a long line grows the buffer
		// geometrically, so that reading it copies each byte a bounded
		// number of times (growing by half a chunk copied a 64 MiB line
		// 512 times over).
		size := len(carry) + max(chunkSize/2, len(carry))
		if skipped != nil {
			size = min(size, maxLine+1) // more than the carry, at most maxLine
		}
		buf := getChunkBuf(size)[:len(carry)]
		copy(buf, carry)
		end := cap(buf)
		if skipped != nil {
			end = min(end, maxLine+1)
		}
		n, err := io.ReadFull(r, buf[len(carry):end])
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
			// Only the new bytes can hold a newline.
			cut = 0
			if i := bytes.LastIndexByte(buf[len(carry):], '\n'); i >= 0 {
				cut = len(carry) + i + 1
			}
		}
		if cut == 0 {
			// No newline in the whole buffer: a long line; keep reading.
			if len(buf) > maxLine {
				if skipped == nil {
					return fmt.Errorf("line %d: %w (over %d bytes)", line, errLineTooLong, maxLine)
				}
				rest, err := skipLine(r, buf, skipped)
				if err != nil {
					return err
				}
				putChunkBuf(buf)
				// Its newline stands for it; what came after is read next.
				var nl []byte
				if len(rest) > 0 {
					nl, r = []byte{'\n'}, io.MultiReader(bytes.NewReader(rest[1:]), r)
				}
				if !emit(line, nl, []int{line}) {
					return nil
				}
				line++
				carry = nil
				continue
			}
			carry = buf
			continue
		}
		data := buf[:cut]
		carry = append([]byte(nil), buf[cut:]...)
		if len(data) > 0 {
			// emit owns data once called (it may give the buffer back).
			lines := bytes.Count(data, []byte{'\n'})
			if !emit(line, data, nil) {
				return nil
			}
			line += lines
		}
		if eof {
			return nil
		}
	}
}

// skipLine gives w the start of a line, head, and the rest of the line
// read from r up to its newline, a chunk at a time, and returns what it
// read after: from the newline on, or nothing at the end of r.
func skipLine(r io.Reader, head []byte, w io.Writer) ([]byte, error) {
	for len(head) > 0 { // a chunk at a time, as the hash copies what it is given
		n := min(len(head), chunkSize)
		if _, err := w.Write(head[:n]); err != nil {
			return nil, err
		}
		head = head[n:]
	}
	buf := getChunkBuf(chunkSize)[:chunkSize]
	defer putChunkBuf(buf)
	for {
		n, err := r.Read(buf)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			if _, err := w.Write(buf[:i]); err != nil {
				return nil, err
			}
			return append([]byte(nil), buf[i:n]...), nil
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return nil, err
		}
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, err
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

// TrailingDataError reports a gzip input whose last member is followed
// by bytes that do not start another: a file appended to or padded after
// it was compressed, whose end is not the log's.
type TrailingDataError struct {
	// Offset is where the bytes after the gzip data start: the size of
	// the gzip data.
	Offset int64
}

func (e *TrailingDataError) Error() string {
	return fmt.Sprintf("trailing data after the gzip stream at byte %d", e.Offset)
}

// gzipReader reads a gzip stream of one or more members (concatenated
// gzip files are one stream, as gzip(1) reads them), turning its
// io.ErrUnexpectedEOF (the compressed data ends early) into a
// TruncatedError, which readers further on cannot mistake for the short
// last read of a whole input, and bytes after the last member into a
// TrailingDataError. gz reads one member at a time (Multistream(false))
// from br, which it reads no further than the member's end: the reader
// of gzip's multistream mode takes the bytes after the last member for
// the header of another and reports them as truncated data or an invalid
// header.
type gzipReader struct {
	gz  *gzip.Reader
	br  *bufio.Reader
	raw *countReader
	n   int64
}

func (g *gzipReader) Read(p []byte) (int, error) {
	for {
		n, err := g.gz.Read(p)
		g.n += int64(n)
		if err == io.EOF {
			if err = g.next(); err == nil && n == 0 {
				continue
			}
		}
		if err == io.ErrUnexpectedEOF {
			err = &TruncatedError{Compressed: g.raw.n, Decompressed: g.n}
		}
		return n, err
	}
}

// next starts the member after the one gz has read to its end; it
// returns io.EOF at the end of the input.
func (g *gzipReader) next() error {
	b, err := g.br.Peek(2)
	if len(b) == 0 {
		return err
	}
	if b[0] != 0x1f || (len(b) == 2 && b[1] != 0x8b) {
		return &TrailingDataError{Offset: g.raw.n - int64(g.br.Buffered())}
	}
	// The start of a member (one byte of it is a member cut short).
	if err := g.gz.Reset(g.br); err != nil {
		return err
	}
	g.gz.Multistream(false)
	return nil
}

// recordBytes is the size of a line below which parseChunk stops reserving
// a record a line: shorter than any record of a real log.
const recordBytes = 32

// parseChunk parses every line of c into c.recs, noting bad lines. The
// records' strings point into c.data, which the read holds until the
// shards have taken them (or the chunk is dropped).
func parseChunk(p *parser, c *chunk, name string) {
	data := c.data
	p.data = c.data
	defer func() { p.data = nil }()
	line := c.firstLine
	// Room for a record a line, but no more than one per recordBytes:
	// blank lines hold no record, and a chunk of newlines must not
	// allocate a record for each (2 GB of them took 6 GB). Shorter records
	// grow the slice as they come.
	c.recs = getRecs(min(bytes.Count(data, []byte{'\n'})+1, len(data)/recordBytes+1))
	long := c.long
	tooLong := func(line int) {
		c.bad = append(c.bad, BadLine{name, line, fmt.Sprintf("%v (over %d bytes)", errLineTooLong, c.maxLine)})
		c.recs = append(c.recs, rec{fileLine: -line})
	}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		var l []byte
		if i < 0 {
			l, data = data, nil
		} else {
			l, data = data[:i], data[i+1:]
		}
		if len(long) > 0 && long[0] == line {
			long = long[1:]
			tooLong(line)
			line++
			continue
		}
		if len(bytes.TrimSpace(l)) == 0 {
			line++
			continue
		}
		// at is the input's line of the record, which messages name;
		// line, the converted line, stays what identifies the record
		// (visits, and the reads again that find their records, key on
		// it), as several records may share an input line.
		at := line
		if c.converted && l[0] == 0 {
			if r, n, ok := formats.RecordAt(l); ok {
				// A record placed after its input line.
				l, at = r, n
			} else {
				// An importer's note (see writeNote): an item it skipped,
				// or one it left out on purpose.
				n := formats.ParseNote(l, name, line)
				switch {
				case n.Warn:
					c.warnings = append(c.warnings, BadLine{n.File, n.Line, n.Reason})
				case n.Skip:
					c.bad = append(c.bad, BadLine{n.File, n.Line, n.Reason})
					c.recs = append(c.recs, rec{fileLine: -max(n.Line, 1)})
				default:
					c.leftOut++
				}
				line++
				continue
			}
		}
		var r rec
		if err := p.parse(l, &r); err != nil {
			if errors.Is(err, errUnmatched) {
				c.err = &LineError{BadLine{name, at, err.Error()}}
				return
			}
			c.bad = append(c.bad, BadLine{name, at, err.Error()})
			r = rec{fileLine: -line}
		} else {
			r.fileLine, r.at = line, at
		}
		c.recs = append(c.recs, r)
		line++
	}
	for _, n := range long {
		tooLong(n) // a last line without its newline, skipped unread
	}
}

// chunkBufs recycles read buffers: a log is read through a few of them
// instead of allocating (and zeroing) a fresh megabyte per chunk.
var chunkBufs sync.Pool

func getChunkBuf(need int) []byte {
	if b, ok := chunkBufs.Get().(*[]byte); ok && cap(*b) >= need {
		return (*b)[:0]
	}
	return make([]byte, 0, max(chunkSize, need))
}

// releaseData gives up one hold of the chunk's data buffer, b.
func (c *chunk) releaseData(b []byte) {
	if c.dataRefs.Add(-1) == 0 {
		putChunkBuf(b)
	}
}

func putChunkBuf(b []byte) {
	if cap(b) == chunkSize {
		b = b[:0]
		chunkBufs.Put(&b)
	}
}

// recsPool recycles the record slices of chunks once every shard has
// taken their records.
var recsPool sync.Pool

func getRecs(n int) []rec {
	if p, ok := recsPool.Get().(*[]rec); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]rec, 0, n)
}

func putRecs(rs []rec) {
	if cap(rs) > 0 {
		rs = rs[:0]
		recsPool.Put(&rs)
	}
}

// asyncHash hashes what is written to it on a goroutine of its own, so
// that provenance hashing runs beside the read instead of in it. Write
// copies; finish waits for the hash and returns its sum, after which it
// takes no more writes.
type asyncHash struct {
	h    hash.Hash
	in   chan hashItem
	sum  chan []byte
	bufs sync.Pool
}

// hashItem is bytes to hash: a copy (buf) or a chunk's lines (data, given
// back to the chunk once hashed).
type hashItem struct {
	buf  *[]byte
	data []byte
	c    *chunk
}

func newAsyncHash(h hash.Hash) *asyncHash {
	a := &asyncHash{h: h, in: make(chan hashItem, 4), sum: make(chan []byte, 1)}
	go func() {
		for it := range a.in {
			if it.c != nil {
				a.h.Write(it.data)
				it.c.releaseData(it.data)
				continue
			}
			a.h.Write(*it.buf)
			a.bufs.Put(it.buf)
		}
		a.sum <- a.h.Sum(nil)
	}()
	return a
}

func (a *asyncHash) Write(p []byte) (int, error) {
	b, _ := a.bufs.Get().(*[]byte)
	if b == nil {
		b = new([]byte)
	}
	*b = append((*b)[:0], p...)
	a.in <- hashItem{buf: b}
	return len(p), nil
}

// own hashes data, the lines of chunk c, without copying them, and then
// releases them (see chunk.releaseData).
func (a *asyncHash) own(c *chunk, data []byte) {
	a.in <- hashItem{data: data, c: c}
}

// finish ends the writes and returns the sum; the hash is not to be
// written to after.
func (a *asyncHash) finish() []byte {
	close(a.in)
	return <-a.sum
}
