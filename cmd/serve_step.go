package cmd

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
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
// labels and ids and its events, so that reading a step allocates no string
// for them.
type names map[string]string

func newNames(m *automaton.Model) names {
	n := make(names, 2*len(m.States)+len(m.Transitions))
	for _, s := range m.States {
		n[s.ID], n[s.Label] = s.ID, s.Label
	}
	for _, t := range m.Transitions {
		n[t.Event] = t.Event
	}
	return n
}

func (n names) get(b []byte) string {
	if s, ok := n[string(b)]; ok {
		return s
	}
	return string(b)
}

// parseStep reads the step body agents send, {"event": "...", "next": "..."}
// with the keys in either order, "event" optional, white space anywhere JSON
// allows it, and strings of printable ASCII without escapes. ok is false for
// any other body, which decodeStep then reads in full (and explains, if it
// is wrong): an escape, another or a repeated key, a key in other case, a
// missing or empty "next", anything after the object. For every body it
// accepts, it returns what decodeStep does.
func parseStep(body []byte, n names) (event, next string, ok bool) {
	i := 0
	space := func() {
		for i < len(body) && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r') {
			i++
		}
	}
	str := func() ([]byte, bool) {
		if i >= len(body) || body[i] != '"' {
			return nil, false
		}
		i++
		start := i
		for ; i < len(body); i++ {
			c := body[i]
			if c == '"' {
				i++
				return body[start : i-1], true
			}
			if c < 0x20 || c == '\\' || c >= 0x80 {
				return nil, false
			}
		}
		return nil, false
	}
	expect := func(c byte) bool {
		space()
		if i < len(body) && body[i] == c {
			i++
			return true
		}
		return false
	}
	if !expect('{') {
		return "", "", false
	}
	var seenEvent, seenNext bool
	for {
		space()
		key, good := str()
		if !good || !expect(':') {
			return "", "", false
		}
		space()
		val, good := str()
		if !good {
			return "", "", false
		}
		switch {
		case string(key) == "event" && !seenEvent:
			seenEvent, event = true, n.get(val)
		case string(key) == "next" && !seenNext && len(val) > 0:
			seenNext, next = true, n.get(val)
		default:
			return "", "", false
		}
		if expect('}') {
			break
		}
		if !expect(',') {
			return "", "", false
		}
	}
	space()
	if i != len(body) || !seenNext {
		return "", "", false
	}
	return event, next, true
}

// appendDecision appends d as JSON, byte for byte as json.Marshal writes it
// (TestAppendDecision holds the two equal).
func appendDecision(b []byte, d *automaton.Decision) []byte {
	b = append(b, `{"session_id":`...)
	b = appendJSONString(b, d.Session)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(d.Step), 10)
	b = append(b, `,"allowed":`...)
	b = strconv.AppendBool(b, d.Allowed)
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, d.Reason)
	b = append(b, `,"state":`...)
	b = appendJSONString(b, d.State)
	b = append(b, `,"label":`...)
	b = appendJSONString(b, d.Label)
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
			b = appendJSONString(b, m.Event)
			b = append(b, `,"to":`...)
			b = appendJSONString(b, m.To)
			b = append(b, `,"label":`...)
			b = appendJSONString(b, m.Label)
			b = append(b, `,"prob":`...)
			b = appendJSONFloat(b, m.Prob)
			b = append(b, `,"rare":`...)
			b = strconv.AppendBool(b, m.Rare)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if fb := d.Fallback; fb != nil {
		b = append(b, `,"fallback":{"event":`...)
		b = appendJSONString(b, fb.Event)
		b = append(b, `,"to":`...)
		b = appendJSONString(b, fb.To)
		if fb.Label != "" {
			b = append(b, `,"label":`...)
			b = appendJSONString(b, fb.Label)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string as json.Marshal (go-json)
// writes it: mine.AppendJSONString's escapes (which are encoding/json's),
// but <, > and & escaped too, and backspace and form feed as \u0008 and
// \u000c rather than \b and \f.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	const own = "<>&\b\f"
	if !strings.ContainsAny(s, own) {
		return mine.AppendJSONString(b, s)
	}
	b = append(b, '"')
	for {
		i := strings.IndexAny(s, own)
		seg := s
		if i >= 0 {
			seg = s[:i]
		}
		n := len(b)
		b = mine.AppendJSONString(b, seg)
		b = append(b[:n], b[n+1:len(b)-1]...) // without its quotes
		if i < 0 {
			break
		}
		b = append(b, '\\', 'u', '0', '0', hex[s[i]>>4], hex[s[i]&0xf])
		s = s[i+1:]
	}
	return append(b, '"')
}

// appendJSONFloat appends f as json.Marshal writes a float64.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, f, format, -1, 64)
}
