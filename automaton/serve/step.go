package serve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/guard"
	"github.com/fsmine/fsmine/internal/jsondup"
)

// The step route is the service's hot path: an agent waits on it before
// every move. Its request and answer are read and written by hand here
// rather than through reflection, and its buffers are pooled, because on a
// small machine the garbage of each request (35 allocations before this)
// came back as collector pauses in the latency tail. Everything else the
// service answers goes through json.Marshal.

// maxStepBody bounds a step request's body.
const maxStepBody = 64 << 10

var errStepTooLarge = fmt.Errorf("step body is larger than %d bytes", maxStepBody)

// stepBuffers hold a step's body and then its answer.
var stepBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// readStepBody appends what r yields to b, at most maxStepBody bytes; more
// is errStepTooLarge.
func readStepBody(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) > maxStepBody {
			return b, errStepTooLarge
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		// read no further than one byte past the limit, however large a
		// pooled buffer has grown
		n, err := r.Read(b[len(b):min(cap(b), maxStepBody+1)])
		b = b[:len(b)+n]
		if err == io.EOF {
			if len(b) > maxStepBody {
				return b, errStepTooLarge
			}
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// names interns the strings that step requests repeat: the model's state
// labels and ids and its events, and the policy's slot names, so that
// reading a step allocates no string for them.
type names map[string]string

func newNames(m *automaton.Model, p *guard.Policy) names {
	n := make(names, 2*len(m.States)+len(m.Transitions))
	for _, s := range m.States {
		n[s.ID], n[s.Label] = s.ID, s.Label
	}
	for _, t := range m.Transitions {
		n[t.Event] = t.Event
	}
	if p != nil {
		for _, sp := range p.Slots {
			n[sp.Name] = sp.Name
		}
		for _, st := range p.States {
			for _, sp := range st.RequiredSlots {
				n[sp.Name] = sp.Name
			}
		}
	}
	return n
}

// slotBuffers hold a step's slots.
var slotBuffers = sync.Pool{New: func() any { s := make([]guard.Slot, 0, 8); return &s }}

// putSlots returns a slots buffer to its pool, without the strings it held.
func putSlots(b *[]guard.Slot) {
	clear(*b)
	*b = (*b)[:0]
	slotBuffers.Put(b)
}

// readStep reads a step body: by parseStep when it can (fast is true: the
// strings returned do not share body's memory), else by decodeStep,
// decodeSlots and decodeCall. slots, appended to buf, are sorted by name;
// call is nil unless the body has "args" or "seen".
func readStep(body []byte, n names, buf []guard.Slot) (event, next string, slots []guard.Slot, call *guard.Call, fast bool, err error) {
	if event, next, slots, ok := parseStep(body, n, buf); ok {
		if err := checkFields(event, next, slots, n); err != nil {
			return "", "", buf, nil, false, err
		}
		return event, next, slots, nil, true, nil
	}
	if err := checkKeys(body); err != nil {
		return "", "", buf, nil, false, err
	}
	req, err := decodeStep(body)
	if err != nil {
		return "", "", buf, nil, false, err
	}
	if slots, err = decodeSlots(req.Slots, buf); err != nil {
		return "", "", buf, nil, false, err
	}
	if call, err = decodeCall(req.Args, req.Seen, n); err != nil {
		return "", "", buf, nil, false, err
	}
	if err := checkFields(*req.Event, *req.Next, slots, n); err != nil {
		return "", "", buf, nil, false, err
	}
	return *req.Event, *req.Next, slots, call, false, nil
}

// The longest "next" or "event" a step may give that is none of the
// model's names, and the longest slot value: a session keeps them (its
// history, its slots), so they bound its memory.
const (
	maxName      = 1024
	maxSlotValue = 4096
)

// checkFields refuses what a session would keep and should not: a "next"
// or "event" that is none of the model's names and is longer than maxName,
// not UTF-8 or holds a control character; a slot value longer than
// maxSlotValue or not UTF-8.
func checkFields(event, next string, slots []guard.Slot, n names) error {
	for _, f := range [...]struct{ name, v string }{{"next", next}, {"event", event}} {
		if _, known := n[f.v]; known {
			continue
		}
		if len(f.v) > maxName {
			return fmt.Errorf("bad step body: %q is %d bytes long, at most %d allowed for a name the model does not have", f.name, len(f.v), maxName)
		}
		if err := badText(f.v); err != "" {
			return fmt.Errorf("bad step body: %q %s", f.name, err)
		}
	}
	for _, sl := range slots {
		if len(sl.Value) > maxSlotValue {
			return fmt.Errorf("bad step body: slots[%s] is %d bytes long, at most %d allowed", strconv.Quote(sl.Name), len(sl.Value), maxSlotValue)
		}
		// JSON carries a slot's control characters (an ANSI colour in a
		// tool's output) into the log; only broken UTF-8 it cannot.
		if !utf8.ValidString(sl.Value) {
			return fmt.Errorf("bad step body: slots[%s] is not valid UTF-8", strconv.Quote(sl.Name))
		}
	}
	return nil
}

// badText says what is wrong with s as a name, or "": not UTF-8, or a
// control character.
func badText(s string) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return fmt.Sprintf("holds the control character %U", r)
		}
	}
	return ""
}

