package cmd

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpdateEqualsWholeBuild splits the bundled sample by session (odd ids
// to a.jsonl, even to b.jsonl), builds a.jsonl with --evidence and updates
// it with b.jsonl: the model must be byte for byte the one a build of both
// gives, but for version and parent.
func TestUpdateEqualsWholeBuild(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	dir := t.TempDir()
	data, err := os.ReadFile("../testdata/returns.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		// "session_id":"r-000123": the last digit picks the half.
		i := strings.Index(line, `"session_id":"`)
		id := line[i+len(`"session_id":"`):]
		id = id[:strings.IndexByte(id, '"')]
		if (id[len(id)-1]-'0')%2 == 1 {
			a.WriteString(line + "\n")
		} else {
			b.WriteString(line + "\n")
		}
	}
	pa, pb := writeTemp(t, dir, "a.jsonl", a.String()), writeTemp(t, dir, "b.jsonl", b.String())
	labels := "../testdata/returns.labels.json"
	v1, v2, ab := filepath.Join(dir, "v1.json"), filepath.Join(dir, "v2.json"), filepath.Join(dir, "ab.json")
	for _, args := range [][]string{
		{"build", "-q", "--labels", labels, "--evidence", "-o", v1, pa},
		{"build", "-q", "--labels", labels, "--update", v1, "-o", v2, pb},
		{"build", "-q", "--labels", labels, "-o", ab, pa, pb},
	} {
		if code, _, stderr := checkRun(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	body := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var keep []string
		for _, l := range strings.Split(string(data), "\n") {
			if !strings.HasPrefix(l, `  "version":`) && !strings.HasPrefix(l, `  "parent":`) && !strings.HasPrefix(l, `  "evidence":`) {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if got, want := body(v2), body(ab); got != want {
		t.Errorf("updated model differs from the whole build")
	}
	if data, err := os.ReadFile(v2); err != nil || !bytes.Contains(data, []byte(`"version": 2`)) {
		t.Errorf("updated model is not version 2 (%v)", err)
	}
}
