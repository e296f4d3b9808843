package mine

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/automaton/conform"
)

// TestBuildRealLogs mines the real logs in ../shared/data (skipped when they
// are absent) with default options: every session is read, and every
// training session is a path of the model it was mined into.
func TestBuildRealLogs(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "data", "jsonl")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no ../shared/data: ", err)
	}
	tests := []struct {
		file     string
		labels   string
		sessions int
		records  int
		runs     bool // run constraints must be learned
	}{
		{"tau2_retail.jsonl", "../testdata/tau2_retail.labels.json", 80, 1803, false},
		{"helpdesk.jsonl.gz", "", 4580, 21348, true},
		{"bpic2012.jsonl.gz", "", 13087, 262200, true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ropt := ReadOptions{Strict: true}
			if tt.labels != "" {
				ropt.Rules = readRules(t, tt.labels)
			}
			path := filepath.Join(dir, tt.file)
			lg, err := Read([]Input{{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}}, ropt)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Build(lg, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			if m.Source.Sessions != tt.sessions || m.Source.Records != tt.records {
				t.Errorf("sessions, records = %d, %d; want %d, %d", m.Source.Sessions, m.Source.Records, tt.sessions, tt.records)
			}
			// Every training session is a path of the model, within its
			// caps and keeping every constraint learned from it.
			c := conform.New(m, conform.Options{})
			for i := range lg.Sessions {
				mvs := lg.Moves(&lg.Sessions[i])
				if !m.Accepts(mvs) {
					t.Fatalf("training session %s is not a path of the model", lg.Sessions[i].ID)
				}
				if !c.Fits(mvs) {
					t.Fatalf("training session %s does not fit: %+v", lg.Sessions[i].ID, c.Check(mvs).Deviation)
				}
			}
			runs := 0
			for _, k := range m.Constraints {
				if k.Kind == automaton.ConstraintRun {
					runs++
				}
			}
			if tt.runs && runs == 0 {
				t.Errorf("no run constraint learned, want some (%d constraints)", len(m.Constraints))
			}
			if len(m.Trunk) == 0 || len(m.Loops) == 0 {
				t.Errorf("trunk %v, %d loops: want a trunk and at least one loop", m.Trunk, len(m.Loops))
			}
		})
	}
}

// TestRealLogDigests holds the digests of the models of three real logs
// under the default generalisation and each merge. The indexes that make
// the event edit and the merges fast where events carry ids must not change
// what they mine (docs/performance.md): a change of any state, move, loop or
// constraint changes a digest. A change meant to alter the models updates
// these, and says why in its commit.
func TestRealLogDigests(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	dir := filepath.Join("..", "..", "shared", "data", "jsonl")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no ../shared/data: ", err)
	}
	// Measured on the code before those indexes (99c1272) with fsmine build
	// --merge M [--labels L] LOG: the same digests.
	want := map[string]string{
		"tau2_retail.jsonl alergia":      "sha256:b8e0b00f37a61ca0075832d675b588801b28085541dd7f7b9bea3b5f2086566d",
		"tau2_retail.jsonl bayes":        "sha256:d9cce155d2dd4374f19a3b172039f359dd6f64e2ec2a04330ec5c8d0e052f629",
		"tau2_retail.jsonl label":        "sha256:b8e0b00f37a61ca0075832d675b588801b28085541dd7f7b9bea3b5f2086566d",
		"taubench_airline.jsonl alergia": "sha256:b8916c217b9b5403a7b99fcde60272b18b78218c56dafc911fc8ef5cd12d930c",
		"taubench_airline.jsonl bayes":   "sha256:d0b7544d2648da2ecd8097c94fc443473c51f6cb998010a02eee509b90db3a19",
		"taubench_airline.jsonl label":   "sha256:1b2ec6faf01ad24f3891d909174e268fc02d4d90320ad9089db81e957f152757",
		"helpdesk.jsonl.gz alergia":      "sha256:81c92dd6eddd90a0d58e0f538ef750dd67c6cb9e70d843d4a93e929e16b2c243",
		"helpdesk.jsonl.gz bayes":        "sha256:228d587f2e20fccb91f72ba4bd1f789c69bc727b64c7abe3537b071bb1ebe5e0",
		"helpdesk.jsonl.gz label":        "sha256:c6e03b5b9beca64d17f82cba748452260f82f96aecb13cf0c342da96501d44f7",
	}
	for _, tt := range []struct{ file, labels string }{
		{"tau2_retail.jsonl", "../testdata/tau2_retail.labels.json"},
		{"taubench_airline.jsonl", "../testdata/taubench_airline.labels.json"},
		{"helpdesk.jsonl.gz", ""},
	} {
		ropt := ReadOptions{Strict: true}
		if tt.labels != "" {
			ropt.Rules = readRules(t, tt.labels)
		}
		path := filepath.Join(dir, tt.file)
		lg, err := Read([]Input{{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}}, ropt)
		if err != nil {
			t.Fatal(err)
		}
		for _, merge := range []string{MergeAlergia, MergeBayes, MergeLabel} {
			opt := DefaultOptions()
			opt.Merge = merge
			m, err := Build(lg, opt)
			if err != nil {
				t.Fatal(err)
			}
			name := tt.file + " " + merge
			if got := m.ComputeDigest(); got != want[name] {
				t.Errorf("%s: digest %s, want %s", name, got, want[name])
			}
		}
	}
}
