package render

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmine/fsmine/automaton"
	"github.com/fsmine/fsmine/internal/text"
)

// reportFixtures are the models the report tests read: the hand-made
// fixtures of the other writers, a model mined from the bundled returns
// sample (fsmine build testdata/returns.jsonl --labels
// testdata/returns.labels.json), and one whose every string is hostile
// HTML.
var reportFixtures = []string{"orders", "support", "weird", "report/returns", "report/hostile"}

func report(t testing.TB, m *automaton.Model, opt ReportOptions) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Report(&buf, m, opt); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// section returns the HTML of <section id="id">, or fails the test.
func section(t *testing.T, page, id string) string {
	t.Helper()
	start := strings.Index(page, `<section id="`+id+`">`)
	if start < 0 {
		t.Fatalf("no section %q", id)
	}
	end := strings.Index(page[start:], "</section>")
	if end < 0 {
		t.Fatalf("section %q is not closed", id)
	}
	return page[start : start+end]
}

var (
	rowRE  = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	cellRE = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
	tagRE  = regexp.MustCompile(`<[^>]*>`)
)

// text is what a browser shows for a fragment of the page's HTML: tags
// dropped, entities decoded.
func textOf(fragment string) string {
	return html.UnescapeString(tagRE.ReplaceAllString(fragment, ""))
}

// rows returns the text of the body cells of every table row of fragment.
func rows(fragment string) [][]string {
	var out [][]string
	for _, r := range rowRE.FindAllStringSubmatch(fragment, -1) {
		var cells []string
		for _, c := range cellRE.FindAllStringSubmatch(r[1], -1) {
			cells = append(cells, textOf(c[1]))
		}
		if len(cells) > 0 {
			out = append(out, cells)
		}
	}
	return out
}

func eventText(e string) string {
	if e == "" {
		return "(none)"
	}
	return shownText(e)
}