// checkKeys reads the top level of a step body that the fast path did not
// take, so that what the decoder would forgive is an error: a key given
// twice, a key in other case or unknown, a value of the wrong type (in
// words, not Go's). A null is left to decodeStep, which words it.
func checkKeys(body []byte) error {
	const want = `want {"event": "...", "next": "..."}`
	if !utf8.Valid(body) { // the decoder would make U+FFFD of it
		return errors.New("bad step body: not valid UTF-8")
	}
	if err := jsondup.Text(body); err != nil { // U+FFFD too, of half a surrogate pair
		return fmt.Errorf("bad step body: %s", strings.TrimPrefix(err.Error(), "line 1: "))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		if len(bytes.TrimSpace(body)) == 0 {
			return errors.New("empty step body: " + want)
		}
		return fmt.Errorf("bad step body: %v; %s", err, want)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("bad step body: %s; %s", tokenType(tok), want)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("bad step body: %v; %s", err, want)
		}
		key, _ := tok.(string)
		var kind byte // the first byte the value must have
		switch key {
		case "event", "next":
			kind = '"'
		case "slots", "args", "seen":
			kind = '{'
		default:
			return fmt.Errorf("bad step body: unknown field %s (the fields are event, next, slots, args and seen); %s", strconv.Quote(key), want)
		}
		if seen[key] {
			return fmt.Errorf("bad step body: %q is given twice", key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("bad step body: %q: %v", key, err)
		}
		// an object's own decoder words its errors (decodeSlots, decodeCall)
		if c := raw[0]; kind == '"' && c != kind && c != 'n' {
			what := map[byte]string{'"': "a string", '{': "an object", '[': "an array", 't': "a bool", 'f': "a bool"}[c]
			if what == "" {
				what = "a number"
			}
			return fmt.Errorf("bad step body: %q is %s; want a string", key, what)
		}
	}
	return nil
}

type stepRequest struct {
	Event *string         `json:"event"`
	Next  *string         `json:"next"`
	Slots json.RawMessage `json:"slots"` // read by decodeSlots
	Args  json.RawMessage `json:"args"`  // read by decodeCall
	Seen  json.RawMessage `json:"seen"`  // read by decodeCall
}

