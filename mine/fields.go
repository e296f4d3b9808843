package mine

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
)

// Limits of RecordFields: how deep into a record's objects a path goes (an
// object deeper than this counts as one leaf), how long a path may be, and
// how many distinct paths are told apart.
const (
	MaxFieldDepth = 8
	MaxFieldPath  = 256
	MaxFieldPaths = automaton.MaxFields
)

// FieldReport says what RecordFields read and what it could not track.
type FieldReport struct {
	// Records is the number of records read again; Leaving the number of
	// visits that leave their state, whose records were looked at.
	Records, Leaving int
	// Paths is the number of distinct field paths tracked; Everywhere the
	// number of them present on every record, which no state records.
	Paths, Everywhere int
	// LastTracked and FirstUntracked are set when the records held more
	// than MaxFieldPaths distinct paths: the paths tracked are the
	// MaxFieldPaths smallest by name, up to LastTracked, and those from
	// FirstUntracked on are not (a choice that does not depend on the
	// order of the records).
	LastTracked, FirstUntracked string
	// TooLong counts the occurrences of paths longer than MaxFieldPath
	// bytes and Unnamed those of the empty path (a top-level key ""),
	// which are not tracked; Unreadable the records whose JSON the walk
	// could not read (counted as carrying no field).
	TooLong, Unnamed, Unreadable int
	// Unplaced counts the sessions the model does not take from start to
	// end, whose visits are left out.
	Unplaced int
}

// FieldOptions shape RecordFields.
type FieldOptions struct {
	// Evidence holds the fields of the sessions of lg that come from a
	// model's evidence (build --update) rather than from inputs: those
	// whose ids it lists. Nil for none.
	Evidence *FieldEvidence
	// Keep asks for the fields of every visit of lg, as FieldEvidence, so
	// that a later update needs no log read again.
	Keep bool
}

// RecordFields finds, for every state of m, the record fields present on
// the record of every visit that leaves the state, and stores them in the
// state's Fields (setting m.Params.Slots and the digest). m must have been
// mined from lg, and lg read from inputs with opt, holding its sessions (not
// streamed): each session is walked through m as check walks it, to find the
// state of each visit, and the inputs are read a second time for the
// records' fields (the sessions fo.Evidence lists take theirs from it).
//
// A visit's record is its first one (the step that lands in the state); a
// visit leaves its state when the next visit's state is another one (or the
// session ends). A field is a dotted path to a leaf of the record: a value
// that is not an object (arrays are leaves; objects deeper than
// MaxFieldDepth are leaves too), present when it is not null, "" or [].
// The core fields (session_id, node, event, step, ts, duration_ms, or the
// paths opt.Fields reads them from) are left out, and so are fields present
// on every record read, which say nothing about a state. Memory grows with
// the visits looked at and the distinct field sets, not with the records'
// text. With fo.Keep it also returns the fields of every visit.
func RecordFields(lg *Log, m *automaton.Model, inputs []Input, opt ReadOptions, fo FieldOptions) (*FieldReport, *FieldEvidence, error) {
	if lg.Streamed {
		return nil, nil, errStreamed
	}
	r := &fieldRun{lg: lg, m: m, rep: &FieldReport{}, old: fo.Evidence, oldSets: map[string][]int{}, interned: map[string]int32{}}
	if r.old != nil {
		for _, s := range r.old.Sessions {
			r.oldSets[s.ID] = s.Visits
		}
	}
	if err := r.place(fo.Keep); err != nil {
		return nil, nil, err
	}
	core := map[string]bool{}
	for _, f := range coreFields {
		core[f] = true
		if p, ok := opt.Fields[f]; ok {
			core[p] = true
		}
	}
	r.fw = newFieldWalker(core, r.forget)
	if r.old != nil {
		// The old paths compete for the bound as if read again; the
		// smallest path the old read could not track is past it.
		for _, p := range r.old.Paths {
			r.fw.admit(p)
		}
		if r.old.FirstUntracked != "" {
			r.fw.reject(r.old.FirstUntracked)
		}
	}
	if err := r.reread(inputs, opt); err != nil {
		return nil, nil, err
	}
	if r.old != nil {
		r.mergeOld()
	}
	r.assign()
	m.Params.Slots = true
	m.Digest = m.ComputeDigest()
	if !fo.Keep {
		return r.rep, nil, nil
	}
	return r.rep, fieldEvidence(lg, r.rep, r.fw.names, r.counts, r.table, r.visitSet), nil
}