func hasRow(rs [][]string, want []string) bool {
	for _, r := range rs {
		if len(r) >= len(want) && slicesEqual(r[:len(want)], want) {
			return true
		}
	}
	return false
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReportLists checks that the tables hold what the model holds: every
// state with its counts, every rare transition with count, share and
// sessions, the trunk edge by edge, every loop, every transition and the
// provenance.
func TestReportLists(t *testing.T) {
	for _, name := range reportFixtures {
		t.Run(name, func(t *testing.T) {
			m := loadFixture(t, name)
			page := report(t, m, ReportOptions{Diagram: DiagramNone})

			states := rows(section(t, page, "states"))
			if len(states) != len(m.States) {
				t.Errorf("states table has %d rows, want %d", len(states), len(m.States))
			}
			for _, s := range m.States {
				want := []string{shownText(s.ID)}
				for _, r := range states {
					if strings.TrimSuffix(r[0], "trunk") == want[0] {
						if r[2] != thousands(s.Visits) || r[3] != thousands(s.Sessions) {
							t.Errorf("state %q: visits %q sessions %q, want %d and %d", s.ID, r[2], r[3], s.Visits, s.Sessions)
						}
						want = nil
						break
					}
				}
				if want != nil {
					t.Errorf("state %q is not in the states table", s.ID)
				}
			}

			rare := rows(section(t, page, "rare"))
			n := 0
			for _, tr := range m.Transitions {
				if !tr.Rare {
					continue
				}
				n++
				want := []string{shownText(tr.From), eventText(tr.Event), shownText(tr.To),
					thousands(tr.Count), text.PercentTo(tr.Prob, 2), thousands(tr.Sessions)}
				if !hasRow(rare, want) {
					t.Errorf("rare transition %v is not listed as %q", tr, want)
				}
			}
			if len(rare) != n {
				t.Errorf("rare table has %d rows, want %d", len(rare), n)
			}

			all := rows(section(t, page, "transitions"))
			if len(all) != len(m.Transitions) {
				t.Errorf("transitions table has %d rows, want %d", len(all), len(m.Transitions))
			}
			for _, tr := range m.Transitions {
				want := []string{shownText(tr.From), eventText(tr.Event), shownText(tr.To), thousands(tr.Count), text.Percent(tr.Prob), thousands(tr.Sessions)}
				if !hasRow(all, want) {
					t.Errorf("transition %v is not listed as %q", tr, want)
				}
			}

			trunk := section(t, page, "trunk")
			if len(m.Trunk) == 0 {
				if !strings.Contains(trunk, "no trunk") {
					t.Error("a model without a trunk does not say so")
				}
			} else {
				path := append(append([]string{automaton.StartID}, m.Trunk...), automaton.EndID)
				rs := rows(trunk)
				if len(rs) != len(path)-1 {
					t.Fatalf("trunk table has %d rows, want %d", len(rs), len(path)-1)
				}
				for i, r := range rs {
					if r[1] != shownText(path[i]) || r[3] != shownText(path[i+1]) {
						t.Errorf("trunk row %d = %q, want %s -> %s", i+1, r, path[i], path[i+1])
					}
				}
				shownPath := make([]string, len(path))
				for i, id := range path {
					shownPath[i] = shownText(id)
				}
				if !strings.Contains(textOf(trunk), strings.Join(shownPath, " → ")) {
					t.Errorf("trunk section does not show the path %q", shownPath)
				}
			}

			loops := rows(section(t, page, "loops"))
			if len(loops) != len(m.Loops) {
				t.Errorf("loops table has %d rows, want %d", len(loops), len(m.Loops))
			}
			for _, l := range m.Loops {
				found := false
				for _, r := range loops {
					if r[2] == thousands(l.Count) && r[3] == thousands(l.Sessions) &&
						r[4] == thousands(l.MaxIterations) && r[5] == thousands(l.P95Iterations) &&
						strings.Contains(r[0], shownText(l.States[0])) {
						found = true
						for _, b := range l.BackEdges {
							if !strings.Contains(r[1], shownText(b.From)+" −["+eventText(b.Event)+"]→ "+shownText(b.To)) {
								t.Errorf("loop %v: back edge %v not listed in %q", l.States, b, r[1])
							}
						}
					}
				}
				if !found {
					t.Errorf("loop %v is not listed", l.States)
				}
			}

			prov := textOf(section(t, page, "provenance"))
			for _, want := range []string{m.Schema, m.Created, m.Generator, m.Params.Merge} {
				if !strings.Contains(prov, want) {
					t.Errorf("provenance lacks %q", want)
				}
			}
			for _, f := range m.Source.Files {
				if !strings.Contains(prov, f.Path) || !strings.Contains(prov, f.SHA256) {
					t.Errorf("provenance lacks source file %s %s", f.Path, f.SHA256)
				}
			}
		})
	}
}

// TestReportProvenance checks the digest check and the label rules.
func TestReportProvenance(t *testing.T) {
	m := loadFixture(t, "report/returns")
	prov := textOf(section(t, report(t, m, ReportOptions{Diagram: DiagramNone}), "provenance"))
	for _, want := range []string{
		m.Digest, "Matches the model's content.",
		`"name": "off-topic small talk returns to the stage it left"`, `"detour": true`,
		"testdata/returns.jsonl", "fc0c5619d421358a4d5f49001689d15e4bdee8330fee3506b5f863f3cc5eed21",
		"alergia", "0.01", "rare_ratio", "0.05", "4,794",
	} {
		if !strings.Contains(prov, want) {
			t.Errorf("provenance lacks %q:\n%s", want, prov)
		}
	}

	edited := *m
	edited.Transitions = append([]automaton.Transition(nil), m.Transitions...)
	edited.Transitions[0].Count++
	prov = textOf(section(t, report(t, &edited, ReportOptions{Diagram: DiagramNone}), "provenance"))
	if !strings.Contains(prov, "Does not match the model's content") {
		t.Errorf("an edited model's digest is not flagged:\n%s", prov)
	}
}

// TestReportEscapes reads a model whose ids, events, labels, paths and
// provenance are HTML and script: the page must show them as text, with the
// page's one script the only one, in the tables and in the picture alike.
func TestReportEscapes(t *testing.T) {
	m := loadFixture(t, "report/hostile")
	for _, mode := range []DiagramMode{DiagramAll, DiagramNone} {
		t.Run(string(mode), func(t *testing.T) {
			page := report(t, m, ReportOptions{Diagram: mode, Title: "<script>alert(0)</script>", File: `"><script>x</script>`})
			lower := strings.ToLower(page)
			if n := strings.Count(lower, "<script"); n != 1 {
				t.Errorf("page has %d <script elements, want 1 (its own)", n)
			}
			for _, bad := range []string{"<img", "<iframe", "<svg onload", "<b>", "</style></svg>", "<x>", "<tool>", "<!--"} {
				if strings.Contains(lower, bad) {
					t.Errorf("page holds raw %q", bad)
				}
			}
			for _, id := range []string{"<script>alert(1)</script>", `"><img src=x onerror=alert(1)>`, "</style></svg><script>alert(2)</script>", "{{.Title}}", "a&amp;b &nbsp; &#x3c;", "--><!--"} {
				if !strings.Contains(textOf(page), id) {
					t.Errorf("page does not show %q as text", id)
				}
			}
			if strings.Contains(page, "ZgotmplZ") {
				t.Error("html/template refused a value (ZgotmplZ) where the page expected it to be safe")
			}
			if mode == DiagramAll && !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;</text>") {
				t.Error("the picture does not show the hostile id as escaped text")
			}
		})
	}
}

