package mine

// Tests of the importers on the real logs in ../../shared/data (skipped
// when it is absent): the same log imported from its published form and
// from fsmine's own JSONL form must give the same model.

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"github.com/fsmine/fsmine/mine/formats"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sharedData is where the real logs are, relative to this package.
var sharedData = filepath.Join("..", "..", "shared", "data")

func realInput(t testing.TB, rel string) Input {
	t.Helper()
	p := filepath.Join(sharedData, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("real data absent: %v", err)
	}
	return Input{Name: rel, Open: func() (io.ReadCloser, error) { return os.Open(p) }}
}

// realHead returns the first 64 KiB of a real file, gunzipped.
func realHead(t *testing.T, rel string) []byte {
	t.Helper()
	in := realInput(t, rel)
	rc, err := in.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var r io.Reader = rc
	if strings.HasSuffix(rel, ".gz") {
		gz, err := gzip.NewReader(rc)
		if err != nil {
			t.Fatal(err)
		}
		r = gz
	}
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(r, head)
	return head[:n]
}

func TestFormatDetectReal(t *testing.T) {
	tests := []struct{ file, want string }{
		{"raw/xes/helpdesk.xes.gz", FormatXES},
		{"raw/xes/bpic2012.xes.gz", FormatXES},
		{"raw/csv/receipt.csv", FormatCSV},
		{"raw/csv/running-example.csv", FormatCSV},
		{"raw/tau2/gpt-4.1_retail_default_gpt-4.1_1trials.json", FormatTau},
		{"raw/tau2/ft-gpt-4.1_retail_default_gpt-4.1_1trials.json", FormatTau},
		{"raw/tau2/gpt-4.1_airline_default_gpt-4.1_1trials.json", FormatTau},
		{"raw/tau2/gpt-4.1_telecom_default_gpt-4.1_1trials.json", FormatTau},
		{"raw/tau-bench/gpt-4o-airline.json", FormatTau},
		{"jsonl/tau2_retail.jsonl", FormatJSONL},
		{"jsonl/taubench_airline.jsonl", FormatJSONL},
		{"jsonl/helpdesk.jsonl.gz", FormatJSONL},
		{"jsonl/bpic2012.jsonl.gz", FormatJSONL},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := formats.Pick(FormatAuto, realHead(t, tt.file))
			if err != nil {
				t.Fatalf("pickFormat: %v", err)
			}
			if f.Name != tt.want {
				t.Errorf("auto picks %s, want %s", f.Name, tt.want)
			}
		})
	}
}

func buildReal(t *testing.T, ropt ReadOptions, files ...string) (*Log, string) {
	t.Helper()
	var ins []Input
	for _, f := range files {
		ins = append(ins, realInput(t, f))
	}
	lg, err := Read(ins, ropt)
	if err != nil {
		t.Fatalf("Read %v: %v", files, err)
	}
	m, err := Build(lg, DefaultOptions())
	if err != nil {
		t.Fatalf("Build %v: %v", files, err)
	}
	return lg, m.Digest
}

// TestFormatSameModelAsJSONL imports each published log and its JSONL form
// in shared/data/jsonl with default options and compares the models.
func TestFormatSameModelAsJSONL(t *testing.T) {
	if testing.Short() {
		t.Skip("reads BPI 2012 twice")
	}
	tests := []struct {
		name   string
		raw    []string
		jsonl  string
		labels string
	}{
		// jsonl/helpdesk: node and event are the activity (the log has no
		// lifecycle); the XES importer's default when an event has no
		// lifecycle:transition.
		{"helpdesk", []string{"raw/xes/helpdesk.xes.gz"}, "jsonl/helpdesk.jsonl.gz", ""},
		// jsonl/bpic2012: event is the lifecycle transition in lower case.
		{"bpic2012", []string{"raw/xes/bpic2012.xes.gz"}, "jsonl/bpic2012.jsonl.gz", ""},
		// jsonl/tau2_retail is both retail runs.
		{"tau2 retail", []string{"raw/tau2/gpt-4.1_retail_default_gpt-4.1_1trials.json", "raw/tau2/ft-gpt-4.1_retail_default_gpt-4.1_1trials.json"}, "jsonl/tau2_retail.jsonl", ""},
		{"tau2 retail labelled", []string{"raw/tau2/gpt-4.1_retail_default_gpt-4.1_1trials.json", "raw/tau2/ft-gpt-4.1_retail_default_gpt-4.1_1trials.json"}, "jsonl/tau2_retail.jsonl", "../testdata/tau2_retail.labels.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ropt ReadOptions
			if tt.labels != "" {
				ropt.Rules = readRules(t, tt.labels)
			}
			rawLog, rawDigest := buildReal(t, ropt, tt.raw...)
			jsonLog, jsonDigest := buildReal(t, ropt, tt.jsonl)
			if rawDigest != jsonDigest {
				t.Errorf("digest from %v %s, from %s %s", tt.raw, rawDigest, tt.jsonl, jsonDigest)
			}
			if rawLog.Records != jsonLog.Records || len(rawLog.Sessions) != len(jsonLog.Sessions) || rawLog.Skipped != 0 {
				t.Errorf("raw: %d records, %d sessions, %d skipped; jsonl: %d records, %d sessions",
					rawLog.Records, len(rawLog.Sessions), rawLog.Skipped, jsonLog.Records, len(jsonLog.Sessions))
			}
		})
	}
}