// fieldRun is the work of one RecordFields.
type fieldRun struct {
	lg      *Log
	m       *automaton.Model
	rep     *FieldReport
	old     *FieldEvidence
	oldSets map[string][]int // the old evidence's visits' sets, by session id
	// Per session and visit: the state the visit leaves (-1: it does not
	// leave, or the session is not placed), and its field set, an index
	// into table (-1 until known).
	leaves, visitSet [][]int32
	need             map[uint64]visitRef // the records to look at, by input and line
	// The distinct field sets, as sorted path ids.
	table    [][]uint32
	interned map[string]int32
	counts   []int    // per path id: records carrying it
	ids      []uint32 // of the record being walked
	fw       *fieldWalker
}

type visitRef struct{ s, v int32 }

// place walks every session through the model, as check does, to find the
// state each visit leaves, and notes the records to read: those of visits
// that leave their state (all, with keep), but for sessions the old
// evidence holds.
func (r *fieldRun) place(keep bool) error {
	lg, m := r.lg, r.m
	stateIx := make(map[string]int32, len(m.States))
	for i, s := range m.States {
		stateIx[s.ID] = int32(i)
	}
	r.leaves = make([][]int32, len(lg.Sessions))
	r.visitSet = make([][]int32, len(lg.Sessions))
	r.need = map[uint64]visitRef{}
	ck := conform.New(m, conform.Options{})
	var moves []automaton.Move
	for si := range lg.Sessions {
		s := &lg.Sessions[si]
		moves = lg.AppendMoves(moves[:0], s)
		steps := ck.Replay(moves)
		placed := len(steps) == len(s.Visits)+1
		for _, st := range steps {
			placed = placed && st.Transition != nil
		}
		if !placed {
			r.rep.Unplaced++
		}
		r.leaves[si] = make([]int32, len(s.Visits))
		r.visitSet[si] = make([]int32, len(s.Visits))
		_, fromEvidence := r.oldSets[s.ID]
		if fromEvidence && len(r.oldSets[s.ID]) != len(s.Visits) {
			return fmt.Errorf("the fields evidence has %d visits of session %q, the log %d", len(r.oldSets[s.ID]), s.ID, len(s.Visits))
		}
		for i, v := range s.Visits {
			r.leaves[si][i], r.visitSet[si][i] = -1, -1
			if placed && steps[i].To != steps[i+1].To {
				r.leaves[si][i] = stateIx[steps[i].To]
				r.rep.Leaving++
			}
			if !fromEvidence && (keep || r.leaves[si][i] >= 0) {
				r.need[uint64(v.File)<<32|uint64(v.Line)] = visitRef{int32(si), int32(i)}
			}
		}
	}
	return nil
}

func setKey(ids []uint32) string {
	b := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		b = append(b, byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
	}
	return string(b)
}

// intern returns the index of the field set ids in the table.
func (r *fieldRun) intern(ids []uint32) int32 {
	k := setKey(ids)
	if i, ok := r.interned[k]; ok {
		return i
	}
	i := int32(len(r.table))
	r.table = append(r.table, append([]uint32(nil), ids...))
	r.interned[k] = i
	return i
}

// forget drops path id from every set and count: the id is about to name
// another path.
func (r *fieldRun) forget(id uint32) {
	if int(id) < len(r.counts) {
		r.counts[id] = 0
	}
	clear(r.interned)
	for i, set := range r.table {
		if j, ok := slices.BinarySearch(set, id); ok {
			r.table[i] = slices.Delete(set, j, j+1)
		}
		if _, dup := r.interned[setKey(r.table[i])]; !dup {
			r.interned[setKey(r.table[i])] = int32(i)
		}
	}
	r.ids = slices.DeleteFunc(r.ids, func(x uint32) bool { return x == id })
}

// reread reads the inputs again: every record's fields are counted, and
// the field sets of the records noted are kept.
func (r *fieldRun) reread(inputs []Input, opt ReadOptions) error {
	found := 0
	err := rereadRecords(inputs, opt, func(fi, line, _ int, l []byte, _ *rec) bool {
		r.rep.Records++
		r.ids = r.ids[:0]
		if err := r.fw.walk(l, func(id uint32) { r.ids = append(r.ids, id) }); err != nil {
			r.rep.Unreadable++
			r.ids = r.ids[:0]
		}
		slices.Sort(r.ids)
		r.ids = slices.Compact(r.ids)
		for _, id := range r.ids {
			for int(id) >= len(r.counts) {
				r.counts = append(r.counts, 0)
			}
			r.counts[id]++
		}
		if ref, ok := r.need[uint64(fi)<<32|uint64(line)]; ok {
			found++
			r.visitSet[ref.s][ref.v] = r.intern(r.ids)
		}
		return true
	})
	if err != nil {
		return err
	}
	if found != len(r.need) {
		return fmt.Errorf("reading the logs again for their fields: %d of the %d records of visits were not found (did a log change?)", len(r.need)-found, len(r.need))
	}
	for len(r.counts) < len(r.fw.names) {
		r.counts = append(r.counts, 0)
	}
	return nil
}