// TestReportScriptHash checks that the page's one script is exactly the one
// its Content-Security-Policy allows: html/template rewrites scripts it
// finds comments in, and a browser would then refuse to run it.
func TestReportScriptHash(t *testing.T) {
	page := report(t, loadFixture(t, "support"), ReportOptions{Diagram: DiagramNone})
	open := strings.Index(page, "<script>")
	end := strings.Index(page, "</script>")
	if open < 0 || end < open {
		t.Fatal("no script in the page")
	}
	sum := sha256.Sum256([]byte(page[open+len("<script>") : end]))
	want := "script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	if !strings.Contains(page, want) {
		t.Errorf("the page's script does not hash to what its policy allows (%s)", want)
	}
	// The SVG's namespace declarations are names, not addresses to fetch.
	rest := regexp.MustCompile(`xmlns(:\w+)?="[^"]*"`).ReplaceAllString(page, "")
	for _, fetch := range []string{"http:", "https:", "src=", "href=\"http", "url(", "@import"} {
		if strings.Contains(rest, fetch) {
			t.Errorf("page mentions %q: it must load nothing", fetch)
		}
	}
}

func TestReportDeterministic(t *testing.T) {
	for _, name := range reportFixtures {
		t.Run(name, func(t *testing.T) {
			m := loadFixture(t, name)
			a := report(t, m, ReportOptions{})
			b := report(t, shuffled(t, m), ReportOptions{})
			if a != b {
				t.Error("the report depends on the order of states and transitions")
			}
			if c := report(t, m, ReportOptions{}); a != c {
				t.Error("two reports of one model differ")
			}
		})
	}
}

func TestReportGolden(t *testing.T) {
	tests := []struct {
		name, model string
		opt         ReportOptions
	}{
		{"support", "support", ReportOptions{File: "support.model.json"}},
		{"weird-common", "weird", ReportOptions{Title: `Weird "ids"`, Diagram: DiagramCommon}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkGolden(t, filepath.Join("report", tt.name+".html.golden"), []byte(report(t, loadFixture(t, tt.model), tt.opt)))
		})
	}
	old, new := loadDiffFixture(t, "old.json"), loadDiffFixture(t, "new.json")
	var buf bytes.Buffer
	d := automaton.Compare(old, new, automaton.DiffOptions{})
	if err := DiffReport(&buf, old, new, d, DiffReportOptions{OldFile: "old.json", NewFile: "new.json"}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("report", "diff.html.golden"), buf.Bytes())
}

// edgeCount is the number of edges in the page's picture.
func edgeCount(page string) int {
	start, end := strings.Index(page, "<svg"), strings.Index(page, "</svg>")
	if start < 0 || end < start {
		return 0
	}
	return strings.Count(page[start:end], `<g id="edge`)
}

