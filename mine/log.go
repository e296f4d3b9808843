package mine

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fsmine/fsmine/automaton"
)

// Log is a read log: its sessions, each an ordered list of visits to
// labelled states, and the counts of what reading did with the input.
type Log struct {
	Files    []automaton.SourceFile
	Sessions []Session // sorted by ID

	Records    int // usable records read (before duplicates and drops)
	Skipped    int // bad lines skipped
	LeftOut    int // events an importer left out as asked (ImportOptions.Lifecycle)
	Duplicates int // exact duplicate records dropped
	Dropped    int // records dropped by label rules
	Emptied    int // sessions all of whose records label rules dropped: not sessions of the log
	// EmptiedIDs are the Emptied sessions' ids, sorted, when the log was
	// read whole by Read; nil when it was Streamed, and in the logs of
	// partial results and evidence (ReadPartial, ReadEvidence, MergeLogs),
	// which carry the count alone.
	EmptiedIDs []string
	Folded     int // records folded into the visit before them
	Detours    int // detour visits taken out of the flow
	StepGaps   int // places where a session's step numbers skip
	Bad        []BadLine
	// Warnings are what the importers said of how they read their inputs
	// (a span whose parent is in no span of its file), the first
	// maxBadExamples, and Warned how many there were. Partial results
	// carry them to merge (build --update says its new logs' own only).
	Warnings []BadLine
	Warned   int

	// Fields and Rules are the read options the log was read with; Build
	// records them in the model's params.
	Fields map[string]string
	Rules  *Rules
	// Import holds the importers' options the log was read with that are
	// not the defaults (see ImportParams); Build records them in the
	// model's params.
	Import *automaton.Import
	// importUnknown says Import is not known: the log was read from a
	// partial result or evidence an earlier fsmine wrote, which did not
	// record it. MergeLogs takes such a log with any other.
	importUnknown bool

	// Streamed says the log was read with ReadOptions.Stream and its
	// sessions were folded into a tally (or given to ReadOptions.Each) as
	// they finished: Sessions is empty, and only Build can use the log's
	// tally. Reread, when not empty, says why a streaming read had to start
	// over and hold every session.
	Streamed bool
	Reread   string

	names   []string
	nameIDs map[string]uint32
	// mu guards names and nameIDs while shards run (they intern detour
	// names), and serialises the calls of each.
	mu        *sync.Mutex
	nextPos   uint32
	fileStart []uint32 // pos of each input's first record; see fileOf
	fileSeen  []bool
	// inputLines maps, per input an importer read, the lines of its
	// output to the input's lines (see InputLine); nil where no caller
	// asks (a streaming read into Build's tally).
	inputLines *inputLines

	// The records of a read are grouped into sessions by shards, each
	// owning the sessions whose ids hash to it (see sessionHash), so that
	// grouping, ordering, duplicate detection and dwell run on every core.
	shards []*shard
	seed   maphash.Seed // of sessionHash

	tally    *tally
	each     func(*Log, *Session)
	finished int // sessions given to each
	window   uint32
}

// shard groups the records of the sessions whose ids hash to it. Every
// chunk of records passes every shard, in input order, so that a shard
// sees the same record positions, file starts and sweep points as a
// single reader would: what it folds and when does not depend on the
// number of shards.
type shard struct {
	lg        *Log
	bySess    sessionTable
	raw       [][]rawStep
	sessions  []Session // a read holding every session: its sessions, by first record
	fileStart []uint32  // the shard's view of Log.fileStart, as of its latest chunk
	fileSeen  []bool
	counts    readCounts

	// A streaming shard keeps open sessions in slots (bySess maps to a
	// slot, raw is indexed by slot) and folds each into tally once it has
	// been idle for window records; closed remembers the hashes of the ids
	// it folded.
	tally     *tally
	finished  int
	slots     []openSession
	free      []int
	scratch   []Visit // the visits of a session being tallied
	minRaw    int     // the least records a session's raw grows by
	closed    map[uint64]struct{}
	nextSweep uint32

	err    error  // the first error, at errPos
	errPos uint32 // pos of the record that met err
}

// readCounts are what forming visits counts; a shard keeps its own and the
// Log adds them up.
type readCounts struct {
	duplicates, dropped, emptied, folded, detours, stepGaps int
	fileDups                                                []int
}

func (c *readCounts) addTo(lg *Log) {
	lg.Duplicates += c.duplicates
	lg.Dropped += c.dropped
	lg.Emptied += c.emptied
	lg.Folded += c.folded
	lg.Detours += c.detours
	lg.StepGaps += c.stepGaps
	for i, n := range c.fileDups {
		lg.Files[i].Duplicates += n
	}
}

