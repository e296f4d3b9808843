package serve

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsmine/fsmine/automaton/guard"
)

// decisionLog appends every decision of the guard to a JSONL file in
// fsmine's record form, so that `fsmine build` can mine the next model from
// what the agents proposed:
//
//	{"session_id":"s1","step":2,"node":"get_order_details","event":"ok","ts":"2025-01-01T10:00:00.000000001Z",
//	 "verdict":{"allowed":true,"reason":"","state":"order"}}
//
// One line is written per decision. node is the label of the proposed next
// state (next as given when it names no state), step the decision's number in
// its session, ts the decision's time, verdict the guard's answer and the
// session's state after it. In the record form a record's event is the
// outcome of its node, which a step request only reports with the session's
// following step; so a line is held until the session's next decision
// arrives and takes that decision's event. A line whose session has no next
// decision (it proposed __end__, was deleted, idled past the TTL, or the
// service stopped) is written with an empty event. Lines therefore leave in
// the order their events become known, not in step order; readers sort by
// session and step, as fsmine does.
//
// A single goroutine owns the file. Decisions come through a buffered
// channel (a full channel holds up the step that sends, so no line is ever
// dropped); the file is flushed whenever the channel runs dry, after which
// the writer waits batchWait before it looks again, and, with every held
// line, when the log is closed.
//
// A failed write does not stop the log: the lines it did not write are
// counted as lost (errors) and the next flush writes to the file again, so
// the log recovers once the cause is gone (a full disk freed). A write cut
// short inside a line leaves that line torn; the next write starts with a
// newline, so that the torn line stays one bad line a reader skips and the
// next decision is whole. While the last write failed, failing is set
// (/healthz and /metrics say so).
type decisionLog struct {
	ch    chan logMsg
	done  chan struct{}
	w     io.Writer
	out   []byte // lines not yet written
	torn  bool   // the file ends inside a line
	sync  func() error
	onErr func(error) // nil: none
	held  map[string]logMsg
	buf   []byte

	// maxHeld bounds the held lines: past it the oldest is written, with
	// an empty event. The guard holds at most Config.MaxSessions sessions and
	// evicts the least recently used, whose held line is the oldest, so a
	// bound of MaxSessions writes the lines of evicted sessions.
	maxHeld int
	order   []heldRef // held lines, oldest first; some stale
	seq     uint32

	lines   atomic.Int64 // lines written
	errors  atomic.Int64 // lines that could not be written (and failed syncs)
	failing atomic.Bool  // the last write failed
	lastErr atomic.Pointer[string]

	// sendMu orders sends against close: a send holds it shared, close
	// holds it alone and sets closed, so nothing is sent on a closed
	// channel. A decision that arrives after close counts as a failed
	// write.
	sendMu sync.RWMutex
	closed bool
}

type logKind uint8

const (
	logDecision logKind = iota
	logEnd              // the session ended: write its held line
	logSweep            // write held lines older than ts
)

// heldRef names a held line in decisionLog.order: stale once the session
// holds a later line (another seq) or none.
type heldRef struct {
	session string
	seq     uint32
}

// maxHeldUnbounded bounds the held lines when Config.MaxSessions does not:
// some 200 MB of them.
const maxHeldUnbounded = 1 << 20

// logMsg is one message to the writer. It is held in a map until its
// session's next decision: at 128 bytes at most, the map keeps it inline
// (larger values cost an allocation each). seq is 32 bits to stay within
// that: it tells a held line from a later one of the same session, and
// wraps only after 2^32 lines, where a stale reference could match again
// only if its session's line of that moment had the very same number.
type logMsg struct {
	kind    logKind
	allowed bool
	seq     uint32 // of a held line
	session string
	step    int
	node    string
	event   string
	ts      time.Time
	reason  string
	state   string
	extra   *logExtra // nil for a plain step
}

// logExtra is what a decision line carries beyond a plain step's.
type logExtra struct {
	verdict verdictExtra // what the verdict says beyond allowed, reason and state
	slots   []logSlot    // the step's slots
}

