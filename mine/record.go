package mine

import (
	"encoding/binary"
	"fmt"
	"github.com/fsmine/fsmine/mine/formats"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/fsmine/fsmine/automaton"

	"github.com/fsmine/fsmine/internal/timeparse"
)

// Field names of fsmine's record format. Fields maps each to the dotted path
// it is read from in the input; a log that names things differently remaps
// them (--field session_id=conversation_id).
const (
	FieldSession  = formats.FieldSession
	FieldNode     = formats.FieldNode
	FieldEvent    = formats.FieldEvent
	FieldStep     = formats.FieldStep
	FieldTime     = formats.FieldTime
	FieldDuration = formats.FieldDuration
)

var coreFields = []string{FieldSession, FieldNode, FieldEvent, FieldStep, FieldTime, FieldDuration}

// ParseFieldMap turns "name=path" pairs into a field map, checking that each
// name is one of the record's fields and each path a dotted path.
func ParseFieldMap(pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, p := range pairs {
		name, path, ok := strings.Cut(p, "=")
		if !ok || path == "" {
			return nil, fmt.Errorf("--field %q: want NAME=PATH, e.g. session_id=conversation_id", p)
		}
		if err := CheckFieldMap(map[string]string{name: path}); err != nil {
			return nil, fmt.Errorf("--field %q: %w", p, err)
		}
		m[name] = path
	}
	return m, nil
}

// CheckFieldMap checks a field map (ReadOptions.Fields, a model's
// params.fields): each name one of the record's fields, each path a dotted
// path of names.
func CheckFieldMap(fields map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(coreFields, name) {
			return fmt.Errorf("%q is not a record field (want one of %s)", name, strings.Join(coreFields, ", "))
		}
		if path := fields[name]; path == "" || slices.Contains(strings.Split(path, "."), "") {
			return fmt.Errorf("%s: path %q: want names joined by dots, e.g. attrs.conversation_id", name, path)
		}
	}
	return nil
}

// parser turns one JSONL line into a labelled record. It is not safe for
// concurrent use; each worker has its own.
type parser struct {
	x     *extractor
	arena []byte // backs the strings of parsed records; see str
	data  []byte // the chunk being parsed, whose strings are not copied
	vals  []value
	paths []string       // all extracted paths: core fields first, then rule fields
	pos   map[string]int // path -> index into vals
	rules *Rules
}

func newParser(fields map[string]string, rules *Rules) (*parser, error) {
	p := &parser{rules: rules, pos: map[string]int{}}
	// The core fields hold slots 0 to 5, in coreFields' order, whatever
	// their paths: parse reads them by position, and two fields may read
	// one path (--field ts=step). A rule path is added once.
	for _, f := range coreFields {
		path := f
		if mapped, ok := fields[f]; ok {
			path = mapped
		}
		if _, ok := p.pos[path]; !ok {
			p.pos[path] = len(p.paths)
		}
		p.paths = append(p.paths, path)
	}
	if rules != nil {
		for _, path := range rules.Paths() {
			if _, ok := p.pos[path]; !ok {
				p.pos[path] = len(p.paths)
				p.paths = append(p.paths, path)
			}
		}
	}
	x, err := newExtractor(p.paths)
	if err != nil {
		return nil, err
	}
	p.x = x
	p.vals = make([]value, len(p.paths))
	return p, nil
}

// rec is a parsed, labelled record before sessions are formed.
type rec struct {
	session  string
	node     string
	label    string
	event    string
	step     int64
	ts       int64 // Unix nanoseconds
	dur      float64
	hasStep  bool
	hasTS    bool
	hasDur   bool
	drop     bool
	fold     bool
	detour   bool
	hash     uint64
	fileLine int
	// at is the input's line of the record where an importer wrote it
	// (fileLine is then the line of the importer's output), else fileLine.
	at int
}

// badRecord is input that cannot be used: its line and why.
type badRecord struct{ msg string }

func (e *badRecord) Error() string { return e.msg }

func bad(format string, args ...any) error { return &badRecord{fmt.Sprintf(format, args...)} }