type openSession struct {
	id   string
	hash uint64 // of id: see sessionHash
	last uint32 // pos of the session's latest record
	open bool
}

// Session is one session of a log.
type Session struct {
	ID     string
	Visits []Visit
}

// Visit is one stay in a labelled state: one record, or several folded.
type Visit struct {
	Label   uint32 // name id; see Log.Name
	Event   uint32 // the event that led out of the visit
	Step    int64  // the first record's step, or -1
	File    uint32 // index into Log.Files
	Line    uint32 // the first record's line
	Records uint32 // how many records the visit stands for
	DwellMS float64
	// HasDwell says whether DwellMS is known: from the next visit's time or
	// the records' duration_ms.
	HasDwell bool
}

// rawStep is a record kept until its session is complete: 40 bytes, as a
// log of ten million records holds ten million of them at once. The file is
// not stored: it follows from pos (see Log.fileStart); the low byte of
// hashFlags holds the flags, the upper 24 bits a hash of the line.
type rawStep struct {
	step      int64
	ts        int64
	pos       uint32
	hashFlags uint32
	dur       float32
	label     uint32
	event     uint32
	line      uint32
}

const (
	rsHasStep = 1 << iota
	rsHasTS
	rsHasDur
	rsDrop
	rsFold
	rsDetour
)

func (s *rawStep) has(f uint32) bool { return s.hashFlags&f != 0 }

// hashFlags gives r's rawStep.hashFlags: 24 bits of the line's hash and
// the record's flags.
func hashFlags(r *rec) uint32 {
	flags := uint32(r.hash) &^ 0xff
	if r.hasStep {
		flags |= rsHasStep
	}
	if r.hasTS {
		flags |= rsHasTS
	}
	if r.hasDur {
		flags |= rsHasDur
	}
	if r.drop {
		flags |= rsDrop
	}
	if r.fold {
		flags |= rsFold
	}
	if r.detour {
		flags |= rsDetour
	}
	return flags
}

func newLog(files int) *Log {
	lg := &Log{
		Files:     make([]automaton.SourceFile, files),
		nameIDs:   map[string]uint32{},
		mu:        new(sync.Mutex),
		fileStart: make([]uint32, files),
		fileSeen:  make([]bool, files),
	}
	for i := range lg.fileStart {
		lg.fileStart[i] = math.MaxUint32
	}
	return lg
}

// newShards gives the log n shards to group its records.
func (lg *Log) newShards(n int) {
	lg.seed = maphash.MakeSeed()
	lg.shards = make([]*shard, max(n, 1))
	for k := range lg.shards {
		sh := &shard{
			lg:        lg,
			fileStart: slices.Clone(lg.fileStart),
			fileSeen:  make([]bool, len(lg.fileStart)),
			counts:    readCounts{fileDups: make([]int, len(lg.Files))},
			minRaw:    4,
		}
		if lg.Streamed {
			if lg.each == nil {
				sh.tally = newTally(lg, MaxExamples)
			}
			sh.closed = map[uint64]struct{}{}
			sh.minRaw = 16
			sh.nextSweep = lg.window
		}
		lg.shards[k] = sh
	}
}

// stream makes the log fold sessions into a tally once they have been idle
// for window records.
func (lg *Log) stream(window int, each func(*Log, *Session)) {
	lg.Streamed = true
	if lg.each = each; each == nil {
		lg.tally = newTally(lg, MaxExamples)
	}
	lg.window = uint32(min(max(window, 1), math.MaxUint32/2))
}

// errReappeared stops a streaming read that meets a record of a session it
// has already folded into its tally.
type errReappeared struct {
	session string
	window  uint32
}

func (e *errReappeared) Error() string {
	return fmt.Sprintf("session %q has records more than %d records apart", e.session, e.window)
}

// sessionHash hashes a session id for the shards: the parsing workers
// compute it, the high half picks the shard (see shardOf) and the whole
// finds the session in its shard's table. The seed is the read's, random,
// so that no input can be made to collide; what a read gives does not
// depend on which shard has which session.
func sessionHash(seed maphash.Seed, id string) uint64 { return maphash.String(seed, id) }

// shardOf is the shard out of n of a session of hash h.
func shardOf(h uint64, n int) int { return int((h >> 32) * uint64(n) >> 32) }

// sessionTable finds a shard's sessions by id: open addressing on the ids'
// hashes (see sessionHash) with linear probing, and deletion by shifting
// back the cells after (so that there are no tombstones), since a
// streaming read deletes every session it folds.
type sessionTable struct {
	cells []sessionCell // len a power of two, or 0
	used  int
}

