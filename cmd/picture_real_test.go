package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/render"
)

// TestDefaultPictureRealLogs builds the default picture (render -o
// map.svg|png, report's map) of every log in ../shared/data (skipped when
// absent) as a new user would: the four logs as the docs build them, and
// each STAR task after labels suggest and build. Fitted to a 1,920 × 1,200
// screen its smallest label must be at least 9 px, and at most 5 of its
// edges may cross (issue #25). For the STAR tasks it also holds the
// designers' flowchart (fsmine import, names mapped to the suggested
// stages) against the map: the share of the designers' happy path on the
// trunk and of their moves among the map's edges, and it fails when two
// branches of one designed node (success and failure, yes and no) share a
// suggested stage. go test -v prints the
// table docs/diff-stats-report-render.md quotes. The ride_book map must be
// docs/ride_book-map.svg, byte for byte: the README shows it.
func TestDefaultPictureRealLogs(t *testing.T) {
	data := filepath.Join("..", "..", "shared", "data")
	if _, err := os.Stat(data); err != nil {
		t.Skip("no ../shared/data")
	}
	if testing.Short() {
		t.Skip("real logs: skipped in -short mode")
	}
	tmp := t.TempDir()
	run := mustRun
	tests := []struct {
		name, log, labels string
		star              bool
	}{
		{"tau2_retail", "jsonl/tau2_retail.jsonl", "../testdata/tau2_retail.labels.json", false},
		{"taubench_airline", "jsonl/taubench_airline.jsonl", "", false},
		{"helpdesk", "jsonl/helpdesk.jsonl.gz", "", false},
		{"bpic2012", "jsonl/bpic2012.jsonl.gz", "", false},
		{"ride_book", "star/ride_book.jsonl", "", true},
		{"trip_directions", "star/trip_directions.jsonl", "", true},
		{"apartment_schedule", "star/apartment_schedule.jsonl", "", true},
		{"plane_book", "star/plane_book.jsonl", "", true},
		{"doctor_followup", "star/doctor_followup.jsonl", "", true},
	}
	var table, fits []string
	var happy, edges float64
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := filepath.Join(data, tt.log)
			model := filepath.Join(tmp, tt.name+".json")
			labels := tt.labels
			if tt.star {
				labels = filepath.Join(tmp, tt.name+".rules.json")
				run(t, "labels", "suggest", "-o", labels, logs)
			}
			args := []string{"build", "-q", "-o", model}
			if labels != "" {
				args = append(args, "--labels", labels)
			}
			run(t, append(args, logs)...)
			m, err := automaton.Load(model)
			if err != nil {
				t.Fatal(err)
			}
			l, err := render.MeasureLayout(m, render.Options{Detail: render.DetailSummary}) // the command line's default
			if err != nil {
				t.Fatal(err)
			}
			onScreen := l.MinFont * l.Scale
			table = append(table, fmtRow(tt.name, "%d × %d | %.1f | %d", l.Width, l.Height, onScreen, l.Crossings))
			if onScreen < 9 || l.Crossings > 5 {
				t.Errorf("%d × %d px, smallest label %.1f px at 1,920 px, %d crossings; want >= 9 px and <= 5 crossings", l.Width, l.Height, onScreen, l.Crossings)
			}
			if tt.name == "bpic2012" {
				// Every transition of it, laid out in full by the builtin
				// engine, ran past 120 s: refused at once, nothing written.
				svg := filepath.Join(tmp, "full.svg")
				var errb bytes.Buffer
				code := Run(context.Background(), []string{"render", "--detail", "full", "-o", svg, model}, IO{In: strings.NewReader(""), Out: io.Discard, Err: &errb})
				if _, err := os.Stat(svg); code != exitError || !strings.Contains(errb.String(), "too tangled for the builtin engine") || err == nil {
					t.Errorf("render --detail full of BPI 2012: exit %d, %s (file written: %v); want exit 2, too tangled, no file", code, errb.String(), err == nil)
				}
			}
			if tt.name == "helpdesk" {
				// A picture in full is laid out by guarded code: with
				// the default timeout it is drawn; past a timeout of
				// 1 ms, refused with the time, nothing written.
				svg := filepath.Join(tmp, "helpdesk-full.svg")
				run(t, "render", "--detail", "full", "-o", svg, model)
				if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("<svg")) {
					t.Errorf("render --detail full of help desk: %v, want an SVG", err)
				}
				late := filepath.Join(tmp, "helpdesk-late.svg")
				var errb bytes.Buffer
				code := Run(context.Background(), []string{"render", "--detail", "full", "--layout-timeout", "1ms", "-o", late, model}, IO{In: strings.NewReader(""), Out: io.Discard, Err: &errb})
				if _, err := os.Stat(late); code != exitError || !strings.Contains(errb.String(), "the layout took too long: past 1ms") || err == nil {
					t.Errorf("render --detail full --layout-timeout 1ms of help desk: exit %d, %s (file written: %v); want exit 2, past 1ms, no file", code, errb.String(), err == nil)
				}
			}
			if !tt.star {
				return
			}
			if tt.name == "ride_book" {
				// The README shows this map: it must be what render draws.
				svg := filepath.Join(tmp, "map.svg")
				run(t, "render", "-o", svg, model)
				got, err := os.ReadFile(svg)
				if err != nil {
					t.Fatal(err)
				}
				if want, err := os.ReadFile(filepath.Join("..", "docs", "ride_book-map.svg")); err != nil || !bytes.Equal(got, want) {
					t.Errorf("docs/ride_book-map.svg is not what render draws today (%v): cp the map of fsmine labels suggest, build --labels, render -o map.svg over it", err)
				}
			}
			fit, merged := starFit(t, run, tmp, filepath.Join(data, "star", tt.name+".flow.json"), labels, m)
			for _, mb := range merged {
				t.Errorf("designed branches %s and %s are one suggested stage, %q", mb[0], mb[1], mb[2])
			}
			h := float64(fit.OnTrunk) / float64(len(distinct(fit.HappyPath)))
			e := float64(fit.Drawn) / float64(len(fit.Moves))
			happy += h / 5
			edges += e / 5
			fits = append(fits, fmtRow(tt.name, "%d/%d = %.2f | %d/%d = %.2f", fit.OnTrunk, len(distinct(fit.HappyPath)), h, fit.Drawn, len(fit.Moves), e))
			t.Logf("happy path %v", fit.HappyPath)
			t.Logf("trunk %v", m.Trunk)
			for _, mv := range fit.Missing {
				t.Logf("designed move not on the map: %s -> %s", mv[0], mv[1])
			}
		})
	}
	t.Logf("\n| log | picture (px) | smallest label at 1,920 px | crossings |\n|---|---:|---:|---:|\n%s", strings.Join(table, "\n"))
	t.Logf("\n| STAR task | happy path on the trunk | designed moves on the map |\n|---|---:|---:|\n%s\n| mean | %.2f | %.3f |", strings.Join(fits, "\n"), happy, edges)
	// Issue #25's 0.85 for the happy path (0.91 measured) and the designed
	// moves drawn (0.856 measured).
	if len(fits) == 5 && (happy < 0.85 || edges < 0.85) {
		t.Errorf("STAR mean: happy path on the trunk %.2f, designed moves drawn %.3f; want >= 0.85 and >= 0.85", happy, edges)
	}
}

