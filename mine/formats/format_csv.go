package formats

// CSV event logs with a header row, as process-mining tools write them.
// The columns read are pm4py's (pm4py.format_dataframe and
// pm4py.write_xes's dataframe form): case:concept:name (the case),
// concept:name (the activity), time:timestamp and lifecycle:transition;
// failing those, the common names of the same columns (CaseID, Case ID,
// case_id, Activity, Timestamp, ...; see csvAliases), as in pm4py's
// running-example-transformed.csv and the exports of Disco and Celonis.

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// FormatCSV is CSV event logs.
const FormatCSV = "csv"

// The pm4py column names the CSV importer maps to record fields.
const (
	csvCase      = "case:concept:name"
	csvActivity  = "concept:name"
	csvTime      = "time:timestamp"
	csvLifecycle = "lifecycle:transition"
)

// csvAliases are the other names of each column, compared case-blind and
// without spaces, underscores and hyphens, in order of preference.
var csvAliases = map[string][]string{
	csvCase:      {"caseid", "case", "casenumber", "caseno", "traceid"},
	csvActivity:  {"activity", "activityname", "eventname", "task", "action"},
	csvTime:      {"timestamp", "time", "datetime", "completetimestamp", "eventtime", "endtime"},
	csvLifecycle: {"lifecycle", "lifecycletransition", "transition"},
}

// csvFold is a column name as csvAliases compares it.
func csvFold(h string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '_', '-', '\t':
			return -1
		}
		return unicode.ToLower(r)
	}, h)
}

// csvColumn returns the index of the column for field (a pm4py name): the
// column of that name, else the first alias that names a column; -1 when
// none does.
func csvColumn(header []string, field string) int {
	for i, h := range header {
		if strings.TrimSpace(h) == field {
			return i
		}
	}
	for _, a := range csvAliases[field] {
		for i, h := range header {
			if csvFold(h) == a {
				return i
			}
		}
	}
	return -1
}

func init() {
	Register(&Format{
		Name:     FormatCSV,
		Detect:   detectCSV,
		Priority: 1,
		Convert:  convertCSV,
	})
}

// csvDelimiter picks the delimiter of a header line: the most frequent of
// comma, semicolon and tab (comma when none occurs).
func csvDelimiter(header []byte) rune {
	best, n := ',', bytes.Count(header, []byte{','})
	for _, d := range []rune{';', '\t'} {
		if c := bytes.Count(header, []byte(string(d))); c > n {
			best, n = d, c
		}
	}
	return best
}