// decodeCall reads a step's "args" (the proposed call's arguments: an
// object, read by automaton.FlattenArgs) and "seen" (the text that entered
// the session since the last step: an object from the label of the step
// that brought it to a string), for the model's argument rules; nil when
// the body has neither. A label of seen that is none of n is held to what
// checkFields asks of a name.
func decodeCall(args, seen json.RawMessage, n names) (*guard.Call, error) {
	if args == nil && seen == nil {
		return nil, nil
	}
	call := &guard.Call{}
	if args != nil {
		if k := bytes.TrimSpace(args); string(k) == "null" {
			return nil, errors.New(`bad step body: "args" is null: want the call's arguments, {"name": value, ...} (or leave it out)`)
		} else if len(k) > 0 && k[0] != '{' {
			return nil, errors.New(`bad step body: "args" is not an object: want the call's arguments, {"name": value, ...}`)
		}
		// A key given twice would let the guard judge one value while the
		// tool, reading the last, acts on another.
		if err := jsondup.Check(args); err != nil {
			return nil, fmt.Errorf("bad step body: args: %v", err)
		}
		var err error
		if call.Args, err = automaton.FlattenArgs(args); err != nil {
			return nil, fmt.Errorf("bad step body: args: %v", err)
		}
	}
	if seen != nil {
		const want = `want {"label of the step that brought it": "text", ...}`
		if string(bytes.TrimSpace(seen)) == "null" {
			return nil, errors.New(`bad step body: "seen" is null: ` + want + ` (or leave it out)`)
		}
		if err := jsondup.Check(seen); err != nil {
			return nil, fmt.Errorf("bad step body: seen: %v", err)
		}
		var texts map[string]string
		if err := json.Unmarshal(seen, &texts); err != nil {
			return nil, errors.New(`bad step body: "seen" is not an object of strings: ` + want)
		}
		for label, text := range texts {
			call.Seen = append(call.Seen, guard.SeenText{Label: label, Text: text})
		}
		sort.Slice(call.Seen, func(i, j int) bool { return call.Seen[i].Label < call.Seen[j].Label })
		for _, st := range call.Seen {
			if _, known := n[st.Label]; known {
				continue
			}
			if len(st.Label) > maxName {
				return nil, fmt.Errorf("bad step body: seen[%s] is a label %d bytes long, at most %d allowed for a name the model does not have", strconv.Quote(shortPath(st.Label)), len(st.Label), maxName)
			}
			if err := badText(st.Label); err != "" {
				return nil, fmt.Errorf("bad step body: seen[%s]: the label %s", strconv.Quote(st.Label), err)
			}
		}
	}
	return call, nil
}

// decodeStep reads a step request: one JSON object with a string "next"
// (required, not empty) and a string "event" (optional, default ""), and no
// other field.
func decodeStep(body []byte) (stepRequest, error) {
	var req stepRequest
	if len(bytes.TrimSpace(body)) == 0 {
		return req, errors.New(`empty step body: want {"event": "...", "next": "..."}`)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf(`bad step body: %v; want {"event": "...", "next": "..."}`, err)
	}
	if dec.More() {
		return req, errors.New("bad step body: more than one JSON value")
	}
	if req.Next == nil || *req.Next == "" {
		return req, errors.New(`bad step body: "next" is required: the label or id of the proposed next state`)
	}
	if req.Event == nil && bytes.Contains(body, []byte("null")) {
		// null decodes as an absent event; an event, when given, is a string
		var keys map[string]json.RawMessage
		if json.Unmarshal(body, &keys) == nil {
			for k, v := range keys {
				if strings.EqualFold(k, "event") && string(bytes.TrimSpace(v)) == "null" {
					return req, errors.New(`bad step body: "event" is null: want a string (or leave it out)`)
				}
			}
		}
	}
	if req.Event == nil {
		req.Event = new(string)
	}
	return req, nil
}

