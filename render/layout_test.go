package render

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"math/rand"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsmine/fsmine/automaton"
	json "github.com/goccy/go-json"
)

// svgStrings returns the character data and attribute values of an SVG
// document, failing the test if it is not well-formed XML.
func svgStrings(t *testing.T, doc []byte) []string {
	t.Helper()
	var out []string
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.CharData:
			out = append(out, string(tok))
		case xml.StartElement:
			for _, a := range tok.Attr {
				out = append(out, a.Value)
			}
		}
	}
	return out
}

func checkSVG(t *testing.T, m *automaton.Model, doc []byte) {
	t.Helper()
	if !bytes.Contains(doc, []byte("<svg")) {
		t.Fatalf("no <svg> element:\n%.300s", doc)
	}
	strs := svgStrings(t, doc)
	has := func(s string) bool {
		for _, x := range strs {
			if x == s || strings.Contains(x, s) {
				return true
			}
		}
		return false
	}
	for _, s := range m.States {
		if !has(shown(s.ID)) {
			t.Errorf("state %q not in the SVG", s.ID)
		}
	}
	for i := range m.Transitions {
		if c := shown(edgeCaption(&m.Transitions[i])); !has(c) {
			t.Errorf("caption %q not in the SVG", c)
		}
	}
}

func TestSVG(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			m := loadFixture(t, name)
			checkSVG(t, m, render(t, SVG, m, Options{ClusterSep: "_", Title: "a <title> & more"}))
		})
	}
}

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

func decodePNG(t *testing.T, b []byte) image.Image {
	t.Helper()
	if !bytes.HasPrefix(b, pngSignature) {
		t.Fatalf("output does not start with the PNG signature: %q", b[:min(len(b), 16)])
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decoding the PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() < 50 || r.Dy() < 20 {
		t.Fatalf("PNG of %v is too small for a picture", r)
	}
	return img
}

var (
	svgTranslate = regexp.MustCompile(`class="graph" transform="scale\(1 1\) rotate\(0\) translate\(([-\d.]+) ([-\d.]+)\)"`)
	svgEdgePath  = regexp.MustCompile(`class="edge">\n<title>[^<]*</title>\n(?:<g [^>]*><a [^>]*>\n)?<path fill="none" stroke="[^"]*"[^>]* d="M([^"]+)"`)
	svgEllipse   = regexp.MustCompile(`<ellipse fill="none" stroke="black" cx="([-\d.]+)" cy="([-\d.]+)" rx="([-\d.]+)" ry="[-\d.]+"`)
	svgNumber    = regexp.MustCompile(`-?\d+(?:\.\d+)?`)
)

// TestPNGDrawsStrokes lays a model out as SVG and as PNG (the same layout)
// and checks the PNG for ink where the SVG draws a line: the middle of every
// edge's first Bézier segment and the right edge of every unfilled ellipse
// (both rings of __end__'s double circle).
func TestPNGDrawsStrokes(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			m := loadFixture(t, name)
			svg := string(render(t, SVG, m, Options{}))
			img := decodePNG(t, render(t, PNG, m, Options{}))

			tr := svgTranslate.FindStringSubmatch(svg)
			if tr == nil {
				t.Fatal("no graph transform in the SVG")
			}
			tx, _ := strconv.ParseFloat(tr[1], 64)
			ty, _ := strconv.ParseFloat(tr[2], 64)
			const scale = 96.0 / 72 // the PNG's dpi over the SVG's points
			inked := func(x, y float64) bool {
				px, py := int((x+tx)*scale), int((y+ty)*scale)
				for dx := -2; dx <= 2; dx++ {
					for dy := -2; dy <= 2; dy++ {
						r, g, b, a := img.At(px+dx, py+dy).RGBA()
						if a > 0x8000 && r+g+b < 3*0xd000 {
							return true
						}
					}
				}
				return false
			}
			paths := svgEdgePath.FindAllStringSubmatch(svg, -1)
			if len(paths) != len(m.Transitions) {
				t.Errorf("%d edge paths in the SVG, want %d", len(paths), len(m.Transitions))
			}
			for _, p := range paths {
				var v []float64
				for _, s := range svgNumber.FindAllString(p[1], 8) {
					f, _ := strconv.ParseFloat(s, 64)
					v = append(v, f)
				}
				if len(v) < 8 {
					t.Fatalf("short path %q", p[1])
				}
				// The point at t=1/2 of the cubic Bézier P0 P1 P2 P3.
				x := (v[0] + 3*v[2] + 3*v[4] + v[6]) / 8
				y := (v[1] + 3*v[3] + 3*v[5] + v[7]) / 8
				if !inked(x, y) {
					t.Errorf("no ink in the PNG at the middle of the edge %q", p[1])
				}
			}
			ellipses := svgEllipse.FindAllStringSubmatch(svg, -1)
			if len(ellipses) < 2 {
				t.Errorf("%d unfilled ellipses, want the two rings of __end__", len(ellipses))
			}
			for _, e := range ellipses {
				cx, _ := strconv.ParseFloat(e[1], 64)
				cy, _ := strconv.ParseFloat(e[2], 64)
				rx, _ := strconv.ParseFloat(e[3], 64)
				if !inked(cx+rx, cy) {
					t.Errorf("no ink in the PNG on the ellipse at %v,%v radius %v", cx, cy, rx)
				}
			}
		})
	}
}