func TestReportDiagramModes(t *testing.T) {
	m := loadFixture(t, "report/returns")
	rare := 0
	for _, tr := range m.Transitions {
		if tr.Rare {
			rare++
		}
	}
	tests := []struct {
		mode  DiagramMode
		edges int
		note  bool
	}{
		{"", len(m.Transitions), false},
		{DiagramAuto, len(m.Transitions), false},
		{DiagramAll, len(m.Transitions), false},
		{DiagramCommon, len(m.Transitions) - rare, true},
		{DiagramNone, 0, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			page := report(t, m, ReportOptions{Diagram: tt.mode})
			if got := edgeCount(page); got != tt.edges {
				t.Errorf("picture has %d edges, want %d", got, tt.edges)
			}
			if got := strings.Contains(page, "Rare transitions are not drawn"); got != tt.note {
				t.Errorf("note that rare transitions are not drawn: %v, want %v", got, tt.note)
			}
			if got, want := strings.Contains(page, "<svg"), tt.mode != DiagramNone; got != want {
				t.Errorf("picture present: %v, want %v", got, want)
			}
		})
	}

	// A model above the limit is drawn without its rare transitions.
	big := *m
	big.Transitions = nil
	for i := 0; len(big.Transitions) <= AutoDiagramLimit; i++ {
		tr := m.Transitions[i%len(m.Transitions)]
		tr.Event = fmt.Sprintf("%s#%d", tr.Event, i)
		big.Transitions = append(big.Transitions, tr)
	}
	big.Sort()
	page := report(t, &big, ReportOptions{Diagram: DiagramNone})
	if strings.Contains(page, "<svg") {
		t.Error("DiagramNone drew a picture")
	}
	var auto bytes.Buffer
	if err := Report(&auto, &big, ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(auto.String(), "Rare transitions are not drawn") {
		t.Errorf("a model of %d transitions is drawn with its rare ones", len(big.Transitions))
	}

	// Above twice the limit of common transitions, auto draws nothing and
	// says why; the overlay of a diff with as many changes too.
	chain := chainModel(2*AutoDiagramLimit + 1)
	page = report(t, chain, ReportOptions{})
	if strings.Contains(page, "<svg") || !strings.Contains(page, "No picture: even without its rare transitions the model has 402") {
		t.Error("a model of 402 common transitions is drawn, or the page does not say why not")
	}
	if n := len(rows(section(t, page, "transitions"))); n != 402 {
		t.Errorf("transitions table has %d rows, want 402", n)
	}
	var huge bytes.Buffer
	small := chainModel(1)
	if err := DiffReport(&huge, chain, small, automaton.Compare(chain, small, automaton.DiffOptions{}), DiffReportOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(huge.String(), "<svg") || !strings.Contains(huge.String(), "No overlay: ") {
		t.Error("an overlay of 403 transitions is drawn, or the page does not say why not")
	}

	if err := Report(new(bytes.Buffer), m, ReportOptions{Diagram: "sideways"}); !errors.Is(err, errUnknownMode) {
		t.Errorf("unknown mode: err = %v, want errUnknownMode", err)
	}
	if err := Report(new(bytes.Buffer), nil, ReportOptions{}); err != ErrNilModel {
		t.Errorf("nil model: err = %v, want ErrNilModel", err)
	}
}

// chainModel is __start__ -> s0000 -> s0001 ... -> __end__ with n+1
// common transitions.
func chainModel(n int) *automaton.Model {
	m := &automaton.Model{Schema: automaton.Schema, Initial: automaton.StartID, Version: 1}
	ids := []string{automaton.StartID}
	for i := 0; i < n; i++ {
		ids = append(ids, fmt.Sprintf("s%04d", i))
	}
	ids = append(ids, automaton.EndID)
	for _, id := range ids {
		m.States = append(m.States, automaton.State{ID: id, Label: id, Visits: 1, Sessions: 1})
	}
	for i := 0; i+1 < len(ids); i++ {
		m.Transitions = append(m.Transitions, automaton.Transition{From: ids[i], Event: "ok", To: ids[i+1], Count: 1, Sessions: 1, Prob: 1})
	}
	m.Sort()
	return m
}

func TestDiffReport(t *testing.T) {
	old, new := loadDiffFixture(t, "old.json"), loadDiffFixture(t, "new.json")
	d := automaton.Compare(old, new, automaton.DiffOptions{})
	var buf bytes.Buffer
	if err := DiffReport(&buf, old, new, d, DiffReportOptions{OldFile: "old.json", NewFile: "new.json"}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.Contains(page, "<svg") {
		t.Error("no overlay")
	}
	if got, want := textOf(page), diffSummary(d); !strings.Contains(got, want) {
		t.Errorf("summary %q missing", want)
	}
	for id, want := range map[string][][]string{
		"states":      {{"added", "verify", "verify", "40"}, {"removed", "human", "human", "5"}},
		"transitions": {{"added", "search", "ok", "verify", "40", "53.3%"}, {"removed", "answer", "handoff", "human", "5", "5.3%", "rare"}},
		"shares":      {{"plan", "ok", "answer", "20.0%", "50.0%", "20/100", "50/100", "+4.45"}},
		"outflow":     {{"plan", "100", "100"}},
		"flips":       {{"search", "timeout", "__end__", "rare", "common", "4.5%", "13.3%", "5", "10"}},
		"loops":       {{"search", "grew", "4 → 6", "2 → 3"}},
	} {
		rs := rows(section(t, page, id))
		for _, w := range want {
			if !hasRow(rs, w) {
				t.Errorf("section %s lacks row %q; has %q", id, w, rs)
			}
		}
	}
	if tr := textOf(section(t, page, "trunk")); !strings.Contains(tr, "plan → search → verify → answer") {
		t.Errorf("trunk section: %q", tr)
	}

	// Identical models: no change tables, and the page says so.
	var same bytes.Buffer
	if err := DiffReport(&same, old, old, automaton.Compare(old, old, automaton.DiffOptions{}), DiffReportOptions{Diagram: DiagramNone}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(same.String(), "No differences") || strings.Contains(same.String(), `<section id="states">`) {
		t.Error("a diff of a model with itself does not read as no differences")
	}
	if strings.Contains(same.String(), "<svg") {
		t.Error("DiagramNone drew an overlay")
	}
}

// TestDiffReportQuietRare checks that the common overlay keeps every
// change and drops only unchanged rare transitions.
func TestDiffReportQuietRare(t *testing.T) {
	old, new := loadDiffFixture(t, "old.json"), loadDiffFixture(t, "new.json")
	d := automaton.Compare(old, new, automaton.DiffOptions{})
	q := quietRare(new, d)
	for _, tr := range new.Transitions {
		kept := q.Next(tr.From, automaton.Move{Event: tr.Event, Label: new.State(tr.To).Label}) != nil
		named := false
		for _, a := range d.TransitionsAdded {
			named = named || a.From == tr.From && a.Event == tr.Event && a.To == tr.To
		}
		for _, f := range d.RareFlips {
			named = named || f.From == tr.From && f.Event == tr.Event && f.To == tr.To
		}
		if want := !tr.Rare || named; kept != want {
			t.Errorf("%s -[%s]-> %s (rare %v): kept %v, want %v", tr.From, tr.Event, tr.To, tr.Rare, kept, want)
		}
	}
	var buf bytes.Buffer
	if err := DiffReport(&buf, old, new, d, DiffReportOptions{Diagram: DiagramCommon}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "are not drawn") {
		t.Error("the common overlay does not say what it left out")
	}
}

func TestInlineSVG(t *testing.T) {
	const head = `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN"
 "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<!-- Generated by graphviz -->
`
	const open = `<svg width="100pt" height="50pt" viewBox="0.00 0.00 72.00 50.00" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">`
	good := head + open + `
<g id="graph0" class="graph"><!-- a &#45;&gt; b --><title>a&#45;&gt;b</title>
<g id="a_node1"><a xlink:title="&lt;script&gt;"><text x="1" y="2">&lt;script&gt; &amp; &nbsp;</text></a></g>
<polygon fill="white" points="0,0 1,1"/></g>
</svg>
`
	svg, width, err := inlineSVG([]byte(good))
	if err != nil {
		t.Fatalf("a Graphviz picture is refused: %v", err)
	}
	if width != 96 {
		t.Errorf("width = %v CSS pixels, want 96 (72 points)", width)
	}
	s := string(svg)
	if !strings.HasPrefix(s, "<svg ") || !strings.HasSuffix(s, "</svg>\n") {
		t.Errorf("inlined SVG is not just the svg element:\n%s", s)
	}
	if strings.Contains(s, "<!--") || strings.Contains(s, "<?xml") || strings.Contains(s, "DOCTYPE") {
		t.Errorf("prolog or comments kept:\n%s", s)
	}
	if !strings.Contains(s, `<text x="1" y="2">&lt;script&gt; &amp; &nbsp;</text>`) {
		t.Errorf("text is not kept byte for byte:\n%s", s)
	}

	bad := map[string]string{
		"script":         open + `<script>alert(1)</script></svg>`,
		"foreign object": open + `<foreignObject><div>x</div></foreignObject></svg>`,
		"event handler":  open + `<g onclick="alert(1)"></g></svg>`,
		"upper handler":  open + `<g ONLOAD="alert(1)"></g></svg>`,
		"link":           open + `<a xlink:href="javascript:alert(1)"><text>x</text></a></svg>`,
		"plain href":     open + `<a href="https://example.com/"><text>x</text></a></svg>`,
		"style":          open + `<g style="background:url(https://example.com/)"></g></svg>`,
		"image":          open + `<image xlink:title="x"/></svg>`,
		"other root":     `<html><svg/></html>`,
		"html namespace": `<svg xmlns="http://www.w3.org/1999/xhtml"></svg>`,
		"two roots":      open + `</svg>` + open + `</svg>`,
		"no svg":         `<!-- nothing -->`,
		"broken":         open + `<g>`,
	}
	for name, doc := range bad {
		t.Run(name, func(t *testing.T) {
			if svg, _, err := inlineSVG([]byte(doc)); err == nil {
				t.Errorf("accepted:\n%s", svg)
			}
		})
	}
}

func TestReportFormats(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{thousands(0), "0"},
		{thousands(999), "999"},
		{thousands(1000), "1,000"},
		{thousands(262200), "262,200"},
		{thousands(-1234567), "-1,234,567"},
		{text.Duration(812), "812 ms"},
		{text.Duration(3200), "3.2 s"},
		{text.Duration(270e3), "4.5 min"},
		{text.Duration(7200e3), "2.0 h"},
		{text.Duration(3 * 86400e3), "3.0 d"},
		{text.PercentTo(0.0496, 2), "4.96%"},
		{text.PercentTo(0.00001, 2), "<0.01%"},
		{text.PercentTo(0.99999, 2), ">99.99%"},
		{text.PercentTo(1, 2), "100.00%"},
		{rareRule(automaton.Params{RareRatio: 0.05}), "A transition is rare when its share of its source's outflow is below 5%."},
		{rareRule(automaton.Params{RareRatio: 0.1, RareCount: 3}), "A transition is rare when its share of its source's outflow is below 10% or it was taken fewer than 3 times."},
		{rareRule(automaton.Params{}), "The model records no rule for rare transitions."},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// chromium returns the path of a Chromium on PATH, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH: apt-get install -y chromium to run the browser test")
	return ""
}

// runChromium loads file in headless Chromium with extra flags (the page's
// DOM to standard output, or a screenshot) and returns its standard output
// and its log.
func runChromium(t *testing.T, bin, file string, extra ...string) (stdout, log string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hung browser, not a timing check
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0", "--window-size=1400,1000"}
	args = append(args, extra...)
	args = append(args, "file://"+file)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = filepath.Dir(file)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errOut.String())
	}
	return out.String(), errOut.String()
}

// consoleErrors returns the lines of a Chromium log that report something
// the page did: console messages (a script error, a refused fetch, a
// violated Content-Security-Policy) and uncaught exceptions.
func consoleErrors(log string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "CONSOLE") || strings.Contains(l, "Uncaught") {
			out = append(out, l)
		}
	}
	return out
}

