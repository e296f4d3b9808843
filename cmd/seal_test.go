package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
)

// TestSealPutsInOrder: a model whose transitions, or a sub-map's, were
// reordered and nothing else (a merge of two edits, another tool's rewrite)
// keeps its digest, and no reader takes it out of order: seal writes it in
// order, in place as with -o. It said the digest was right and left the
// file unreadable, and refused an edited sub-map.
func TestSealPutsInOrder(t *testing.T) {
	dir := t.TempDir()
	var log strings.Builder
	for i := range 12 {
		task, second := "x", "refund"
		if i%2 == 1 {
			task, second = "y", "exchange"
		}
		for j, n := range []string{"lookup", second, "close"} {
			b, _ := json.Marshal(map[string]any{"session_id": "s" + string(rune('a'+i)), "step": j, "node": n, "event": "ok", "attrs": map[string]any{"task": task}})
			log.Write(append(b, '\n'))
		}
	}
	logs := writeTemp(t, dir, "log.jsonl", log.String())
	model := filepath.Join(dir, "m.json")
	if code, _, stderr := checkRun("build", "-q", "--by", "attrs.task", "--by-min", "2", "--by-mode", "paths", "-o", model, logs); code != 0 {
		t.Fatalf("build: %d %s", code, stderr)
	}
	rotate := func(ts []any) []any { return append(ts[1:], ts[0]) }
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
	}{
		{"the map's transitions", func(m map[string]any) { m["transitions"] = rotate(m["transitions"].([]any)) }},
		{"a sub-map's transitions", func(m map[string]any) {
			sub := m["by"].(map[string]any)["maps"].([]any)[0].(map[string]any)
			sub["transitions"] = rotate(sub["transitions"].([]any))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(model)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			tc.edit(m)
			edited, _ := json.MarshalIndent(m, "", " ")
			path := filepath.Join(dir, "edited.json")
			if err := os.WriteFile(path, edited, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := automaton.Load(path); err == nil || !strings.Contains(err.Error(), "out of order") {
				t.Fatalf("the reordered model loads (%v): the test edits nothing", err)
			}
			code, _, stderr := checkRun("seal", path)
			if code != 0 || !strings.Contains(stderr, "transitions put in the file's order") {
				t.Fatalf("seal: exit %d: %s", code, stderr)
			}
			sealed, err := automaton.Load(path)
			if err != nil {
				t.Fatalf("the sealed model does not load: %v", err)
			}
			orig, _ := automaton.Load(model)
			if sealed.Digest != orig.Digest || sealed.Version != orig.Version {
				t.Errorf("sealed v%d %s, want the model's v%d %s", sealed.Version, sealed.Digest, orig.Version, orig.Digest)
			}
		})
	}
}
