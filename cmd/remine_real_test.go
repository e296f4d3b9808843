package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRemineRealLog runs the re-mining loop on tau2 retail (skipped without
// ../shared/data): the log is split in two by a hash of the session id;
// the first half is built with --evidence; the second is checked against
// it with --outside; the model is updated with the second half, and must
// equal a build of both but for version and parent; a build of the
// --outside file holds exactly the sessions check found deviating; and
// diff --by attrs.run compares the two runs of the log.
func TestRemineRealLog(t *testing.T) {
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	src := filepath.Join(realDataDir, "tau2_retail.jsonl")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Skipf("%s not present", src)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	dir := t.TempDir()
	var a, b bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct {
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		h := fnv.New32a()
		h.Write([]byte(rec.SessionID))
		if h.Sum32()%2 == 0 {
			a.Write(sc.Bytes())
			a.WriteByte('\n')
		} else {
			b.Write(sc.Bytes())
			b.WriteByte('\n')
		}
	}
	pa, pb := writeTemp(t, dir, "a.jsonl", a.String()), writeTemp(t, dir, "b.jsonl", b.String())
	labels := "../testdata/tau2_retail.labels.json"
	v1, v2, ab := filepath.Join(dir, "v1.json"), filepath.Join(dir, "v2.json"), filepath.Join(dir, "ab.json")
	outside := filepath.Join(dir, "outside.jsonl")
	run := func(args ...string) (int, string) {
		t.Helper()
		code, out, stderr := checkRun(args...)
		if code == 2 {
			t.Fatalf("%v: exit 2: %s", args, stderr)
		}
		return code, out
	}
	run("build", "-q", "--labels", labels, "--evidence", "-o", v1, pa)
	_, out := run("check", "--model", v1, "--format", "json", "-q", "--outside", outside, pb)
	var sum struct{ Sessions, Fit int }
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Fit == sum.Sessions {
		t.Fatalf("every held-out session fits (%d): nothing to write outside", sum.Sessions)
	}
	run("build", "-q", "--labels", labels, "-o", filepath.Join(dir, "out.json"), outside)
	_, out = run("check", "--model", v1, "--format", "json", "-q", outside)
	var again struct{ Sessions, Fit int }
	if err := json.Unmarshal([]byte(out), &again); err != nil {
		t.Fatal(err)
	}
	if again.Sessions != sum.Sessions-sum.Fit || again.Fit != 0 {
		t.Errorf("--outside holds %d sessions, %d fitting; want the %d that did not fit, none fitting", again.Sessions, again.Fit, sum.Sessions-sum.Fit)
	}

	run("build", "-q", "--labels", labels, "--update", v1, "-o", v2, pb)
	run("build", "-q", "--labels", labels, "-o", ab, pa, pb)
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
	if body(v2) != body(ab) {
		t.Errorf("the updated model differs from a build of both halves")
	}

	code, out := run("diff", "--by", "attrs.run", "--labels", labels, src)
	if code != 1 || !strings.Contains(out, "--- attrs.run=ft-gpt-4.1_retail_default_gpt-4.1_1trials  v0  ") ||
		!strings.Contains(out, "+++ attrs.run=gpt-4.1_retail_default_gpt-4.1_1trials  v0  ") || !strings.Contains(out, "40 sessions") {
		t.Errorf("diff --by attrs.run: exit %d, output\n%s", code, out)
	}
}