func TestPNGIsDeterministic(t *testing.T) {
	m := loadFixture(t, "orders")
	a := render(t, PNG, m, Options{ClusterSep: "_"})
	b := render(t, PNG, shuffled(t, m), Options{ClusterSep: "_"})
	if !bytes.Equal(a, b) {
		t.Error("two renderings of one model differ")
	}
}

func TestEngineDot(t *testing.T) {
	m := loadFixture(t, "support")
	if _, err := exec.LookPath("dot"); err != nil {
		t.Logf("Graphviz's dot is not on PATH: only its absence is tested")
	} else {
		checkSVG(t, m, render(t, SVG, m, Options{Engine: EngineDot}))
		decodePNG(t, render(t, PNG, m, Options{Engine: EngineDot}))
		// A dot that takes too long is killed (past 1 ns: at once).
		err := SVG(io.Discard, m, Options{Engine: EngineDot, Timeout: time.Nanosecond})
		if !errors.Is(err, ErrLayoutTimeout) || strings.Contains(err.Error(), "dot program") {
			t.Errorf("dot past its time: err = %v, want ErrLayoutTimeout without suggesting dot", err)
		}
	}

	t.Setenv("PATH", t.TempDir())
	for _, f := range []Func{SVG, PNG} {
		err := f(io.Discard, m, Options{Engine: EngineDot})
		if !errors.Is(err, ErrNoDot) {
			t.Errorf("without dot on PATH: err = %v, want ErrNoDot", err)
		}
	}
	err := SVG(io.Discard, m, Options{Engine: "neato"})
	if err == nil || !strings.Contains(err.Error(), `unknown layout engine "neato"`) {
		t.Errorf("unknown engine: err = %v", err)
	}
}

