package automaton

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// Read decodes and validates a model. It returns ErrNotModel (wrapped) for
// JSON without an fsmine schema and ErrNewerSchema (wrapped) for a later one.
func Read(r io.Reader) (*Model, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var head struct {
		Schema *string `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotModel, err)
	}
	switch {
	case head.Schema == nil:
		return nil, fmt.Errorf("%w: no \"schema\" field", ErrNotModel)
	case *head.Schema == Schema:
	case strings.HasPrefix(*head.Schema, SchemaFamily):
		return nil, fmt.Errorf("%w: file has %q, this binary reads %q", ErrNewerSchema, *head.Schema, Schema)
	default:
		return nil, fmt.Errorf("%w: schema is %q, want %q", ErrNotModel, *head.Schema, Schema)
	}
	m := new(Model)
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("decoding model: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
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
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Validate checks the model's invariants: StartID and EndID exist, ids are
// unique, every transition joins existing states, none leaves EndID or enters
// StartID, and a state, an event and a next label pick at most one
// transition. It indexes the model.
func (m *Model) Validate() error {
	seen := make(map[string]string, len(m.States))
	for _, s := range m.States {
		if s.ID == "" {
			return fmt.Errorf("invalid model: a state has an empty id")
		}
		if _, dup := seen[s.ID]; dup {
			return fmt.Errorf("invalid model: state %q appears twice", s.ID)
		}
		seen[s.ID] = s.Label
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
		k := moveKey{t.From, t.Event, lbl}
		if other, dup := keys[k]; dup {
			return fmt.Errorf("invalid model: not deterministic: %s -[%s]-> label %q reaches both %s and %s", t.From, t.Event, lbl, other, t.To)
		}
		keys[k] = t.To
	}
	m.Reindex()
	return nil
}

// ComputeDigest returns the digest of the model's behaviour: "sha256:" and
// the hex SHA-256 of a canonical text of Initial, the states (id, label) and
// the transitions (from, event, to, count, rare, and the kind of
// generalisation when there is one) in file order. Provenance
// (version, parent, created, generator, source, params) is not part of it, so
// the same data and options give the same digest.
func (m *Model) ComputeDigest() string {
	h := sha256.New()
	var b []byte
	line := func(fields ...string) {
		b = b[:0]
		for i, f := range fields {
			if i > 0 {
				b = append(b, '\t')
			}
			b = strconv.AppendQuote(b, f)
		}
		b = append(b, '\n')
		h.Write(b)
	}
	line("initial", m.Initial)
	for _, s := range m.States {
		if s.MaxRun > 0 {
			line("state", s.ID, s.Label, strconv.Itoa(s.MaxRun))
		} else {
			line("state", s.ID, s.Label)
		}
	}
	for _, t := range m.Transitions {
		if t.Generalized == "" {
			line("transition", t.From, t.Event, t.To, strconv.Itoa(t.Count), strconv.FormatBool(t.Rare))
		} else {
			line("transition", t.From, t.Event, t.To, strconv.Itoa(t.Count), strconv.FormatBool(t.Rare), t.Generalized)
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
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

// WriteFileAtomic writes what write produces to path through a temporary file
// in the same folder and a rename, so that readers never see half a file.
// A path that exists and is not a regular file (/dev/null, /dev/stdout, a
// named pipe) is written in place: renaming over it would replace the device.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if err := write(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := write(f); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
