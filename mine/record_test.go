package mine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmine/fsmine/internal/timeparse"
)

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want string // RFC 3339 in UTC, or "" for an error
	}{
		{"2026-01-05T10:00:03.120Z", "2026-01-05T10:00:03.12Z"},
		{"2026-01-05T10:00:03Z", "2026-01-05T10:00:03Z"},
		{"2011-10-01T00:38:44.546+02:00", "2011-09-30T22:38:44.546Z"},
		{"2025-08-01T16:16:37.295213Z", "2025-08-01T16:16:37.295213Z"},
		{"2024-02-29T23:59:59-05:30", "2024-03-01T05:29:59Z"},
		{"2026-01-05T10:00:03.123456789123Z", "2026-01-05T10:00:03.123456789Z"},
		{"2026-01-05T10:00:03", "2026-01-05T10:00:03Z"},
		{"2026-01-05 10:00:03", "2026-01-05T10:00:03Z"},
		{"1767607203", "2026-01-05T10:00:03Z"},
		{"1767607203120", "2026-01-05T10:00:03.12Z"},
		{"2026-02-30T10:00:03Z", ""},
		{"2026-13-05T10:00:03Z", ""},
		{"yesterday", ""},
		// Microseconds and nanoseconds, read exactly.
		{"1767607203120456", "2026-01-05T10:00:03.120456Z"},
		{"1767607203120456789", "2026-01-05T10:00:03.120456789Z"},
		{"1767607203.5", "2026-01-05T10:00:03.5Z"},
		// What an int64 of nanoseconds cannot hold is an error, not a
		// wrapped time.
		{"2300-01-01T00:00:00Z", ""},
		{"1600-01-01T00:00:00Z", ""},
		{"2262-04-11T23:47:16.854775808Z", ""},
		{"2262-04-11T23:47:16.854775807Z", "2262-04-11T23:47:16.854775807Z"},
		{"2300-01-01 00:00:00", ""},
		{"9999999999", ""},
		{"9223372036854775808", ""},
		{"1e300", ""},
		{"inf", ""},
		{"Infinity", ""},
		{"NaN", ""},
		{"-1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			ns, err := timeparse.Parse(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Errorf("timeparse.Parse(%q) = %d, want an error", tt.in, ns)
				}
				return
			}
			if err != nil {
				t.Fatalf("timeparse.Parse(%q): %v", tt.in, err)
			}
			if got := time.Unix(0, ns).UTC().Format(time.RFC3339Nano); got != tt.want {
				t.Errorf("timeparse.Parse(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzParseRFC3339Fast checks the fast path against time.Parse: whenever it
// accepts, time.Parse agrees on the instant.
func FuzzParseRFC3339Fast(f *testing.F) {
	for _, s := range []string{"2026-01-05T10:00:03.120Z", "2011-10-01T00:38:44.546+02:00", "2024-02-28T23:59:59-05:30", "2026-01-05T10:00:03Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, ok := timeparse.RFC3339Fast(s)
		if !ok {
			return
		}
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("fast path accepted %q, time.Parse: %v", s, err)
		}
		if tm.UnixNano() != ns {
			t.Fatalf("fast path %q = %d, time.Parse = %d", s, ns, tm.UnixNano())
		}
	})
}

// FuzzParseRecord feeds arbitrary lines to the record parser with label
// rules: it must never panic, and an accepted record has a session, a node
// and a usable label.
func FuzzParseRecord(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s-17","step":3,"ts":"2026-01-05T10:00:03.120Z","node":"query_knowledge","event":"hit","duration_ms":812,"attrs":{"task_id":"40"}}`,
		`{"session_id":7,"node":"get_order_details","ts":1767607203}`,
		`{"session_id":"a","node":"smalltalk","event":null,"step":-1}`,
		`{"session_id":"a","node":"x","ts":"2026-02-30T00:00:00Z"}`,
		`not json`, `{}`, `[]`,
	} {
		f.Add(s)
	}
	rules, err := ParseRules([]byte(`{"rules":[
	  {"match":{"node":"^get_(\\w+)_details$"},"state":"lookup_$1","fold":true},
	  {"match":{"node":"^smalltalk$"},"state":"smalltalk","detour":true},
	  {"match":{"attrs.task_id":"^4"},"drop":true}]}`))
	if err != nil {
		f.Fatal(err)
	}
	p, err := newParser(nil, rules)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var r rec
		if err := p.parse([]byte(line), &r); err != nil {
			return
		}
		if r.session == "" || r.node == "" {
			t.Fatalf("accepted %q with an empty session or node", line)
		}
		if !r.drop && (r.label == "" || isReserved(r.label)) {
			t.Fatalf("accepted %q with label %q", line, r.label)
		}
	})
}

// TestParseRFC3339FastDates checks the fast path's calendar arithmetic
// against time.Parse over random dates of every year it reads (leap days,
// the ends of months, offsets): it must accept exactly the valid ones that
// an int64 of nanoseconds holds and agree on the instant, and Parse must
// refuse the others.
func TestParseRFC3339FastDates(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 200000; i++ {
		y := r.IntN(10000)
		if i%2 == 0 {
			y = 1900 + r.IntN(400)
		}
		s := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d", y, 1+r.IntN(12), 1+r.IntN(31), r.IntN(24), r.IntN(60), r.IntN(60))
		s += [...]string{"Z", ".123Z", "+05:30", ".5-11:45", ".123456789123Z"}[r.IntN(5)]
		ns, ok := timeparse.RFC3339Fast(s)
		tm, err := time.Parse(time.RFC3339Nano, s)
		held := err == nil && !tm.Before(time.Unix(0, math.MinInt64)) && !tm.After(time.Unix(0, math.MaxInt64))
		// The fast path may leave the last second at either end to Parse.
		edge := held && (tm.Before(time.Unix(0, math.MinInt64).Add(2*time.Second)) || tm.After(time.Unix(0, math.MaxInt64).Add(-2*time.Second)))
		if ok && !held || !ok && held && !edge {
			t.Fatalf("%q: fast path ok %v, time.Parse: %v", s, ok, err)
		}
		if _, perr := timeparse.Parse(s); (perr == nil) != held {
			t.Fatalf("%q: Parse: %v, time.Parse: %v (held %v)", s, perr, err, held)
		}
		if ok && tm.UnixNano() != ns {
			t.Fatalf("%q: fast path %d, time.Parse %d", s, ns, tm.UnixNano())
		}
	}
}

