package mine

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"strconv"
	"testing"
)

func TestMeasure(t *testing.T) {
	rules, err := ParseRules([]byte(`{"rules":[
		{"match":{"node":"^chat$"},"drop":true},
		{"match":{"node":"^find_"},"state":"identify","fold":true},
		{"match":{"node":"^smalltalk$"},"state":"smalltalk","detour":true}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	// Session a, out of line order (steps decide) and interleaved with b:
	//   step 0 chat (dropped, before any visit: counts toward visit 0)
	//   step 1 find_x, step 2 find_y (folded: one visit)
	//   step 3 chat (dropped: counts toward identify)
	//   step 4 lookup; step 5 smalltalk (detour back to lookup); step 6 lookup
	//   step 7 refund, twice (an exact duplicate: counted once)
	// Session b has no tokens a float64 holds.
	log := `{"session_id":"a","step":1,"node":"find_x","event":"fail","tokens":{"prompt":10,"completion":1},"duration_ms":5}
{"session_id":"a","step":0,"node":"chat","event":"said","tokens":{"prompt":1000}}
{"session_id":"b","step":0,"node":"greet","event":"ok"}
{"session_id":"a","step":2,"node":"find_y","event":"ok","tokens":{"prompt":20,"completion":2}}
{"session_id":"a","step":3,"node":"chat","event":"said","tokens":{"prompt":300,"completion":"many"}}
{"session_id":"a","step":4,"node":"lookup","event":"off_topic","tokens":{"prompt":40}}
{"session_id":"a","step":5,"node":"smalltalk","event":"said","tokens":{"prompt":50}}
{"session_id":"a","step":6,"node":"lookup","event":"found","tokens":{"prompt":60}}
{"session_id":"a","step":7,"node":"refund","event":"done","tokens":{"prompt":70}}
{"session_id":"a","step":7,"node":"refund","event":"done","tokens":{"prompt":70}}
not json
{"session_id":"b","step":1,"node":"close","event":"ok","tokens":{"prompt":1e400}}
`
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(log))
	zw.Close()
	for name, in := range map[string]Input{"plain": strInput("log.jsonl", log), "gzip": strInput("log.jsonl.gz", gz.String())} {
		t.Run(name, func(t *testing.T) {
			opt := ReadOptions{Rules: rules}
			lg, err := Read([]Input{in}, opt)
			if err != nil {
				t.Fatal(err)
			}
			paths := []string{"tokens.prompt", "tokens.completion", "duration_ms"}
			ms, err := Measure([]Input{in}, opt, lg, paths)
			if err != nil {
				t.Fatal(err)
			}
			type cell struct {
				v  float64
				ok bool
			}
			got := map[string][][]cell{}
			for si, s := range lg.Sessions {
				for vi := range s.Visits {
					row := []cell{}
					for p := range paths {
						x, ok := ms.Value(si, vi, p)
						if !ok {
							x = 0
						}
						row = append(row, cell{x, ok})
					}
					got[s.ID] = append(got[s.ID], row)
				}
			}
			// a's visits: identify (1000 + 10 + 20 + 300), lookup (40 + 50,
			// the detour), lookup (60), refund (70).
			want := map[string][][]cell{
				"a": {
					{{1330, true}, {3, true}, {5, true}},
					{{90, true}, {0, false}, {0, false}},
					{{60, true}, {0, false}, {0, false}},
					{{70, true}, {0, false}, {0, false}},
				},
				"b": {
					{{0, false}, {0, false}, {0, false}},
					{{0, false}, {0, false}, {0, false}},
				},
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("measures\n%v\nwant\n%v", got, want)
			}
			if wantFound := []int{9, 2, 1}; !reflect.DeepEqual(ms.Found, wantFound) {
				t.Errorf("found %v, want %v", ms.Found, wantFound)
			}
			// "many" and 1e400 are there and count for nothing: said so.
			if want := []int{1, 1, 0}; !reflect.DeepEqual(ms.Unusable, want) {
				t.Errorf("unusable %v, want %v", ms.Unusable, want)
			}
		})
	}
}

func TestMeasureErrors(t *testing.T) {
	in := strInput("log.jsonl", `{"session_id":"a","node":"x"}`+"\n")
	lg, err := Read([]Input{in}, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Measure([]Input{in, in}, ReadOptions{}, lg, []string{"x"}); err == nil {
		t.Error("two inputs for a log read from one: no error")
	}
	if _, err := Measure([]Input{in}, ReadOptions{}, lg, []string{"a..b"}); err == nil {
		t.Error("bad path: no error")
	}
}

// TestMeasureFresh: a record without a step or time is measured with none
// (not the line before's, another session's), so its exact duplicate is
// counted once, as Read counts it.
func TestMeasureFresh(t *testing.T) {
	log := `{"session_id":"t","ts":"2026-01-01T00:00:00Z","node":"a","event":"ok","duration_ms":100}
{"session_id":"z","step":5,"node":"a","event":"ok","duration_ms":1}
{"session_id":"t","ts":"2026-01-01T00:00:00Z","node":"a","event":"ok","duration_ms":100}
{"session_id":"t","ts":"2026-01-01T00:00:01Z","node":"b","event":"ok","duration_ms":7}
`
	in := []Input{strInput("log.jsonl", log)}
	lg, err := Read(in, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Measure(in, ReadOptions{}, lg, []string{"duration_ms"})
	if err != nil {
		t.Fatal(err)
	}
	for si, s := range lg.Sessions {
		if s.ID != "t" {
			continue
		}
		if x, _ := ms.Value(si, 0, 0); x != 100 {
			t.Errorf("session t's first visit measures %v, want 100 (the duplicate counted once)", x)
		}
	}
}

// TestMeasureOutOfRange: a measured value that is negative, or so large
// that sums over a log's records could pass a float64 (1e308 twice is
// +Inf, which stats --format json cannot write), counts for nothing and is
// counted as unusable, like text; 1e290 and -0 are taken.
func TestMeasureOutOfRange(t *testing.T) {
	log := `{"session_id":"a","step":0,"node":"x","tokens":{"prompt":1e308,"completion":-1},"cost":-1e308}
{"session_id":"a","step":1,"node":"x","tokens":{"prompt":1e308,"completion":2},"cost":1e290}
{"session_id":"a","step":2,"node":"y","tokens":{"prompt":1.0000001e290,"completion":-0},"cost":1e290}
`
	in := strInput("big.jsonl", log)
	lg, err := Read([]Input{in}, ReadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Measure([]Input{in}, ReadOptions{Strict: true}, lg, []string{"tokens.prompt", "tokens.completion", "cost"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 2, 2}; !reflect.DeepEqual(ms.Found, want) {
		t.Errorf("found %v, want %v", ms.Found, want)
	}
	if want := []int{3, 1, 1}; !reflect.DeepEqual(ms.Unusable, want) {
		t.Errorf("unusable %v, want %v", ms.Unusable, want)
	}
	for vi, want := range []string{"-", "2", "0"} {
		got := "-"
		if x, ok := ms.Value(0, vi, 1); ok {
			got = strconv.FormatFloat(x, 'g', -1, 64)
		}
		if got != want {
			t.Errorf("visit %d: tokens.completion %s, want %s", vi, got, want)
		}
	}
}