// blankness returns the standard deviation of the luminance of img's
// pixels and the share of pixels that are not white.
func blankness(img image.Image) (stddev, inked float64) {
	b := img.Bounds()
	var sum, sum2 float64
	n, dark := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 65535
			sum += l
			sum2 += l * l
			n++
			if l < 0.9 {
				dark++
			}
		}
	}
	mean := sum / float64(n)
	return math.Sqrt(sum2/float64(n) - mean*mean), float64(dark) / float64(n)
}

// TestReportInChromium opens reports in headless Chromium: they load
// without a console message (no script error, nothing refused by the
// Content-Security-Policy, no fetch), the page's script runs (it marks
// <html> with the number of sortable tables), the DOM holds the picture,
// and a screenshot is a PNG with something drawn on it. It is skipped where
// Chromium is not installed.
func TestReportInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("a browser per page: skipped in -short mode")
	}
	bin := chromium(t)
	dir := t.TempDir()

	old, new := loadDiffFixture(t, "old.json"), loadDiffFixture(t, "new.json")
	var diffPage bytes.Buffer
	if err := DiffReport(&diffPage, old, new, automaton.Compare(old, new, automaton.DiffOptions{}), DiffReportOptions{OldFile: "old.json", NewFile: "new.json"}); err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{
		"returns": report(t, loadFixture(t, "report/returns"), ReportOptions{File: "returns.model.json"}),
		"hostile": report(t, loadFixture(t, "report/hostile"), ReportOptions{}),
		"diff":    diffPage.String(),
		// Example links and the Cost and latency section under the policy.
		"examples": report(t, withExamples(t, "https://trace.example/s/{session}"), ReportOptions{Measures: sampleMeasures()}),
	}
	for name, page := range pages {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, name+".html")
			if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
			dom, log := runChromium(t, bin, file, "--dump-dom")
			if errs := consoleErrors(log); len(errs) > 0 {
				t.Errorf("console messages:\n%s", strings.Join(errs, "\n"))
			}
			if !strings.Contains(dom, "<svg") || !strings.Contains(dom, `class="node"`) {
				t.Error("the DOM holds no picture")
			}
			tables := strings.Count(page, `<table class="sortable">`)
			if want := `data-sortable="` + strconv.Itoa(tables) + `"`; !strings.Contains(dom, want) {
				t.Errorf("the page's script did not run (no %s on <html>)", want)
			}

			shot := filepath.Join(dir, name+".png")
			_, log = runChromium(t, bin, file, "--screenshot="+shot)
			if errs := consoleErrors(log); len(errs) > 0 {
				t.Errorf("console messages:\n%s", strings.Join(errs, "\n"))
			}
			f, err := os.Open(shot)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			img, err := png.Decode(f)
			if err != nil {
				t.Fatalf("screenshot is not a PNG: %v", err)
			}
			if b := img.Bounds(); b.Dx() != 1400 || b.Dy() != 1000 {
				t.Errorf("screenshot is %dx%d, want 1400x1000", b.Dx(), b.Dy())
			}
			if sd, inked := blankness(img); sd < 0.05 || inked < 0.01 {
				t.Errorf("screenshot looks blank: luminance stddev %.3f, %.1f%% of pixels inked", sd, 100*inked)
			}
			if os.Getenv("FSMINE_KEEP_SCREENSHOTS") != "" {
				keep := filepath.Join(os.Getenv("FSMINE_KEEP_SCREENSHOTS"), name+".png")
				if data, err := os.ReadFile(shot); err == nil {
					os.WriteFile(keep, data, 0o644)
				}
			}
		})
	}

	// The checks can fail: a script the policy does not allow is reported,
	// and a blank page looks blank.
	t.Run("controls", func(t *testing.T) {
		page := strings.Replace(pages["returns"], "</body>", "<script>document.title = 'x';</script></body>", 1)
		file := filepath.Join(dir, "refused.html")
		if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, log := runChromium(t, bin, file, "--dump-dom"); len(consoleErrors(log)) == 0 {
			t.Error("a script refused by the Content-Security-Policy went unnoticed")
		}
		blank := filepath.Join(dir, "blank.html")
		if err := os.WriteFile(blank, []byte("<!DOCTYPE html><title>x</title>"), 0o644); err != nil {
			t.Fatal(err)
		}
		shot := filepath.Join(dir, "blank.png")
		runChromium(t, bin, blank, "--screenshot="+shot)
		f, err := os.Open(shot)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		if sd, inked := blankness(img); sd >= 0.05 && inked >= 0.01 {
			t.Errorf("a blank page passes as drawn: stddev %.3f, inked %.3f", sd, inked)
		}
	})
}

