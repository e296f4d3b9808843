package mine

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"strings"

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
	Folded     int // records folded into the visit before them
	Detours    int // detour visits taken out of the flow
	StepGaps   int // places where a session's step numbers skip
	Bad        []BadLine

	// Fields and Rules are the read options the log was read with; Build
	// records them in the model's params.
	Fields map[string]string
	Rules  *Rules

	// Streamed says the log was read with ReadOptions.Stream and its
	// sessions were folded into a tally (or given to ReadOptions.Each) as
	// they finished: Sessions is empty, and only Build can use the log's
	// tally. Reread, when not empty, says why a streaming read had to start
	// over and hold every session.
	Streamed bool
	Reread   string

	names     []string
	nameIDs   map[string]uint32
	bySess    map[string]int
	raw       [][]rawStep
	nextPos   uint32
	fileStart []uint32 // pos of each input's first record; see fileOf
	fileSeen  []bool

	// A streaming read keeps open sessions in slots (bySess maps to a
	// slot, raw is indexed by slot) and folds each into tally once it has
	// been idle for window records; closed remembers the ids it folded.
	tally     *tally
	each      func(*Log, *Session)
	finished  int // sessions given to each
	window    uint32
	slots     []openSession
	free      []int
	closed    map[uint64]struct{}
	seed      maphash.Seed
	nextSweep uint32
}

