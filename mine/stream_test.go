package mine

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestStreamSameModel reads logs whole and streaming, with windows from one
// record up and the logs cut into small chunks so that sessions are folded
// mid-read, and wants byte-identical models. Logs whose sessions interleave
// must make a small-window read start over (and say so); logs written
// session by session must not.
func TestStreamSameModel(t *testing.T) {
	if testing.Short() {
		t.Skip("streamed against held builds of every fixture: skipped in -short mode")
	}
	defer func(n int) { chunkSize = n }(chunkSize)
	chunkSize = 4 << 10
	tau2Rules := readRules(t, "../testdata/tau2_retail.labels.json")
	returnsRules := readRules(t, "../testdata/returns.labels.json")
	returns, err := os.ReadFile("../testdata/returns.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// The returns sample cut into three inputs with an empty one between,
	// so that records (and a duplicate) are told to the right input while
	// streaming.
	lines := strings.SplitAfter(string(returns), "\n")
	third := len(lines) / 3
	split := []Input{
		memInput("a.jsonl", strings.Join(lines[:third], "")),
		memInput("b.jsonl", ""),
		memInput("c.jsonl", lines[third]+strings.Join(lines[third:2*third], "")), // a duplicate
		memInput("d.jsonl", strings.Join(lines[2*third:], "")),
	}
	// The same with the first session's first two records again at the end.
	dups := append(split[:3:3], memInput("d.jsonl", strings.Join(lines[2*third:], "")+lines[0]+lines[1]))
	tests := []struct {
		name   string
		inputs func(t *testing.T) []Input
		rules  *Rules
		// A window below this must make the read start over: some session
		// has records this far apart.
		rereadBelow int
	}{
		{"returns", func(*testing.T) []Input { return split }, returnsRules, 1000},
		{"returns with late duplicates", func(*testing.T) []Input { return dups }, returnsRules, DefaultWindow},
		{"tau2 retail", func(t *testing.T) []Input { return []Input{realInput(t, "jsonl/tau2_retail.jsonl")} }, tau2Rules, 0},
		{"tau2 raw", func(t *testing.T) []Input {
			return []Input{realInput(t, "raw/tau2/gpt-4.1_retail_default_gpt-4.1_1trials.json"), realInput(t, "raw/tau2/ft-gpt-4.1_retail_default_gpt-4.1_1trials.json")}
		}, tau2Rules, 0},
		{"helpdesk", func(t *testing.T) []Input { return []Input{realInput(t, "jsonl/helpdesk.jsonl.gz")} }, nil, 0},
		{"bpic2012", func(t *testing.T) []Input { return []Input{realInput(t, "jsonl/bpic2012.jsonl.gz")} }, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ins := tt.inputs(t)
			held, err := Read(ins, ReadOptions{Rules: tt.rules})
			if err != nil {
				t.Fatal(err)
			}
			// The streaming tally keeps MaxExamples per path whatever Build
			// asks for: every count must give the held read's bytes.
			examples := []int{0, 1, DefaultExamples, MaxExamples}
			want := make([][]byte, len(examples))
			for i, n := range examples {
				want[i] = buildBytesWith(t, held, n)
			}
			for _, window := range []int{1, 1000, DefaultWindow} {
				lg, err := Read(ins, ReadOptions{Rules: tt.rules, Stream: true, Window: window})
				if err != nil {
					t.Fatal(err)
				}
				for i, n := range examples {
					if got := buildBytesWith(t, lg, n); !bytes.Equal(got, want[i]) {
						t.Errorf("window %d, examples %d: streamed model differs from the whole read's (reread %q)", window, n, lg.Reread)
					}
				}
				if reread := lg.Reread != ""; reread != (window < tt.rereadBelow) {
					t.Errorf("window %d: reread %q", window, lg.Reread)
				}
				if lg.Reread == "" && (!lg.Streamed || len(lg.Sessions) > 0) {
					t.Errorf("window %d: streamed %v with %d sessions held", window, lg.Streamed, len(lg.Sessions))
				}
			}
		})
	}
}

func memInput(name, data string) Input {
	return Input{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(data)), nil }}
}

