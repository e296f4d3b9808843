package formats

// OTLP/JSON traces as the OpenTelemetry Collector's file exporter writes
// them: one ExportTraceServiceRequest a line, {"resourceSpans": [{"resource":
// {"attributes": [...]}, "scopeSpans": [{"scope": {...}, "spans": [...]}]}]},
// spans with hex "traceId"/"spanId"/"parentSpanId", "startTimeUnixNano" and
// "endTimeUnixNano" as decimal strings (or numbers), "attributes" as
// [{"key", "value": {"stringValue"|"intValue"|"doubleValue"|"boolValue"|
// "arrayValue"|"kvlistValue"|"bytesValue"}}] and "status": {"code",
// "message"}. Followed: the OTLP specification's JSON encoding
// (opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding), the file
// exporter serialization (opentelemetry.io/docs/specs/otel/protocol/file-exporter/),
// and the GenAI semantic conventions for spans
// (opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/ and
// gen-ai-agent-spans/): gen_ai.operation.name (chat, invoke_agent,
// execute_tool, ...), gen_ai.tool.name, gen_ai.agent.name,
// gen_ai.conversation.id, error.type; and session.id from the session
// conventions. The older "instrumentationLibrarySpans" is read as well.

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/internal/jsondup"
)

// FormatOTLP is OTLP/JSON traces.
const FormatOTLP = "otlp"

func init() {
	Register(&Format{
		Name:     FormatOTLP,
		Detect:   detectOTLP,
		Priority: 10,
		Convert:  convertOTLP,
	})
}

func detectOTLP(head []byte) bool {
	s := sniffJSON(head)
	return s != nil && !s.isRecord() && (s.has("", "resourceSpans") || s.has("", "resource_spans"))
}

type otlpTraces struct {
	ResourceSpans      []otlpResourceSpans `json:"resourceSpans"`
	ProtoResourceSpans json.RawMessage     `json:"resource_spans"`
}

type otlpResourceSpans struct {
	Resource struct {
		Attributes []otlpKV `json:"attributes"`
	} `json:"resource"`
	ScopeSpans                  []otlpScopeSpans `json:"scopeSpans"`
	InstrumentationLibrarySpans []otlpScopeSpans `json:"instrumentationLibrarySpans"`
}

type otlpScopeSpans struct {
	Scope struct {
		Name string `json:"name"`
	} `json:"scope"`
	InstrumentationLibrary struct {
		Name string `json:"name"`
	} `json:"instrumentationLibrary"`
	Spans []otlpSpan `json:"spans"`
}

type otlpSpan struct {
	TraceID      string          `json:"traceId"`
	SpanID       string          `json:"spanId"`
	ParentSpanID string          `json:"parentSpanId"`
	Name         string          `json:"name"`
	Kind         json.RawMessage `json:"kind"`
	Start        json.RawMessage `json:"startTimeUnixNano"`
	End          json.RawMessage `json:"endTimeUnixNano"`
	Attributes   []otlpKV        `json:"attributes"`
	Status       struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	} `json:"status"`
}

type otlpKV struct {
	Key   string  `json:"key"`
	Value otlpAny `json:"value"`
}

type otlpAny struct {
	StringValue *string         `json:"stringValue"`
	BoolValue   *bool           `json:"boolValue"`
	IntValue    json.RawMessage `json:"intValue"`
	DoubleValue json.RawMessage `json:"doubleValue"`
	BytesValue  *string         `json:"bytesValue"`
	ArrayValue  *struct {
		Values []otlpAny `json:"values"`
	} `json:"arrayValue"`
	KvlistValue *struct {
		Values []otlpKV `json:"values"`
	} `json:"kvlistValue"`
}