type openSession struct {
	id   string
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

func newLog(files int) *Log {
	lg := &Log{
		Files:     make([]automaton.SourceFile, files),
		nameIDs:   map[string]uint32{},
		bySess:    map[string]int{},
		fileStart: make([]uint32, files),
		fileSeen:  make([]bool, files),
	}
	for i := range lg.fileStart {
		lg.fileStart[i] = math.MaxUint32
	}
	return lg
}

// stream makes the log fold sessions into a tally once they have been idle
// for window records.
func (lg *Log) stream(window int, each func(*Log, *Session)) {
	lg.Streamed = true
	if lg.each = each; each == nil {
		lg.tally = newTally(lg, MaxExamples)
	}
	lg.window = uint32(min(max(window, 1), math.MaxUint32/2))
	lg.closed = map[uint64]struct{}{}
	lg.seed = maphash.MakeSeed()
	lg.nextSweep = lg.window
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

// session returns the index of a session's records in raw, adding the
// session if it is new.
func (lg *Log) session(id string) (int, error) {
	if si, ok := lg.bySess[id]; ok {
		return si, nil
	}
	if !lg.Streamed {
		id = strings.Clone(id)
		si := len(lg.raw)
		lg.bySess[id] = si
		lg.raw = append(lg.raw, nil)
		lg.Sessions = append(lg.Sessions, Session{ID: id})
		return si, nil
	}
	if _, seen := lg.closed[maphash.String(lg.seed, id)]; seen {
		return 0, &errReappeared{session: strings.Clone(id), window: lg.window}
	}
	id = strings.Clone(id)
	si := len(lg.slots)
	if n := len(lg.free); n > 0 {
		si, lg.free = lg.free[n-1], lg.free[:n-1]
	} else {
		lg.slots = append(lg.slots, openSession{})
		lg.raw = append(lg.raw, nil)
	}
	lg.slots[si] = openSession{id: id, open: true}
	lg.bySess[id] = si
	return si, nil
}

// sweep folds every open session idle for more than the window (all of
// them if all is set) into the tally, in slot order.
func (lg *Log) sweep(all bool) {
	for si := range lg.slots {
		o := &lg.slots[si]
		if !o.open || !all && lg.nextPos-o.last <= lg.window {
			continue
		}
		switch vs := lg.visits(lg.raw[si]); {
		case len(vs) == 0: // every record was dropped: not a session
		case lg.each != nil:
			lg.finished++
			lg.each(lg, &Session{ID: o.id, Visits: vs})
		default:
			lg.tally.add(o.id, vs)
		}
		lg.closed[maphash.String(lg.seed, o.id)] = struct{}{}
		delete(lg.bySess, o.id)
		*o = openSession{}
		if cap(lg.raw[si]) > 64 {
			lg.raw[si] = nil
		} else {
			lg.raw[si] = lg.raw[si][:0]
		}
		lg.free = append(lg.free, si)
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
	f := &lg.Files[c.file]
	// Inputs before this one that sent no chunk are empty: they start
	// where it does, so that starts never decrease.
	for i := c.file; i >= 0 && !lg.fileSeen[i]; i-- {
		lg.fileSeen[i] = true
		lg.fileStart[i] = lg.nextPos
	}
	for i := range c.recs {
		r := &c.recs[i]
		if r.fileLine < 0 {
			f.Skipped++
			lg.Skipped++
			continue
		}
		f.Records++
		lg.Records++
		si, err := lg.session(r.session)
		if err != nil {
			return err
		}
		flags := uint32(r.hash) &^ 0xff
		for _, f := range [...]struct {
			on   bool
			flag uint32
		}{{r.hasStep, rsHasStep}, {r.hasTS, rsHasTS}, {r.hasDur, rsHasDur}, {r.drop, rsDrop}, {r.fold, rsFold}, {r.detour, rsDetour}} {
			if f.on {
				flags |= f.flag
			}
		}
		if raw := lg.raw[si]; len(raw) == cap(raw) {
			// Grow by half rather than double: sessions are short and
			// millions of them are open at once.
			lg.raw[si] = slices.Grow(raw, max(4, len(raw)/2))
		}
		lg.raw[si] = append(lg.raw[si], rawStep{
			step: r.step, ts: r.ts, pos: lg.nextPos, hashFlags: flags, dur: float32(r.dur),
			label: lg.intern(r.label), event: lg.intern(r.event), line: uint32(r.fileLine),
		})
		if lg.Streamed {
			lg.slots[si].last = lg.nextPos
		}
		if lg.nextPos == math.MaxUint32 {
			return errTooManyRecords
		}
		lg.nextPos++
	}
	if lg.Streamed && lg.nextPos >= lg.nextSweep {
		lg.sweep(false)
		lg.nextSweep = lg.nextPos + max(lg.window/8, 1)
	}
	return nil
}

// finish orders each session's records, drops duplicates, applies drops,
// detours and folds, and sorts sessions by id; a streaming read folds its
// open sessions into its tally instead.
func (lg *Log) finish() {
	// Inputs after the last that sent a chunk are empty: their starts stay
	// past every record (see newLog).
	if lg.Streamed {
		lg.sweep(true)
		lg.raw, lg.slots, lg.free, lg.bySess, lg.closed = nil, nil, nil, nil, nil
		return
	}
	for si := range lg.Sessions {
		lg.Sessions[si].Visits = lg.visits(lg.raw[si])
		lg.raw[si] = nil
	}
	lg.raw = nil
	lg.bySess = nil
	sort.Slice(lg.Sessions, func(i, j int) bool { return lg.Sessions[i].ID < lg.Sessions[j].ID })
	// A session whose every record was dropped has no visits: it is not a
	// session of the model, but its records are counted as dropped.
	out := lg.Sessions[:0]
	for _, s := range lg.Sessions {
		if len(s.Visits) > 0 {
			out = append(out, s)
		}
	}
	lg.Sessions = out
}

// visits turns a session's records into visits. Order is by step when every
// record has one, else by time when every record has one, else by position;
// ties keep input order.
func (lg *Log) visits(steps []rawStep) []Visit {
	allStep, allTS := true, true
	for i := range steps {
		allStep = allStep && steps[i].has(rsHasStep)
		allTS = allTS && steps[i].has(rsHasTS)
	}
	slices.SortStableFunc(steps, func(a, b rawStep) int {
		if allStep && a.step != b.step {
			return cmp64(a.step, b.step)
		}
		if allTS && a.ts != b.ts {
			return cmp64(a.ts, b.ts)
		}
		return cmp64(int64(a.pos), int64(b.pos))
	})
	// Exact duplicates sort next to each other only within a run of equal
	// keys; look for them there.
	kept := steps[:0]
	for i := range steps {
		s := steps[i]
		dup := false
		for j := len(kept) - 1; j >= 0; j-- {
			k := kept[j]
			if (allStep && k.step != s.step) || (!allStep && allTS && k.ts != s.ts) || (!allStep && !allTS) {
				break
			}
			if k.hashFlags == s.hashFlags && k.step == s.step && k.ts == s.ts && k.label == s.label && k.event == s.event {
				dup = true
				break
			}
		}
		if dup {
			lg.Duplicates++
			lg.Files[lg.fileOf(s.pos)].Duplicates++
			continue
		}
		kept = append(kept, s)
	}
	steps = kept
	if allStep {
		for i := 1; i < len(steps); i++ {
			if steps[i].step > steps[i-1].step+1 {
				lg.StepGaps++
			}
		}
	}

	// Dwell of a record: until the next record's time (dropped records
	// included, as they are time spent in the stage), else its duration.
	dwell := make([]float64, len(steps))
	for i := range steps {
		dwell[i] = math.NaN()
		if steps[i].has(rsHasTS) && i+1 < len(steps) && steps[i+1].has(rsHasTS) {
			dwell[i] = float64(steps[i+1].ts-steps[i].ts) / 1e6
		} else if steps[i].has(rsHasDur) {
			dwell[i] = float64(steps[i].dur)
		}
	}

	vs := make([]Visit, 0, len(steps))
	for i, s := range steps {
		if s.has(rsDrop) {
			lg.Dropped++
			if n := len(vs); n > 0 && !math.IsNaN(dwell[i]) && vs[n-1].HasDwell {
				vs[n-1].DwellMS += dwell[i]
			}
			continue
		}
		v := Visit{Label: s.label, Event: s.event, Step: -1, File: uint32(lg.fileOf(s.pos)), Line: s.line, Records: 1}
		if s.has(rsHasStep) {
			v.Step = s.step
		}
		if !math.IsNaN(dwell[i]) {
			v.DwellMS, v.HasDwell = dwell[i], true
		}
		vs = append(vs, v)
		if s.has(rsDetour) {
			vs[len(vs)-1].Records |= detourBit
		}
		if s.has(rsFold) {
			vs[len(vs)-1].Records |= foldBit
		}
	}
	vs = lg.collapseDetours(vs)
	vs = lg.fold(vs)
	for i := range vs {
		vs[i].Records &^= flagBits
	}
	return vs
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
func (lg *Log) collapseDetours(vs []Visit) []Visit {
	out := vs[:0]
	for i := 0; i < len(vs); i++ {
		v := vs[i]
		if v.Records&detourBit != 0 && len(out) > 0 {
			j := i
			for j < len(vs) && vs[j].Records&detourBit != 0 {
				j++
			}
			prev := &out[len(out)-1]
			if j < len(vs) && vs[j].Label == prev.Label {
				var names []string
				for k := i; k < j; k++ {
					n := lg.names[vs[k].Label]
					if len(names) == 0 || names[len(names)-1] != n {
						names = append(names, n)
					}
					if prev.HasDwell && vs[k].HasDwell {
						prev.DwellMS += vs[k].DwellMS
					}
				}
				lg.Detours += j - i
				prev.Event = lg.intern("detour:" + strings.Join(names, "+"))
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
func (lg *Log) fold(vs []Visit) []Visit {
	out := vs[:0]
	for _, v := range vs {
		if n := len(out); n > 0 && v.Records&foldBit != 0 && out[n-1].Records&foldBit != 0 && out[n-1].Records&detourExitBit == 0 && out[n-1].Label == v.Label {
			p := &out[n-1]
			p.Records = (p.Records &^ flagBits) + (v.Records &^ flagBits) | foldBit | v.Records&detourExitBit
			p.Event = v.Event
			if p.HasDwell && v.HasDwell {
				p.DwellMS += v.DwellMS
			} else {
				p.HasDwell = false
			}
			lg.Folded++
			continue
		}
		out = append(out, v)
	}
	return out
}

// fileOf returns the index of the input that holds the record at pos.
func (lg *Log) fileOf(pos uint32) int {
	// The last input whose first record is at or before pos: an input
	// without records shares its successor's start and loses to it.
	i := sort.Search(len(lg.fileStart), func(i int) bool { return lg.fileStart[i] > pos }) - 1
	return max(i, 0)
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
	out := make([]automaton.Move, 0, len(s.Visits)+1)
	ev := ""
	for _, v := range s.Visits {
		out = append(out, automaton.Move{Event: ev, Label: lg.names[v.Label]})
		ev = lg.names[v.Event]
	}
	return append(out, automaton.Move{Event: ev, Label: automaton.EndID})
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
// not kept per session. lg must have been read whole (not Streamed), and
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
	sub.bySess = nil
	sub.raw = nil
	for i := range lg.Sessions {
		if keep(&lg.Sessions[i]) {
			sub.Sessions = append(sub.Sessions, lg.Sessions[i])
		}
	}
	return &sub
}
