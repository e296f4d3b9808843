package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/mine"
)

// slowLayoutModel mines sessions that walk a cycle of size nodes by step:
// of size 79 and step 41, 81 states and 237 transitions, whose picture in
// full Graphviz lays out in about a minute (a tangle of 156, well under
// MaxBuiltinTangle).
func slowLayoutModel(tb testing.TB, size, step, sessions int) *automaton.Model {
	tb.Helper()
	var log bytes.Buffer
	x := 0
	for s := range sessions {
		for k := range 20 {
			fmt.Fprintf(&log, `{"session_id":"s%d","step":%d,"node":"n%d","event":"ok"}`+"\n", s, k, x)
			x = (x + step) % size
		}
	}
	data := log.Bytes()
	lg, err := mine.Read([]mine.Input{{Name: "walk.jsonl", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}}, mine.ReadOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	m, err := mine.Build(lg, mine.DefaultOptions())
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestLayoutTimeout: a picture in full whose layout takes longer than
// Options.Timeout stops with ErrLayoutTimeout; the engine draws the next
// picture, summary or full, as before; the report shows a note in the
// picture's place.
func TestLayoutTimeout(t *testing.T) {
	slow := slowLayoutModel(t, 79, 41, 400)
	if n := tangle(slow, false); n > MaxBuiltinTangle {
		t.Fatalf("tangle %d: the test needs a picture under the cap", n)
	}
	small := syntheticModel(t, 10, 1)
	want := render(t, SVG, small, Options{})
	for _, f := range []Func{SVG, PNG} {
		err := f(io.Discard, slow, Options{Timeout: 200 * time.Millisecond})
		if !errors.Is(err, ErrLayoutTimeout) || !strings.Contains(err.Error(), "past 200ms") {
			t.Fatalf("err = %v, want ErrLayoutTimeout past 200ms", err)
		}
		if got := render(t, SVG, small, Options{}); !bytes.Equal(got, want) {
			t.Error("the picture after a timeout differs")
		}
		render(t, SVG, small, Options{Detail: DetailSummary})
	}
	var page bytes.Buffer
	if err := Report(&page, slow, ReportOptions{Diagram: DiagramAll, Timeout: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if want := "No picture: the layout took too long: past 200ms"; !strings.Contains(page.String(), want) {
		t.Errorf("the report lacks %q", want)
	}
}

// BenchmarkGuardedLayout: the cost of guarded code, the same DOT laid out
// as SVG by an unguarded and a guarded instance (each sub-benchmark makes
// its instance once): syntheticModel's pictures in full of 30 and 100
// states.
//
//	go test ./render -run '^$' -bench BenchmarkGuardedLayout -count 5
func BenchmarkGuardedLayout(b *testing.B) {
	models := []struct {
		name string
		m    *automaton.Model
	}{
		{"synthetic30", syntheticModel(b, 30, 1)},
		{"synthetic100", syntheticModel(b, 100, 1)},
	}
	for _, tt := range models {
		src, err := dotBytes(tt.m, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("model=%s/guarded=%v", tt.name, on), func(b *testing.B) {
				for b.Loop() {
					if _, err := runBuiltin(src, "svg", guard{on: on}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