func fmtRow(name, format string, args ...any) string {
	return "| " + name + " | " + fmt.Sprintf(format, args...) + " |"
}

func distinct(s []string) map[string]bool {
	out := map[string]bool{}
	for _, x := range s {
		out[x] = true
	}
	return out
}

// designNames maps a STAR flowchart's node to the log's node, per task,
// where the flowchart names a step the task's dialogues never use and the
// wizard's interface sent the flowchart's words under another name (what
// import --labels does for a user). The words are those of the task's
// replies (RasaHQ/STAR@3058975:tasks/TASK/TASK.json) and of the wizard's
// turns in the dialogues.
var designNames = map[string]map[string]string{
	"trip_directions": {"trip_ask_departure_location": "ask_departure_location"}, // "Where are you departing from?"
	"plane_search": {
		"plane_ask_departure_city": "ask_departure_location", // "Where are you departing from?"
		"goodbye_1":                "goodbye_2",              // "Thank you and goodbye!"
	},
	"apartment_search": {"goodbye_1": "goodbye_2"}, // "Thank you and goodbye!"
}

// starFit imports the task's flowchart, names each designed node as the
// suggested rules name its log label, and fits it to m's map. It also
// returns the design's branches that one suggested stage holds (see
// mergedBranches).
func starFit(t *testing.T, run func(*testing.T, ...string), tmp, flow, rulesPath string, m *automaton.Model) (render.MapFit, [][3]string) {
	t.Helper()
	plain := filepath.Join(tmp, "plain.design.json")
	run(t, "import", "-q", "-o", plain, flow)
	d, err := automaton.Load(plain)
	if err != nil {
		t.Fatal(err)
	}
	rules := readRules(t, rulesPath)
	task := strings.TrimSuffix(filepath.Base(flow), ".flow.json")
	stage := func(label string) (string, bool) {
		if n, ok := designNames[task][label]; ok {
			label = n
		}
		return rules.stage(label)
	}
	merged := mergedBranches(d, stage)
	// Relabelled here rather than by import --labels, which refuses a
	// design whose relabelled moves are not deterministic (two outcomes of
	// a query in one stage).
	for i, s := range d.States {
		if s.ID == automaton.StartID || s.ID == automaton.EndID {
			continue
		}
		if name, ok := stage(s.Label); ok {
			d.States[i].Label = name
		}
	}
	fit, err := render.FitMap(d, m)
	if err != nil {
		t.Fatal(err)
	}
	return fit, merged
}