// sessionCell is a cell of a sessionTable: the hash of a session's id and
// its index + 1 (0: empty).
type sessionCell struct {
	hash uint64
	at   int32
}

// find returns the index of the session of id and hash h, and whether it
// is there; else cell is where it goes. idOf gives the id of an index.
func (t *sessionTable) find(h uint64, id string, idOf func(int) string) (at, cell int, ok bool) {
	if len(t.cells) == 0 {
		t.cells = make([]sessionCell, 1024)
	}
	mask := len(t.cells) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		c := &t.cells[i]
		if c.at == 0 {
			return 0, i, false
		}
		if c.hash == h && idOf(int(c.at-1)) == id {
			return int(c.at - 1), i, true
		}
	}
}

// insert puts index at, of hash h, in cell (from find), growing the table to
// stay at most half full.
func (t *sessionTable) insert(cell int, h uint64, at int) {
	t.cells[cell] = sessionCell{h, int32(at + 1)}
	if t.used++; 2*t.used > len(t.cells) {
		old := t.cells
		t.cells = make([]sessionCell, 2*len(old))
		mask := len(t.cells) - 1
		for _, c := range old {
			if c.at != 0 {
				i := int(c.hash) & mask
				for t.cells[i].at != 0 {
					i = (i + 1) & mask
				}
				t.cells[i] = c
			}
		}
	}
}

// remove empties cell (from find), moving back the cells after it that
// probing would no longer reach.
func (t *sessionTable) remove(cell int) {
	mask := len(t.cells) - 1
	i := cell
	for j := (i + 1) & mask; t.cells[j].at != 0; j = (j + 1) & mask {
		// The cell at j stays unless its home is cyclically outside
		// (i, j]: then it moves into the hole at i.
		home := int(t.cells[j].hash) & mask
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t.cells[i] = t.cells[j]
			i = j
		}
	}
	t.cells[i] = sessionCell{}
	t.used--
}

// session returns the index of a session's records in raw, adding the
// session if it is new; h is the hash of its id (see sessionHash).
func (sh *shard) session(id string, h uint64) (int, error) {
	si, cell, ok := sh.bySess.find(h, id, sh.idOf)
	if ok {
		return si, nil
	}
	if !sh.lg.Streamed {
		id = strings.Clone(id)
		si := len(sh.raw)
		sh.bySess.insert(cell, h, si)
		sh.raw = append(sh.raw, nil)
		sh.sessions = append(sh.sessions, Session{ID: id})
		return si, nil
	}
	if _, seen := sh.closed[h]; seen {
		return 0, &errReappeared{session: strings.Clone(id), window: sh.lg.window}
	}
	id = strings.Clone(id)
	si = len(sh.slots)
	if n := len(sh.free); n > 0 {
		si, sh.free = sh.free[n-1], sh.free[:n-1]
	} else {
		sh.slots = append(sh.slots, openSession{})
		sh.raw = append(sh.raw, nil)
	}
	sh.slots[si] = openSession{id: id, hash: h, open: true}
	sh.bySess.insert(cell, h, si)
	return si, nil
}

// idOf is the id of the session at index si of raw.
func (sh *shard) idOf(si int) string {
	if sh.lg.Streamed {
		return sh.slots[si].id
	}
	return sh.sessions[si].ID
}

// sweep folds every open session idle for more than the window at pos
// (all of them if all is set) into the tally, in slot order.
func (sh *shard) sweep(pos uint32, all bool) {
	lg := sh.lg
	for si := range sh.slots {
		o := &sh.slots[si]
		if !o.open || !all && pos-o.last <= lg.window {
			continue
		}
		var into []Visit
		if lg.each == nil {
			// The tally keeps nothing of the visits: form them in
			// the shard's scratch.
			into = sh.scratch[:0]
		}
		vs := sh.visits(sh.raw[si], into)
		if lg.each == nil {
			sh.scratch = vs
		}
		switch {
		case len(vs) == 0: // every record was dropped: not a session
			sh.counts.emptied++
		case lg.each != nil:
			sh.finished++
			lg.mu.Lock()
			lg.each(lg, &Session{ID: o.id, Visits: vs})
			lg.mu.Unlock()
		default:
			sh.tally.add(o.id, vs)
		}
		sh.closed[o.hash] = struct{}{}
		_, cell, _ := sh.bySess.find(o.hash, o.id, sh.idOf)
		sh.bySess.remove(cell)
		*o = openSession{}
		if cap(sh.raw[si]) > 64 {
			sh.raw[si] = nil
		} else {
			sh.raw[si] = sh.raw[si][:0]
		}
		sh.free = append(sh.free, si)
	}
}

