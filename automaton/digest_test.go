package automaton

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// loopModel is a model with one capped loop, sealed.
func loopModel(t *testing.T) *Model {
	t.Helper()
	m := buildModel(t, 1, []edge{
		{StartID, "", "a", 4, false},
		{"a", "retry", "a", 2, false},
		{"a", "ok", "b", 4, false},
		{"b", "done", EndID, 4, false},
	})
	m.Loops = []Loop{{States: []string{"a"}, BackEdges: []EdgeRef{{"a", "retry", "a"}}, Count: 2, Sessions: 1, MaxIterations: 2, P95Iterations: 2}}
	for i, tr := range m.Transitions {
		m.Transitions[i].BackEdge = tr.From == "a" && tr.To == "a"
	}
	m.Digest = m.ComputeDigest()
	return m
}

func encode(t *testing.T, m *Model) string {
	t.Helper()
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestDigestCoversWhatTheGuardEnforces: two models that differ only in
// something the guard reads have different digests; provenance does not
// count.
func TestDigestCoversWhatTheGuardEnforces(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(m *Model)
		change bool
	}{
		{"loop cap", func(m *Model) { m.Loops[0].MaxIterations = 50 }, true},
		{"no loop", func(m *Model) { m.Loops = nil }, true},
		{"back edges", func(m *Model) { m.Loops[0].BackEdges = nil }, true},
		{"visits", func(m *Model) { m.States[1].Visits++ }, true},
		{"max_run", func(m *Model) { m.States[1].MaxRun = 3 }, true},
		{"fields", func(m *Model) { m.States[1].Fields = []string{"x"} }, true},
		{"prob", func(m *Model) { m.Transitions[1].Prob = 0.25 }, true},
		{"rare", func(m *Model) { m.Transitions[1].Rare = true }, true},
		{"generalized", func(m *Model) { m.Transitions[1].Generalized = "skip" }, true},
		// a loop's cap counts the marked moves inside it (guard, check)
		{"back_edge mark", func(m *Model) {
			for i := range m.Transitions {
				m.Transitions[i].BackEdge = false
			}
		}, true},
		{"params", func(m *Model) { m.Params.Labels = RawJSON(`{"rules":[]}`) }, false},
		{"p95", func(m *Model) { m.Loops[0].P95Iterations = 9 }, false},
		{"sessions", func(m *Model) { m.States[1].Sessions = 9 }, false},
		{"version", func(m *Model) { m.Version = 7 }, false},
		{"examples", func(m *Model) { m.States[1].Examples = []string{"s1"} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := loopModel(t)
			before := m.ComputeDigest()
			tt.edit(m)
			if got := m.ComputeDigest() != before; got != tt.change {
				t.Errorf("digest changed = %v, want %v", got, tt.change)
			}
		})
	}
}

// TestReadRefusesEditedModel: a cap raised by hand after mining is refused
// by Read, naming both digests and the command that re-seals; Seal accepts
// the edit as the next version.
func TestReadRefusesEditedModel(t *testing.T) {
	m := loopModel(t)
	good := encode(t, m)
	if _, err := Read(strings.NewReader(good)); err != nil {
		t.Fatalf("the sealed model: %v", err)
	}
	edited := strings.Replace(good, `"max_iterations":2`, `"max_iterations":50`, 1)
	if edited == good {
		t.Fatal("the edit did not apply")
	}
	_, err := Read(strings.NewReader(edited))
	var de *DigestError
	if !errors.As(err, &de) {
		t.Fatalf("Read(edited) = %v, want a *DigestError", err)
	}
	if de.Stored != m.Digest || de.Computed == m.Digest {
		t.Errorf("DigestError = %+v, want the stored %s and another computed", de, m.Digest)
	}
	for _, want := range []string{m.Digest, de.Computed, "fsmine seal MODEL.json"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	e, err := Decode(strings.NewReader(edited))
	if err != nil {
		t.Fatal(err)
	}
	changed, err := e.Seal()
	if err != nil || !changed {
		t.Fatalf("Seal() = %v, %v; want true, nil", changed, err)
	}
	if e.Version != 2 || e.Parent == nil || e.Parent.Version != 1 || e.Parent.Digest != m.Digest || e.Digest != de.Computed {
		t.Errorf("sealed: version %d, parent %+v, digest %s; want 2, {1 %s}, %s", e.Version, e.Parent, e.Digest, m.Digest, de.Computed)
	}
	if _, err := Read(strings.NewReader(encode(t, e))); err != nil {
		t.Errorf("the sealed edit: %v", err)
	}
	// No digest at all is refused as well.
	e.Digest = ""
	if _, err := Read(strings.NewReader(encode(t, e))); !errors.As(err, &de) || !strings.Contains(err.Error(), "no digest") {
		t.Errorf("Read(no digest) = %v, want a DigestError saying so", err)
	}
}

// TestReadLegacyDigest: a model of an earlier fsmine, whose digest did not
// cover loops or back_edge marks, is read as it is and marked; sealing gives
// it a digest of the current kind. Once it has one, an edit of a mark is
// refused.
func TestReadLegacyDigest(t *testing.T) {
	for kind, digest := range map[string]func(m *Model) string{
		"first": (*Model).legacyDigest,
		"2":     func(m *Model) string { return m.digest(2) },
	} {
		m := loopModel(t)
		m.Digest = digest(m)
		if m.Digest == m.ComputeDigest() {
			t.Fatalf("kind %s: the digest is the current kind's", kind)
		}
		got, err := Read(strings.NewReader(encode(t, m)))
		if err != nil {
			t.Fatalf("Read(kind %s) = %v", kind, err)
		}
		if !got.LegacyDigest() {
			t.Errorf("LegacyDigest() = false for a digest of kind %s", kind)
		}
		if changed, err := got.Seal(); err != nil || !changed || got.LegacyDigest() || got.Digest != got.ComputeDigest() {
			t.Errorf("kind %s: Seal() = %v, %v; legacy %v", kind, changed, err, got.LegacyDigest())
		}
		sealed := encode(t, got)
		unmarked := strings.Replace(sealed, `"back_edge":true`, `"back_edge":false`, 1)
		if unmarked == sealed {
			t.Fatal("the model has no back edge to unmark")
		}
		var de *DigestError
		if _, err := Read(strings.NewReader(unmarked)); !errors.As(err, &de) {
			t.Errorf("kind %s, sealed, a back edge unmarked: Read = %v, want a *DigestError", kind, err)
		}
	}
	if fresh, _ := Read(strings.NewReader(encode(t, loopModel(t)))); fresh.LegacyDigest() {
		t.Error("LegacyDigest() = true for a digest of the current kind")
	}
}
