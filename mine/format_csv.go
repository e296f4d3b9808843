package mine

// CSV event logs with a header row, as process-mining tools write them.
// The default columns are pm4py's (pm4py.format_dataframe and
// pm4py.write_xes's dataframe form): case:concept:name (the case),
// concept:name (the activity), time:timestamp and lifecycle:transition.

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
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

func init() {
	registerFormat(&Format{
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
// pm4py's columns when the header has them (event: the lifecycle
// transition, lower case, else the activity), and every named, non-empty
// cell under attrs by its column's name, so that --field can pick other
// columns (--field node=attrs.Activity). Rows carry no step: a case is
// ordered by time, then by row. Each record is placed on the line its row
// starts on, so that mine's messages about it name the CSV line.
func convertCSV(r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if b, _ := br.Peek(3); bytes.Equal(b, utf8BOM) {
		br.Discard(3)
	}
	first, _ := br.Peek(64 << 10)
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	cr := csv.NewReader(br)
	cr.Comma = csvDelimiter(first)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return csvError(err)
	}
	header = append([]string(nil), header...)
	col := func(name string) int {
		for i, h := range header {
			if strings.TrimSpace(h) == name {
				return i
			}
		}
		return -1
	}
	iCase, iAct, iTime, iLife := col(csvCase), col(csvActivity), col(csvTime), col(csvLifecycle)
	cell := func(rec []string, i int) string {
		if i < 0 {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	rw := newRecordWriter(w)
	var obj jsonObject
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return csvError(err)
		}
		line, _ := cr.FieldPos(0)
		if err := rw.alignTo(line); err != nil {
			return err
		}
		obj.reset()
		obj.strNonEmpty(FieldSession, cell(rec, iCase))
		act := cell(rec, iAct)
		obj.strNonEmpty(FieldNode, act)
		if life := cell(rec, iLife); life != "" {
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

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("line %d, column %d: %v", pe.Line, pe.Column, pe.Err)
	}
	return err
}
