package mine

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestParseOutcome(t *testing.T) {
	tests := []struct {
		expr, path, op, value string
		err                   string // "" for none
	}{
		{expr: "attrs.reward>=1", path: "attrs.reward", op: ">=", value: "1"},
		{expr: "attrs.reward == 1", path: "attrs.reward", op: "=", value: "1"},
		{expr: "attrs.termination=user_stop", path: "attrs.termination", op: "=", value: "user_stop"},
		{expr: `attrs.status!="error"`, path: "attrs.status", op: "!=", value: "error"},
		{expr: "ok=true", path: "ok", op: "=", value: "true"},
		{expr: "attrs.reward", err: `outcome "attrs.reward": want FIELD OP VALUE, with OP one of = != < <= > >= (for example attrs.reward>=1)`},
		{expr: ">=1", err: `outcome ">=1": no field before >=`},
		{expr: "attrs.reward>=", err: `outcome "attrs.reward>=": no value after >=`},
		{expr: "attrs..reward>=1", err: `outcome "attrs..reward>=1": invalid path "attrs..reward": empty segment`},
		{expr: "attrs.status>error", err: `outcome "attrs.status>error": > compares numbers, and "error" is not one`},
		{expr: "a=>1", err: `outcome "a=>1": more than one operator`},
		{expr: "a!1", err: `outcome "a!1": "!" is no operator: want one of = != < <= > >=`},
		{expr: "a<.5", path: "a", op: "<", value: ".5"},
		{expr: "a>=-1e3", path: "a", op: ">=", value: "-1e3"},
		// What ParseFloat takes and no JSON number is.
		{expr: "a<NaN", err: `outcome "a<NaN": < compares numbers, and "NaN" is not one`},
		{expr: "a<Inf", err: `outcome "a<Inf": < compares numbers, and "Inf" is not one`},
		{expr: "a<0x1p10", err: `outcome "a<0x1p10": < compares numbers, and "0x1p10" is not one`},
		{expr: "a<1_000", err: `outcome "a<1_000": < compares numbers, and "1_000" is not one`},
		{expr: "a<1e400", err: `outcome "a<1e400": 1e400 is beyond the range of a number (±1.7976931348623157e+308)`},
		{expr: "a<-1e400", err: `outcome "a<-1e400": -1e400 is beyond the range of a number (±1.7976931348623157e+308)`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			o, err := ParseOutcome(tt.expr)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err || !errors.Is(err, ErrOutcome) {
					t.Fatalf("error %v, want %q wrapping ErrOutcome", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Path != tt.path || o.Op != tt.op || o.Value != tt.value {
				t.Errorf("got %q %q %q, want %q %q %q", o.Path, o.Op, o.Value, tt.path, tt.op, tt.value)
			}
		})
	}
}

func TestSessionOutcomes(t *testing.T) {
	const log = `{"session_id":"a","node":"x","event":"ok","attrs":{"reward":1,"end":"user_stop"}}
{"session_id":"a","node":"y","event":"ok","attrs":{"reward":1,"end":"user_stop"}}
{"session_id":"b","node":"x","event":"ok","attrs":{"reward":0.0,"end":"max_steps"}}
{"session_id":"c","node":"x","event":"ok","attrs":{"end":"user_stop"}}
{"session_id":"d","node":"x","event":"ok","attrs":{"reward":null}}
{"session_id":"d","node":"y","event":"ok","attrs":{"reward":0.5}}
`
	in := []Input{{Name: "log.jsonl", Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(log)), nil }}}
	tests := []struct {
		expr string
		want map[string]bool
		err  string
	}{
		{expr: "attrs.reward>=1", want: map[string]bool{"a": true, "b": false, "d": false}},
		{expr: "attrs.reward<1", want: map[string]bool{"a": false, "b": true, "d": true}},
		{expr: "attrs.end=user_stop", want: map[string]bool{"a": true, "b": false, "c": true}},
		{expr: "attrs.end!=user_stop", want: map[string]bool{"a": false, "b": true, "c": false}},
		{expr: "attrs.nope>=1", err: `outcome "attrs.nope>=1": no record has the field attrs.nope`},
		{expr: "attrs.end>=1", err: `outcome "attrs.end>=1": log.jsonl:1: attrs.end is a string ("user_stop"), the expression compares a number`},
		{expr: "attrs.reward=done", err: `outcome "attrs.reward=done": log.jsonl:1: attrs.reward is a number (1), the expression compares a string`},
		// NaN is no number a log holds: =NaN made every session fail.
		{expr: "attrs.reward=NaN", err: `outcome "attrs.reward=NaN": log.jsonl:1: attrs.reward is a number (1), the expression compares a string`},
		{expr: "attrs.reward!=nan", err: `outcome "attrs.reward!=nan": log.jsonl:1: attrs.reward is a number (1), the expression compares a string`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			o, err := ParseOutcome(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := SessionOutcomes(in, ReadOptions{}, o)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err || !errors.Is(err, ErrOutcome) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Succeeded) != len(tt.want) {
				t.Errorf("got %v, want %v", got.Succeeded, tt.want)
			}
			for id, w := range tt.want {
				if g, ok := got.Succeeded[id]; !ok || g != w {
					t.Errorf("session %s: %v (present %v), want %v", id, g, ok, w)
				}
			}
		})
	}
}

// FuzzParseOutcome: any expression parses or is refused with an
// *OutcomeError naming it, never a panic; a parsed one has a field, a known
// operator, and tests values without a panic.
func FuzzParseOutcome(f *testing.F) {
	for _, s := range []string{"attrs.reward>=1", "a=b", `x!="y"`, "a<=-1e9", "=", "a=>", "a==true", "'a'='b'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		o, err := ParseOutcome(expr)
		if err != nil {
			var oe *OutcomeError
			if !errors.As(err, &oe) || oe.Expr != expr {
				t.Fatalf("error %v is not an *OutcomeError naming %q", err, expr)
			}
			return
		}
		switch o.Op {
		case "=", "!=", "<", "<=", ">", ">=":
		default:
			t.Fatalf("op %q", o.Op)
		}
		if o.Path == "" {
			t.Fatal("empty path")
		}
		for _, v := range []value{{kind: kindNumber, raw: []byte("1")}, {kind: kindString, raw: []byte("x")}, {kind: kindBool, raw: []byte("true")}} {
			o.test(v)
		}
	})
}
