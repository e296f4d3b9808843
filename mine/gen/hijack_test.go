package gen

import (
	"bytes"
	"context"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
)

func TestWriteHijack(t *testing.T) {
	var a, b bytes.Buffer
	if err := WriteHijack(context.Background(), &a, 60, HijackOptions{Seed: 3, Share: 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := WriteHijack(context.Background(), &b, 60, HijackOptions{Seed: 3, Share: 0.5}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("the same options give different bytes")
	}
	hijacked, harms := map[string]string{}, map[string]int{}
	for i, line := range strings.Split(strings.TrimSuffix(a.String(), "\n"), "\n") {
		var rec struct {
			Session string `json:"session_id"`
			Node    string `json:"node"`
			Attrs   struct {
				Args   map[string]string `json:"args"`
				Seen   string            `json:"seen"`
				Hijack string            `json:"hijack"`
				Harm   bool              `json:"harm"`
			} `json:"attrs"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if rec.Attrs.Hijack != "" {
			hijacked[rec.Session] = rec.Attrs.Hijack
		}
		if rec.Attrs.Harm {
			harms[rec.Session]++
			if rec.Node != "send_email" && rec.Node != "pay" {
				t.Errorf("line %d: harm on %s, want an acting call", i+1, rec.Node)
			}
		}
	}
	kinds := map[string]int{}
	for s, k := range hijacked {
		kinds[k]++
		if harms[s] != 1 {
			t.Errorf("hijacked session %s has %d harmful calls, want 1", s, harms[s])
		}
	}
	if len(harms) != len(hijacked) {
		t.Errorf("%d sessions with a harmful call, %d hijacked", len(harms), len(hijacked))
	}
	for _, k := range HijackKinds {
		if kinds[k] == 0 {
			t.Errorf("no session hijacked %s among %d hijacked", k, len(hijacked))
		}
	}
	if err := WriteHijack(context.Background(), &a, 1, HijackOptions{Share: 2}); err == nil {
		t.Error("share 2 is no error")
	}
}
