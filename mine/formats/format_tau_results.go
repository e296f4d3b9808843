package formats

// Reading a tau2 results document one simulation at a time: the document
// is one JSON object, hundreds of megabytes for a large run, and decoded
// whole it took some seven times its size in memory.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/internal/jsondup"
)

// values reads the top-level values of an input that is not one JSON
// array. An object is walked member by member (see tau2Results): one with
// a "simulations" member is a results document, whose simulations are
// converted as they are read; any other is taken whole to item once read.
// s scans the jsonReader's input.
func (t *tauInput) values(s *docScanner) error {
	for {
		c, ok := s.skipSpace()
		if !ok {
			return s.readErr()
		}
		if c != '{' {
			return t.notObject(s)
		}
		if len(t.v1) == 0 {
			// No place before the value is asked for again (those of
			// v1 runs are, once the input is read).
			t.jr.pr.forget(s.off())
		}
		w := &tau2Results{t: t, s: s, start: s.off(), hold: -1}
		if err := w.read(); err != nil {
			return err
		}
	}
}

// notObject reads a top-level value that is no object, which is refused
// once read (or its syntax error reported), as the decoder of a stream of
// values would.
func (t *tauInput) notObject(s *docScanner) error {
	at := s.off()
	dec := json.NewDecoder(io.MultiReader(bytes.NewReader(s.buf[s.i:]), s.r))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return t.jr.errorAt(at+se.Offset-1, "%s", strings.TrimPrefix(se.Error(), "json: "))
		}
		return t.jr.decodeError(err)
	}
	return t.item(raw, at)
}

// tau2Results walks one top-level object. Until a "simulations" member
// comes, the object is kept from its start: without one, it is taken
// whole (item). At "simulations", the members before it are decoded (the
// run's info) and let go, and each simulation is converted as it is read
// and let go: memory follows the largest simulation, not the document.
//
// The members after the array are decoded one at a time. tau2 writes
// "info" before "simulations"; where no "info" comes before them, the
// simulations are kept until the object ends (the info after them names
// their domain and model), taking memory as large as them. A repeated
// "simulations", or an "info" after them that changes the domain or model
// the simulations read already were written with, cannot be honoured as
// the library honours a repeated member (the last wins, objects merge)
// once their records are written: that is an error.
type tau2Results struct {
	t     *tauInput
	s     *docScanner
	start int64 // where the object starts

	results bool // a "simulations" member has been met
	info    tau2Info
	// infoLine, infoCol: where the first "info" member is (0: none
	// before the simulations).
	infoLine, infoCol int
	simsLine, simsCol int // the first "simulations" member
	converted         int // simulations converted as they were read
	// hold is where the simulations kept until the object ends start (-1:
	// none are kept), and held the offsets of each one's start and end.
	hold int64
	held [][2]int64
	// keys are the object's member names so far: one given twice is an
	// error, as jsonReader.unmarshal makes it in any object it decodes;
	// fields the names of the members decoded as its fields (info,
	// simulations) in lower case, to tell one given again in other case.
	keys   map[string]struct{}
	fields map[string]string
}

// read reads the object, from its opening brace.
func (w *tau2Results) read() error {
	s := w.s
	s.keep = w.start
	s.i++
	open := true    // just after the brace
	unit := w.start // where the text since the member before starts
	for {
		if w.results {
			w.keepFrom(unit)
		}
		c, ok := s.skipSpace()
		switch {
		case ok && c == '}' && open:
			s.i++
			return w.end()
		case !ok || c != '"':
			return w.fail(unit)
		}
		keyAt := s.off()
		if _, err := s.skipValue(); err != nil {
			return w.fail(unit)
		}
		name := s.bytes(keyAt, s.off())
		key := tau2Key(name)
		if c, ok = s.skipSpace(); !ok || c != ':' {
			return w.fail(unit)
		}
		if err := w.once(name, keyAt); err != nil {
			return err
		}
		s.i++
		if _, ok = s.skipSpace(); !ok {
			return w.fail(unit)
		}
		if key == "simulations" {
			if err := w.simulations(keyAt); err != nil {
				return err
			}
		} else {
			if key == "info" && !w.results && w.infoLine == 0 {
				w.infoLine, w.infoCol = w.t.jr.pr.pos(keyAt)
			}
			if bad, err := s.skipValue(); bad || err != nil {
				return w.fail(unit)
			}
			if w.results {
				if err := w.after(unit, keyAt); err != nil {
					return err
				}
			}
		}
		unit = s.off()
		c, ok = s.skipSpace()
		switch {
		case ok && c == ',':
			s.i++
			open = false
		case ok && c == '}':
			s.i++
			return w.end()
		default:
			return w.fail(unit)
		}
	}
}