// newLogExtra returns what a decision line carries beyond a plain step's:
// nil when nothing.
func newLogExtra(d *guard.Decision, slots []guard.Slot, values bool) *logExtra {
	v := verdictExtra{generalized: d.Generalized, missing: d.MissingSlots, invalid: d.InvalidSlots, condition: d.Condition}
	if d.Step == 0 {
		v.mapName = d.Map
	}
	if !v.generalized && v.missing == nil && v.invalid == nil && v.condition == "" && v.mapName == "" && len(slots) == 0 {
		return nil
	}
	return &logExtra{verdict: v, slots: logSlots(slots, values)}
}

// newDecisionLog starts the writer goroutine over w, holding at most
// maxHeld lines (0: maxHeldUnbounded); syncFn, when not nil, makes the
// written bytes durable at close. onErr, when not nil, is called with the
// first failed write after each stretch of good ones.
func newDecisionLog(w io.Writer, syncFn func() error, onErr func(error), maxHeld int) *decisionLog {
	if maxHeld <= 0 {
		maxHeld = maxHeldUnbounded
	}
	l := &decisionLog{
		ch:      make(chan logMsg, 4096),
		done:    make(chan struct{}),
		w:       w,
		sync:    syncFn,
		onErr:   onErr,
		held:    make(map[string]logMsg),
		maxHeld: maxHeld,
	}
	go l.run()
	return l
}

// decision queues one decision's line.
func (l *decisionLog) decision(m logMsg) { m.kind = logDecision; l.send(m) }

// end tells the log that session id ended.
func (l *decisionLog) end(id string) { l.send(logMsg{kind: logEnd, session: id}) }

// sweep writes the held lines of decisions made before cutoff.
func (l *decisionLog) sweep(cutoff time.Time) { l.send(logMsg{kind: logSweep, ts: cutoff}) }

// send queues m for the writer; after close, a decision counts as a failed
// write (its line cannot be written) and anything else is ignored.
func (l *decisionLog) send(m logMsg) {
	l.sendMu.RLock()
	defer l.sendMu.RUnlock()
	if l.closed {
		if m.kind == logDecision {
			l.errors.Add(1)
		}
		return
	}
	l.ch <- m
}

// close writes every held line, flushes and syncs the file, and stops the
// writer. Decisions sent after close are not written; they count in
// errors.
func (l *decisionLog) close() error {
	l.sendMu.Lock()
	if !l.closed {
		l.closed = true
		close(l.ch)
	}
	l.sendMu.Unlock()
	<-l.done
	if n := l.errors.Load(); n > 0 {
		return fmt.Errorf("decision log: %d lines could not be written", n)
	}
	return nil
}

// logFlushSize is how many bytes of lines the writer gathers before it
// writes them without waiting for the channel to run dry.
const logFlushSize = 64 << 10

// batchWait is how long the writer lets decisions gather after a busy
// round, so that under load it wakes and writes a batch at a time instead of
// once per decision.
const batchWait = 2 * time.Millisecond

func (l *decisionLog) run() {
	defer close(l.done)
	for {
		// block until there is work; then take what has gathered
		m, ok := <-l.ch
		for ok {
			l.handle(m)
			select {
			case m, ok = <-l.ch:
				continue
			default:
			}
			// the channel ran dry: write, then give the next batch a
			// moment to gather before looking again
			l.flush()
			time.Sleep(batchWait)
			select {
			case m, ok = <-l.ch:
				continue
			default:
			}
			break
		}
		if !ok {
			break
		}
	}
	l.writeHeld(func(logMsg) bool { return true })
	l.flush()
	if l.sync != nil {
		if err := l.sync(); err != nil {
			l.errors.Add(1)
			l.fail(err)
		}
	}
}

