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