// TestReportBidi: a right-to-left override in a name from the log shows as
// its escape, not raw (which would make "gpj.exe" read as "exe.jpg"), in
// the tables and in the picture, and the stylesheet isolates every name, so
// that right-to-left text in one does not reorder the row around it.
func TestReportBidi(t *testing.T) {
	m := loadFixture(t, "support")
	for i := range m.States {
		if id := m.States[i].ID; id != automaton.StartID && id != automaton.EndID {
			m.States[i].Label = "gpj\u202e" + m.States[i].Label + "\u2066x\u2069"
			break
		}
	}
	m.Transitions[len(m.Transitions)-1].Event = "ok\u202b"
	for _, mode := range []DiagramMode{DiagramNone, DiagramAll} {
		page := report(t, m, ReportOptions{Diagram: mode})
		for _, r := range "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069" {
			if strings.ContainsRune(page, r) {
				t.Errorf("%s: the page holds a raw %U", mode, r)
			}
		}
		if !strings.Contains(page, `gpj\u202e`) || !strings.Contains(page, `ok\u202b`) {
			t.Errorf("%s: the page does not show the bidi controls as escapes", mode)
		}
		if !strings.Contains(page, ".id { overflow-wrap: anywhere; unicode-bidi: isolate; }") {
			t.Errorf("%s: the stylesheet does not isolate names", mode)
		}
	}
}