// TestFormatTauBenchV1 compares the tau-bench v1 import with
// jsonl/taubench_airline.jsonl. The two agree on every node; they differ in
// the events of the calls whose id the trajectory reuses: the JSONL took
// the outcome of the last answer with the id in the whole trajectory, the
// importer the first answer after the call (see toolAnswers).
func TestFormatTauBenchV1(t *testing.T) {
	raw, _ := buildReal(t, ReadOptions{}, "raw/tau-bench/gpt-4o-airline.json")
	js, _ := buildReal(t, ReadOptions{}, "jsonl/taubench_airline.jsonl")
	if len(raw.Sessions) != 200 || len(js.Sessions) != 200 || raw.Records != js.Records {
		t.Fatalf("raw %d sessions %d records, jsonl %d sessions %d records", len(raw.Sessions), raw.Records, len(js.Sessions), js.Records)
	}
	// Sessions are task:trial after a prefix: the file's digest, or the run.
	key := func(id string) string { _, k, _ := strings.Cut(id, ":"); return k }
	byKey := map[string]Session{}
	for _, s := range js.Sessions {
		byKey[key(s.ID)] = s
	}
	events, sessions := 0, 0
	for _, s := range raw.Sessions {
		o, ok := byKey[key(s.ID)]
		if !ok || len(o.Visits) != len(s.Visits) {
			t.Fatalf("session %s: no JSONL twin of %d visits", s.ID, len(s.Visits))
		}
		differ := false
		for i := range s.Visits {
			if raw.Name(s.Visits[i].Label) != js.Name(o.Visits[i].Label) {
				t.Errorf("session %s visit %d: node %s, JSONL %s", s.ID, i, raw.Name(s.Visits[i].Label), js.Name(o.Visits[i].Label))
			}
			if raw.Name(s.Visits[i].Event) != js.Name(o.Visits[i].Event) {
				events++
				differ = true
			}
		}
		if differ {
			sessions++
		}
	}
	if events != 11 || sessions != 8 {
		t.Errorf("%d events in %d sessions differ, want 11 in 8 (the calls with reused ids)", events, sessions)
	}
}

// TestFormatCSVReal reads pm4py's CSV event logs.
func TestFormatCSVReal(t *testing.T) {
	tests := []struct {
		file              string
		sessions, records int
	}{
		{"raw/csv/running-example.csv", 6, 42},
		{"raw/csv/receipt.csv", 1434, 8577},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			lg, _ := buildReal(t, ReadOptions{Strict: true}, tt.file)
			if len(lg.Sessions) != tt.sessions || lg.Records != tt.records {
				t.Errorf("%d sessions, %d records; want %d, %d", len(lg.Sessions), lg.Records, tt.sessions, tt.records)
			}
		})
	}
}