// str returns b as a string. Bytes of the chunk being parsed (data, which
// the read keeps until the shards have taken the chunk's records) are used
// where they are; others (unescaped strings, or lines parsed outside a
// chunk) are copied into the parser's arena. Arena blocks are never reused
// or moved, so the strings stay valid; whoever keeps one beyond the chunk
// (the Log's name table, a shard's session ids) clones it, so that a block
// or a chunk's buffer is freed once its chunk is consumed. It saves an
// allocation per field per record.
func (p *parser) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if off := uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(p.data))); off < uintptr(len(p.data)) {
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
	if len(b) > cap(p.arena)-len(p.arena) {
		p.arena = make([]byte, 0, max(32<<10, len(b)))
	}
	start := len(p.arena)
	p.arena = append(p.arena, b...)
	return unsafe.String(&p.arena[start], len(b))
}

// parse fills r from line. It returns a *badRecord error for input that
// breaks the record format, and errUnmatched where the rules require a
// match. Strings in r live in the parser's arena or in p.data (see str).
func (p *parser) parse(line []byte, r *rec) error {
	if err := p.x.extract(line, p.vals); err != nil {
		return bad("%v", err)
	}
	v := p.vals
	// session_id: a string, or a number taken as its text.
	switch v[0].kind {
	case kindString:
		if len(v[0].raw) == 0 {
			return bad("%s is empty", p.paths[0])
		}
		if v[0].high && !utf8.Valid(v[0].raw) {
			return bad("%s is not valid UTF-8", p.paths[0])
		}
		r.session = p.str(v[0].raw)
	case kindNumber:
		r.session = p.str(v[0].raw)
	case kindMissing:
		return bad("missing %s", p.paths[0])
	default:
		return bad("%s is %s, want a string", p.paths[0], kindName(v[0].kind))
	}
	switch v[1].kind {
	case kindString:
		if len(v[1].raw) == 0 {
			return bad("%s is empty", p.paths[1])
		}
		if v[1].high && !utf8.Valid(v[1].raw) {
			return bad("%s is not valid UTF-8", p.paths[1])
		}
		r.node = p.str(v[1].raw)
	case kindMissing:
		return bad("missing %s", p.paths[1])
	default:
		return bad("%s is %s, want a string", p.paths[1], kindName(v[1].kind))
	}
	switch v[2].kind {
	case kindString:
		if v[2].high && !utf8.Valid(v[2].raw) {
			return bad("%s is not valid UTF-8", p.paths[2])
		}
		r.event = p.str(v[2].raw)
	case kindMissing, kindNull:
		r.event = ""
	default:
		return bad("%s is %s, want a string", p.paths[2], kindName(v[2].kind))
	}
	r.hasStep, r.hasTS, r.hasDur = false, false, false
	switch v[3].kind {
	case kindNumber:
		n, ok := smallInt(v[3].raw)
		if !ok {
			var err error
			if n, err = strconv.ParseInt(view(v[3].raw), 10, 64); err != nil {
				return bad("%s is %s, want an integer", p.paths[3], v[3].raw)
			}
		}
		r.step, r.hasStep = n, true
	case kindMissing, kindNull:
	default:
		return bad("%s is %s, want an integer", p.paths[3], kindName(v[3].kind))
	}
	switch v[4].kind {
	case kindString:
		t, err := timeparse.Parse(view(v[4].raw))
		if err != nil {
			return bad("%s %q: %v", p.paths[4], v[4].raw, err)
		}
		r.ts, r.hasTS = t, true
	case kindNumber:
		t, err := timeparse.Number(view(v[4].raw))
		if err != nil {
			return bad("%s is %s: %v", p.paths[4], v[4].raw, err)
		}
		r.ts, r.hasTS = t, true
	case kindMissing, kindNull:
	default:
		return bad("%s is %s, want RFC 3339 text or a Unix time", p.paths[4], kindName(v[4].kind))
	}
	switch v[5].kind {
	case kindNumber:
		var f float64
		var err error
		if n, ok := smallInt(v[5].raw); ok && v[5].raw[0] != '-' {
			f = float64(n) // exact (below 2^53), as ParseFloat gives it
		} else {
			f, err = strconv.ParseFloat(view(v[5].raw), 64)
		}
		if err != nil || f < 0 || math.IsInf(f, 0) {
			return bad("%s is %s, want a number of milliseconds", p.paths[5], v[5].raw)
		}
		// A model holds no dwell of 2^63 ms or more (automaton.Dwell),
		// and records keep durations as float32 (see rawStep), which
		// rounds some below 2^63 up to it.
		if f >= 1<<63 || float32(f) >= 1<<63 {
			return bad("%s is %s, more milliseconds than fsmine keeps (under 2^63)", p.paths[5], v[5].raw)
		}
		r.dur, r.hasDur = f, true
	case kindMissing, kindNull:
	default:
		return bad("%s is %s, want a number", p.paths[5], kindName(v[5].kind))
	}
	res, err := p.rules.apply(r.node, p.get)
	if err != nil {
		return err
	}
	r.drop = res.act == actDrop
	r.label, r.fold, r.detour = res.label, res.fold, res.detour
	if !r.drop && r.label == automaton.EndID && r.node == automaton.EndID {
		// An explicit end-of-session record (fsmine serve logs one): the
		// model adds the end itself, so it is dropped, and counted so.
		r.drop = true
	}
	if !r.drop {
		if r.label == "" {
			return bad("label rules give node %q an empty state", r.node)
		}
		if isReserved(r.label) {
			return bad("state %q is reserved for the model's pseudo-states", r.label)
		}
	}
	r.hash = hashLine(line)
	return nil
}

