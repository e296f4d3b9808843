package formats

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Format converts an input in some trace format into fsmine's own JSONL
// records, so that every format shares one parser, labelling and ordering.
// Adding a format is a new file that calls registerFormat from init; it does
// not touch the miner.
type Format struct {
	// Name is what --from takes.
	Name string
	// Detect reports whether the start of an input (up to 64 KiB, already
	// gunzipped) is in this format; nil means the format is never guessed.
	Detect func(head []byte) bool
	// Priority orders detection: higher is tried first. Specific formats
	// must come before the JSONL fallback (priority 0).
	Priority int
	// Convert reads the whole input and writes records to w, one JSON object
	// a line, and notes of the items it skipped or left out (writeNote).
	// nil means the input already is fsmine JSONL. Errors name the
	// position in the input.
	Convert func(r io.Reader, w io.Writer, opt ImportOptions) error
	// Dir, when set, reads a folder in this format: ok is false when dir
	// is not one (see DirInput).
	Dir func(dir string) (in Input, ok bool, err error)
}

var formats = map[string]*Format{}

// All returns the registered formats, by name.
func All() []*Format {
	out := make([]*Format, 0, len(formats))
	for _, f := range formats {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Register adds a format to the registry, from an init function: a new
// importer is a file of this package (or of another that imports it) that
// registers its Format. A name registered twice is a programming error.
func Register(f *Format) {
	if _, dup := formats[f.Name]; dup {
		panic("formats: format registered twice: " + f.Name)
	}
	formats[f.Name] = f
}

// FormatAuto asks Read to recognise each input's format from its content.
const FormatAuto = "auto"

// FormatJSONL is fsmine's own record format.
const FormatJSONL = "jsonl"

func init() {
	Register(&Format{
		Name: FormatJSONL,
		// JSONL is the fallback: an empty input, or one with a line that
		// starts with an object, so that a bad first line is reported as
		// a bad line rather than as an unknown format.
		Detect: func(head []byte) bool {
			if len(bytes.TrimSpace(head)) == 0 {
				return true
			}
			for _, line := range bytes.Split(head, []byte{'\n'}) {
				if l := bytes.TrimLeft(line, " \t\r"); len(l) > 0 && l[0] == '{' {
					return true
				}
			}
			return false
		},
	})
}

// Formats lists the format names Read knows, sorted, with FormatAuto first.
func Formats() []string {
	names := []string{FormatAuto}
	var rest []string
	for n := range formats {
		rest = append(rest, n)
	}
	sort.Strings(rest)
	return append(names, rest...)
}

// PickFor is Pick for a read whose record fields opt remaps (see
// ImportOptions.WithFields, --field): for FormatAuto (or ""), a head whose
// first JSON object has the session and the node where the map says, one
// of them remapped, is fsmine's own records, whatever else it holds, as
// one with a top-level node or step is: a log remapped with --field
// ({"conv":..., "tool":..., "workflow_name":...}) is not another format's.
func PickFor(name string, head []byte, opt ImportOptions) (*Format, error) {
	if (name == "" || name == FormatAuto) && remappedRecord(head, opt.fields) {
		return formats[FormatJSONL], nil
	}
	return Pick(name, head)
}

// remappedRecord reports whether head starts with a JSON object that has
// the session and node paths of fields, one of them not the default.
func remappedRecord(head []byte, fields map[string]string) bool {
	sess, node := fields[FieldSession], fields[FieldNode]
	if sess == "" && node == "" {
		return false
	}
	s := sniffJSON(head)
	if s == nil || s.array {
		return false
	}
	return s.hasPath(firstOf(sess, FieldSession)) && s.hasPath(firstOf(node, FieldNode))
}

// Pick returns the format named, or for FormatAuto (or "") the
// highest-priority format whose Detect accepts head.
func Pick(name string, head []byte) (*Format, error) {
	if name != "" && name != FormatAuto {
		f, ok := formats[name]
		if !ok {
			return nil, fmt.Errorf("unknown format %q (want one of %s)", name, strings.Join(Formats(), ", "))
		}
		return f, nil
	}
	var cands []*Format
	for _, f := range formats {
		if f.Detect != nil {
			cands = append(cands, f)
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].Priority != cands[j].Priority {
			return cands[i].Priority > cands[j].Priority
		}
		return cands[i].Name < cands[j].Name
	})
	for _, f := range cands {
		if f.Detect(head) {
			return f, nil
		}
	}
	return nil, fmt.Errorf("format not recognised (name it with --from: %s)", strings.Join(Formats()[1:], ", "))
}

// The orders ImportOptions.Sort takes.
const (
	SortTime = "time"
	SortFile = "file"
)

// The lifecycle transitions ImportOptions.Lifecycle takes.
const (
	LifecycleAll      = "all"
	LifecycleComplete = "complete"
	LifecycleStart    = "start"
)

// ImportOptions say how the importers of event logs (XES, CSV) read them.
// The zero value is the default: events in time order, every lifecycle
// transition, the activity (concept:name) as the node.
type ImportOptions struct {
	// Sort orders the events of a case: SortTime (the default) by time,
	// events without a time last, ties in file order, as pm4py does
	// (pm4py.format_dataframe sorts by case, time and row); SortFile as
	// they are written.
	Sort string
	// Lifecycle keeps the events of one lifecycle:transition
	// (LifecycleComplete, LifecycleStart; case-insensitive) and leaves the
	// others out, counted in Log.LeftOut; events without a transition are
	// kept. LifecycleAll or "" keeps every event.
	Lifecycle string
	// Classifier names the XES <classifier> whose keys make an event's
	// node (their values joined by "+", as pm4py joins them); "" is the
	// activity, concept:name.
	Classifier string
	// KeepSpans makes every span of a span-tree format (Langfuse,
	// LangSmith, Phoenix, OTLP, OpenAI Agents) a step; by default wrappers and the LLM
	// calls inside a step are folded (see foldSpans) and counted in
	// Log.LeftOut.
	KeepSpans bool
	// Seen makes the tau importer write the text each message brings into
	// the session (the user's words, a tool's answer) as attrs.seen, the
	// sources of the argument rules (see LearnArgs).
	Seen bool

	// fields is ReadOptions.Fields: an importer does not ask for a column
	// that --field reads from elsewhere.
	fields map[string]string
	// maxItem is ReadOptions.MaxLine: the most bytes of one item (a line,
	// an array's element) of a span format (0: no limit).
	maxItem int
}

// WithMaxItem returns o with the longest item a span format's importer
// reads, in bytes (see mine.ReadOptions.MaxLine); 0 is no limit.
func (o ImportOptions) WithMaxItem(n int) ImportOptions {
	o.maxItem = n
	return o
}

// WithFields returns o with the field map of the read (see
// mine.ReadOptions.Fields): an importer does not ask for a column that
// --field reads from elsewhere.
func (o ImportOptions) WithFields(fields map[string]string) ImportOptions {
	o.fields = fields
	return o
}

// Check reports the first option that is not one of its values.
func (o ImportOptions) Check() error {
	switch o.Sort {
	case "", SortTime, SortFile:
	default:
		return fmt.Errorf("sort order %q: want %s or %s", o.Sort, SortTime, SortFile)
	}
	switch o.Lifecycle {
	case "", LifecycleAll, LifecycleComplete, LifecycleStart:
	default:
		return fmt.Errorf("lifecycle %q: want %s, %s or %s", o.Lifecycle, LifecycleComplete, LifecycleStart, LifecycleAll)
	}
	return nil
}

// keepLifecycle reports whether an event with lifecycle transition t is
// kept.
func (o ImportOptions) keepLifecycle(t string) bool {
	return o.Lifecycle == "" || o.Lifecycle == LifecycleAll || t == "" || strings.EqualFold(t, o.Lifecycle)
}

// A Note is a line an importer writes among its records for an item it
// did not turn into a record: one it skipped as bad (read counts it as a
// skipped line, and --strict stops there), or one it left out as asked
// (counted in Log.LeftOut). It starts with a NUL byte, which no record
// starts with; read honours notes only in what an importer wrote, never
// in a JSONL input. Layout: NUL, 's' or 'l', the input line, NUL, the
// file (empty: the input's name), NUL, the reason.
type Note struct {
	File   string // the input, or a file within a folder input
	Line   int
	Reason string
	Skip   bool // a bad item, not one left out as asked
	Warn   bool // neither: a word on how items were read (Log.Warnings)
}

// writeNote writes a note of an item at line line of the input: a skip
// when skip is set, else an item left out. file names a file within a
// folder input, "" the input itself. The note takes the next line of rw's
// output; an importer that places records on their input lines writes a
// note before passing the item's line.
func writeNote(rw *recordWriter, skip bool, line int, file, reason string) error {
	b := []byte{0, 'l'}
	if skip {
		b[1] = 's'
	}
	b = strconv.AppendInt(b, int64(line), 10)
	b = append(b, 0)
	b = append(b, noteText(file)...)
	b = append(b, 0)
	b = append(b, noteText(reason)...)
	return rw.write(b)
}

// writeWarning writes a note that is no item's: a word on how the input's
// items were read, at line line, which the read passes on
// (Log.Warnings).
func writeWarning(rw *recordWriter, line int, reason string) error {
	b := []byte{0, 'w'}
	b = strconv.AppendInt(b, int64(line), 10)
	b = append(b, 0, 0)
	b = append(b, noteText(reason)...)
	return rw.write(b)
}

// noteText keeps a note on one line: NUL, CR and LF become spaces.
func noteText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == 0 || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// ParseNote reads a note written by writeNote, found on line of input.
func ParseNote(l []byte, input string, line int) Note {
	n := Note{Skip: len(l) > 1 && l[1] == 's', Warn: len(l) > 1 && l[1] == 'w'}
	n.File, n.Line = input, line
	parts := bytes.SplitN(l[min(len(l), 2):], []byte{0}, 3)
	if len(parts) == 3 {
		if v, err := strconv.Atoi(string(parts[0])); err == nil && v > 0 {
			n.Line = v
		}
		if len(parts[1]) > 0 {
			n.File = string(parts[1])
		}
		n.Reason = string(parts[2])
	}
	return n
}

// DirInput returns the input of a folder in one of the formats that are
// folders (a tau2-bench experiment: results.json and simulations/): ok is
// false when dir is in none of them. format names the format, "" or
// FormatAuto any.
func DirInput(dir, format string) (in Input, ok bool, err error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return Input{}, false, err
	}
	names := make([]string, 0, len(formats))
	for n, f := range formats {
		if f.Dir != nil && (format == "" || format == FormatAuto || format == n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if in, ok, err := formats[n].Dir(dir); ok || err != nil {
			return in, ok, err
		}
	}
	return Input{}, false, nil
}
