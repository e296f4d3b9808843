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
		"tau2_retail.jsonl alergia":      "sha256:90cc09b29aa08681f7bff858e40501e8dad8a91aa19df79590c39ce623a7cef5",
		"tau2_retail.jsonl bayes":        "sha256:6b7317aa388cf291bd8236af110b24e826e078a39be23e77643a9050081c5b68",
		"tau2_retail.jsonl label":        "sha256:90cc09b29aa08681f7bff858e40501e8dad8a91aa19df79590c39ce623a7cef5",
		"taubench_airline.jsonl alergia": "sha256:034a08f72ff0019cbc376575aa0e7a7fc6bc6ad2883d7775c873cf79882301bd",
		"taubench_airline.jsonl bayes":   "sha256:aa6e8d9b97dab92f7c7be19ceaa5bf675669c781fce63a550c8c8fcd96abbefd",
		"taubench_airline.jsonl label":   "sha256:a4d7d838ad8c4840d2bc01c17e6a211e99cf3dfbff411487cda7f2cae3f86629",
		"helpdesk.jsonl.gz alergia":      "sha256:5fd2b9805f3e18f2dec481b27cf03998718a679bf8706e99e133e9895bb07336",
		"helpdesk.jsonl.gz bayes":        "sha256:f4d2a81c06d52ae86670f104330211828ed5175f0ae488be98c9572856842699",
		"helpdesk.jsonl.gz label":        "sha256:cd34af526e0fb1d1ef0225c646aff6637f24a31adea5829fd555526959e5ae90",
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