// once refuses a member name, the quoted name at keyAt, that the object has
// given already (or, of a member decoded as a field, in other case), once
// the simulations have begun: before them, the decoding of the members
// before names a key given twice there, in their order (see simulations).
func (w *tau2Results) once(quoted []byte, keyAt int64) error {
	var name string
	if json.Unmarshal(quoted, &name) != nil {
		return nil // not a name: the decoder says why
	}
	if w.keys == nil {
		w.keys = map[string]struct{}{}
	}
	if _, dup := w.keys[name]; dup && w.results {
		return w.t.jr.errorAt(keyAt, "the key %s is given twice", strconv.Quote(name))
	}
	w.keys[name] = struct{}{}
	if field := tau2Key(quoted); field != "" {
		if w.fields == nil {
			w.fields = map[string]string{}
		}
		first, again := w.fields[field]
		if again && first != name && w.results {
			return w.t.jr.errorAt(keyAt, "key %s is in other case: want %s (a decoder takes either; the first: %s)", strconv.Quote(name), strconv.Quote(field), strconv.Quote(first))
		}
		if !again {
			w.fields[field] = name
		}
	}
	return nil
}

// keepFrom lets the scanner go of the input before off, and of none of
// the simulations held.
func (w *tau2Results) keepFrom(off int64) {
	w.s.keep = off
	if w.hold >= 0 {
		w.s.keep = w.hold
	}
}

// fail reports the syntax error the scanner stopped at: of the object from
// its start while it is kept whole, else of the text since the end of the
// member before (from), read on to the byte the scanner stopped at.
func (w *tau2Results) fail(from int64) error {
	if w.results {
		return w.syntaxError(`{"":""`, from)
	}
	return w.syntaxError("", w.start)
}

// syntaxError reports the syntax error of ctx followed by the input from
// from to the byte the scanner stopped at (see jsonReader.syntax).
func (w *tau2Results) syntaxError(ctx string, from int64) error {
	s, jr := w.s, w.t.jr
	if s.err != nil {
		return s.err
	}
	to := min(s.off()+1, s.base+int64(len(s.buf)))
	err := jr.syntax(ctx, s.bytes(from, to), from)
	if err == nil || err == errScanEnd {
		if to == s.base+int64(len(s.buf)) && s.eof {
			return jr.errorAt(jr.pr.n, "the input ends inside a JSON value")
		}
		return jr.errorAt(s.off(), "not JSON where a value, a member or the end of one was expected")
	}
	return err
}

// tau2Key names the member of a results document a member name (as
// written, quotes and escapes included) is taken for: the library matches
// names without regard to case.
func tau2Key(name []byte) string {
	plain := len(name) >= 2
	for _, c := range name {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		switch n := name[1 : len(name)-1]; {
		case bytes.EqualFold(n, []byte("simulations")):
			return "simulations"
		case bytes.EqualFold(n, []byte("info")):
			return "info"
		}
		return ""
	}
	var v struct {
		Info        *int `json:"info"`
		Simulations *int `json:"simulations"`
	}
	b := append(append([]byte("{"), name...), ":0}"...)
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	switch {
	case v.Simulations != nil:
		return "simulations"
	case v.Info != nil:
		return "info"
	}
	return ""
}

// tau2Head is what a results document's members other than "simulations"
// give its records.
type tau2Head struct {
	Info tau2Info `json:"info"`
}

// simulations reads the value of a "simulations" member whose name starts
// at keyAt, the scanner at its value.
func (w *tau2Results) simulations(keyAt int64) error {
	s, jr := w.s, w.t.jr
	if !w.results {
		// The members before: checked and decoded as the object they
		// make, so that errors read as the document's.
		// (closed by a "simulations" member: no member before has that
		// name, so the decoder's check of keys given twice holds)
		head := append(bytes.Clone(s.bytes(w.start, keyAt)), `"simulations":0}`...)
		var h tau2Head
		if err := jr.unmarshal(head, w.start, &h); err != nil {
			return err
		}
		w.info, w.results = h.Info, true
		w.info.seen = w.t.seen
		w.simsLine, w.simsCol = jr.pr.pos(keyAt)
		if w.infoLine == 0 {
			w.hold = keyAt
		}
		w.keepFrom(keyAt)
	} else {
		if w.converted > 0 {
			return jr.errorAt(keyAt, "a second \"simulations\" (the first: line %d, column %d): a results document's simulations are converted as they are read, and only the last array would count", w.simsLine, w.simsCol)
		}
		w.held = w.held[:0]
	}
	if c := s.buf[s.i]; c != '[' {
		// null, or a value that is not an array: as the library takes it.
		if _, err := s.skipValue(); err != nil {
			return w.syntaxError(`{`, keyAt)
		}
		if err := w.check(`{`, keyAt); err != nil {
			return err
		}
		var v struct {
			Simulations []json.RawMessage `json:"simulations"`
		}
		text := append(append([]byte("{"), s.bytes(keyAt, s.off())...), '}')
		return jr.unmarshal(text, keyAt-1, &v)
	}
	return w.elements()
}

