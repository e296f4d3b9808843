package mine

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExtractSessions writes the records of some sessions and reads them back: the
// sessions come back with the same visits, labels and events, the others
// not at all, for JSONL and for an event log an importer converts.
func TestExtractSessions(t *testing.T) {
	rules, err := ParseRules([]byte(`{"rules": [{"match": {"node": "^smalltalk$"}, "state": "smalltalk", "detour": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		opt  ReadOptions
	}{
		{"jsonl", filepath.Join("..", "testdata", "returns.jsonl"), ReadOptions{Rules: rules}},
		{"xes", filepath.Join("testdata", "formats", "loan.xes"), ReadOptions{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Name: tt.path, Open: func() (io.ReadCloser, error) { return os.Open(tt.path) }}
			lg, err := Read([]Input{in}, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			keep := map[string]bool{}
			for i, s := range lg.Sessions {
				if i%3 == 0 {
					keep[s.ID] = true
				}
			}
			var buf bytes.Buffer
			n, err := Extract([]Input{in}, tt.opt, func(id string) bool { return keep[id] }, &buf)
			if err != nil {
				t.Fatal(err)
			}
			if n != strings.Count(buf.String(), "\n") || n == 0 {
				t.Fatalf("Extract says %d lines, wrote %d", n, strings.Count(buf.String(), "\n"))
			}
			data := buf.Bytes()
			opt := tt.opt
			opt.Format = FormatJSONL
			back, err := Read([]Input{{Name: "out.jsonl", Open: func() (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(data)), nil
			}}}, opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(back.Sessions) != len(keep) {
				t.Fatalf("read back %d sessions, want %d", len(back.Sessions), len(keep))
			}
			text := func(l *Log, s *Session) string {
				var b []string
				for _, mv := range l.Moves(s) {
					b = append(b, mv.Event+">"+mv.Label)
				}
				return strings.Join(b, " ")
			}
			byID := map[string]string{}
			for i := range lg.Sessions {
				byID[lg.Sessions[i].ID] = text(lg, &lg.Sessions[i])
			}
			got := map[string]string{}
			for i := range back.Sessions {
				got[back.Sessions[i].ID] = text(back, &back.Sessions[i])
			}
			for id := range keep {
				if got[id] != byID[id] {
					t.Errorf("session %s read back as %q, want %q", id, got[id], byID[id])
				}
			}
			if len(got) != len(keep) {
				t.Errorf("sessions read back %d, want %d", len(got), len(keep))
			}
		})
	}
}
