package mine

// XES (IEEE 1849-2016, eXtensible Event Stream), the event-log format of
// process mining: <log> holds <trace>s, a trace holds <event>s, and both
// carry typed attributes (<string key="concept:name" value="..."/>, <date>,
// <int>, <float>, <boolean>, <id>, and nested <list>/<container>). Followed:
// the XES standard definition 2.0 (xes-standard.org/_media/xes/xesstandarddefinition-2.0.pdf)
// and the concept, time, lifecycle and organizational extensions.

import (
	"bytes"
	"encoding/xml"
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
	registerFormat(&Format{
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
	dec := xml.NewDecoder(r)
	dec.Strict = true
	dec.CharsetReader = xesCharsetReader
	rw := newRecordWriter(w)
	defer rw.release()

	var (
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
		clsKey    = map[string]int{}
		order     []int
		steps     []int64
	)
	// The position where the current token starts, for messages and for
	// the line of an event's record.
	var tokLine, tokCol int
	errAt := func(format string, args ...any) error {
		return fmt.Errorf("line %d, column %d: %s", tokLine, tokCol, fmt.Sprintf(format, args...))
	}
	flushTrace := func() error {
		// Steps: the kept events' places in the order asked for.
		order = order[:0]
		for i, e := range events {
			if opt.keepLifecycle(e.lifecycle) {
				order = append(order, i)
			}
		}
		if opt.Sort != SortFile {
			for _, i := range order {
				e := events[i]
				e.time, e.timeOK = 0, false
				if e.hasTS {
					e.time, e.timeOK = parseTimeText(e.ts)
				}
			}
			sort.SliceStable(order, func(a, b int) bool {
				ea, eb := events[order[a]], events[order[b]]
				if ea.timeOK != eb.timeOK {
					return ea.timeOK
				}
				return ea.timeOK && ea.time < eb.time
			})
		}
		steps = slices.Grow(steps[:0], len(events))[:len(events)]
		for i := range steps {
			steps[i] = -1
		}
		for k, i := range order {
			steps[i] = int64(k)
		}
		for i, e := range events {
			if steps[i] < 0 {
				if err := writeNote(rw, false, e.line, "", "lifecycle:transition "+e.lifecycle); err != nil {
					return err
				}
				continue
			}
			if err := rw.alignTo(e.line); err != nil {
				return err
			}
			obj.reset()
			if hasCase {
				obj.str(FieldSession, caseName)
			}
			obj.int(FieldStep, steps[i])
			switch {
			case cls != nil:
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
			for _, a := range caseAttrs {
				obj.key("case:" + a.key)
				obj.b = append(obj.b, a.json...)
			}
			if err := rw.write(obj.bytes()); err != nil {
				return err
			}
		}
		free = append(free, events...)
		events = events[:0]
		arena = arena[:0]
		return nil
	}

	for {
		tokLine, tokCol = dec.InputPos()
		tok, err := dec.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			if se, ok := err.(*xml.SyntaxError); ok {
				return fmt.Errorf("line %d: %s", se.Line, se.Msg)
			}
			return errAt("%v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			parent := ""
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			if len(stack) == 0 {
				if rootDone {
					return errAt("a second root element <%s> after </log>", name)
				}
				if name != "log" {
					return errAt("the root element is <%s>, want <log>", name)
				}
			}
			stack = append(stack, name)
			switch {
			case name == "classifier" && parent == "log":
				c := xesClassifier{}
				for _, a := range t.Attr {
					switch a.Name.Local {
					case "name":
						c.name = a.Value
					case "keys":
						c.keys = xesClassifierKeys(a.Value)
					}
				}
				classes = append(classes, c)
			case name == "trace" && parent == "log":
				if opt.Classifier != "" && cls == nil {
					// Classifiers are declared before the traces.
					for i := range classes {
						if classes[i].name == opt.Classifier {
							cls = &classes[i]
							break
						}
					}
					if cls == nil {
						var names []string
						for _, c := range classes {
							names = append(names, strconv.Quote(c.name))
						}
						if len(names) == 0 {
							return errAt("no classifier %q: the log declares none", opt.Classifier)
						}
						return errAt("no classifier %q: the log declares %s", opt.Classifier, strings.Join(names, ", "))
					}
					for i, k := range cls.keys {
						if _, dup := clsKey[k]; !dup {
							clsKey[k] = i
						}
					}
				}
				inTrace = true
				caseAttrs, caseName, hasCase = caseAttrs[:0], "", false
			case name == "event" && parent == "trace":
				if n := len(free); n > 0 {
					ev, free = free[n-1], free[:n-1]
					*ev = xesEvent{attrs: ev.attrs[:0], cls: ev.cls[:0], clsSet: ev.clsSet[:0]}
				} else {
					ev = &xesEvent{}
				}
				if cls != nil {
					for range cls.keys {
						ev.cls = append(ev.cls, "")
						ev.clsSet = append(ev.clsSet, false)
					}
				}
				ev.line = tokLine
				events = append(events, ev)
			case name == "event" && parent == "log":
				return errAt("<event> outside a <trace> (events without a case are not supported)")
			case parent == "event" && ev != nil, parent == "trace" && inTrace:
				key, val, ok := xesAttrValue(t)
				if !ok {
					break
				}
				if key == "" {
					return errAt("<%s> without a key", name)
				}
				start := len(arena)
				arena = appendXESJSON(arena, name, val)
				js := arena[start:len(arena):len(arena)]
				if parent == "trace" {
					if key == "concept:name" {
						caseName, hasCase = val, true
					}
					caseAttrs = append(caseAttrs, xesAttr{key, js})
					break
				}
				switch {
				case key == "concept:name":
					ev.name, ev.hasName = val, true
				case key == "lifecycle:transition":
					ev.lifecycle = val
				case key == "time:timestamp" && name == "date":
					ev.ts, ev.hasTS = val, true
				}
				if cls != nil {
					if i, ok := clsKey[key]; ok {
						for j, k := range cls.keys[i:] {
							if k == key {
								ev.cls[i+j], ev.clsSet[i+j] = val, true
							}
						}
					}
				}
				ev.attrs = append(ev.attrs, xesAttr{key, js})
			}
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1] != t.Name.Local {
				want := "nothing"
				if len(stack) > 0 {
					want = "</" + stack[len(stack)-1] + ">"
				}
				return errAt("</%s> closes nothing open (want %s)", t.Name.Local, want)
			}
			stack = stack[:len(stack)-1]
			parent := ""
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			switch {
			case t.Name.Local == "event" && parent == "trace":
				ev = nil
			case t.Name.Local == "trace" && parent == "log":
				if err := flushTrace(); err != nil {
					return err
				}
				inTrace = false
			}
			if len(stack) == 0 {
				rootDone = true
			}
		case xml.CharData:
			if len(stack) == 0 && len(bytes.TrimSpace(t)) > 0 {
				if !rootDone {
					return errAt("text before the <log> element (not XES?)")
				}
				return errAt("text after the <log> element")
			}
		}
	}
	tokLine, tokCol = dec.InputPos()
	if len(stack) > 0 {
		return errAt("the input ends inside <%s>", stack[len(stack)-1])
	}
	if !rootDone {
		return errAt("no <log> element")
	}
	return rw.flush()
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