// view is b as a string without a copy, for parsing functions that keep
// nothing of it (an error that quotes it is formatted before b changes).
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// smallInt reads a JSON number that is a plain integer of at most 18
// digits (what strconv.ParseInt reads alike); anything else is !ok.
func smallInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func (p *parser) get(path string) (string, bool) {
	i, ok := p.pos[path]
	if !ok {
		return "", false
	}
	switch p.vals[i].kind {
	case kindMissing:
		return "", false
	}
	return string(p.vals[i].raw), true
}

func kindName(k valueKind) string {
	switch k {
	case kindString:
		return "a string"
	case kindNumber:
		return "a number"
	case kindBool:
		return "a boolean"
	case kindNull:
		return "null"
	case kindObject:
		return "an object"
	case kindArray:
		return "an array"
	}
	return "missing"
}

// hashLine hashes the line with surrounding white space trimmed: two
// records are duplicates when their lines hash alike and their parsed fields
// agree. It is XXH64 (seed 0): four lanes of eight bytes a round, so that a
// line of a few hundred bytes takes a few dozen cycles; fixed, so the same
// input gives the same result on every run.
func hashLine(b []byte) uint64 {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	const (
		p1 uint64 = 11400714785074694791
		p2 uint64 = 14029467366897019727
		p3 uint64 = 1609587929392839161
		p4 uint64 = 9650029242287828579
		p5 uint64 = 2870177450012600261
	)
	round := func(acc, in uint64) uint64 {
		acc += in * p2
		acc = bits.RotateLeft64(acc, 31)
		return acc * p1
	}
	merge := func(acc, v uint64) uint64 {
		acc ^= round(0, v)
		return acc*p1 + p4
	}
	n := uint64(len(b))
	var h uint64
	if len(b) >= 32 {
		q1 := p1 // wrapping arithmetic, as XXH64's seeding is
		v1, v2, v3, v4 := q1+p2, p2, uint64(0), -q1
		for len(b) >= 32 {
			v1 = round(v1, binary.LittleEndian.Uint64(b))
			v2 = round(v2, binary.LittleEndian.Uint64(b[8:]))
			v3 = round(v3, binary.LittleEndian.Uint64(b[16:]))
			v4 = round(v4, binary.LittleEndian.Uint64(b[24:]))
			b = b[32:]
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = merge(h, v1)
		h = merge(h, v2)
		h = merge(h, v3)
		h = merge(h, v4)
	} else {
		h = p5
	}
	h += n
	for ; len(b) >= 8; b = b[8:] {
		h ^= round(0, binary.LittleEndian.Uint64(b))
		h = bits.RotateLeft64(h, 27)*p1 + p4
	}
	if len(b) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(b)) * p1
		h = bits.RotateLeft64(h, 23)*p2 + p3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * p5
		h = bits.RotateLeft64(h, 11) * p1
	}
	h ^= h >> 33
	h *= p2
	h ^= h >> 29
	h *= p3
	h ^= h >> 32
	return h
}