// labelRules are the label rules labels suggest writes, as far as the
// tests read them.
type labelRules struct {
	Rules []struct {
		Match struct {
			Node string `json:"node"`
		} `json:"match"`
		State string `json:"state"`
		Drop  bool   `json:"drop"`
	} `json:"rules"`
	res []*regexp.Regexp
}

// readRules reads the label rules at path.
func readRules(t *testing.T, path string) *labelRules {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r labelRules
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	for _, rule := range r.Rules {
		r.res = append(r.res, regexp.MustCompile(rule.Match.Node))
	}
	return &r
}

// first is the index of the first rule whose pattern matches node, -1 for
// none.
func (r *labelRules) first(node string) int {
	for i, re := range r.res {
		if re.MatchString(node) {
			return i
		}
	}
	return -1
}

// stage is what the first rule whose pattern matches node makes of it: a
// stage (ok), or nothing when no rule matches or it drops the node.
func (r *labelRules) stage(node string) (name string, ok bool) {
	if i := r.first(node); i >= 0 {
		rule := r.Rules[i]
		return rule.State, !rule.Drop && rule.State != ""
	}
	return "", false
}

// dropped says whether the first rule whose pattern matches node drops it.
func (r *labelRules) dropped(node string) bool {
	i := r.first(node)
	return i >= 0 && r.Rules[i].Drop
}

// mergedBranches lists the pairs of nodes of design d that follow one
// node as two of its branches (success and failure, yes and no) and that
// stage puts in one stage, with the stage. Moves back to the node itself
// and into the end are no branches; a node stage does not name (not in the
// log, or dropped) keeps its own name and shares no stage.
func mergedBranches(d *automaton.Model, stage func(string) (string, bool)) [][3]string {
	next := map[string][]string{}
	for _, tr := range d.Transitions {
		if tr.To != automaton.EndID && tr.To != tr.From {
			next[tr.From] = append(next[tr.From], tr.To)
		}
	}
	var out [][3]string
	for _, from := range slices.Sorted(maps.Keys(next)) {
		to := slices.Compact(slices.Sorted(slices.Values(next[from])))
		for i, x := range to {
			for _, y := range to[i+1:] {
				lx, ly := d.State(x).Label, d.State(y).Label
				sx, okx := stage(lx)
				sy, oky := stage(ly)
				if okx && oky && sx == sy {
					out = append(out, [3]string{lx, ly, sx})
				}
			}
		}
	}
	return out
}