// buildBytesWith builds with the default options but for the number of
// example sessions.
func buildBytesWith(t *testing.T, lg *Log, examples int) []byte {
	t.Helper()
	opt := DefaultOptions()
	opt.Examples = examples
	m, err := Build(lg, opt)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDwellHist checks the bins: they order as times do, each value lies in
// the bin it is counted in, a bin is at most 1/1024 of its values wide, and
// quantiles are exact while no two times share a bin and within a bin's
// width otherwise.
func TestDwellHist(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var prev int32 = math.MinInt32
	for _, us := range []float64{-1e41, -5e9, -3000, -2049, -2048, -1, 0, 1, 2047, 2048, 2049, 4095, 4096, 1e6, 123456789, 9e15, 1 << 62, 1e19, 3e41} {
		k := histKey(us / 1e3)
		if k < prev {
			t.Errorf("key of %v µs is %d, below the key of a smaller time (%d)", us, k, prev)
		}
		prev = k
		v := histValue(k) * 1e3
		if math.Abs(v-us) > math.Abs(us)/1024 {
			t.Errorf("%v µs is in a bin that stands for %v µs", us, v)
		}
	}
	for i := 0; i < 100000; i++ {
		us := math.Round(math.Exp(rng.Float64() * 100))
		v := histValue(histKey(us/1e3)) * 1e3
		if math.Abs(v-us) > us/1024 {
			t.Fatalf("%v µs is in a bin that stands for %v µs", us, v)
		}
	}

	// Times past 2^62 µs (some 146,000 years: durations can be that long).
	var d DwellStats
	for _, ms := range []float64{3e15, 3e16} {
		d.Add(ms)
	}
	if got := d.Summary(); got.P50 != 3e15 || got.P95 != 3e16 || got.Max != 3e16 {
		t.Errorf("huge times: %+v, want p50 3e15, p95 and max 3e16", got)
	}

	exact := func(xs []float64, q float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[max(int(math.Ceil(q*float64(len(s))))-1, 0)]
	}
	// Sparse: ms-precision times a second apart never share a bin.
	var sparse []float64
	d = DwellStats{}
	for i := 0; i < 200; i++ {
		x := float64(rng.IntN(100000)*1000+rng.IntN(1000)) / 1e3 * 1e3
		sparse = append(sparse, x)
		d.Add(x)
	}
	got := d.Summary()
	if got.P50 != Round3(exact(sparse, 0.5)) || got.P95 != Round3(exact(sparse, 0.95)) || got.Max != Round3(slices.Max(sparse)) {
		t.Errorf("sparse: %+v, want exact %v %v %v", got, exact(sparse, 0.5), exact(sparse, 0.95), slices.Max(sparse))
	}
	// Dense: a million µs-precision times.
	var dense []float64
	d = DwellStats{}
	for i := 0; i < 1000000; i++ {
		x := math.Round(rng.ExpFloat64()*5e6) / 1e3
		dense = append(dense, x)
		d.Add(x)
	}
	got = d.Summary()
	for _, c := range []struct{ got, want float64 }{{got.P50, exact(dense, 0.5)}, {got.P95, exact(dense, 0.95)}} {
		if math.Abs(c.got-c.want) > c.want/1024 {
			t.Errorf("dense: quantile %v, exact %v", c.got, c.want)
		}
	}
	if got.Max != Round3(slices.Max(dense)) {
		t.Errorf("dense: max %v, want %v", got.Max, slices.Max(dense))
	}
	if n, most := len(d.h.bins), 2048+1024*int(math.Ceil(math.Log2(slices.Max(dense)*1e3/2048))); n > most {
		t.Errorf("dense: %d bins, want at most %d", n, most)
	}
}

// TestStreamedLogHoldsNoSessions: a streamed log cannot be written as a
// partial result or merged, which need its sessions.
func TestStreamedLogHoldsNoSessions(t *testing.T) {
	lg, err := Read([]Input{memInput("a.jsonl", sessionsJSONL("a:ok b:done"))}, ReadOptions{Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := lg.WritePartial(io.Discard); !errors.Is(err, errStreamed) {
		t.Errorf("WritePartial: %v, want %v", err, errStreamed)
	}
	if _, err := MergeLogs([]*Log{lg}, []string{"a"}); !errors.Is(err, errStreamed) {
		t.Errorf("MergeLogs: %v, want %v", err, errStreamed)
	}
	if n := lg.NumSessions(); n != 1 {
		t.Errorf("NumSessions = %d, want 1", n)
	}
}