// appendJSON renders an AnyValue as plain JSON: strings, booleans,
// numbers (int64 given as strings become numbers), arrays and objects.
// An empty AnyValue is null.
func (v *otlpAny) appendJSON(b []byte) []byte {
	switch {
	case v.StringValue != nil:
		return appendJSONString(b, *v.StringValue)
	case v.BoolValue != nil:
		return strconv.AppendBool(b, *v.BoolValue)
	case v.IntValue != nil:
		t := jsonText(v.IntValue)
		if n, err := strconv.ParseInt(t, 10, 64); err == nil {
			return strconv.AppendInt(b, n, 10)
		}
		return appendJSONString(b, t)
	case v.DoubleValue != nil:
		t := jsonText(v.DoubleValue)
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			return appendJSONNumber(b, f)
		}
		return appendJSONString(b, t)
	case v.BytesValue != nil:
		return appendJSONString(b, *v.BytesValue)
	case v.ArrayValue != nil:
		b = append(b, '[')
		for i := range v.ArrayValue.Values {
			if i > 0 {
				b = append(b, ',')
			}
			b = v.ArrayValue.Values[i].appendJSON(b)
		}
		return append(b, ']')
	case v.KvlistValue != nil:
		b = append(b, '{')
		for i, kv := range v.KvlistValue.Values {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, kv.Key)
			b = append(b, ':')
			b = kv.Value.appendJSON(b)
		}
		return append(b, '}')
	}
	return append(b, "null"...)
}

// otlpBadAttr finds an attribute of kvs (or a value in their arrays and
// lists) that cannot be read as one value, and returns its key and why: an
// intValue that is not an int64, as OTLP/JSON writes one (a decimal
// string, or a number; read as text, "notint" would pass for a name); a
// key given twice in one list; a value that sets two of its fields
// ({"stringValue":"a","intValue":"5"}, which protobuf's oneof forbids).
// Which of two values holds would otherwise be up to the reader: the
// first key, the string.
func otlpBadAttr(kvs []otlpKV) (key, why string, bad bool) {
	var walk func(k string, v *otlpAny) bool
	list := func(prefix string, kvs []otlpKV) bool {
		// Lists are short: a map only for long ones.
		var seen map[string]bool
		if len(kvs) > 16 {
			seen = make(map[string]bool, len(kvs))
		}
		for i := range kvs {
			twice := seen[kvs[i].Key]
			for j := 0; seen == nil && j < i && !twice; j++ {
				twice = kvs[j].Key == kvs[i].Key
			}
			if twice {
				key, why = prefix+kvs[i].Key, "the key is given twice"
				return true
			}
			if seen != nil {
				seen[kvs[i].Key] = true
			}
			if walk(prefix+kvs[i].Key, &kvs[i].Value) {
				return true
			}
		}
		return false
	}
	walk = func(k string, v *otlpAny) bool {
		if a, b, two := v.twoKinds(); two {
			key, why = k, "a value with both "+a+" and "+b+", want one"
			return true
		}
		switch {
		case v.IntValue != nil:
			if _, err := strconv.ParseInt(jsonText(v.IntValue), 10, 64); err != nil {
				key, why = k, "intValue "+string(v.IntValue)+": want an integer"
				return true
			}
		case v.ArrayValue != nil:
			for i := range v.ArrayValue.Values {
				if walk(k, &v.ArrayValue.Values[i]) {
					return true
				}
			}
		case v.KvlistValue != nil:
			return list(k+".", v.KvlistValue.Values)
		}
		return false
	}
	if list("", kvs) {
		return key, why, true
	}
	return "", "", false
}

// twoKinds names two of the fields of v that are set (null is not), in
// the order appendJSON reads them; ok is false when fewer are.
func (v *otlpAny) twoKinds() (a, b string, ok bool) {
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"stringValue", v.StringValue != nil},
		{"boolValue", v.BoolValue != nil},
		{"intValue", v.IntValue != nil && jsonKind(v.IntValue) != 'n'},
		{"doubleValue", v.DoubleValue != nil && jsonKind(v.DoubleValue) != 'n'},
		{"bytesValue", v.BytesValue != nil},
		{"arrayValue", v.ArrayValue != nil},
		{"kvlistValue", v.KvlistValue != nil},
	} {
		switch {
		case !f.set:
		case a == "":
			a = f.name
		default:
			return a, f.name, true
		}
	}
	return "", "", false
}

// text is a scalar AnyValue as text ("" for arrays, objects and empty).
func (v *otlpAny) text() string {
	switch {
	case v.StringValue != nil:
		return *v.StringValue
	case v.IntValue != nil:
		return jsonText(v.IntValue)
	case v.BoolValue != nil:
		return strconv.FormatBool(*v.BoolValue)
	case v.DoubleValue != nil:
		return jsonText(v.DoubleValue)
	}
	return ""
}

func otlpAttr(kvs []otlpKV, key string) string {
	for i := range kvs {
		if kvs[i].Key == key {
			return kvs[i].Value.text()
		}
	}
	return ""
}