// detectCSV accepts a head whose complete lines parse as CSV records of one
// width of at least two fields, or whose header names pm4py's case column.
func detectCSV(head []byte) bool {
	head = bytes.TrimPrefix(head, utf8BOM)
	if csvBareCR(head) {
		head = bytes.ReplaceAll(bytes.ReplaceAll(head, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	}
	t := bytes.TrimLeft(head, " \t\r\n")
	if len(t) == 0 || t[0] == '{' || t[0] == '[' || t[0] == '<' {
		return false
	}
	end := bytes.IndexByte(head, '\n')
	if end < 0 {
		end = len(head)
	}
	header := head[:end]
	if bytes.Contains(header, []byte(csvCase)) {
		return true
	}
	// Only the complete lines: in a full head the last one may be cut.
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 && len(head) >= 64<<10 {
		head = head[:i+1]
	}
	cr := csv.NewReader(bytes.NewReader(head))
	cr.Comma = csvDelimiter(header)
	recs, err := cr.ReadAll()
	if err != nil || len(recs) < 2 || len(recs[0]) < 2 {
		return false
	}
	return true
}

// convertCSV writes one record per row: session_id, node, ts and event from
// the case, activity, time and lifecycle columns (event: the lifecycle
// transition, lower case, else the activity), and every named, non-empty
// cell under attrs by its column's name, so that --field can pick other
// columns (--field node=attrs.Activity). Without a case or an activity
// column, and no --field for it, it fails naming the columns. Rows carry no
// step with opt.Sort time: a case is ordered by time, then by row (by row
// alone when a row has no time); with SortFile the step is the row's place
// in its case. Rows of other lifecycle transitions than opt.Lifecycle are
// left out (a note at their line). Each record is placed on the line its
// row starts on, so that mine's messages about it name the CSV line.
func convertCSV(r io.Reader, w io.Writer, opt ImportOptions) error {
	br := getReader(r)
	defer putReader(br)
	if b, _ := br.Peek(3); bytes.Equal(b, utf8BOM) {
		br.Discard(3)
	}
	first, _ := br.Peek(64 << 10)
	var in io.Reader = br
	if csvBareCR(first) {
		in = &crLines{r: br}
	}
	if i := bytes.IndexAny(first, "\r\n"); i >= 0 {
		first = first[:i]
	}
	bound := &itemBound{r: in, max: int64(opt.maxItem)}
	cr := csv.NewReader(bound)
	cr.Comma = csvDelimiter(first)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return bound.csvError(err, 0)
	}
	bound.mark = cr.InputOffset()
	header = append([]string(nil), header...)
	// Each column is a key of the rows' attrs: two of one name would give
	// one key twice, and a reader one of the two values.
	cols := make(map[string]int, len(header))
	headLine, _ := cr.FieldPos(0)
	for i, h := range header {
		if j, dup := cols[h]; dup && h != "" {
			return fmt.Errorf("line %d: columns %d and %d are both named %q: rename one", headLine, j+1, i+1, h)
		}
		cols[h] = i
	}
	iCase, iAct, iTime, iLife := csvColumn(header, csvCase), csvColumn(header, csvActivity), csvColumn(header, csvTime), csvColumn(header, csvLifecycle)
	if (iCase < 0 && opt.fields[FieldSession] == "") || (iAct < 0 && opt.fields[FieldNode] == "") {
		return csvNoColumns(headLine, header, iCase, iAct, iTime, opt.fields)
	}
	perCase := map[string]int64{}
	cell := func(rec []string, i int) string {
		if i < 0 {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	rw := newRecordWriter(w)
	defer rw.release()
	var obj jsonObject
	last := 1 // the line of the last row read
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return bound.csvError(err, last)
		}
		bound.mark = cr.InputOffset()
		line, _ := cr.FieldPos(0)
		last = line
		if err := rw.alignTo(line); err != nil {
			return err
		}
		life := cell(rec, iLife)
		if !opt.keepLifecycle(life) {
			if err := writeNote(rw, false, line, "", "lifecycle:transition "+life); err != nil {
				return err
			}
			continue
		}
		obj.reset()
		kase := cell(rec, iCase)
		obj.strNonEmpty(FieldSession, kase)
		if opt.Sort == SortFile {
			obj.int(FieldStep, perCase[kase])
			perCase[kase]++
		}
		act := cell(rec, iAct)
		obj.strNonEmpty(FieldNode, act)
		if life != "" {
			obj.str(FieldEvent, strings.ToLower(life))
		} else {
			obj.strNonEmpty(FieldEvent, act)
		}
		obj.strNonEmpty(FieldTime, cell(rec, iTime))
		obj.open("attrs")
		for i, h := range header {
			if h == "" || rec[i] == "" {
				continue
			}
			obj.str(h, rec[i])
		}
		if err := rw.write(obj.bytes()); err != nil {
			return err
		}
	}
	return rw.flush()
}

// csvBareCR reports whether the first line of head ends in a CR alone, as
// classic Mac OS ended lines: encoding/csv ends lines at LF only, and would
// read such a file as a header of every row and no rows.
func csvBareCR(head []byte) bool {
	i := bytes.IndexAny(head, "\r\n")
	return i >= 0 && i+1 < len(head) && head[i] == '\r' && head[i+1] != '\n'
}

// crLines reads text whose lines end in CR as text whose lines end in LF,
// a CR LF staying one line end, so that the line numbers of messages are
// the file's.
type crLines struct {
	r  io.Reader
	cr bool // the last byte read was a CR
}

func (c *crLines) Read(p []byte) (int, error) {
	for {
		n, err := c.r.Read(p)
		out := 0
		for _, b := range p[:n] {
			switch {
			case b == '\n' && c.cr:
				c.cr = false
				continue
			case b == '\r':
				c.cr, b = true, '\n'
			default:
				c.cr = false
			}
			p[out] = b
			out++
		}
		if out > 0 || n == 0 || err != nil {
			return out, err
		}
	}
}

// csvNoColumns is the error of a header without a case or an activity
// column that --field does not read from elsewhere: it lists the columns
// and the --field flags still to give (a time column too, when there is
// none).
func csvNoColumns(line int, header []string, iCase, iAct, iTime int, fields map[string]string) error {
	cols := make([]string, len(header))
	for i, h := range header {
		cols[i] = strconv.Quote(h)
	}
	var what, flags []string
	for _, c := range []struct {
		field, desc string
		i           int
	}{
		{FieldSession, "case (" + csvCase + ", CaseID, Case ID, case_id, ...)", iCase},
		{FieldNode, "activity (" + csvActivity + ", Activity, ...)", iAct},
		{FieldTime, "", iTime},
	} {
		if fields[c.field] != "" || c.i >= 0 {
			continue
		}
		if c.desc != "" {
			what = append(what, c.desc)
		}
		flags = append(flags, "--field "+c.field+"=attrs.COLUMN")
	}
	return fmt.Errorf("line %d: no %s column among %s; name them with %s", line, strings.Join(what, " and no "), strings.Join(cols, ", "), strings.Join(flags, " "))
}

// csvError words err, met reading the row after the one at line last
// (0: the header), as b bounds the rows.
func (b *itemBound) csvError(err error, last int) error {
	if errors.Is(err, errItemTooLong) {
		if last == 0 {
			return fmt.Errorf("the header row is longer than %d bytes", b.max)
		}
		return fmt.Errorf("the row after the one at line %d is longer than %d bytes", last, b.max)
	}
	return csvError(err)
}

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("line %d, column %d: %v", pe.Line, pe.Column, pe.Err)
	}
	return err
}