// NumSessions is the number of sessions read: those held, those tallied
// or those given to ReadOptions.Each.
func (lg *Log) NumSessions() int {
	if lg.tally != nil {
		return lg.tally.sessions
	}
	return len(lg.Sessions) + lg.finished
}

// Name returns the text of a name id (a label or an event).
func (lg *Log) Name(id uint32) string { return lg.names[id] }

// ID returns the id of a name, and whether the log has it.
func (lg *Log) ID(name string) (uint32, bool) {
	id, ok := lg.nameIDs[name]
	return id, ok
}

func (lg *Log) intern(s string) uint32 {
	if id, ok := lg.nameIDs[s]; ok {
		return id
	}
	id := uint32(len(lg.names))
	s = strings.Clone(s)
	lg.names = append(lg.names, s)
	lg.nameIDs[s] = id
	return id
}

// addChunk takes a parsed chunk in input order: it counts its records and
// bad lines, gives its records their positions and its names their ids, and
// leaves the grouping to the shards (see shard.add).
func (lg *Log) addChunk(c *chunk, strict bool) error {
	if c.err != nil {
		return c.err
	}
	if strict && len(c.bad) > 0 {
		return &LineError{c.bad[0]}
	}
	for _, b := range c.bad {
		if len(lg.Bad) < maxBadExamples {
			lg.Bad = append(lg.Bad, b)
		}
	}
	lg.LeftOut += c.leftOut
	for _, w := range c.warnings {
		if len(lg.Warnings) < maxBadExamples {
			lg.Warnings = append(lg.Warnings, w)
		}
	}
	lg.Warned += len(c.warnings)
	f := &lg.Files[c.file]
	// Inputs before this one that sent no chunk are empty: they start
	// where it does, so that starts never decrease.
	for i := c.file; i >= 0 && !lg.fileSeen[i]; i-- {
		lg.fileSeen[i] = true
		lg.fileStart[i] = lg.nextPos
	}
	f.Skipped += c.skipped
	lg.Skipped += c.skipped
	f.Records += c.good
	lg.Records += c.good
	if uint64(lg.nextPos)+uint64(c.good) > math.MaxUint32 {
		return errTooManyRecords
	}
	lg.mu.Lock()
	c.ids = c.ids[:0]
	for _, n := range c.names {
		c.ids = append(c.ids, lg.intern(n))
	}
	lg.mu.Unlock()
	c.pos0 = lg.nextPos
	lg.nextPos += uint32(c.good)
	if c.converted {
		lg.noteInputLines(c)
	}
	return nil
}

// linePair says that from line on, the lines of an importer's output stand
// for the input's line at (until the next pair).
type linePair struct{ line, at uint32 }

// inputLines are the pairs of each input's lines (see linePair). The read
// notes a chunk's (noteInputLines) while shards may already be naming the
// records of earlier chunks (check names a deviation as it finds it), so
// mu guards the slices' headers; the pairs a header covers never change.
type inputLines struct {
	mu    sync.Mutex
	files [][]linePair
}

// noteInputLines records where the records of a chunk an importer wrote
// stand in its input: a pair wherever that changes, so that a record of
// the input's line 6,116 is named there and not by its place among the
// importer's lines.
func (lg *Log) noteInputLines(c *chunk) {
	il := lg.inputLines
	if il == nil {
		return
	}
	il.mu.Lock()
	if il.files == nil {
		il.files = make([][]linePair, len(lg.Files))
	}
	pairs := il.files[c.file]
	il.mu.Unlock()
	for i := range c.recs {
		r := &c.recs[i]
		if r.fileLine <= 0 || r.fileLine > math.MaxUint32 || r.at <= 0 || r.at > math.MaxUint32 {
			continue
		}
		want := r.fileLine // what InputLine gives for it so far
		if n := len(pairs); n > 0 {
			want = int(pairs[n-1].at)
		}
		if r.at != want {
			pairs = append(pairs, linePair{uint32(r.fileLine), uint32(r.at)})
		}
	}
	il.mu.Lock()
	il.files[c.file] = pairs
	il.mu.Unlock()
}

// InputLine returns the input's line of the record at line of input file
// (a Visit's File and Line): the same line but for inputs an importer read
// (tau, OTLP, XES, CSV...), whose records Visit.Line numbers in the
// importer's output.
func (lg *Log) InputLine(file, line uint32) int {
	il := lg.inputLines
	if il == nil {
		return int(line)
	}
	il.mu.Lock()
	var pairs []linePair
	if int(file) < len(il.files) {
		pairs = il.files[file]
	}
	il.mu.Unlock()
	// i: the pairs from line or before.
	i, _ := slices.BinarySearchFunc(pairs, line, func(p linePair, l uint32) int {
		if p.line <= l {
			return -1
		}
		return 1
	})
	if i == 0 {
		return int(line)
	}
	return int(pairs[i-1].at)
}

