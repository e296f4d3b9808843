package mine

import (
	"bytes"
	"fmt"
	"io"
	"sort"
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
	// a line. nil means the input already is fsmine JSONL. Errors name the
	// position in the input.
	Convert func(r io.Reader, w io.Writer) error
}

var formats = map[string]*Format{}

func registerFormat(f *Format) {
	if _, dup := formats[f.Name]; dup {
		panic("mine: format registered twice: " + f.Name)
	}
	formats[f.Name] = f
}

// FormatAuto asks Read to recognise each input's format from its content.
const FormatAuto = "auto"

// FormatJSONL is fsmine's own record format.
const FormatJSONL = "jsonl"

func init() {
	registerFormat(&Format{
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

// pickFormat returns the format named, or for FormatAuto (or "") the
// highest-priority format whose Detect accepts head.
func pickFormat(name string, head []byte) (*Format, error) {
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
