package mine

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
)

// PartialSchema names the format of a partial result: what one shard of a
// sharded build writes (fsmine build --partial) and fsmine merge combines.
const PartialSchema = "fsmine.partial/v1"

// A partial result is a gzip-compressed JSONL stream: a header line with the
// shard's sources, counters, read options and name table, then one line per
// session, {"id": ..., "v": [[label, event, dwell_ms or null], ...]}, with
// labels and events as indexes into the name table. It holds exactly what
// Build reads, so merging the partials of shards that do not share sessions
// and building gives the model one build over all the logs gives.
type partialHeader struct {
	Schema     string                 `json:"schema"`
	Files      []automaton.SourceFile `json:"files"`
	Records    int                    `json:"records"`
	Skipped    int                    `json:"skipped"`
	Duplicates int                    `json:"duplicates"`
	Dropped    int                    `json:"dropped"`
	Emptied    int                    `json:"emptied,omitempty"`
	Folded     int                    `json:"folded"`
	Detours    int                    `json:"detours"`
	StepGaps   int                    `json:"step_gaps"`
	// LeftOut counts the events the importers left out as asked (see
	// Log.LeftOut); left out of the file at 0.
	LeftOut int       `json:"left_out,omitempty"`
	Bad     []BadLine `json:"bad"`
	// Warnings and Warned are what the importers said of the read (see
	// Log.Warnings), so that merge says it too; left out at none.
	Warnings []BadLine         `json:"warnings,omitempty"`
	Warned   int               `json:"warned,omitempty"`
	Fields   map[string]string `json:"fields"`
	Labels   automaton.RawJSON `json:"labels"`
	// Import is the importers' options the log was read with: {} for the
	// defaults; absent in files an earlier fsmine wrote, which did not
	// say (Log.importUnknown).
	Import   *automaton.Import `json:"import,omitempty"`
	Names    []string          `json:"names"`
	Sessions int               `json:"sessions"`
	// Model is the digest of the model whose evidence this is (see
	// WriteEvidence); empty for a shard's partial result.
	Model string `json:"model,omitempty"`
}

type partialSession struct {
	ID     string   `json:"id"`
	Visits [][3]any `json:"v"`
}

// errStreamed refuses a log read streaming where its sessions are needed.
var errStreamed = errors.New("the log was read streaming and holds no sessions (read it with ReadOptions.Stream off)")

// WritePartial writes the log as a partial result (see PartialSchema). It
// refuses a streamed log, which holds no sessions.
func (lg *Log) WritePartial(w io.Writer) error {
	return lg.writePartial(w, "")
}