// add groups shard k's records of a chunk that addChunk has taken, then
// (streaming) folds the sessions idle since. It returns false once the
// shard has met an error (see shard.err).
func (sh *shard) add(c *chunk, k int) bool {
	if sh.err != nil {
		return false
	}
	for i := c.file; i >= 0 && !sh.fileSeen[i]; i-- {
		sh.fileSeen[i] = true
		sh.fileStart[i] = c.pos0
	}
	for _, x := range c.byShard[k] {
		r := &c.recs[x.rec]
		pos := c.pos0 + x.off
		si, err := sh.session(r.session, x.hash)
		if err != nil {
			sh.err, sh.errPos = err, pos
			return false
		}
		flags := hashFlags(r)
		if raw := sh.raw[si]; len(raw) == cap(raw) {
			// Grow by half rather than double: sessions are short and
			// millions of them are open at once. A streaming read
			// reuses a slot's records for the sessions after, so it
			// starts them larger.
			sh.raw[si] = slices.Grow(raw, max(sh.minRaw, len(raw)/2))
		}
		sh.raw[si] = append(sh.raw[si], rawStep{
			step: r.step, ts: r.ts, pos: pos, hashFlags: flags, dur: float32(r.dur),
			label: c.ids[x.label], event: c.ids[x.event], line: uint32(r.fileLine),
		})
		if sh.lg.Streamed {
			sh.slots[si].last = pos
		}
	}
	if end := c.pos0 + uint32(c.good); sh.lg.Streamed && end >= sh.nextSweep {
		sh.sweep(end, false)
		sh.nextSweep = end + max(sh.lg.window/8, 1)
	}
	return true
}

// finish orders each session's records, drops duplicates, applies drops,
// detours and folds, and sorts sessions by id; a streaming read folds its
// open sessions into its tally instead. The shards work in parallel, except
// that a read whose rules have detours (which name new events) forms its
// sessions one at a time in input order, so that the name table is the same
// on every run.
func (lg *Log) finish() {
	// Inputs after the last that sent a chunk are empty: their starts stay
	// past every record (see newLog).
	par := lg.Streamed || !rulesDetour(lg.Rules)
	if par {
		var wg sync.WaitGroup
		for _, sh := range lg.shards {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sh.finish()
			}()
		}
		wg.Wait()
	} else {
		type at struct{ sh, si int }
		var order []at
		for k, sh := range lg.shards {
			for si := range sh.sessions {
				order = append(order, at{k, si})
			}
		}
		first := func(a at) uint32 { return lg.shards[a.sh].raw[a.si][0].pos }
		slices.SortFunc(order, func(a, b at) int { return cmp64(int64(first(a)), int64(first(b))) })
		for _, a := range order {
			sh := lg.shards[a.sh]
			sh.sessions[a.si].Visits = sh.visits(sh.raw[a.si], nil)
			sh.raw[a.si] = nil
		}
	}
	for _, sh := range lg.shards {
		sh.counts.addTo(lg)
		lg.finished += sh.finished
		if sh.tally != nil {
			if lg.tally.sessions == 0 && len(lg.tally.nodes) == 1 {
				lg.tally = sh.tally // the first: taken, not copied
			} else {
				lg.tally.merge(sh.tally)
			}
		}
		for _, s := range sh.sessions {
			// A session whose every record was dropped has no visits:
			// it is not a session of the model, but its records are
			// counted as dropped.
			if len(s.Visits) > 0 {
				lg.Sessions = append(lg.Sessions, s)
			} else {
				lg.Emptied++
				lg.EmptiedIDs = append(lg.EmptiedIDs, s.ID)
			}
		}
	}
	lg.shards = nil
	if lg.Streamed {
		return
	}
	slices.SortFunc(lg.Sessions, func(a, b Session) int { return strings.Compare(a.ID, b.ID) })
	slices.Sort(lg.EmptiedIDs)
}

// finish forms the shard's sessions (folds its open ones, streaming).
func (sh *shard) finish() {
	if sh.lg.Streamed {
		sh.sweep(sh.lg.nextPos, true)
		if sh.tally != nil {
			sh.tally.done()
		}
	} else {
		for si := range sh.sessions {
			sh.sessions[si].Visits = sh.visits(sh.raw[si], nil)
			sh.raw[si] = nil
		}
	}
	sh.raw, sh.slots, sh.free, sh.closed, sh.scratch = nil, nil, nil, nil, nil
	sh.bySess = sessionTable{}
}

