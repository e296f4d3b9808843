package formats

// XES (IEEE 1849-2016, eXtensible Event Stream), the event-log format of
// process mining: <log> holds <trace>s, a trace holds <event>s, and both
// carry typed attributes (<string key="concept:name" value="..."/>, <date>,
// <int>, <float>, <boolean>, <id>, and nested <list>/<container>). Followed:
// the XES standard definition 2.0 (xes-standard.org/_media/xes/xesstandarddefinition-2.0.pdf)
// and the concept, time, lifecycle and organizational extensions.

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FormatXES is the XES event-log format.
const FormatXES = "xes"

func init() {
	Register(&Format{
		Name:     FormatXES,
		Detect:   detectXES,
		Priority: 10,
		Convert:  convertXES,
	})
}

// detectXES accepts XML whose root element is <log>.
func detectXES(head []byte) bool {
	head = trimHead(head)
	for len(head) > 0 {
		switch {
		case bytes.HasPrefix(head, []byte("<?")):
			i := bytes.Index(head, []byte("?>"))
			if i < 0 {
				return false
			}
			head = head[i+2:]
		case bytes.HasPrefix(head, []byte("<!--")):
			i := bytes.Index(head, []byte("-->"))
			if i < 0 {
				return false
			}
			head = head[i+3:]
		case bytes.HasPrefix(head, []byte("<!")):
			i := bytes.IndexByte(head, '>')
			if i < 0 {
				return false
			}
			head = head[i+1:]
		default:
			if !bytes.HasPrefix(head, []byte("<log")) && !bytes.HasPrefix(head, []byte("<xes:log")) {
				return false
			}
			rest := bytes.TrimPrefix(bytes.TrimPrefix(head, []byte("<xes:log")), []byte("<log"))
			return len(rest) > 0 && (rest[0] == '>' || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r' || rest[0] == '\n' || rest[0] == '/')
		}
		head = bytes.TrimLeft(head, " \t\r\n")
	}
	return false
}

// xesAttr is one typed attribute of a trace or an event: its key and its
// value as JSON.
type xesAttr struct {
	key  string
	json []byte
}

type xesEvent struct {
	line      int
	name      string
	hasName   bool
	lifecycle string
	ts        string
	hasTS     bool
	attrs     []xesAttr
	cls       []string // the values of the classifier's keys
	clsSet    []bool
	time      int64 // ts parsed, for sorting
	timeOK    bool
}

// xesClassifier is a <classifier name="..." keys="..."/> of the log.
type xesClassifier struct {
	name string
	keys []string
}

// xesClassifierKeys splits a classifier's keys: separated by white space,
// a key with spaces in single quotes (XES 2.0, section 5.3).
func xesClassifierKeys(s string) []string {
	var keys []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '\'' {
			if j := strings.IndexByte(s[1:], '\''); j >= 0 {
				keys = append(keys, s[1:1+j])
				s = s[j+2:]
				continue
			}
		}
		j := strings.IndexAny(s, " \t\r\n")
		if j < 0 {
			j = len(s)
		}
		keys = append(keys, s[:j])
		s = s[j:]
	}
	return keys
}