// decodeSlots reads a step's "slots": absent, or an object whose values are
// strings, numbers or bools, each name once. Errors name the slot.
func decodeSlots(raw json.RawMessage, buf []guard.Slot) ([]guard.Slot, error) {
	if raw == nil {
		return buf, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return buf, fmt.Errorf("bad step body: slots: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return buf, fmt.Errorf("bad step body: slots is %s; want an object of strings, numbers and bools", tokenType(tok))
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return buf, fmt.Errorf("bad step body: slots: %v", err)
		}
		// the session keeps slots: clone them, lest they pin the body
		name, _ := tok.(string)
		name = strings.Clone(name)
		sl := guard.Slot{Name: name}
		path := "slots[" + strconv.Quote(name) + "]"
		if tok, err = dec.Token(); err != nil {
			return buf, fmt.Errorf("bad step body: %s: %v", path, err)
		}
		switch v := tok.(type) {
		case string:
			sl.Value = strings.Clone(v)
		case json.Number:
			sl.Value, sl.Kind = strings.Clone(v.String()), guard.SlotNumber
		case bool:
			sl.Value, sl.Kind = strconv.FormatBool(v), guard.SlotBool
		default:
			return buf, fmt.Errorf("bad step body: %s is %s; want a string, number or bool", path, tokenType(tok))
		}
		buf = append(buf, sl)
	}
	sortSlots(buf)
	if name, dup := twice(buf); dup {
		return buf, fmt.Errorf("bad step body: slots[%s] is given twice", strconv.Quote(name))
	}
	return buf, nil
}

func tokenType(tok json.Token) string {
	switch tok {
	case json.Delim('{'):
		return "an object"
	case json.Delim('['):
		return "an array"
	case nil:
		return "null"
	}
	switch tok.(type) {
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a bool"
	}
	return fmt.Sprintf("%v", tok)
}

// sortSlots sorts a step's few slots by name, in place (insertion sort: no
// allocation).
func sortSlots(s []guard.Slot) {
	if len(s) > 16 { // a hostile body's thousands of slots: no quadratic sort
		slices.SortStableFunc(s, func(a, b guard.Slot) int { return strings.Compare(a.Name, b.Name) })
		return
	}
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].Name < s[j-1].Name; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// twice returns the first slot name given twice in s, sorted by name.
func twice(s []guard.Slot) (string, bool) {
	for i := 1; i < len(s); i++ {
		if s[i].Name == s[i-1].Name {
			return s[i].Name, true
		}
	}
	return "", false
}

// stepSlotError words the guard's refusal of a step's slots.
func stepSlotError(err error) string {
	var se *guard.SlotError
	if errors.As(err, &se) {
		return fmt.Sprintf("bad step body: slots[%s]: %v", strconv.Quote(se.Name), se.Err)
	}
	return "bad step body: " + err.Error()
}

func (n names) get(b []byte) string {
	if s, ok := n[string(b)]; ok {
		return s
	}
	return string(b)
}

// parseStep reads the step body agents send, {"event": "...", "next": "..."}
// with the keys in any order, "event" optional, white space anywhere JSON
// allows it, and strings of printable ASCII without escapes, and with an
// optional "slots" object whose values are such strings, numbers or bools
// (appended to buf, sorted by name). ok is false for any other body, which
// decodeStep then reads in full (and explains, if it is wrong): an escape,
// another or a repeated key, a key in other case, a missing or empty
// "next", anything after the object, a slot value of another type. For
// every body it accepts, it returns what readStep's slow path does.
func parseStep(body []byte, n names, buf []guard.Slot) (event, next string, slots []guard.Slot, ok bool) {
	sc := stepScanner{body: body}
	slots = buf
	fail := func() (string, string, []guard.Slot, bool) { return "", "", buf[:0], false }
	if !sc.expect('{') {
		return fail()
	}
	var seenEvent, seenNext, seenSlots bool
	for {
		sc.space()
		key, good := sc.str()
		if !good || !sc.expect(':') {
			return fail()
		}
		sc.space()
		if string(key) == "slots" && !seenSlots {
			seenSlots = true
			if slots, good = sc.slotObject(n, slots); !good {
				return fail()
			}
		} else {
			val, good := sc.str()
			if !good {
				return fail()
			}
			switch {
			case string(key) == "event" && !seenEvent:
				seenEvent, event = true, n.get(val)
			case string(key) == "next" && !seenNext && len(val) > 0:
				seenNext, next = true, n.get(val)
			default:
				return fail()
			}
		}
		if sc.expect('}') {
			break
		}
		if !sc.expect(',') {
			return fail()
		}
	}
	sc.space()
	if sc.i != len(body) || !seenNext {
		return fail()
	}
	sortSlots(slots)
	if _, dup := twice(slots); dup {
		return fail()
	}
	return event, next, slots, true
}