// mergeOld adds the old evidence: its sessions' sets and its counts, in the
// ids of the paths still tracked.
func (r *fieldRun) mergeOld() {
	old, fw := r.old, r.fw
	oldID := make([]int64, len(old.Paths))
	for j, p := range old.Paths {
		oldID[j] = -1
		if id, ok := fw.ids[p]; ok {
			oldID[j] = int64(id)
			r.counts[id] += old.Counts[j]
		}
	}
	setOf := make([]int32, len(old.Sets))
	for k, set := range old.Sets {
		r.ids = r.ids[:0]
		for _, j := range set {
			if oldID[j] >= 0 {
				r.ids = append(r.ids, uint32(oldID[j]))
			}
		}
		slices.Sort(r.ids)
		setOf[k] = r.intern(r.ids)
	}
	for si := range r.lg.Sessions {
		if vs, ok := r.oldSets[r.lg.Sessions[si].ID]; ok {
			for i, k := range vs {
				r.visitSet[si][i] = setOf[k]
			}
		}
	}
	r.rep.Records += old.Records
	r.rep.Unreadable += old.Unreadable
	fw.tooLong += old.TooLong
	fw.unnamed += old.Unnamed
}

// assign gives each state the fields on every visit that leaves it, less
// those on every record, and completes the report.
func (r *fieldRun) assign() {
	rep, fw, m := r.rep, r.fw, r.m
	rep.Paths = len(fw.names)
	everywhere := make([]bool, len(fw.names))
	for id := range fw.names {
		if r.counts[id] == rep.Records {
			everywhere[id] = true
			rep.Everywhere++
		}
	}
	type stateSet struct {
		seen bool
		ids  []uint32 // sorted path ids, the intersection so far
	}
	sets := make([]stateSet, len(m.States))
	for si := range r.lg.Sessions {
		for i, st := range r.leaves[si] {
			if st < 0 {
				continue
			}
			set := &sets[st]
			if !set.seen {
				set.seen = true
				set.ids = append([]uint32(nil), r.table[r.visitSet[si][i]]...)
				continue
			}
			set.ids = intersectSorted(set.ids, r.table[r.visitSet[si][i]])
		}
	}
	for i := range m.States {
		var fields []string
		for _, id := range sets[i].ids {
			if !everywhere[id] {
				fields = append(fields, fw.names[id])
			}
		}
		sort.Strings(fields)
		m.States[i].Fields = fields
	}
	rep.TooLong, rep.Unnamed = fw.tooLong, fw.unnamed
	if fw.rejected {
		rep.FirstUntracked = fw.minRejected
		rep.LastTracked = fw.names[fw.largest()]
	}
}

// intersectSorted keeps the ids of a that are in b; both sorted.
func intersectSorted(a, b []uint32) []uint32 {
	out := a[:0]
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			out = append(out, x)
		}
	}
	return out
}

// fieldWalker lists the present leaves of records as path ids. It tracks
// the MaxFieldPaths smallest paths by name: once that many are tracked, a
// smaller new path takes the id of the largest, which is evicted (onEvict
// is called so that every set holding the id lets it go), and a larger one
// is rejected. The largest tracked path only falls, so a path evicted or
// rejected is never tracked again, and a path tracked late was absent from
// every record before it: what is tracked in the end is exact, whatever the
// order of the records, and memory stays bounded whatever the records hold.
type fieldWalker struct {
	core        map[string]bool
	ids         map[string]uint32 // tracked paths
	names       []string          // by id
	top         int               // id of the largest of names once full, or -1 (see largest)
	rejected    bool
	minRejected string
	tooLong     int
	unnamed     int
	onEvict     func(id uint32)

	path  []byte
	key   []byte // an escaped key, unescaped
	stack []byte // skipBrackets' scratch
	emit  func(uint32)
}

func newFieldWalker(core map[string]bool, onEvict func(uint32)) *fieldWalker {
	return &fieldWalker{core: core, ids: map[string]uint32{}, onEvict: onEvict, top: -1}
}