// writePartial writes the log as a partial result whose header names model
// (a digest, or "" for none).
func (lg *Log) writePartial(w io.Writer, model string) error {
	if lg.Streamed {
		return errStreamed
	}
	zw := gzip.NewWriter(w)
	bw := bufio.NewWriterSize(zw, 64<<10)
	h := partialHeader{
		Schema: PartialSchema, Files: lg.Files,
		Records: lg.Records, Skipped: lg.Skipped, Duplicates: lg.Duplicates, Dropped: lg.Dropped, Emptied: lg.Emptied,
		Folded: lg.Folded, Detours: lg.Detours, StepGaps: lg.StepGaps, LeftOut: lg.LeftOut, Bad: lg.Bad,
		Warnings: lg.Warnings, Warned: lg.Warned,
		Fields: lg.Fields, Import: lg.Import, Names: lg.names, Sessions: len(lg.Sessions), Model: model,
	}
	if h.Import == nil && !lg.importUnknown {
		h.Import = &automaton.Import{}
	}
	if lg.Rules != nil {
		h.Labels = lg.Rules.Raw()
	}
	// No line past what ReadPartial takes (see gzLines): a partial result
	// is written only if it reads back.
	head, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if len(head) > ownHeaderBound {
		return fmt.Errorf("the log's %d names and its counts take %d bytes, more than a partial result's header holds (%d): label the steps so that names carry no ids (see docs/labels.md)", len(lg.names), len(head), ownHeaderBound)
	}
	bw.Write(head)
	bw.WriteByte('\n')
	// Each session's line is encoded into one buffer, reused.
	var line bytes.Buffer
	enc := json.NewEncoder(&line)
	var ps partialSession
	for _, s := range lg.Sessions {
		ps.ID = s.ID
		ps.Visits = ps.Visits[:0]
		for _, v := range s.Visits {
			var d any
			if v.HasDwell {
				d = v.DwellMS
			}
			ps.Visits = append(ps.Visits, [3]any{v.Label, v.Event, d})
		}
		line.Reset()
		if err := enc.Encode(&ps); err != nil { // the line and its newline
			return err
		}
		if n := line.Len() - 1; n > ownLineBound {
			return fmt.Errorf("session %q: its %d visits take %d bytes, more than a line of a partial result holds (%d)", s.ID, len(s.Visits), n, ownLineBound)
		}
		if _, err := bw.Write(line.Bytes()); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// ReadPartial reads a partial result written by WritePartial. name is used
// in errors.
func ReadPartial(r io.Reader, name string) (*Log, error) {
	lg, _, err := readPartial(r, name)
	return lg, err
}

// readPartial reads a partial result and returns the model digest its
// header names ("" for none). Every field is checked, as a read would have
// made it, so that merging partials gives a model that later commands read;
// errors name the file and line.
func readPartial(r io.Reader, name string) (*Log, string, error) {
	lines, err := newGzLines(r, name)
	if err != nil {
		return nil, "", fmt.Errorf("%s: not an fsmine partial result: %w", name, err)
	}
	var h partialHeader
	if err := lines.decodeHeader(&h, PartialSchema, "an fsmine partial result", "partial schema"); err != nil {
		return nil, "", err
	}
	if err := h.check(); err != nil {
		return nil, "", fmt.Errorf("%s:1: %w", name, err)
	}
	lg := newLog(0)
	lg.Files = h.Files
	lg.Records, lg.Skipped, lg.Duplicates, lg.Dropped, lg.Emptied = h.Records, h.Skipped, h.Duplicates, h.Dropped, h.Emptied
	lg.Folded, lg.Detours, lg.StepGaps, lg.LeftOut, lg.Bad = h.Folded, h.Detours, h.StepGaps, h.LeftOut, h.Bad
	lg.Warnings, lg.Warned = h.Warnings, h.Warned
	lg.Fields, lg.Import, lg.importUnknown = h.Fields, h.Import, h.Import == nil
	if lg.Import != nil && *lg.Import == (automaton.Import{}) {
		lg.Import = nil
	}
	if len(h.Labels) > 0 {
		if lg.Rules, err = ParseStoredRules(h.Labels); err != nil {
			return nil, "", fmt.Errorf("%s:1: label rules: %w", name, err)
		}
	}
	for _, n := range h.Names {
		lg.intern(n)
	}
	if len(lg.names) != len(h.Names) {
		return nil, "", fmt.Errorf("%s:1: the name table repeats a name", name)
	}
	// The header's count is checked against the sessions read, not
	// trusted for memory: the list grows as they come.
	lg.Sessions = make([]Session, 0, min(h.Sessions, 1<<16))
	for i := 0; i < h.Sessions; i++ {
		var ps struct {
			ID     string              `json:"id"`
			Visits [][]json.RawMessage `json:"v"`
		}
		if err := lines.decodeLine(&ps, "id", "v"); err != nil {
			if err == io.EOF {
				return nil, "", fmt.Errorf("%s: the file ends after %d of the %d sessions its header names", name, i, h.Sessions)
			}
			return nil, "", err
		}
		at := fmt.Sprintf("%s:%d: session %q", name, lines.line, ps.ID)
		// A read makes no session without an id or a visit (a session
		// whose records were all dropped is counted as emptied), and
		// gives its sessions sorted by id, each once.
		switch {
		case ps.ID == "" || len(ps.Visits) == 0:
			return nil, "", fmt.Errorf("%s:%d: session %d of %d has no id or no visit", name, lines.line, i+1, h.Sessions)
		case i > 0 && lg.Sessions[i-1].ID >= ps.ID:
			return nil, "", fmt.Errorf("%s: sessions are not sorted by id, each once (it follows %q)", at, lg.Sessions[i-1].ID)
		}
		s := Session{ID: ps.ID, Visits: make([]Visit, len(ps.Visits))}
		for j, pv := range ps.Visits {
			var label, event uint32
			if len(pv) != 3 || json.Unmarshal(pv[0], &label) != nil || json.Unmarshal(pv[1], &event) != nil ||
				int(label) >= len(lg.names) || int(event) >= len(lg.names) {
				return nil, "", fmt.Errorf("%s: visit %d is not [label, event, dwell]", at, j+1)
			}
			if l := lg.names[label]; l == "" || isReserved(l) {
				return nil, "", fmt.Errorf("%s: visit %d has the label %q, which no read gives", at, j+1, l)
			}
			v := Visit{Label: label, Event: event, Step: -1, Records: 1}
			if string(pv[2]) != "null" {
				// A read's dwell is a time spent: not negative, and below
				// what a model file can write (2^63 ms).
				if err := json.Unmarshal(pv[2], &v.DwellMS); err != nil || !(v.DwellMS >= 0 && v.DwellMS < 1<<63) {
					return nil, "", fmt.Errorf("%s: visit %d has a bad dwell", at, j+1)
				}
				v.HasDwell = true
			}
			s.Visits[j] = v
		}
		lg.Sessions = append(lg.Sessions, s)
	}
	if err := lines.end(fmt.Sprintf("the last of the %d sessions the header names", h.Sessions)); err != nil {
		return nil, "", err
	}
	return lg, h.Model, nil
}

// check checks what a header says of the read: counts that are not
// negative and add up over the files, the files a read names, a field map
// a read takes, and no more bad lines than a read keeps.
func (h *partialHeader) check() error {
	for _, c := range []struct {
		what string
		n    int
	}{{"records", h.Records}, {"skipped", h.Skipped}, {"duplicates", h.Duplicates}, {"dropped", h.Dropped}, {"emptied", h.Emptied},
		{"folded", h.Folded}, {"detours", h.Detours}, {"step_gaps", h.StepGaps}, {"left_out", h.LeftOut}, {"sessions", h.Sessions}} {
		if c.n < 0 {
			return fmt.Errorf("the header's %s is negative (%d)", c.what, c.n)
		}
	}
	sums := []struct {
		what      string
		sum, want int
		over      bool
	}{{what: "records", want: h.Records}, {what: "skipped", want: h.Skipped}, {what: "duplicates", want: h.Duplicates}}
	if h.Import != nil {
		if err := h.Import.Validate(); err != nil {
			return fmt.Errorf("the header's %w", err)
		}
	}
	for i, f := range h.Files {
		switch {
		case f.Path == "":
			return fmt.Errorf("files[%d] has no path", i)
		case f.Records < 0 || f.Skipped < 0 || f.Duplicates < 0:
			return fmt.Errorf("files[%d] (%s) has a negative count", i, f.Path)
		case f.SHA256 != "" && !isSHA256(f.SHA256):
			return fmt.Errorf("files[%d] (%s): sha256 %q is not 64 lowercase hex digits", i, f.Path, f.SHA256)
		case f.Format != "" && !slices.Contains(Formats(), f.Format):
			return fmt.Errorf("files[%d] (%s): format %q is none of %s", i, f.Path, f.Format, strings.Join(Formats(), ", "))
		}
		// A sum past the header's count stays past it: the int would
		// wrap around to it.
		for k, n := range []int{f.Records, f.Skipped, f.Duplicates} {
			if c := &sums[k]; c.over || c.sum > c.want-n {
				c.over = true
			} else {
				c.sum += n
			}
		}
	}
	for _, c := range sums {
		if c.over || c.sum != c.want {
			return fmt.Errorf("the header's %s (%d) are not the sum of its files'", c.what, c.want)
		}
	}
	if len(h.Bad) > maxBadExamples {
		return fmt.Errorf("%d bad lines, and a read keeps %d", len(h.Bad), maxBadExamples)
	}
	if len(h.Warnings) > maxBadExamples || h.Warned < len(h.Warnings) {
		return fmt.Errorf("%d warnings of %d: a read keeps at most %d, and counts each", len(h.Warnings), h.Warned, maxBadExamples)
	}
	if err := CheckFieldMap(h.Fields); err != nil {
		return fmt.Errorf("fields: %w", err)
	}
	return nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ErrSessionAcrossShards is returned by MergeLogs when two shards hold the
// same session.
var ErrSessionAcrossShards = errors.New("a session is in more than one shard")

// MergeLogs combines the logs of shards into one, as if one Read had read
// all their inputs. Shards must have been read with the same options, and a
// session must stay in one shard (shard the logs by session id): a session
// found in two shards is refused with ErrSessionAcrossShards, naming it and
// the shards. names labels the shards in errors.
func MergeLogs(logs []*Log, names []string) (*Log, error) {
	if len(logs) == 0 {
		return nil, errors.New("no partial results to merge")
	}
	out := newLog(0)
	out.Fields, out.Rules, out.importUnknown = logs[0].Fields, logs[0].Rules, true
	// The import options of the logs that say theirs (a file an earlier
	// fsmine wrote does not), the first one's.
	first := 0
	for i, lg := range logs {
		if !lg.importUnknown {
			out.Import, out.importUnknown, first = lg.Import, false, i
			break
		}
	}
	owner := map[string]int{}
	// A log's path and digest name it in every shard that read it.
	readBy := map[[2]string]int{}
	var visits uint64
	for i, lg := range logs {
		if lg.Streamed {
			return nil, fmt.Errorf("%s: %w", names[i], errStreamed)
		}
		if !sameFields(lg.Fields, out.Fields) {
			return nil, fmt.Errorf("%s and %s were read with different --field maps", names[0], names[i])
		}
		if !SameLabelling(rawRules(lg.Rules), rawRules(out.Rules)) {
			return nil, fmt.Errorf("%s and %s were labelled with different rules", names[0], names[i])
		}
		if !lg.importUnknown && !sameImport(lg.Import, out.Import) {
			return nil, fmt.Errorf("%s and %s were read with different import options: %s and %s", names[first], names[i], importText(out.Import), importText(lg.Import))
		}
		for _, f := range lg.Files {
			// Of a file that gave no line (empty, or read without its
			// digest) a second reading changes no count.
			if f.SHA256 == "" || f.Records+f.Skipped == 0 {
				continue
			}
			k := [2]string{f.Path, f.SHA256}
			if j, dup := readBy[k]; dup {
				return nil, fmt.Errorf("%s (sha256 %s) is in %s and in %s: the same log read twice", f.Path, f.SHA256[:12], names[j], names[i])
			}
			readBy[k] = i
		}
		out.Files = append(out.Files, lg.Files...)
		for _, c := range []struct {
			sum *int
			n   int
		}{{&out.Records, lg.Records}, {&out.Skipped, lg.Skipped}, {&out.Duplicates, lg.Duplicates}, {&out.Dropped, lg.Dropped},
			{&out.Emptied, lg.Emptied}, {&out.Folded, lg.Folded}, {&out.Detours, lg.Detours}, {&out.StepGaps, lg.StepGaps},
			{&out.LeftOut, lg.LeftOut}} {
			if c.n < 0 || *c.sum > math.MaxInt-c.n {
				return nil, fmt.Errorf("%s: a count (%d) that the counts of the partial results before it cannot add up with", names[i], c.n)
			}
			*c.sum += c.n
		}
		for _, b := range lg.Bad {
			if len(out.Bad) < maxBadExamples {
				out.Bad = append(out.Bad, b)
			}
		}
		for _, w := range lg.Warnings {
			if len(out.Warnings) < maxBadExamples {
				out.Warnings = append(out.Warnings, w)
			}
		}
		if lg.Warned < 0 || out.Warned > math.MaxInt-lg.Warned {
			return nil, fmt.Errorf("%s: a count (%d) that the counts of the partial results before it cannot add up with", names[i], lg.Warned)
		}
		out.Warned += lg.Warned
		remap := make([]uint32, len(lg.names))
		for id, n := range lg.names {
			remap[id] = out.intern(n)
		}
		for _, s := range lg.Sessions {
			if j, dup := owner[s.ID]; dup {
				return nil, fmt.Errorf("%w: session %q is in %s and in %s; shard the logs by session id", ErrSessionAcrossShards, s.ID, names[j], names[i])
			}
			owner[s.ID] = i
			// Histograms count a state's visits in 32 bits (see
			// dwellHist), as a read counts its records.
			if visits += uint64(len(s.Visits)); visits > math.MaxUint32 {
				return nil, errors.New("more than 4,294,967,295 visits in the partial results: a model counts them in 32 bits")
			}
			vs := make([]Visit, len(s.Visits))
			for k, v := range s.Visits {
				v.Label, v.Event = remap[v.Label], remap[v.Event]
				vs[k] = v
			}
			out.Sessions = append(out.Sessions, Session{ID: s.ID, Visits: vs})
		}
	}
	sort.SliceStable(out.Files, func(i, j int) bool { return out.Files[i].Path < out.Files[j].Path })
	sort.Slice(out.Sessions, func(i, j int) bool { return out.Sessions[i].ID < out.Sessions[j].ID })
	return out, nil
}

// sameImport reports whether two logs were read with the same importers'
// options.
func sameImport(a, b *automaton.Import) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// importText names importers' options as build's flags give them.
func importText(im *automaton.Import) string {
	if im == nil {
		return "the defaults"
	}
	var parts []string
	if im.Sort != "" {
		parts = append(parts, "--sort "+im.Sort)
	}
	if im.Lifecycle != "" {
		parts = append(parts, "--lifecycle "+im.Lifecycle)
	}
	if im.Classifier != "" {
		parts = append(parts, "--classifier "+strconv.Quote(im.Classifier))
	}
	if im.KeepSpans {
		parts = append(parts, "--keep-spans")
	}
	return strings.Join(parts, " ")
}

func rawRules(r *Rules) []byte {
	if r == nil {
		return nil
	}
	return r.Raw()
}

func sameFields(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
