package formats

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	json "github.com/goccy/go-json"
)

// TestPosReader: line and column of every offset that is not white space
// are those a count from the start gives, whatever the items forgotten
// before it and however the input is cut into reads; blank lines in a row
// are one entry.
func TestPosReader(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for trial := 0; trial < 200; trial++ {
		var b strings.Builder
		for b.Len() < 2000 {
			switch r.IntN(6) {
			case 0:
				b.WriteString(strings.Repeat("\n", r.IntN(5)))
			case 1:
				b.WriteString(" \t\r\n"[r.IntN(4):][:1])
			default:
				b.WriteString("{\"a\":1}"[:1+r.IntN(7)])
			}
		}
		in := b.String()
		p := &posReader{r: iotest.OneByteReader(strings.NewReader(in)), solid: -1}
		if trial%2 == 1 {
			p.r = strings.NewReader(in)
		}
		buf := make([]byte, 1+r.IntN(64))
		mark := int64(0)
		for {
			n, err := p.Read(buf)
			// Ask for offsets from the mark up to what was read, then move
			// the mark on to some offset read.
			for off := mark; off < p.n; off++ {
				if c := in[off]; c == ' ' || c == '\t' || c == '\r' || c == '\n' {
					continue
				}
				line, col := p.pos(off)
				before := in[:off]
				wantLine := strings.Count(before, "\n") + 1
				wantCol := int(off) - (strings.LastIndexByte(before, '\n') + 1) + 1
				if line != wantLine || col != wantCol {
					t.Fatalf("trial %d: offset %d: %d:%d, want %d:%d", trial, off, line, col, wantLine, wantCol)
				}
			}
			if p.n > mark && r.IntN(3) == 0 {
				mark += r.Int64N(p.n - mark + 1)
				p.forget(mark)
			}
			if err == io.EOF || n == 0 && err != nil {
				break
			}
		}
	}
	p := &posReader{solid: -1, r: strings.NewReader("{}\n" + strings.Repeat("\n \r\n\t\n", 100000) + "{}\n")}
	if _, err := io.Copy(io.Discard, p); err != nil {
		t.Fatal(err)
	}
	if len(p.nl) != 2 || p.total() != 300002 {
		t.Errorf("%d entries, %d line ends; want 2, 300002", len(p.nl), p.total())
	}
	if line, col := p.pos(int64(len("{}\n") + 600000)); line != 300002 || col != 1 {
		t.Errorf("the last item at %d:%d, want 300002:1", line, col)
	}
}

// TestJSONItemLimit: an item over the limit is an error at its line, read
// no further than the limit and the decoder's read-ahead.
func TestJSONItemLimit(t *testing.T) {
	big := `{"a":"` + strings.Repeat("x", 1<<20) + `"}`
	in := "{}\n\n{}\n" + big + "\n{}\n"
	jr := newJSONReader(strings.NewReader(in))
	jr.streamItems(4096)
	var items int
	err := jr.items(func(json.RawMessage, int64) error { items++; return nil })
	if err == nil || !strings.HasPrefix(err.Error(), "line 4, column 1: a JSON value over 4096 bytes") || items != 2 {
		t.Errorf("%d items, error %v; want 2 and one at line 4", items, err)
	}
	if jr.pr.n > 1<<19 {
		t.Errorf("read %d bytes of the input, want about the limit", jr.pr.n)
	}
	jr = newJSONReader(bytes.NewReader([]byte(in)))
	items = 0
	if err := jr.items(func(json.RawMessage, int64) error { items++; return nil }); err != nil || items != 4 {
		t.Errorf("without a limit: %d items, %v; want 4", items, err)
	}
}

// TestJSONItemLimitSpace: the white space between items counts for none
// of them, however much of it there is.
func TestJSONItemLimitSpace(t *testing.T) {
	in := "  {}\n" + strings.Repeat("\n \t", 100000) + "{\"a\":1}\n" + strings.Repeat(" ", 50000) + "[1]"
	jr := newJSONReader(strings.NewReader(in))
	jr.streamItems(4096)
	var at []int64
	if err := jr.items(func(_ json.RawMessage, off int64) error { at = append(at, off); return nil }); err != nil || len(at) != 3 {
		t.Fatalf("%d items, %v; want 3, no error", len(at), err)
	}
	if line, col := jr.pr.pos(at[2]); line != 100003 || col != 50001 {
		t.Errorf("the last item at %d:%d, want 100003:50001", line, col)
	}
}

// TestJSONItemLimitArraySpace: in a top-level array the space after a
// comma, which the decoder lets go, counts for no element; the space it
// holds while it looks for the comma or the array's end (after "[", before
// "," or "]") counts, so that the limit bounds what is held.
func TestJSONItemLimitArraySpace(t *testing.T) {
	space := strings.Repeat("\n", 10000)
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{"[{}," + space + `{"a":1}]`, true},
		{"[{}," + space + "," + `{"a":1}]`, false}, // not JSON
		{"[{}" + space + `,{"a":1}]`, false},
		{"[" + space + `{},{"a":1}]`, false},
		{`[{},{"a":1}` + space + "]", false},
	} {
		jr := newJSONReader(strings.NewReader(tt.in))
		jr.streamItems(4096)
		var items int
		err := jr.items(func(json.RawMessage, int64) error { items++; return nil })
		if tt.ok && (err != nil || items != 2) {
			t.Errorf("%q…: %d items, %v; want 2, no error", tt.in[:8], items, err)
		}
		if !tt.ok && err == nil {
			t.Errorf("%q…: %d items and no error; want one", tt.in[:8], items)
		}
		if jr.pr.n > 1<<14 {
			t.Errorf("%q…: read %d bytes, want about the limit", tt.in[:8], jr.pr.n)
		}
	}
}

// TestJSONArrayTrailingSpace: any amount of space after a top-level array
// is read in constant memory and taken; anything else there is an error at
// its own line.
func TestJSONArrayTrailingSpace(t *testing.T) {
	for _, limit := range []int{0, 4096} {
		space := strings.Repeat("\n \t", 1<<20)
		jr := newJSONReader(strings.NewReader("[{}]" + space))
		jr.streamItems(limit)
		if err := jr.items(func(json.RawMessage, int64) error { return nil }); err != nil {
			t.Errorf("limit %d: %v, want no error", limit, err)
		}
		jr = newJSONReader(strings.NewReader("[{}]" + space + "x"))
		jr.streamItems(limit)
		err := jr.items(func(json.RawMessage, int64) error { return nil })
		if want := "line 1048577, column 3: more input after the top-level array"; err == nil || err.Error() != want {
			t.Errorf("limit %d: %v, want %s", limit, err, want)
		}
	}
}

// TestLangfuseV2UserID: the v2 observations API's observations carry the
// user, and no trace does; the records took it from trace objects alone.
func TestLangfuseV2UserID(t *testing.T) {
	in := `{"data":[{"id":"o1","traceId":"t1","startTime":"2026-08-01T10:00:00.000Z","type":"TOOL","level":"DEFAULT","parentObservationId":null,"name":"lookup","userId":"u1","sessionId":"chat-42"}]}`
	var out bytes.Buffer
	if err := convertLangfuse(strings.NewReader(in), &out, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"user_id":"u1"`) {
		t.Errorf("records carry no user_id u1:\n%s", out.String())
	}
}
