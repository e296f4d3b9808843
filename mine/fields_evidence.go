package mine

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/goccy/go-json"
)

// FieldsSchema names the format of FieldEvidence files.
const FieldsSchema = "fsmine.fields/v1"

// FieldEvidence is what RecordFields keeps of a log's record fields so that
// a model's next version (build --update) finds them without the logs: the
// field set of every visit of every session, and what the read counted.
// Written by WriteFieldEvidence as a gzip-compressed JSONL stream: a header
// line, then one line per session, {"id": ..., "v": [set, ...]}, a visit's
// set an index into Sets.
type FieldEvidence struct {
	Schema string `json:"schema"`
	// Records is the number of records read; Counts, per path of Paths
	// (the tracked paths, sorted), how many of them carried it.
	Records int      `json:"records"`
	Paths   []string `json:"paths"`
	Counts  []int    `json:"counts"`
	// FirstUntracked, TooLong, Unnamed and Unreadable are the read's (see
	// FieldReport).
	FirstUntracked string `json:"first_untracked,omitempty"`
	TooLong        int    `json:"too_long"`
	Unnamed        int    `json:"unnamed"`
	Unreadable     int    `json:"unreadable"`
	// Sets are the distinct field sets, as sorted indexes into Paths.
	Sets [][]int `json:"sets"`
	// Sessions are sorted by id; not in the header line.
	Sessions    []FieldsOfSession `json:"-"`
	NumSessions int               `json:"sessions"`
	// Model is the digest of the model these are the fields evidence of
	// (see WriteFieldEvidence); empty in files written before it was.
	Model string `json:"model,omitempty"`
}

// FieldsOfSession is one session of FieldEvidence: per visit, its field set.
type FieldsOfSession struct {
	ID     string `json:"id"`
	Visits []int  `json:"v"`
}

// fieldEvidence gathers the evidence of lg's visits: sets and paths are
// numbered in the order the sessions (sorted by id) first use them, so that
// the file does not depend on the order the records were read in.
func fieldEvidence(lg *Log, rep *FieldReport, names []string, counts []int, table [][]uint32, visitSet [][]int32) *FieldEvidence {
	ev := &FieldEvidence{Schema: FieldsSchema, Records: rep.Records, FirstUntracked: rep.FirstUntracked,
		TooLong: rep.TooLong, Unnamed: rep.Unnamed, Unreadable: rep.Unreadable}
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return names[order[i]] < names[order[j]] })
	index := make([]int, len(names))
	for k, id := range order {
		ev.Paths = append(ev.Paths, names[id])
		ev.Counts = append(ev.Counts, counts[id])
		index[id] = k
	}
	// Sets by content: two entries of the table may hold the same paths
	// once an evicted path has left them.
	byTable := map[int32]int{}
	byContent := map[string]int{}
	for si := range lg.Sessions {
		fs := FieldsOfSession{ID: lg.Sessions[si].ID, Visits: make([]int, len(visitSet[si]))}
		for i, t := range visitSet[si] {
			if t < 0 {
				panic("internal error: fields evidence of a visit not read")
			}
			k, ok := byTable[t]
			if !ok {
				set := make([]int, len(table[t]))
				for j, id := range table[t] {
					set[j] = index[id]
				}
				slices.Sort(set)
				key := fmt.Sprint(set)
				if k, ok = byContent[key]; !ok {
					k = len(ev.Sets)
					byContent[key] = k
					ev.Sets = append(ev.Sets, set)
				}
				byTable[t] = k
			}
			fs.Visits[i] = k
		}
		ev.Sessions = append(ev.Sessions, fs)
	}
	sort.Slice(ev.Sessions, func(i, j int) bool { return ev.Sessions[i].ID < ev.Sessions[j].ID })
	ev.NumSessions = len(ev.Sessions)
	return ev
}

// Write writes the evidence (see FieldEvidence), naming ev.Model.
func (ev *FieldEvidence) Write(w io.Writer) error {
	zw := gzip.NewWriter(w)
	bw := bufio.NewWriterSize(zw, 64<<10)
	enc := json.NewEncoder(bw)
	h := *ev
	h.Schema, h.NumSessions = FieldsSchema, len(ev.Sessions)
	if err := enc.Encode(&h); err != nil {
		return err
	}
	for i := range ev.Sessions {
		if err := enc.Encode(&ev.Sessions[i]); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// ReadFieldEvidence reads what FieldEvidence.Write wrote, checking every
// index; name is used in errors.
func ReadFieldEvidence(r io.Reader, name string) (*FieldEvidence, error) {
	lines, err := newGzLines(r, name)
	if err != nil {
		return nil, fmt.Errorf("%s: not fsmine fields evidence: %w", name, err)
	}
	ev := new(FieldEvidence)
	if err := lines.decodeHeader(ev, FieldsSchema, "fsmine fields evidence", "fields schema"); err != nil {
		return nil, err
	}
	switch {
	case len(ev.Counts) != len(ev.Paths):
		return nil, fmt.Errorf("%s: %d counts for %d paths", name, len(ev.Counts), len(ev.Paths))
	case len(ev.Paths) > MaxFieldPaths:
		return nil, fmt.Errorf("%s: %d paths, at most %d", name, len(ev.Paths), MaxFieldPaths)
	case ev.Records < 0 || ev.TooLong < 0 || ev.Unnamed < 0 || ev.Unreadable < 0 || ev.NumSessions < 0:
		return nil, fmt.Errorf("%s: a negative count", name)
	}
	for i, p := range ev.Paths {
		if p == "" || len(p) > MaxFieldPath || (i > 0 && ev.Paths[i-1] >= p) || ev.Counts[i] < 0 || ev.Counts[i] > ev.Records {
			return nil, fmt.Errorf("%s: paths[%d] %q: want sorted, unique paths of 1 to %d bytes with counts from 0 to the records", name, i, p, MaxFieldPath)
		}
	}
	for k, set := range ev.Sets {
		for j, x := range set {
			if x < 0 || x >= len(ev.Paths) || (j > 0 && set[j-1] >= x) {
				return nil, fmt.Errorf("%s: sets[%d] is not a sorted list of path indexes", name, k)
			}
		}
	}
	for i := 0; i < ev.NumSessions; i++ {
		var s FieldsOfSession
		if err := lines.decodeLine(&s, "id", "v"); err != nil {
			if err == io.EOF {
				return nil, fmt.Errorf("%s: the file ends after %d of the %d sessions its header names", name, i, ev.NumSessions)
			}
			return nil, err
		}
		for _, k := range s.Visits {
			if k < 0 || k >= len(ev.Sets) {
				return nil, fmt.Errorf("%s: session %q: a visit's set %d is not one of the %d sets", name, s.ID, k, len(ev.Sets))
			}
		}
		if i > 0 && ev.Sessions[i-1].ID >= s.ID {
			return nil, fmt.Errorf("%s: session %q: sessions are not sorted and unique", name, s.ID)
		}
		ev.Sessions = append(ev.Sessions, s)
	}
	if err := lines.end(fmt.Sprintf("the last of the %d sessions the header names", ev.NumSessions)); err != nil {
		return nil, err
	}
	return ev, nil
}
