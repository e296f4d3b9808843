package automaton

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-json"
)

// ErrNewerSchema is returned by Read for a model file written by a later
// fsmine whose schema this binary does not know.
var ErrNewerSchema = errors.New("model schema is newer than this fsmine understands")

// ErrNotModel is returned by Read for JSON that is not an fsmine model.
var ErrNotModel = errors.New("not an fsmine model")

// RawJSON is a JSON value kept as compact bytes; empty means null.
type RawJSON []byte

// MarshalJSON implements json.Marshaler.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON implements json.Unmarshaler; it keeps the value compacted.
func (r *RawJSON) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*r = nil
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return err
	}
	*r = append((*r)[:0], buf.Bytes()...)
	return nil
}

// Read decodes and validates a model and verifies its digest (see
// VerifyDigest), as every command that reads a model does. It returns
// ErrNotModel (wrapped) for JSON without an fsmine schema, ErrNewerSchema
// (wrapped) for a later one, and a *DigestError for a model whose digest is
// not its content's.
func Read(r io.Reader) (*Model, error) {
	m, err := Decode(r)
	if err != nil {
		return nil, err
	}
	if err := m.VerifyDigest(); err != nil {
		return nil, err
	}
	return m, nil
}

// Decode decodes and validates a model, as Read does, without verifying
// its digest: for what takes a model as it is (tests of hand-made models,
// fuzzing; fsmine seal takes DecodeToSeal).
func Decode(r io.Reader) (*Model, error) {
	m, err := decode(r)
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// DecodeToSeal is Decode for a model a person edited, to be sealed (fsmine
// seal): its transitions, and each sub-map's, are put in the file's order
// (as Sort puts them) before they are checked, so that a transition added
// at the end of a list is sealed in its place rather than refused as out of
// order. Nothing else moves: a model in order seals to the same digest.
// reordered says a list was out of order: the file needs writing even when
// its digest is right.
func DecodeToSeal(r io.Reader) (m *Model, reordered bool, err error) {
	if m, err = decode(r); err != nil {
		return nil, false, err
	}
	order := func(ts []Transition) {
		byFile := func(a, b Transition) int { return compareInFile(&a, &b) }
		if !slices.IsSortedFunc(ts, byFile) {
			slices.SortStableFunc(ts, byFile)
			reordered = true
		}
	}
	order(m.Transitions)
	if m.By != nil {
		for i := range m.By.Maps {
			order(m.By.Maps[i].Transitions)
		}
	}
	if err := m.Validate(); err != nil {
		return nil, false, err
	}
	return m, reordered, nil
}

// decode reads a model as Decode does, all but Validate.
func decode(r io.Reader) (*Model, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF")) // a byte-order mark an editor added
	var head struct {
		Schema any `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		if line, ok := firstLine(data); ok && json.Valid(line) && len(bytes.TrimSpace(data[len(line):])) > 0 {
			return nil, fmt.Errorf("%w: it holds a JSON value on each line, as a log does, not one model object", ErrNotModel)
		}
		var v any
		if json.Unmarshal(data, &v) == nil {
			return nil, fmt.Errorf("%w: it is a JSON %s, not an object", ErrNotModel, jsonKind(v))
		}
		return nil, fmt.Errorf("%w: %v", ErrNotModel, err)
	}
	schema, isString := head.Schema.(string)
	switch {
	case head.Schema == nil:
		return nil, fmt.Errorf("%w: no \"schema\" field", ErrNotModel)
	case !isString:
		return nil, fmt.Errorf("%w: schema is a JSON %s, want the string %q", ErrNotModel, jsonKind(head.Schema), Schema)
	case schema == Schema:
	case strings.HasPrefix(schema, SchemaFamily):
		return nil, fmt.Errorf("%w: file has %q, this binary reads %q", ErrNewerSchema, schema, Schema)
	default:
		return nil, fmt.Errorf("%w: schema is %q, want %q", ErrNotModel, schema, Schema)
	}
	m := new(Model)
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("decoding model: %w", err)
	}
	if err := checkIntegers(data); err != nil {
		return nil, err
	}
	// A key given twice, or in other case than its field's, is one the
	// decoder reads silently and other tools (jq, Python) read otherwise.
	if err := checkKeys(data); err != nil {
		return nil, fmt.Errorf("invalid model: %w", err)
	}
	return m, nil
}

// Load reads the model file at path; errors name the path.
func Load(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := Read(f)
	if err != nil {
		var de *DigestError
		if errors.As(err, &de) {
			de.Path = path
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// checkIntegers reports an integer of the JSON text data that int64 cannot
// hold. go-json v0.12 refuses such a number for an int field itself; this
// holds the rule for every integer of the file whatever the decoder (v0.10
// wrapped 9223372036854775808 around to a negative count). data must be
// valid JSON.
func checkIntegers(data []byte) error {
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case c == '-' || '0' <= c && c <= '9':
			start, integer := i, true
			for ; i < len(data) && strings.IndexByte("+-0123456789.eE", data[i]) >= 0; i++ {
				if c := data[i]; c == '.' || c == 'e' || c == 'E' {
					integer = false
				}
			}
			if integer {
				if _, err := strconv.ParseInt(string(data[start:i]), 10, 64); err != nil {
					return fmt.Errorf("invalid model: the number %s at byte %d is out of range", data[start:i], start)
				}
			}
			i--
		}
	}
	return nil
}

// Validate checks the model's invariants: StartID and EndID exist, each
// labelled as its id and no other state so, ids are unique, every
// transition joins existing states, none leaves EndID or enters StartID,
// transitions are in the file's order (see Sort), and a state, an event
// and a next label pick at most one transition; the version and every
// count are 0 or more and every prob between 0 and 1; the trunk, the loops
// and the top variants name states of the model, a state is in one loop
// at most, and a loop's back edges are transitions inside it; a state's
// fields are sorted and unique, at most MaxFields, and on no pseudo-state.
// Every command that reads a model relies on these.
//
// It indexes the model, and makes the sub-models of a conditioned one (see
// For), only where they are not the model's as it stands: a guard
// validates the model it is given (New, Reload), which may be one that
// another guard, or itself, is reading, and rebuilding what is current
// would write under those reads. The checks read tables made afresh.
func (m *Model) Validate() error {
	v := *m
	v.index = m.newIndex()
	err := v.validate()
	if m.index == nil || !m.index.current(v.index) {
		m.index = v.index
	}
	if err == nil && m.By != nil && !m.By.made(v.checkedSubs) {
		m.By.subs = v.checkedSubs
	}
	return err
}

// validate is Validate of a model whose index is its own.
func (m *Model) validate() error {
	if err := m.validateCounts(); err != nil {
		return err
	}
	seen := make(map[string]string, len(m.States))
	for _, s := range m.States {
		if s.ID == "" {
			return fmt.Errorf("invalid model: a state has an empty id")
		}
		if _, dup := seen[s.ID]; dup {
			return fmt.Errorf("invalid model: state %q appears twice", s.ID)
		}
		seen[s.ID] = s.Label
		// Check, replay and the guard find the start and the end by their
		// labels as well as their ids.
		switch pseudo := s.ID == StartID || s.ID == EndID; {
		case pseudo && s.Label != s.ID:
			return fmt.Errorf("invalid model: state %q is labelled %q: the start and the end keep their own labels", s.ID, s.Label)
		case !pseudo && (s.Label == StartID || s.Label == EndID):
			return fmt.Errorf("invalid model: state %q is labelled %q, the label of the start or the end, which no record of a log carries", s.ID, s.Label)
		}
		if err := validFields(s); err != nil {
			return err
		}
		if problem := m.badExamples(s.Examples); problem != "" {
			return fmt.Errorf("invalid model: state %q %s", s.ID, problem)
		}
	}
	for _, id := range []string{StartID, EndID} {
		if _, ok := seen[id]; !ok {
			return fmt.Errorf("invalid model: no %s state", id)
		}
	}
	if m.Initial != StartID {
		return fmt.Errorf("invalid model: initial is %q, want %q", m.Initial, StartID)
	}
	keys := make(map[moveKey]string, len(m.Transitions))
	total := 0 // the transitions' counts, which readers add up
	for _, t := range m.Transitions {
		lbl, ok := seen[t.To]
		if _, okFrom := seen[t.From]; !okFrom || !ok {
			return fmt.Errorf("invalid model: transition %s -[%s]-> %s joins an unknown state", t.From, t.Event, t.To)
		}
		if t.From == EndID || t.To == StartID {
			return fmt.Errorf("invalid model: transition %s -[%s]-> %s leaves %s or enters %s", t.From, t.Event, t.To, EndID, StartID)
		}
		if t.Count < 0 || t.Sessions < 0 {
			return fmt.Errorf("invalid model: transition %s -[%s]-> %s has a negative count", t.From, t.Event, t.To)
		}
		if t.Count > math.MaxInt64-total {
			return fmt.Errorf("invalid model: transition %s -[%s]-> %s: the transitions' counts add up past %d", t.From, t.Event, t.To, int64(math.MaxInt64))
		}
		total += t.Count
		k := moveKey{t.From, t.Event, lbl}
		if other, dup := keys[k]; dup && other == t.To {
			return fmt.Errorf("invalid model: transition %s -[%s]-> %s is given twice", t.From, t.Event, t.To)
		} else if dup {
			return fmt.Errorf("invalid model: not deterministic: %s -[%s]-> label %q reaches both %s and %s", t.From, t.Event, lbl, other, t.To)
		}
		keys[k] = t.To
		if !(t.Prob >= 0 && t.Prob <= 1) {
			return fmt.Errorf("invalid model: transition %s -[%s]-> %s has prob %v, want 0 to 1", t.From, t.Event, t.To, t.Prob)
		}
		if t.Generalized != "" && !slices.Contains(GeneralizedKinds, t.Generalized) {
			return fmt.Errorf("invalid model: transition %s -[%s]-> %s: generalized is %q, want one of %s", t.From, t.Event, t.To, t.Generalized, strings.Join(GeneralizedKinds, ", "))
		}
		if problem := m.badExamples(t.Examples); problem != "" {
			return fmt.Errorf("invalid model: transition %s -[%s]-> %s %s", t.From, t.Event, t.To, problem)
		}
	}
	// The digest reads the transitions in the file's order: another order
	// of the same transitions would be another digest, which an export
	// and import (which sort) would not give back.
	for i := 1; i < len(m.Transitions); i++ {
		if a, b := &m.Transitions[i-1], &m.Transitions[i]; compareInFile(a, b) > 0 {
			return fmt.Errorf("invalid model: transition %s -[%s]-> %s is out of order, after %s -[%s]-> %s: want transitions sorted by from (__start__ first), event, then to", b.From, b.Event, b.To, a.From, a.Event, a.To)
		}
	}
	for i, id := range m.Trunk {
		if _, ok := seen[id]; !ok {
			return fmt.Errorf("invalid model: trunk[%d] names unknown state %q", i, id)
		}
	}
	for i, v := range m.TopVariants {
		for _, id := range v.States {
			if _, ok := seen[id]; !ok {
				return fmt.Errorf("invalid model: top_variants[%d] names unknown state %q", i, id)
			}
		}
	}
	labels := make(map[string]bool, len(seen))
	for _, l := range seen {
		labels[l] = true
	}
	if m.Params.Design != "" {
		if err := ValidByValue(m.Params.Design); err != nil {
			return fmt.Errorf("invalid model: params.design: %w", err)
		}
	}
	if m.Params.Import != nil {
		if err := m.Params.Import.Validate(); err != nil {
			return fmt.Errorf("invalid model: params.%w", err)
		}
	}
	if err := m.validConstraints(labels); err != nil {
		return err
	}
	// A sub-map's argument rules are the shared map's (see SubMap.model):
	// they hold for a tool whichever map answers, so a tool only the
	// shared map has a state of is no fault of the sub-map, and the shared
	// map checked them against its labels.
	if !m.sub {
		if err := validArgRules(m.Args, labels); err != nil {
			return err
		}
	}
	loopOf := make(map[string]int)
	for li, l := range m.Loops {
		if len(l.States) == 0 {
			return fmt.Errorf("invalid model: loop %d has no states", li)
		}
		for _, id := range l.States {
			if _, ok := seen[id]; !ok {
				return fmt.Errorf("invalid model: loop %d names unknown state %q", li, id)
			}
			if other, dup := loopOf[id]; dup && other == li {
				return fmt.Errorf("invalid model: loop %d names state %q twice", li, id)
			} else if dup {
				return fmt.Errorf("invalid model: state %q is in loops %d and %d", id, other, li)
			}
			loopOf[id] = li
		}
	}
	for li, l := range m.Loops {
		for _, be := range l.BackEdges {
			lbl := seen[be.To]
			if i, ok := m.index.next[moveKey{be.From, be.Event, lbl}]; !ok || m.Transitions[i].To != be.To {
				return fmt.Errorf("invalid model: loop %d: back edge %s -[%s]-> %s is not a transition", li, be.From, be.Event, be.To)
			}
			if lf, ok := loopOf[be.From]; !ok || lf != li || loopOf[be.To] != li {
				return fmt.Errorf("invalid model: loop %d: back edge %s -[%s]-> %s leaves the loop", li, be.From, be.Event, be.To)
			}
		}
	}
	return m.validateBy()
}

// badExamples says what is wrong with the example session ids of a state
// or a transition, or "": more than params.examples of them (which
// MaxExamples bounds), or an empty one.
func (m *Model) badExamples(ids []string) string {
	if len(ids) > m.Params.Examples {
		return fmt.Sprintf("has %d examples, more than params.examples %d", len(ids), m.Params.Examples)
	}
	if slices.Contains(ids, "") {
		return "has an empty example session id"
	}
	return ""
}

// validFields checks a state's Fields: not on StartID or EndID (no record
// lands there), at most MaxFields, non-empty, sorted and unique.
func validFields(s State) error {
	if len(s.Fields) == 0 {
		return nil
	}
	if s.ID == StartID || s.ID == EndID {
		return fmt.Errorf("invalid model: state %q has fields: no record lands in it", s.ID)
	}
	if len(s.Fields) > MaxFields {
		return fmt.Errorf("invalid model: state %q has %d fields, at most %d", s.ID, len(s.Fields), MaxFields)
	}
	for i, f := range s.Fields {
		if f == "" {
			return fmt.Errorf("invalid model: state %q: fields[%d] is empty", s.ID, i)
		}
		if i > 0 && s.Fields[i-1] >= f {
			return fmt.Errorf("invalid model: state %q: fields are not sorted and unique at fields[%d] (%q after %q)", s.ID, i, f, s.Fields[i-1])
		}
	}
	return nil
}

// validateCounts checks that the version and every count of m are 0 or
// more. The name of what is negative is only formatted for the error.
func (m *Model) validateCounts() error {
	negative := func(ns ...int) (int, bool) {
		for _, n := range ns {
			if n < 0 {
				return n, true
			}
		}
		return 0, false
	}
	fail := func(what string, n int) error {
		return fmt.Errorf("invalid model: %s is negative (%d)", what, n)
	}
	src := m.Source
	for _, c := range []struct {
		what string
		ns   []int
	}{
		{"version", []int{m.Version}},
		{"variants", []int{m.Variants}},
		{"params.rare_count", []int{m.Params.RareCount}},
		{"params.k", []int{m.Params.K}},
		{"params.constraint_support", []int{m.Params.ConstraintSupport}},
		{"params.examples", []int{m.Params.Examples}},
		{"a count of source", []int{src.Sessions, src.Events, src.Records, src.Skipped, src.Duplicates,
			src.Dropped, src.Folded, src.Detours, src.StepGaps, src.LeftOut}},
	} {
		if n, bad := negative(c.ns...); bad {
			return fail(c.what, n)
		}
	}
	if m.Params.Examples > MaxExamples {
		return fmt.Errorf("invalid model: params.examples is %d, at most %d", m.Params.Examples, MaxExamples)
	}
	if m.Parent != nil {
		if n, bad := negative(m.Parent.Version); bad {
			return fail("parent.version", n)
		}
	}
	for _, f := range src.Files {
		if n, bad := negative(f.Records, f.Skipped, f.Duplicates); bad {
			return fail(fmt.Sprintf("a count of source file %q", f.Path), n)
		}
	}
	for _, s := range m.States {
		if n, bad := negative(s.Visits, s.Sessions, s.MaxRun); bad {
			return fail(fmt.Sprintf("a count of state %q", s.ID), n)
		}
		if err := s.DwellMS.validate(s.ID); err != nil {
			return err
		}
	}
	p := m.Params
	for _, f := range []struct {
		what string
		v    float64
	}{{"alpha", p.Alpha}, {"prior_move", p.PriorMove}, {"prior_state", p.PriorState}, {"rare_ratio", p.RareRatio}} {
		if unreadable(f.v) {
			return fmt.Errorf("invalid model: params.%s is %v, which a model file cannot hold (it would be written as an integer beyond int64)", f.what, f.v)
		}
	}
	for i, l := range m.Loops {
		if n, bad := negative(l.Count, l.Sessions, l.MaxIterations, l.P95Iterations); bad {
			return fail(fmt.Sprintf("a count of loop %d", i), n)
		}
	}
	for i, v := range m.TopVariants {
		if n, bad := negative(v.Count); bad {
			return fail(fmt.Sprintf("the count of top_variants[%d]", i), n)
		}
	}
	return m.validateOutcomes()
}

// maxDwell bounds a dwell: from 2^63 up, the encoder writes a float as an
// integer beyond int64, which every reader refuses (checkIntegers).
const maxDwell = 1 << 63

// validate checks that the dwell times of state id are below maxDwell
// milliseconds either way; a nil d has none. A negative one is read, as
// files that fsmine mined before it took no gap against the times (build
// --sort file of events out of time order) hold them.
func (d *Dwell) validate(id string) error {
	if d == nil {
		return nil
	}
	for _, v := range []struct {
		what string
		ms   float64
	}{{"p50", d.P50}, {"p95", d.P95}, {"max", d.Max}} {
		if !(math.Abs(v.ms) < maxDwell) {
			return fmt.Errorf("invalid model: state %q: dwell_ms.%s is %v, want it below 2^63 either way", id, v.what, v.ms)
		}
	}
	return nil
}

// unreadable reports whether the encoder writes f as an integer that int64
// cannot hold (it writes 2^63 up to 1e21 without an exponent), which every
// reader refuses (checkIntegers).
func unreadable(f float64) bool {
	a := math.Abs(f)
	return a >= 1<<63 && a < 1e21
}

// validateOutcomes checks the outcome counts (see Params.Outcome): none
// without an expression, none negative, no more succeeded than sessions.
func (m *Model) validateOutcomes() error {
	check := func(what string, o *Outcome) error {
		if o == nil {
			return nil
		}
		if m.Params.Outcome == "" {
			return fmt.Errorf("invalid model: %s has outcome counts, but params.outcome names no expression", what)
		}
		if o.Sessions < 0 || o.Succeeded < 0 || o.Unknown < 0 || o.Succeeded > o.Sessions {
			return fmt.Errorf("invalid model: the outcome of %s counts %d sessions, %d succeeded, %d unknown: want none negative, no more succeeded than sessions", what, o.Sessions, o.Succeeded, o.Unknown)
		}
		return nil
	}
	if err := check("source", m.Source.Outcome); err != nil {
		return err
	}
	for i := range m.States {
		if err := check(fmt.Sprintf("state %q", m.States[i].ID), m.States[i].Outcome); err != nil {
			return err
		}
	}
	for i := range m.Transitions {
		t := &m.Transitions[i]
		if err := check(fmt.Sprintf("transition %s -[%s]-> %s", t.From, t.Event, t.To), t.Outcome); err != nil {
			return err
		}
	}
	return nil
}

// Write encodes the model as fsmine writes model files: indented JSON whose
// states, transitions, loops and variants stand one to a line, so that a
// line-based diff of two versions reads as a diff of the model.
func (m *Model) Write(w io.Writer) error {
	var buf bytes.Buffer
	buf.WriteString("{\n")
	first := true
	field := func(name string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encoding %s: %w", name, err)
		}
		if !first {
			buf.WriteString(",\n")
		}
		first = false
		fmt.Fprintf(&buf, "  %q: ", name)
		buf.Write(b)
		return nil
	}
	list := func(name string, n int, elem func(i int) any) error {
		if !first {
			buf.WriteString(",\n")
		}
		first = false
		fmt.Fprintf(&buf, "  %q: [", name)
		for i := 0; i < n; i++ {
			b, err := json.Marshal(elem(i))
			if err != nil {
				return fmt.Errorf("encoding %s: %w", name, err)
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString("\n    ")
			buf.Write(b)
		}
		if n > 0 {
			buf.WriteString("\n  ")
		}
		buf.WriteByte(']')
		return nil
	}
	steps := []func() error{
		func() error { return field("schema", m.Schema) },
		func() error { return field("version", m.Version) },
		func() error { return field("parent", m.Parent) },
		func() error { return field("digest", m.Digest) },
		func() error { return field("created", m.Created) },
		func() error { return field("generator", m.Generator) },
		func() error { return field("source", m.Source) },
		func() error {
			if m.Evidence == nil {
				return nil
			}
			return field("evidence", m.Evidence)
		},
		func() error { return field("params", m.Params) },
		func() error { return field("initial", m.Initial) },
		func() error { return list("states", len(m.States), func(i int) any { return m.States[i] }) },
		func() error {
			return list("transitions", len(m.Transitions), func(i int) any { return m.Transitions[i] })
		},
		func() error { return list("loops", len(m.Loops), func(i int) any { return m.Loops[i] }) },
		func() error { return field("trunk", nonNil(m.Trunk)) },
		func() error { return field("variants", m.Variants) },
		func() error {
			return list("top_variants", len(m.TopVariants), func(i int) any { return m.TopVariants[i] })
		},
		func() error {
			if len(m.Constraints) == 0 {
				return nil
			}
			return list("constraints", len(m.Constraints), func(i int) any { return m.Constraints[i] })
		},
		func() error {
			if len(m.Args) == 0 {
				return nil
			}
			return list("args", len(m.Args), func(i int) any { return m.Args[i] })
		},
		func() error {
			if m.By == nil {
				return nil
			}
			return field("by", m.By)
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	buf.WriteString("\n}\n")
	_, err := w.Write(buf.Bytes())
	return err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// jsonKind names the JSON kind of v, a value json.Unmarshal made.
func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "number"
}

// firstLine returns data's first line, without its newline, when data has
// more than one.
func firstLine(data []byte) ([]byte, bool) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return nil, false
	}
	return data[:i], true
}