func (l *decisionLog) handle(m logMsg) {
	switch m.kind {
	case logEnd:
		if h, ok := l.held[m.session]; ok {
			delete(l.held, m.session)
			l.write(h, "")
		}
	case logSweep:
		l.writeHeld(func(h logMsg) bool { return h.ts.Before(m.ts) })
	case logDecision:
		if h, ok := l.held[m.session]; ok {
			delete(l.held, m.session)
			if m.step == h.step+1 {
				l.write(h, m.event)
			} else {
				// the session started afresh (expired or evicted): the held
				// line's outcome never came
				l.write(h, "")
			}
		}
		if m.node == endLabel {
			l.write(m, "")
			return
		}
		l.hold(m)
	}
}

// hold keeps m's line until its event comes, writing the oldest held line
// when there are more than maxHeld.
func (l *decisionLog) hold(m logMsg) {
	l.seq++
	m.seq = l.seq
	l.held[m.session] = m
	l.order = append(l.order, heldRef{m.session, m.seq})
	for len(l.held) > l.maxHeld && len(l.order) > 0 {
		ref := l.order[0]
		l.order = l.order[1:]
		if h, ok := l.held[ref.session]; ok && h.seq == ref.seq {
			delete(l.held, ref.session)
			l.write(h, "")
		}
	}
	// Drop the stale references once they outnumber the live ones, so
	// that order stays within twice the held lines.
	if len(l.order) > 2*len(l.held)+1024 {
		live := l.order[:0]
		for _, ref := range l.order {
			if h, ok := l.held[ref.session]; ok && h.seq == ref.seq {
				live = append(live, ref)
			}
		}
		l.order = append([]heldRef(nil), live...)
	}
}

// endLabel is the label of automaton.EndID as the miner writes it.
const endLabel = "__end__"

// writeHeld writes, in session order, the held lines that pick selects.
func (l *decisionLog) writeHeld(pick func(logMsg) bool) {
	var ids []string
	for id, h := range l.held {
		if pick(h) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		l.write(l.held[id], "")
		delete(l.held, id)
	}
}

func (l *decisionLog) write(m logMsg, event string) {
	b := l.buf[:0]
	b = append(b, `{"session_id":`...)
	b = appendLogString(b, m.session)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(m.step), 10)
	b = append(b, `,"node":`...)
	b = appendLogString(b, m.node)
	b = append(b, `,"event":`...)
	b = appendLogString(b, event)
	b = append(b, `,"ts":"`...)
	b = m.ts.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","verdict":{"allowed":`...)
	b = strconv.AppendBool(b, m.allowed)
	b = append(b, `,"reason":`...)
	b = appendLogString(b, m.reason)
	b = append(b, `,"state":`...)
	b = appendLogString(b, m.state)
	if m.extra != nil {
		b = m.extra.verdict.append(b)
		b = append(b, '}')
		b = appendLogSlots(b, m.extra.slots)
		b = append(b, "}\n"...)
	} else {
		b = append(b, "}}\n"...)
	}
	l.buf = b
	l.out = append(l.out, b...)
	if len(l.out) >= logFlushSize {
		l.flush()
	}
}

// flush writes the gathered lines. On a failed write, the lines not
// written in full are lost and counted; the file is written again at the
// next flush, on a fresh line if this one stopped inside a line.
func (l *decisionLog) flush() {
	if len(l.out) == 0 {
		return
	}
	torn := l.torn
	if torn {
		l.out = append(l.out, 0)
		copy(l.out[1:], l.out)
		l.out[0] = '\n'
	}
	n, err := l.w.Write(l.out)
	if err == nil && n < len(l.out) {
		err = io.ErrShortWrite
	}
	if torn {
		l.out = l.out[1:]
		if n > 0 {
			n-- // the newline that ends the torn line
			l.torn = false
		}
	}
	l.lines.Add(int64(bytes.Count(l.out[:n], []byte{'\n'})))
	if err != nil {
		lost := l.out[n:]
		l.errors.Add(int64(bytes.Count(lost, []byte{'\n'})))
		if n > 0 && l.out[n-1] != '\n' {
			l.torn = true
		}
		l.fail(err)
	} else if l.failing.Load() {
		l.failing.Store(false)
	}
	l.out = l.out[:0]
}

