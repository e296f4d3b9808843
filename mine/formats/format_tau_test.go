package formats

import (
	"bytes"
	"strings"
	"testing"
)

// A simulation is placed where it is in the "simulations" array, not where
// its text is first found in the document (an empty object, here, in
// "tasks").
func TestTau2SimulationPlace(t *testing.T) {
	in := "{\"tasks\": [{}],\n \"simulations\": [\n  {}]}"
	err := convertTau(strings.NewReader(in), &bytes.Buffer{}, ImportOptions{})
	want := "line 3, column 3: simulation without an id"
	if err == nil || err.Error() != want {
		t.Errorf("convertTau = %v, want %s", err, want)
	}
}
