package render

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsmine/fsmine/mine"
)

// TestSummaryRealLogs mines the real logs in ../shared/data (skipped when
// they are absent) and checks that the default picture is one a reviewer
// can read: at most MaxStages boxes besides __start__ and __end__ (twelve
// with them) and at most MaxEdges edges, where the full picture draws
// every one.
func TestSummaryRealLogs(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "data", "jsonl")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no ../shared/data: ", err)
	}
	tests := []struct {
		file   string
		labels string
	}{
		{"helpdesk.jsonl.gz", ""},
		{"bpic2012.jsonl.gz", ""},
		{"tau2_retail.jsonl", "../testdata/tau2_retail.labels.json"},
		{"taubench_airline.jsonl", ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ropt := mine.ReadOptions{}
			if tt.labels != "" {
				data, err := os.ReadFile(tt.labels)
				if err != nil {
					t.Fatal(err)
				}
				if ropt.Rules, err = mine.ParseRules(data); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, tt.file)
			lg, err := mine.Read([]mine.Input{{Name: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}}, ropt)
			if err != nil {
				t.Fatal(err)
			}
			m, err := mine.Build(lg, mine.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			boxes, edges := drawnCounts(t, string(render(t, DOT, m, Options{Detail: DetailSummary})))
			fullBoxes, fullEdges := drawnCounts(t, string(render(t, DOT, m, Options{})))
			t.Logf("%d states, %d transitions: summary %d boxes, %d edges; full %d boxes, %d edges",
				len(m.States)-2, len(m.Transitions), boxes, edges, fullBoxes, fullEdges)
			if boxes > MaxStages || edges > MaxEdges {
				t.Errorf("summary draws %d boxes and %d edges, want at most %d and %d", boxes, edges, MaxStages, MaxEdges)
			}
		})
	}
}