// TestReportProvenanceEscapes: the stage names and the provenance a model
// file states (its parent's digest, created, generator, its source files'
// formats and digests) are shown escaped as names are, in the model's page
// and the diff's; the pages wrote them raw, ESC, BEL and U+202E included.
func TestReportProvenanceEscapes(t *testing.T) {
	const bad = "x\x1b[31m\a\u202e"
	m := loadFixture(t, "orders")
	for i := range m.States {
		m.States[i].Label = strings.Replace(m.States[i].Label, "_", bad, 1)
	}
	m.Created, m.Generator = bad, bad
	m.Parent = &automaton.Parent{Version: 1, Digest: bad}
	m.Source.Files = []automaton.SourceFile{{Path: "a.jsonl", Format: bad, SHA256: bad}}
	m.Params.Labels = []byte("{\"rules\": [{\"match\": {\"node\": \"^a\u202e\"}, \"drop\": true}]}")
	var model bytes.Buffer
	if err := Report(&model, m, ReportOptions{Detail: DetailSummary, Diagram: DiagramNone}); err != nil {
		t.Fatal(err)
	}
	var diff bytes.Buffer
	if err := DiffReport(&diff, m, m, automaton.Compare(m, m, automaton.DiffOptions{}), DiffReportOptions{Diagram: DiagramNone}); err != nil {
		t.Fatal(err)
	}
	for name, page := range map[string]string{"report": model.String(), "diff": diff.String()} {
		for _, r := range page {
			if r != '\n' && text.Unshown(r) {
				t.Errorf("%s: the page holds a raw %U", name, r)
			}
		}
		if !strings.Contains(page, `x\x1b[31m\x07\u202e`) {
			t.Errorf("%s: the page does not show the escapes", name)
		}
	}
	if !strings.Contains(model.String(), `<summary><span class="id">`) {
		t.Error("a stage's name is not isolated as names are")
	}
	if !strings.Contains(model.String(), `&#34;^a\u202e&#34;`) {
		t.Error("the label rules do not show the bidi control escaped")
	}
}

