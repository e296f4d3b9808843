package serve

import (
	"bytes"
	"io"
	"math"
	"reflect"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/guard"
)

func TestAppendDecision(t *testing.T) {
	moves := []guard.MoveOption{
		{Event: "ok", To: "s3", Label: "get_order_details", Prob: 0.75},
		{Event: "error", To: "s4", Label: "transfer_to_human_agents", Prob: 0.25, Rare: true},
	}
	tests := []struct {
		name string
		d    guard.Decision
	}{
		{"allowed", guard.Decision{Session: "s1", Step: 3, Allowed: true, State: "s3", Label: "get_order_details", Prob: 0.5, NextMoves: moves}},
		{"no moves", guard.Decision{Session: "s1", State: "__end__", Label: "__end__", NextMoves: []guard.MoveOption{}}},
		{"nil moves", guard.Decision{Session: "s1"}},
		{"denied with fallback", guard.Decision{Session: "s2", Step: 12, Reason: guard.ReasonWatchdog, State: "s9", Label: "escalate", Rare: true, Prob: 1,
			Fallback: &guard.Fallback{Event: "timeout", To: "s9", Label: "escalate"}}},
		{"fallback without label", guard.Decision{Fallback: &guard.Fallback{To: "s9"}}},
		{"strings to escape", guard.Decision{Session: "a\"b\\c\n\t\x01\b\f<x>&y\u2028é\xff", State: "<&>", Label: "Q&A",
			NextMoves: []guard.MoveOption{{Event: "a&b", To: "<s>", Label: "\x7f"}}}},
		{"slots and instructions", guard.Decision{Session: "s3", Reason: guard.ReasonMissingSlot, MissingSlots: []string{"order_id", "a<b"}, InvalidSlots: []string{"reason"},
			Condition: `transitions[0].when[1]: slot "x" matches "^a&b$"`, Generalized: true, Instructions: "Confirm the return.\n<b>now</b>",
			NextMoves: []guard.MoveOption{{Event: "ok", To: "s4", Generalized: true}}}},
		{"conditioned", guard.Decision{Session: "s4", Map: "by:task <1>&\u00e9", NextMoves: []guard.MoveOption{}}},
		{"an argument", guard.Decision{Session: "s4", Reason: automaton.KindValueWithoutSource, Generalized: true, Instructions: "x",
			Arg: &automaton.ArgDeviation{Kind: automaton.KindValueWithoutSource, Tool: "send<", Arg: "to\n"}}},
		{"floats", guard.Decision{Prob: 1e-7, NextMoves: []guard.MoveOption{
			{Prob: 0.1}, {Prob: 1.0 / 3}, {Prob: 1e21}, {Prob: 123456789.125}, {Prob: -0.000001}, {Prob: math.SmallestNonzeroFloat64}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(&tt.d)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendDecision(nil, &tt.d); !bytes.Equal(got, want) {
				t.Errorf("appendDecision =\n%s\nwant (json.Marshal)\n%s", got, want)
			}
		})
	}
}

// checkParseStep fails when parseStep accepts body and reads it otherwise
// than the slow path (decodeStep and decodeSlots) does.
func checkParseStep(t *testing.T, body string) (accepted bool) {
	t.Helper()
	event, next, slots, ok := parseStep([]byte(body), names{}, nil)
	if !ok {
		if len(slots) != 0 {
			t.Fatalf("parseStep(%q) refused the body but returned slots %v", body, slots)
		}
		return false
	}
	req, err := decodeStep([]byte(body))
	if err != nil {
		t.Fatalf("parseStep(%q) accepted what decodeStep refuses: %v", body, err)
	}
	want, err := decodeSlots(req.Slots, nil)
	if err != nil {
		t.Fatalf("parseStep(%q) accepted slots decodeSlots refuses: %v", body, err)
	}
	if event != *req.Event || next != *req.Next {
		t.Fatalf("parseStep(%q) = %q, %q; decodeStep reads %q, %q", body, event, next, *req.Event, *req.Next)
	}
	if len(slots) != len(want) || len(slots) > 0 && !reflect.DeepEqual(slots, want) {
		t.Fatalf("parseStep(%q) slots = %+v; decodeSlots reads %+v", body, slots, want)
	}
	return true
}

func TestParseStep(t *testing.T) {
	tests := []struct {
		body   string
		accept bool // by the fast path; the others go to decodeStep
	}{
		{`{"event":"ok","next":"get_order_details"}`, true},
		{`{"next":"agent_msg"}`, true},
		{` { "next" : "a" , "event" : "" } ` + "\n", true},
		{"{\t\"event\":\"x y\",\r\n\"next\":\"z\"}", true},
		{`{"event":"ok","next":""}`, false},
		{`{"event":"ok"}`, false},
		{`{}`, false},
		{``, false},
		{`{"next":"a","next":"b"}`, false},
		{`{"Next":"a"}`, false},
		{`{"next":"a","other":"b"}`, false},
		{`{"next":"a\"b"}`, false},
		{`{"next":"é"}`, false},
		{`{"next":null}`, false},
		{`{"next":1}`, false},
		{`{"next":"a"}{"next":"b"}`, false},
		{`{"next":"a"} x`, false},
		{`{"next":"a",}`, false},
		{`{"next":"a"`, false},
		{`["next","a"]`, false},
		{`{"next":"a","slots":{}}`, true},
		{`{"slots":{"order_id":"AB12345678","qty":2,"gift":false,"ok":true},"next":"a","event":"x"}`, true},
		{`{"next":"a","slots":{"n":-0.5e+3,"m":0,"k":10.25,"j":1E9}}`, true},
		{`{"next":"a","slots":{ "b" : "x" , "a" : "y" }}`, true},
		{`{"next":"a","slots":{"n":01}}`, false},
		{`{"next":"a","slots":{"n":1.}}`, false},
		{`{"next":"a","slots":{"n":-}}`, false},
		{`{"next":"a","slots":{"n":.5}}`, false},
		{`{"next":"a","slots":{"n":1e}}`, false},
		{`{"next":"a","slots":{"n":null}}`, false},
		{`{"next":"a","slots":{"n":{}}}`, false},
		{`{"next":"a","slots":{"n":[]}}`, false},
		{`{"next":"a","slots":{"n":tru}}`, false},
		{`{"next":"a","slots":{"n":"x","n":"y"}}`, false},
		{`{"next":"a","slots":{"n":"\u00e9"}}`, false},
		{`{"next":"a","slots":{"n":"x",}}`, false},
		{`{"next":"a","slots":{},"slots":{}}`, false},
		{`{"next":"a","slots":null}`, false},
		{`{"next":"a","slots":"x"}`, false},
	}
	for _, tt := range tests {
		if got := checkParseStep(t, tt.body); got != tt.accept {
			t.Errorf("parseStep(%q) accepted = %v, want %v", tt.body, got, tt.accept)
		}
	}
}

func TestParseStepInterns(t *testing.T) {
	n := names{"get_order_details": "get_order_details", "ok": "ok", "gift": "gift"}
	body := []byte(`{"event":"ok","next":"get_order_details","slots":{"gift":true}}`)
	buf := make([]guard.Slot, 0, 4)
	allocs := testing.AllocsPerRun(100, func() { parseStep(body, n, buf) })
	if allocs != 0 {
		t.Errorf("parseStep of known names: %v allocations, want 0", allocs)
	}
}

func FuzzParseStep(f *testing.F) {
	for _, s := range []string{`{"event":"ok","next":"get_order_details"}`, `{"next":"a"}`, ` {"next" :"a","event":""} `, `{"next":"a","next":"b"}`, `{"next":"\u00e9"}`,
		`{"next":"a","slots":{"x":"y","n":-1.5e3,"b":true}}`, `{"next":"a","slots":{"x":1,"x":2}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		checkParseStep(t, body)
	})
}

// TestReadStepBody: a body is read up to the limit; past it, reading stops
// one byte over, even into a pooled buffer grown larger than the limit.
func TestReadStepBody(t *testing.T) {
	for _, n := range []int{0, 10, maxStepBody, maxStepBody + 1, 3 * maxStepBody} {
		for _, capacity := range []int{0, 1024, 4 * maxStepBody} {
			r := &countingReader{r: bytes.NewReader(bytes.Repeat([]byte{'x'}, n))}
			got, err := readStepBody(r, make([]byte, 0, capacity))
			switch {
			case n <= maxStepBody && (err != nil || len(got) != n):
				t.Errorf("%d bytes, cap %d: %d bytes, %v", n, capacity, len(got), err)
			case n > maxStepBody && (err != errStepTooLarge || r.read > maxStepBody+1):
				t.Errorf("%d bytes, cap %d: %v after reading %d bytes, want errStepTooLarge after at most %d", n, capacity, err, r.read, maxStepBody+1)
			}
		}
	}
}

type countingReader struct {
	r    io.Reader
	read int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}