// rulesDetour says whether rules can mark a record a detour.
func rulesDetour(rs *Rules) bool {
	if rs == nil {
		return false
	}
	for i := range rs.Rules {
		if rs.Rules[i].Detour {
			return true
		}
	}
	return false
}

// merge adds the sessions tallied in u to t; both tally names of one Log.
func (t *tally) merge(u *tally) {
	t.settle()
	u.settle()
	at := make([]int32, len(u.nodes)) // u's node -> t's
	for n := 1; n < len(u.nodes); n++ {
		un := &u.nodes[n]
		at[n] = t.step(at[un.parent], un.mv)
		tn := &t.nodes[at[n]]
		if un.ended > 0 {
			if tn.ended == 0 {
				t.ends = append(t.ends, at[n])
			}
			tn.ended += un.ended
		}
		tn.dwell.addAll(&un.dwell)
		if len(un.ex) > 0 {
			tn.ex = mergeExamples(tn.ex, un.ex, t.keep)
		}
	}
	t.sessions += u.sessions
	t.events += u.events
}

// visits turns a session's records into visits, in into's array when it
// has room. Order is by step when every record has one, else by time when
// every record has one, else by position; ties keep input order.
func (sh *shard) visits(steps []rawStep, into []Visit) []Visit {
	cnt := &sh.counts
	allStep, allTS := true, true
	for i := range steps {
		allStep = allStep && steps[i].has(rsHasStep)
		allTS = allTS && steps[i].has(rsHasTS)
	}
	sorted := true
	for i := 1; i < len(steps) && sorted; i++ {
		a, b := &steps[i-1], &steps[i]
		switch {
		case allStep && a.step != b.step:
			sorted = a.step < b.step
		case allTS && a.ts != b.ts:
			sorted = a.ts < b.ts
		default:
			sorted = a.pos < b.pos
		}
	}
	if !sorted {
		slices.SortStableFunc(steps, func(a, b rawStep) int {
			if allStep && a.step != b.step {
				return cmp64(a.step, b.step)
			}
			if allTS && a.ts != b.ts {
				return cmp64(a.ts, b.ts)
			}
			return cmp64(int64(a.pos), int64(b.pos))
		})
	}
	// Exact duplicates sort next to each other only within a run of equal
	// keys; look for them there.
	// dropDuplicates written out: on the ingest path its calls through
	// function values cost 7% (BenchmarkRead). A long run (thousands of
	// records of one time) is looked up in a set, so that it costs its
	// length, not its square.
	type dupKey struct {
		hashFlags, label, event uint32
		step, ts                int64
	}
	keyOf := func(s *rawStep) dupKey { return dupKey{s.hashFlags, s.label, s.event, s.step, s.ts} }
	kept := steps[:0]
	run := 0 // where the run of equal keys begins in kept
	var runSet map[dupKey]bool
	for i := range steps {
		s := steps[i]
		if n := len(kept); n > 0 && !((allStep && kept[n-1].step == s.step) || (!allStep && allTS && kept[n-1].ts == s.ts)) {
			run, runSet = n, nil
		}
		key := keyOf(&s)
		dup := runSet[key]
		if runSet == nil {
			for j := len(kept) - 1; j >= run && !dup; j-- {
				dup = keyOf(&kept[j]) == key
			}
			if len(kept)-run >= dupScan {
				runSet = make(map[dupKey]bool, 2*dupScan)
				for j := run; j < len(kept); j++ {
					runSet[keyOf(&kept[j])] = true
				}
			}
		}
		if runSet != nil && !dup {
			runSet[key] = true
		}
		if dup {
			cnt.duplicates++
			cnt.fileDups[sh.fileOf(s.pos)]++
			continue
		}
		kept = append(kept, s)
	}
	steps = kept
	if allStep {
		for i := 1; i < len(steps); i++ {
			if steps[i].step > steps[i-1].step+1 {
				cnt.stepGaps++
			}
		}
	}

	// Dwell of a record: until the next record's time (dropped records
	// included, as they are time spent in the stage), else its duration.
	// A next record earlier in time (steps, or the file's order, against
	// the times) says nothing of the time spent: no gap is taken then.
	// The gap is taken unsigned: two times more than 292 years apart
	// overflow an int64 of nanoseconds, but never a uint64.
	dwellOf := func(i int) float64 {
		if steps[i].has(rsHasTS) && i+1 < len(steps) && steps[i+1].has(rsHasTS) && steps[i+1].ts >= steps[i].ts {
			return float64(uint64(steps[i+1].ts)-uint64(steps[i].ts)) / 1e6
		} else if steps[i].has(rsHasDur) {
			return float64(steps[i].dur)
		}
		return math.NaN()
	}

	vs := into[:0]
	if cap(vs) < len(steps) {
		vs = make([]Visit, 0, max(len(steps), 2*cap(vs)))
	}
	for i, s := range steps {
		dwell := dwellOf(i)
		if s.has(rsDrop) {
			cnt.dropped++
			if n := len(vs); n > 0 && !math.IsNaN(dwell) && vs[n-1].HasDwell {
				vs[n-1].DwellMS = addDwell(vs[n-1].DwellMS, dwell)
			}
			continue
		}
		v := Visit{Label: s.label, Event: s.event, Step: -1, File: uint32(sh.fileOf(s.pos)), Line: s.line, Records: 1}
		if s.has(rsHasStep) {
			v.Step = s.step
		}
		if !math.IsNaN(dwell) {
			v.DwellMS, v.HasDwell = dwell, true
		}
		vs = append(vs, v)
		if s.has(rsDetour) {
			vs[len(vs)-1].Records |= detourBit
		}
		if s.has(rsFold) {
			vs[len(vs)-1].Records |= foldBit
		}
	}
	vs = sh.collapseDetours(vs)
	vs = sh.fold(vs)
	for i := range vs {
		vs[i].Records &^= flagBits
	}
	return vs
}