// convertXES streams the log with encoding/xml and writes one record per
// event when its trace ends (trace attributes may follow the events). Each
// record is placed on the line of its <event> tag, so that mine's messages
// about a record name the line of the XES file. Only a <date> attribute
// time:timestamp is the event's time (a <string> one, such as pm4py's "?"
// placeholders, is an attribute like any other). The step of a record is
// its place in the trace: by time (events without one last, ties in file
// order) or in file order (opt.Sort). Events of other lifecycle
// transitions than opt.Lifecycle are left out (a note at their line). The
// node is the activity, or the values of the keys of the classifier
// opt.Classifier names, joined by "+".
func convertXES(r io.Reader, w io.Writer, opt ImportOptions) error {
	// A token (an attribute's value, text) is read whole: bound it.
	bound := &itemBound{r: r, max: int64(opt.maxItem)}
	dec := xml.NewDecoder(bound)
	dec.Strict = true
	dec.CharsetReader = xesCharsetReader
	c := &xesConverter{opt: opt, rw: newRecordWriter(w), clsKey: map[string]int{}}
	defer c.rw.release()
	for {
		c.tokLine, c.tokCol = dec.InputPos()
		bound.mark = dec.InputOffset()
		tok, err := dec.RawToken()
		if err == io.EOF {
			break
		}
		if errors.Is(err, errItemTooLong) {
			return c.errAt("a tag or text longer than %d bytes", bound.max)
		}
		if err != nil {
			if se, ok := err.(*xml.SyntaxError); ok {
				return fmt.Errorf("line %d: %s", se.Line, se.Msg)
			}
			return c.errAt("%v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			err = c.start(t)
		case xml.EndElement:
			err = c.end(t)
		case xml.CharData:
			if len(c.stack) == 0 && len(bytes.TrimSpace(t)) > 0 {
				if !c.rootDone {
					return c.errAt("text before the <log> element (not XES?)")
				}
				return c.errAt("text after the <log> element")
			}
		}
		if err != nil {
			return err
		}
	}
	c.tokLine, c.tokCol = dec.InputPos()
	if len(c.stack) > 0 {
		return c.errAt("the input ends inside <%s>", c.stack[len(c.stack)-1])
	}
	if !c.rootDone {
		return c.errAt("no <log> element")
	}
	return c.rw.flush()
}

// xesConverter is the state of convertXES between tokens.
type xesConverter struct {
	opt       ImportOptions
	rw        *recordWriter
	stack     []string // local names of the open elements
	inTrace   bool
	caseAttrs []xesAttr
	caseName  string
	hasCase   bool
	events    []*xesEvent
	free      []*xesEvent
	ev        *xesEvent
	rootDone  bool
	obj       jsonObject
	arena     []byte // the JSON of the current trace's attribute values
	classes   []xesClassifier
	cls       *xesClassifier // the classifier opt.Classifier names
	clsKey    map[string]int
	order     []int
	steps     []int64
	// caseSteps is the next step of each case a trace has given: a case
	// whose events come in several traces goes on where its last trace
	// stopped, rather than starting again at 0 and interleaving with it.
	caseSteps map[string]int64
	// The position where the current token starts, for messages and for
	// the line of an event's record.
	tokLine, tokCol int
	// The traces and events opened, naming the element traceKeys and
	// eventKeys hold the keys of.
	traces, eventsOpened int
	traceKeys, eventKeys xesKeys
}

func (c *xesConverter) errAt(format string, args ...any) error {
	return fmt.Errorf("line %d, column %d: %s", c.tokLine, c.tokCol, fmt.Sprintf(format, args...))
}

func (c *xesConverter) parent() string {
	if len(c.stack) > 0 {
		return c.stack[len(c.stack)-1]
	}
	return ""
}

// maxXESDepth bounds the elements open at once: a log, a trace, an event
// and attributes nested in lists and containers need a few, and each open
// one is kept until it closes.
const maxXESDepth = 1000

// start takes an element's start tag.
func (c *xesConverter) start(t xml.StartElement) error {
	name := t.Name.Local
	parent := c.parent()
	if len(c.stack) == 0 {
		if c.rootDone {
			return c.errAt("a second root element <%s> after </log>", name)
		}
		if name != "log" {
			return c.errAt("the root element is <%s>, want <log>", name)
		}
	}
	if len(c.stack) >= maxXESDepth {
		return c.errAt("<%s> nested %d elements deep, more than XES needs (%d)", name, len(c.stack)+1, maxXESDepth)
	}
	c.stack = append(c.stack, name)
	switch {
	case name == "classifier" && parent == "log":
		cl := xesClassifier{}
		for _, a := range t.Attr {
			switch a.Name.Local {
			case "name":
				cl.name = a.Value
			case "keys":
				cl.keys = xesClassifierKeys(a.Value)
			}
		}
		c.classes = append(c.classes, cl)
	case name == "trace" && parent == "log":
		return c.openTrace()
	case name == "event" && parent == "trace":
		c.openEvent()
	case name == "event" && parent == "log":
		return c.errAt("<event> outside a <trace> (events without a case are not supported)")
	case name == "event" || name == "trace":
		// inside an event or an attribute, its attributes would be read
		// as the outer event's
		return c.errAt("<%s> inside <%s>", name, parent)
	case parent == "event" && c.ev != nil, parent == "trace" && c.inTrace:
		return c.attr(t, parent)
	}
	return nil
}

// openTrace starts a trace; before the first, it finds the classifier
// opt.Classifier names (classifiers are declared before the traces).
func (c *xesConverter) openTrace() error {
	if c.opt.Classifier != "" && c.cls == nil {
		for i := range c.classes {
			if c.classes[i].name == c.opt.Classifier {
				c.cls = &c.classes[i]
				break
			}
		}
		if c.cls == nil {
			var names []string
			for _, cl := range c.classes {
				names = append(names, strconv.Quote(cl.name))
			}
			if len(names) == 0 {
				return c.errAt("no classifier %q: the log declares none", c.opt.Classifier)
			}
			return c.errAt("no classifier %q: the log declares %s", c.opt.Classifier, strings.Join(names, ", "))
		}
		for i, k := range c.cls.keys {
			if _, dup := c.clsKey[k]; !dup {
				c.clsKey[k] = i
			}
		}
	}
	c.inTrace = true
	c.traces++
	c.caseAttrs, c.caseName, c.hasCase = c.caseAttrs[:0], "", false
	return nil
}

// openEvent starts an event of the trace, reusing a flushed one.
func (c *xesConverter) openEvent() {
	c.eventsOpened++
	if n := len(c.free); n > 0 {
		c.ev, c.free = c.free[n-1], c.free[:n-1]
		*c.ev = xesEvent{attrs: c.ev.attrs[:0], cls: c.ev.cls[:0], clsSet: c.ev.clsSet[:0]}
	} else {
		c.ev = &xesEvent{}
	}
	if c.cls != nil {
		for range c.cls.keys {
			c.ev.cls = append(c.ev.cls, "")
			c.ev.clsSet = append(c.ev.clsSet, false)
		}
	}
	c.ev.line = c.tokLine
	c.events = append(c.events, c.ev)
}

// attr takes a typed attribute of the trace or of the current event.
func (c *xesConverter) attr(t xml.StartElement, parent string) error {
	name := t.Name.Local
	key, val, ok := xesAttrValue(t)
	if !ok {
		return nil
	}
	if key == "" {
		return c.errAt("<%s> without a key", name)
	}
	var dup bool
	if parent == "trace" {
		dup = c.traceKeys.twice(c.traces, c.caseAttrs, key)
	} else {
		dup = c.eventKeys.twice(c.eventsOpened, c.ev.attrs, key)
	}
	if dup {
		return c.errAt("a second attribute with the key %q in one <%s>", key, parent)
	}
	start := len(c.arena)
	c.arena = appendXESJSON(c.arena, name, val)
	js := c.arena[start:len(c.arena):len(c.arena)]
	if parent == "trace" {
		if key == "concept:name" {
			c.caseName, c.hasCase = val, true
		}
		c.caseAttrs = append(c.caseAttrs, xesAttr{key, js})
		return nil
	}
	ev := c.ev
	switch {
	case key == "concept:name":
		ev.name, ev.hasName = val, true
	case key == "lifecycle:transition":
		ev.lifecycle = val
	case key == "time:timestamp" && name == "date":
		ev.ts, ev.hasTS = val, true
	}
	if c.cls != nil {
		if i, ok := c.clsKey[key]; ok {
			for j, k := range c.cls.keys[i:] {
				if k == key {
					ev.cls[i+j], ev.clsSet[i+j] = val, true
				}
			}
		}
	}
	ev.attrs = append(ev.attrs, xesAttr{key, js})
	return nil
}

// xesKeys tells a key given twice among an element's attributes: by a scan
// while they are few, by a set of them past that, so that an element of a
// million attributes is no quadratic read. elem names the element the set
// holds the keys of.
type xesKeys struct {
	set  map[string]struct{}
	elem int
}

// twice reports whether attrs, the attributes of element elem so far, has
// key; if not, key counts as added.
func (k *xesKeys) twice(elem int, attrs []xesAttr, key string) bool {
	const scan = 16
	if len(attrs) < scan {
		for i := range attrs {
			if attrs[i].key == key {
				return true
			}
		}
		return false
	}
	if k.elem != elem || len(k.set) != len(attrs) {
		k.set, k.elem = make(map[string]struct{}, 2*len(attrs)), elem
		for i := range attrs {
			k.set[attrs[i].key] = struct{}{}
		}
	}
	if _, dup := k.set[key]; dup {
		return true
	}
	k.set[key] = struct{}{}
	return false
}

// end takes an element's end tag; a trace's end writes its records.
func (c *xesConverter) end(t xml.EndElement) error {
	if len(c.stack) == 0 || c.stack[len(c.stack)-1] != t.Name.Local {
		want := "nothing"
		if len(c.stack) > 0 {
			want = "</" + c.stack[len(c.stack)-1] + ">"
		}
		return c.errAt("</%s> closes nothing open (want %s)", t.Name.Local, want)
	}
	c.stack = c.stack[:len(c.stack)-1]
	parent := c.parent()
	switch {
	case t.Name.Local == "event" && parent == "trace":
		c.ev = nil
	case t.Name.Local == "trace" && parent == "log":
		if err := c.flushTrace(); err != nil {
			return err
		}
		c.inTrace = false
	}
	if len(c.stack) == 0 {
		c.rootDone = true
	}
	return nil
}

// flushTrace writes the trace's records, each at its event's line, with
// steps in the order asked for.
func (c *xesConverter) flushTrace() error {
	c.order = c.order[:0]
	for i, e := range c.events {
		if c.opt.keepLifecycle(e.lifecycle) {
			c.order = append(c.order, i)
		}
	}
	if c.opt.Sort != SortFile {
		for _, i := range c.order {
			e := c.events[i]
			e.time, e.timeOK = 0, false
			if e.hasTS {
				e.time, e.timeOK = parseTimeText(e.ts)
			}
		}
		sort.SliceStable(c.order, func(a, b int) bool {
			ea, eb := c.events[c.order[a]], c.events[c.order[b]]
			if ea.timeOK != eb.timeOK {
				return ea.timeOK
			}
			return ea.timeOK && ea.time < eb.time
		})
	}
	c.steps = slices.Grow(c.steps[:0], len(c.events))[:len(c.events)]
	for i := range c.steps {
		c.steps[i] = -1
	}
	if c.caseSteps == nil {
		c.caseSteps = map[string]int64{}
	}
	var base int64
	if c.hasCase {
		base = c.caseSteps[c.caseName]
		c.caseSteps[c.caseName] = base + int64(len(c.order))
	}
	for k, i := range c.order {
		c.steps[i] = base + int64(k)
	}
	for i, e := range c.events {
		if c.steps[i] < 0 {
			if err := writeNote(c.rw, false, e.line, "", "lifecycle:transition "+e.lifecycle); err != nil {
				return err
			}
			continue
		}
		if err := c.rw.writeAt(e.line, c.record(e, c.steps[i])); err != nil {
			return err
		}
	}
	c.free = append(c.free, c.events...)
	c.events = c.events[:0]
	c.arena = c.arena[:0]
	return nil
}

// record is the JSON record of event e at step.
func (c *xesConverter) record(e *xesEvent, step int64) []byte {
	obj := &c.obj
	obj.reset()
	if c.hasCase {
		obj.str(FieldSession, c.caseName)
	}
	obj.int(FieldStep, step)
	switch {
	case c.cls != nil:
		if node, ok := e.classify(); ok {
			obj.str(FieldNode, node)
		}
	case e.hasName:
		obj.str(FieldNode, e.name)
	}
	switch {
	case e.lifecycle != "":
		obj.str(FieldEvent, strings.ToLower(e.lifecycle))
	case e.hasName:
		obj.str(FieldEvent, e.name)
	}
	if e.hasTS {
		obj.str(FieldTime, e.ts)
	}
	obj.open("attrs")
	for _, a := range e.attrs {
		obj.key(a.key)
		obj.b = append(obj.b, a.json...)
	}
	for _, a := range c.caseAttrs {
		obj.key("case:" + a.key)
		obj.b = append(obj.b, a.json...)
	}
	return obj.bytes()
}

// classify returns the event's node under the classifier: the values of
// its keys joined by "+"; ok is false when the event lacks one of them.
func (e *xesEvent) classify() (string, bool) {
	for _, set := range e.clsSet {
		if !set {
			return "", false
		}
	}
	return strings.Join(e.cls, "+"), true
}

// xesAttrValue returns the key and value of an attribute element; ok is
// false for elements that are not attributes or carry no value (lists and
// containers).
func xesAttrValue(t xml.StartElement) (key, val string, ok bool) {
	switch t.Name.Local {
	case "string", "date", "int", "float", "boolean", "id":
	default:
		return "", "", false
	}
	for _, a := range t.Attr {
		switch a.Name.Local {
		case "key":
			key = a.Value
		case "value":
			val = a.Value
		}
	}
	return key, val, true
}

// appendXESJSON appends an attribute value as JSON: numbers and booleans
// as such when they parse, everything else as a string.
func appendXESJSON(b []byte, typ, val string) []byte {
	switch typ {
	case "int":
		if n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64); err == nil {
			return strconv.AppendInt(b, n, 10)
		}
	case "float":
		if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return strconv.AppendFloat(b, f, 'g', -1, 64)
		}
	case "boolean":
		switch strings.TrimSpace(strings.ToLower(val)) {
		case "true":
			return append(b, "true"...)
		case "false":
			return append(b, "false"...)
		}
	}
	return appendJSONString(b, val)
}

// xesCharsetReader decodes the single-byte charsets older XES writers
// declare (ISO-8859-1 and its Windows superset) to UTF-8.
func xesCharsetReader(charset string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "windows-1252", "cp1252", "us-ascii", "ascii":
		return &latin1Reader{r: input}, nil
	}
	return nil, fmt.Errorf("unsupported encoding %q (want UTF-8 or ISO-8859-1)", charset)
}

// latin1Reader turns ISO-8859-1 bytes into UTF-8.
type latin1Reader struct {
	r   io.Reader
	buf []byte
	out []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	for len(l.out) == 0 {
		if cap(l.buf) == 0 {
			l.buf = make([]byte, 16<<10)
		}
		n, err := l.r.Read(l.buf[:cap(l.buf)])
		l.out = l.out[:0]
		for _, c := range l.buf[:n] {
			l.out = utf8.AppendRune(l.out, rune(c))
		}
		if n == 0 && err != nil {
			return 0, err
		}
	}
	n := copy(p, l.out)
	l.out = l.out[n:]
	return n, nil
}