// TestAllSTARTasks draws the default map of every STAR task with a single
// task per dialogue and fits its flowchart, as TestDefaultPictureRealLogs
// does for the five in ../shared/data/star. The 24 tasks are not bundled:
// testdata/bench/star.py converts a STAR checkout into FSMINE_STAR_DIR
// (skipped without it). Every picture must be legible at 1,920 px and
// cross at most 5 edges.
// go test -v prints the table docs/diff-stats-report-render.md quotes.
func TestAllSTARTasks(t *testing.T) {
	dir := os.Getenv("FSMINE_STAR_DIR")
	if dir == "" {
		t.Skip("FSMINE_STAR_DIR not set (see testdata/bench/star.py)")
	}
	flows, _ := filepath.Glob(filepath.Join(dir, "*.flow.json"))
	if len(flows) != 24 {
		t.Fatalf("%d *.flow.json in %s, want STAR's 24 tasks (testdata/bench/star.py)", len(flows), dir)
	}
	tmp := t.TempDir()
	run := mustRun
	var rows []string
	var happy, drawn float64
	var takenMoves, namedStages, commonMoves float64 // what any map of these logs could hold
	over, crossings := 0, 0
	why := map[string]int{}
	var branches []string
	turns := map[string]int{}
	for _, flow := range flows {
		task := strings.TrimSuffix(filepath.Base(flow), ".flow.json")
		logs := filepath.Join(dir, task+".jsonl")
		rules := filepath.Join(tmp, task+".rules.json")
		model := filepath.Join(tmp, task+".json")
		run(t, "labels", "suggest", "-q", "-o", rules, logs)
		run(t, "build", "-q", "--labels", rules, "-o", model, logs)
		m, err := automaton.Load(model)
		if err != nil {
			t.Fatal(err)
		}
		l, err := render.MeasureLayout(m, render.Options{Detail: render.DetailSummary})
		if err != nil {
			t.Fatal(err)
		}
		if onScreen := l.MinFont * l.Scale; onScreen < 9 {
			t.Errorf("%s: smallest label %.1f px at 1,920 px, want >= 9", task, onScreen)
		}
		crossings += l.Crossings
		if l.Crossings > 5 {
			over++
		}
		fit, merged := starFit(t, run, tmp, flow, rules, m)
		for _, mb := range merged {
			branches = append(branches, fmt.Sprintf("%s: %s and %s in %q", task, mb[0], mb[1], mb[2]))
		}
		lr := readRules(t, rules)
		for _, n := range []string{"user_utter", "wizard_free_text"} {
			if lr.dropped(n) {
				turns[n]++
			}
		}
		h := float64(fit.OnTrunk) / float64(len(distinct(fit.HappyPath)))
		e := float64(fit.Drawn) / float64(len(fit.Moves))
		happy += h / float64(len(flows))
		drawn += e / float64(len(flows))
		rows = append(rows, fmtRow(task, "%d × %d | %.1f | %d | %.2f | %.2f", l.Width, l.Height, l.MinFont*l.Scale, l.Crossings, h, e))
		never, notCommon := 0, 0
		for _, mv := range fit.Missing {
			w := missingWhy(m, mv)
			why[w]++
			if w == "never" {
				never++
			}
			if w != "left out" {
				notCommon++
			}
		}
		commonMoves += float64(len(fit.Moves)-notCommon) / float64(len(fit.Moves)) / float64(len(flows))
		noState, offTrunk := happyMissing(m, fit)
		takenMoves += float64(len(fit.Moves)-never) / float64(len(fit.Moves)) / float64(len(flows))
		namedStages += float64(len(distinct(fit.HappyPath))-noState) / float64(len(distinct(fit.HappyPath))) / float64(len(flows))
		why["no state"] += noState
		why["off trunk"] += offTrunk
	}
	t.Logf("\n| STAR task | picture (px) | smallest label at 1,920 px | crossings | happy path on the trunk | designed moves drawn |\n|---|---:|---:|---:|---:|---:|\n%s\n| mean | | | %d in all, %d tasks over 5 | %.3f | %.3f |",
		strings.Join(rows, "\n"), crossings, over, happy, drawn)
	t.Logf("designed moves not drawn: %d never taken, %d taken only as rare transitions, %d taken fewer than 5 times, %d taken but not drawn (the 30 edges, a crossing, or inside a box)",
		why["never"], why["rare"], why["seldom"], why["left out"])
	t.Logf("happy-path stages not on the trunk: %d with no state of their label, %d visited but off the trunk", why["no state"], why["off trunk"])
	t.Logf("at most, a map of these logs holds (mean over the tasks): happy-path stages the log names %.3f, designed moves the log takes %.3f, of them taken 5 times or more and not only as rare transitions %.3f", namedStages, takenMoves, commonMoves)
	t.Logf("message turns dropped in %d of %d tasks (user_utter), free text in %d (wizard_free_text)", turns["user_utter"], len(flows), turns["wizard_free_text"])
	// Measured: user turns in 24 of 24, free text in 19 (docs/diff-stats-report-render.md).
	if turns["user_utter"] < len(flows) || turns["wizard_free_text"] < 19 {
		t.Errorf("turns found in fewer tasks than measured (user_utter in all, wizard_free_text in 19)")
	}
	t.Logf("designed branches in one suggested stage: %d %q", len(branches), branches)
	// Issue #25 wants none.
	if len(branches) > 0 {
		t.Errorf("%d pairs of designed branches share a suggested stage, want none: %q", len(branches), branches)
	}
	if over > 0 {
		t.Errorf("%d tasks cross more than 5 edges, want none", over)
	}
}