// attrTree nests dotted attribute names into objects ("gen_ai.tool.name"
// becomes {"gen_ai":{"tool":{"name":...}}}) so that a dotted path such as
// attrs.gen_ai.tool.name reaches it. A name that cannot nest (an empty
// segment, or a prefix that is itself a value) stays flat; of two values
// for one place the first is kept.
type attrTree struct {
	keys []string
	kids map[string]*attrTree
	vals map[string][]byte
}

func (t *attrTree) leaf(k string, v []byte) {
	if _, ok := t.kids[k]; ok {
		return
	}
	if _, ok := t.vals[k]; ok {
		return
	}
	if t.vals == nil {
		t.vals = map[string][]byte{}
	}
	t.vals[k] = v
	t.keys = append(t.keys, k)
}

func (t *attrTree) set(name string, v []byte) {
	parts := strings.Split(name, ".")
	for _, p := range parts {
		if p == "" {
			t.leaf(name, v)
			return
		}
	}
	node := t
	for i, p := range parts[:len(parts)-1] {
		if _, isVal := node.vals[p]; isVal {
			node.leaf(strings.Join(parts[i:], "."), v)
			return
		}
		kid := node.kids[p]
		if kid == nil {
			if node.kids == nil {
				node.kids = map[string]*attrTree{}
			}
			kid = &attrTree{}
			node.kids[p] = kid
			node.keys = append(node.keys, p)
		}
		node = kid
	}
	node.leaf(parts[len(parts)-1], v)
}

func (t *attrTree) write(o *jsonObject) {
	for _, k := range t.keys {
		if kid, ok := t.kids[k]; ok {
			o.open(k)
			kid.write(o)
			o.close()
			continue
		}
		o.key(k)
		o.b = append(o.b, t.vals[k]...)
	}
}

func otlpAttrTree(kvs []otlpKV) *attrTree {
	t := &attrTree{}
	for i := range kvs {
		t.set(kvs[i].Key, kvs[i].Value.appendJSON(nil))
	}
	return t
}

// otlpOffsets are the offsets within an OTLP traces object of its
// resourceSpans and its spans, in the order convertOTLP reads them.
type otlpOffsets struct{ resources, spans []int }

// otlpFind finds the resourceSpans and spans of raw, an OTLP traces object
// the decoder has read (resourceSpans, their scopeSpans or
// instrumentationLibrarySpans, their spans); fewer when a key is written
// with escapes, whose spans then are named by the item's offset.
func otlpFind(raw []byte) otlpOffsets {
	var offs otlpOffsets
	// each calls fn with the offset of each element of the array that
	// obj (at off in raw) holds under one of names.
	each := func(off int, names []string, fn func(off int)) {
		jsondup.Members(raw[off:], func(name []byte, start, end int) bool {
			if slices.Contains(names, string(name)) {
				for _, e := range jsondup.Elements(raw[off+start : off+end]) {
					fn(off + start + e)
				}
			}
			return true
		})
	}
	each(0, []string{`"resourceSpans"`}, func(rs int) {
		offs.resources = append(offs.resources, rs)
		each(rs, []string{`"scopeSpans"`, `"instrumentationLibrarySpans"`}, func(sc int) {
			each(sc, []string{`"spans"`}, func(sp int) { offs.spans = append(offs.spans, sp) })
		})
	})
	return offs
}

// otlpID is a trace or span id as the spans of a trace are linked by and
// the records carry it: OTLP/JSON writes ids as hex, which the
// specification reads in any case (its own example is in upper case), so
// a hex id is taken in lower case, the W3C Trace Context's; an id that is
// not hex is no OTLP id and is taken as written.
func otlpID(s string) string {
	lower := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			lower = false
		default:
			return s
		}
	}
	if lower {
		return s
	}
	return strings.ToLower(s)
}

var otlpKinds = []string{"unspecified", "internal", "server", "client", "producer", "consumer"}

// otlpEnum reads an enum given as its number or its name ("SPAN_KIND_SERVER",
// "STATUS_CODE_ERROR"); -1 when absent or unknown.
func otlpEnum(raw json.RawMessage, prefix string, names []string) int {
	t := jsonText(raw)
	if t == "" {
		return -1
	}
	if n, err := strconv.Atoi(t); err == nil {
		return n
	}
	t = strings.TrimPrefix(strings.ToLower(t), prefix)
	for i, n := range names {
		if n == t {
			return i
		}
	}
	return -1
}