// check reports the syntax error, if any, of ctx followed by the input
// from from to the scanner's place and the byte there: the byte after a
// number or literal ends it or is its error.
func (w *tau2Results) check(ctx string, from int64) error {
	s := w.s
	if s.i == len(s.buf) {
		s.more()
	}
	to := min(s.off()+1, s.base+int64(len(s.buf)))
	if err := w.t.jr.syntax(ctx, s.bytes(from, to), from); err != nil && err != errScanEnd {
		return err
	}
	return nil
}

// elements reads the elements of a "simulations" array, from its bracket.
func (w *tau2Results) elements() error {
	s := w.s
	s.i++
	ctx := "[" // the text that puts the parser where the input has it
	for {
		w.keepFrom(s.off())
		c, ok := s.skipSpace()
		if !ok {
			return w.syntaxError(ctx, s.off())
		}
		if c == ']' && ctx == "[" {
			s.i++
			return nil
		}
		at := s.off()
		w.keepFrom(at)
		bad, err := s.skipValue()
		switch {
		case err != nil:
			return w.syntaxError(ctx, at)
		case bad:
			return w.syntaxError("", at)
		case c != '{' && c != '[' && c != '"':
			if err := w.check(ctx, at); err != nil {
				return err
			}
			if s.i == len(s.buf) && !s.more() {
				return w.syntaxError(ctx, at)
			}
		}
		if err := w.sim(at, s.off()); err != nil {
			return err
		}
		if c, ok = s.skipSpace(); ok && c == ']' {
			s.i++
			return nil
		}
		if !ok || c != ',' {
			return w.syntaxError(`[""`, s.off())
		}
		s.i++
		ctx = `["",`
	}
}

// sim converts the simulation read from offset at to end, or holds it
// until the object ends.
func (w *tau2Results) sim(at, end int64) error {
	if w.hold >= 0 {
		// Checked now, so that an error in it comes before any after it.
		if err := w.t.jr.syntax("", w.s.bytes(at, end), at); err != nil && err != errScanEnd {
			return err
		}
		if key, off, twice := jsondup.Twice(w.s.bytes(at, end)); twice {
			return w.t.jr.errorAt(at+int64(off), "the key %s is given twice", strconv.Quote(key))
		}
		w.held = append(w.held, [2]int64{at, end})
		return nil
	}
	t := w.t
	if len(t.v1) == 0 {
		// Nothing before the simulation is placed again (v1 runs read
		// before are, once the input is read).
		t.jr.pr.forget(at)
	}
	w.converted++
	return convertTau2Sim(t.jr, w.s.bytes(at, end), at, "", t.ids, &w.info, t.rw, &t.obj)
}

// after decodes a member that follows the "simulations" array: the text
// from unit (the end of the member before) to the scanner's place, the
// member's name at keyAt.
func (w *tau2Results) after(unit, keyAt int64) error {
	const ctx = `{"simulations":""` // a name once() has taken: no member after it has it
	if err := w.check(ctx, unit); err != nil {
		return err
	}
	s, jr := w.s, w.t.jr
	text := append(append([]byte(ctx), s.bytes(unit, s.off())...), '}')
	h := tau2Head{Info: w.info}
	if err := jr.unmarshal(text, unit-int64(len(ctx)), &h); err != nil {
		return err
	}
	h.Info.seen = w.info.seen
	if w.converted > 0 && (h.Info.AgentInfo.LLM != w.info.AgentInfo.LLM || h.Info.EnvironmentInfo.DomainName != w.info.EnvironmentInfo.DomainName) {
		first := ""
		if w.infoLine > 0 {
			first = fmt.Sprintf(" (the first: line %d, column %d)", w.infoLine, w.infoCol)
		}
		return jr.errorAt(keyAt, "an \"info\" after \"simulations\" that changes the domain or model of the simulations before it%s: a results document's simulations are converted as they are read", first)
	}
	w.info = h.Info
	return nil
}

// end finishes the object, the scanner past its closing brace: one without
// "simulations" is taken whole; the simulations held are converted.
func (w *tau2Results) end() error {
	s, t := w.s, w.t
	defer func() { s.keep = s.off() }()
	if !w.results {
		return t.item(s.bytes(w.start, s.off()), w.start)
	}
	for _, h := range w.held {
		if err := convertTau2Sim(t.jr, s.bytes(h[0], h[1]), h[0], "", t.ids, &w.info, t.rw, &t.obj); err != nil {
			return err
		}
	}
	return nil
}