// syntheticModel returns a valid model of n states (besides __start__ and
// __end__) made from a fixed seed: a main path through every state with
// branches forward, back edges and rare transitions, for benchmarks.
func syntheticModel(tb testing.TB, n int, seed int64) *automaton.Model {
	tb.Helper()
	rng := rand.New(rand.NewSource(seed))
	m := &automaton.Model{Schema: automaton.Schema, Version: 1, Initial: automaton.StartID}
	ids := []string{automaton.StartID}
	m.States = append(m.States, automaton.State{ID: automaton.StartID, Label: automaton.StartID, Visits: 1000})
	groups := []string{"plan", "search", "tool", "answer", "review"}
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("%s_%02d", groups[(i-1)*len(groups)/n], i)
		ids = append(ids, id)
		m.States = append(m.States, automaton.State{ID: id, Label: id, Visits: max(1000-20*i, 20)})
	}
	ids = append(ids, automaton.EndID)
	m.States = append(m.States, automaton.State{ID: automaton.EndID, Label: automaton.EndID, Visits: 1000})
	events := []string{"ok", "error", "retry", "empty"}
	seen := make(map[[3]string]bool)
	add := func(from, event, to string, count int, back bool) {
		if from == automaton.StartID {
			event = ""
		}
		k := [3]string{from, event, to}
		if seen[k] || to == automaton.StartID || from == automaton.EndID {
			return
		}
		seen[k] = true
		m.Transitions = append(m.Transitions, automaton.Transition{From: from, Event: event, To: to, Count: count, Sessions: count, Rare: count < 5, BackEdge: back})
	}
	for i := 0; i+1 < len(ids); i++ {
		add(ids[i], "ok", ids[i+1], 500+rng.Intn(500), false)
		if i > 0 && rng.Intn(3) == 0 {
			add(ids[i], events[1+rng.Intn(3)], ids[i-rng.Intn(min(i, 3))], 1+rng.Intn(60), true)
		}
		if rng.Intn(2) == 0 && i+2 < len(ids) {
			add(ids[i], events[rng.Intn(4)], ids[i+2+rng.Intn(min(3, len(ids)-i-2))], 1+rng.Intn(100), false)
		}
	}
	out := make(map[string]int)
	for _, t := range m.Transitions {
		out[t.From] += t.Count
	}
	for i := range m.Transitions {
		m.Transitions[i].Prob = float64(m.Transitions[i].Count) / float64(out[m.Transitions[i].From])
	}
	m.Trunk = append(m.Trunk, ids[1:len(ids)-1]...)
	m.Sort()
	if err := m.Validate(); err != nil {
		tb.Fatal(err)
	}
	return m
}

func TestSyntheticModelRenders(t *testing.T) {
	m := syntheticModel(t, 30, 1)
	checkSVG(t, m, render(t, SVG, m, Options{ClusterSep: "_"}))
	decodePNG(t, render(t, PNG, m, Options{ClusterSep: "_"}))
}

func BenchmarkLayout(b *testing.B) {
	for _, n := range []int{10, 30, 100} {
		m := syntheticModel(b, n, 1)
		for _, f := range []struct {
			name string
			fn   Func
		}{{"dot", DOT}, {"svg", SVG}, {"png", PNG}} {
			b.Run(fmt.Sprintf("format=%s/states=%d", f.name, n), func(b *testing.B) {
				b.ReportAllocs()
				var size int
				for i := 0; i < b.N; i++ {
					var buf bytes.Buffer
					if err := f.fn(&buf, m, Options{}); err != nil {
						b.Fatal(err)
					}
					size = buf.Len()
				}
				b.SetBytes(int64(size))
				b.ReportMetric(float64(len(m.Transitions)), "transitions")
			})
		}
	}
}

// TestXDOTTextMatchesSVG checks that the texts drawPNG paints from
// Graphviz's json output are the texts Graphviz writes in SVG.
func TestXDOTTextMatchesSVG(t *testing.T) {
	src, err := dotBytes(loadFixture(t, "weird"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	layout, err := runBuiltin(src, "json", guard{})
	if err != nil {
		t.Fatal(err)
	}
	var g xdotGraph
	if err := json.Unmarshal(layout, &g); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range append(g.Objects, g.Edges...) {
		for _, op := range o.LDraw {
			if op.Op == "T" {
				got = append(got, xdotText(op.Text))
			}
		}
	}
	svg, err := runBuiltin(src, "svg", guard{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	dec := xml.NewDecoder(bytes.NewReader(svg))
	inText := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			inText = tok.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				want = append(want, string(tok))
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("texts of the json layout:\n%q\nSVG texts:\n%q", got, want)
	}
	if !slices.Contains(want, `a\b`) {
		t.Errorf(`no text a\b in the SVG: %q`, want)
	}
}