// maxDwellMS is the greatest dwell a visit is given: the greatest float64
// below 2^63 ms, which a model holds (automaton.Dwell).
const maxDwellMS = 1<<63 - 1<<10

// addDwell adds two dwell times of a visit (the records it stands for),
// stopping at maxDwellMS: each is below 2^63 ms, their sum need not be.
func addDwell(a, b float64) float64 { return min(a+b, maxDwellMS) }

// dupScan is the longest run of records of one step or time that is
// searched for duplicates record by record; a longer one is looked up in a
// set.
const dupScan = 32

// dropDuplicates keeps the items of items, sorted, that no item kept
// before them in their run (consecutive items that sameRun says are of one
// step or time) has the key of, in order, in place, and calls onDup (when
// not nil) with each other one. Read finds a session's exact duplicates
// with it (shard.visits), and the reads that must find the same ones (the
// argument records, measures) do too. A run longer than dupScan is looked
// up in a set, so that it costs its length, not its square.
func dropDuplicates[T any, K comparable](items []T, sameRun func(a, b *T) bool, key func(*T) K, onDup func(*T)) []T {
	kept := items[:0]
	run := 0
	var runSet map[K]bool
	for i := range items {
		it := &items[i] // kept never passes i: it is still there to read
		if n := len(kept); n > 0 && !sameRun(&kept[n-1], it) {
			run, runSet = n, nil
		}
		k := key(it)
		dup := runSet[k]
		if runSet == nil {
			for j := len(kept) - 1; j >= run && !dup; j-- {
				dup = key(&kept[j]) == k
			}
			if len(kept)-run >= dupScan {
				runSet = make(map[K]bool, 2*dupScan)
				for j := run; j < len(kept); j++ {
					runSet[key(&kept[j])] = true
				}
			}
		}
		if runSet != nil && !dup {
			runSet[k] = true
		}
		if dup {
			if onDup != nil {
				onDup(it)
			}
			continue
		}
		kept = append(kept, *it)
	}
	clear(items[len(kept):])
	return kept
}

// Flags carried in Visit.Records while visits are formed.
const (
	detourBit     = 1 << 31
	foldBit       = 1 << 30
	detourExitBit = 1 << 29 // left through a detour: not folded into
	flagBits      = detourBit | foldBit | detourExitBit
)

// collapseDetours replaces X D... X (a run of detour visits between two
// visits of one stage) by X -[detour:D]-> X.
func (sh *shard) collapseDetours(vs []Visit) []Visit {
	lg := sh.lg
	out := vs[:0]
	end := 0 // where the run of detour visits at i ends, once found
	for i := 0; i < len(vs); i++ {
		v := vs[i]
		if v.Records&detourBit != 0 && len(out) > 0 {
			// A run that does not collapse at i is tried again at i+1:
			// its end is found once.
			if end <= i {
				for end = i; end < len(vs) && vs[end].Records&detourBit != 0; end++ {
				}
			}
			j := end
			prev := &out[len(out)-1]
			if j < len(vs) && vs[j].Label == prev.Label {
				var names []string
				lg.mu.Lock()
				for k := i; k < j; k++ {
					n := lg.names[vs[k].Label]
					if len(names) == 0 || names[len(names)-1] != n {
						names = append(names, n)
					}
					if prev.HasDwell && vs[k].HasDwell {
						prev.DwellMS = addDwell(prev.DwellMS, vs[k].DwellMS)
					}
				}
				sh.counts.detours += j - i
				prev.Event = lg.intern("detour:" + strings.Join(names, "+"))
				lg.mu.Unlock()
				prev.Records |= detourExitBit
				i = j - 1
				continue
			}
		}
		out = append(out, v)
	}
	return out
}