// largest returns the id of the largest tracked path; there must be one.
// It is looked for again only after an eviction, so that a path rejected
// on every record costs a comparison, not a scan of every tracked path.
func (w *fieldWalker) largest() uint32 {
	if w.top < 0 {
		w.top = 0
		for id, name := range w.names {
			if name > w.names[w.top] {
				w.top = id
			}
		}
	}
	return uint32(w.top)
}

func (w *fieldWalker) reject(p string) {
	if !w.rejected || p < w.minRejected {
		w.minRejected = strings.Clone(p)
	}
	w.rejected = true
}

// admit notes the path p (a path an earlier read tracked) as leaf would,
// calling nothing.
func (w *fieldWalker) admit(p string) {
	emit := w.emit
	w.emit = func(uint32) {}
	w.path = append(w.path[:0], p...)
	w.leaf()
	w.emit = emit
}

// leaf notes a present leaf at w.path.
func (w *fieldWalker) leaf() {
	if len(w.path) > MaxFieldPath {
		w.tooLong++
		return
	}
	if len(w.path) == 0 {
		w.unnamed++
		return
	}
	if id, ok := w.ids[string(w.path)]; ok {
		w.emit(id)
		return
	}
	if w.core[string(w.path)] {
		return
	}
	p := string(w.path)
	if len(w.names) < MaxFieldPaths {
		id := uint32(len(w.names))
		w.names = append(w.names, p)
		w.ids[p] = id
		w.emit(id)
		return
	}
	id := w.largest()
	if p > w.names[id] {
		w.reject(p)
		return
	}
	w.reject(w.names[id])
	delete(w.ids, w.names[id])
	w.onEvict(id)
	w.names[id] = p
	w.top = -1
	w.ids[p] = id
	w.emit(id)
}

// errFieldJSON is a record the walk cannot read.
var errFieldJSON = errors.New("not a JSON object")

// walk calls emit with the id of every present leaf of the record line. It
// scans with the read's JSON scanner (jsonscan.go); the line has passed it
// once already, when the record was read.
func (w *fieldWalker) walk(line []byte, emit func(uint32)) error {
	w.emit = emit
	w.path = w.path[:0]
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return errFieldJSON
	}
	_, err := w.object(line, i, 1)
	return err
}

// object walks the object at b[i] ('{'), whose path is w.path, and returns
// the index after it.
func (w *fieldWalker) object(b []byte, i, depth int) (int, error) {
	i++
	base := len(w.path)
	for n := 0; ; n++ {
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, errFieldJSON
		}
		if b[i] == '}' {
			return i + 1, nil
		}
		if n > 0 {
			if b[i] != ',' {
				return i, errFieldJSON
			}
			i = skipSpace(b, i+1)
		}
		if i >= len(b) || b[i] != '"' {
			return i, errFieldJSON
		}
		end, esc, err := scanString(b, i+1)
		if err != nil {
			return i, err
		}
		w.path = w.path[:base]
		if base > 0 {
			w.path = append(w.path, '.')
		}
		if key := b[i+1 : end-1]; !esc && utf8.Valid(key) {
			w.path = append(w.path, key...)
		} else {
			w.key = appendUnescaped(w.key[:0], key)
			w.path = appendValidUTF8(w.path, w.key)
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return i, errFieldJSON
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return i, errFieldJSON
		}
		start := i
		switch c := b[i]; {
		case c == '{' && depth < MaxFieldDepth:
			if i, err = w.object(b, i, depth+1); err != nil {
				return i, err
			}
		case c == '{' || c == '[':
			if i, w.stack, err = skipBrackets(b, i, depth, w.stack[:0]); err != nil {
				return i, err
			}
			if j := skipSpace(b, start+1); b[j] != ']' && b[j] != '}' {
				w.leaf()
			}
		case c == '"':
			if i, _, err = scanString(b, i+1); err != nil {
				return i, err
			}
			if i-start > 2 {
				w.leaf()
			}
		case c == 'n':
			if i, err = scanLiteral(b, i, "null"); err != nil {
				return i, err
			}
		case c == 't' || c == 'f':
			lit := "true"
			if c == 'f' {
				lit = "false"
			}
			if i, err = scanLiteral(b, i, lit); err != nil {
				return i, err
			}
			w.leaf()
		case c == '-' || isDigit(c):
			if i, err = scanNumber(b, i); err != nil {
				return i, err
			}
			w.leaf()
		default:
			return i, errFieldJSON
		}
		w.path = w.path[:base]
	}
}

// appendValidUTF8 appends s with each byte that is not part of valid UTF-8
// as U+FFFD, as encoding/json decodes it: paths are valid UTF-8, as the
// model file writes them, so that a path reads back as it was.
func appendValidUTF8(b, s []byte) []byte {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}