// fail records a failed write or sync: the log is failing until a write
// succeeds, and onErr hears of the first failure of a stretch.
func (l *decisionLog) fail(err error) {
	msg := err.Error()
	l.lastErr.Store(&msg)
	if !l.failing.Swap(true) && l.onErr != nil {
		l.onErr(fmt.Errorf("decision log: %w", err))
	}
}

// health says whether the last write failed, and with what error, and how
// many lines could not be written since the start.
func (l *decisionLog) health() (failing bool, lastErr string, lost int64) {
	if p := l.lastErr.Load(); p != nil {
		lastErr = *p
	}
	return l.failing.Load(), lastErr, l.errors.Load()
}

// verdictExtra is what a decision line's verdict carries beyond allowed,
// reason and state, each only when set: the step took a generalised
// transition, the required slots it lacked, the condition it failed.
type verdictExtra struct {
	generalized      bool
	missing, invalid []string
	condition        string
	// mapName is the map of a conditioned model that judges the session,
	// on its first line only: a session keeps its map, and later lines
	// stay plain.
	mapName string
}

func (v *verdictExtra) append(b []byte) []byte {
	if v.generalized {
		b = append(b, `,"generalized":true`...)
	}
	for _, l := range []struct {
		key   string
		names []string
	}{{"missing_slots", v.missing}, {"invalid_slots", v.invalid}} {
		if len(l.names) == 0 {
			continue
		}
		b = append(b, `,"`...)
		b = append(b, l.key...)
		b = append(b, `":[`...)
		for i, n := range l.names {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendLogString(b, n)
		}
		b = append(b, ']')
	}
	if v.condition != "" {
		b = append(b, `,"condition":`...)
		b = appendLogString(b, v.condition)
	}
	if v.mapName != "" {
		b = append(b, `,"map":`...)
		b = appendLogString(b, v.mapName)
	}
	return b
}

// logSlot is one slot of a step as the decision log keeps it: its name and
// validity, and its value only with Config.LogSlotValues (values can be
// personal data).
type logSlot struct {
	name, value string
	kind        guard.SlotKind
	valid       bool
	withValue   bool
}

// logSlots copies a step's slots for the log (the step's buffer is reused).
func logSlots(slots []guard.Slot, values bool) []logSlot {
	if len(slots) == 0 {
		return nil
	}
	out := make([]logSlot, len(slots))
	for i, sl := range slots {
		out[i] = logSlot{name: sl.Name, kind: sl.Kind, valid: sl.Valid, withValue: values}
		if values {
			out[i].value = sl.Value
		}
	}
	return out
}

// appendLogSlots appends ,"slots":{"name":{"valid":true[,"value":...]},...}
// (names sorted, as steps give them), or nothing without slots.
func appendLogSlots(b []byte, slots []logSlot) []byte {
	if len(slots) == 0 {
		return b
	}
	b = append(b, `,"slots":{`...)
	for i, sl := range slots {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendLogString(b, sl.name)
		b = append(b, `:{"valid":`...)
		b = strconv.AppendBool(b, sl.valid)
		if sl.withValue {
			b = append(b, `,"value":`...)
			if sl.kind == guard.SlotString {
				b = appendLogString(b, sl.value)
			} else {
				b = append(b, sl.value...) // a JSON number, true or false
			}
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// OpenLog opens the decision log file at path for appending (creating it,
// mode 0644), as fsmine serve --log does. When the file is a regular file
// that does not end in a newline (a line torn by a crash or a full disk
// before), it first writes one, so that the first line of this run starts
// on a fresh line instead of completing the torn one.
func OpenLog(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return f, nil
	}
	r, err := os.Open(path)
	if err != nil {
		return f, nil // write-only: the last line cannot be looked at
	}
	last := make([]byte, 1)
	_, err = r.ReadAt(last, fi.Size()-1)
	r.Close()
	if err == nil && last[0] != '\n' {
		if _, err := f.Write([]byte{'\n'}); err != nil {
			f.Close()
			return nil, fmt.Errorf("ending the torn last line of %s: %w", path, err)
		}
	}
	return f, nil
}