// otlpNanos reads a fixed64 time in Unix nanoseconds, given as a decimal
// string or a number; ok is false when it is absent or zero.
func otlpNanos(raw json.RawMessage) (int64, bool, error) {
	t := jsonText(raw)
	if t == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseUint(t, 10, 64)
	switch {
	case err == nil && n > 1<<63-1, errors.Is(err, strconv.ErrRange):
		return 0, false, errors.New("past the year 2262, want at most 2^63-1 nanoseconds")
	case err != nil && strings.HasPrefix(t, "-"):
		switch v, err := strconv.ParseInt(t, 10, 64); {
		case err == nil && v == 0:
			return 0, false, nil
		case err == nil || errors.Is(err, strconv.ErrRange):
			return 0, false, errors.New("negative, want nanoseconds since 1970")
		}
		return 0, false, errors.New("want an integer")
	case err != nil:
		return 0, false, errors.New("want an integer")
	case n == 0: // unset, as OTLP writes it
		return 0, false, nil
	}
	return int64(n), true, nil
}

// convertOTLP writes a record per span that is a step (see foldSpans;
// ImportOptions.KeepSpans writes every one). It reads the whole input
// first: a span without a conversation id of its own takes the one of its
// trace (the first found on any span of the trace in the input), so that
// the tool and model spans under an agent span that names the conversation
// join its session. The session is the first of: the span's
// gen_ai.conversation.id, its trace's, the span's session.id (or its
// resource's), its trace's, and the trace id. A span with a
// gen_ai.operation.name is named by it, qualified by the tool's or the
// agent's name (execute_tool:get_weather, invoke_agent:Returns; a name that
// is an id is left off); any other by what it is (see classify): the
// agent's or tool's name (OpenInference's agent.name, tool.name,
// graph.node.id), "llm" for a model call that names no operation
// (gen_ai.request.model, gen_ai.provider.name or the older gen_ai.system
// alone), else its name without ids.
func convertOTLP(r io.Reader, w io.Writer, opt ImportOptions) error {
	jr := newJSONReader(r)
	jr.streamItems(opt.maxItem)
	jr.skipBadText = true
	defer jr.release()
	var spans []*treeSpan
	type traceSession struct{ conv, sess string }
	traces := map[string]*traceSession{}
	type pending struct {
		it         *treeSpan
		conv, sess string
	}
	var pend []pending
	var obj jsonObject
	err := jr.items(func(raw json.RawMessage, at int64) error {
		if jsonKind(raw) != '{' {
			return jr.errorAt(at, "want an OTLP traces object ({\"resourceSpans\": [...]})")
		}
		var td otlpTraces
		if err := jr.unmarshal(raw, at, &td); err != nil {
			return err
		}
		if td.ResourceSpans == nil {
			if td.ProtoResourceSpans != nil {
				return jr.errorAt(at, "OTLP with protobuf field names (\"resource_spans\"): want the OTLP JSON encoding's lowerCamelCase names (\"resourceSpans\", \"scopeSpans\", \"traceId\")")
			}
			return jr.errorAt(at, "not OTLP traces: no \"resourceSpans\"")
		}
		// A span is named by its own line: an item on several lines (a
		// pretty-printed document) has its spans found within it.
		var offs otlpOffsets
		if bytes.IndexByte(raw, '\n') >= 0 {
			offs = otlpFind(raw)
		}
		nspan := 0
		for ri := range td.ResourceSpans {
			rs := &td.ResourceSpans[ri]
			rsAt := at
			if ri < len(offs.resources) {
				rsAt += int64(offs.resources[ri])
			}
			if k, why, bad := otlpBadAttr(rs.Resource.Attributes); bad {
				return jr.errorAt(rsAt, "resource attribute %s: %s", k, why)
			}
			res := otlpAttrTree(rs.Resource.Attributes)
			scopes := rs.ScopeSpans
			if rs.InstrumentationLibrarySpans != nil {
				if scopes != nil {
					// One would be read, the other's spans lost.
					return jr.errorAt(rsAt, "both \"scopeSpans\" and its older name \"instrumentationLibrarySpans\": want one")
				}
				scopes = rs.InstrumentationLibrarySpans
			}
			for si := range scopes {
				sc := &scopes[si]
				scope := sc.Scope.Name
				if scope == "" {
					scope = sc.InstrumentationLibrary.Name
				}
				for pi := range sc.Spans {
					sp := &sc.Spans[pi]
					at := at
					if nspan < len(offs.spans) {
						at += int64(offs.spans[nspan])
					}
					nspan++
					line, _ := jr.pr.pos(at)
					where := func() string {
						return "line " + strconv.Itoa(line) + ": span " + sp.SpanID + " of trace " + sp.TraceID
					}
					if sp.TraceID == "" {
						return jr.errorAt(at, "a span without a traceId (%q)", sp.Name)
					}
					if sp.SpanID == "" {
						return jr.errorAt(at, "a span of trace %s without a spanId (%q)", sp.TraceID, sp.Name)
					}
					trace, id, parent := otlpID(sp.TraceID), otlpID(sp.SpanID), otlpID(sp.ParentSpanID)
					if strings.Trim(parent, "0") == "" {
						// All zeros is the invalid span id, which some
						// exporters write for a root's parent: no parent,
						// not one missing from the input.
						parent = ""
					}
					start, hasStart, err := otlpNanos(sp.Start)
					if err != nil {
						return errorf("%s: startTimeUnixNano %s: %v", where(), sp.Start, err)
					}
					end, hasEnd, err := otlpNanos(sp.End)
					if err != nil {
						return errorf("%s: endTimeUnixNano %s: %v", where(), sp.End, err)
					}
					if k, why, bad := otlpBadAttr(sp.Attributes); bad {
						return errorf("%s: attribute %s: %s", where(), k, why)
					}
					attr := func(k string) string { return otlpAttr(sp.Attributes, k) }
					op := attr("gen_ai.operation.name")
					if sp.Name == "" && op == "" {
						return errorf("%s: a span without a name", where())
					}
					code := otlpEnum(sp.Status.Code, "status_code_", []string{"unset", "ok", "error"})
					event := attr("error.type")
					if event == "" {
						event = "ok"
						if code == 2 {
							event = "error"
						}
					}
					obj.reset()
					obj.str(FieldEvent, event)
					obj.str("trace_id", trace)
					obj.strNonEmpty("span_id", id)
					obj.strNonEmpty("parent_span_id", parent)
					obj.str("name", sp.Name)
					if k := otlpEnum(sp.Kind, "span_kind_", otlpKinds); k > 0 && k < len(otlpKinds) {
						obj.str("kind", otlpKinds[k])
					}
					if code > 0 && code <= 2 {
						obj.str("status", []string{"unset", "ok", "error"}[code])
					}
					obj.strNonEmpty("status_message", sp.Status.Message)
					obj.strNonEmpty("scope", scope)
					obj.open("attrs")
					otlpAttrTree(sp.Attributes).write(&obj)
					obj.close()
					if len(res.keys) > 0 {
						obj.open("resource")
						res.write(&obj)
						obj.close()
					}
					it := &treeSpan{
						spanItem: spanItem{trace: trace, id: id, parent: parent,
							start: start, hasTime: hasStart, seq: len(spans), body: append([]byte(nil), obj.bytes()...)},
						name: sp.Name, end: end, hasEnd: hasEnd, line: line, where: where(),
					}
					it.classify("", attr)
					switch {
					case op != "":
						it.label = op
						if q := named(it.tool); q != "" && it.kind == kindTool {
							it.label += ":" + q
						} else if q := named(it.agent); q != "" {
							it.label += ":" + q
						}
					case it.kind == kindLLM && attr("openinference.span.kind") == "":
						it.label = "llm"
					}
					spans = append(spans, it)
					p := pending{it: it, conv: attr("gen_ai.conversation.id"), sess: attr("session.id")}
					if p.sess == "" {
						p.sess = otlpAttr(rs.Resource.Attributes, "session.id")
					}
					pend = append(pend, p)
					ts := traces[trace]
					if ts == nil {
						ts = &traceSession{}
						traces[trace] = ts
					}
					if ts.conv == "" {
						ts.conv = p.conv
					}
					if ts.sess == "" {
						ts.sess = p.sess
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range pend {
		ts := traces[p.it.trace]
		p.it.session = firstOf(p.conv, ts.conv, p.sess, ts.sess, p.it.trace)
	}
	rw := newRecordWriter(w)
	defer rw.release()
	if err := jr.writeSkipped(rw); err != nil {
		return err
	}
	return writeTreeSpansTo(rw, spans, opt, nil)
}