// TestDiffReportEveryKind: the diff page lists every kind of change its
// summary counts (it said "1 constraint removed" over a page with none),
// names escaped for display.
func TestDiffReportEveryKind(t *testing.T) {
	old, new := loadDiffFixture(t, "old.json"), loadDiffFixture(t, "new.json")
	d := automaton.Compare(old, old, automaton.DiffOptions{})
	d.ConstraintsRemoved = []automaton.Constraint{{Kind: automaton.ConstraintOnce, A: "look\u202eup", Support: 12, Confidence: 1}}
	d.ArgsAdded = []automaton.ArgRule{{Tool: "pay", Arg: "amount", Kind: automaton.KindValueWithoutSource, Steps: 3, Sessions: 2}}
	d.GeneralizedFlips = []automaton.GeneralizedFlip{{From: "a", Event: "ok", To: "b", Old: "skip", New: ""}}
	d.StateChanges = []automaton.StateChange{{ID: "a", Label: "a", OldMaxRun: 4, NewMaxRun: 1}}
	d.BackEdgeFlips = []automaton.BackEdgeFlip{{From: "a", Event: "ok", To: "b", NewBack: true}}
	d.By = &automaton.ByChange{NewField: "attrs.task", NewMinSessions: 10, Added: []string{"t<1>"}}
	var buf bytes.Buffer
	if err := DiffReport(&buf, old, new, d, DiffReportOptions{OldFile: "old.json", NewFile: "new.json"}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		"<h2>Constraints</h2>", `look\u202eup at most once`,
		"<h2>Argument rules</h2>", "pay",
		"<h2>Generalised flips</h2>", "generalised (skip)",
		"<h2>Run caps and slot fields</h2>", "run cap 4 -&gt; 1",
		"<h2>Back edges</h2>", "back edge",
		"<h2>Sub-maps</h2>", "sub-map t&lt;1&gt;",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