// TestSmallInt: the integer fast path of step and duration_ms reads what
// strconv does, and leaves the rest to it.
func TestSmallInt(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-7", "1794", "123456789012345678", "-123456789012345678", "1234567890123456789", "1.5", "1e3", "-", ""} {
		n, ok := smallInt([]byte(s))
		want, err := strconv.ParseInt(s, 10, 64)
		short := len(strings.TrimPrefix(s, "-")) <= 18
		if ok != (err == nil && short) || ok && n != want {
			t.Errorf("smallInt(%q) = %d, %v; strconv: %d, %v", s, n, ok, want, err)
		}
	}
}

// TestHashLine: the line hash is XXH64 with seed 0 (the reference values
// are xxHash's) of the line without surrounding blanks.
func TestHashLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"", 0xef46db3751d8e999},
		{"a", 0xd24ec4f1a98c6e5b},
		{"abc", 0x44bc2cf5ad770999},
		{" \tabc\r", 0x44bc2cf5ad770999},
		{"Nobody inspects the spammish repetition", 0xfbcea83c8a378bf1},
		{`{"session_id":"s-000001","step":0,"ts":"2026-01-05T09:00:00.000Z","node":"greet","event":"ok"}`, 0xaedb07b477ad0388},
	} {
		if got := hashLine([]byte(c.in)); got != c.want {
			t.Errorf("hashLine(%q) = %#x, want %#x", c.in, got, c.want)
		}
	}
}

// TestFieldsSharePath: two record fields may read one path (--field
// ts=step), and a mapped field reads its own path, not a neighbour's
// (node=event beside session_id=session).
func TestFieldsSharePath(t *testing.T) {
	tests := []struct {
		name, log string
		fields    map[string]string
		want      string // the first session's labels
	}{
		{"ts=step", `{"session_id":"a","node":"x","event":"ok","step":2}` + "\n" + `{"session_id":"a","node":"y","event":"ok","step":1}` + "\n",
			map[string]string{FieldTime: "step"}, "y x"},
		{"session and node mapped", `{"session":"a","event":"login","ts":"2024-01-01T00:00:01Z"}` + "\n" + `{"session":"a","event":"search","ts":"2024-01-01T00:00:00Z"}` + "\n",
			map[string]string{FieldSession: "session", FieldNode: "event"}, "search login"},
		{"node=session_id", `{"session_id":"x","step":1}` + "\n",
			map[string]string{FieldNode: "session_id"}, "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lg, err := Read([]Input{strInput("f.jsonl", tt.log)}, ReadOptions{Fields: tt.fields})
			if err != nil {
				t.Fatal(err)
			}
			if lg.Skipped > 0 || len(lg.Sessions) != 1 {
				t.Fatalf("%d skipped %v, %d sessions; want none skipped, 1", lg.Skipped, lg.Bad, len(lg.Sessions))
			}
			var got []string
			for _, mv := range lg.Moves(&lg.Sessions[0]) {
				if mv.Label != "__end__" {
					got = append(got, mv.Label)
				}
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("labels %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDwellAgainstTime: a next record earlier in time than its step puts
// it gives no dwell (it was a negative one), the others theirs.
func TestDwellAgainstTime(t *testing.T) {
	log := `{"session_id":"s","step":1,"node":"a","ts":"2024-01-01T00:00:10Z"}
{"session_id":"s","step":2,"node":"b","ts":"2024-01-01T00:00:00Z"}
{"session_id":"s","step":3,"node":"c","ts":"2024-01-01T00:00:05Z","duration_ms":7}
`
	lg, err := Read([]Input{strInput("late.jsonl", log)}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range lg.Sessions[0].Visits {
		d := "-"
		if v.HasDwell {
			d = strconv.FormatFloat(v.DwellMS, 'g', -1, 64)
		}
		got = append(got, lg.Name(v.Label)+":"+d)
	}
	if g := strings.Join(got, " "); g != "a:- b:5000 c:7" {
		t.Errorf("dwell %s, want a:- b:5000 c:7", g)
	}
}

// TestDwellCenturies: two times of a session more than 292 years apart
// (the most an int64 of nanoseconds spans) give their dwell, not one
// wrapped round to a negative time.
func TestDwellCenturies(t *testing.T) {
	log := `{"session_id":"s","step":0,"node":"a","ts":"1700-01-01T00:00:00Z"}
{"session_id":"s","step":1,"node":"b","ts":"2026-01-05T10:00:00Z"}
`
	lg, err := Read([]Input{strInput("old.jsonl", log)}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	want := float64(to.Unix()-from.Unix()) * 1e3
	v := lg.Sessions[0].Visits[0]
	if !v.HasDwell || math.Abs(v.DwellMS-want) > want*1e-12 {
		t.Errorf("dwell of a = %v (known %v), want %v ms", v.DwellMS, v.HasDwell, want)
	}
	m, err := Build(lg, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
}