// fold merges a visit into the one before it when both have the same label
// and both were labelled by folding rules, unless the one before left
// through a detour: the detour stays visible as a self-loop.
func (sh *shard) fold(vs []Visit) []Visit {
	out := vs[:0]
	for _, v := range vs {
		if n := len(out); n > 0 && v.Records&foldBit != 0 && out[n-1].Records&foldBit != 0 && out[n-1].Records&detourExitBit == 0 && out[n-1].Label == v.Label {
			p := &out[n-1]
			p.Records = (p.Records &^ flagBits) + (v.Records &^ flagBits) | foldBit | v.Records&detourExitBit
			p.Event = v.Event
			if p.HasDwell && v.HasDwell {
				p.DwellMS = addDwell(p.DwellMS, v.DwellMS)
			} else {
				p.HasDwell = false
			}
			sh.counts.folded++
			continue
		}
		out = append(out, v)
	}
	return out
}

// fileOf returns the index of the input that holds the record at pos.
func (sh *shard) fileOf(pos uint32) int {
	// The last input whose first record is at or before pos: an input
	// without records shares its successor's start and loses to it.
	starts := sh.fileStart
	lo, hi := 0, len(starts) // the first start past pos is in [lo, hi]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if starts[m] > pos {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return max(lo-1, 0)
}

// errTooManyRecords stops a read past what record positions can count.
var errTooManyRecords = errors.New("more than 4,294,967,295 records in one read: split the logs and use --partial")

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Moves returns a session as a model sees it: a move into each visit's
// label, out of automaton.StartID with an empty event first, then with the
// previous visit's event; and last the move into automaton.EndID with the
// last visit's event.
func (lg *Log) Moves(s *Session) []automaton.Move {
	return lg.AppendMoves(make([]automaton.Move, 0, len(s.Visits)+1), s)
}

// AppendMoves appends the moves of session s, as Moves gives them, to buf
// and returns it: with buf[:0] of a slice kept between sessions, a caller
// that checks many sessions does not allocate for each.
func (lg *Log) AppendMoves(buf []automaton.Move, s *Session) []automaton.Move {
	// Grown once: a session of a million visits would otherwise copy its
	// moves over and over as append grows them.
	buf = slices.Grow(buf, len(s.Visits)+1)
	ev := ""
	for i := range s.Visits {
		v := &s.Visits[i]
		buf = append(buf, automaton.Move{Event: ev, Label: lg.names[v.Label]})
		ev = lg.names[v.Event]
	}
	return append(buf, automaton.Move{Event: ev, Label: automaton.EndID})
}

// Format names the format the inputs were read as: the one format they
// share, or their formats joined with "+" in name order.
func (lg *Log) Format() string {
	seen := map[string]bool{}
	var names []string
	for _, f := range lg.Files {
		if f.Format != "" && !seen[f.Format] {
			seen[f.Format] = true
			names = append(names, f.Format)
		}
	}
	sort.Strings(names)
	return strings.Join(names, "+")
}

// Subset returns a log holding the sessions of lg for which keep is true,
// in lg's order, sharing lg's names: what cross-validation mines a fold's
// model from. Its counts of records, skips and drops are lg's, as those are
// not kept per session; it has no emptied sessions (Emptied 0). lg must have been read whole (not Streamed), and
// Subset must not run concurrently with a Build of lg; the logs it returns
// may be built concurrently with each other.
func (lg *Log) Subset(keep func(s *Session) bool) *Log {
	// Build interns these; interning them here keeps concurrent Builds of
	// subsets from writing to the shared name table.
	lg.intern("")
	lg.intern(automaton.StartID)
	lg.intern(automaton.EndID)
	sub := *lg
	sub.Sessions = nil
	sub.tally = nil
	sub.shards = nil
	// The emptied sessions are no sessions keep can see: the subset has
	// none (a caller that knows which belong may set them).
	sub.Emptied, sub.EmptiedIDs = 0, nil
	for i := range lg.Sessions {
		if keep(&lg.Sessions[i]) {
			sub.Sessions = append(sub.Sessions, lg.Sessions[i])
		}
	}
	return &sub
}