// BenchmarkXESImport converts BPI Challenge 2012 (262,200 events) from its
// gunzipped XES, reporting events per second of conversion alone, by the
// wall clock and per CPU second of the process (GC included).
func BenchmarkXESImport(b *testing.B) {
	in := realInput(b, "raw/xes/bpic2012.xes.gz")
	rc, err := in.Open()
	if err != nil {
		b.Fatal(err)
	}
	gz, err := gzip.NewReader(rc)
	if err != nil {
		b.Fatal(err)
	}
	data, err := io.ReadAll(gz)
	rc.Close()
	if err != nil {
		b.Fatal(err)
	}
	const events = 262200
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0, cpuOK := processCPU()
	for b.Loop() {
		if err := formatNamed("xes").Convert(bytes.NewReader(data), io.Discard, ImportOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if cpu1, ok := processCPU(); ok && cpuOK && cpu1 > cpu0 {
		b.ReportMetric(float64(events)*float64(b.N)/(cpu1-cpu0).Seconds(), "events/cpu-s")
	}
}

// TestFormatTau2Real reads every tau2 run: one session per simulation.
func TestFormatTau2Real(t *testing.T) {
	tests := []struct {
		file     string
		sessions int
	}{
		{"raw/tau2/gpt-4.1_airline_default_gpt-4.1_1trials.json", 20},
		{"raw/tau2/gpt-4.1_telecom_default_gpt-4.1_1trials.json", 40},
		{"raw/tau2/ft-gpt-4.1_retail_default_gpt-4.1_1trials.json", 40},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			lg, _ := buildReal(t, ReadOptions{Strict: true}, tt.file)
			if len(lg.Sessions) != tt.sessions {
				t.Errorf("%d sessions, want %d", len(lg.Sessions), tt.sessions)
			}
		})
	}
}

// BenchmarkJSONImport converts the real JSON logs (tau2 runs and tau-bench
// trajectories) and the JSON fixtures of the other importers, repeated to
// about a megabyte, reporting bytes per second of conversion alone and CPU
// time per conversion.
func BenchmarkJSONImport(b *testing.B) {
	real := []struct{ name, file string }{
		{"tau2-telecom", "raw/tau2/gpt-4.1_telecom_default_gpt-4.1_1trials.json"},
		{"tau2-retail", "raw/tau2/gpt-4.1_retail_default_gpt-4.1_1trials.json"},
		{"tau-bench-airline", "raw/tau-bench/gpt-4o-airline.json"},
	}
	for _, r := range real {
		b.Run(r.name, func(b *testing.B) {
			data, err := os.ReadFile(filepath.Join(sharedData, r.file))
			if err != nil {
				b.Skipf("real data absent: %v", err)
			}
			benchConvert(b, formatNamed("tau").Convert, data)
		})
	}
	// The fixtures are JSON lines or (LangSmith) one array: repeat the
	// lines, or the array's elements.
	// Each copy renames its traces (the prefix of their ids; LangSmith's
	// run ids, which its dotted orders hold too): a span or run id twice
	// is an error.
	fixtures := []struct {
		name, file string
		convert    func(io.Reader, io.Writer, ImportOptions) error
		traceIDs   string // the text every trace id of the fixture starts with
	}{
		{"langfuse", "langfuse.jsonl", formatNamed("langfuse").Convert, `"t-`},
		{"openai-agents", "openai_agents.jsonl", formatNamed("openai-agents").Convert, `:"trace_`},
		{"otlp", "otlp.jsonl", formatNamed("otlp").Convert, `"traceId":"`},
		{"langsmith", "langsmith.json", formatNamed("langsmith").Convert, "-0000-4000-8000-"}, // in every run id
	}
	for _, f := range fixtures {
		b.Run(f.name, func(b *testing.B) {
			one, err := os.ReadFile(filepath.Join("testdata", "formats", f.file))
			if err != nil {
				b.Fatal(err)
			}
			var data []byte
			if strings.HasSuffix(f.file, ".json") {
				elems := bytes.TrimSpace(one)
				elems = bytes.TrimSuffix(bytes.TrimPrefix(elems, []byte("[")), []byte("]"))
				data = append(data, '[')
				for k := 0; len(data) < 1<<20; k++ {
					if len(data) > 1 {
						data = append(data, ',')
					}
					data = append(data, bytes.ReplaceAll(elems, []byte(f.traceIDs), fmt.Appendf(nil, "-%04x-4000-8000-", k))...)
				}
				data = append(data, ']')
			} else {
				for k := 0; len(data) < 1<<20; k++ {
					data = append(data, bytes.ReplaceAll(one, []byte(f.traceIDs), []byte(f.traceIDs+strconv.Itoa(k)))...)
				}
			}
			benchConvert(b, f.convert, data)
		})
	}
}

// benchConvert reports, besides the wall clock, the CPU time of the
// process per operation (GC included), steadier on a shared machine.
func benchConvert(b *testing.B, convert func(io.Reader, io.Writer, ImportOptions) error, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0, cpuOK := processCPU()
	for b.Loop() {
		if err := convert(bytes.NewReader(data), io.Discard, ImportOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	if cpu1, ok := processCPU(); ok && cpuOK && cpu1 > cpu0 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}