// happyMissing counts the distinct stages of fit's happy path that are not
// on m's trunk: those m has no state of (the log never names them so) and
// those it visits off the trunk, the sessions' most common path.
func happyMissing(m *automaton.Model, fit render.MapFit) (noState, offTrunk int) {
	trunk, has := map[string]bool{}, map[string]bool{}
	for _, id := range m.Trunk {
		if s := m.State(id); s != nil {
			trunk[s.Label] = true
		}
	}
	for _, s := range m.States {
		has[s.Label] = true
	}
	seen := map[string]bool{}
	for _, l := range fit.HappyPath {
		if seen[l] || trunk[l] {
			continue
		}
		seen[l] = true
		if has[l] {
			offTrunk++
		} else {
			noState++
		}
	}
	return noState, offTrunk
}

// missingWhy says why the map of m does not draw the designed move mv
// (a pair of labels): the log never took it, took it only as rare
// transitions, took it fewer than 5 times (render's least count), or took
// it and the map left it out.
func missingWhy(m *automaton.Model, mv [2]string) string {
	label := map[string]string{}
	for _, s := range m.States {
		label[s.ID] = s.Label
	}
	all, common := 0, 0
	for _, tr := range m.Transitions {
		if label[tr.From] != mv[0] || label[tr.To] != mv[1] {
			continue
		}
		all += tr.Count
		if !tr.Rare && tr.Generalized == "" {
			common += tr.Count
		}
	}
	switch {
	case all == 0:
		return "never"
	case common == 0:
		return "rare"
	case common < 5:
		return "seldom"
	}
	return "left out"
}

// mustRun runs fsmine with args and fails the test unless it exits 0.
func mustRun(t *testing.T, args ...string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Run(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errb}); code != exitOK {
		t.Fatalf("fsmine %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
}