// stepScanner reads the fast path's JSON: body from position i on.
type stepScanner struct {
	body []byte
	i    int
}

func (sc *stepScanner) space() {
	for sc.i < len(sc.body) && (sc.body[sc.i] == ' ' || sc.body[sc.i] == '\t' || sc.body[sc.i] == '\n' || sc.body[sc.i] == '\r') {
		sc.i++
	}
}

// str reads a string without escapes, control characters or non-ASCII
// bytes (the fast path leaves those to the decoder).
func (sc *stepScanner) str() ([]byte, bool) {
	body := sc.body
	if sc.i >= len(body) || body[sc.i] != '"' {
		return nil, false
	}
	sc.i++
	start := sc.i
	for ; sc.i < len(body); sc.i++ {
		c := body[sc.i]
		if c == '"' {
			sc.i++
			return body[start : sc.i-1], true
		}
		if c < 0x20 || c == '\\' || c >= 0x80 {
			return nil, false
		}
	}
	return nil, false
}

// expect skips white space and reads c, if it comes next.
func (sc *stepScanner) expect(c byte) bool {
	sc.space()
	if sc.i < len(sc.body) && sc.body[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

func (sc *stepScanner) digits() bool {
	s := sc.i
	for sc.i < len(sc.body) && sc.body[sc.i] >= '0' && sc.body[sc.i] <= '9' {
		sc.i++
	}
	return sc.i > s
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (sc *stepScanner) number() ([]byte, bool) {
	body, start := sc.body, sc.i
	if sc.i < len(body) && body[sc.i] == '-' {
		sc.i++
	}
	if sc.i < len(body) && body[sc.i] == '0' {
		sc.i++
	} else if !sc.digits() {
		return nil, false
	}
	if sc.i < len(body) && body[sc.i] == '.' {
		sc.i++
		if !sc.digits() {
			return nil, false
		}
	}
	if sc.i < len(body) && (body[sc.i] == 'e' || body[sc.i] == 'E') {
		sc.i++
		if sc.i < len(body) && (body[sc.i] == '+' || body[sc.i] == '-') {
			sc.i++
		}
		if !sc.digits() {
			return nil, false
		}
	}
	return body[start:sc.i], true
}

func (sc *stepScanner) word(w string) bool {
	if len(sc.body)-sc.i >= len(w) && string(sc.body[sc.i:sc.i+len(w)]) == w {
		sc.i += len(w)
		return true
	}
	return false
}

// slotObject reads the "slots" object, appending to slots (parseStep
// fails a slot named twice, once they are sorted).
func (sc *stepScanner) slotObject(n names, slots []guard.Slot) ([]guard.Slot, bool) {
	if !sc.expect('{') {
		return slots, false
	}
	if sc.expect('}') {
		return slots, true
	}
	for {
		sc.space()
		key, good := sc.str()
		if !good || !sc.expect(':') {
			return slots, false
		}
		sl := guard.Slot{Name: n.get(key)}
		sc.space()
		switch {
		case sc.i < len(sc.body) && sc.body[sc.i] == '"':
			val, good := sc.str()
			if !good {
				return slots, false
			}
			sl.Value = string(val)
		case sc.word("true"):
			sl.Value, sl.Kind = "true", guard.SlotBool
		case sc.word("false"):
			sl.Value, sl.Kind = "false", guard.SlotBool
		default:
			val, good := sc.number()
			if !good {
				return slots, false
			}
			sl.Value, sl.Kind = string(val), guard.SlotNumber
		}
		slots = append(slots, sl)
		if sc.expect('}') {
			return slots, true
		}
		if !sc.expect(',') {
			return slots, false
		}
	}
}

// appendDecision appends d as JSON, byte for byte as json.Marshal writes it
// (TestAppendDecision holds the two equal).
func appendDecision(b []byte, d *guard.Decision) []byte {
	b = append(b, `{"session_id":`...)
	b = appendAnswerString(b, d.Session)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(d.Step), 10)
	b = append(b, `,"allowed":`...)
	b = strconv.AppendBool(b, d.Allowed)
	b = append(b, `,"reason":`...)
	b = appendAnswerString(b, d.Reason)
	b = append(b, `,"state":`...)
	b = appendAnswerString(b, d.State)
	b = append(b, `,"label":`...)
	b = appendAnswerString(b, d.Label)
	b = append(b, `,"rare":`...)
	b = strconv.AppendBool(b, d.Rare)
	b = append(b, `,"prob":`...)
	b = appendJSONFloat(b, d.Prob)
	b = append(b, `,"next_moves":`...)
	if d.NextMoves == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range d.NextMoves {
			m := &d.NextMoves[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"event":`...)
			b = appendAnswerString(b, m.Event)
			b = append(b, `,"to":`...)
			b = appendAnswerString(b, m.To)
			b = append(b, `,"label":`...)
			b = appendAnswerString(b, m.Label)
			b = append(b, `,"prob":`...)
			b = appendJSONFloat(b, m.Prob)
			b = append(b, `,"rare":`...)
			b = strconv.AppendBool(b, m.Rare)
			if m.Generalized {
				b = append(b, `,"generalized":true`...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if fb := d.Fallback; fb != nil {
		b = append(b, `,"fallback":{"event":`...)
		b = appendAnswerString(b, fb.Event)
		b = append(b, `,"to":`...)
		b = appendAnswerString(b, fb.To)
		if fb.Label != "" {
			b = append(b, `,"label":`...)
			b = appendAnswerString(b, fb.Label)
		}
		b = append(b, '}')
	}
	for _, l := range []struct {
		key   string
		names []string
	}{{`,"missing_slots":[`, d.MissingSlots}, {`,"invalid_slots":[`, d.InvalidSlots}} {
		if len(l.names) == 0 {
			continue
		}
		b = append(b, l.key...)
		for i, n := range l.names {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendAnswerString(b, n)
		}
		b = append(b, ']')
	}
	if d.Condition != "" {
		b = append(b, `,"condition":`...)
		b = appendAnswerString(b, d.Condition)
	}
	if d.Generalized {
		b = append(b, `,"generalized":true`...)
	}
	if a := d.Arg; a != nil {
		b = append(b, `,"arg":{"kind":`...)
		b = appendAnswerString(b, a.Kind)
		b = append(b, `,"tool":`...)
		b = appendAnswerString(b, a.Tool)
		b = append(b, `,"arg":`...)
		b = appendAnswerString(b, a.Arg)
		b = append(b, '}')
	}
	if d.Instructions != "" {
		b = append(b, `,"instructions":`...)
		b = appendAnswerString(b, d.Instructions)
	}
	b = append(b, `,"surprise":`...)
	b = appendJSONFloat(b, d.Surprise)
	b = append(b, `,"risk":`...)
	b = appendJSONFloat(b, d.Risk)
	if d.Map != "" {
		b = append(b, `,"map":`...)
		b = appendAnswerString(b, d.Map)
	}
	return append(b, '}')
}

// appendJSONFloat appends f as json.Marshal writes a float64.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-07 -> e-7, as json.Marshal writes it
		b = b[:n-1]
	}
	return b
}
